"""Start-up: ``omerender --help`` lists the commands without importing the library (pydantic, the
models, the loader), and ``import omerender`` imports names when first used. Not timed: the times are
``benchmarks/bench_startup.py``'s; this checks what is imported."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import omerender
from omerender.cli import _COMMANDS, _parser

ROOT = Path(__file__).resolve().parents[2]


def _modules_after(code: str) -> set[str]:
    probe = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_help_imports_no_library_module() -> None:
    loaded = _modules_after(
        "from omerender.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    )
    heavy = {"pydantic", "yaml", "jsonschema", "omerender.catalog", "omerender.models", "omerender.loader"}
    assert not heavy & loaded, sorted(heavy & loaded)


def test_import_omerender_is_lazy_and_names_resolve() -> None:
    loaded = _modules_after("import omerender")
    assert "omerender.catalog" not in loaded
    assert "pydantic" not in loaded
    for name in omerender.__all__:
        assert getattr(omerender, name) is not None, name
    # A submodule import does not replace the functions of the same names.
    importlib.import_module("omerender.preview")
    importlib.import_module("omerender.render")
    assert callable(omerender.render)
    assert callable(omerender.preview)


def test_the_help_lines_are_the_ones_the_commands_register() -> None:
    full = _parser()
    sub = next(a for a in full._actions if a.dest == "command")
    helps = {choice.dest: choice.help for choice in sub._choices_actions}  # type: ignore[attr-defined]
    assert helps == {name: line for name, (_, line) in _COMMANDS.items()}


def test_a_render_of_the_seed_does_not_import_the_template_package() -> None:
    # The seed's containers hold no {{: the Go template package (about 15 ms) is never imported.
    probe = (
        "import contextlib, io\n"
        "from omerender.cli import main\n"
        "argv = ['render', 'examples/llama-pool.yaml', '--objects', 'examples/catalog']\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    assert main(argv) == 0\n"
    )
    loaded = _modules_after(probe)
    assert "omerender.preview" in loaded
    assert "omerender.gotemplate" not in loaded
