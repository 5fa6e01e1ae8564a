"""``kubectl ome get ir`` and ``kubectl ome logs`` on the seed replica, run the way kubectl runs plugins.

The testbed's kubectl finds the installed ``kubectl-ome`` console script on PATH (``pip install -e .``
puts it next to this interpreter) and hands it ``ome``'s arguments; KUBECONFIG points at the test cluster.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import apply, example_replica, pods, wait_ready
from reconciler_proc import Reconciler

from testbed.testing import Cluster


def _plugin_dir() -> Path:
    for candidate in (Path(sysconfig.get_path("scripts")), Path(sys.executable).parent):
        if (candidate / "kubectl-ome").exists():
            return candidate
    found = shutil.which("kubectl-ome")
    if found is None:
        pytest.fail("kubectl-ome is not installed: run `python3 -m pip install -e .` (scripts/setup.sh does)")
    return Path(found).parent


def kubectl_ome(cluster: Cluster, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{_plugin_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
        "KUBECONFIG": str(cluster.cp.kubeconfig),
    }
    return subprocess.run(
        [cluster.cp.binary("kubectl"), "ome", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


@pytest.fixture
def seed_replica(cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str) -> Reconciler:
    """The seed's Step 1 in the test namespace: llama-pool created and Ready under the reconciler."""
    rec = reconcilers()
    assert apply(cluster, example_replica(namespace)) == "inferencereplica.ome.io/llama-pool created"
    wait_ready(cluster, namespace, rec.tail)
    return rec


def test_get_ir_shows_parent_and_lifecycle(
    cluster: Cluster, seed_replica: Reconciler, namespace: str
) -> None:
    row_re = r"llama-pool +engine +- +1 +1 +1 +Ready=True +(\d+s|\d+m\d*s?)"

    def table() -> subprocess.CompletedProcess[str] | None:
        proc = kubectl_ome(cluster, "get", "ir", "-n", namespace)
        lines = proc.stdout.splitlines()
        return proc if proc.returncode == 0 and len(lines) == 2 and re.fullmatch(row_re, lines[1]) else None

    proc = seed_replica.wait("kubectl ome get ir to read 1 1 1 Ready=True", table, timeout=60)
    header, row = proc.stdout.splitlines()
    assert header.split() == [
        "NAME",
        "COMPONENT",
        "PARENT",
        "DESIRED",
        "CURRENT",
        "READY",
        "LIFECYCLE",
        "AGE",
    ]
    assert row.split()[:7] == ["llama-pool", "engine", "-", "1", "1", "1", "Ready=True"]
    # Columns line up under their headers, as kubectl's tabwriter prints them.
    assert [m.start() for m in re.finditer(r"\S+", header)] == [m.start() for m in re.finditer(r"\S+", row)]

    # The other accepted names and a single NAME give the same row; -A adds NAMESPACE; wide adds columns.
    for args in (["inferencereplicas"], ["inferencereplica"], ["ir", "llama-pool"]):
        again = kubectl_ome(cluster, "get", *args, "-n", namespace)
        assert again.returncode == 0, again.stderr
        assert again.stdout.splitlines()[1].split()[:7] == row.split()[:7]
    every = kubectl_ome(cluster, "get", "ir", "-A")
    assert every.returncode == 0, every.stderr
    assert [namespace, "llama-pool", "engine", "-", "1"] in [r.split()[:5] for r in every.stdout.splitlines()]
    wide = kubectl_ome(cluster, "get", "ir", "-n", namespace, "-o", "wide")
    assert wide.returncode == 0, wide.stderr
    cells = dict(zip(*(line.split() for line in wide.stdout.splitlines()), strict=True))
    status = cluster.raw.get(f"/apis/ome.io/v1beta1/namespaces/{namespace}/inferencereplicas/llama-pool")[
        "status"
    ]
    assert {k: cells[k] for k in ("REASON", "ENCODING", "PAUSED", "COORDINATION", "LIFECYCLE-FRESHNESS")} == {
        "REASON": "AllInstancesReady",
        "ENCODING": "DenseV1",
        "PAUSED": "false",
        "COORDINATION": "-",
        "LIFECYCLE-FRESHNESS": "Current",
    }
    assert cells["CURRENT-REVISION"] == status["currentRevision"]
    assert cells["UPDATE-REVISION"] == status["updateRevision"]

    # `irep` is kubectl's short name for the CRD, not a plugin resource name.
    bad = kubectl_ome(cluster, "get", "irep", "-n", namespace)
    assert bad.returncode == 1
    assert bad.stdout == ""
    assert bad.stderr.strip() == (
        'error: unknown resource "irep" (valid resources: inferencereplicas, inferencereplica, ir)'
    )
    missing = kubectl_ome(cluster, "get", "ir", "nope", "-n", namespace)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): inferencereplicas.ome.io "nope" not found'


