"""OME's ``workload/ops/update_inplace_rejection_test.go``: an in-place patch refused as Invalid ends the attempt.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_inplace_rejection_test.go`` @ ae683e3f
(4,061 characters, the one stored version, read whole), over ``ops/update_inplace.go``
``inPlaceUpdate`` (its ``rejected`` closure), ``ops/create_rejection.go`` ``disposeRejectedAttempt`` and
``types/apirejection_dispose.go`` ``DisposeAPIRejection``. Go answers every Pod patch with a 422
Invalid through a client interceptor; ours refuses ``PatchPodInPlace`` in the simulated world and
records the refusal with the executor's own function (``planner/rejection.py`` ``record_rejection``),
as ``test_workload_ops_create_rejection_sites.py`` does for quota. The next pass disposes the attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omereconcile import actions as A
from omereconcile.planner.rejection import record_rejection
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_rejection_test.go @ ae683e3f"
POD0 = "llama-pool-engine-0-default-0"
INVALID = 'Pod "llama-pool-engine-0-default-0" is invalid: spec.containers[0].image: Invalid value: "vllm:v2": must be a valid image reference'


@dataclass
class RefusingSim(Sim):
    """Go's interceptor: while ``refuse``, every pod patch is refused as Invalid, and the refusal is
    recorded on its row the way the executor records it."""

    refuse: bool = False

    def apply(self, act: A.Action, replica_rv: str) -> None:
        if isinstance(act, A.PatchPodInPlace) and self.refuse and act.index is not None:
            self.record_refusal(
                record_rejection(self.status, act.index, INVALID, self.now), False, "", "", INVALID
            )
        super().apply(act, replica_rv)


def _row(sim: Sim) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == 0)


def test_update_in_place_invalid_patch_disposes_and_holds_revision() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_rejection_test.go @
    ae683e3f, TestUpdateInPlace_InvalidPatch_DisposesAndHoldsRevision: the API server refusing the
    in-place patch as Invalid disposes the attempt at once (``Failed``, operation cleared,
    ``lastFailure.reason`` ``InvalidPodSpec``) and records the target revision's retry block, instead
    of retrying the patch until the operation's deadline reports a timeout."""
    sim = RefusingSim()
    strategy = {
        "type": "InPlaceIfPossible",
        "rollingUpdate": {"maxUnavailable": 1},
        "inPlaceUpdateStrategy": {"markNotReadyDuringLifecycle": False},
    }
    sim.apply_replica(base_replica(replicas=1, lifecycle={"updateStrategy": strategy}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    v1 = sim.status["currentRevision"]
    sim.refuse = True
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    started = sim.now
    for _ in range(20):
        if _row(sim).get("phase") == "Failed":
            break
        driver.one_pass()
        sim.advance(0.5)
    row = _row(sim)
    assert (row.get("phase"), row.get("operation")) == ("Failed", None), (GO, row)
    assert row["lastFailure"]["reason"] == "InvalidPodSpec", GO
    assert row["lastFailure"]["message"] == INVALID
    assert "podName" not in row["lastFailure"]  # Go: the rejection is the evidence, no pod
    assert (sim.now - started).total_seconds() < 30  # at once, not at the deadline
    blocks = sim.status.get("retryBlocks") or []
    assert [(b["targetRevision"], b["attemptsStarted"]) for b in blocks] == [(v2, 1)], GO
    warnings = [e for e in sim.events if e.event_reason == "InstanceRejected"]
    assert len(warnings) == 1
    assert warnings[0].type == "Warning"
    assert f"apiserver rejected pod {POD0} (InvalidPodSpec: {INVALID}); revision {v2} held for retry" in (
        warnings[0].message
    )
    # The pod was never patched: it still runs the old revision's image.
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "vllm:v1"
    assert row.get("runningRevision", v1) == v1
