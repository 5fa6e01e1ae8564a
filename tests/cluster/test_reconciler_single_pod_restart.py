"""A single-pod Instance whose runner the kubelet crash-loops in place is rebuilt at the next
incarnation, on the real control plane, under either restart policy.

Go: ome-projects/ome ``workload/ops/restart.go`` (the newest stored version, 78,474 characters):
``readCrashLoopRepair`` / ``crashLoopRepairReason`` with ``evidence.CrashLoopWedgedPod`` (a pod parked
in a terminal waiting reason past the stuck-pod grace, aged from the pod's creation, is repaired
whatever the policy, ahead of the policy's own triggers), ``DetectRestartTriggerWithPods`` (its Ready
branch's ``runnerRestartTrigger``, which ``RecreateInstanceOnPodRestart`` adds) and ``Restart``. The
fake kubelet crash-loops the pod's runner (same pod, same UID: ``CrashLoopBackOff`` with
``lastState.terminated`` after the row's ``readySince``), then heals it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from helpers import apply, events, example_replica, live_pods, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster

POD = "llama-pool-engine-0-default-0"


def _row(cluster: Cluster, ns: str) -> dict[str, Any]:
    rows = (replica(cluster, ns).get("status") or {}).get("instanceStatuses") or [{}]
    return dict(rows[0])


def _settled_at(cluster: Cluster, ns: str, incarnation: int) -> bool:
    row = _row(cluster, ns)
    return row.get("phase") == "Ready" and not row.get("operation") and row.get("incarnation") == incarnation


@pytest.mark.parametrize("policy", ["None", "RecreateInstanceOnPodRestart"])
def test_a_runner_crash_looping_in_place_rebuilds_a_single_pod_instance(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, policy: str
) -> None:
    """Both policies rebuild the Instance through the wedge repair, named by Go's ``WedgeReason``.
    Before issue 37's crash-loop repair, under ``None`` the pod was left to the kubelet and the Instance
    stayed dark at incarnation 1; under ``RecreateInstanceOnPodRestart`` the rebuild was named
    "restarted after Ready" (the policy's trigger, which Go reads after the repair)."""
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=1, lifecycle={"restartPolicy": policy}))
    rec.wait("Ready", lambda: _settled_at(cluster, namespace, 1), timeout=60)
    (before,) = live_pods(cluster, namespace)
    # The crash dated after readySince (recorded to the second) and past the crash window (the 3 s
    # stuck-pod grace): a steady-state break, not a crash after promotion, so the running revision's
    # retry ladder (Go readCrashLadder, planner/restart.py) reads nothing and the repair opens at once.
    time.sleep(4.5)
    cluster.kubelet.crash_loop(POD, namespace)
    try:
        rec.wait(
            "the restart triggered",
            lambda: any(e["reason"] == "RestartTriggered" for e in events(cluster, namespace)),
            timeout=60,
        )
    finally:
        cluster.kubelet.heal(POD, namespace)
    rec.wait("rebuilt at incarnation 2", lambda: _settled_at(cluster, namespace, 2), timeout=90)
    (after,) = live_pods(cluster, namespace)
    assert after["metadata"]["uid"] != before["metadata"]["uid"]
    assert after["metadata"]["labels"]["ome.io/instance-incarnation"] == "2"
    warning = next(e for e in events(cluster, namespace) if e["reason"] == "RestartTriggered")
    assert f"pod {POD} wedged in CrashLoopBackOff past the stuck-pod grace" in warning["message"], warning
