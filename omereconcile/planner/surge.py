"""SurgeThenDrain for a single-pod Instance, as OME's ``workload/ops/update_surge.go`` ``surgeUpdate``
runs it (the newest stored version: the one with ``SurgeAbandoned`` and ``endWithdrawnSurge``).

Step ``Surge`` creates the replacement in slot ``1 - activeOrdinal`` at the operation's pinned target,
writes its gate True once ContainersReady and waits for PodReady plus ``minReadySeconds``; step
``SurgeDrain`` takes the source out of rotation, waits for the EndpointSlices, deletes it, and the
pass that sees it gone promotes the replacement (``activeOrdinal`` flips, incarnation unchanged).

``SurgeDrainSettle`` (the newest Go's compatibility read, ``TestSurgeUpdate_PersistedSettleStepDeletes
TheSource``): a row an earlier release journaled at that step has its drain confirmed, so the pass
that reads it deletes the source without proving the drain again. The step is read, never written: the
newest ``surgeUpdate`` no longer waits a settle grace (ae683e3f's ``waitForSurgeDrainSettle`` did).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.context import SURGE, Ctx, hash_of
from omereconcile.planner.gate import SURGE_DRAIN
from omereconcile.planner.holds import NODE_UNKNOWN, node_unknown_hold, scheduler_hold
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import drained, ladder, live
from omereconcile.planner.quota import takes_row
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import (
    bring_up,
    by_name,
    check_failure,
    complete,
    recycled_on_excluded_node,
    retire,
    retire_abandoned,
)
from omereconcile.world import PodView, format_time
from omerender import constants as c

__all__ = [
    "SOURCE_UNROUTED",
    "STEP_SURGE_DRAIN_SETTLE",
    "SURGE_STEPS",
    "failed_target_recovery",
    "failed_target_verdict",
    "source_rotation_hold",
    "step_surge",
]

STEP_SURGE_DRAIN_SETTLE = "SurgeDrainSettle"
CREATE_CONTAINER_ERROR = "CreateContainerError"  # Go ``createContainerErrorReason``
# The steps a surge is in flight at (Go ``CurrentSurgeInFlight``): counted against ``maxSurge``.
SURGE_STEPS = (R.STEP_SURGE, R.STEP_SURGE_DRAIN, STEP_SURGE_DRAIN_SETTLE)


def _standing(pod: PodView | None) -> bool:
    return pod is not None and not pod.terminating


def _stale_at_slot(row: Row, surge: PodView | None) -> bool:
    """Go ``reclassifyByRevisionHash`` + ``staleAtSurgeSlot``: a standing pod at the surge slot whose
    revision-hash label is not the operation's pinned target is no replacement (a leftover of an
    earlier cycle's promote, or a dead pod of an attempt toward a superseded revision)."""
    op = row.operation
    assert op is not None
    return surge is not None and not surge.terminating and surge.revision_hash != hash_of(op.target_revision)


def _evict_stale_slot(ctx: Ctx, row: Row, surge: PodView, out: Out) -> Row:
    """The stale-slot eviction: only the pod at the surge slot goes (the source at the active slot
    keeps serving untouched) and the replacement is created on a later pass, once the slot is free.

    Go (ome-projects/ome): ``workload/ops/update_surge.go`` ``surgeUpdate``, the newest stored version
    (34,483 characters, read whole): "Stale-slot eviction: the surge ordinal holds a wrong-revision pod
    and no valid surge is alive. Delete ONLY the pod(s) at the surge slot — the same direct eviction
    the superseded-surge redirect applies to a not-yet-promoted surge pod, on the same bounded grace
    for a pod that never served", with ``abandonedReplacementDeleteOptions`` (the
    ``abandonedReplacementGrace`` bound for a pod that never carried the serving gate, its own grace
    otherwise); the create is skipped while the slot is occupied. Followed for a pod out of rotation:
    deleted on the pass that reads it, on the bounded grace when it never carried the gate, and a dead
    one is evicted, not recycled as this attempt's failure (it belongs to no attempt of this target).

    Kept, a documented difference: a stale pod whose serving gate is True (in rotation) is taken out
    of rotation on this pass and deleted on a later one (``steps.retire``), where Go deletes it at
    once. Ours never deletes a pod that is in rotation (spec ``03-rollout-lessons.md``: "Drain is
    proven, not assumed"; the simulated world checks it after every write). Pinned by
    ``update_surge_test.go`` @ 58a57f25 ``TestSurgeUpdate_StaleRevPodAtSurgeSlot_Drained`` (its stale pod
    serves, so that one assertion stays a strict xfail). Before: a stale pod at the slot was retired
    like any off-target pod (no bounded grace), and a dead one was recycled, charging the attempt."""
    op = row.operation
    assert op is not None
    why = f"pod {surge.name} at the surge slot is not at revision {op.target_revision}: free the slot"
    if surge.gate == "True" and not surge.ended:
        retire(surge, out, why)
        return row
    grace = ctx.world.settings.abandoned_replacement_grace
    if grace > timedelta(0) and surge.condition(c.SERVING_GATE) is None:
        out.delete(surge, why, math.ceil(grace.total_seconds()))
    else:
        out.delete(surge, why)
    return row


