"""OME's ``workload/escalation/scheduler_test.go``: a pod the scheduler cannot place is a hold.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/scheduler_test.go`` @ 4dfb96b1 (the
listed version of two stored), over ``escalation/scheduler.go`` and ``holds/scheduler.go``. Go runs the
escalation pass on one ``Creating`` row and its unschedulable pod; ours is
:func:`omereconcile.planner.steps.check_failure` on that row and pod (the scheduler hold of
``planner/holds.py``, then the grace), returning the row as the pass would write it and the failed
row, if any; the Warning is read off the pass's :class:`Out`. The context is a real one, built from a
simulated replica with the operator's ``unschedulableGracePeriod``. Which tests of the file have no
counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import bring_up_gang
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.planner.instances import step_row
from omereconcile.planner.out import Out
from omereconcile.planner.quota import QUOTA_EXCEEDED
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.steps import check_failure
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, PodView, format_time
from tests.goparity.test_workload_escalation_gang_surge import LEADER, gang_surge_pair, run_pair

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/scheduler_test.go @ 4dfb96b1"
MESSAGE = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu"
NAME = "llama-pool-engine-0-default-0"
TIMEOUT = timedelta(minutes=30)


def _ctx(grace: timedelta = timedelta(0)) -> Ctx:
    settings = OperatorSettings(instance_ready_timeout=TIMEOUT, unschedulable_grace_period=grace)
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _unschedulable(
    ctx: Ctx, since: timedelta, message: str = MESSAGE, created: timedelta | None = None
) -> PodView:
    """Go's ``unschedulablePod``: Pending, PodScheduled False (Unschedulable) since ``since`` ago."""
    born = ctx.now - (created if created is not None else since + timedelta(minutes=1))
    cond: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": message,
        "lastTransitionTime": format_time(ctx.now - since),
    }
    return PodView.from_dict(
        {
            "metadata": {"name": NAME, "uid": "uid-0", "creationTimestamp": format_time(born)},
            "status": {"phase": "Pending", "conditions": [cond]},
        }
    )


def _creating(ctx: Ctx, deadline: timedelta = TIMEOUT, waiting: str | None = None) -> R.Row:
    """Go's ``creatingInstance``: a single-pod Create attempt whose deadline is ``deadline`` away."""
    op = R.Operation(
        "create-0",
        R.OP_CREATE,
        R.STEP_CREATE_PODS,
        ctx.spec_revision,
        ctx.now - timedelta(minutes=1),
        deadline=ctx.now + deadline,
        waiting=waiting,
    )
    return R.Row(index=0, phase=R.CREATING, operation=op)


def _pass(ctx: Ctx, row: R.Row, pod: PodView | None) -> tuple[R.Row, R.Row | None, Out, RetryBook]:
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    kept, failed = check_failure(ctx, row, pod, NAME, out, book)
    return kept, failed, out, book


def _warnings(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "InstanceFailed"]


def test_unschedulable_pod_records_hold() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/scheduler_test.go @ 4dfb96b1,
    TestEscalation_UnschedulablePodRecordsHold: with no grace the row is not failed; the operation
    waits ``Unschedulable``, ``lastFailure`` carries the scheduler's message; no Warning, no block."""
    ctx = _ctx()
    row, failed, out, book = _pass(ctx, _creating(ctx), _unschedulable(ctx, timedelta(minutes=5)))
    assert failed is None
    assert row.phase == R.CREATING
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    assert row.last_failure is not None
    assert row.last_failure["message"] == MESSAGE
    assert _warnings(out) == []
    assert book.blocks == {}


def test_unschedulable_hold_is_edge_triggered() -> None:
    """Go: same file, TestEscalation_UnschedulableHoldIsEdgeTriggered: the second and third passes over
    the same hold change nothing (one status write over three passes)."""
    ctx = _ctx()
    pod = _unschedulable(ctx, timedelta(minutes=5))
    first, _, _, _ = _pass(ctx, _creating(ctx), pod)
    second, _, _, _ = _pass(ctx, first, pod)
    third, _, _, _ = _pass(ctx, second, pod)
    assert first == second == third


def test_unschedulable_hold_ignores_message_churn() -> None:
    """Go: same file, TestEscalation_UnschedulableHoldIgnoresMessageChurn: the scheduler's message
    moves every cycle; the row keeps the message from the hold's start and is not rewritten. It failed
    before: ours rewrote ``lastFailure`` (one status write per pass) whenever the message moved."""
    ctx = _ctx()
    row, _, _, _ = _pass(ctx, _creating(ctx), _unschedulable(ctx, timedelta(minutes=5)))
    for message in ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu", "0/9 nodes are available"):
        again, _, _, _ = _pass(ctx, row, _unschedulable(ctx, timedelta(minutes=5), message))
        assert again == row
    assert row.last_failure is not None
    assert row.last_failure["message"] == MESSAGE


