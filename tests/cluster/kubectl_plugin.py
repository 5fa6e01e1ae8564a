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


def kubectl_ome(
    cluster: Cluster, *args: str, timeout: float = 90, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{plugin_dir(cluster.cp.kubeconfig.parent)}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(cluster.cp.kubeconfig),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
    }
    return subprocess.run(
        [cluster.cp.binary("kubectl"), "ome", *args],
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def kubectl(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    """Plain kubectl with the plugins on PATH (for ``kubectl __complete ome ...``)."""
    env = {
        **os.environ,
        "PATH": f"{plugin_dir(cluster.cp.kubeconfig.parent)}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(cluster.cp.kubeconfig),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
    }
    return subprocess.run(
        [cluster.cp.binary("kubectl"), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