def _abandon(ctx: Ctx, row: Row, surge: PodView | None, out: Out) -> Row:
    """The superseded-target redirect: while the source stands, a surge at step ``Surge`` committed to
    a revision the roll no longer targets is abandoned whether or not its replacement is Ready. Only
    the replacement goes, out of rotation first and deleted on a later pass; the row is reset to
    Ready on its running revision once no replacement pod is left (``SurgeAbandoned``)."""
    op = row.operation
    assert op is not None
    if surge is not None:
        retire_abandoned(ctx, surge, out, f"the surge to {op.target_revision} is superseded by {ctx.target}")
        return row
    running = row.running_revision
    key = ctx.instance_key(row.index)
    if ctx.target == running:
        msg = (
            f"OMENative {key} abandoned surge to withdrawn revision {op.target_revision}; "
            f"the Instance stays on revision {running}"
        )
    else:
        msg = f"OMENative {key} abandoned superseded surge to {op.target_revision}; re-surging toward {ctx.target}"
    out.event("Normal", "SurgeAbandoned", msg)
    # StampReadyOnRevision (status/decision.go): Ready on the running revision, the target cleared.
    return replace(row, phase=R.READY, operation=None, target_revision="")


def _end_withdrawn(ctx: Ctx, row: Row, old: PodView | None, out: Out) -> Row:
    """``endWithdrawnSurge``: past the hand-over the replacement is gone and the roll target has moved
    off the pinned revision, so nothing is rebuilt at it. A standing source gets its drain hold lifted
    and the row returns to Ready on its running revision; with no source the Instance re-enters as a
    fresh start: Go's newest ``AbandonedSurgeSourceMutation`` (``workload/status/decision.go``, 36,330
    characters) writes ``Failed`` with the operation and target cleared and the running revision kept,
    and the Create pass's fresh start rebuilds it (no repair). Pinned by the 612,458-character
    ``reconcile_test``'s ``TestSurgeAfterHandover_ReplacementLostWithSourceGoneThenRollbackRebuildsAtTheStartingRevision``
    (``tests/goparity/test_workload_reconcile_part2.py``); ours published ``Pending`` with no running
    revision for that pass until goZ2."""
    op = row.operation
    assert op is not None
    key = ctx.instance_key(row.index)
    if _standing(old):
        assert old is not None
        out.gate(old, True, "the withdrawn surge is over: the source returns to rotation")
        out.event(
            "Normal",
            "SurgeAbandoned",
            f"OMENative {key} abandoned surge to withdrawn revision {op.target_revision}: the replacement "
            "was lost after it took over serving and nothing is rebuilt at it; the source returns to "
            f"rotation on revision {row.running_revision}",
        )
        # StampAbandonedSurgeSource with the running revision: ReadyOnRevisionMutation, the target cleared.
        return replace(row, phase=R.READY, operation=None, target_revision="")
    out.event(
        "Normal",
        "SurgeAbandoned",
        f"OMENative {key} abandoned surge to withdrawn revision {op.target_revision}: the replacement was "
        "lost after it took over serving and no source pod stands, so the Instance re-enters as a fresh "
        f"start at revision {ctx.target}",
    )
    return replace(row, phase=R.FAILED, operation=None, target_revision="")


def _promote(ctx: Ctx, row: Row, slot: int, out: Out) -> Row:
    op = row.operation
    assert op is not None
    out.event(
        "Normal",
        "RecreateUpdateCompleted",
        f"OMENative {ctx.instance_key(row.index)} surge to revision {op.target_revision} complete "
        f"(activeOrdinal={slot})",
    )
    return complete(ctx, row, op.target_revision, slot)


