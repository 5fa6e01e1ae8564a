"""Run ``kubectl ome ...`` as kubectl runs plugins, with this repository's code.

The real kubectl (the testbed's build) finds ``kubectl-ome`` and ``kubectl_complete-ome`` on PATH in a
folder of two small scripts that run ``python -m omereconcile.kubectl`` (and ``.complete``) from this
checkout, so what is tested is the code here whether or not the package is installed (the console
scripts of ``pyproject.toml`` name the same two entry points). KUBECONFIG points at the test cluster.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from testbed.testing import Cluster

REPO = Path(__file__).resolve().parents[2]


@cache
def plugin_dir(base: Path) -> Path:
    folder = base / "kubectl-plugins"
    folder.mkdir(parents=True, exist_ok=True)
    for script, module in (
        ("kubectl-ome", "omereconcile.kubectl"),
        ("kubectl_complete-ome", "omereconcile.kubectl.complete"),
    ):
        path = folder / script
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {module} "$@"\n')
        path.chmod(0o755)
    return folder


def _env(cluster: Cluster) -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{plugin_dir(cluster.cp.kubeconfig.parent)}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(cluster.cp.kubeconfig),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
    }


def kubectl_ome(
    cluster: Cluster, *args: str, timeout: float = 90, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [cluster.cp.binary("kubectl"), "ome", *args],
        env=_env(cluster),
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


class Follower:
    """``kubectl ome ARGS`` running in the background (a ``--watch``), its stdout collected line by line
    as it comes, so a test can act once the first snapshot is drawn instead of after a guessed sleep
    (the plugin's start-up, a Python import, takes seconds on a loaded machine)."""

    def __init__(self, cluster: Cluster, *args: str) -> None:
        import threading

        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            [cluster.cp.binary("kubectl"), "ome", *args],
            env=_env(cluster),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def output(self) -> str:
        return "".join(self.lines)

    def wait(self, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Its end (killed after ``timeout``): what ``kubectl_ome`` would have returned."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._reader.join(10)
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        self.proc.stdout.close()
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, self.output(), err)


def kubectl(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain kubectl with the plugins on PATH (for ``kubectl __complete ome ...``)."""
    return subprocess.run(
        [cluster.cp.binary("kubectl"), *args],
        env=_env(cluster),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
