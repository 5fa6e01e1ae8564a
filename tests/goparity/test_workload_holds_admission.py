"""OME's ``workload/holds/admission_test.go``: the ``AdmissionUnavailable`` wait a webhook outage becomes.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/admission_test.go`` @ 58a57f25 (the one
stored version), over ``holds/admission.go`` @ 58a57f25 (``admissionHold``, ``reportAdmission``,
``RecordAdmissionRefusal``, ``ReleaseAdmissionRefusal``). Go records the wait from the write site on a
status store of one ``Creating`` row and runs the hold pass over it; ours is the executor's
:func:`omereconcile.planner.admission_hold.record_admission_wait` on the status (its second answer is
Go's ``entered``) and the pass's :func:`~omereconcile.planner.admission_hold.admission_hold` on the row,
whose ``through`` is Go's write-site release (the step's write went through admission: its pod exists,
or the in-place patch landed). The context is a real one, built from a simulated replica.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.admission_hold import ADMISSION_UNAVAILABLE, admission_hold, record_admission_wait
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.simulate.cluster import T0
from omereconcile.world import format_time
from tests.goparity.reconciler_world import creating_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/admission_test.go @ 58a57f25"
POD = "svc-a-engine-0-default-0"
# Go's admissionMessage: the apiserver failing closed on a webhook it could not call.
MESSAGE = (
    'Internal error occurred: failed calling webhook "pod-mutator.example.com": failed to call webhook: '
    'Post "https://ome-webhook.example.svc:443/mutate-pods?timeout=10s": connection refused'
)


def _status(row: R.Row) -> dict[str, Any]:
    return {"instanceStatuses": [row.to_dict()]}


def _row(status: dict[str, Any]) -> R.Row:
    return R.Row.from_dict(status["instanceStatuses"][0])


def test_records_the_token_with_the_apiservers_words() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/admission_test.go @ 58a57f25,
    TestAdmission_RecordsTheRefusalFromTheWriteSite, "records the token with the apiserver's words":
    the row waits on ``AdmissionUnavailable``, ``lastFailure`` names the refused pod with the
    apiserver's message and the moment the wait began, and the refusal is an entry (announced)."""
    recorded, entered = record_admission_wait(_status(creating_row()), 0, POD, MESSAGE, T0)
    assert recorded is not None
    assert entered
    row = _row(recorded)
    assert row.operation is not None
    assert row.operation.waiting == ADMISSION_UNAVAILABLE
    assert row.last_failure == {
        "podName": POD,
        "reason": ADMISSION_UNAVAILABLE,
        "message": MESSAGE,
        "time": format_time(T0),
    }


def test_a_repeat_refusal_is_write_free_and_not_an_entry() -> None:
    """Go: same file and test, "a repeat refusal is write-free and not an entry": a second refusal
    with other words writes nothing and is not announced again."""
    recorded, _ = record_admission_wait(_status(creating_row()), 0, POD, MESSAGE, T0)
    assert recorded is not None
    later = (
        'Internal error occurred: failed calling webhook "pod-mutator.example.com": context deadline exceeded'
    )
    again, entered = record_admission_wait(recorded, 0, POD, later, T0 + timedelta(seconds=30))
    assert again is None
    assert not entered


def test_released_by_the_site_once_a_write_goes_through() -> None:
    """Go: same file and test, "released by the site once a write goes through" (Go's
    ``ReleaseAdmissionRefusal``; ours: the pass once the step's write went through)."""
    row = admission_hold(one_replica_ctx(), creating_row(ADMISSION_UNAVAILABLE), through=True)
    assert row.operation is not None
    assert row.operation.waiting is None


def test_the_release_leaves_another_authoritys_token_alone() -> None:
    """Go: same file and test, "the release leaves another authority's token alone": the scheduler's
    token stays when a write goes through."""
    row = admission_hold(one_replica_ctx(), creating_row(UNSCHEDULABLE), through=True)
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE


def test_another_authority_keeps_the_row_and_nothing_is_announced() -> None:
    """Go: same file and test, "another authority keeps the row and nothing is announced": behind the
    scheduler's token the refusal writes nothing (no token, no ``lastFailure``) and is not an entry."""
    recorded, entered = record_admission_wait(_status(creating_row(UNSCHEDULABLE)), 0, POD, MESSAGE, T0)
    assert recorded is None
    assert not entered


def test_the_pass_keeps_the_recorded_report_and_the_park_reads_it() -> None:
    """Go: same file and test, "the pass keeps the recorded report and the park reads it": two hold
    passes over the recorded wait keep the token, write nothing, and the attempt's clock stays parked
    (ours: no deadline; Go's ``OperationExternallyHeld``)."""
    recorded, _ = record_admission_wait(_status(creating_row()), 0, POD, MESSAGE, T0)
    assert recorded is not None
    row = _row(recorded)
    ctx = one_replica_ctx()
    once = admission_hold(ctx, row, through=False)
    twice = admission_hold(ctx, once, through=False)
    assert once == row
    assert twice == row
    assert twice.operation is not None
    assert twice.operation.waiting == ADMISSION_UNAVAILABLE
    assert twice.operation.deadline is None


def test_a_row_in_rotation_keeps_the_wait() -> None:
    """Go: same file and test, "a row in rotation keeps the wait": the hold pass reads no rotation, so
    a row whose Instance serves (a surge or in-place roll writes beside serving pods) keeps the wait
    until the step's own write goes through. Ours takes no rotation input at all (only ``through``),
    so a pass whose step's write has not gone through keeps the row as it is, clock parked."""
    recorded, _ = record_admission_wait(_status(creating_row()), 0, POD, MESSAGE, T0)
    assert recorded is not None
    row = _row(recorded)
    kept = admission_hold(one_replica_ctx(), row, through=False)
    assert kept == row
