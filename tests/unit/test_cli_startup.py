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
        "omerender.cli.main = lambda argv=None, no_color=False: print(os.environ.get('PYDANTIC_DISABLE_PLUGINS', '<unset>')) or 0\n"
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


def _console_render(variable: str | None, tail: str) -> dict[str, object]:
    """Run the console script's ``main`` on the seed in a fresh process with PYDANTIC_DISABLE_PLUGINS set
    to ``variable`` (None: unset), then ``tail``; what the probe prints as JSON."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if variable is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = variable
    probe = (
        "import contextlib, io, json, sys\n"
        "import omerender_entry\n"
        "sys.argv = ['omerender', 'render', 'examples/llama-pool.yaml', '--objects', 'examples/catalog']\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):\n"
        "    code = omerender_entry.main()\n"
        "loader = sys.modules.get('pydantic.plugin._loader')\n"
        "seen = {'code': code, 'rendered': 'PodTemplate' in out.getvalue(),\n"
        "        'metadata': 'importlib.metadata' in sys.modules,\n"
        "        'stand_in': type(loader).__name__ == '_NoPlugins'}\n"
        f"{tail}\n"
        "print(json.dumps(seen))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_with_every_plugin_disabled_the_console_script_never_imports_pydantics_plugin_loader() -> None:
    for variable in (None, "__all__", "1", "true"):  # unset: the console script sets __all__
        seen = _console_render(variable, "")
        assert seen == {"code": 0, "rendered": True, "metadata": False, "stand_in": True}, variable


def test_a_value_that_enables_plugins_keeps_pydantics_loader() -> None:
    for variable in ("", "logfire"):
        seen = _console_render(variable, "")
        assert seen == {"code": 0, "rendered": True, "metadata": True, "stand_in": False}, variable


def test_the_stand_in_answers_as_pydantics_loader_and_hands_over_anything_else() -> None:
    # What pydantic's own get_plugins answers for the same value, then any other name: the real module.
    tail = (
        "seen['stand_in_plugins'] = list(loader.get_plugins())\n"
        "seen['group'] = loader.PYDANTIC_ENTRY_POINT_GROUP\n"
        "real = sys.modules['pydantic.plugin._loader']\n"
        "seen['now_real'] = type(real).__name__ == 'module' and real is not loader\n"
        "seen['real_plugins'] = list(real.get_plugins())\n"
    )
    seen = _console_render("__all__", tail)
    assert seen["stand_in_plugins"] == seen["real_plugins"] == []
    assert seen["group"] == "pydantic"
    assert seen["now_real"] is True


def test_python_m_omerender_cli_leaves_pydantics_loader_alone() -> None:
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    probe = (
        "import contextlib, io, sys\n"
        "from omerender.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['render', 'examples/llama-pool.yaml', '--objects', 'examples/catalog'])\n"
        "print(type(sys.modules['pydantic.plugin._loader']).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "module"
