"""``kubectl ome get ir`` and ``kubectl ome logs`` on the seed replica, run the way kubectl runs plugins.

The testbed's kubectl finds ``kubectl-ome`` on PATH (:mod:`kubectl_plugin`: this checkout's code) and hands
it ``ome``'s arguments; KUBECONFIG points at the test cluster.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable

import pytest
import yaml
from helpers import apply, example_replica, pods, wait_ready
from kubectl_plugin import kubectl, kubectl_ome
from reconciler_proc import Reconciler

from omerender.cli.io import strip_nulls
from testbed.testing import Cluster


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
    assert missing.returncode == 5  # the API's 404: the command could not run
    assert missing.stderr.strip() == 'Error from server (NotFound): inferencereplicas.ome.io "nope" not found'


def test_logs_selects_the_replicas_pods(cluster: Cluster, seed_replica: Reconciler, namespace: str) -> None:
    """The fake kubelet serves no logs (its nodes have no reachable kubelet endpoint), so what is checked is
    the honest part: the plugin finds the replica's pod by ``ome.io/inferenceservice=llama-pool`` and asks
    the API for that pod's container log, and it reports the API's answer (kubectl's wording, exit 5)
    instead of printing nothing or succeeding. On a real cluster the same request returns the log."""
    [pod] = pods(cluster, namespace)
    name = pod["metadata"]["name"]
    assert name == "llama-pool-engine-0-default-0"
    container = pod["spec"]["containers"][0]["name"]
    log_path = f"/containerLogs/{namespace}/{name}/{container}"

    for follow in ([], ["-f"]):
        proc = kubectl_ome(cluster, "logs", "llama-pool", "-n", namespace, *follow)
        assert proc.returncode == 5, proc
        assert proc.stdout == ""
        # The API server accepted the request for this pod and container and proxied it to the node.
        assert proc.stderr.startswith(f"pod/{name}: Error from server"), proc.stderr
        assert log_path in proc.stderr, proc.stderr

    # --container goes to the API as is: the API server itself rejects a name the pod does not have.
    other = kubectl_ome(cluster, "logs", "llama-pool", "-n", namespace, "--container", "nope")
    assert other.returncode == 5
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
        assert proc.returncode == 5, proc
        assert proc.stderr == f'Error from server (NotFound): inferencereplicas.ome.io "{name}" not found\n'
    assert kubectl_ome(cluster, "get", "ir", "llama-pool", "-n", namespace).returncode == 0


RUNTIME = "vllm-llama-3-2-1b-instruct"
MODEL = "llama-3-2-1b-instruct"


def test_render_runtime_wait_and_instances_on_the_seed_replica(
    cluster: Cluster, seed_replica: Reconciler, namespace: str
) -> None:
    """The read-only verbs on the seed replica, each checked against what the cluster holds: ``render``
    prints the revision the controller created (live UID), ``runtime explain`` the runtime it selected,
    ``runtime tree`` the replica under that runtime and a namespaced runtime inheriting from it."""
    obj = cluster.raw.get(f"/apis/ome.io/v1beta1/namespaces/{namespace}/inferencereplicas/llama-pool")
    live_revision = obj["status"]["updateRevision"]

    render = kubectl_ome(cluster, "render", "ir/llama-pool", "-n", namespace, "--instances", "1")
    assert render.returncode == 0, render.stderr
    docs = [d for d in yaml.safe_load_all(render.stdout) if d]
    [revision] = [d for d in docs if d["kind"] == "ControllerRevision"]
    assert revision["metadata"]["name"] == live_revision
    stored = cluster.raw.get(f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions/{live_revision}")
    # The stream leaves out null fields (as `omerender render` prints YAML); the stored bytes keep Go's
    # `creationTimestamp: null`.
    assert revision["data"] == strip_nulls(stored["data"])
    [pod] = [d for d in docs if d["kind"] == "Pod"]
    assert pod["metadata"]["name"] == "llama-pool-engine-0-default-0"
    assert "Note:" not in render.stderr

    wait = kubectl_ome(
        cluster, "wait", "ir/llama-pool", "-n", namespace, "--for=condition=Ready", "--timeout=30s"
    )
    assert (wait.returncode, wait.stdout) == (0, "inferencereplica.ome.io/llama-pool condition met\n"), (
        wait.stderr
    )
    wait = kubectl_ome(cluster, "wait", "ir/llama-pool", "-n", namespace, "--for=replicas=1", "-o", "json")
    assert wait.returncode == 0, wait.stderr
    assert json.loads(wait.stdout)["content"]["outcome"] == "Matched"
    missed = kubectl_ome(
        cluster, "wait", "ir/llama-pool", "-n", namespace, "--for=replicas=3", "--timeout=2s"
    )
    assert missed.returncode == 1
    assert missed.stderr.startswith(
        "error: timed out waiting for the condition on inferencereplicas/llama-pool"
    )

    status = kubectl_ome(cluster, "rollout", "status", "ir/llama-pool", "-n", namespace)
    assert (status.returncode, status.stdout) == (
        0,
        f'inferencereplica "llama-pool" successfully rolled out (revision {live_revision})\n',
    ), status.stderr

    listed = kubectl_ome(cluster, "instance", "list", "ir/llama-pool", "-n", namespace, "-o", "json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert (report["apiVersion"], report["kind"]) == ("cli.ome.io/v1alpha1", "InstanceListReport")
    assert [(i["index"], i["phase"], i["runningRevision"]) for i in report["content"]["instances"]] == [
        (0, "Ready", live_revision)
    ]
    one = kubectl_ome(cluster, "instance", "status", "ir/llama-pool", "0", "-n", namespace, "-o", "json")
    assert one.returncode == 0, one.stderr
    [pod_view] = json.loads(one.stdout)["content"]["pods"]
    [live_pod] = pods(cluster, namespace)
    assert pod_view["name"] == live_pod["metadata"]["name"]
    assert pod_view["node"] == live_pod["spec"]["nodeName"]
    assert (pod_view["ready"], pod_view["serving"]) == ("True", "True")
    gone = kubectl_ome(cluster, "instance", "status", "ir/llama-pool", "4", "-n", namespace)
    assert (gone.returncode, gone.stderr) == (
        1,
        'error: inferencereplica "llama-pool" reports no Instance 4 (Instances: 0)\n',
    )

    # A namespaced runtime inheriting from the selected one, for a format the model is not: explain
    # excludes it with Go's reason, and the tree shows it under its parent; neither changes the selection.
    child = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime",
        "metadata": {
            "name": "gguf-child",
            "namespace": namespace,
            "annotations": {"ome.io/inherit-from": RUNTIME},
        },
        "spec": {"supportedModelFormats": [{"modelFormat": {"name": "gguf"}, "autoSelect": True}]},
    }
    assert apply(cluster, child) == "servingruntime.ome.io/gguf-child created"
    explain = kubectl_ome(cluster, "runtime", "explain", "--model", MODEL, "-n", namespace, "-o", "json")
    assert explain.returncode == 0, explain.stderr
    content = json.loads(explain.stdout)["content"]
    assert content["selected"] == f"ClusterServingRuntime/{RUNTIME}"
    assert [c["runtime"] for c in content["candidates"]] == [f"ClusterServingRuntime/{RUNTIME}"]
    [excluded] = content["excluded"]
    assert excluded["runtime"] == f"ServingRuntime/{namespace}/gguf-child"
    assert excluded["cause"] == "Incompatible"
    assert excluded["reason"]  # the library's words for it (omerender.selection.Exclusion.reason)
    human = kubectl_ome(cluster, "runtime", "explain", "--model", MODEL, "-n", namespace)
    assert f"Selected:   ClusterServingRuntime/{RUNTIME}\n" in human.stdout

    tree = kubectl_ome(cluster, "runtime", "tree", RUNTIME, "-n", namespace)
    assert tree.returncode == 0, tree.stderr
    # Other tests' namespaces may hold replicas of the same cluster runtime: keep this namespace's lines.
    lines = [ln for ln in tree.stdout.splitlines() if "InferenceReplica/" not in ln or f"/{namespace}/" in ln]
    assert lines == [
        "Parents: none",
        f"ClusterServingRuntime/{RUNTIME} [selected]",
        f"|-- InferenceReplica/{namespace}/llama-pool (selects)",
        f"`-- ServingRuntime/{namespace}/gguf-child",
    ]
    sub = kubectl_ome(cluster, "runtime", "tree", "gguf-child", "-n", namespace, "-o", "json")
    assert json.loads(sub.stdout)["content"]["parents"] == [f"ClusterServingRuntime/{RUNTIME}"]

    # kubectl's own completion runs kubectl_complete-ome for the plugin's arguments.
    done = kubectl(cluster, "__complete", "ome", "rollout", "status", "-n", namespace, "ir/ll")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["ir/llama-pool", ":4"]
