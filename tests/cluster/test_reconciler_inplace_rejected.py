"""An in-place patch the API server refuses as Invalid ends the attempt on the real control plane.

Go: ome-projects/ome ``workload/ops/update_inplace.go`` ``inPlaceUpdate``'s ``rejected`` and
``ops/create_rejection.go`` ``disposeRejectedAttempt`` @ ae683e3f (ours: the executor records the 422
on the row, ``planner/rejection.py``, and the next pass disposes it). The API server refuses a
container image with surrounding whitespace on any pod write; the replica's render passes it through,
so the roll reaches the in-place patch and the patch is refused.
"""

from __future__ import annotations

from helpers import IREP, live_pods, recorded, running_controller

from testbed.testing import Cluster, replica_settled, runners_replica, wait_for

NAME = "llama-pool"


def test_an_invalid_in_place_patch_fails_the_instance_and_holds_the_revision(
    cluster: Cluster, namespace: str
) -> None:
    with running_controller(cluster, namespace):
        path = f"{IREP.format(ns=namespace)}/{NAME}"
        lifecycle = {"updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxUnavailable": 1}}}
        obj = runners_replica(NAME, namespace, "engine:v1", replicas=1, lifecycle=lifecycle)
        cluster.raw.post(IREP.format(ns=namespace), obj)
        wait_for("the replica settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
        (pod,) = live_pods(cluster, namespace)
        obj = cluster.raw.get(path)
        obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2 "
        cluster.raw.put(path, obj)

        def failed() -> dict[str, object] | None:
            rows = cluster.raw.get(path)["status"].get("instanceStatuses") or []
            return rows[0] if rows and rows[0].get("phase") == "Failed" else None

        row = wait_for("the Instance failed on the refused patch", failed, timeout=60)
        status = cluster.raw.get(path)["status"]
        assert "operation" not in row
        failure = row["lastFailure"]
        assert isinstance(failure, dict)
        assert failure["reason"] == "InvalidPodSpec"
        assert "spec.containers[0].image" in str(failure["message"])
        target = status["updateRevision"]
        assert target in [b["targetRevision"] for b in status.get("retryBlocks") or []]
        (still,) = live_pods(cluster, namespace)
        assert still["metadata"]["uid"] == pod["metadata"]["uid"]
        assert still["spec"]["containers"][0]["image"] == "engine:v1"
        warning = next(
            e
            for e in recorded(cluster, namespace, "InstanceRejected", name=NAME)
            if e["reason"] == "InstanceRejected"
        )
        assert warning["type"] == "Warning"
        assert f"revision {target} held for retry" in warning["message"]
