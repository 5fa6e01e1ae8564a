"""The examples in the API reference run: every ``>>>`` of the public modules' docstrings, as a doctest.

scripts/apidocs.py builds the reference from these docstrings; an example that no longer holds (a
renamed field, a revision name that moved) fails here instead of misleading a reader. They run from the
repository's root, as their text says.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The modules the reference shows (scripts/apidocs.py's SPECS) that hold examples.
MODULES = ("omerender", "omerender.errors", "omerender.diff")


@pytest.mark.parametrize("name", MODULES)
def test_the_reference_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    tests = [t for t in finder.find(module, name) if t.examples]
    if name in ("omerender", "omerender.diff"):
        assert tests, f"the example in {name}'s docstrings is gone"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {name}'s docstrings (output above)"
