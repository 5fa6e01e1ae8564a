"""OME's ``workload/escalation/gang_test.go``: what a gang's PodGroup says to the escalation pass.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/gang_test.go`` @ 8263d0c7 (the newest
of two stored versions), over ``escalation/escalation.go`` ``Run`` (the GANG path) and the PodGroup
readings (``types.GangObservations``: terminating, ownership conflict, failed, absent). Go feeds the
reading in as a fixture; ours reads the Instance's PodGroup off the observed world, so a reading is a
``PodGroupView`` at the Instance's name (one of ours on its way out, or one another controller
controls), and the pass is the gang's :func:`omereconcile.planner.gang.bring_up_gang` (or
:func:`~omereconcile.planner.instances.step_row` for a row another step owns). Since goG2 ours reads a
name another controller holds on every pass, members present or not, as Go does (the cases were strict
xfails before; ``docs/goparity.md``). A PodGroup's ``Failed`` phase is read for the PodGroup reset
(``planner/gang.py`` ``reset_failed_pod_group``, since goKD): on the row it changes nothing, as Go's
escalation pass leaves it to the PodGroup pass.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import CreatePod
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import PODGROUP_NAME_IN_USE, PODGROUP_TERMINATING, bring_up_gang
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.planner.instances import step_row
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, NodeView, PodGroupView, PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/gang_test.go @ 8263d0c7"
GROUP = "llama-pool-engine-0"
TERMINATING_MESSAGE = f"PodGroup {GROUP} is terminating; the gang is announced again once it is collected"
COSCHEDULING = "0/3 nodes are available: cannot find enough sibling pods for PodGroup llama-pool-engine-0"
TIMEOUT = timedelta(minutes=30)


def _ctx(reading: str | None, grace: timedelta = timedelta(0)) -> Ctx:
    """A two-pod gang replica whose Instance 0 PodGroup reads ``reading`` (None: absent)."""
    settings = OperatorSettings(instance_ready_timeout=TIMEOUT, unschedulable_grace_period=grace)
    sim = Sim(settings=settings, workers=1)
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    labels = {c.LABEL_INSTANCE_INDEX: "0"}
    groups: tuple[PodGroupView, ...] = ()
    if reading == "terminating":
        groups = (PodGroupView(GROUP, "g0", labels, world.replica.uid, terminating=True),)
    elif reading == "conflict":
        groups = (PodGroupView(GROUP, "g0", labels, "uid-of-statefulset-legacy"),)
    elif reading == "failed":
        groups = (
            PodGroupView(
                GROUP, "g0", labels, world.replica.uid, min_member=2, phase="Failed", failed_members=1
            ),
        )
    world = replace(world, pod_groups=groups, nodes={"node-a": NodeView("node-a", ready="True")})
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _row(
    ctx: Ctx, op_type: str = R.OP_CREATE, step: str = R.STEP_CREATE_PODS, waiting: str | None = None
) -> R.Row:
    """Go ``creatingGang`` / ``restartingGang`` / a recreate ``rollInFlight``: a two-pod attempt with a
    live deadline."""
    phase = {R.OP_CREATE: R.CREATING, R.OP_RESTART: R.RESTARTING}.get(op_type, R.UPDATING)
    op = R.Operation(
        f"{op_type.lower()}-0",
        op_type,
        step,
        ctx.spec_revision,
        ctx.now - timedelta(minutes=1),
        deadline=ctx.now + TIMEOUT,
        waiting=waiting,
        reason="pod lost" if op_type == R.OP_RESTART else None,
    )
    incarnation = 2 if op_type != R.OP_CREATE else 1
    return R.Row(index=0, phase=phase, operation=op, pod_count=2, incarnation=incarnation)


def _member(ctx: Ctx, row: R.Row, runner: str, conditions: list[dict[str, Any]] | None = None) -> PodView:
    """Go ``pendingGangPods``: a member that exists but is not yet placed (or, with ``conditions``,
    one the gang scheduler rejected)."""
    obj = dict(ctx.world.pod_factory(ctx.spec_revision, 0, row.incarnation, runner, 0))
    obj["metadata"] = {**obj["metadata"], "uid": f"uid-{runner}", "creationTimestamp": format_time(ctx.now)}
    obj["status"] = {"phase": "Pending", "conditions": conditions or []}
    return PodView.from_dict(obj)


def _pending(ctx: Ctx, row: R.Row) -> list[PodView]:
    return [_member(ctx, row, "leader"), _member(ctx, row, "worker")]


def _rejected(ctx: Ctx, row: R.Row, since: timedelta) -> PodView:
    cond = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": COSCHEDULING,
        "lastTransitionTime": format_time(ctx.now - since),
    }
    return _member(ctx, row, "leader", [cond])


def _pass(ctx: Ctx, row: R.Row, pods: list[PodView]) -> tuple[R.Row, Out, RetryBook]:
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    after, _ = bring_up_gang(ctx, row, pods, out, book)
    return after, out, book


def _warnings(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "InstanceFailed"]


def test_gang_terminating_parks_without_escalating() -> None:
    """Go: same file, TestEscalation_GangTerminatingParksWithoutEscalating: a name still being collected
    parks the Create (``PodGroupTerminating``), records the PodGroup's message and never escalates,
    even with a one-minute unschedulable grace. A strict xfail until goG2 (ours recorded its own words
    for the explanation); fixed with Go's ``workload/podgroup`` ``ObserveGang`` message
    (``planner/gang.py`` ``_gang_hold``)."""
    ctx = _ctx("terminating", grace=timedelta(minutes=1))
    row, out, _ = _pass(ctx, _row(ctx), [])
    assert row.phase == R.CREATING
    assert row.operation is not None
    assert row.operation.waiting == PODGROUP_TERMINATING
    assert _warnings(out) == []
    assert row.last_failure is not None
    assert row.last_failure["message"] == TERMINATING_MESSAGE


def test_gang_hold_is_edge_triggered() -> None:
    """Go: same file, TestEscalation_GangHoldIsEdgeTriggered: three passes over the same collection write
    once (the second and third change nothing)."""
    ctx = _ctx("terminating")
    first, _, _ = _pass(ctx, _row(ctx), [])
    second, _, _ = _pass(ctx, first, [])
    third, _, _ = _pass(ctx, second, [])
    assert first != _row(ctx)
    assert first == second == third


def test_gang_hold_cleared_once_collected() -> None:
    """Go: same file, TestEscalation_GangHoldClearedOnceCollected: with the old object gone the token is
    released (the row stays Creating) and the clock restarts, with the members already created. Failed
    before (ours released the token only while members were missing); fixed in ``planner/gang.py``
    ``bring_up_gang``."""
    ctx = _ctx(None)
    row = _row(ctx, waiting=PODGROUP_TERMINATING)
    after, _, _ = _pass(ctx, row, _pending(ctx, row))
    assert after.phase == R.CREATING
    assert after.operation is not None
    assert after.operation.waiting is None
    assert after.operation.deadline == ctx.now + TIMEOUT


def test_gang_hold_takes_over_from_cleared_pod_token() -> None:
    """Go: same file, TestEscalation_GangHoldTakesOverFromClearedPodToken: the pod-level hold ends (the
    leader is placed) and the name goes into collection in the same pass: the gang token lands at once
    and the clock stays parked."""
    ctx = _ctx("terminating")
    row = _row(ctx, waiting=UNSCHEDULABLE)
    leader = _member(ctx, row, "leader", [{"type": "PodScheduled", "status": "True"}])
    after, _, _ = _pass(ctx, row, [leader])
    assert after.operation is not None
    assert after.operation.waiting == PODGROUP_TERMINATING
    assert after.operation.deadline is None


def test_gang_ownership_conflict_fails_only_its_row() -> None:
    """Go: same file, TestEscalation_GangOwnershipConflictFailsOnlyItsRow: a name held by another
    controller ends the Create (``PodGroupNameInUse`` naming the owner), environment-caused (no block)."""
    ctx = _ctx("conflict")
    row = _row(ctx)
    after, _, book = _pass(ctx, row, _pending(ctx, row))
    assert after.phase == R.FAILED
    assert after.last_failure is not None
    assert after.last_failure["reason"] == PODGROUP_NAME_IN_USE
    assert book.blocks == {}


@pytest.mark.parametrize(
    ("name", "op_type", "step"),
    [("repair", R.OP_RESTART, R.STEP_DRAIN), ("recreate", R.OP_UPDATE, R.STEP_DRAIN)],
)
def test_gang_readings_terminating_parks(name: str, op_type: str, step: str) -> None:
    """Go: same file, TestEscalation_GangReadingsOnARepairRow ("terminating parks the repair") and
    TestEscalation_GangReadingsOnARecreateRow ("terminating parks the recreate"): the row keeps its
    phase, waits ``PodGroupTerminating`` with its clock parked, and nothing is announced."""
    ctx = _ctx("terminating")
    row = _row(ctx, op_type, step)
    after, out, _ = _pass(ctx, row, [])
    assert after.phase == row.phase
    assert after.operation is not None
    assert (after.operation.waiting, after.operation.deadline) == (PODGROUP_TERMINATING, None)
    assert _warnings(out) == []


@pytest.mark.parametrize(
    ("name", "op_type", "step"),
    [("repair", R.OP_RESTART, R.STEP_DRAIN), ("recreate", R.OP_UPDATE, R.STEP_DRAIN)],
)
def test_gang_readings_ownership_conflict_ends(name: str, op_type: str, step: str) -> None:
    """Go: same file, TestEscalation_GangReadingsOnARepairRow ("ownership conflict ends the repair") and
    TestEscalation_GangReadingsOnARecreateRow ("ownership conflict ends the recreate"), members present:
    Failed with ``PodGroupNameInUse``, no block."""
    ctx = _ctx("conflict")
    row = _row(ctx, op_type, step)
    after, _, book = _pass(ctx, row, _pending(ctx, row))
    assert after.phase == R.FAILED
    assert after.last_failure is not None
    assert after.last_failure["reason"] == PODGROUP_NAME_IN_USE
    assert book.blocks == {}


def test_gang_readings_on_a_repair_row_absent_group_releases_the_token() -> None:
    """Go: same file, TestEscalation_GangReadingsOnARepairRow ("an absent group releases the token"):
    fixed with ``GangHoldClearedOnceCollected``."""
    ctx = _ctx(None)
    row = _row(ctx, R.OP_RESTART, R.STEP_DRAIN, waiting=PODGROUP_TERMINATING)
    after, _, _ = _pass(ctx, row, _pending(ctx, row))
    assert after.phase == R.RESTARTING
    assert after.operation is not None
    assert after.operation.waiting is None


def test_gang_unschedulable_arrives_on_member_pods() -> None:
    """Go: same file, TestEscalation_GangUnschedulableArrivesOnMemberPods: the gang scheduler rejects the
    members, so the Instance is held on the pod-level ``Unschedulable`` token with the coscheduling
    explanation as ``lastFailure``'s message, still Creating."""
    ctx = _ctx(None)
    row = _row(ctx)
    after, _, _ = _pass(ctx, row, [_rejected(ctx, row, timedelta(minutes=5))])
    assert after.phase == R.CREATING
    assert after.operation is not None
    assert after.operation.waiting == UNSCHEDULABLE
    assert after.last_failure is not None
    assert after.last_failure["message"] == COSCHEDULING


