"""The commands as kubectl, helm and ruff users expect them (issue 34): paths as positional arguments,
the sub-command's usage on its own errors, and colour on a terminal only (``--color``, ``NO_COLOR``)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import yaml

import omerender_entry
from omerender.cli import main

ROOT = Path(__file__).resolve().parents[2]
CATALOG = str(ROOT / "examples" / "catalog")
REPLICA = str(ROOT / "examples" / "llama-pool.yaml")
MODEL = str(ROOT / "examples" / "catalog" / "llama-3-2-1b-instruct.yaml")
BLOCKING = ["--before", CATALOG, "--before", REPLICA, "--after", MODEL, "--after", REPLICA]
ESC = "\x1b["


def test_lint_takes_the_catalog_as_a_positional_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--no-schema", "-o", "json", "--objects", CATALOG]) == 0
    with_flag = json.loads(capsys.readouterr().out)
    assert main(["lint", CATALOG, "--no-schema", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == with_flag
    assert with_flag["renders"] == 2


def test_lint_without_any_path_says_how_to_give_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--no-schema"]) == 2
    assert "omerender lint PATH..., --objects PATH or -k DIR" in capsys.readouterr().err


def test_validate_takes_files_positional_or_with_f(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", REPLICA]) == 0
    positional = capsys.readouterr().out
    assert main(["validate", "-f", REPLICA]) == 0
    assert capsys.readouterr().out == positional == "llama-demo/llama-pool: allowed\n"
    assert main(["validate"]) == 2
    assert "omerender validate FILE... or -f FILE" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["lint", CATALOG], ["validate", REPLICA], ["render", REPLICA]])
def test_a_sub_command_error_prints_the_sub_command_usage(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--bogus"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: omerender {command[0]} ")
    assert f"omerender {command[0]}: error: unrecognized arguments: --bogus" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _diff_stdout(monkeypatch: pytest.MonkeyPatch, *argv: str, terminal: bool, no_color: bool = False) -> str:
    out = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["diff", *BLOCKING, *argv], no_color=no_color) == 1
    return out.getvalue()


def test_diff_colours_the_verdict_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _diff_stdout(monkeypatch, terminal=False)
    assert ESC not in plain
    coloured = _diff_stdout(monkeypatch, terminal=True)
    assert "llama-demo/llama-pool: \x1b[1;31mblocks\x1b[0m RuntimeSelectionFailed" in coloured
    # Colour adds escape codes around words already there: the text is the same.
    assert coloured.replace("\x1b[1;31m", "").replace("\x1b[0m", "") == plain
    assert _diff_stdout(monkeypatch, terminal=True, no_color=True) == plain
    assert _diff_stdout(monkeypatch, "--color=never", terminal=True) == plain
    assert _diff_stdout(monkeypatch, "--color=always", terminal=False) == coloured
    assert _diff_stdout(monkeypatch, "--color=always", "-o", "json", terminal=True).count(ESC) == 0


def test_lint_colours_the_severity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = yaml.safe_load(Path(MODEL).read_text())
    model["spec"]["modelArchitecture"] = "NoSuchArchitecture"
    (tmp_path / "model.yaml").write_text(yaml.safe_dump(model))
    out = _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["lint", "--no-schema", str(tmp_path / "model.yaml"), "--color=always"]) == 1
    assert out.getvalue().startswith("\x1b[1;31merror\x1b[0m ")


def test_the_console_script_reads_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point reads NO_COLOR and passes it on (the library reads no environment)."""
    seen: list[bool] = []
    monkeypatch.setattr("omerender.cli.main", lambda *, no_color: seen.append(no_color) or 0)
    monkeypatch.setattr("omerender.cli.diff_cmd.main", lambda *, no_color: seen.append(no_color) or 0)
    for value in ("1", ""):
        monkeypatch.setenv("NO_COLOR", value)
        assert omerender_entry._cli_main()() == 0
        assert omerender_entry._kdiff_main()() == 0
    assert seen == [True, True, False, False]


def _bad_replica(tmp_path: Path) -> str:
    replica = yaml.safe_load(Path(REPLICA).read_text())
    replica["spec"]["bogusField"] = 1
    path = tmp_path / "bad" / "replica.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(replica))
    return str(path)


def test_a_diff_error_names_the_file_of_the_side_it_is_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same replica on both sides: the error is about the before side's file, read first.
    bad = _bad_replica(tmp_path)
    assert main(["diff", "--before", CATALOG, "--before", bad, "--after", CATALOG, "--after", REPLICA]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"omerender diff: {bad} (before): InferenceReplica llama-demo/llama-pool: spec.bogusField"
    )
    assert main(["diff", "--before", CATALOG, "--after", CATALOG, "-f", bad]) == 2
    assert capsys.readouterr().err.startswith(
        f"omerender diff: {bad} (-f): InferenceReplica llama-demo/llama-pool"
    )


def test_a_replica_twice_names_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    again = tmp_path / "again.yaml"
    again.write_text(Path(REPLICA).read_text())
    argv = ["diff", "--before", CATALOG, "--before", REPLICA, "--before", str(again), "--after", CATALOG]
    assert main([*argv, "--after", REPLICA]) == 2
    assert capsys.readouterr().err == (
        f"omerender diff: {again} (before): InferenceReplica llama-demo/llama-pool appears twice (also in "
        f"{REPLICA}); keep one\n"
    )


def test_a_forecast_error_in_the_operator_config_names_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from omereconcile.cli import main as omereconcile_main

    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
                "data": {"lifecycle": '{"stuckPodGracePeriod": "forever"}'},
            }
        )
    )
    sides = ["--before", CATALOG, "--before", REPLICA, "--after", CATALOG, "--after", REPLICA]
    assert omereconcile_main(["forecast", *sides, "--after", str(config)]) == 2
    assert f"forecast: {config}: ConfigMap ome/inferenceservice-config: time: invalid duration" in (
        capsys.readouterr().err
    )


def test_a_forecast_error_about_replicas_names_their_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from omereconcile.cli import main as omereconcile_main
    from tests.unit.test_forecast_gangs import runners_replica

    steady = runners_replica("gang", "engine:v1", workers=3, instances=2)
    for side, image in (("before", "engine:v1"), ("after", "engine:v2")):
        items = [steady, runners_replica("single", image, workers=0, instances=2)]
        (tmp_path / f"{side}.yaml").write_text(json.dumps({"kind": "List", "items": items}))
    argv = ["forecast", "--before", str(tmp_path / "before.yaml"), "--after", str(tmp_path / "after.yaml")]
    assert omereconcile_main([*argv, "--capacity", "8x8", "--startup", "1m"]) == 2
    err = capsys.readouterr().err
    assert "does not come up on the capacity given" in err
    assert err.endswith(f"(--capacity NODESxGPUS or --nodes-from) ({tmp_path / 'after.yaml'})\n")


# kubectl_complete-ome speaks kubectl's completion protocol: its arguments are the words being completed.
_NOT_A_COMMAND = {"kubectl_complete-ome"}


def test_every_console_script_answers_version() -> None:
    import subprocess
    import tomllib

    from omerender import __version__

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert {"omerender", "omerender-kdiff", "omereconcile", "kubectl-ome"} <= set(scripts)
    for name, target in scripts.items():
        if name in _NOT_A_COMMAND:
            continue
        module, function = target.split(":")
        code = f"import sys; from {module} import {function}; sys.argv = [{name!r}, '--version']; sys.exit({function}())"
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
        )
        assert (done.returncode, done.stdout) == (0, f"{name} {__version__}\n"), (name, done.stderr)
