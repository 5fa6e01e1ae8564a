"""OME's ``workload/holds/pass_test.go``: one hold pass over a row, release before record.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/pass_test.go`` @ 8263d0c7 (the newer of
two stored versions: it holds the other's text plus "a parked attempt in either phase"), over
``holds/pass.go`` @ 58a57f25 (``Run``, ``runRow``, ``Row.skips``). Go's ``Run`` evaluates every
authority over a row, releases, then records; ours is the step's
:func:`omereconcile.planner.steps.check_failure`, which runs the holds in one order (quota, admission,
scheduler, node) on the row and the step's pod and returns the row the pass writes. Which subtests
have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.planner.out import Out
from omereconcile.planner.quota import QUOTA_EXCEEDED
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.steps import check_failure
from omereconcile.simulate.cluster import T0
from omereconcile.world import PodCondition, PodView
from tests.goparity.reconciler_world import creating_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/pass_test.go @ 8263d0c7"
POD = "llama-pool-engine-0-default-0"


def _pass(ctx: Ctx, row: R.Row, pod: PodView | None) -> tuple[R.Row, Out]:
    out = Out(ctx.now)
    held, failed = check_failure(ctx, row, pod, POD, out, RetryBook({}, "llama-demo/llama-pool", "engine"))
    assert failed is None
    return held, out


def test_releases_before_recording() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/pass_test.go @ 8263d0c7,
    TestRun_ReleasesBeforeRecording: a row reporting a quota refusal whose record was retired, while
    its pod has no placement, hands over to the scheduler inside one pass: the row the pass writes
    waits on ``Unschedulable`` and its clock never comes back armed in between (Go: one release and
    one record; ours writes the row once)."""
    cond = PodCondition("PodScheduled", "False", reason=UNSCHEDULABLE, message="0/3 nodes are available")
    pod = PodView(POD, "uid-0", "1", {}, conditions=(cond,), creation_timestamp=T0)
    row, _ = _pass(one_replica_ctx(), creating_row(QUOTA_EXCEEDED), pod)
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    assert row.operation.deadline is None


def test_no_wait_touches_no_row() -> None:
    """Go: same file, TestRun_NoWaitTouchesNoRow: a row nothing waits on is not touched (no status
    write: the row the pass returns is the row it was given), its pod absent or placed."""
    ctx = one_replica_ctx()
    row = creating_row()
    for pod in (None, PodView(POD, "uid-0", "1", {}, conditions=(PodCondition("PodScheduled", "True"),))):
        held, out = _pass(ctx, row, pod)
        assert held == row
        assert out.actions == []
