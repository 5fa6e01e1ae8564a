"""OME's ``workload/holds/quota_test.go``: the ``QuotaExceeded`` wait a ResourceQuota refusal becomes.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/quota_test.go`` @ 4dfb96b1 (the listed
version of two stored), over ``holds/quota.go`` @ 4dfb96b1. Go runs the quota authority on a status
store of one ``Creating`` row; ours is :func:`omereconcile.planner.quota.quota_hold` on that row (a
:class:`Row` whose operation carries ``capacityRefusedAt``, the create site's record) and
:func:`~omereconcile.planner.quota.record_capacity_refusal`, whose second answer is Go's
``holds.Enters``. The context is a real one, built from a simulated replica.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from omereconcile.planner.quota import PAUSED, QUOTA_EXCEEDED, quota_hold, record_capacity_refusal
from omereconcile.simulate.cluster import T0
from omereconcile.world import format_time
from tests.goparity.reconciler_world import creating_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/quota_test.go @ 4dfb96b1"


def test_records_the_token_from_the_refusal() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/quota_test.go @ 4dfb96b1,
    TestQuota_ReportsTheRecordedRefusal, "records the token from the refusal": the row reports
    ``waiting: QuotaExceeded``, and no ``lastFailure`` (the quota message names current usage)."""
    row = quota_hold(one_replica_ctx(), creating_row(None, refused=True), created=False)
    assert row.operation is not None
    assert row.operation.waiting == QUOTA_EXCEEDED
    assert row.last_failure is None


def test_released_once_the_record_is_retired() -> None:
    """Go: same file and test, "released once the record is retired": a row reporting the wait whose
    record is gone is released."""
    row = quota_hold(one_replica_ctx(), creating_row(QUOTA_EXCEEDED), created=False)
    assert row.operation is not None
    assert row.operation.waiting is None


def test_edge_triggered_while_the_refusal_stands() -> None:
    """Go: same file and test, "edge-triggered while the refusal stands": a second pass over an
    unchanged refusal writes nothing (ours: the row is unchanged, so the status write is too)."""
    ctx = one_replica_ctx()
    once = quota_hold(ctx, creating_row(None, refused=True), created=False)
    assert quota_hold(ctx, once, created=False) == once


def test_the_deadline_park_reads_the_record() -> None:
    """Go: same file and test, "the deadline park reads the record and the token": on the pass the
    refusal is recorded the attempt's clock is parked already (ours: no deadline). Go's second
    assertion, that ``OperationExternallyHeld`` sees the token on the pass it outlives the record,
    is a predicate ours does not have: the release re-arms a full window from that pass instead
    (``ClearCapacityRefusal``), which the sim tier pins (``tests/sim/test_holds_quota.py``)."""
    ctx = one_replica_ctx()
    recorded = quota_hold(ctx, creating_row(None, refused=True), created=False)
    assert recorded.operation is not None
    assert recorded.operation.deadline is None
    released = quota_hold(ctx, creating_row(QUOTA_EXCEEDED), created=False)
    assert released.operation is not None
    assert released.operation.deadline == ctx.now + timedelta(minutes=5)


ENTERS = [
    ("an unheld row enters the quota wait", "", True),
    ("a paused row enters the quota wait", PAUSED, True),
    ("a row already reporting the wait does not enter it again", QUOTA_EXCEEDED, False),
    ("Unschedulable keeps its report", "Unschedulable", False),
    ("NodeUnknown keeps its report", "NodeUnknown", False),
    ("PodGroupTerminating keeps its report", "PodGroupTerminating", False),
    ("SourceUnrouted keeps its report", "SourceUnrouted", False),
]


@pytest.mark.parametrize(("name", "current", "enters"), ENTERS, ids=[e[0] for e in ENTERS])
def test_announced_only_when_the_refusal_becomes_the_report(name: str, current: str, enters: bool) -> None:
    """Go: same file and test, "announced only when the refusal becomes the report" (``Enters``),
    entry ``name``: the refusal is announced only when it becomes the row's reported wait."""
    status = {"instanceStatuses": [creating_row(current or None).to_dict()]}
    recorded, announce = record_capacity_refusal(status, 0, T0)
    assert recorded is not None
    assert recorded["instanceStatuses"][0]["operation"]["capacityRefusedAt"] == format_time(T0)
    assert announce is enters
