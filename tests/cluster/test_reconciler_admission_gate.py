"""An Instance queued behind a pod scheduling gate (what Kueue does to admit a workload) on the real
control plane: OME's Go parks its readiness clock while a pod is gated and restarts it from admission
(``escalation/deadline.go`` ``ReconcileGatedDeadlines``, run each pass by ``inferencereplica/status.go``
@ 8263d0c7 ``reconcileHeldDeadlines``); the rule is pinned in
``tests/goparity/test_inferencereplica_status.py`` (``…GatedInstance_DeadlineParked_NotEscalated``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from helpers import apply, live_pods, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster, runners_replica

POD = "llama-pool-engine-0-default-0"
TIMEOUT_S = 10


def _row0(cluster: Cluster, ns: str) -> dict[str, Any]:
    rows = (replica(cluster, ns).get("status") or {}).get("instanceStatuses") or []
    return dict(rows[0]) if rows else {}


def test_a_pod_queued_behind_a_scheduling_gate_is_not_failed_at_the_readiness_timeout(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """The replica's pod template carries a scheduling gate, so the scheduler leaves its pod unplaced
    (as Kueue queues one): past ``instanceReadyTimeout`` (10 s) the Instance is still Creating, with no
    ``lastFailure`` and no deadline on its operation. Once the gate is lifted (the pod admitted) the
    operation gets a full window again and the Instance comes up Ready. Before this change the queued
    Instance was failed at the deadline (``DeadlineExceeded``) and rebuilt."""
    rec = reconcilers()
    obj = runners_replica(
        "llama-pool", namespace, "engine:v1", replicas=1, lifecycle={"instanceReadyTimeout": f"{TIMEOUT_S}s"}
    )
    obj["spec"]["runners"][0]["template"]["spec"]["schedulingGates"] = [{"name": "example.com/queue"}]
    apply(cluster, obj)
    rec.wait(
        "the gated pod",
        lambda: [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == [POD],
        timeout=60,
    )
    rec.wait(
        "the clock parked",
        lambda: (op := _row0(cluster, namespace).get("operation") or {}) != {} and not op.get("deadline"),
        timeout=30,
    )
    uid = live_pods(cluster, namespace)[0]["metadata"]["uid"]
    time.sleep(TIMEOUT_S + 8)
    row = _row0(cluster, namespace)
    assert row["phase"] == "Creating", row
    assert "lastFailure" not in row, row
    assert not (row.get("operation") or {}).get("deadline"), row
    assert [p["metadata"]["uid"] for p in live_pods(cluster, namespace)] == [uid]  # not rebuilt

    patch = json.dumps([{"op": "remove", "path": "/spec/schedulingGates"}])
    cluster.kubectl("patch", "pod", POD, "-n", namespace, "--type=json", "-p", patch)
    rec.wait(
        "the window restarted from admission",
        lambda: (
            bool((_row0(cluster, namespace).get("operation") or {}).get("deadline"))
            or _row0(cluster, namespace).get("phase") == "Ready"
        ),
        timeout=30,
    )
    rec.wait("Ready", lambda: _row0(cluster, namespace).get("phase") == "Ready", timeout=60)
    assert "lastFailure" not in _row0(cluster, namespace)
    assert [p["metadata"]["uid"] for p in live_pods(cluster, namespace)] == [uid]  # the same pod, admitted
