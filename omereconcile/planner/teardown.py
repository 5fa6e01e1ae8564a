"""Deletion behind the ``ome.io/ir-teardown`` finalizer (01 §8.1): desired Instances become zero, every
Instance drains and goes through the scale-down pipeline, then the Service goes and the finalizer lifts.
A refs replica tears down without rendering, so nothing here reads the render."""

from __future__ import annotations

from omereconcile.actions import Action, DeleteService, Plan, RecordEvent, RemoveFinalizer, WriteStatus
from omereconcile.planner.context import build_context
from omereconcile.planner.gang import POD_GROUP_RECHECK
from omereconcile.planner.nodedeath import sweep_terminating
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import owned
from omereconcile.planner.relocation import owner_reference
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rollout import group_pods, plan_instances
from omereconcile.planner.rows import load_retry_blocks, load_rows
from omereconcile.planner.snapshot import refuse_invalid_snapshot
from omereconcile.planner.status import teardown_status
from omereconcile.settings import format_go_duration
from omereconcile.world import DesiredRevision, World
from omerender import constants as c

__all__ = ["plan_teardown"]


def _escape(world: World) -> str:
    return (
        f"manual escape: kubectl patch inferencereplica {world.replica.name} -n {world.replica.namespace} "
        """--type=merge -p '{"metadata":{"finalizers":null}}'"""
    )


def plan_teardown(world: World) -> Plan:
    rep = world.replica
    if c.TEARDOWN_FINALIZER not in rep.finalizers:
        return Plan(summary="replica is being deleted and holds no teardown finalizer of ours")
    status = rep.status
    spec_rev = str(status.get("updateRevision") or "")
    current = str(status.get("currentRevision") or spec_rev)
    ctx = build_context(world, DesiredRevision(spec_rev, b"", ""), current, None)
    selector = f'parent="{ctx.prefix}", component="{ctx.component}"'
    remaining = [p for p in world.pods if owned(p, ctx.prefix, ctx.component)]
    # The finalizer also waits for the PodGroups of ours to be authoritatively absent (01 §8.1).
    groups = [g for g in world.pod_groups if g.owner_uid == rep.uid]
    deadline = world.settings.teardown_deadline
    dts = rep.deletion_timestamp
    assert dts is not None
    if deadline is not None and world.now >= dts + deadline:
        msg = (
            f"teardown deadline {format_go_duration(deadline)} exceeded ({len(remaining)} owned pod(s) "
            f"observed; selector: {selector}); releasing finalizer {c.TEARDOWN_FINALIZER} to background GC; "
            + _escape(world)
        )
        return Plan(
            (
                RecordEvent("Warning", "TeardownDeadlineExceeded", msg),
                RemoveFinalizer(c.TEARDOWN_FINALIZER, "teardown deadline exceeded: hand over to GC"),
            ),
            summary="teardown deadline exceeded",
        )

    # Go teardown.go refuses teardown effects while an owned pod has no valid instance index
    # (planner/snapshot.py); the deadline above still hands the replica to the garbage collector.
    refused = refuse_invalid_snapshot(world, "teardown")
    if refused is not None:
        return refused
    out = Out(world.now)
    retry = RetryBook(load_retry_blocks(status), f"{ctx.namespace}/{ctx.name}", ctx.component)
    result = plan_instances(ctx, load_rows(status), world.pods, retry, out)
    # Go escalateStuckTerminatingPods: a teardown waiting on pods a dead node will never finish gets the
    # same force-delete escalation as the scale-down path.
    sweep_terminating(ctx, group_pods(ctx, world.pods), out)
    new_status = teardown_status(status, result.rows)
    actions: list[Action] = []
    if new_status != dict(status):
        actions.append(WriteStatus(new_status, "record the drains of the teardown"))
    actions.extend(out.actions)
    if ctx.ledger is not None and (late := ctx.ledger.write_after_pods(owner_reference(world))) is not None:
        actions.append(late)  # the force-delete audit rows of the sweep, after its deletes
    if remaining or groups:
        if deadline is None:
            why = (
                f"lifecycle.teardown.deadline configured but invalid: {world.settings.teardown_deadline_invalid}"
                if world.settings.teardown_deadline_invalid
                else "no lifecycle.teardown.deadline configured"
            )
            out.event(
                "Warning",
                "TeardownBlocked",
                f"teardown blocked: {len(remaining)} owned pod(s) and {len(groups)} owned PodGroup(s) remain "
                f"(selector: {selector}); finalizer {c.TEARDOWN_FINALIZER} holds until cleanup completes "
                f"({why}); {_escape(world)}",
            )
        else:
            out.wake(dts + deadline)
        if groups and not remaining:
            out.wake(world.now + POD_GROUP_RECHECK)  # PodGroups are not watched
        actions.extend(out.events)
        return Plan(
            tuple(actions),
            out.requeue_after(),
            f"teardown: {len(remaining)} pod(s) and {len(groups)} PodGroup(s) remain",
        )
    if world.service.exists and not world.service.terminating:
        actions.append(DeleteService(ctx.service_name, world.service.uid, "teardown: every pod is gone"))
    actions.extend(out.events)
    actions.append(
        RemoveFinalizer(c.TEARDOWN_FINALIZER, "teardown complete: no owned pod or PodGroup remains")
    )
    return Plan(tuple(actions), None, "teardown complete")
