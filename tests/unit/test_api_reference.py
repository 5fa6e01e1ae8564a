"""Every public name has a documented signature, and the API reference build fails on a warning.

The public API is each package's ``__all__`` (``omerender``'s names; ``omereconcile``'s, empty today).
For each name: its own docstring (not one inherited, nor the one ``dataclass`` makes up from the
fields), and a signature whose every parameter and return value is annotated with types that resolve;
for a class, the same for each public method and property it defines. ``scripts/apidocs.py`` renders
these pages with pdoc in CI; the last tests show that its warnings-as-errors check can fail.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pydantic
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("omerender", "omereconcile", "omerender.diff")


def _public(package: str) -> list[tuple[str, object]]:
    module = importlib.import_module(package)
    return [(f"{package}.{name}", getattr(module, name)) for name in module.__all__]


PUBLIC = [entry for package in PACKAGES for entry in _public(package)]


def _own_doc(obj: object) -> str | None:
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
        if dataclasses.is_dataclass(obj) and isinstance(doc, str) and doc.startswith(f"{obj.__name__}("):
            return None  # made up by @dataclass from the field list: says nothing the signature does not
        return doc if isinstance(doc, str) else None
    return inspect.getdoc(obj)


def _unannotated(func: Callable[..., Any], *, method: bool) -> list[str]:
    """The parameters (and ``return``) of ``func`` without an annotation; raises if one does not resolve."""
    hints = typing.get_type_hints(func)
    signature = inspect.signature(func)
    names = list(signature.parameters)
    if method and names and names[0] in ("self", "cls"):
        names = names[1:]
    missing = [name for name in names if name not in hints]
    if "return" not in hints and func.__name__ != "__init__":
        missing.append("return")
    return missing


def _members(cls: type) -> Iterator[tuple[str, Callable[..., Any] | property]]:
    """The public methods and properties ``cls`` defines itself (inherited ones are documented where
    they are defined)."""
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, staticmethod | classmethod):
            yield name, value.__func__
        elif isinstance(value, property) or inspect.isfunction(value):
            yield name, value


@pytest.mark.parametrize(("name", "obj"), PUBLIC, ids=[name for name, _ in PUBLIC])
def test_public_name_has_docstring_and_annotated_signature(name: str, obj: object) -> None:
    doc = _own_doc(obj)
    assert (doc or "").strip(), f"{name} has no docstring of its own"
    if inspect.isclass(obj):
        if "__init__" in vars(obj) and not issubclass(obj, pydantic.BaseModel):
            assert not _unannotated(obj.__init__, method=True), f"{name}.__init__ has unannotated parameters"
        if not issubclass(obj, BaseException):  # an exception's signature is its base's (*args)
            inspect.signature(obj)  # a class the reference cannot show a signature for fails here
        problems = []
        for member, value in _members(obj):
            func = value.fget if isinstance(value, property) else value
            if not (inspect.getdoc(value) or "").strip():
                problems.append(f"{name}.{member}: no docstring")
            if func is not None and (missing := _unannotated(func, method=True)):
                problems.append(f"{name}.{member}: unannotated {', '.join(missing)}")
        assert not problems, "\n".join(problems)
    elif callable(obj):
        assert not _unannotated(obj, method=False), f"{name} has unannotated parameters"


def test_every_package_declares_its_public_names() -> None:
    for package in PACKAGES:
        names = importlib.import_module(package).__all__
        assert len(names) == len(set(names)), f"{package}.__all__ repeats a name"


def _apidocs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("apidocs", ROOT / "scripts" / "apidocs.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def scratch_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], str]:
    """Writes a module under ``tmp_path`` and makes it importable; returns its name."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(source: str) -> str:
        name = f"apiref_scratch_{len(list(tmp_path.glob('*.py')))}"
        (tmp_path / f"{name}.py").write_text(source)
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    return write


def test_build_reports_what_pdoc_warns(tmp_path: Path, scratch_module: Callable[[str], str]) -> None:
    apidocs = _apidocs()
    good = scratch_module(
        '"""Doc."""\n__all__ = ["f"]\ndef f(x: int) -> int:\n    """Doc."""\n    return x\n'
    )
    assert apidocs.build(tmp_path / "good", (good,)) == []
    assert apidocs.missing_names(tmp_path / "good", (good,)) == []
    bad = scratch_module(
        '"""Doc."""\nfrom __future__ import annotations\n__all__ = ["f", "gone"]\n'
        'def f(x: Undefined) -> None:\n    """Doc."""\n'
    )
    problems = apidocs.build(tmp_path / "bad", (bad,))
    assert any("Undefined" in p for p in problems), problems
    assert any("gone" in p for p in problems), problems
    # A name pdoc leaves off the page is reported too.
    page = tmp_path / "good" / f"{good}.html"
    page.write_text(page.read_text().replace('id="f"', 'id="renamed"'))
    assert apidocs.missing_names(tmp_path / "good", (good,)) == [f"{good}.f"]