def test_pod_hold_wins_over_gang_hold() -> None:
    """Go: same file, TestEscalation_PodHoldWinsOverGangHold: members the scheduler refuses and a name
    being collected: the row reports the pod hold (``Unschedulable``, the scheduler's message), parked,
    still Creating inside the grace. A strict xfail until goG2 (with a member missing ours took the name
    wait first); fixed in ``planner/gang.py`` ``bring_up_gang``."""
    ctx = _ctx("terminating", grace=timedelta(minutes=10))
    row = _row(ctx)
    after, _, _ = _pass(ctx, row, [_rejected(ctx, row, timedelta(minutes=1))])
    assert after.operation is not None
    assert after.operation.waiting == UNSCHEDULABLE
    assert after.last_failure is not None
    assert after.last_failure["message"] == COSCHEDULING
    assert after.phase == R.CREATING


@pytest.mark.parametrize("name", ["gang hold keeps off teardowns", "terminal keeps off a teardown"])
def test_gang_readings_keep_off_teardowns(name: str) -> None:
    """Go: same file, TestEscalation_GangHoldKeepsOffTeardowns (a name being collected) and
    TestEscalation_GangTerminalKeepsOffRowsOwnedElsewhere ("teardown", a name another controller holds):
    a Delete row past its deadline keeps its phase, takes no token and says no ``InstanceFailed``
    (``step_row`` hands it to its drain step)."""
    ctx = _ctx("terminating" if name.startswith("gang hold") else "conflict")
    op = R.Operation(
        "delete-0",
        R.OP_DELETE,
        R.STEP_DRAIN,
        ctx.spec_revision,
        ctx.now - timedelta(hours=2),
        deadline=ctx.now - timedelta(hours=1),
    )
    row = R.Row(index=0, phase=R.DELETING, operation=op, pod_count=2)
    out = Out(ctx.now)
    after = step_row(ctx, row, _pending(ctx, row), out, RetryBook({}, "ns/n", "engine"), ctx.spec_revision)
    assert after is not None
    assert after.phase == R.DELETING
    assert after.operation is not None
    assert after.operation.waiting is None
    assert _warnings(out) == []


