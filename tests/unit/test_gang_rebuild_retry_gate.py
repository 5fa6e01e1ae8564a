"""The below-Ready whole-gang rebuild answers to the row's revision's RetryBlock.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/restart.go`` ``instanceLostGangMember`` and
``rebuildRetryBlockDenies`` (both stored versions, 22,862 and 78,474 characters, the same rule; no Go
test of either version names the gate): a committed gang below ``Ready`` missing a member is rebuilt
whole by a Restart only when the RetryBlock of its running (else target, else update) revision admits
an attempt (``evaluateRetryBlockGate``): Held denies, Backoff denies until ``nextRetryAt``,
RetryInProgress denies while an Instance carries an in-flight Create attempt. Before, ours restarted
the gang whatever its ladder said, re-materializing a revision the disposition had held.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import gang_names, lost_gang_member
from omereconcile.planner.out import Out
from omereconcile.planner.retry import BACKOFF_STATE, HELD_STATE, IN_PROGRESS_STATE, RetryBlock, RetryBook
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, PodView

LOST = "gang member lost: 1 of 2 pods present"


def _ctx() -> Ctx:
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1, restartPolicy="RecreateInstanceOnPodRestart"))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _failed_member(ctx: Ctx) -> tuple[R.Row, list[PodView]]:
    """A committed gang Create (Creating, podCount 2, at CreatePods) whose worker ended Failed."""
    op = R.Operation("create-0", R.OP_CREATE, R.STEP_CREATE_PODS, ctx.target, ctx.now)
    row = R.Row(
        index=0,
        phase=R.CREATING,
        pod_count=2,
        running_revision=ctx.target,
        target_revision=ctx.target,
        operation=op,
    )
    pods = {p.name: p for p in ctx.world.pods}
    leader, worker = gang_names(ctx, 0)
    return row, [pods[leader], replace(pods[worker], phase="Failed")]


def _book(ctx: Ctx, state: str | None, next_retry_in: timedelta | None = None) -> RetryBook:
    blocks = {}
    if state is not None:
        nxt = ctx.now + next_retry_in if next_retry_in is not None else None
        blocks[ctx.target] = RetryBlock(ctx.target, state, 1, ctx.now, ctx.now, nxt, "CrashLoopBackOff")
    return RetryBook(blocks, "llama-demo/llama-pool", "engine")


def test_no_block_rebuilds_the_gang_whole() -> None:
    ctx = _ctx()
    row, pods = _failed_member(ctx)
    assert lost_gang_member(ctx, row, pods, _book(ctx, None), Out(ctx.now)) == LOST


def test_a_held_revision_is_not_rebuilt() -> None:
    ctx = _ctx()
    row, pods = _failed_member(ctx)
    assert lost_gang_member(ctx, row, pods, _book(ctx, HELD_STATE), Out(ctx.now)) is None


def test_a_backoff_defers_the_rebuild_to_its_retry_time() -> None:
    ctx = _ctx()
    row, pods = _failed_member(ctx)
    out = Out(ctx.now)
    assert lost_gang_member(ctx, row, pods, _book(ctx, BACKOFF_STATE, timedelta(minutes=2)), out) is None
    assert out.wakes == [ctx.now + timedelta(minutes=2)]  # asked again when the backoff is due
    due = _book(ctx, BACKOFF_STATE, timedelta(seconds=-1))
    assert lost_gang_member(ctx, row, pods, due, Out(ctx.now)) == LOST


def test_a_retry_in_progress_admits_the_rebuild_when_no_create_is_in_flight() -> None:
    """The observed rows (the simulated replica's status: one Ready row) carry no in-flight Create,
    so the RetryInProgress authorisation is treated as due, as Go's gate does."""
    ctx = _ctx()
    row, pods = _failed_member(ctx)
    assert lost_gang_member(ctx, row, pods, _book(ctx, IN_PROGRESS_STATE), Out(ctx.now)) == LOST