SOURCE_UNROUTED = "SourceUnrouted"  # Go types.WaitingReasonSourceUnrouted


def _source_routed(ctx: Ctx, pod: PodView) -> bool:
    """Go ``holds/sourcerotation.go`` ``sourceRouted``: the source takes traffic by both views the roll
    owns, its serving gate and its endpoint. The endpoint view abstains while there is no Service, or
    no EndpointSlice has been seen yet (a cold start is not a source taken out)."""
    if pod.terminating or pod.gate != "True":
        return False
    if not ctx.world.service.exists or not ctx.world.endpoints.slices_seen:
        return True
    ep = ctx.world.endpoints.by_pod.get(pod.name)
    return ep is not None and ep.ready and not ep.terminating


def source_rotation_hold(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> Row:
    """Go ``holds/sourcerotation.go`` ``sourceUnroutedHold`` / ``reportSourceRotation`` and
    ``types.SourceUnroutedTermination`` (ome-projects/ome @ 4dfb96b1). A surge keeps its source in
    rotation until the drain step, so a source out of rotation while the step is still ``Surge`` was
    taken out by something else and the Instance serves nothing while its replacement comes up: the
    row reports ``waiting: SourceUnrouted`` with the source named on ``lastFailure`` (stamped with the
    pod's creation, so an unchanged report rewrites nothing). A report, not an excuse: the deadline keeps
    running. Released once the step moves past ``Surge``, no source is left, or one source is routed
    again; a row another wait already reports keeps it (``takesRowFrom``)."""
    op = row.operation
    assert op is not None
    want = hash_of(op.target_revision)
    sources = sorted((p for p in pods if p.revision_hash != want), key=lambda p: p.name)
    if op.step != R.STEP_SURGE or not sources or any(_source_routed(ctx, p) for p in sources):
        if op.waiting == SOURCE_UNROUTED:
            return replace(row, operation=replace(op, waiting=None))
        return row
    if not takes_row(SOURCE_UNROUTED, op.waiting):
        return row
    source = next((p for p in sources if not _source_routed(ctx, p)), sources[0])
    evidence = {
        "podName": source.name,
        "reason": SOURCE_UNROUTED,
        "message": f"{SOURCE_UNROUTED}: source pod {source.name} is out of the routed Service while its surge "
        "replacement is not serving yet; the surge did not take it out",
        "time": format_time(source.creation_timestamp or op.started_at),
    }
    return replace(row, operation=replace(op, waiting=SOURCE_UNROUTED), last_failure=evidence)


def _fail_surge(
    ctx: Ctx, row: Row, surge: PodView | None, surge_name: str, out: Out, retry: RetryBook
) -> tuple[Row, Row | None]:
    """The surge's evidence (``check_failure`` on the replacement): the row as held or parked, and the
    Failed row if the attempt ends, its replacement then removed (the source keeps serving)."""
    live_surge = surge if _standing(surge) and surge is not None and not surge.ended else None
    row, failed = check_failure(ctx, row, live_surge, surge_name, out, retry)
    if failed is None:
        return row, None
    if live_surge is not None:
        deleted = retire(
            live_surge, out, "the surge failed: remove the replacement, the source keeps serving"
        )
        if deleted:
            recycled_on_excluded_node(ctx, failed, live_surge, out)
    return row, failed


def _waiting_in(pod: PodView, reason: str) -> bool:
    """Go ``podHasWaitingReason``: a container or init container waits for ``reason``."""
    return any(cs.waiting_reason == reason for cs in (*pod.containers, *pod.init_containers))


def failed_target_verdict(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> tuple[str, PodView | None]:
    """Go ``ops/update_surge.go`` ``recycleFailedCreateContainerTarget`` (ome-projects/ome, the newest
    stored version, 34,483 characters, run at the top of ``surgeUpdate``; pinned by
    ``update_surge_test.go`` @ 58a57f25 ``TestSurgeUpdate_RecyclesFailedCreateContainerTargetThenRetries``,
    ``…ParksWithoutRelocationAuthorization``, ``…RequiresServingSource``, ``…RequiresAReadySource``).

    A single-pod SurgeThenDrain row that is ``Failed`` with no operation, its ``lastFailure`` a
    ``CreateContainerError``, still aimed at the roll target, with the failed replacement standing in
    its surge slot (the state Go's disposition leaves; ours retires the replacement when it fails the
    surge, so only a row an earlier controller wrote is in it). Returns ``(verdict, replacement)``:
    ``""`` when this recovery does not apply (the ordinary roll decides), ``"park"`` when the row must
    wait for the operator with the replacement left standing, ``"recycle"`` when the replacement is to
    be deleted (:func:`failed_target_recovery` issues it):

    - the source (the pod at ``activeOrdinal``) is missing, terminating, not PodReady, out of rotation
      or not on the running revision: parked for the operator, nothing deleted;
    - the replacement is terminating, or is not the pod ``lastFailure`` names: parked;
    - the replacement is off the failed revision, serves, is PodReady, or does not wait in
      ``CreateContainerError``: not this recovery (the ordinary roll decides);
    - its node is not excluded for its revision by the relocation ledger (no relocation authorized):
      parked; else it is recycled, the source serving on, and the empty slot re-enters the ordinary
      surge on a later pass, its pod rendered off the node.

    An empty surge slot is not this recovery's, so a row ours failed itself is unchanged."""
    failure = row.last_failure or {}
    if (
        ctx.gang
        or ctx.strategy != SURGE
        or row.phase != R.FAILED
        or row.operation is not None
        or failure.get("reason") != CREATE_CONTAINER_ERROR
        or not row.target_revision
        or row.target_revision != ctx.target
    ):
        return "", None
    target = by_name(pods, ctx.pod_name(row.index, 1 - row.active_ordinal))
    if target is None:
        return "", None
    source = by_name(pods, ctx.pod_name(row.index, row.active_ordinal))
    if (
        source is None
        or source.terminating
        or not (source.ready and source.gate == "True")
        or not row.running_revision
        or source.revision_hash != hash_of(row.running_revision)
    ):
        return "park", target
    if target.terminating:
        return "park", target
    if failure.get("podName") and failure.get("podName") != target.name:
        return "park", target
    if target.revision_hash != hash_of(row.target_revision):
        return "", None
    if target.gate == "True" or target.pod_ready_condition or not _waiting_in(target, CREATE_CONTAINER_ERROR):
        return "", None
    excluded = ctx.ledger.excluded_nodes(ctx.component, row.index, row.target_revision) if ctx.ledger else []
    if not target.node_name or target.node_name not in excluded:
        return "park", target
    return "recycle", target


def failed_target_recovery(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> bool:
    """Go ``recycleFailedCreateContainerTarget``'s effect (:func:`failed_target_verdict`): True when
    the pass must not start an attempt on the row; on ``"recycle"`` the failed replacement is deleted
    (the delete carries its uid, Go's precondition) and ``FailedSurgeTargetRecycled`` recorded."""
    verdict, target = failed_target_verdict(ctx, row, pods)
    if verdict == "recycle" and target is not None:
        out.delete(
            target, f"failed surge target on excluded node {target.node_name}: recycled for a fresh pod"
        )
        recycled_on_excluded_node(ctx, row, target, out)
    return bool(verdict)


def step_surge(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, *, paused: bool
) -> Row:
    """One pass of the surge. ``paused``: the replacement is still brought up to the promote bar but
    the drain, the next step, is not started (a paused Component starts no step), and the failure
    evidence fails nothing (OME's escalation pass does not run on a paused Component), though the
    scheduler's and the source-rotation holds still report on the row."""
    op = row.operation
    assert op is not None
    slot = 1 - row.active_ordinal
    surge_name = ctx.pod_name(row.index, slot)
    old_name = ctx.pod_name(row.index, row.active_ordinal)
    for p in live(pods):
        if p.name not in (surge_name, old_name):
            retire(p, out, f"pod {p.name} belongs to no slot of Instance {row.index}'s surge")
    surge = by_name(pods, surge_name)
    old = by_name(pods, old_name)
    row = source_rotation_hold(ctx, row, pods)
    op = row.operation
    assert op is not None
    if op.step == R.STEP_SURGE:
        superseded = op.target_revision != ctx.target
        surge_ready = (
            surge is not None
            and _standing(surge)
            and surge.containers_ready
            and surge.revision_hash == hash_of(op.target_revision)
            and surge.incarnation == row.incarnation
        )
        # A Ready replacement whose source is already gone is the Instance's only pod: it keeps its
        # pin and promotes, and the newer target rolls from there.
        if superseded and not (not _standing(old) and surge_ready):
            if not paused:
                # The escalation runs before the ops pass (ome-projects/ome 4dfb96b1
                # escalation_external_test.go TestEscalation_CorrectiveRevisionDoesNotRideTheFailingSurge):
                # an attempt whose evidence ends it on this pass ends against its pin (Failed, any block
                # on the pinned revision) even when a corrective revision has just landed; the Failed
                # row then drives the corrective revision as a fresh attempt.
                scratch = Out(ctx.now)
                _, failed = _fail_surge(ctx, row, surge, surge_name, scratch, retry)
                if failed is not None:
                    out.absorb(scratch)
                    return failed
            return _abandon(ctx, row, surge, out)
        if _stale_at_slot(row, surge):
            assert surge is not None
            return _evict_stale_slot(ctx, row, surge, out)
        row, done = bring_up(ctx, row, surge, surge_name, slot, out)
        if old is None and surge_ready and row.operation is not None:
            # Nothing left to drain: the replacement, in rotation from this pass on, is canonical.
            return _promote(ctx, row, slot, out)
        if done:
            if paused:
                return row  # at the promote bar; the source keeps serving until the unpause
            if ctx.drain_withheld is not None:
                out.drain_holds.append(ctx.drain_withheld)  # ops drainAdmitted: stay at Surge
                return row
            op = row.operation
            assert op is not None
            if old is not None:
                out.gate(
                    old,
                    False,
                    f"replacement {surge_name} serves and is Available: drain {old_name}",
                    SURGE_DRAIN,
                )
            # Go StampSurgeDrainStep: the step change touches lastProgressAt.
            return replace(row, operation=replace(op, step=R.STEP_SURGE_DRAIN, last_progress_at=ctx.now))
        if paused:
            # The scheduler still reports under a pause; only the escalation is withheld (its grace
            # fails nothing) and the clock stays parked. Go ``workload.HoldPassForTest`` run for a
            # paused Component: "the authorities report, and no repair follows" (the
            # 612,458-character root reconcile_test, TestHoldEvidence_PausedRowRecordsTheSchedulerHold,
            # …PausedRowTakesNoRepairAction, …PausedRowReleasesTheSchedulerHold). The quota and
            # admission holds are left as they were (pause_test.go "another authority keeps the
            # row"). Before: a paused surge read no evidence, so its row kept the pause token over an
            # unplaceable replacement.
            live_surge = surge if _standing(surge) and surge is not None and not surge.ended else None
            row, _ = scheduler_hold(ctx, row, live_surge, out)
            op = row.operation
            if op is not None and op.deadline is not None:
                row = replace(row, operation=replace(op, deadline=None))
            return row
        row, failed = _fail_surge(ctx, row, surge, surge_name, out, retry)
        return failed if failed is not None else row
    # SurgeDrain: the source leaves rotation, is proven drained and deleted; then the promote.
    if surge is None:
        if op.target_revision != ctx.target:
            return _end_withdrawn(ctx, row, old, out)
        row, _ = bring_up(ctx, row, None, surge_name, slot, out)  # lost replacement: rebuild it
        return row
    if surge.terminating:
        return row
    if _stale_at_slot(row, surge):
        return _evict_stale_slot(ctx, row, surge, out)
    # Go holds/nodeunknown.go ``targets`` / ``singlePodSurgeInFlight`` (ome-projects/ome @ 58a57f25):
    # the replacement's name is a target through the drain step too, so a replacement whose kubelet
    # stopped reporting parks the row on ``NodeUnknown`` (or is force-deleted on node death and
    # rebuilt) instead of waiting past its deadline with nothing said (nodeunknown_test.go "the surge
    # ordinal is asked for through the drain step").
    row = node_unknown_hold(ctx, row, [surge], out)
    if row.operation is not None and row.operation.waiting == NODE_UNKNOWN:
        return row
    row, _ = bring_up(ctx, row, surge, surge_name, slot, out)
    if not ladder(surge, ctx.world.endpoints, ctx.min_ready, ctx.now).ready or not surge.ready:
        return row  # the source stays out of rotation, but is not deleted before PodReady
    if _standing(old):
        assert old is not None
        out.gate(old, False, f"replacement {surge_name} serves: drain {old_name}", SURGE_DRAIN)
        settled = op.step == STEP_SURGE_DRAIN_SETTLE  # drain confirmed when the row was journaled
        if old.gate == "False" and (settled or drained(old, ctx.world.service, ctx.world.endpoints)):
            out.delete(old, "drained: no EndpointSlice lists the pod as ready")
        return row
    if old is not None:
        return row  # terminating: wait until it is gone before the slot is reused
    return _promote(ctx, row, slot, out)
