"""The reconcile extra's console scripts without the extra: a message naming it (exit 2), never a
traceback; ``--version`` answers anyway. (scripts/wheel-smoke.sh runs the installed scripts for real.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from omerender import __version__

ROOT = Path(__file__).resolve().parents[2]
# Hides the Kubernetes client as a venv without the extra would.
_RUN = """
import sys
sys.modules["kubernetes"] = None
sys.path.insert(0, sys.argv.pop(1))
from omereconcile import entry
sys.argv[0] = sys.argv.pop(1)
sys.exit(getattr(entry, sys.argv[0].replace("-", "_"))())
"""


def _run(command: str, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _RUN, str(ROOT), command, *argv], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("command", ["omereconcile", "kubectl-ome"])
def test_without_the_extra_the_command_names_it(command: str) -> None:
    done = _run(command, "--help")
    assert done.returncode == 2
    assert done.stderr == (
        f"{command}: needs the 'reconcile' extra (kubernetes is not installed): pip install 'omerender[reconcile]'\n"
    )
    version = _run(command, "--version")
    assert (version.returncode, version.stdout) == (0, f"{command} {__version__}\n")


def test_with_the_extra_the_command_runs() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from omereconcile.entry import kubectl_ome; sys.exit(kubectl_ome())",
            "--version",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert (done.returncode, done.stdout) == (0, f"kubectl-ome {__version__}\n")


def test_kdiff_answers_version() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from omerender_entry import kdiff; sys.exit(kdiff())",
            "--version",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert (done.returncode, done.stdout) == (0, f"omerender-kdiff {__version__}\n")
