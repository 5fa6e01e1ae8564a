"""``plan(world)``: one pure pass from the observed world to the ordered actions.

Order inside a plan: the revision, the Service, then the status (which journals every operation this
pass starts or advances), then the pod writes that status describes, then pruning and events, then
the events of an answered ``ome.io/reset-instances`` request and then its removal (Go's order), then
the removal of an answered ``ome.io/release-held-revision`` and that answer's events. The
executor applies them in order and stops at the first failure, so a pod write never runs ahead of
the status that explains it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omereconcile.actions import Action, AddFinalizer, Plan, RecordEvent, WriteStatus
from omereconcile.planner.context import build_context
from omereconcile.planner.gang import (
    correct_pod_group_drift,
    has_stale_single_pod_groups,
    stale_single_pod_groups,
)
from omereconcile.planner.journal import counters_only
from omereconcile.planner.nodedeath import sweep_terminating
from omereconcile.planner.out import Out
from omereconcile.planner.release import answer_release
from omereconcile.planner.relocation import merge_migrations, owner_reference
from omereconcile.planner.reset import answer_reset
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.revisions import live_revisions, prune_actions, resolve_revision, roll_target
from omereconcile.planner.rollout import group_pods, plan_instances
from omereconcile.planner.rows import load_retry_blocks, load_rows
from omereconcile.planner.service import service_actions
from omereconcile.planner.snapshot import refuse_invalid_snapshot, scale_down_due
from omereconcile.planner.status import build_status, find_condition, set_condition
from omereconcile.planner.status_decode import refuse_undecodable_status
from omereconcile.planner.teardown import plan_teardown
from omereconcile.world import RenderBlock, World
from omerender import constants as c

__all__ = ["ROLLBACK_NOT_FOUND", "plan"]

# Our name for "rollbackToRevision names a ControllerRevision another object controls" (Go has no
# event for it: its reconciler does not check the controller, 01 §11.5): the replica rolls to the
# spec instead. A name that resolves to nothing rolls to the spec silently, as Go does.
ROLLBACK_NOT_FOUND = "RollbackRevisionNotFound"


def plan(world: World) -> Plan:
    rep = world.replica
    if (undecodable := refuse_undecodable_status(world)) is not None:
        # Go's entry read decodes the rows before the teardown branch and fails closed (status_decode).
        return undecodable
    if rep.deletion_timestamp is not None:
        return plan_teardown(world)
    if c.TEARDOWN_FINALIZER not in rep.finalizers:
        # Before any other work, so a delete that races the first pass still drains (01 §8.1).
        return Plan(
            (AddFinalizer(c.TEARDOWN_FINALIZER, "teardown needs the finalizer before anything is created"),),
            requeue_after=0.0,
            summary="add the teardown finalizer",
        )
    if isinstance(world.render, RenderBlock):
        return _blocked(world, world.render)
    desired = world.render
    decision = resolve_revision(world, desired)
    if decision.stale:
        return Plan(requeue_after=0.0, summary="render used an old collisionCount: re-render")
    if decision.collision_count is not None:
        n = decision.collision_count
        status = dict(rep.status)
        status["collisionCount"] = n
        return Plan(
            (
                WriteStatus(status, f"ControllerRevision {desired.name} is taken by other data"),
                RecordEvent(
                    "Warning",
                    "RevisionCollision",
                    f"InferenceReplica {rep.namespace}/{rep.name} ControllerRevision hash collision; "
                    f"CollisionCount bumped to {n}",
                ),
            ),
            requeue_after=0.0,
            summary=f"revision name collision: collisionCount -> {n}, re-render",
        )
    target, missing = roll_target(world, desired.name)
    ctx = build_context(world, desired, target, missing)
    out = Out(world.now)
    if missing is not None and rep.status.get("observedGeneration") != rep.generation:
        # Once per spec change: the first pass that observes this generation reports it.
        out.event(
            "Warning",
            ROLLBACK_NOT_FOUND,
            f"pacing.rollbackToRevision {missing} names a ControllerRevision that InferenceReplica "
            f"{rep.namespace}/{rep.name} does not control; rolling to the spec's revision "
            f"{desired.name} (name one of this replica's revisions, or remove the field)",
        )
    retry = RetryBook(
        load_retry_blocks(rep.status),
        f"{rep.namespace}/{rep.name}",
        ctx.component,
        policy=world.settings.update_retry,
    )
    # The operator's release of a Held block is answered before any attempt consults the book.
    release = answer_release(rep.annotations, retry, rep.namespace, rep.name)
    observed = load_rows(rep.status)
    if scale_down_due(observed, ctx.desired) and (refused := refuse_invalid_snapshot(world, "scale-down")):
        # Go fails the pass closed before any lifecycle effect (scaleDownPodObservationRequired).
        return refused
    if ctx.ledger is not None:
        # reconcileRelocationDirectives: an Instance Ready with no operation proved its placement.
        ctx.ledger.prune_ready(ctx.component, observed)
    # The operator's reset request journals its resets on the rows before the instances are planned.
    reset = answer_reset(ctx, observed, group_pods(ctx, world.pods))
    if has_stale_single_pod_groups(ctx, reset.rows) and (
        refused := refuse_invalid_snapshot(world, "stale-PodGroup cleanup")
    ):
        # Go reconcileStaleSinglePodGroups reads an authoritative pod snapshot first and fails the
        # pass on an owned pod with a malformed index (TestReconcile_MultiToSinglePodGroupRejects...).
        return refused
    if stale_single_pod_groups(ctx, reset.rows, group_pods(ctx, world.pods), out):
        # Go gates the workload until the stale PodGroup is observed absent (reconcileStaleSinglePodGroups).
        gated = [decision.create] if decision.create is not None else []
        return Plan(
            (*gated, *service_actions(ctx), *out.actions),
            requeue_after=out.requeue_after(),
            summary="a stale PodGroup of a now single-pod Instance goes first",
        )
    by_index = group_pods(ctx, world.pods)
    # Go EnsurePodGroupsWithState: every planned gang's PodGroup of ours is kept in line each pass.
    correct_pod_group_drift(ctx, reset.rows, retry, by_index, out)
    result = plan_instances(ctx, reset.rows, world.pods, retry, out)
    # Go SweepStuckTerminatingPods: every Terminating pod, whether or not an operation waits on it.
    sweep_terminating(ctx, by_index, out)
    status = build_status(ctx, result.rows, by_index, result.hold, result.held_indices, retry, out)
    ledger_write = None
    if ctx.ledger is not None:
        migrations = merge_migrations(
            rep.status.get("migrations") or [], ctx.ledger.records, observed, world.now
        )
        if migrations or "migrations" in status:
            status["migrations"] = migrations
        ledger_write = ctx.ledger.write(owner_reference(world))

    actions: list[Action] = []
    if decision.create is not None:
        actions.append(decision.create)
    actions.extend(service_actions(ctx))
    if ledger_write is not None:
        # Go persists the ledger ahead of the status that clears the attempt: a pass that dies
        # between the two finds its directive again (the replay guard) instead of losing it.
        actions.append(ledger_write)
    if status != dict(rep.status):
        actions.append(_status_write(rep.status, status))
    actions.extend(out.actions)
    if ctx.ledger is not None and (late := ctx.ledger.write_after_pods(owner_reference(world))) is not None:
        actions.append(late)  # the force-delete audit rows, after the deletes they record
    actions.extend(prune_actions(world, live_revisions(status, status["instanceStatuses"], [target])))
    actions.extend(out.events)
    if reset.remove is not None:
        # Answered: record the answer, then remove the request, after the status and pod writes (Go
        # inferencereplica/reset_instances.go @ ae683e3f consumeResetInstancesRequest: the events,
        # then the consume). A redelivery after a failed removal is answered from what is left
        # (planner/reset.py: "nothing to reset" once the pods are gone).
        actions.extend(reset.events)
        actions.append(reset.remove)
    if release.remove is not None:
        actions.append(release.remove)
        actions.extend(release.events)
    summary = _summary(status, result.hold)
    return Plan(tuple(actions), out.requeue_after(), summary)


def _status_write(old: Mapping[str, Any], status: dict[str, Any]) -> WriteStatus:
    """One status write per pass. It is marked ``counters_only`` when no operation started, changed
    step or ended and no condition changed status or reason: then every pod write of this plan follows
    from a step the API already holds, and only the counts are new."""
    if counters_only(old, status):
        return WriteStatus(
            status, "publish this pass's counts (the journal is unchanged)", counters_only=True
        )
    return WriteStatus(status, "journal this pass's Instance operations and counts")


def _summary(status: dict[str, Any], hold: Any) -> str:
    ready = find_condition(status.get("conditions", []), "Ready") or {}
    text = f"Ready={ready.get('status')} {ready.get('reason')}: {ready.get('message')}"
    if hold is not None:
        text += f"; hold {hold.gate}: {hold.reason}"
    return text


def _blocked(world: World, block: RenderBlock) -> Plan:
    """No pod templates: Ready=False with the block, a Warning when new or changed, pods untouched.

    ``inferencereplica/render.go`` ``reportRenderBlocked`` (ome-projects/ome @ a543351b): the Warning
    is recorded when the Ready condition is absent or differs in status, reason, message or
    observedGeneration — so an edit of the spec that leaves the replica blocked for the same reason
    says it again at the new generation."""
    rep = world.replica
    old = dict(rep.status)
    conds = [dict(cd) for cd in old.get("conditions", []) or []]
    prev = find_condition(conds, "Ready")
    conds = set_condition(conds, "Ready", "False", block.reason, block.message, rep.generation, world.now)
    status = {**old, "conditions": conds, "observedGeneration": rep.generation}
    actions: list[Action] = []
    if status != old:
        actions.append(WriteStatus(status, f"render blocked: {block.reason}"))
    changed = prev is None or (
        prev.get("status"),
        prev.get("reason"),
        prev.get("message"),
        prev.get("observedGeneration"),
    ) != ("False", block.reason, block.message, rep.generation)
    if changed:
        actions.append(RecordEvent("Warning", block.reason, block.message))
    return Plan(tuple(actions), None, f"render blocked: {block.reason}: {block.message}")
