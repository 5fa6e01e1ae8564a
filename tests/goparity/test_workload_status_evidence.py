"""OME's ``workload/status/evidence_test.go``: the waiting-token and refusal stamps.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/evidence_test.go`` @ 58a57f25, the newer of
two stored versions (4dfb96b1's text plus ``TestCrashLoopNote_RecordedOnceAndCleared``; ``evidence.go``
@ 4dfb96b1 ``RecordCapacityRefusal``/``ClearCapacityRefusal``). Go
stamps one hand-built ``Creating`` row through its row writer; here the same row goes to the functions
the executor and the planner call for it (:func:`omereconcile.planner.quota.record_capacity_refusal`,
the create site's record, and :func:`~omereconcile.planner.quota.quota_hold` with the step's pod
created, Go's clear), on a real context built from a simulated replica.
``TestRecordRefreshedFailure_ReplacesOnlyTheGenericReasonInPlace`` goes through
``steps.refreshed_failure_evidence`` with the fixtures of ``test_workload_escalation_refresh.py``.
``TestSameEvidence_KeysOnTheMoment`` goes through ``holds._same_hold``.
``TestRecordWaiting_IncumbentTokenIsKeptUnlessOutranked`` (injected owner/precedence predicates) is
not mappable and ``TestCrashLoopNote_RecordedOnceAndCleared`` not yet ported
(``docs/goparity.md``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import build_context
from omereconcile.planner.holds import _same_hold
from omereconcile.planner.quota import quota_hold, record_capacity_refusal
from omereconcile.planner.steps import refreshed_failure_evidence
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision, format_time
from tests.goparity.test_workload_escalation_refresh import _ctx, _failed, _on_deadline, _wedged

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


def test_record_refreshed_failure_replaces_only_the_generic_reason_in_place() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/evidence_test.go @ 58a57f25,
    TestRecordRefreshedFailure_ReplacesOnlyTheGenericReasonInPlace, through the planner's
    ``steps.refreshed_failure_evidence`` (escalation/refresh.go with ``RecordRefreshedFailure``): a
    Failed row on the generic ``DeadlineExceeded`` takes the concrete cause at the original time; a
    concrete record is not replaced; a row that left Failed, or has no record, keeps what it has."""
    ctx = _ctx()
    pod = _wedged(ctx)
    generic = _on_deadline(ctx)
    refreshed = refreshed_failure_evidence(ctx, _failed(ctx, generic), [pod])
    assert refreshed.last_failure is not None
    got = refreshed.last_failure
    assert (got["reason"], got["podName"], got["time"]) == ("CrashLoopBackOff", pod.name, generic["time"])
    assert refreshed_failure_evidence(ctx, refreshed, [pod]) == refreshed
    updating = replace(_failed(ctx, generic), phase=R.UPDATING)
    assert refreshed_failure_evidence(ctx, updating, [pod]) == updating
    bare = replace(_failed(ctx, generic), last_failure=None)
    assert refreshed_failure_evidence(ctx, bare, [pod]) == bare


def test_same_evidence_keys_on_the_moment() -> None:
    """Go: … evidence_test.go @ 58a57f25, TestSameEvidence_KeysOnTheMoment, through the planner's
    ``holds._same_hold`` (the unschedulable hold's evidence compare): the same pod held for the same
    reason since the same moment is the same hold whatever its message says; a fresh moment is a fresh
    episode; an unrecorded hold is not the recorded one. (Go's ``sameEvidence(nil, nil)`` has no
    counterpart: the planner always has evidence when it compares.)"""
    at = format_time(T0)
    recorded = {"podName": "engine-0", "reason": "Unschedulable", "message": "3 nodes", "time": at}
    moved = {**recorded, "message": "7 nodes"}
    later = {"podName": "engine-0", "reason": "Unschedulable", "time": format_time(T0 + timedelta(minutes=1))}
    assert _same_hold(recorded, moved)
    assert not _same_hold(recorded, later)
    assert not _same_hold(None, recorded)
