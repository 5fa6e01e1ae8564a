"""``omerender completion bash|zsh|fish``: scripts generated from the argparse tree, which complete
the commands and flags this ``omerender`` has (bash driven for real; zsh and fish read)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from omerender.cli import main


def script(capsys: pytest.CaptureFixture[str], shell: str) -> str:
    assert main(["completion", shell]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


def complete_in_bash(source: Path, *words: str) -> list[str]:
    """What bash offers after ``omerender WORDS`` (the last word being completed)."""
    driver = (
        f"source {source}\n"
        'COMP_WORDS=(omerender "$@"); COMP_CWORD=$#; COMP_LINE="omerender $*"; COMP_POINT=${#COMP_LINE}\n'
        '_shtab_omerender omerender "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"\n'
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    bash = shutil.which("bash")
    assert bash is not None, "bash is part of every CI image this project runs on"
    done = subprocess.run([bash, "-c", driver, "driver", *words], capture_output=True, text=True, check=True)
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_commands_flags_and_shells(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "omerender.bash"
    source.write_text(script(capsys, "bash"))
    assert complete_in_bash(source, "re") == ["render"]
    assert set(complete_in_bash(source, "")) >= {"render", "lint", "validate", "diff", "completion"}
    assert complete_in_bash(source, "lint", "--ob") == ["--objects"]
    assert "--kustomize" in complete_in_bash(source, "render", "--k")
    assert complete_in_bash(source, "completion", "") == ["bash", "zsh", "fish"]


def test_paths_complete_file_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "omerender.bash"
    source.write_text(script(capsys, "bash"))
    (tmp_path / "catalog.yaml").write_text("")
    offered = complete_in_bash(source, "lint", "--objects", str(tmp_path / "cat"))
    assert offered == [str(tmp_path / "catalog.yaml")]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_name_every_command_and_flag(
    capsys: pytest.CaptureFixture[str], shell: str
) -> None:
    text = script(capsys, shell)
    for word in ("render", "lint", "validate", "diff", "completion", "objects", "kustomize", "strict"):
        assert word in text, word


def test_an_unknown_shell_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["completion", "powershell"])
    assert info.value.code == 2
    assert "invalid choice: 'powershell'" in capsys.readouterr().err