def test_unschedulable_hold_cleared_on_schedule() -> None:
    """Go: same file, TestEscalation_UnschedulableHoldClearedOnSchedule: once the pod is placed the
    token is cleared and the row stays Creating."""
    ctx = _ctx()
    scheduled = PodView.from_dict(
        {
            "metadata": {"name": NAME, "uid": "uid-0", "creationTimestamp": format_time(ctx.now)},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]},
        }
    )
    row, failed, _, _ = _pass(ctx, _creating(ctx, waiting=UNSCHEDULABLE), scheduled)
    assert failed is None
    assert row.phase == R.CREATING
    assert row.operation is not None
    assert row.operation.waiting is None


def test_unschedulable_past_grace_fails_environment_caused() -> None:
    """Go: same file, TestEscalation_UnschedulablePastGraceFailsEnvironmentCaused: past the grace the
    attempt fails with ``Unschedulable`` and the scheduler's message, one Warning, and no retry block:
    no corrected revision can make room."""
    ctx = _ctx(grace=timedelta(minutes=10))
    _, failed, out, book = _pass(ctx, _creating(ctx), _unschedulable(ctx, timedelta(hours=1)))
    assert failed is not None
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == UNSCHEDULABLE
    assert MESSAGE in str(failed.last_failure["message"])
    assert book.blocks == {}
    assert len(_warnings(out)) == 1


def test_unschedulable_without_grace_never_escalates() -> None:
    """Go: same file, TestEscalation_UnschedulableWithoutGraceNeverEscalates: with no grace an
    unplaceable pod waits for an operator; an already elapsed deadline does not fail it (parked)."""
    ctx = _ctx()
    row, failed, out, _ = _pass(
        ctx, _creating(ctx, deadline=-timedelta(hours=1)), _unschedulable(ctx, timedelta(hours=24))
    )
    assert failed is None
    assert row.phase == R.CREATING
    assert _warnings(out) == []


def test_unschedulable_grace_runs_from_condition() -> None:
    """Go: same file, TestEscalation_UnschedulableGraceRunsFromCondition: the grace counts from the
    PodScheduled transition, not the pod's creation (one minute of hold against ten)."""
    ctx = _ctx(grace=timedelta(minutes=10))
    pod = _unschedulable(ctx, timedelta(minutes=1), created=timedelta(hours=2))
    row, failed, _, _ = _pass(ctx, _creating(ctx), pod)
    assert failed is None
    assert row.phase == R.CREATING


def test_gated_deadlines_park_an_unschedulable_instance() -> None:
    """Go: same file, TestReconcileGatedDeadlines_ParksUnschedulableInstance: the hold parks the
    InstanceReadyTimeout clock (no deadline) and its release restarts it from that moment."""
    ctx = _ctx()
    parked, _, _, _ = _pass(
        ctx, _creating(ctx, deadline=-timedelta(minutes=1)), _unschedulable(ctx, timedelta(minutes=5))
    )
    assert parked.operation is not None
    assert parked.operation.deadline is None
    released, _, _, _ = _pass(ctx, parked, None)
    assert released.operation is not None
    assert released.operation.deadline == ctx.now + TIMEOUT


def test_unschedulable_yields_to_another_waiting_token() -> None:
    """Go: same file, TestEscalation_UnschedulableYieldsToAnotherWaitingToken: a row already waiting on
    a quota refusal keeps that token and is not grace-escalated as unschedulable. It failed before:
    ours kept the token but failed the attempt past the unschedulable grace all the same."""
    ctx = _ctx(grace=timedelta(minutes=10))
    row = _creating(ctx, waiting=QUOTA_EXCEEDED)
    assert row.operation is not None
    row = R.Row(index=0, phase=R.CREATING, operation=replace(row.operation, capacity_refused_at=ctx.now))
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    # ``created=False``: the refusal still stands (ours retires it once the step's pod exists, so a
    # refused pod beside a recorded refusal is a gang member's case, where not every pod exists).
    kept, failed = check_failure(
        ctx, row, _unschedulable(ctx, timedelta(hours=1)), NAME, out, book, created=False
    )
    assert kept.operation is not None
    assert kept.operation.waiting == QUOTA_EXCEEDED
    assert failed is None


