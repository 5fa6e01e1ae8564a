"""A single-pod Instance under RecreateInstanceOnPodRestart whose runner the kubelet restarts in place
is rebuilt at the next incarnation, on the real control plane.

Go: ome-projects/ome ``workload/ops/restart.go`` ``DetectRestartTriggerWithPods`` (the newest stored
version: its Ready branch's ``runnerRestartTrigger`` for any pod count; @ ae683e3f
``runnerRestartedSinceReady``) and ``Restart``. The fake kubelet crash-loops the pod's runner (same
pod, same UID: ``lastState.terminated`` after the row's ``readySince``), then heals it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

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


def test_a_runner_restarted_in_place_rebuilds_a_single_pod_instance(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(
        cluster,
        example_replica(namespace, replicas=1, lifecycle={"restartPolicy": "RecreateInstanceOnPodRestart"}),
    )
    rec.wait("Ready", lambda: _settled_at(cluster, namespace, 1), timeout=60)
    (before,) = live_pods(cluster, namespace)
    # The crash dated after readySince (recorded to the second) and past the crash window (the 3 s
    # stuck-pod grace): a steady-state break, which the policy rebuilds at once. A crash inside the
    # window is counted on the running revision's retry ladder first and rebuilt on its backoff (1 m
    # here; Go ops/restart.go readCrashLadder, planner/restart.py).
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
    assert "restarted after Ready" in warning["message"]
