"""``pip install omerender`` without extras: ``render`` runs, a tools-only command names its extra.

Each command runs in a subprocess whose import system sees only the standard library, omerender and
the distributions the core dependencies of ``pyproject.toml`` pull in (read from the installed
packages' metadata); every other module, the ``tools`` extra's included, fails to import as it would
in a fresh virtual environment.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

_GUARD = """
import importlib.abc, json, sys
ALLOWED = set(json.loads(sys.argv.pop(1)))
class CoreOnly(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in ALLOWED or top.startswith("_"):
            return None
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, CoreOnly())
sys.path.insert(0, sys.argv.pop(1))
from omerender.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _requirement_name(text: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", text, maxsplit=1)[0]


def _core_modules() -> set[str]:
    """Top-level import names of the core dependencies and everything they require (no extras)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pending = [_requirement_name(r) for r in project["dependencies"]]
    seen: set[str] = set()
    while pending:
        name = pending.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        for requirement in metadata.requires(name) or []:
            # Only what this interpreter installs: no extras, and the environment markers evaluated
            # (jsonschema 4.21 requires pkgutil-resolve-name below Python 3.9 only).
            marker = Requirement(requirement).marker
            if marker is None or marker.evaluate({"extra": ""}):
                pending.append(_requirement_name(requirement))
    providers = metadata.packages_distributions()
    return {
        module
        for module, dists in providers.items()
        if any(d.lower().replace("_", "-") in seen for d in dists)
    } | {"omerender"}


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    allowed = json.dumps(sorted(_core_modules()))
    return subprocess.run(
        [sys.executable, "-c", _GUARD, allowed, str(ROOT), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_guard_hides_the_tools_extra() -> None:
    allowed = _core_modules()
    assert {"pydantic", "yaml", "jsonschema"} <= allowed
    assert not {"deepdiff", "kubernetes_validate", "jsonschema_rs", "kubernetes"} & allowed


def test_render_runs_on_the_core_install() -> None:
    done = _run("render", str(EXAMPLES / "llama-pool.yaml"), "--objects", str(EXAMPLES / "catalog"))
    assert done.returncode == 0, done.stderr
    assert "kind: ControllerRevision" in done.stdout


def test_validate_and_lint_without_schema_run_on_the_core_install() -> None:
    done = _run("validate", str(EXAMPLES / "llama-pool.yaml"), "--objects", str(EXAMPLES / "catalog"))
    assert done.returncode == 0, done.stderr
    done = _run("lint", "--objects", str(EXAMPLES / "catalog"), "--no-schema")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (("diff", str(EXAMPLES / "catalog"), str(EXAMPLES / "catalog")), "deepdiff"),
        (("lint", "--objects", str(EXAMPLES / "catalog")), "kubernetes_validate"),
        (
            (
                "render",
                str(EXAMPLES / "llama-pool.yaml"),
                "--objects",
                str(EXAMPLES / "catalog"),
                "--validate",
            ),
            "kubernetes_validate",
        ),
    ],
)
def test_a_tools_command_names_its_extra(argv: tuple[str, ...], module: str) -> None:
    done = _run(*argv)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"omerender {argv[0]}: ")
    assert (
        f"needs the 'tools' extra ({module} is not installed): pip install 'omerender[tools]'" in done.stderr
    )
    assert "Traceback" not in done.stderr
