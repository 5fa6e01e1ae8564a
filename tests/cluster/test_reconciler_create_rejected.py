"""A pod create the API server refuses as Invalid fails the Instance on the real control plane.

Go: ome-projects/ome ``workload/ops/create.go`` ``createMissingPods`` (the refused create classified by
``evidence/rejection.go`` ``ClassifyAPIError``) and ``ops/create_rejection.go``
``disposeRejectedAttempt`` @ ae683e3f (ours: the executor records the 422 on the row,
``planner/rejection.py``, and the next pass disposes it). The API server refuses a container image
with surrounding whitespace on a pod create; the CRD accepts it and the render passes it through.
"""

from __future__ import annotations

from helpers import IREP, live_pods, recorded, running_controller

from testbed.testing import Cluster, runners_replica, wait_for

NAME = "llama-pool"


def test_an_invalid_pod_create_fails_the_instance_and_holds_the_revision(
    cluster: Cluster, namespace: str
) -> None:
    with running_controller(cluster, namespace):
        path = f"{IREP.format(ns=namespace)}/{NAME}"
        cluster.raw.post(
            IREP.format(ns=namespace), runners_replica(NAME, namespace, "engine:v1 ", replicas=1)
        )

        def failed() -> dict[str, object] | None:
            rows = cluster.raw.get(path).get("status", {}).get("instanceStatuses") or []
            return rows[0] if rows and rows[0].get("phase") == "Failed" else None

        # Well inside the operation's deadline: the refusal itself ends the attempt.
        row = wait_for("the Instance failed on the refused create", failed, timeout=60)
        status = cluster.raw.get(path)["status"]
        assert "operation" not in row
        failure = row["lastFailure"]
        assert isinstance(failure, dict)
        assert failure["reason"] == "InvalidPodSpec"
        assert "spec.containers[0].image" in str(failure["message"])
        target = status["updateRevision"]
        assert target in [b["targetRevision"] for b in status.get("retryBlocks") or []]
        assert live_pods(cluster, namespace) == []
        warning = next(
            e
            for e in recorded(cluster, namespace, "InstanceRejected", name=NAME)
            if e["reason"] == "InstanceRejected"
        )
        assert warning["type"] == "Warning"
        assert f"revision {target} held for retry" in warning["message"]
