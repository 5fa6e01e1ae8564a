"""One Instance's state machine: start an operation, advance it one step, or keep it steady.

An Instance is a set of pods keyed by (runner, ordinal); today only single-pod Instances (one
``default`` runner) are driven, with the SurgeThenDrain slot ``1 - activeOrdinal``. Each function
returns the Instance's new row; the row is written to status *before* any pod action of the pass, so
a restarted planner reading only the row and the pods reaches the same decision (creates are by name,
deletes pinned by UID, and a terminating pod is never deleted again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from omereconcile.actions import CreatePod
from omereconcile.planner import rows as R
from omereconcile.planner.context import RECREATE, SURGE, Ctx, hash_of
from omereconcile.planner.gate import RECREATE_DRAIN, SURGE_DRAIN
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import drained, ladder, live, stuck_container
from omereconcile.planner.reset import is_reset_journal, step_reset
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Operation, Row
from omereconcile.settings import format_go_duration
from omereconcile.world import PodView, format_time
from omerender import constants as c

__all__ = ["start_create", "start_delete", "start_update", "step_row"]


def _op(ctx: Ctx, row: Row, type_: str, step: str, target: str, strategy: str | None = None) -> Operation:
    return Operation(
        id=f"{row.index}-{type_.lower()}-{int(ctx.now.timestamp())}",
        type=type_,
        step=step,
        target_revision=target,
        started_at=ctx.now,
        deadline=ctx.deadline_from(ctx.now),
        strategy=strategy,
    )


# -- starting operations ---------------------------------------------------------------------------


def start_create(ctx: Ctx, row: Row, target: str, out: Out, *, recycle: bool, new: bool) -> Row:
    op = _op(ctx, row, R.OP_CREATE, R.STEP_RECYCLE if recycle else R.STEP_CREATE_PODS, target)
    if new:
        out.event(
            "Normal",
            "InstanceCreated",
            f"OMENative {ctx.instance_key(row.index)} created at revision {target}",
        )
    return replace(row, phase=R.CREATING, operation=op, target_revision=target)


def start_update(ctx: Ctx, row: Row, target: str, out: Out) -> Row:
    if ctx.strategy == SURGE:
        op = _op(ctx, row, R.OP_UPDATE, R.STEP_SURGE, target, SURGE)
        slot = 1 - row.active_ordinal
        detail = f"surge to revision {target} in slot {ctx.pod_name(row.index, slot)}"
        new_row = replace(row, phase=R.UPDATING, operation=op, target_revision=target)
    else:
        # RecreatePod deletes and recreates under the same name: a new incarnation (01 §4.1).
        op = _op(ctx, row, R.OP_UPDATE, R.STEP_DRAIN, target, RECREATE)
        detail = f"recreate at revision {target} (incarnation {row.incarnation + 1})"
        new_row = replace(
            row, phase=R.UPDATING, operation=op, target_revision=target, incarnation=row.incarnation + 1
        )
    out.event("Normal", "RecreateUpdateStarted", f"OMENative {ctx.instance_key(row.index)} {detail}")
    return new_row


def start_delete(ctx: Ctx, row: Row, out: Out) -> Row:
    op = _op(ctx, row, R.OP_DELETE, R.STEP_DRAIN, row.target_revision or row.running_revision)
    return replace(row, phase=R.DELETING, operation=op)


# -- failure ---------------------------------------------------------------------------------------


def _fail(
    ctx: Ctx,
    row: Row,
    pod_name: str,
    container: str | None,
    reason: str,
    message: str,
    out: Out,
    retry: RetryBook,
) -> Row:
    target = row.operation.target_revision if row.operation else row.target_revision
    failure: dict[str, object] = {
        "podName": pod_name,
        "reason": reason,
        "message": message,
        "time": format_time(ctx.now),
    }
    if container:
        failure["containerName"] = container
    out.event(
        "Warning",
        "InstanceFailed",
        f"InferenceReplica {ctx.namespace}/{ctx.name} {ctx.instance_key(row.index)} escalated to "
        f'Phase=Failed (pod="{pod_name}"): {reason}',
    )
    retry.failure(target, reason, ctx.now, out)
    return replace(row, phase=R.FAILED, operation=None, last_failure=failure, target_revision=target)


def _check_failure(
    ctx: Ctx, row: Row, pod: PodView | None, name: str, out: Out, retry: RetryBook
) -> Row | None:
    """Stuck container past the grace period, or the operation's deadline passed: the failed row."""
    op = row.operation
    assert op is not None
    grace = ctx.world.settings.stuck_pod_grace_period
    if pod is not None:
        stuck = stuck_container(pod)
        if stuck is not None:
            if ctx.now - stuck.since >= grace:
                msg = f"container {stuck.container} waiting in {stuck.reason} for longer than {format_go_duration(grace)}"
                return _fail(ctx, row, name, stuck.container, stuck.reason, msg, out, retry)
            out.wake(stuck.since + grace)
    if op.deadline is not None:
        if ctx.now >= op.deadline:
            msg = f"{op.type} not finished by its deadline {format_time(op.deadline)}"
            return _fail(ctx, row, name, None, "ProgressDeadlineExceeded", msg, out, retry)
        out.wake(op.deadline)
    return None


