"""OME's ``workload/holds/table_test.go``: which hold token may take a row another reports.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/table_test.go`` @ 58a57f25 (the newest of
three stored versions), over ``holds/table.go`` ``takesRowFrom``, ``mark`` and ``release``. Ours is
:func:`omereconcile.planner.quota.takes_row`, the rule every ``operation.waiting`` writer of the
planner consults, and the holds that consult it (``planner/holds.py`` ``scheduler_hold``,
``planner/quota.py``, ``planner/admission_hold.py``) on rows built by hand. Which tests of the file have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.admission_hold import ADMISSION_UNAVAILABLE, record_admission_wait
from omereconcile.planner.holds import UNSCHEDULABLE, scheduler_hold
from omereconcile.planner.out import Out
from omereconcile.planner.quota import PAUSED, quota_hold, record_capacity_refusal, takes_row
from omereconcile.simulate.cluster import T0
from omereconcile.world import PodCondition, PodView, format_time
from tests.goparity.reconciler_world import attempt_row, creating_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/table_test.go @ 58a57f25"
FACTS = [
    "QuotaExceeded",
    "AdmissionUnavailable",
    "Unschedulable",
    "PodGroupTerminating",
    "NodeUnknown",
    "SourceUnrouted",
    "CapacityProvisioning",
]


def test_table_one_ordered_pair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/table_test.go @ 58a57f25,
    TestTable_OneOrderedPair: first writer wins, with one exception: a token reporting a fact about
    the Instance takes a row reporting the pause. A fact takes an unheld row and keeps its own; the
    pause never takes a fact's row; no fact takes another's."""
    for token in FACTS:
        assert takes_row(token, PAUSED), token
        assert takes_row(token, ""), token
        assert takes_row(token, token), token
        assert not takes_row(PAUSED, token), token
        for other in FACTS:
            if other != token:
                assert not takes_row(token, other), (token, other)


# -- the newest stored version (58a57f25): the writability column and the shared precedence -------------
NEWEST = "ome-projects/ome pkg/controller/v1beta1/workload/holds/table_test.go @ 58a57f25"
POD = "llama-pool-engine-0-default-0"


def _unplaced(message: str, since: datetime) -> PodView:
    cond = PodCondition(
        "PodScheduled", "False", reason=UNSCHEDULABLE, message=message, last_transition_time=since
    )
    return PodView(POD, "uid-0", "1", {}, conditions=(cond,), creation_timestamp=since)


def test_table_fact_holds_refuse_a_teardown() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/table_test.go @ 58a57f25,
    TestTable_FactHoldsRefuseATeardown, its teardown column: the two apiserver answers (quota,
    admission) are recorded wherever the write site left them, a teardown (Delete) row included; every
    other token refuses a teardown. Ours: the executor's records take a Delete row, and no hold runs
    on one (the planner's Delete step writes no token: the teardown subtests of nodeunknown_test.go,
    scheduler_test.go and pause_test.go, ported beside this file, run that through the sim). Go's
    Migrate column has no counterpart (no Migrate operation), nor its no-owner column (ours creates no
    pod for a row without an operation, so no refusal can be recorded on one)."""
    status = {"instanceStatuses": [attempt_row(R.OP_DELETE, R.STEP_DRAIN, R.DELETING).to_dict()]}
    quota, _ = record_capacity_refusal(status, 0, T0)
    assert quota is not None
    assert quota["instanceStatuses"][0]["operation"]["capacityRefusedAt"] == format_time(T0)
    admission, entered = record_admission_wait(status, 0, POD, "failed calling webhook", T0)
    assert admission is not None
    assert entered
    assert admission["instanceStatuses"][0]["operation"]["waiting"] == ADMISSION_UNAVAILABLE


def test_external_hold_one_owner_per_token() -> None:
    """Go: same file, TestExternalHold_OneOwnerPerToken: the scheduler's token is taken by no quota
    refusal arriving after it, not released when the quota path completes, and released by its own
    authority (the pod placed)."""
    ctx = one_replica_ctx()
    out = Out(ctx.now)
    row, _ = scheduler_hold(ctx, creating_row(), _unplaced("0/3 nodes", T0), out)
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    # A quota refusal arrives while the scheduler hold stands: recorded, not announced, not the token.
    refused, announce = record_capacity_refusal({"instanceStatuses": [row.to_dict()]}, 0, T0)
    assert refused is not None
    assert not announce
    row = R.Row.from_dict(refused["instanceStatuses"][0])
    row = quota_hold(ctx, row, created=False)
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    # The quota path completing (the create went through) does not release the scheduler's token.
    row = quota_hold(ctx, row, created=True)
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    # Its own owner releases it.
    placed = PodView(POD, "uid-0", "1", {}, conditions=(PodCondition("PodScheduled", "True"),))
    row, _ = scheduler_hold(ctx, row, placed, out)
    assert row.operation is not None
    assert row.operation.waiting is None


def test_external_hold_edge_triggered() -> None:
    """Go: same file, TestExternalHold_EdgeTriggered: re-marking the hold with a churned message
    rewrites nothing (the message from the hold's start stays); a same-name pod whose condition moved
    later starts a fresh hold (the new start on ``lastFailure``)."""
    ctx = one_replica_ctx()
    out = Out(ctx.now)
    first, _ = scheduler_hold(ctx, creating_row(), _unplaced("0/3 nodes", T0), out)
    again, _ = scheduler_hold(ctx, first, _unplaced("0/9 nodes", T0), out)
    assert again == first
    assert again.last_failure is not None
    assert again.last_failure["message"] == "0/3 nodes"
    later = T0 + timedelta(seconds=1)
    fresh, _ = scheduler_hold(ctx, again, _unplaced("0/3 nodes", later), out)
    assert fresh.operation is not None
    assert fresh.operation.waiting == UNSCHEDULABLE
    assert fresh.last_failure is not None
    assert fresh.last_failure["time"] == format_time(later)
