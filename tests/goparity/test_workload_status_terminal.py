"""OME's ``workload/status/terminal_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/terminal_test.go`` @ 8263d0c7 (two stored
versions: dcfb4135, 14,359 characters, without the recycle case; 8263d0c7, 16,819, the same text plus
``TestRecordRecycleAttempt_KeepsTheRecordedFailureAcrossRecyclesOfTheSamePod``; the newest is followed). ``terminal.go`` @ 8263d0c7 ``RecordRecycleAttempt``
/ ``sameDeadPodFailure`` / ``sameFailureIdentity``. The ``FinalizeAndRemove`` and owner-fence tables
drive Go's batched row writer and its adapter seams (preflight, ``FinalizeInstanceResources``,
``RemoveInstance``, owner UID fences, expectations), which the planner does not have: listed as not
mappable in ``docs/goparity.md``.

Go hands ``RecordRecycleAttempt`` a dead pod three times; here a pod is killed in the sim and the
planner's passes recycle it. "The same pod seen again until its delete lands" is a pass whose
``DeletePod`` did not land: its status write is applied, its delete is not.
"""

from __future__ import annotations

from typing import Any

from omereconcile.actions import DeletePod, WriteStatus
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Sim, base_replica

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/terminal_test.go @ 8263d0c7"
POD = "llama-pool-engine-0-default-0"


def _dead(sim: Sim, reason: str) -> None:
    pod = sim.pods[POD]
    pod.obj["status"]["phase"] = "Failed"
    pod.obj["status"]["reason"] = reason
    pod.behaviour = "ended"


def _recycle_without_the_delete(sim: Sim) -> dict[str, Any]:
    """Passes until one recycles the pod (the ``updateRetry`` ladder paces recycles); its status write
    lands and its pod delete does not. The row it wrote."""
    for _ in range(2000):
        p = plan(sim.observe())
        for act in p.actions:
            if isinstance(act, WriteStatus):
                sim.apply(act, sim.replica["metadata"]["resourceVersion"])  # type: ignore[index]
        if any(isinstance(a, DeletePod) and a.name == POD for a in p.actions):
            return sim.rows()[0]
        sim.advance(1)
    raise AssertionError("no pass recycled the dead pod")


def test_record_recycle_attempt_keeps_the_recorded_failure_across_recycles_of_the_same_pod() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/terminal_test.go @ 8263d0c7,
    TestRecordRecycleAttempt_KeepsTheRecordedFailureAcrossRecyclesOfTheSamePod: a second recycle of
    the same dead pod bumps ``retryCount`` and ``lastProgressAt`` and keeps the recorded failure, time
    included; a same-name replacement that fails the same way, and a different failure, replace it."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    for _ in range(2):  # finalizer; then revision, service, status, create
        for act in plan(sim.observe()).actions:
            sim.apply(act, sim.replica["metadata"]["resourceVersion"])  # type: ignore[index]
        sim.advance(0.5)
    _dead(sim, "UnexpectedAdmissionError")

    first = _recycle_without_the_delete(sim)
    assert first["operation"]["retryCount"] == 1
    recorded = first["lastFailure"]
    assert (recorded["podName"], recorded["reason"]) == (POD, "UnexpectedAdmissionError")

    sim.advance(2)
    second = _recycle_without_the_delete(sim)
    assert second["operation"]["retryCount"] == 2
    assert second["operation"]["lastProgressAt"] == _iso(sim)
    assert second["operation"]["lastProgressAt"] != recorded["time"]
    assert second["lastFailure"] == recorded, "the same dead pod keeps the first record, time included"

    # A same-name replacement, created after the record, failing the same way starts afresh.
    sim.advance(1)
    sim.pods[POD].obj["metadata"]["creationTimestamp"] = _iso(sim)
    sim.advance(1)
    third = _recycle_without_the_delete(sim)
    assert third["lastFailure"]["reason"] == "UnexpectedAdmissionError"
    assert third["lastFailure"]["time"] == _iso(sim)

    # A different failure replaces the record.
    sim.pods[POD].obj["status"]["reason"] = "Evicted"
    fourth = _recycle_without_the_delete(sim)
    assert (fourth["lastFailure"]["reason"], fourth["lastFailure"]["time"]) == ("Evicted", _iso(sim))


def _iso(sim: Sim) -> str:
    return sim.now.strftime("%Y-%m-%dT%H:%M:%SZ")
