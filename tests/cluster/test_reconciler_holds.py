"""The hold reports of OME's ``workload/holds`` (issue 37, the goparity port of ``holds/*_test.go``) on the
real control plane. Each expectation is OME's Go (cited per test); the rules are pinned in
``tests/goparity/test_workload_holds_*.py``, these show them on a cluster."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from helpers import apply, example_replica, live_pods, replica
from reconciler_proc import Reconciler
from test_reconciler_gang import PODGROUPS, _gang, _settled, _wait_gpus_free
from test_reconciler_rollout import RUNTIME, namespaced_runtime, ready_on

from testbed.testing import Cluster

SOURCE, SURGE = "llama-pool-engine-0-default-0", "llama-pool-engine-0-default-1"
GATE = "ome.io/serving"


def _row0(cluster: Cluster, ns: str) -> dict[str, Any]:
    rows = (replica(cluster, ns).get("status") or {}).get("instanceStatuses") or []
    return dict(rows[0]) if rows else {}


def _gang_settled(cluster: Cluster, ns: str) -> bool:
    return _settled(cluster, ns) and bool(_row0(cluster, ns).get("phase") == "Ready")


def _set_gate(cluster: Cluster, ns: str, pod: str, status: str) -> None:
    """Another actor writes the pod's serving gate (the status subresource, as the controller does)."""
    obj = json.loads(cluster.kubectl("get", "pod", pod, "-n", ns, "-o", "json").stdout)
    conds = [c for c in obj["status"].get("conditions") or [] if c["type"] != GATE]
    conds.append({"type": GATE, "status": status, "reason": "TakenOutByHand" if status == "False" else ""})
    patch = json.dumps({"status": {"conditions": conds}})
    cluster.kubectl("patch", "pod", pod, "-n", ns, "--subresource=status", "--type=merge", "-p", patch)


def test_a_surge_source_taken_out_of_rotation_is_reported_source_unrouted(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go holds/sourcerotation.go @ 4dfb96b1 reportSourceRotation and types.SourceUnroutedTermination: a
    surge keeps its source in rotation until the drain step, so a source whose serving gate someone
    else turned False while the replacement is still coming up is reported on the row
    (``waiting: SourceUnrouted``, the source named on ``lastFailure``), the deadline left running; the
    report is released once the source is routed again."""
    rec = reconcilers()
    apply(cluster, namespaced_runtime(namespace))
    apply(cluster, example_replica(namespace, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}))
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    cluster.kubelet.never_ready(SURGE, namespace)
    try:
        apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.3"))
        rec.wait(
            "the surge at its Surge step",
            lambda: (_row0(cluster, namespace).get("operation") or {}).get("step") == "Surge",
            timeout=60,
        )
        deadline = (_row0(cluster, namespace).get("operation") or {}).get("deadline")
        _set_gate(cluster, namespace, SOURCE, "False")
        row = rec.wait(
            "the source reported out of rotation",
            lambda: (
                _row0(cluster, namespace)
                if (_row0(cluster, namespace).get("operation") or {}).get("waiting") == "SourceUnrouted"
                else None
            ),
            timeout=30,
        )
        print("row with the source out of rotation:", json.dumps(row, sort_keys=True))
        assert row["operation"]["step"] == "Surge"
        assert row["operation"].get("deadline") == deadline  # a report: the clock is not parked
        assert row["lastFailure"]["podName"] == SOURCE
        assert row["lastFailure"]["reason"] == "SourceUnrouted"
        _set_gate(cluster, namespace, SOURCE, "True")
        rec.wait(
            "the report released",
            lambda: "waiting" not in (_row0(cluster, namespace).get("operation") or {"waiting": "gone"}),
            timeout=30,
        )
    finally:
        cluster.kubelet.heal(SURGE, namespace)


def test_a_gang_waiting_for_its_old_pod_group_says_so_on_last_failure(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go holds/gang.go @ dcfb4135 reportGang / gangHoldObservedAt and types.GangTermination: a gang that
    must be rebuilt while its PodGroup is still being collected (a finalizer holds it) waits on
    ``PodGroupTerminating`` with the group's explanation on ``lastFailure``; once the group is gone it
    is created again and the gang comes back."""
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=4, replicas=1))
    rec.wait("the gang settled", lambda: _gang_settled(cluster, namespace), timeout=120)
    group = f"{PODGROUPS.format(ns=namespace)}/llama-pool-engine-0"
    cluster.raw.patch(group, {"metadata": {"finalizers": ["example.com/hold"]}})
    cluster.raw.delete(group)
    try:
        cluster.kubectl(
            "delete", "pod", "-n", namespace, "llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"
        )

        def held() -> dict[str, Any] | None:
            row = _row0(cluster, namespace)
            waiting = (row.get("operation") or {}).get("waiting")
            reason = (row.get("lastFailure") or {}).get("reason")
            return row if (waiting, reason) == ("PodGroupTerminating", "PodGroupTerminating") else None

        row = rec.wait("the row waiting on the terminating PodGroup, and saying so", held, timeout=60)
        print("row while the old PodGroup is collected:", json.dumps(row["lastFailure"], sort_keys=True))
        assert "llama-pool-engine-0" in row["lastFailure"]["message"]
        assert not [p for p in live_pods(cluster, namespace) if "-engine-0-" in p["metadata"]["name"]]
    finally:
        cluster.raw.patch(group, {"metadata": {"finalizers": None}})
    rec.wait("the gang back", lambda: _gang_settled(cluster, namespace), timeout=120)
