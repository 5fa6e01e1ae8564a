"""scripts/min_versions_tests.py: the unit test modules scripts/min-versions.sh runs at the lowest
dependency versions. Every module of ours that calls a dependency must be imported by a chosen test
(else a lower bound too low for it would pass), and the planner's own tests stay out (they cost the
cold Go builds CPU and no dependency version changes them)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "min_versions_tests.py"


@pytest.fixture(scope="module")
def chosen() -> list[str]:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_dependency_facing_tests_are_chosen_and_the_planners_are_not(chosen: list[str]) -> None:
    for path in chosen:
        assert (REPO / path).is_file(), path
    for needed in ("test_models.py", "test_loader.py", "test_crdschema.py", "test_metrics.py"):
        assert f"tests/unit/{needed}" in chosen, needed
    for own_logic in ("test_timeline.py", "test_shard_ranges.py", "test_versions.py"):
        assert f"tests/unit/{own_logic}" not in chosen, own_logic
    assert len(chosen) < len(list((REPO / "tests" / "unit").glob("test_*.py")))


def lazy_imports(path: Path) -> list[str]:
    """Modules of ours a file names in a string (the CLIs import each command's module by name)."""
    return [
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.split(".")[0] in ("omerender", "omereconcile")
        and (REPO / (node.value.replace(".", "/") + ".py")).is_file()
    ]


def test_every_module_that_calls_a_dependency_is_imported_by_a_chosen_test(chosen: list[str]) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import min_versions_tests as selection
    finally:
        sys.path.remove(str(SCRIPT.parent))
    # What the chosen tests load: their imports, then the imports of each module of ours loaded.
    todo = [name for path in chosen for name in selection.imported(REPO / path)]
    reached: set[str] = set()
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        if "." in name:
            todo.append(name.rpartition(".")[0])
        for source in (
            REPO / (name.replace(".", "/") + ".py"),
            REPO / name.replace(".", "/") / "__init__.py",
        ):
            if name.split(".")[0] in selection.PROJECT and source.is_file():
                todo.extend(selection.imported(source))
                todo.extend(lazy_imports(source))
    missed = selection.adapters() - reached
    assert not missed, f"no test min-versions.sh runs loads {sorted(missed)}: add one to tests/unit"
