"""Start-up: ``omerender --help`` lists the commands without importing the library (pydantic, the
models, the loader), and ``import omerender`` imports names when first used. Not timed: the times are
``benchmarks/bench_startup.py``'s; this checks what is imported."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tomllib
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


def _plugins_variable_seen(entry: str, env: dict[str, str]) -> str:
    """What PYDANTIC_DISABLE_PLUGINS holds when the command runs, started from ``entry``."""
    probe = (
        "import os, sys\n"
        "import omerender.cli\n"
        "omerender.cli.main = lambda argv=None: print(os.environ.get('PYDANTIC_DISABLE_PLUGINS', '<unset>')) or 0\n"
        f"sys.argv = ['omerender', '--help']\n{entry}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_console_script_skips_pydantic_plugins_unless_the_user_set_the_variable() -> None:
    base = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    start = "import omerender_entry\nomerender_entry.main()"
    assert _plugins_variable_seen(start, base) == "__all__"
    # A value the user set, even empty (every plugin runs), is kept.
    assert _plugins_variable_seen(start, {**base, "PYDANTIC_DISABLE_PLUGINS": ""}) == ""
    assert _plugins_variable_seen(start, {**base, "PYDANTIC_DISABLE_PLUGINS": "logfire"}) == "logfire"
    # The library itself leaves the environment alone.
    assert _plugins_variable_seen("omerender.cli.main()", base) == "<unset>"


def test_the_console_scripts_start_in_omerender_entry() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["omerender"] == "omerender_entry:main"
    assert scripts["omerender-kdiff"] == "omerender_entry:kdiff"
    done = subprocess.run(
        [sys.executable, "-m", "omerender_entry", "--version"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0
    assert done.stdout.startswith("omerender ")
