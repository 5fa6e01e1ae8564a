"""A corrective roll-back on the real control plane (issue 37; OME ``workload/corrective_recovery_test.go``
``TestCorrectiveRecovery_SinglePod_RollBack``): after a broken revision fails its Instance, reverting the
runtime to the revision the Instance still serves on brings it back to Ready with no manual step, and
the original pod serves throughout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers import apply, example_replica, live_pods, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_rollout import RUNTIME, ServingMonitor, namespaced_runtime, ready_on

from testbed.testing import Cluster


def test_reverting_a_failed_update_brings_the_instance_back_to_ready(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go ``ops/cleanup.go`` ``CleanupWreckage`` (ome-projects/ome @ ae683e3f): once the debris of the
    superseded attempt is gone, the Instance is promoted where it serves. Before the fix the row kept
    the abandoned target and stayed Failed (Ready=False) after the revert."""
    rec = reconcilers()
    apply(cluster, namespaced_runtime(namespace))
    apply(cluster, example_replica(namespace, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}))
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    v1 = replica(cluster, namespace)["status"]["currentRevision"]
    surge = "llama-pool-engine-0-default-1"
    cluster.kubelet.crash_loop(surge, namespace)
    try:
        with ServingMonitor(cluster, namespace) as mon:
            apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:broken"))

            def failed() -> dict[str, Any] | None:
                rows = replica(cluster, namespace)["status"].get("instanceStatuses") or []
                return rows[0] if rows and rows[0].get("phase") == "Failed" else None

            rec.wait("Instance 0 Failed", failed, timeout=60)
            apply(cluster, namespaced_runtime(namespace))  # the corrective roll-back
            rec.wait(
                "Ready again on the first revision", lambda: ready_on(cluster, namespace, v1), timeout=60
            )
            rows = replica(cluster, namespace)["status"]["instanceStatuses"]
            print("after the revert:", [(r["index"], r["phase"], r.get("runningRevision")) for r in rows])
            assert [(r["phase"], r.get("runningRevision")) for r in rows] == [("Ready", v1)]
            assert [p["metadata"]["name"] for p in live_pods(cluster, namespace) if serving(p)] == [
                "llama-pool-engine-0-default-0"
            ]
        assert mon.minimum == 1
    finally:
        cluster.kubelet.heal(surge, namespace)
