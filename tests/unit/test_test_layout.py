"""The test tree itself: pytest imports tests/unit, tests/sim, tests/cluster and tests/differential by
their basenames (rootdir-relative, no packages), so two test files of one name in two of them stop the
whole collection ("import file mismatch") — and a run narrowed to one tier never shows it."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_test_files_outside_packages_have_unique_basenames() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if not (path.parent / "__init__.py").exists():
            where[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not clashes, f"rename one of each pair: {clashes}"