def test_unschedulable_grace_warns_after_a_hold_was_recorded() -> None:
    """Go: same file, TestEscalation_UnschedulableGraceWarnsAfterAHoldWasRecorded: a hold recorded a
    pass before the grace elapses does not silence the failure that follows: exactly one Warning over
    both passes, naming the scheduler's message."""
    inside = _ctx(grace=timedelta(hours=1))
    pod = _unschedulable(inside, timedelta(minutes=10))
    held, failed, out1, _ = _pass(inside, _creating(inside), pod)
    assert failed is None
    assert held.last_failure is not None
    past = _ctx(grace=timedelta(minutes=5))
    _, failed, out2, _ = _pass(past, held, pod)
    assert failed is not None
    assert failed.phase == R.FAILED
    warnings = _warnings(out1) + _warnings(out2)
    assert len(warnings) == 1
    assert MESSAGE in warnings[0]


def test_unschedulable_hold_cleared_when_pod_deleted() -> None:
    """Go: same file, TestEscalation_UnschedulableHoldClearedWhenPodDeleted: the pod going away ends
    the hold; the token is released, the row stays Creating, and the clock restarts with a full
    window from the release."""
    ctx = _ctx(grace=timedelta(minutes=10))
    row = _creating(ctx, waiting=UNSCHEDULABLE)
    assert row.operation is not None
    row = R.Row(index=0, phase=R.CREATING, operation=replace(row.operation, deadline=None))
    kept, failed, _, _ = _pass(ctx, row, None)
    assert failed is None
    assert kept.phase == R.CREATING
    assert kept.operation is not None
    assert kept.operation.waiting is None
    assert kept.operation.deadline == ctx.now + TIMEOUT


def _in_flight(ctx: Ctx, op_type: str, step: str, phase: str, reason: str | None = None) -> R.Row:
    """Go's ``restartingInstance`` / ``rollInFlight``: an operation at ``step`` whose deadline is 30
    minutes away (incarnation 2 for the repair, as Go's fixture)."""
    op = R.Operation(
        f"{op_type.lower()}-0",
        op_type,
        step,
        ctx.spec_revision,
        ctx.now - timedelta(minutes=1),
        deadline=ctx.now + timedelta(minutes=30),
        reason=reason,
    )
    return R.Row(index=0, phase=phase, operation=op, incarnation=2 if op_type == R.OP_RESTART else 1)


IN_FLIGHT = [
    ("Restart", R.OP_RESTART, R.STEP_DRAIN, R.RESTARTING, NAME),
    ("InPlace", R.OP_UPDATE, "InPlace", R.UPDATING, NAME),
    ("Drain", R.OP_UPDATE, R.STEP_DRAIN, R.UPDATING, NAME),
    ("SurgeDrain", R.OP_UPDATE, R.STEP_SURGE_DRAIN, R.UPDATING, "llama-pool-engine-0-default-1"),
]


@pytest.mark.parametrize(
    ("label", "op_type", "step", "phase", "pod_name"), IN_FLIGHT, ids=[c[0] for c in IN_FLIGHT]
)
def test_unschedulable_operation_held_while_the_grace_is_unconfigured(
    label: str, op_type: str, step: str, phase: str, pod_name: str
) -> None:
    """Go: same file, TestEscalation_UnschedulableRestartHoldsThenFailsPastGrace ("held while the grace
    is unconfigured"), TestEscalation_UnschedulableRollHoldsThenFailsPastGrace ("InPlace"/"Drain held
    while the grace is unconfigured") and TestEscalation_UnschedulableDrainHoldsThenFailsPastGrace
    ("held while the grace is unconfigured"): a repair's or roll's pod the scheduler cannot place is
    held, not failed — the operation waits ``Unschedulable`` (its deadline parks), ``lastFailure``
    carries the scheduler's message, a repair keeps its cause, and no retry block is written."""
    ctx = _ctx()
    pod = replace(_unschedulable(ctx, timedelta(minutes=5)), name=pod_name)
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    row, failed = check_failure(
        ctx, _in_flight(ctx, op_type, step, phase, "pod lost"), pod, pod_name, out, book
    )
    assert failed is None
    assert row.phase == phase
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    assert row.operation.reason == "pod lost"
    assert row.last_failure is not None
    assert row.last_failure["message"] == MESSAGE
    assert book.blocks == {}


