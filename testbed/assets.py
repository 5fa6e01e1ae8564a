"""Locate (building when needed) the control-plane binaries made by testbed/build.sh."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BUILD_SCRIPT = Path(__file__).resolve().parent / "build.sh"
BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kubectl")
# The gang scheduler (scheduler-plugins' Coscheduling) and the PodGroup CRD of the same release.
COSCHEDULER_SCRIPT = Path(__file__).resolve().parent / "build-coscheduler.sh"
COSCHEDULER_FILES = ("scheduler", "crd.yaml")


class BuildError(RuntimeError):
    """build.sh failed; the message carries its exit code and the tail of its output."""


def _run(script: Path, prefix: str, files: tuple[str, ...], *, stream: bool) -> Path:
    proc = subprocess.run(
        ["bash", str(script)],
        stdout=subprocess.PIPE,
        stderr=None if stream else subprocess.PIPE,
        text=True,
        check=False,
    )
    stderr = proc.stderr or ""
    if proc.returncode != 0:
        tail = "\n".join(stderr.splitlines()[-60:])
        raise BuildError(f"{script} exited {proc.returncode}:\n{tail}")
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if not lines or not lines[-1].startswith(prefix):
        raise BuildError(f"{script} did not print '{prefix}<dir>' last; stdout was:\n{proc.stdout}")
    assets = Path(lines[-1][len(prefix) :])
    missing = [b for b in files if not (assets / b).is_file()]
    if missing:
        raise BuildError(f"{script} reported {assets} but it lacks {', '.join(missing)}")
    return assets


def build(*, stream: bool = False) -> Path:
    """Run build.sh (a cache hit takes about a second) and return the binaries' directory.

    With `stream`, the build's progress goes to this process's stderr as it happens (CLI use); otherwise
    it is captured and quoted in the BuildError, so a pytest failure shows why the build failed.
    """
    return _run(BUILD_SCRIPT, "export KUBEBUILDER_ASSETS=", BINARIES, stream=stream)


def build_coscheduler(*, stream: bool = False) -> Path:
    """Run build-coscheduler.sh and return the folder holding the gang scheduler and its PodGroup CRD."""
    return _run(COSCHEDULER_SCRIPT, "export COSCHEDULER_ASSETS=", COSCHEDULER_FILES, stream=stream)


def main() -> int:
    try:
        assets = build(stream=True)
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"export KUBEBUILDER_ASSETS={assets}")
    return 0
