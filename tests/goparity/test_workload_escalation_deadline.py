"""OME's ``workload/escalation/deadline_test.go``: the operation deadline backstop and its parking.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/deadline_test.go`` @ 8263d0c7 (the
version carrying ``ParkedAttemptKeepsItsDeadlineParked``), over ``escalation/escalation.go`` ``Run`` (the
BROAD path) and ``escalation/deadline.go`` ``ReconcileGatedDeadlines``. Go runs the escalation pass (or
the parking step) on rows built by ``expireFixture``; ours is :func:`omereconcile.planner.steps.check_failure`
on the step's row (the outside waits park the clock first, then the deadline), the gang's
:func:`~omereconcile.planner.gang.bring_up_gang` for a gang, and :func:`~omereconcile.planner.instances.step_row`
for a row whose operation another step owns. The cases with no counterpart are listed, with why, in
``docs/goparity.md``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import bring_up_gang
from omereconcile.planner.instances import step_row
from omereconcile.planner.out import Out
from omereconcile.planner.quota import QUOTA_EXCEEDED
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.steps import check_failure
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, NodeView, PodView, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/deadline_test.go @ 8263d0c7"
TIMEOUT = timedelta(minutes=30)
NAME = "llama-pool-engine-0-default-0"


def _ctx(workers: int = 0) -> Ctx:
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=TIMEOUT), workers=workers)
    sim.apply_replica(base_replica(replicas=1))
    # The pods below sit on sim-node, a Node the watch sees Ready (else the NodeUnknown hold parks them).
    world = replace(sim.observe(), nodes={"sim-node": NodeView("sim-node", ready="True")})
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _op(ctx: Ctx, op_type: str, step: str, deadline: timedelta | None, **kw: Any) -> R.Operation:
    return R.Operation(
        f"{op_type.lower()}-0",
        op_type,
        step,
        ctx.spec_revision,
        ctx.now - timedelta(hours=2),
        deadline=None if deadline is None else ctx.now + deadline,
        **kw,
    )


def _book() -> RetryBook:
    return RetryBook({}, "llama-demo/llama-pool", "engine")


def _warnings(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "InstanceFailed"]


def _member(ctx: Ctx, runner: str, k: int, reason: str) -> PodView:
    """A gang member at the target revision whose container waits in ``reason`` (Go's ``waiting``)."""
    obj = dict(ctx.world.pod_factory(ctx.spec_revision, 0, 1, runner, k))
    meta = dict(obj["metadata"])
    meta.update(
        {"uid": f"uid-{meta['name']}", "creationTimestamp": format_time(ctx.now - timedelta(hours=1))}
    )
    obj["metadata"] = meta
    obj["spec"] = {**obj["spec"], "nodeName": "sim-node"}
    obj["status"] = {"containerStatuses": [{"name": "main", "state": {"waiting": {"reason": reason}}}]}
    return PodView.from_dict(obj)


@pytest.mark.parametrize(
    ("name", "worker_reason", "want_reason", "want_pod"),
    [
        (
            "workload-caused surge pod outranks the timeout",
            "ImagePullBackOff",
            "ImagePullBackOff",
            "llama-pool-engine-0-worker-0",
        ),
        (
            "pods without a workload-caused reason keep DeadlineExceeded",
            "CrashLoopBackOff",
            "DeadlineExceeded",
            None,
        ),
    ],
)
def test_expire_operations_deadline_keeps_workload_caused_pod_evidence(
    name: str, worker_reason: str, want_reason: str, want_pod: str | None
) -> None:
    """Go: same file, TestExpireOperations_DeadlineKeepsWorkloadCausedPodEvidence, entry ``name``: a gang
    surge's replacement past its deadline (leader ``ContainerCreating``, worker ``worker_reason``, no
    stuck-pod grace) fails with one Warning, and ``lastFailure`` records the workload-caused pod when
    there is one (the gang abandon charges the ladder on it), else the bare ``DeadlineExceeded``. Ours
    judges a gang surge on its replacement row (``GangSurgeTarget``), the row Go buckets the pods under.
    The first entry failed before (ours recorded only the limbo readers), and the second too (ours read
    the crash loop, which Go's plain stamp does not): fixed by Go's BROAD path
    (``planner/steps.py`` ``workload_caused_record``)."""
    ctx = _ctx(workers=1)
    row = R.Row(
        index=0,
        phase=R.CREATING,
        operation=_op(ctx, R.OP_UPDATE, R.STEP_GANG_SURGE_TARGET, -timedelta(minutes=1)),
    )
    members = [_member(ctx, "leader", 0, "ContainerCreating"), _member(ctx, "worker", 0, worker_reason)]
    out = Out(ctx.now)
    failed, _ = bring_up_gang(ctx, row, members, out, _book())
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == want_reason
    assert failed.last_failure.get("podName") == want_pod
    assert len(_warnings(out)) == 1


def test_expire_operations_not_yet_expired_untouched() -> None:
    """Go: same file, TestExpireOperations_NotYetExpiredUntouched: a deadline 30 minutes ahead leaves
    the row as it is, with no Warning."""
    ctx = _ctx()
    row = R.Row(index=0, phase=R.UPDATING, operation=_op(ctx, R.OP_UPDATE, R.STEP_SURGE, TIMEOUT))
    out = Out(ctx.now)
    kept, failed = check_failure(ctx, row, None, NAME, out, _book())
    assert (kept, failed) == (row, None)
    assert _warnings(out) == []


def test_expire_operations_zero_deadline_never_expires() -> None:
    """Go: same file, TestExpireOperations_ZeroDeadlineNeverExpires: an operation with no deadline never
    expires."""
    ctx = _ctx()
    row = R.Row(index=0, phase=R.CREATING, operation=_op(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, None))
    out = Out(ctx.now)
    kept, failed = check_failure(ctx, row, None, NAME, out, _book())
    assert (kept, failed) == (row, None)
    assert _warnings(out) == []


def _draining_pod(ctx: Ctx) -> PodView:
    return PodView.from_dict(
        {
            "metadata": {
                "name": NAME,
                "uid": "uid-0",
                "creationTimestamp": format_time(ctx.now - timedelta(hours=3)),
            },
            "spec": {"nodeName": "sim-node"},
            "status": {"phase": "Running", "containerStatuses": [{"name": "main", "state": {"running": {}}}]},
        }
    )


@pytest.mark.parametrize("phase", [R.READY, R.DELETING, R.RESTARTING])
def test_expire_operations_delete_operation_skipped(phase: str) -> None:
    """Go: same file, TestExpireOperations_TerminalPhaseUntouched (``Ready``, ``Deleting``) and
    TestExpireOperations_DeleteOperationSkipped (a stale ``Restarting`` phase): a Delete operation past
    its deadline is DeleteBatch's — the row keeps its phase and operation and no ``InstanceFailed``
    Warning is said. Ours: ``step_row`` hands a Delete row to its drain step (which says
    ``DrainOverdue`` of its own past the deadline, Go's ``announceOverdueDrains``)."""
    ctx = _ctx()
    row = R.Row(
        index=0,
        phase=phase,
        operation=_op(ctx, R.OP_DELETE, R.STEP_DRAIN, -timedelta(minutes=1)),
        pod_count=1,
    )
    out = Out(ctx.now)
    kept = step_row(ctx, row, [_draining_pod(ctx)], out, _book(), ctx.spec_revision)
    assert kept is not None
    assert kept.phase == phase
    assert kept.operation is not None
    assert kept.operation.type == R.OP_DELETE
    assert _warnings(out) == []


def test_expire_operations_no_operation_untouched() -> None:
    """Go: same file, TestExpireOperations_NoOperationUntouched: a row with no operation has nothing to
    time out (``step_row``'s idle step; no pod here, so nothing else moves)."""
    ctx = _ctx()
    row = R.Row(index=0, phase=R.UPDATING)
    out = Out(ctx.now)
    kept = step_row(ctx, row, [], out, _book(), ctx.spec_revision)
    assert kept == row
    assert _warnings(out) == []


def test_reconcile_gated_deadlines_ungated_normal_untouched() -> None:
    """Go: same file, TestReconcileGatedDeadlines_UngatedNormalUntouched: a row held by nothing keeps the
    deadline its writer stamped."""
    ctx = _ctx()
    row = R.Row(
        index=0, phase=R.CREATING, operation=_op(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, timedelta(minutes=20))
    )
    kept, _ = check_failure(ctx, row, None, NAME, Out(ctx.now), _book())
    assert kept.operation is not None
    assert kept.operation.deadline == ctx.now + timedelta(minutes=20)


def _quota_row(ctx: Ctx, deadline: timedelta | None, refused: bool = True) -> R.Row:
    op = _op(
        ctx,
        R.OP_CREATE,
        R.STEP_CREATE_PODS,
        deadline,
        waiting=QUOTA_EXCEEDED,
        capacity_refused_at=ctx.now if refused else None,
    )
    return R.Row(index=0, phase=R.CREATING, operation=op)


def test_reconcile_gated_deadlines_parks_quota_blocked_instance() -> None:
    """Go: same file, TestReconcileGatedDeadlines_ParksQuotaBlockedInstance: a create refused for lack of
    quota parks its deadline while the refusal stands (the row stays Creating) and, once a create
    lands, re-arms a full window from that moment."""
    ctx = _ctx()
    parked, failed = check_failure(
        ctx, _quota_row(ctx, timedelta(minutes=10)), None, NAME, Out(ctx.now), _book()
    )
    assert failed is None
    assert parked.phase == R.CREATING
    assert parked.operation is not None
    assert parked.operation.deadline is None
    landed = _draining_pod(ctx)
    rearmed, _ = check_failure(ctx, parked, landed, NAME, Out(ctx.now), _book())
    assert rearmed.operation is not None
    assert rearmed.operation.deadline == ctx.now + TIMEOUT


def test_reconcile_gated_deadlines_quota_blocked_stays_parked_while_blocked() -> None:
    """Go: same file, TestReconcileGatedDeadlines_QuotaBlockedStaysParkedWhileBlocked: a row already
    parked behind a standing refusal is not rewritten (edge-triggered)."""
    ctx = _ctx()
    row = _quota_row(ctx, None)
    kept, failed = check_failure(ctx, row, None, NAME, Out(ctx.now), _book())
    assert (kept, failed) == (row, None)


def test_quota_blocked_instance_not_failed_by_deadline_backstop() -> None:
    """Go: same file, TestQuotaBlockedInstance_NotFailedByDeadlineBackstop: a deadline stamped an hour
    before the refusal does not fail a row queued behind quota; no Warning."""
    ctx = _ctx()
    out = Out(ctx.now)
    kept, failed = check_failure(ctx, _quota_row(ctx, -timedelta(hours=1)), None, NAME, out, _book())
    assert failed is None
    assert kept.phase == R.CREATING
    assert _warnings(out) == []


def test_reconcile_gated_deadlines_paused_hold_parks_and_rearms() -> None:
    """Go: same file, TestReconcileGatedDeadlines_PausedHoldParksAndRearms: a surge held by the pause with
    a deadline three minutes ahead has its clock parked; once the pause is lifted the deadline is a full
    window from that moment. Ours: ``instances.step_row`` under ``paused``, then without it (the token
    released on the unpause re-arms the window). The parked half failed before (ours kept a deadline
    written beside the ``Paused`` token); fixed in ``instances.park``."""
    ctx = _ctx()
    op = _op(ctx, R.OP_UPDATE, R.STEP_SURGE, timedelta(minutes=3), waiting="Paused")
    row = R.Row(index=0, phase=R.UPDATING, operation=op, running_revision=ctx.spec_revision)
    held = step_row(replace(ctx, paused=True), row, [], Out(ctx.now), _book(), ctx.spec_revision)
    assert held is not None
    assert held.operation is not None
    assert (held.operation.waiting, held.operation.deadline) == ("Paused", None)
    released = step_row(ctx, held, [], Out(ctx.now), _book(), ctx.spec_revision)
    assert released is not None
    assert released.operation is not None
    assert released.operation.deadline == ctx.now + TIMEOUT


def _gated_pod(ctx: Ctx) -> PodView:
    """A pod of the step still carrying an admission scheduling gate (Kueue): created, not scheduled."""
    return PodView.from_dict(
        {
            "metadata": {
                "name": NAME,
                "uid": "uid-0",
                "creationTimestamp": format_time(ctx.now - timedelta(hours=2)),
            },
            "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
            "status": {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
            },
        }
    )


@pytest.mark.parametrize(
    ("past", "case"),
    [
        (timedelta(minutes=1), "TestReconcileGatedDeadlines_ParksGatedInstance"),
        (timedelta(hours=1), "TestGatedInstance_NotFailedByDeadlineBackstop"),
    ],
    ids=["ParksGatedInstance", "GatedInstance_NotFailedByDeadlineBackstop"],
)
def test_a_gated_instance_parks_its_deadline_and_is_not_failed(past: timedelta, case: str) -> None:
    """Go: same file, ``case`` (the pytest id): a Creating Instance whose pod is admission-gated has its
    deadline, already ``past`` ago, parked (zeroed: "never expires") and is not failed, with no
    ``InstanceFailed`` Warning — it is queued, not stuck (``ReconcileGatedDeadlines`` then the
    escalation pass, which skips a gated Instance). Ours: ``check_failure`` parks and reads no
    evidence. Failed before (ours had no such wait: the deadline failed it)."""
    ctx = _ctx()
    row = R.Row(index=0, phase=R.CREATING, operation=_op(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, -past))
    out = Out(ctx.now)
    kept, failed = check_failure(ctx, row, _gated_pod(ctx), NAME, out, _book())
    assert failed is None
    assert kept.phase == R.CREATING
    assert kept.operation is not None
    assert kept.operation.deadline is None
    assert _warnings(out) == []


def test_reconcile_gated_deadlines_restarts_on_ungate() -> None:
    """Go: same file, TestReconcileGatedDeadlines_RestartsOnUngate: once the pods clear the gate, a parked
    (zero) deadline restarts as now + the readiness timeout — measured from admission, not from the
    operation's start. Ours: ``instances.step_row`` re-arms a transient row with no deadline that nothing
    holds any more (no gated pod, no waiting token, no pause); while a pod is still gated it stays
    parked. Passing as found for this committed Create (the unpause re-arm covered it)."""
    ctx = _ctx()
    row = R.Row(index=0, phase=R.CREATING, operation=_op(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, None))
    gated = step_row(ctx, row, [_gated_pod(ctx)], Out(ctx.now), _book(), ctx.spec_revision)
    assert gated is not None
    assert gated.operation is not None
    assert gated.operation.deadline is None
    released = step_row(ctx, row, [], Out(ctx.now), _book(), ctx.spec_revision)
    assert released is not None
    assert released.operation is not None
    assert released.operation.deadline == ctx.now + TIMEOUT
