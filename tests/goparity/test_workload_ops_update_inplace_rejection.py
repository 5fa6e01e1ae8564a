"""OME's ``workload/ops/update_inplace_rejection_test.go``: an in-place patch the API server refuses as
Invalid.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_inplace_rejection_test.go`` @ ae683e3f
(4,061 characters, the one stored version, read whole), over ``ops/update_inplace.go`` (the patch's
error classified as a permanent, workload-caused rejection, as a refused create is). Go's fake client
answers every pod patch with 422 Invalid (``spec.containers[0].image``); ours is the simulated world's
``refuse_in_place`` (the v2 image refused in an in-place patch, recorded on the row as the executor
records it: ``planner/rejection.py`` ``record_rejection``), the roll run under ``InPlaceIfPossible``
pass by pass; the next pass disposes the attempt (``dispose_rejection``).
"""

from __future__ import annotations

from typing import Any

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_rejection_test.go @ ae683e3f"


def test_invalid_patch_disposes_and_holds_revision() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_rejection_test.go @ ae683e3f,
    TestUpdateInPlace_InvalidPatch_DisposesAndHoldsRevision: the refused patch disposes the attempt:
    Instance 0 ``Failed`` with its operation cleared, ``lastFailure.reason`` ``InvalidPodSpec``, and one
    RetryBlock written for the target revision (not a blind retry of the patch until the deadline)."""
    sim = Sim(refuse_in_place={"vllm:v2"})
    lifecycle = {"updateStrategy": {"type": "InPlaceIfPossible"}, "instanceReadyTimeout": "10m"}
    sim.apply_replica(base_replica(replicas=1, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    for _ in range(20):
        driver.one_pass()
        sim.advance(1)
    row: dict[str, Any] = sim.rows()[0]
    target = sim.status["updateRevision"]
    assert (row["phase"], row.get("operation")) == ("Failed", None), GO
    assert (row.get("lastFailure") or {}).get("reason") == "InvalidPodSpec", GO
    assert [b["targetRevision"] for b in sim.status.get("retryBlocks") or []] == [target], GO
    # Ours (Go disposeRejectedAttempt): the API server's words on lastFailure, no pod named, and one
    # InstanceRejected Warning naming the pod and the held revision.
    assert "podName" not in row["lastFailure"]
    assert "spec.containers[0].image" in row["lastFailure"]["message"]
    (warning,) = [e for e in sim.events if e.event_reason == "InstanceRejected"]
    assert warning.type == "Warning"
    assert f"revision {target} held for retry" in warning.message
