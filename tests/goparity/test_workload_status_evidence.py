"""OME's ``workload/status/evidence_test.go``: the waiting-token and refusal stamps.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/evidence_test.go`` @ 58a57f25, the newer of
two stored versions (4dfb96b1's text plus ``TestCrashLoopNote_RecordedOnceAndCleared``; ``evidence.go``
@ 4dfb96b1 ``RecordCapacityRefusal``/``ClearCapacityRefusal``). Go
stamps one hand-built ``Creating`` row through its row writer; here the same row goes to the functions
the executor and the planner call for it (:func:`omereconcile.planner.quota.record_capacity_refusal`,
the create site's record, and :func:`~omereconcile.planner.quota.quota_hold` with the step's pod
created, Go's clear), on a real context built from a simulated replica.
``TestRecordWaiting_IncumbentTokenIsKeptUnlessOutranked``, ``TestSameEvidence_KeysOnTheMoment``,
``TestRecordRefreshedFailure_ReplacesOnlyTheGenericReasonInPlace`` and
``TestCrashLoopNote_RecordedOnceAndCleared`` are not yet ported
(``docs/goparity.md``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import build_context
from omereconcile.planner.quota import quota_hold, record_capacity_refusal
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/evidence_test.go @ 58a57f25"


def _status(waiting: str) -> dict[str, Any]:
    op = {
        "id": "op-0",
        "type": "Create",
        "step": "CreatePods",
        "startedAt": format_time(T0),
        "waiting": waiting,
    }
    return {"instanceStatuses": [{"index": 0, "phase": "Creating", "operation": op}]}


def test_record_capacity_refusal_reports_only_the_first_refusal() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/evidence_test.go @ 58a57f25,
    TestRecordCapacityRefusal_ReportsOnlyTheFirstRefusal: the refusal records its moment on the
    operation once (a second refusal is no new edge) and leaves the incumbent ``Unschedulable`` token
    reported (not an edge into ``QuotaExceeded``); completion retires the record, and clearing an absent
    record changes nothing."""
    now = T0 + timedelta(minutes=1)
    recorded, enters = record_capacity_refusal(_status("Unschedulable"), 0, now)
    assert recorded is not None
    op = recorded["instanceStatuses"][0]["operation"]
    assert op["capacityRefusedAt"] == format_time(now)
    assert op["waiting"] == "Unschedulable"
    assert enters is False, "the incumbent wait is what the row reports when the refusal lands"
    again, again_enters = record_capacity_refusal(recorded, 0, now + timedelta(seconds=5))
    assert (again, again_enters) == (None, False)

    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    row = R.load_rows(recorded)[0]
    cleared = quota_hold(ctx, row, created=True)
    assert cleared.operation is not None
    assert cleared.operation.capacity_refused_at is None
    assert quota_hold(ctx, cleared, created=True) == cleared