@pytest.mark.parametrize(
    ("label", "op_type", "step", "phase", "pod_name"), IN_FLIGHT, ids=[c[0] for c in IN_FLIGHT]
)
def test_unschedulable_operation_failed_past_the_configured_grace(
    label: str, op_type: str, step: str, phase: str, pod_name: str
) -> None:
    """Go: the same three tests' "failed past the configured grace" subtests: past a 10-minute grace
    the attempt fails ``Unschedulable`` with the scheduler's message, environment-caused (no retry
    block: the revision's ladder is untouched)."""
    ctx = _ctx(grace=timedelta(minutes=10))
    pod = replace(_unschedulable(ctx, timedelta(hours=1)), name=pod_name)
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    _, failed = check_failure(ctx, _in_flight(ctx, op_type, step, phase), pod, pod_name, out, book)
    assert failed is not None
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == UNSCHEDULABLE
    assert MESSAGE in str(failed.last_failure["message"])
    assert book.blocks == {}


# --- the gang, the surge and the superseded leftover -------------------------------------------------


def _gang_ctx(grace: timedelta = timedelta(0), workers: int = 2) -> Ctx:
    settings = OperatorSettings(instance_ready_timeout=TIMEOUT, unschedulable_grace_period=grace)
    sim = Sim(settings=settings, workers=workers)
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _gang_member(ctx: Ctx, runner: str, k: int, since: timedelta) -> PodView:
    """A gang member rendered at the target revision, Pending and ruled out by the scheduler."""
    obj = ctx.world.pod_factory(ctx.spec_revision, 0, 1, runner, k)
    obj = dict(obj)
    meta = dict(obj["metadata"])
    meta.update({"uid": f"uid-{meta['name']}", "creationTimestamp": format_time(ctx.now - since)})
    obj["metadata"] = meta
    obj["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": MESSAGE,
                "lastTransitionTime": format_time(ctx.now - since),
            }
        ],
    }
    return PodView.from_dict(obj)


def _gang_row(ctx: Ctx) -> R.Row:
    op = R.Operation(
        "update-0",
        R.OP_UPDATE,
        R.STEP_GANG_SURGE_TARGET,
        ctx.spec_revision,
        ctx.now - timedelta(minutes=1),
        deadline=ctx.now + TIMEOUT,
    )
    return R.Row(index=0, phase=R.CREATING, operation=op, pod_count=3)


def test_unschedulable_gang_hold_is_order_independent() -> None:
    """Go: same file, TestEscalation_UnschedulableGangHoldIsOrderIndependent: a gang whose three
    members are all unplaceable, handed over in every order an informer cache could give, records one
    hold naming the leader and rewrites nothing on the later passes. Ours: ``bring_up_gang`` reads the
    members in the gang's own slot order, whatever the order of the pods it is given."""
    ctx = _gang_ctx()
    leader = _gang_member(ctx, "leader", 0, timedelta(minutes=5))
    w0 = _gang_member(ctx, "worker", 0, timedelta(minutes=5))
    w1 = _gang_member(ctx, "worker", 1, timedelta(minutes=5))
    row = _gang_row(ctx)
    seen = []
    for bucket in ([leader, w0, w1], [w1, leader, w0], [w0, w1, leader], [w1, w0, leader]):
        row, _ = bring_up_gang(
            ctx, row, bucket, Out(ctx.now), RetryBook({}, "llama-demo/llama-pool", "engine")
        )
        seen.append(row)
    assert seen[0] == seen[1] == seen[2] == seen[3]
    assert seen[0].last_failure is not None
    assert seen[0].last_failure["podName"] == leader.name


def test_unschedulable_gang_past_grace_keeps_no_revision_blame() -> None:
    """Go: same file, TestEscalation_UnschedulableGangPastGraceKeepsItsOperation: a gang surge target
    with nowhere to land past the grace fails ``Unschedulable`` with one Warning and no retry block
    (environment-caused). Go keeps the failed row's operation for the abandon path; ours hands the
    failed target to the gang-surge abandon directly (``step_gang_surge``: the row goes to
    ``GangSurgeTargetCleanup``), so the kept operation has no counterpart here."""
    ctx = _gang_ctx(grace=timedelta(minutes=10))
    members = [
        _gang_member(ctx, r, k, timedelta(hours=1)) for r, k in (("leader", 0), ("worker", 0), ("worker", 1))
    ]
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    failed, _ = bring_up_gang(ctx, _gang_row(ctx), members, out, book)
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == UNSCHEDULABLE
    assert book.blocks == {}
    assert len(_warnings(out)) == 1