@pytest.mark.parametrize("reading", ["terminating", "conflict", "failed"])
def test_gang_readings_on_a_failed_row_are_inert(reading: str) -> None:
    """Go: same file, TestEscalation_GangReadingsOnAFailedRowAreInert, entries "terminating", "ownership
    conflict" and "phase failed": a Failed row with no operation takes no token, no phase change, no
    Warning, no block."""
    ctx = _ctx(reading)
    row = R.Row(index=0, phase=R.FAILED, pod_count=2)
    out = Out(ctx.now)
    book = RetryBook({}, "ns/n", "engine")
    after = step_row(ctx, row, _pending(ctx, row), out, book, ctx.spec_revision)
    assert after is not None
    assert (after.phase, after.operation) == (R.FAILED, None)
    assert _warnings(out) == []
    assert book.blocks == {}


def test_gang_failed_neither_holds_nor_ends() -> None:
    """Go: same file, TestEscalation_GangFailedNeitherHoldsNorEnds: a group the gang scheduler failed
    is recoverable (the PodGroup pass resets it), so across two passes the Create keeps ``Creating``,
    takes no token, keeps its deadline running, and nothing is announced or charged. With its members
    missing none is created meanwhile (Go ``GangObservations.BlocksPods``)."""
    ctx = _ctx("failed")
    row = _row(ctx)
    first, out1, book1 = _pass(ctx, row, _pending(ctx, row))
    second, out2, book2 = _pass(ctx, first, _pending(ctx, row))
    assert second.phase == R.CREATING, GO
    assert second.operation is not None
    assert row.operation is not None
    assert (second.operation.waiting, second.operation.deadline) == (None, row.operation.deadline), GO
    assert _warnings(out1) + _warnings(out2) == [], GO
    assert book1.blocks == book2.blocks == {}, GO
    _, out, _ = _pass(ctx, row, [])
    assert not [a for a in out.actions if isinstance(a, CreatePod)], GO


@pytest.mark.parametrize(
    ("name", "op_type", "step"),
    [("repair", R.OP_RESTART, R.STEP_DRAIN), ("recreate", R.OP_UPDATE, R.STEP_DRAIN)],
)
def test_gang_failed_phase_leaves_the_row_alone(name: str, op_type: str, step: str) -> None:
    """Go: same file, TestEscalation_GangReadingsOnARepairRow and …OnARecreateRow, "the scheduler's
    failed phase leaves the row alone" (the recreate over two passes): the row keeps its phase, takes
    no token, and nothing is announced or charged."""
    ctx = _ctx("failed")
    row = _row(ctx, op_type, step)
    first, out1, book1 = _pass(ctx, row, _pending(ctx, row))
    second, out2, book2 = _pass(ctx, first, _pending(ctx, row))
    assert second.phase == row.phase, (GO, name)
    assert second.operation is not None
    assert second.operation.waiting is None, (GO, name)
    assert _warnings(out1) + _warnings(out2) == [], (GO, name)
    assert book1.blocks == book2.blocks == {}, (GO, name)