# -- steps -----------------------------------------------------------------------------------------


def _by_name(pods: Sequence[PodView], name: str) -> PodView | None:
    # Prefer the live pod: a terminating same-named pod cannot coexist with a live one anyway.
    found = [p for p in pods if p.name == name]
    found.sort(key=lambda p: p.terminating)
    return found[0] if found else None


def _delete_strays(ctx: Ctx, pods: Sequence[PodView], keep: set[str], out: Out) -> None:
    for p in live(pods):
        if p.name not in keep:
            out.delete(p, f"pod {p.name} belongs to no step of Instance {p.index}'s operation")


def _create(ctx: Ctx, row: Row, target: str, ordinal: int, out: Out, why: str) -> None:
    name = ctx.pod_name(row.index, ordinal)
    pod = ctx.world.pod_factory(target, row.index, row.incarnation, c.RUNNER_DEFAULT, ordinal)
    out.actions.append(CreatePod(name, pod, why))


def _bring_up(ctx: Ctx, row: Row, pod: PodView | None, name: str, ordinal: int, out: Out) -> tuple[Row, bool]:
    """Create, recycle or wait for the pod in ``ordinal`` at the operation's target.

    Returns the row and whether the pod serves and is Available (the step may finish).
    """
    op = row.operation
    assert op is not None
    if pod is None:
        _create(
            ctx, row, op.target_revision, ordinal, out, f"{op.type} {op.step}: pod at {op.target_revision}"
        )
        return row, False
    if pod.terminating:
        return row, False
    if pod.ended:
        n = op.retry_count + 1
        out.event(
            "Warning",
            "TerminalPodRecycled",
            f"OMENative {ctx.instance_key(row.index)} deleted terminal pod(s) {pod.name} ({pod.phase}) "
            f"for recreate ({op.type} recycle {n})",
        )
        out.delete(pod, f"pod ended in phase {pod.phase}; recycled so it can be recreated")
        return replace(row, operation=replace(op, retry_count=n)), False
    if pod.revision_hash != hash_of(op.target_revision) or pod.incarnation != row.incarnation:
        out.delete(pod, f"pod is not at revision {op.target_revision} incarnation {row.incarnation}")
        return row, False
    lad = ladder(pod, ctx.world.endpoints, ctx.min_ready, ctx.now)
    if lad.ready:
        out.gate(pod, True, "all containers of the Instance are ready: enter rotation")
    out.wake(lad.available_at)
    return row, lad.serving and lad.available


def _complete(ctx: Ctx, row: Row, target: str, ordinal: int) -> Row:
    return replace(
        row,
        phase=R.READY,
        operation=None,
        running_revision=target,
        target_revision=target,
        active_ordinal=ordinal,
        ready_since=ctx.now,
    )


def _step_create_pods(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook) -> Row:
    op = row.operation
    assert op is not None
    name = ctx.pod_name(row.index, row.active_ordinal)
    _delete_strays(ctx, pods, {name}, out)
    pod = _by_name(pods, name)
    row, done = _bring_up(ctx, row, pod, name, row.active_ordinal, out)
    if done:
        if op.type == R.OP_CREATE:
            out.event(
                "Normal",
                "InstanceReady",
                f"OMENative {ctx.instance_key(row.index)} Ready at revision {op.target_revision}",
            )
        else:
            out.event(
                "Normal",
                "RecreateUpdateCompleted",
                f"OMENative {ctx.instance_key(row.index)} updated to revision {op.target_revision}",
            )
        return _complete(ctx, row, op.target_revision, row.active_ordinal)
    live_pod = pod if pod is not None and not pod.terminating and not pod.ended else None
    failed = _check_failure(ctx, row, live_pod, name, out, retry)
    return failed if failed is not None else row