def test_unschedulable_surge_blames_only_the_target() -> None:
    """Go: same file, TestEscalation_UnschedulableSurgeBlamesOnlyTheTarget: a single-pod surge whose
    serving source is wedged on its own image while the replacement has nowhere to land fails past the
    grace on the replacement alone: one Warning, no retry block. Ours: the surge step hands
    ``check_failure`` the replacement pod only."""
    ctx = _ctx(grace=timedelta(minutes=10))
    target = replace(_unschedulable(ctx, timedelta(hours=1)), name="llama-pool-engine-0-default-1")
    row = _in_flight(ctx, R.OP_UPDATE, R.STEP_SURGE, R.UPDATING)
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    _, failed = check_failure(ctx, row, target, target.name, out, book)
    assert failed is not None
    assert failed.phase == R.FAILED
    assert book.blocks == {}
    assert len(_warnings(out)) == 1


def test_unschedulable_superseded_leftover_is_silent() -> None:
    """Go: same file, TestEscalation_UnschedulableSupersededLeftoverIsSilent: a Create whose bucket holds
    an old revision's pod wedged in ``ImagePullBackOff`` and the new pod, unplaceable past the grace:
    nothing is written or announced, no block."""
    ctx = _ctx(grace=timedelta(minutes=10))
    leftover = PodView.from_dict(
        {
            "metadata": {
                "name": NAME,
                "uid": "uid-old",
                "labels": {"ome.io/revision-hash": "01d01d00"},
            },
            "status": {
                "phase": "Running",
                "containerStatuses": [{"name": "main", "state": {"waiting": {"reason": "ImagePullBackOff"}}}],
            },
        }
    )
    target = replace(_unschedulable(ctx, timedelta(hours=1)), name="llama-pool-engine-0-default-1")
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    _, failed = check_failure(ctx, _creating(ctx), target, target.name, out, book, members=[leftover, target])
    assert failed is None
    assert _warnings(out) == []
    assert book.blocks == {}


def test_unschedulable_delete_row_is_left_to_delete_batch() -> None:
    """Go: same file, TestEscalation_UnschedulableDeleteRowIsLeftToDeleteBatch: a scale-down's Delete row
    whose pod never got placed, past the grace: the row stays ``Deleting``, no hold is recorded on the
    teardown and no Warning is said. Ours: ``step_row`` hands a Delete row to its own drain step, which
    reads no scheduler verdict."""
    ctx = _ctx(grace=timedelta(minutes=10))
    op = R.Operation(
        "delete-0",
        R.OP_DELETE,
        R.STEP_DRAIN,
        ctx.spec_revision,
        ctx.now - timedelta(minutes=1),
        deadline=ctx.now + TIMEOUT,
    )
    row = R.Row(index=0, phase=R.DELETING, operation=op, pod_count=1)
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    kept = step_row(ctx, row, [_unschedulable(ctx, timedelta(hours=1))], out, book, ctx.spec_revision)
    assert kept is not None
    assert kept.phase == R.DELETING
    assert kept.operation is not None
    assert kept.operation.waiting is None
    assert _warnings(out) == []


def test_reconcile_gated_deadlines_parks_unschedulable_gang_surge_source() -> None:
    """Go: same file, TestReconcileGatedDeadlines_ParksUnschedulableGangSurgeSource: a gang surge's
    replacement member the scheduler cannot place holds the marker row (``Unschedulable``), and the
    SOURCE's deadline, where the governing operation lives, parks with it (Go
    ``escalation/deadline.go`` ``instanceHeldExternally`` follows ``SurgeIndex``). The pair is built as
    in ``test_workload_escalation_gang_surge.py`` (a gang brought up in the simulated world, its image
    changed, one pass); one pass of ``planner/gang_ops.py`` ``step_gang_surge`` follows. Failed before
    (ours parked the marker's deadline only); fixed in ``gang_ops._source_clock``."""
    sim = gang_surge_pair()
    cond = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu",
        "lastTransitionTime": format_time(sim.now - timedelta(minutes=5)),
    }
    sim.pods[LEADER].obj["status"] = {"phase": "Pending", "conditions": [cond]}
    src, tgt, before, _, _ = run_pair(sim)
    assert before.operation is not None
    assert before.operation.deadline is not None
    assert tgt is not None
    assert tgt.operation is not None
    assert tgt.operation.waiting == UNSCHEDULABLE
    assert src is not None
    assert src.operation is not None
    assert src.operation.deadline is None
