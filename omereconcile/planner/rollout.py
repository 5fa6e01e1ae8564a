"""Fleet decisions: which Instances exist (scale), which move now (partition, pause, budgets, retry),
then one step of every Instance."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from omereconcile.actions import DeletePodGroup
from omereconcile.planner import rows as R
from omereconcile.planner.admission import (
    Admission,
    ExtraPodSurge,
    crashed_not_serving,
    extra_pod_surge,
    floor_hold_reason,
    rolled_not_serving,
    standing_hold,
)
from omereconcile.planner.context import SURGE, Ctx, hash_of
from omereconcile.planner.gang import RESTART_POLICY_RECREATE, gang_broken, gang_serving
from omereconcile.planner.gang_advice import maybe_gang_split_risk, maybe_no_gang_scheduler
from omereconcile.planner.gang_ops import (
    is_gang_surge_source,
    is_gang_surge_target,
    start_gang_restart,
    start_gang_surge,
    step_gang_surge,
    step_orphan_target,
    surge_index_for,
)
from omereconcile.planner.inplace import (
    IN_PLACE_REFUSED,
    MODE_IN_PLACE,
    MODE_RECREATE,
    MODE_SURGE,
    STEP_IN_PLACE,
    cannot_restore_message,
    choose_mode,
    in_place_cannot_restore,
    refusal_message,
)
from omereconcile.planner.instances import park, start_create, start_delete, start_update, step_row
from omereconcile.planner.ladder_hold import ladder_hold, ladder_rebuilds
from omereconcile.planner.out import Out
from omereconcile.planner.plan_indices import instance_plan_indices, lowest_unused_index, scale_down_extras
from omereconcile.planner.podstate import ladder, owned
from omereconcile.planner.restart import (
    demoted_ready_restarts,
    repair_yields,
    single_pod_restart_reason,
    spent_repair,
)
from omereconcile.planner.retry import HELD_STATE, RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import complete
from omereconcile.planner.surge import SURGE_STEPS, failed_target_recovery
from omereconcile.world import PodView, format_time
from omerender import constants as c

__all__ = ["Hold", "RolloutResult", "partition_held", "plan_instances"]


@dataclass(frozen=True, slots=True)
class Hold:
    gate: str
    reason: str
    # Go's ``ladderHold`` words (planner/ladder_hold.py): the status publishes them as the pass's
    # verdict, where another retry-gate hold of ours is worded by the status layer from the block.
    ladder: bool = False


@dataclass(frozen=True, slots=True)
class RolloutResult:
    rows: list[Row]
    hold: Hold | None
    held_indices: frozenset[int]  # Instances partition keeps on their prior revision


def group_pods(ctx: Ctx, pods: Sequence[PodView]) -> dict[int, list[PodView]]:
    out: dict[int, list[PodView]] = {}
    for p in pods:
        # Pods under our selector without an Instance identity are orphans: never ours to delete.
        if not owned(p, ctx.prefix, ctx.component) or p.index is None or p.incarnation is None:
            continue
        out.setdefault(p.index, []).append(p)
    return out


def _adopt(ctx: Ctx, rows: list[Row], by_index: Mapping[int, list[PodView]]) -> list[Row]:
    """Pods with no row (status lost or reset): adopt them as Ready Instances at their revision, so
    nothing is orphaned; the normal passes then roll, repair or scale them. A pod that ended (Failed
    or Succeeded) backs nothing and is not adopted: its index is a missing target the scale-up
    creates (Go ``TestCreate_TerminalPodIsMissing``, ome-projects/ome
    ``workload/ops/terminal_pods_test.go`` @ ae683e3f, over ``ops/create.go`` ``Create``)."""
    known = {r.index for r in rows}
    by_hash = {hash_of(r.name): r.name for r in ctx.world.revisions}
    for index, pods in sorted(by_index.items()):
        if index in known:
            continue
        alive = sorted((p for p in pods if not p.terminating and not p.ended), key=lambda p: p.ordinal or 0)
        if not alive:
            continue
        p = alive[0]
        rev = by_hash.get(p.revision_hash, "")
        rows.append(
            Row(
                index=index,
                incarnation=p.incarnation or 1,
                phase=R.READY,
                running_revision=rev,
                target_revision=rev,
                active_ordinal=0 if ctx.gang else p.ordinal or 0,
            )
        )
    return sorted(rows, key=lambda r: r.index)


def _scale(
    ctx: Ctx, rows: list[Row], by_index: Mapping[int, list[PodView]], retry: RetryBook, out: Out
) -> list[Row]:
    # Go ``instancePlanIndices`` (workload/plan.go; ``planner/plan_indices.py``): live gang surge
    # pairs are pinned, the steady rows kept in ``scaleDownRank`` order, the lowest index first within
    # a rank, and a failed surge source's marker follows it in or out. The rows outside the plan of
    # the rows no Delete owns drain and go (a row already deleting is its scale-down wave's and never
    # displaces a live row: Go's ``DeleteBatch`` runs one durable wave, whose body is not read here);
    # a replacement's marker left outside (no live source names it) is reaped by
    # ``step_orphan_target`` once its source is gone. A row with a pod on a cordoned node ranks last.
    live = [r for r in rows if r.phase != R.DELETING]
    plan = instance_plan_indices(live, ctx.desired, retry, _cordoned(ctx, rows, by_index))
    extras = {
        i
        for i in scale_down_extras(live, plan)
        if not any(r.index == i and is_gang_surge_target(r) for r in rows)
    }
    if extras:
        rows = [start_delete(ctx, r, out) if r.index in extras else r for r in rows]
    # The scale-up opens the indices the plan over every row (a deleting one included) has no row
    # for: an index a Delete owns that the plan wants again finishes its delete first and no other
    # index is opened meanwhile (Go ``TestPlan_DeleteOwnedDesiredIndexFinishesBeforeRecreate``,
    # plan_decision_test.go @ 4dfb96b1). Each new Instance takes the lowest index no row nor pod holds.
    missing = len(set(instance_plan_indices(rows, ctx.desired, retry)) - {r.index for r in rows})
    if missing and not ctx.paused:
        # An index with no row is a fresh start, gated by its target's RetryBlock as a Failed row's
        # rebuild is (Go ``ops/create.go`` ``allowCreateForMissingInstance``, ome-projects/ome
        # ae683e3f: ``createFreshStart`` covers a missing status slot; ``create_retryblock_test.go``
        # ``TestCreate_NoStatusHeldBlock_Denied``): a Held block, a Backoff not yet due, or an
        # attempt at it already in flight opens no new Instance; a denied start waits on the block.
        state, when = retry.gate(ctx.target, ctx.now, _create_attempt_in_flight(rows, ctx.target))
        if state is not None:
            out.wake(when)
            missing = 0
        else:
            retry.started(ctx.target)
        # An index held only by pods that ended is free (Go: a terminal pod is absent); the Create
        # there retires the dead pod before it creates the name again.
        held = {i for i, pods in by_index.items() if any(p.terminating or not p.ended for p in pods)}
        used = {r.index for r in rows} | held
        for _ in range(missing):
            index = lowest_unused_index(used)
            used.add(index)
            # New Instances start at the roll target, never at an old revision (03 §7 lesson 9).
            rows.append(start_create(ctx, Row(index=index), ctx.target, out, recycle=False, new=True))
    return sorted(rows, key=lambda r: r.index)


def _cordoned(ctx: Ctx, rows: Sequence[Row], by_index: Mapping[int, list[PodView]]) -> set[int]:
    """Go ``inferencereplica/cordon.go`` ``cordonedInstances`` (ome-projects/ome eaf389d8): the
    Instances with a pod on a cordoned node (``spec.unschedulable``), for the scale-down to remove
    first; read only while the replica holds more Instances than it wants (otherwise the preference
    decides nothing). Nodes the watch does not hold, or no Node observation at all, cordon nothing.

    Only a pod still running on the node counts (Go ``workload/query/nodes.go`` @ 245145f4
    ``CordonedInstances`` / ``podHoldsCordonedNode``, pinned by ``nodes_test.go`` @ eaf389d8): a pod
    already terminating, Failed or Succeeded holds nothing there, and an unbound pod sits on no node.
    Before, any pod naming a cordoned node counted, so an Instance whose only pod there was on its way
    out was still removed first."""
    nodes = ctx.world.nodes
    if not nodes or len(rows) <= ctx.desired:
        return set()
    return {
        index
        for index, pods in by_index.items()
        if any(
            not p.terminating
            and not p.ended
            and p.node_name
            and (node := nodes.get(p.node_name)) is not None
            and node.unschedulable
            for p in pods
        )
    }


def partition_held(rows: Sequence[Row], partition: int, target: str) -> frozenset[int]:
    """The Instances a partition keeps on their prior revision: the lowest-indexed ``partition`` rows
    off the target that no Update attempt is moving (Go ``ops.PartitionHeldIndices``, its rule as
    ``workload/plan_test.go`` ``TestPartitionHeldIndices`` pins it, ome-projects/ome 245145f4: an
    Update in flight, a gang surge's marker and the Failed continuation of an Update are never held;
    the hold falls to the next old-revision row; ``plan_decision_test.go``
    ``TestPlan_Update_HeldByPartition``, 4dfb96b1: an ``Updating`` row is mid-update whatever its
    operation says)."""
    candidates = [
        r
        for r in rows
        if r.phase not in (R.DELETING, R.UPDATING)
        and not _on_target(r, target)
        and not (r.operation is not None and r.operation.type == R.OP_UPDATE)
    ]
    return frozenset(r.index for r in candidates[:partition])


def _full_create_pass(ctx: Ctx, rows: Sequence[Row], held: frozenset[int], target: str) -> bool:
    """Whether Go runs its full Create pass this pass, the one that rebuilds a Ready Instance whose
    pods are gone (ome-projects/ome ``workload/reconcile.go`` ``createPass``: ``createScopeFull`` at
    its own position, after the update pass). Not while paused (``CreateCommittedIndices``); not
    while an update is in flight, gated or started (``executeUpdatePass`` then runs only
    ``CreateFreshIndices``, whose ``surgeFreeIndex`` excludes a Ready row); not while a scale-down
    wave is still draining (it stops the pass's actions). Read here as: no row carries an Update, no
    row is Deleting, and every settled Ready or Failed row is on the target or held by the partition
    (none is the update pass's to start)."""
    if ctx.paused:
        return False
    for r in rows:
        if r.phase == R.DELETING or (r.operation is not None and r.operation.type == R.OP_UPDATE):
            return False
        settled = r.operation is None and r.phase in (R.READY, R.FAILED)
        if settled and r.index not in held and not _on_target(r, target):
            return False
    return True


def _unbacked_ready(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> bool:
    """A Ready Instance with no operation and no pod object left but ones that ended (Go's truth-pass
    screen, ``planUnbackedDemotions``: ``len(cached[idx]) == 0``, a Terminating pod still counting;
    and ``ops/create.go`` ``missingPodTargets``, the 53,576-character version: "a terminal pod is
    absent for this purpose", Terminating or not, so a pod that ended never backs the row; the Create
    step recycles it, ``steps.bring_up``. Go test: the 612,458-character root reconcile_test,
    ``TestPreemptedPod_ReturnsAndSaysWhyUntilPlaced``; before, a Terminating pod that had ended kept
    the row Ready until it was gone): Go's full Create pass rebuilds it and re-stamps its phase in the
    same pass (ome-projects/ome ``workload/plan_decision.go`` ``Plan``: "Unpaused reconciles skip it [the truth pass]: Create both
    recovers the pods and re-stamps the phase in the same pass"; ``ops/create.go``
    ``createFilteredBatched``: the ``Creating`` intent committed, then ``createMissingPods``; the
    revision is ``createRevision``'s, the target for an Instance with no live pod, the running one
    for an Instance the partition holds). Under ``RecreateInstanceOnPodRestart`` the restart pass owns
    the loss (``_demoted_ready_restarts``). Before issue 37 (goY) ours published the row ``Pending``
    with an ``InstanceDemoted`` Warning first and rebuilt it one pass later; the demotion
    (``instances._step_idle``) is now left to where Go demotes: while paused (the truth pass), or when
    the full Create pass does not run (the status publication's ``DemotableReady``)."""
    if row.phase != R.READY or row.operation is not None or ctx.restart_policy == RESTART_POLICY_RECREATE:
        return False
    return all(p.ended for p in pods)


def _on_target(row: Row, target: str) -> bool:
    if row.operation is not None and row.operation.type != R.OP_DELETE:
        return row.operation.target_revision == target
    return row.running_revision == target


def _serving(ctx: Ctx, pods: Sequence[PodView]) -> bool:
    if ctx.gang:
        return gang_serving(ctx, pods)
    return any(ladder(p, ctx.world.endpoints, ctx.min_ready, ctx.now).serving for p in pods)


def plan_instances(
    ctx: Ctx, rows: list[Row], pods: Sequence[PodView], retry: RetryBook, out: Out
) -> RolloutResult:
    by_index = group_pods(ctx, pods)
    rows = _adopt(ctx, list(rows), by_index)
    rows = _scale(ctx, rows, by_index, retry, out)
    target = ctx.target

    # Partition counts Instances: the lowest-indexed off-target ones not already moving stay (01 §5.4).
    held = partition_held(rows, ctx.partition, target)

    def row_target(r: Row) -> str:
        if r.index in held or ctx.paused:
            # Held or paused Instances are repaired at what they run (or were last moving to).
            return (
                r.running_revision
                or (r.operation.target_revision if r.operation else "")
                or r.target_revision
                or target
            )
        return target

    hold: Hold | None = None
    updates: list[Row] = []
    new_rows: list[Row] = []
    full_create = _full_create_pass(ctx, rows, held, target)
    for r in rows:
        if spent_repair(r) and repair_yields(ctx, r, target, retry):
            # Go plan_decision.go restartTrigger: a Restart parked at Failed whose revision is off an
            # open roll target is not the restart pass's (RepairYieldsToTarget); the pass that rebuilds
            # the row at the target takes it (Go's update trigger reads Failed as Ready,
            # ``_failed_row_rolls``), so the spent operation ends here.
            r = replace(r, operation=None)
        if r.operation is not None or r.phase == R.DELETING:
            new_rows.append(r)
            continue
        pods_r = by_index.get(r.index, [])
        if not ctx.paused and r.index not in held and failed_target_recovery(ctx, r, pods_r, out):
            # A failed surge's CreateContainerError replacement left standing: recycled off a node the
            # ledger excludes, or parked for the operator (planner/surge.py failed_target_recovery).
            new_rows.append(r)
            continue
        if _adopts_target(ctx, r, pods_r, rows, retry):
            # Go ``ops/update.go`` ``evaluateUpdateTriggerPods`` (AdoptRevision) and
            # ``BackfillRunningRevision`` (ome-projects/ome 58a57f25 and ae683e3f; pinned by
            # ``update_retryblock_test.go`` ``TestDetectUpdate_BackfillAdoptsRuntimeReadyPods``): a
            # row with no running revision whose pods all carry the target and are runtime-ready is
            # stamped Ready on the target (which prunes its RetryBlock), not rolled onto it again.
            live = [p for p in pods_r if not p.terminating]
            r = complete(ctx, r, target, 0 if ctx.gang else min(p.ordinal or 0 for p in live))
        serving = _serving(ctx, pods_r)
        if demoted_ready_restarts(ctx, r, pods_r) and not repair_yields(ctx, r, target, retry):
            # Go ``ops/restart.go`` ``DetectRestartTriggerWithPods`` (ome-projects/ome, the version that
            # carries ``readCrashLoopEpisode``): under ``RecreateInstanceOnPodRestart`` a row demoted
            # for losing every pod (``types.DemotedReady``: Pending, no operation, its running revision
            # kept) is read as Ready is, "pod count 0 below desired 1", and rebuilt by a Restart at that
            # revision, unless its RetryBlock denies the rebuild (``rebuildRetryBlockDenies``). The
            # restart pass runs under a standard pause, not under a frozen one (``workload/
            # plan_decision.go`` ``Plan``; ``plan_decision_test.go`` ``TestPlan_Restart_Selects
            # TriggeredInstances``, ``TestPlan_Paused_RepairRunsFleetChangesDoNot``, 4dfb96b1).
            # A Ready row whose pod is gone is selected in the same pass (Go ``ops/restart.go``
            # ``DetectRestartTriggerWithPods`` @ ae683e3f: "Phase=Ready and ... the live pod count is below
            # desired", no RetryBlock gate: "a Ready Instance is by definition running a revision that
            # works"); the newest ``Plan`` runs the restart selection on the row as observed, "ahead of
            # the truth pass", and leaves the demotion to the status publication "at the end of every
            # pass", which a row with an operation does not meet. So no ``Pending`` pass comes first.
            # A row off an open roll target is left to Create, which rebuilds it there (``restart.repair_yields``).
            rev = r.running_revision
            state, when = (
                (None, None)
                if r.phase == R.READY
                else retry.gate(rev, ctx.now, _create_attempt_in_flight(rows, rev))
            )
            if ctx.freeze or state is not None:
                if state is not None:
                    out.wake(when)
                new_rows.append(r)
                continue
            standing = sum(1 for p in pods_r if not p.ended)
            # A Ready row names what ended its pod (restart.single_pod_restart_reason, Go's Ready branch).
            why = (single_pod_restart_reason(ctx, r, pods_r) if r.phase == R.READY else None) or (
                f"pod count {standing} below desired 1"
            )
            new_rows.append(start_gang_restart(ctx, r, pods_r, why, out))
            continue
        if not ctx.paused and r.index not in held and _failed_pods_roll(r, pods_r):
            # Go ``ops/update.go`` ``evaluateUpdateTriggerPods`` (ome-projects/ome 58a57f25, the newest
            # stored): the adoption refused above, a Failed row with no running revision whose pod set
            # stands (a deadline-disposed create, its pods wedged or unready on the target, or on
            # another revision) takes the ordinary roll, paced by the target's RetryBlock; Create
            # owns only a row with no pods. See ``_failed_pods_roll``.
            updates.append(r)
            new_rows.append(r)
            continue
        if (
            r.phase == R.PENDING
            or (r.phase == R.FAILED and not serving and not _failed_row_rolls(ctx, r, held))
            or (full_create and _unbacked_ready(ctx, r, pods_r))
        ):
            # Repair: a Pending Instance is rebuilt (and, when the full Create pass runs, a Ready one
            # no pod backs any more, ``_unbacked_ready``); a Failed one that serves nothing is rebuilt after
            # its revision's backoff, unless it runs another revision than the target, which the roll
            # takes (``_failed_row_rolls``). While paused, Go (workload/plan_decision.go Plan, ops/create.go
            # CreateCommittedIndices) runs the Create pass only for a create already committed, and
            # PauseModeRecover repairs through the RestartPolicy alone: so under Recover only an
            # Instance whose restart policy repairs (a gang by default) is rebuilt, at its own
            # revision; a single-pod Instance (policy None) and every Instance under Freeze wait.
            if ctx.paused and (ctx.freeze or ctx.restart_policy == "None"):
                new_rows.append(r)
                continue
            rt = row_target(r)
            # Go ``allowCreateForMissingInstance``: a fresh create is one attempt of the ladder too,
            # denied while an attempt at the revision (an Update at it, or any Create) is in flight.
            attempt = _create_attempt_in_flight(rows, rt)
            state, when = retry.gate(rt, ctx.now, attempt) if r.phase == R.FAILED else (None, None)
            if state is not None:
                out.wake(when)
                hold = hold or _retry_hold(state, rt, when)
                new_rows.append(r)
                continue
            if r.phase == R.FAILED:
                retry.started(rt)
            new_rows.append(start_create(ctx, r, rt, out, recycle=r.phase == R.FAILED, new=False))
            continue
        if (
            r.index not in held
            and not ctx.paused
            and not _on_target(r, target)
            and not _restart_owns(ctx, r, pods_r)
        ):
            updates.append(r)
        new_rows.append(r)

    # Go's update pass (``workload/reconcile.go`` ``executeUpdatePass``) walks the Instances in index
    # order, stepping each operation already in flight and opening each admitted start as it comes to
    # it; each Instance's writes gather on its own accumulator and reach the plan in that order.
    per_index: dict[int, Out] = {}

    def out_for(index: int) -> Out:
        return per_index.setdefault(index, Out(out.now))

    # The Instances already on the target that do not serve it, read before any step (Go's
    # ``planUpdateSelection``); under SurgeThenDrain they may keep every surge source in rotation.
    rolled = rolled_not_serving(ctx, new_rows, by_index, held, out)
    floor = floor_hold_reason(ctx, rolled)
    extra = extra_pod_surge(ctx, new_rows, by_index, rolled)
    crashed, crashed_out = (
        crashed_not_serving(ctx, new_rows, by_index, rolled, out) if rolled and not ctx.paused else ([], [])
    )
    ladder_found = None if ctx.paused else _ladder_hold(ctx, new_rows, by_index, rolled, crashed, retry, out)
    stands_behind = (
        None
        if ctx.paused
        else _standing_hold(ctx, new_rows, rolled, crashed, crashed_out, extra, ladder_found)
    )
    started: dict[int, Row] = {}
    if updates:
        started, budget_hold = _start_updates(
            ctx, new_rows, updates, by_index, rolled, extra, retry, out, out_for, ladder_found
        )
        hold = budget_hold or hold
    if hold is None and not started:
        # Go ``executeUpdatePass``: with nothing admitted and no denial, the pass reports the hold
        # the rolled Instances stand behind (``selection.StandingHold``; a pause reports none). With
        # nothing selected (no start to offer, no Update in flight), ``Plan`` reports
        # ``Decision.LadderHold`` at the update position ahead of ``Decision.StandingHold``.
        selected = any(r.operation is not None and r.operation.type == R.OP_UPDATE for r in new_rows)
        hold = stands_behind if selected else (ladder_found or stands_behind)
    if not ctx.paused:
        for r in new_rows:
            op = r.operation
            if op is not None and r.index not in started and _reruns_entry_stamp(r):
                retry.started_since(op.target_revision, op.started_at)
    ctx = replace(ctx, drain_withheld=floor)
    known = {r.index for r in new_rows}
    rows = [started.get(r.index, r) for r in new_rows]
    rows = sorted(rows + [r for i, r in started.items() if i not in known], key=lambda r: r.index)

    stepped = _step_gang_surges(ctx, rows, by_index, retry, out_for)
    for r in rows:
        if r.index in stepped:
            continue
        if is_gang_surge_target(r):
            stepped[r.index] = step_orphan_target(ctx, r, by_index.get(r.index, []), out_for(r.index))
        else:
            stepped[r.index] = step_row(
                ctx,
                r,
                by_index.get(r.index, []),
                out_for(r.index),
                retry,
                row_target(r),
                full_create=full_create,
            )
    for index in sorted(per_index):
        out.absorb(per_index[index])
    maybe_no_gang_scheduler(ctx, rows, retry, out)
    maybe_gang_split_risk(ctx, out)
    if out.drain_holds:
        # A drain the floor withheld is progress withheld, reported even when another Instance moved
        # (``executeUpdatePass``: ``DrainHolds.First()`` overrides the pass's denial).
        hold = Hold("Budget", out.drain_holds[0])
    result = [
        _counts(ctx, nr, by_index.get(nr.index, [])) for _, nr in sorted(stepped.items()) if nr is not None
    ]
    _release_stray_pod_groups(ctx, rows, by_index, out)
    return RolloutResult(result, hold, held)


def _step_gang_surges(
    ctx: Ctx,
    rows: Sequence[Row],
    by_index: Mapping[int, list[PodView]],
    retry: RetryBook,
    out_for: Callable[[int], Out],
) -> dict[int, Row | None]:
    """Each gang surge source with its replacement, stepped together (``ops/update_gang.go``)."""
    by_row = {r.index: r for r in rows}
    stepped: dict[int, Row | None] = {}
    for src in rows:
        op = src.operation
        if not is_gang_surge_source(src) or op is None or op.surge_index is None:
            continue
        k = op.surge_index
        if ctx.paused:
            # A gang SurgeThenDrain cycle is parked whole under either pause mode, both rows with the
            # pause's token and their clocks stopped: it keeps the source serving from its first pass
            # to its last, so parking it costs the Instance no capacity and closes no step half-open
            # (Go ``workload/plan_decision.go`` ``pausedUpdateContinuations``/``gangSurgeRow``, the
            # newest stored version; ``holds/pause.go`` ``reportPause`` @ dcfb4135). Before: under
            # ``Recover`` the replacement gang was still brought up to the hand-over bar.
            tgt = by_row.get(k)
            stepped[src.index] = park(ctx, src)
            stepped[k] = park(ctx, tgt) if tgt is not None and tgt.operation is not None else tgt
            continue
        new_src, new_tgt = step_gang_surge(
            ctx,
            src,
            by_row.get(k),
            by_index.get(src.index, []),
            by_index.get(k, []),
            out_for(src.index),
            retry,
        )
        stepped[src.index], stepped[k] = new_src, new_tgt
    return stepped


def _release_stray_pod_groups(
    ctx: Ctx, rows: Sequence[Row], by_index: Mapping[int, list[PodView]], out: Out
) -> None:
    """A PodGroup of ours whose Instance has neither a row nor a pod is left over: it goes."""
    for group in ctx.world.pod_groups:
        index = group.index
        if (
            index is None
            or group.terminating
            or group.owner_uid != ctx.world.replica.uid
            or any(r.index == index for r in rows)
            or by_index.get(index)
        ):
            continue
        out.actions.append(
            DeletePodGroup(group.name, group.uid, f"PodGroup of Instance {index}, which is gone")
        )


def _retry_hold(state: str, target: str, when: datetime | None) -> Hold:
    if state == HELD_STATE:
        return Hold("Held", f"revision {target} is held after repeated failures")
    return Hold("RetryBlock", f"revision {target} retries at {format_time(when) if when else 'later'}")


def _ladder_hold(
    ctx: Ctx,
    rows: Sequence[Row],
    by_index: Mapping[int, list[PodView]],
    rolled: list[int],
    crashed: list[int],
    retry: RetryBook,
    out: Out,
) -> Hold | None:
    """Go ``planUpdateSelection``'s ``LadderHold`` (``workload/reconcile.go`` ``ladderHold`` fed by
    ``ladderRebuilds``; ``planner/ladder_hold.py``), read from the rows as the pass found them."""
    if not ctx.target:
        return None
    in_flight = _attempt_in_flight(rows, ctx.target)
    if crashed:
        # A backoff not yet due raises no event: the roll's crashed Instances wait on it.
        state, when = retry.gate(ctx.target, ctx.now, in_flight)
        if state is not None:
            out.wake(when)
    found = ladder_hold(ctx, retry, in_flight, rolled, crashed, ladder_rebuilds(ctx, rows, by_index, retry))
    return None if found is None else Hold(found.gate, found.reason, ladder=True)


def _standing_hold(
    ctx: Ctx,
    rows: Sequence[Row],
    rolled: list[int],
    crashed: list[int],
    crashed_out: list[int],
    extra: ExtraPodSurge,
    ladder_found: Hold | None,
) -> Hold | None:
    """Go ``planUpdateSelection``'s ``StandingHold`` (``workload/reconcile.go`` ``standingHold`` over
    ``CrashedNotServing`` / ``CrashedOutOfRotation``; ``planner/admission.py`` ``standing_hold``), read
    from the rows as the pass found them: the ladder's hold (:func:`_ladder_hold`) when one of the
    rolled Instances crashed after promotion and the ladder holds the roll, else the budget's."""
    if not crashed:
        return None
    if ladder_found is not None:
        return ladder_found
    reason = standing_hold(
        ctx, rolled, crashed, crashed_out, _in_flight(rows, ctx.strategy == SURGE), extra, False
    )
    return None if reason is None else Hold("Budget", reason)


def _in_flight(rows: Sequence[Row], surge: bool, fresh: frozenset[int] = frozenset()) -> int:
    """The prior-pass anchor of the budget (ome-projects/ome ``workload/escalation/budget.go`` @
    4dfb96b1): rows on a surge step for ``maxSurge`` (``CurrentSurgeInFlight``); for
    ``maxUnavailable`` (``CurrentUnavailableInFlight``) the rows on any other step that are
    ``Updating``, or ``Failed`` with their Update operation kept for the retry (that Instance is still
    down: not counting it would let the pass start another healthy Instance). A failed attempt's row
    in ``fresh`` (offered a fresh start this pass, ``_failed_row_rolls``) is left out: the
    13,042-character ``escalation/budget.go`` (the version that knows a parked step) reads an attempt
    its disposition parked as holding no slot, "so the next attempt on its Instance is a fresh
    start", charged when it starts."""
    surge_steps = SURGE_STEPS
    if surge:
        return sum(1 for r in rows if r.operation is not None and r.operation.step in surge_steps)
    return sum(
        1
        for r in rows
        if (
            r.phase == R.UPDATING
            or (r.phase == R.FAILED and r.operation is not None and r.operation.type == R.OP_UPDATE)
            or (_failed_update_retrying(r) and r.index not in fresh)
        )
        and not (r.operation is not None and r.operation.step in surge_steps)
    )


def _failed_update_retrying(r: Row) -> bool:
    """Go keeps a failed Update's operation on the ``Failed`` row and retries it as an Update, so
    ``CurrentUnavailableInFlight`` charges it until it serves (budget_test.go @ 4dfb96b1
    ``TestReconcile_FailedUpdateHoldsMaxUnavailableBudget``). Ours clears the operation on failure
    (``steps.fail``, keeping ``targetRevision``) and retries it as a fresh Update
    (``_failed_row_rolls``), or under a pause or the partition through the repair pass (``Create`` /
    ``Recycle``): the same Instance is a row, off its running revision, that serves nothing, either
    ``Failed`` without an operation or ``Creating`` under that repair. A failed Restart (target = its
    own revision), a failed first Create (nothing running yet) and a failed surge (the source still
    serves) stay outside, as in Go."""
    if not r.running_revision or not r.target_revision or r.running_revision == r.target_revision:
        return False
    if r.serving_pod_count:
        return False
    if r.phase == R.FAILED:
        return r.operation is None
    return r.phase == R.CREATING and r.operation is not None and r.operation.type == R.OP_CREATE


def _start_updates(
    ctx: Ctx,
    rows: Sequence[Row],
    updates: list[Row],
    by_index: Mapping[int, list[PodView]],
    rolled: list[int],
    extra: ExtraPodSurge,
    retry: RetryBook,
    out: Out,
    out_for: Callable[[int], Out],
    ladder_found: Hold | None = None,
) -> tuple[dict[int, Row], Hold | None]:
    """Start as many updates as the budget allows: Instances out of rotation first, then by index.

    The order is Go's newest ``workload/plan_decision.go`` ``planUpdateSelection``: the Instances are
    listed in plan order (``workload/plan.go`` ``instancePlanIndices`` sorts by index), then stably
    sorted so the fresh starts marked ``OutOfRotation`` come first (a start there restores capacity
    while every other start spends it); ``executeUpdatePass`` offers the budget in that order.

    Each start is projected as Go's ``BudgetDenies`` does: in flight from earlier passes + started
    this pass + 1 must not exceed the budget (``None``: uncapped). The anchor is counted once, from the
    rows as the pass found them (``workload/plan_decision.go`` ``planUpdateSelection`` sets
    ``PriorSurgeInFlight``/``PriorUnavailInFlight`` before any step runs, and ``workload/reconcile.go``
    ``executeUpdatePass`` charges fresh starts only and never uncharges an operation that ends): an
    operation ending in this pass frees its slot for the next pass's starts, not for this one's. So
    deciding the starts before the steps decides what Go's single walk decides.
    """
    order = sorted(updates, key=lambda r: (not _out_of_rotation(r, by_index.get(r.index, [])), r.index))
    started: dict[int, Row] = {}
    hold: Hold | None = None
    surge = ctx.strategy == SURGE
    if extra.next_release is not None:
        # A Terminating pod passing its deadline raises no watch event: look again just past it.
        out.wake_past(extra.next_release)
    # A failed attempt's Instance offered a fresh start here holds no slot of its own in the anchor
    # (``_in_flight``'s ``fresh``): its start is charged instead.
    admission = Admission(ctx, _in_flight(rows, surge, frozenset(r.index for r in updates)), rolled, extra)
    # Go reports a denial only when no Update ran this pass, unless it stands on rolled Instances
    # that do not serve (``executeUpdatePass``: ``anyUpdateRan && len(RolledNotServing) == 0``).
    any_ran = any(r.operation is not None and r.operation.type == R.OP_UPDATE for r in rows)
    sources: list[int] = []  # Instances started (a gang surge's replacement row is not one)
    # The ladder is read once, as the pass found it: Go evaluates the update trigger in Plan
    # (``EvaluateUpdateTrigger`` → ``evaluateRetryBlockGate`` with ``anyInFlightUpdateAt``), so a
    # due Backoff admits every start the budget allows in that pass, and the next pass admits none
    # while one of those attempts runs.
    state, when = retry.gate(ctx.target, ctx.now, _attempt_in_flight(rows, ctx.target))
    for r in order:
        if state is not None:
            out.wake(when)
            # Go ``executeUpdatePass``: a start the target's RetryBlock denied at the trigger stage
            # stands on the ladder's hold (``selection.LadderHold``, the same reading of the block).
            hold = ladder_found or _retry_hold(state, ctx.target, when)
            break
        denied = admission.denial(r.index)
        if denied is not None:
            # Later candidates are still offered: one whose own live extra pods hold a slot is
            # charged less (``unreplacedExtraSlots``); the first denial is the one reported.
            hold = hold or Hold("Budget", denied)
            continue
        mode = choose_mode(ctx, r, ctx.target)
        if mode is None:
            # InPlaceOnly refuses a change beyond container images: Go's ``UpdateWithPods`` records the
            # Warning and returns an error, which ends the update pass; the Instance stays as it is.
            out_for(r.index).event("Warning", IN_PLACE_REFUSED, refusal_message(ctx, r.index))
            break
        if mode == MODE_IN_PLACE and in_place_cannot_restore(ctx, r, ctx.target, by_index.get(r.index, [])):
            # A patch that restarts no container leaves a pod set dark on readiness as dark as it
            # found it: Go's newest ``planUpdateSelection`` starts it as a recreate.
            out_for(r.index).event(
                "Warning", IN_PLACE_REFUSED, cannot_restore_message(ctx, r.index, ctx.target)
            )
            mode = MODE_RECREATE
        # Every fresh attempt that starts turns a due Backoff into RetryInProgress (Go ``ops/update.go``
        # ``flipRetryBlockOnAttemptStart``, called by each Update entry stamp: surge, in-place,
        # recreate; ome-projects/ome ae683e3f, ``update_retryblock_test.go``
        # ``TestPatchSurgingForUpdate_FlipsBackoffOnAttemptStart``), a Ready Instance's first attempt
        # at the revision included; a failed gang surge leaves its source Ready, so any new gang surge
        # is the next attempt too.
        retry.started(ctx.target)
        sources.append(r.index)
        admission.charge(r.index)
        if mode == MODE_SURGE and surge_has_no_source(r):
            # Go ``UpdateWithPods`` (ome-projects/ome ``ops/update.go`` 58a57f25): a surge on an
            # Instance that was never promoted has no source to keep in rotation, and would only add a
            # second replacement beside the disposed attempt's pod set: the start rebuilds the set in
            # place, a recreate (RecreatePod pinned, incarnation bumped), the gang included.
            mode = MODE_RECREATE
        if ctx.gang and surge and mode != MODE_RECREATE:
            used = set(by_index) | set(started)
            k = surge_index_for(rows, used)
            started[r.index], started[k] = start_gang_surge(ctx, r, ctx.target, k, out_for(r.index))
        else:
            started[r.index] = start_update(ctx, r, ctx.target, out_for(r.index), mode)
    if hold is not None and (hold.gate == "Budget" or hold.ladder) and (any_ran or sources) and not rolled:
        # Superseded by progress on the same terms as any other denial (``executeUpdatePass``); a
        # retry gate of ours not worded as Go's ladder is left to the status layer, as before.
        hold = None
    return started, hold


def _adopts_target(
    ctx: Ctx, row: Row, pods: Sequence[PodView], rows: Sequence[Row], retry: RetryBook
) -> bool:
    """Go ``evaluateUpdateTriggerFast`` then ``evaluateUpdateTriggerPods`` (ome-projects/ome
    ``workload/ops/update.go`` 58a57f25): a Ready or Failed row with no operation and no running
    revision, past the target's RetryBlock gate (a denying block decides first), whose pods (the
    non-terminating ones; none proves nothing) all carry the target's revision hash and are
    runtime-ready (ContainersReady)."""
    if row.operation is not None or row.running_revision or row.phase not in (R.READY, R.FAILED):
        return False
    live = [p for p in pods if not p.terminating]
    if not live or any(p.revision_hash != hash_of(ctx.target) or not p.containers_ready for p in live):
        return False
    return retry.gate(ctx.target, ctx.now, _attempt_in_flight(rows, ctx.target))[0] is None


def surge_has_no_source(row: Row) -> bool:
    """Go ``SurgeHasNoSource`` (ome-projects/ome ``workload/ops/update.go`` 58a57f25): the Instance was
    never promoted (no running revision), it is ``Failed`` and its attempt was disposed (no
    operation), so no pod of it is a serving source a surge could keep in rotation."""
    return not row.running_revision and row.phase == R.FAILED and row.operation is None


def _failed_row_rolls(ctx: Ctx, row: Row, held: frozenset[int]) -> bool:
    """A ``Failed`` row with no operation that runs another revision than the target takes the
    ordinary roll, not a Create: Go's update trigger "treat[s] Failed like Ready for the revision
    comparison so a changed target re-drives it" (``workload/ops/update.go``, the newest of six,
    50,518 characters, ``evaluateUpdateTriggerFast``: ``RunningRevision`` set and not the target
    triggers the Update, behind the target's RetryBlock gate), and ``workload/plan_decision.go``
    ``Plan`` runs the update pass before the Create pass. So a failed RecreatePod attempt, once the
    ladder's backoff is due, reopens as an Update (``Updating``, the ladder's ``RetryInProgress``; the
    612,458-character root reconcile_test ``TestUnpullablePush_ChargesTheLadderWhateverTheInstance
    Shape``). The newest ``escalation/disposition.go`` (36,185 characters, ``endAttempt``) parks or
    clears the failed attempt's Update operation, and the ``workload/status`` decision stamps (the
    36,330-character version, ``StampUpdatingInPlace``) say "An attempt parked after its disposition
    is nobody's and not in flight: a new attempt opens over it with its own identity and deadline".
    Before, ours reopened it through Create's recycle (``Creating``). Not while paused or held by the
    partition, where the update pass starts nothing and the repair rebuilds it at its own revision."""
    return (
        row.phase == R.FAILED
        and row.operation is None
        and not ctx.paused
        and row.index not in held
        and bool(row.running_revision)
        and row.running_revision != ctx.target
    )


def _failed_pods_roll(row: Row, pods: Sequence[PodView]) -> bool:
    """Go ``evaluateUpdateTriggerFast`` then ``evaluateUpdateTriggerPods`` (ome-projects/ome
    ``workload/ops/update.go`` 58a57f25, the newest of the four versions found of the six the index
    lists, read whole; ae683e3f and the 23,051-character version before it left such a row alone,
    dcfb4135 already rolled it): a ``Failed``
    row with no operation and no running revision whose pod set stands (its non-terminating pods; an
    empty set "proves nothing in either direction; the Create and demotion passes own a row with no
    pods") and was not adopted (``_adopts_target``: every pod on the target and runtime-ready)
    triggers the Update: "An unhealthy pod set on the target is a row to recover, not a row to stamp:
    it takes the ordinary roll, which is the retry, recreate or relocation its strategy and the
    disposition's node-exclusion overlay resolve". The retry gate and the budget pace it in
    ``_start_updates``; ``surge_has_no_source`` makes it a recreate (incarnation bumped, the pods
    drained and deleted first). Go's update pass reads the Instance's listed pods; whether a
    Terminating one is among them there is not settled here: ours reads the non-terminating ones, as
    ``_adopts_target`` does, so a row whose pods are all Terminating is still Create's. Go's Create
    pass leaves such a row alone (``ops/create.go`` ``createFilteredBatched``, the newest stored:
    nothing is missing, the pods are not runtime-ready), and the update pass runs before it
    (``workload/plan_decision.go`` ``Decision``: update > create). Before, ours rebuilt the row through
    Create's fresh start
    (``Recycle``) at the same incarnation (``update_test.go`` ``TestDetectUpdate_BackfillRefuses
    WedgedPods``, ``TestDetectUpdate_StuckPodOnTargetRelocates``)."""
    if row.phase != R.FAILED or row.operation is not None or row.running_revision:
        return False
    return any(not p.terminating for p in pods)


_ENTRY_STEPS = frozenset({*SURGE_STEPS, R.STEP_DRAIN, STEP_IN_PLACE})


def _reruns_entry_stamp(row: Row) -> bool:
    """An Update attempt whose entry stamp Go runs again on this pass (ome-projects/ome
    ``workload/status/decision.go`` @ 8263d0c7: ``StampSurging`` on a surge step, ``StampRecreating``
    on ``Drain``, ``StampUpdatingInPlace`` on ``InPlace``), each answering the time the attempt opened
    to ``entryStampAttemptStarted``. A gang surge's source (it names a replacement row) is not one."""
    op = row.operation
    return (
        op is not None
        and op.type == R.OP_UPDATE
        and op.surge_index is None
        and op.step in _ENTRY_STEPS
        and row.phase == R.UPDATING
        and row.target_revision == op.target_revision
    )


def _restart_owns(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> bool:
    """A Ready gang no longer whole under ``RecreateInstanceOnPodRestart`` is the restart pass's, which
    Go's ``Plan`` runs before the update pass (``workload/plan_decision.go``; ``plan_decision_test.go``
    ``TestPlan_RemovableInlineFieldsDoNotChangeDecision``, "persisted observation leads partial live
    gang": Restart, then Update, 4dfb96b1): it is rebuilt whole first (``step_gang_idle``), rolled after."""
    return (
        ctx.gang
        and ctx.restart_policy == RESTART_POLICY_RECREATE
        and row.phase == R.READY
        and gang_broken(ctx, row, pods) is not None
    )


def _create_attempt_in_flight(rows: Sequence[Row], revision: str) -> bool:
    """Go ``anyInFlightUpdateAt`` or ``anyInFlightCreateAttempt``: what denies a fresh start while a
    ``RetryInProgress`` block authorizes one attempt at a time."""
    return _attempt_in_flight(rows, revision) or any(
        x.operation is not None and x.operation.type == R.OP_CREATE and x.phase == R.CREATING for x in rows
    )


def _attempt_in_flight(rows: Sequence[Row], revision: str) -> bool:
    """Go ``anyInFlightUpdateAt``: some row carries an Update operation toward ``revision``."""
    return any(
        r.operation is not None
        and r.operation.type == R.OP_UPDATE
        and r.operation.target_revision == revision
        for r in rows
    )


def _out_of_rotation(row: Row, pods: Sequence[PodView]) -> bool:
    """Go's ``OutOfRotation`` mark on a fresh start (newest ``planUpdateSelection``): the Instance
    replaces a dark pod set (``replacesDarkPodSet``: a ``Failed`` row with no serving pod), or
    ``evidence.PodSetOutOfRotation``: it has live pods and none of its routed, non-terminal pods is
    Ready and serving. A gang serves through its leader: its workers are never members of the routing
    Service, so they are counted live but never read for rotation (Go ``query.RoutedRunner``, whose body
    the index does not hold; its rule as the newest stored ``evidence/crashloop.go`` and
    ``crashloop_test.go`` ``TestPodSetOutOfRotation`` state it, and as ``status.labelSelector``
    selects the routed runners, ``default`` and ``leader``). Before, a Ready worker kept a gang whose
    leader had left rotation from being updated first."""
    if row.phase == R.FAILED and row.serving_pod_count == 0:
        return True
    live = [p for p in pods if not p.terminating]
    return bool(live) and not any(
        p.ready and p.gate == "True" for p in live if not p.ended and p.runner != c.RUNNER_WORKER
    )


def _counts(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> Row:
    ladders = [ladder(p, ctx.world.endpoints, ctx.min_ready, ctx.now) for p in pods]
    return replace(
        row,
        pod_count=sum(1 for p in pods if not p.terminating),
        serving_pod_count=sum(1 for lad in ladders if lad.serving),
        available_pod_count=sum(1 for lad in ladders if lad.available),
    )