def _retarget(ctx: Ctx, row: Row, target: str, out: Out) -> Row:
    op = row.operation
    assert op is not None
    if op.target_revision == target:
        return row
    out.event(
        "Normal",
        "CreateAttemptSuperseded",
        f"OMENative {ctx.instance_key(row.index)} target moved from {op.target_revision} to {target} "
        f"during {op.type}",
    )
    new_op = replace(op, target_revision=target, started_at=ctx.now, deadline=ctx.deadline_from(ctx.now))
    return replace(row, operation=new_op, target_revision=target)


def _step_create(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row:
    row = _retarget(ctx, row, row_target, out)
    op = row.operation
    assert op is not None
    if op.step == R.STEP_RECYCLE:
        for p in live(pods):
            out.delete(p, "rebuild of a failed Instance: its pods go first")
        if pods:
            return row
        row = replace(row, operation=replace(op, step=R.STEP_CREATE_PODS))
    return _step_create_pods(ctx, row, pods, out, retry)


def _step_recreate(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row:
    op = row.operation
    assert op is not None
    if op.step == R.STEP_DRAIN:
        old = [p for p in pods if p.incarnation != row.incarnation]
        for p in live(old):
            out.gate(p, False, "leave rotation before the pod is recreated", RECREATE_DRAIN)
            if p.gate == "False" and drained(p, ctx.world.service, ctx.world.endpoints):
                out.delete(p, "drained: no EndpointSlice lists the pod as ready")
        if old:
            return row
        row = replace(row, operation=replace(op, step=R.STEP_CREATE_PODS))
    row = _retarget(ctx, row, row_target, out)
    return _step_create_pods(ctx, row, pods, out, retry)


def _step_surge(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row:
    op = row.operation
    assert op is not None
    slot = 1 - row.active_ordinal
    surge_name = ctx.pod_name(row.index, slot)
    old_name = ctx.pod_name(row.index, row.active_ordinal)
    _delete_strays(ctx, pods, {surge_name, old_name}, out)
    surge = _by_name(pods, surge_name)
    old = _by_name(pods, old_name)
    if op.step == R.STEP_SURGE:
        if op.target_revision != row_target:
            if surge is not None:
                out.delete(surge, "the desired revision moved: the surge pod is abandoned")
            out.event(
                "Normal",
                "SurgeAbandoned",
                f"OMENative {ctx.instance_key(row.index)} abandoned surge to revision {op.target_revision}; "
                f"the desired revision is now {row_target}",
            )
            return replace(row, phase=R.READY, operation=None, target_revision=row.running_revision)
        row, done = _bring_up(ctx, row, surge, surge_name, slot, out)
        op = row.operation
        assert op is not None
        if done:
            row = replace(row, operation=replace(op, step=R.STEP_SURGE_DRAIN))
            if old is not None:
                out.gate(
                    old,
                    False,
                    f"replacement {surge_name} serves and is Available: drain {old_name}",
                    SURGE_DRAIN,
                )
            return row
        live_surge = surge if surge is not None and not surge.terminating and not surge.ended else None
        row, no_room = _unschedulable(ctx, row, live_surge, out)
        if no_room:
            grace = format_go_duration(ctx.world.settings.unschedulable_grace_period)
            msg = f"pod {surge_name} unschedulable for longer than {grace}"
            failed: Row | None = _fail(ctx, row, surge_name, None, "Unschedulable", msg, out, retry)
        else:
            failed = _check_failure(ctx, row, live_surge, surge_name, out, retry)
        if failed is None:
            return row
        if live_surge is not None:
            out.event(
                "Warning",
                "FailedSurgeTargetRecycled",
                f"OMENative {ctx.instance_key(row.index)} deleted failed surge pod {surge_name}; "
                f"{old_name} keeps serving",
            )
            out.delete(live_surge, "the surge failed: remove the replacement, keep the old pod serving")
        return replace(failed, phase=R.FAILED)
    # SurgeDrain: take the old pod out of rotation, prove it drained, delete it, then flip the slot.
    if old is not None and not old.terminating:
        out.gate(old, False, f"replacement {surge_name} serves: drain {old_name}", SURGE_DRAIN)
        if old.gate == "False" and drained(old, ctx.world.service, ctx.world.endpoints):
            out.delete(old, "drained: no EndpointSlice lists the pod as ready")
        return row
    if old is not None:
        return row  # terminating: wait until it is gone before the slot is reused
    out.event(
        "Normal",
        "RecreateUpdateCompleted",
        f"OMENative {ctx.instance_key(row.index)} updated to revision {op.target_revision} ({surge_name})",
    )
    return _complete(ctx, row, op.target_revision, slot)


def _unschedulable(ctx: Ctx, row: Row, pod: PodView | None, out: Out) -> tuple[Row, bool]:
    """While the surge pod cannot schedule the clock is parked (01 §4.6); past the grace it fails.

    Returns the row and whether the grace period is over.
    """
    op = row.operation
    assert op is not None
    since = pod.unschedulable_since if pod is not None else None
    grace = ctx.world.settings.unschedulable_grace_period
    if since is None:
        if op.waiting == "Unschedulable":
            op = replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now))
            return replace(row, operation=op), False
        return row, False
    if op.waiting != "Unschedulable":
        row = replace(row, operation=replace(op, waiting="Unschedulable", deadline=None))
    if ctx.now - since >= grace:
        return row, True
    out.wake(since + grace)
    return row, False


def _step_delete(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row | None:
    for p in live(pods):
        out.gate(p, False, "scale-down or teardown: leave rotation before deletion")
        if p.gate == "False" and drained(p, ctx.world.service, ctx.world.endpoints):
            out.delete(p, "drained: no EndpointSlice lists the pod as ready")
    if not pods:
        return None
    op = row.operation
    assert op is not None
    if op.deadline is not None:
        if ctx.now > op.deadline and not _overdue_announced(row, op.deadline):
            # Go workload/ops delete_batch.go announceOverdueDrains: once per overdue episode, recorded
            # on the row as lastFailure (reason DrainOverdue, time = the deadline), which the
            # DrainOverdue condition reads; the drain itself goes on.
            names = sorted(p.name for p in pods)
            detail = f"{len(pods)} pod(s) still Terminating ({', '.join(names)})"
            overdue = timedelta(seconds=round((ctx.now - op.deadline).total_seconds()))
            out.event(
                "Warning",
                "DrainOverdue",
                f"OMENative {ctx.instance_key(row.index)}: drain overdue by {format_go_duration(overdue)} "
                f"(deadline {format_time(op.deadline)}); {detail}",
            )
            failure = {
                "podName": names[0],
                "reason": "DrainOverdue",
                "message": detail,
                "time": format_time(op.deadline),
            }
            return replace(row, last_failure=failure)
        out.wake(op.deadline)
    return row


def _overdue_announced(row: Row, deadline: datetime) -> bool:
    lf = row.last_failure or {}
    return lf.get("reason") == "DrainOverdue" and lf.get("time") == format_time(deadline)


def _step_idle(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row:
    name = ctx.pod_name(row.index, row.active_ordinal)
    _delete_strays(ctx, pods, {name}, out)
    active = _by_name(pods, name)
    running = active is not None and not active.terminating and not active.ended
    if row.phase == R.READY and not running:
        out.event(
            "Normal",
            "InstanceDemoted",
            f"OMENative {ctx.instance_key(row.index)} lost all its pods; Phase=Pending until rebuilt",
        )
        return replace(row, phase=R.PENDING)
    if active is None or not running:
        return row
    lad = ladder(active, ctx.world.endpoints, ctx.min_ready, ctx.now)
    if lad.ready and row.phase in (R.READY, R.FAILED):
        out.gate(active, True, "all containers of the Instance are ready: enter rotation")
    if (
        row.phase == R.FAILED
        and lad.serving
        and lad.available
        and active.revision_hash == hash_of(row.target_revision)
    ):
        # The pod that missed its deadline came up after all: the Instance recovers on its target.
        return _complete(ctx, row, row.target_revision, row.active_ordinal)
    return row


def _park(ctx: Ctx, row: Row) -> Row:
    op = row.operation
    assert op is not None
    if op.waiting == "Paused":
        return row
    return replace(row, operation=replace(op, waiting="Paused", deadline=None))


def step_row(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row | None:
    """Advance one Instance by what this pass can do. ``None`` means the Instance is gone."""
    op = row.operation
    if op is None:
        return _step_idle(ctx, row, pods, out)
    if op.type == R.OP_DELETE:
        return _step_delete(ctx, row, pods, out)
    if is_reset_journal(op):
        # The operator's reset runs even under Freeze; the rebuild after it waits for the normal gates.
        return step_reset(ctx, row, pods, out)
    # Pause parks in-flight work (clock stopped, 01 §4.6); Recover still lets repairs (Create) run.
    if ctx.paused and (ctx.freeze or op.type == R.OP_UPDATE):
        return _park(ctx, row)
    if op.waiting == "Paused":
        # Unpaused: the full window again from now (01 §4.6).
        row = replace(row, operation=replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now)))
    op = row.operation
    assert op is not None
    if op.type == R.OP_CREATE:
        return _step_create(ctx, row, pods, out, retry, row_target)
    if op.strategy == RECREATE:
        return _step_recreate(ctx, row, pods, out, retry, row_target)
    return _step_surge(ctx, row, pods, out, retry, row_target)
