"""Build the API reference of the public API from its docstrings with pdoc; any warning fails the build.

    python3 scripts/apidocs.py            # build into a temporary folder, check it, remove it (CI)
    python3 scripts/apidocs.py -o DIR     # build into DIR and keep it (open DIR/index.html)

The reference covers the package roots (``omerender``: every name in its ``__all__``; ``omereconcile``:
its ``__all__``, empty today, since the reconciler is a program, not a library) and
``omerender.errors``, whose error tree the package docstring points to. Implementation modules are left
out on purpose: they are not the API. A warning of any kind while pdoc imports the modules, evaluates
their annotations or renders their docstrings (an annotation that does not resolve, a name in
``__all__`` that does not exist, a docstring it cannot parse) makes the build exit 1; so does a public
name missing from the page. Exit 2 when pdoc is not installed (it is in the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# The public modules; a "!" pattern drops the submodules pdoc would otherwise walk into (it follows a
# package's __all__, where `preview` and `render` name both a function and a module).
SPECS = (
    "omerender",
    "omereconcile",
    r"!omerender\.",
    r"!omereconcile\.",
    "omerender.errors",
    "omerender.diff",
    r"!omerender\.diff\.",
)
PACKAGES = ("omerender", "omereconcile", "omerender.diff")


def build(output: Path, specs: tuple[str, ...] = SPECS) -> list[str]:
    """Render ``specs`` into ``output``; returns every warning raised while doing so, as text."""
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="restructuredtext", show_source=True, search=True)
    # omerender's __init__ imports its names on first use; pdoc reads the module's namespace, so every
    # public name is resolved before the build.
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            getattr(module, name)
    _reader_view(pdoc)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*specs, output_directory=output)
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def _reader_view(pdoc: Any) -> None:
    """What a reader sees, not the machinery: a pydantic field without a default shows none (pdoc 16
    prints pydantic's ``PydanticUndefined`` sentinel), and a record's constructor shows the record's
    declaration as its source (``@record`` builds ``__init__`` lazily; its stand-in's code is ours, not
    the API). Both are changes to this process's view only: the build imports the modules, nothing else."""
    import pdoc._pydantic
    import pdoc.doc_types
    from pydantic_core import PydanticUndefined

    original = pdoc._pydantic.default_value

    def default_value(parent: Any, name: str, obj: Any) -> Any:
        value = original(parent, name, obj)
        return pdoc.doc_types.empty if value is PydanticUndefined else value

    pdoc._pydantic.default_value = default_value
    pdoc.doc.__dict__["_pydantic"].default_value = default_value
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            init = getattr(value, "__dict__", {}).get("__init__") if isinstance(value, type) else None
            if getattr(init, "__record_stand_in__", False):
                init.__wrapped__ = value  # inspect.getsource follows it; the signature is __signature__


def missing_names(output: Path, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """The names of each package's ``__all__`` that have no entry on its page."""
    missing: list[str] = []
    for package in packages:
        page = (output / f"{package.replace('.', '/')}.html").read_text(encoding="utf-8")
        anchors = set(re.findall(r'id="([A-Za-z_][A-Za-z0-9_]*)"', page))
        missing += [
            f"{package}.{name}" for name in importlib.import_module(package).__all__ if name not in anchors
        ]
    return missing


# Words that only the machinery says: a page that shows one shows an implementation detail as the API.
INTERNALS = ("__record_stand_in__", "PydanticUndefined", "_HAS_FACTORY")


def internals_shown(output: Path) -> list[str]:
    """Each page that shows one of :data:`INTERNALS`."""
    return [
        f"{page.relative_to(output).as_posix()} shows {word}"
        for page in sorted(output.rglob("*.html"))
        for word in INTERNALS
        if word in page.read_text(encoding="utf-8")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "-o", "--output", type=Path, help="folder to build into and keep (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # this checkout's packages, not whichever copy is installed
    try:
        import pdoc  # noqa: F401
    except ImportError:
        print("apidocs: pdoc is not installed: pip install -e '.[dev]'", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="omerender-apidocs-") as scratch:
        output = args.output or Path(scratch)
        problems = build(output)
        problems += [f"not on the page: {name}" for name in missing_names(output)]
        problems += internals_shown(output)
        pages = sorted(p.relative_to(output).as_posix() for p in output.rglob("*.html"))
    elapsed = time.perf_counter() - started
    for problem in problems:
        print(f"apidocs: {problem}", file=sys.stderr)
    if problems:
        print(f"apidocs: {len(problems)} problem(s); the API reference build fails", file=sys.stderr)
        return 1
    where = str(args.output) if args.output else "a temporary folder (removed)"
    print(f"apidocs: {len(pages)} pages ({', '.join(pages)}) into {where}, no warnings, {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
