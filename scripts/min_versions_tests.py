"""The unit test modules that exercise the dependencies' APIs: what scripts/min-versions.sh runs.

A module of tests/unit is chosen when it imports one of the dependencies whose lower bounds
pyproject.toml states (pydantic, yaml, jsonschema, jsonschema_rs, kubernetes, kubernetes_validate,
cryptography, prometheus_client, deepdiff, shtab, fnv_hash_fast) or imports a module of the project
that does (the adapters: the loader, the models, the CRD schemas, the kube client, the metrics, the
certificate rotator, ...; see `adapters`). Only imports written in the files count (read with ast, nothing imported):
a test that reaches pydantic only through `render()` exercises the same calls as the models' own
tests, which are chosen. The list is computed each run, so a new test of an adapter joins it.

Usage: python3 scripts/min_versions_tests.py  -> the chosen paths, one a line, sorted.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The import names of the dependencies min-versions.sh installs at their lowest (its `deps` pattern).
DEPENDENCIES = frozenset(
    {
        "pydantic",
        "yaml",
        "jsonschema",
        "jsonschema_rs",
        "kubernetes",
        "kubernetes_validate",
        "cryptography",
        "prometheus_client",
        "deepdiff",
        "shtab",
        "fnv_hash_fast",
    }
)
PROJECT = ("omerender", "omereconcile", "omerender_entry")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(path: Path) -> set[str]:
    """Every module a file names in an import: `from a.b import c` gives a.b and a.b.c."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def reaches_dependency(names: set[str]) -> bool:
    return any(name.split(".")[0] in DEPENDENCIES for name in names)


def adapters() -> set[str]:
    """The project's modules that import a dependency themselves. Not the packages that re-export them
    (`omerender.models`, `omerender.cli`, the top-level packages): counting those would choose nearly
    every test, and the costliest of those (the forecast's planner, the OME-shaped git history, the
    CI recipe's hooks) spend their time in our own logic, reaching the dependencies through the same
    calls as the adapters' own tests, which are chosen."""
    found: set[str] = set()
    for top in PROJECT:
        for path in (ROOT / top).rglob("*.py"):
            if reaches_dependency(imported(path)):
                found.add(module_name(path))
    return found


def chosen() -> list[str]:
    wrappers = adapters()
    out = []
    for path in sorted((ROOT / "tests" / "unit").glob("test_*.py")):
        names = imported(path)
        if reaches_dependency(names) or names & wrappers:
            out.append(str(path.relative_to(ROOT)))
    return out


def main() -> int:
    paths = chosen()
    if not paths:
        print("min_versions_tests.py: no unit test module imports a dependency", file=sys.stderr)
        return 1
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