def test_logs_selects_the_replicas_pods(cluster: Cluster, seed_replica: Reconciler, namespace: str) -> None:
    """The fake kubelet serves no logs (its nodes have no reachable kubelet endpoint), so what is checked is
    the honest part: the plugin finds the replica's pod by ``ome.io/inferenceservice=llama-pool`` and asks
    the API for that pod's container log, and it reports the API's answer (kubectl's wording, exit 1)
    instead of printing nothing or succeeding. On a real cluster the same request returns the log."""
    [pod] = pods(cluster, namespace)
    name = pod["metadata"]["name"]
    assert name == "llama-pool-engine-0-default-0"
    container = pod["spec"]["containers"][0]["name"]
    log_path = f"/containerLogs/{namespace}/{name}/{container}"

    for follow in ([], ["-f"]):
        proc = kubectl_ome(cluster, "logs", "llama-pool", "-n", namespace, *follow)
        assert proc.returncode == 1, proc
        assert proc.stdout == ""
        # The API server accepted the request for this pod and container and proxied it to the node.
        assert proc.stderr.startswith(f"pod/{name}: Error from server"), proc.stderr
        assert log_path in proc.stderr, proc.stderr

    # --container goes to the API as is: the API server itself rejects a name the pod does not have.
    other = kubectl_ome(cluster, "logs", "llama-pool", "-n", namespace, "--container", "nope")
    assert other.returncode == 1
    assert other.stderr.startswith(f"pod/{name}: Error from server (BadRequest): "), other.stderr
    assert "nope" in other.stderr

    # A name no pod carries in its ome.io/inferenceservice label: nothing is read, the selector is named.
    none = kubectl_ome(cluster, "logs", "nope", "-n", namespace)
    assert none.returncode == 1
    assert none.stderr.strip() == (
        f'error: no pods found for replica "nope" in namespace "{namespace}" '
        "(selector ome.io/inferenceservice=nope)"
    )


def test_names_cannot_change_the_request_path(cluster: Cluster, namespace: str) -> None:
    """A name or namespace is one path segment: ``..``, ``/`` and ``%`` are refused as client-go
    refuses them, and ``?``/``#``/spaces are escaped, so no name reaches another resource or a list."""
    apply(cluster, example_replica(namespace))
    for name, problem in (
        ("..", "[may not be '..']"),
        ("llama-pool/../../x", "[may not contain '/']"),
        ("%2e%2e", "[may not contain '%']"),
    ):
        proc = kubectl_ome(cluster, "get", "ir", name, "-n", namespace)
        assert proc.returncode == 1, proc
        assert proc.stderr == f'error: invalid resource name "{name}": {problem}\n'
        proc = kubectl_ome(cluster, "logs", "llama-pool", "-n", name)
        assert proc.returncode == 1, proc
        assert proc.stderr == f'error: invalid namespace "{name}": {problem}\n'
    # Unescaped, "llama-pool?x=" would GET llama-pool itself and "llama-pool#" likewise.
    for name in ("llama-pool?x=", "llama-pool#", "llama pool"):
        proc = kubectl_ome(cluster, "get", "ir", name, "-n", namespace)
        assert proc.returncode == 1, proc
        assert proc.stderr == f'Error from server (NotFound): inferencereplicas.ome.io "{name}" not found\n'
    assert kubectl_ome(cluster, "get", "ir", "llama-pool", "-n", namespace).returncode == 0
