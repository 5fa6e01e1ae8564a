"""The operations of a multi-pod (gang) Instance: create, restart, steady state, and SurgeThenDrain.

SurgeThenDrain for a gang follows ``ops/update_gang.go`` ``gangSurgeUpdate`` (the newest stored version,
the one with ``GangSurgeRebuilt``): the source's operation
(``Update``/``Surge`` with ``surgeIndex``) and the replacement's row (``Update``/``GangSurgeTarget``,
incarnation 1, at the lowest unused index) are journaled in one status write; the replacement's
PodGroup and pods follow; once every replacement pod serves, the source's step becomes
``SurgeDrain``, its pods leave rotation (``Update-surge-drain``, key ``gang-surge-source-<i>``), are
deleted once the EndpointSlices prove them drained, then its PodGroup goes and the replacement is
promoted while the source's row goes (``RecreateUpdateCompleted``). A replacement that fails before the
hand-over, or whose revision is superseded while a source pod stands, is marked ``GangSurgeTargetCleanup``,
its pods and PodGroup are deleted, and the source returns to ``Ready`` on its running revision
(``abandonFailedGangSurge``: a Warning ``GangSurgeAbandoned`` after a failure, charged to the
revision's RetryBlock; a Normal one for a superseded target).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from omereconcile.actions import RecordEvent
from omereconcile.planner import rows as R
from omereconcile.planner.context import SURGE, Ctx, hash_of
from omereconcile.planner.gang import (
    PODGROUP_TERMINATING,
    RESTART_POLICY_RECREATE,
    bring_up_gang,
    first_failed_pod_termination,
    gang_broken,
    gang_names,
    lost_gang_member,
    release_pod_group,
)
from omereconcile.planner.gate import GANG_SURGE_DRAIN
from omereconcile.planner.holds import NODE_UNKNOWN, UNSCHEDULABLE
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import drained, fully_serving, ladder, limbo_failure, live
from omereconcile.planner.quota import PAUSED, QUOTA_EXCEEDED
from omereconcile.planner.retry import HELD_STATE, RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import (
    DEADLINE_EXCEEDED,
    by_name,
    complete,
    demote,
    new_operation,
    recycle_terminal,
    retire,
    retire_abandoned,
    workload_caused_record,
)
from omereconcile.world import PodView, format_time, parse_time

__all__ = [
    "gang_whole_and_ready",
    "is_gang_surge_source",
    "is_gang_surge_target",
    "start_gang_restart",
    "start_gang_surge",
    "step_gang_create_pods",
    "step_gang_idle",
    "step_gang_surge",
    "step_orphan_target",
]


def is_gang_surge_source(row: Row) -> bool:
    op = row.operation
    return op is not None and op.type == R.OP_UPDATE and op.surge_index is not None


def is_gang_surge_target(row: Row) -> bool:
    op = row.operation
    return op is not None and op.step in (R.STEP_GANG_SURGE_TARGET, R.STEP_GANG_SURGE_TARGET_CLEANUP)


# -- create / recreate / restart ---------------------------------------------------------------------


def step_gang_create_pods(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook) -> Row:
    """``CreatePods`` of a Create, a RecreatePod update or a Restart: the whole gang at the row's
    incarnation, done once every pod serves and is Available."""
    op = row.operation
    assert op is not None
    lost = None if ctx.freeze else lost_gang_member(ctx, row, pods, out)
    if lost is not None:
        return start_gang_restart(ctx, row, pods, lost, out)
    before = row.phase
    row, done = bring_up_gang(ctx, row, pods, out, retry)
    if row.operation is None or not done:
        return row
    key = ctx.instance_key(row.index)
    n = ctx.pods_per_instance
    if op.type == R.OP_CREATE:
        if before != R.READY:
            # ops/create.go commitReadyActions.
            out.event("Normal", "InstanceReady", f"OMENative {key} is Ready ({n} pod(s) serving)")
    elif op.type == R.OP_RESTART:
        # ops/restart.go Restart, phase C.
        out.event(
            "Normal", "RestartCompleted", f"OMENative {key} restart complete (incarnation={row.incarnation})"
        )
    else:
        out.event(
            "Normal",
            "RecreateUpdateCompleted",
            f"OMENative {key} recreate to revision {op.target_revision} complete",
        )
    return complete(ctx, row, op.target_revision, 0)


def step_gang_idle(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row:
    """A gang with no operation. Whole: its gates are kept True together (a ``Failed`` one that came
    up after all recovers on its target). Not whole while ``Ready``: under
    ``RecreateInstanceOnPodRestart`` the whole Instance is recreated at the next incarnation
    (``Restarting``, ``RestartTriggered``); under ``None`` the lost members are recreated as they
    were (a ``Create`` at the running revision, same incarnation), or with none left the Instance is
    demoted to ``Pending`` as a single-pod one is. A crash of the promoted set that the running
    revision's retry ladder reads is not seen here: ``planner/restart.py`` ``step_crash_ladder`` counts,
    paces or parks it first (Go's ``DetectRestartTriggerWithPods`` order)."""
    names = set(gang_names(ctx, row.index))
    for p in live(pods):
        if p.name not in names or p.incarnation != row.incarnation:
            retire(p, out, f"pod {p.name} belongs to no member of Instance {row.index}")
    lost = None if row.phase == R.READY or ctx.freeze else lost_gang_member(ctx, row, pods, out)
    if lost is not None:
        return start_gang_restart(ctx, row, pods, lost, out)
    broken = gang_broken(ctx, row, pods)
    if broken is None:
        members = [by_name(pods, n) for n in sorted(names)]
        standing = [p for p in members if p is not None]
        if row.phase in (R.READY, R.FAILED) and all(p.containers_ready for p in standing):
            for p in standing:
                out.gate(p, True, "every pod of the gang is ready: the gang enters rotation together")
        lads = [ladder(p, ctx.world.endpoints, ctx.min_ready, ctx.now) for p in standing]
        if (
            row.phase == R.FAILED
            and all(lad.serving and lad.available for lad in lads)
            and all(p.revision_hash == hash_of(row.target_revision) for p in standing)
        ):
            return complete(ctx, row, row.target_revision, 0)
        return row
    if row.phase != R.READY or ctx.freeze:
        return row
    revision = row.running_revision or row.target_revision
    if ctx.restart_policy == RESTART_POLICY_RECREATE:
        return start_gang_restart(ctx, row, pods, broken, out)
    if not any(not p.terminating and not p.ended for p in pods):
        # Go planUnbackedDemotions: a Terminating member still counts as live; demote once none is left.
        return row if any(p.terminating for p in pods) else demote(ctx, row, out)
    op = new_operation(ctx, row.index, R.OP_CREATE, R.STEP_CREATE_PODS, revision)
    return replace(row, phase=R.CREATING, operation=op, target_revision=revision)


def _as_source(ctx: Ctx, event: RecordEvent, replacement: int, source: int) -> RecordEvent:
    """The replacement's ``InstanceFailed`` Warning re-addressed to the surge's source Instance."""
    if event.event_reason != "InstanceFailed":
        return event
    message = event.message.replace(ctx.instance_key(replacement), ctx.instance_key(source), 1)
    return replace(event, message=message)


def termination_short(record: dict[str, object]) -> str:
    """Go ``types`` ``InstanceTermination.ShortString``: ``pod <p> container <c> failed (<reason>, exit
    <n>)``, ``... failed (PodFailed)`` or ``... stuck (<reason>)``."""
    text = f"pod {record.get('podName') or '<unknown>'}"
    if record.get("containerName"):
        text += f" container {record['containerName']}"
    reason = str(record.get("reason") or "") or "unknown"
    if record.get("exitCode") is not None:
        return f"{text} failed ({reason}, exit {record['exitCode']})"
    if reason == "PodFailed":
        return f"{text} failed (PodFailed)"
    return f"{text} stuck ({reason})"


def start_gang_restart(ctx: Ctx, row: Row, pods: Sequence[PodView], reason: str, out: Out) -> Row:
    """``ops/restart.go`` ``Restart``'s first pass: ``patchInstanceStatusRestarting`` (incarnation +1,
    ``Restarting``, ``operation {type: Restart, step: Drain, reason}``), the Warning
    ``RestartTriggered``, and ``firstFailedPodTermination`` kept as ``lastFailure`` before the drain
    takes the failing pod away (a prior ``lastFailure`` stays when no pod shows one)."""
    key = ctx.instance_key(row.index)
    revision = row.running_revision or row.target_revision
    incarnation = row.incarnation + 1
    out.event(
        "Warning",
        "RestartTriggered",
        f"OMENative {key} restart triggered: {reason} (incarnation={incarnation})",
    )
    op = replace(new_operation(ctx, row.index, R.OP_RESTART, R.STEP_DRAIN, revision), reason=reason)
    failure = first_failed_pod_termination(ctx, pods)
    return replace(
        row,
        phase=R.RESTARTING,
        operation=op,
        incarnation=incarnation,
        target_revision=revision,
        last_failure=failure if failure is not None else row.last_failure,
    )


# -- SurgeThenDrain ----------------------------------------------------------------------------------


def surge_index_for(rows: Sequence[Row], used: set[int]) -> int:
    """Go ``types.AllocateSurgeIndex`` (as ``workload/plan_test.go`` ``TestAllocateSurgeIndex`` pins
    it, ome-projects/ome 245145f4): the lowest index no row (nor pod) holds and no in-flight surge
    claims (``operation.surgeIndex``), so two sources surging in one pass never share a slot."""
    taken = {r.index for r in rows} | used
    taken |= {
        r.operation.surge_index
        for r in rows
        if r.operation is not None and r.operation.surge_index is not None
    }
    k = 0
    while k in taken:
        k += 1
    return k


def start_gang_surge(ctx: Ctx, row: Row, target: str, k: int, out: Out) -> tuple[Row, Row]:
    """``startGangSurge``: the source claims the replacement index and the replacement's row is
    stamped ``GangSurgeTarget`` at incarnation 1, both in this pass's status write."""
    op = new_operation(ctx, row.index, R.OP_UPDATE, R.STEP_SURGE, target, SURGE, k)
    source = replace(row, phase=R.UPDATING, operation=op, target_revision=target)
    marker = Row(
        index=k,
        incarnation=1,
        phase=R.CREATING,
        target_revision=target,
        operation=new_operation(ctx, k, R.OP_UPDATE, R.STEP_GANG_SURGE_TARGET, target, SURGE),
    )
    out.event(
        "Normal",
        "RecreateUpdateStarted",
        f"OMENative {ctx.instance_key(row.index)} gang surge to revision {target} (surge-index={k})",
    )
    return source, marker


def gang_whole_and_ready(ctx: Ctx, row: Row, pods: Sequence[PodView], revision: str) -> bool:
    """Go ``AllPodsRuntimeReady`` over a complete gang at ``revision``."""
    members = [by_name(pods, n) for n in gang_names(ctx, row.index)]
    return all(
        p is not None
        and not p.terminating
        and p.containers_ready
        and p.revision_hash == hash_of(revision)
        and p.incarnation == row.incarnation
        for p in members
    )


def _cleanup(row: Row) -> Row:
    op = row.operation
    assert op is not None
    return replace(row, operation=replace(op, step=R.STEP_GANG_SURGE_TARGET_CLEANUP))


def _take_down(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, why: str, abandoned: bool = False
) -> bool:
    """Retire every pod of ``row``'s Instance, then its PodGroup. True once both are gone.
    ``abandoned``: an abandoned gang surge's replacement (``retire_abandoned``).

    The gang leaves together: while any member is still in rotation, those members are taken out of
    it and nothing is deleted this pass, so no member goes from under a gang that still serves (Go
    ``ops/update_gang.go`` ``abandonFailedGangSurge``: "the serving leader leaves rotation first;
    nothing is deleted yet", ome-projects/ome @ 58a57f25 update_gang_test.go
    ``TestAbandonFailedGangSurge_AbandonGraceBoundsUnservedMembers``)."""
    serving = [p for p in live(pods) if p.gate == "True" and not p.ended and not p.terminating]
    if serving:
        for p in serving:
            retire(p, out, why)
        return False
    for p in live(pods):
        if abandoned:
            retire_abandoned(ctx, p, out, why)
        else:
            retire(p, out, why)
    if pods:
        return False
    return release_pod_group(ctx, row.index, out, why)


WITHDRAWN = "withdrawn"
HELD = "held"
REPLACEMENT_LOST = "ReplacementLost"  # ops/update_gang.go ReplacementLostReason


def _abandon(
    ctx: Ctx,
    src: Row,
    tgt: Row,
    src_pods: Sequence[PodView],
    tgt_pods: Sequence[PodView],
    out: Out,
    retry: RetryBook,
    end: str = "",
) -> tuple[Row | None, Row | None]:
    """``abandonFailedGangSurge``: the replacement's pods and PodGroup go, then its row, and the source
    ends as ``end`` says: reset to ``Ready`` on its running revision (``""``); back in rotation on it,
    or a fresh start when no source pod stands (``withdrawn``: ``endWithdrawnGangSurge``, the target
    moved off the pin while a replacement past the hand-over was short of members); or ``Failed`` with
    no attempt (``held``: ``holdLostGangSurge``, the pinned revision admits no further attempt)."""
    op = src.operation
    assert op is not None
    k, pin = tgt.index, op.target_revision
    standing = live(src_pods)
    if end == WITHDRAWN:
        for p in standing:
            out.gate(p, True, "the withdrawn gang surge is over: the source gang returns to rotation")
    if not _take_down(ctx, tgt, tgt_pods, out, f"the gang surge to {pin} is abandoned", abandoned=True):
        return src, tgt
    key = ctx.instance_key(src.index)
    running = src.running_revision if (end != WITHDRAWN or standing) else ""
    reset = f"resetting to revision {running} for a fresh rollout"
    if end == WITHDRAWN and running:
        reset = f"the source returns to rotation on revision {running}"
    elif end == WITHDRAWN:
        reset = "the source's pods are gone and it re-enters as a fresh start at the roll target"
    elif not running:
        reset = "the source never ran a revision and re-enters as a fresh start"
    if end == HELD:
        block = retry.blocks.get(pin)
        attempts = block.attempts_started if block is not None else 0
        failure = {
            "reason": REPLACEMENT_LOST,
            "message": f"replacement gang (surge-index={k}) lost members after it took over serving; revision "
            f"{pin} holds after {attempts} attempt(s)",
            "time": format_time(ctx.now),
        }
        out.event(
            "Warning",
            "GangSurgeHeld",
            f"OMENative {key} held: revision {pin} admits no further attempt after the replacement gang "
            f"(surge-index={k}) lost members once it had taken over serving; the Instance stays Failed until a "
            "corrected revision or a reset",
        )
        return replace(src, phase=R.FAILED, operation=None, last_failure=failure), None
    if tgt.phase == R.FAILED:
        out.event(
            "Warning",
            "GangSurgeAbandoned",
            f"OMENative {key} abandoned failed gang surge (surge-index={k}); {reset}",
        )
    elif end == WITHDRAWN:
        out.event(
            "Normal",
            "GangSurgeAbandoned",
            f"OMENative {key} abandoned gang surge (surge-index={k}): the roll target moved off revision {pin} "
            f"while the replacement gang was short of members, so nothing is rebuilt at it; {reset}",
        )
    else:
        out.event(
            "Normal",
            "GangSurgeAbandoned",
            f"OMENative {key} abandoned superseded gang surge (surge-index={k}); {reset}",
        )
    if not running and end != WITHDRAWN:
        # Go ``status.AbandonedSurgeSourceMutation`` with no revision (ome-projects/ome
        # ``workload/status/gangsurge_test.go`` @ 8263d0c7
        # ``TestResetGangSurgeSourceAndRemoveMarker_NeverPromotedSourceEndsFailed``): a source that never
        # ran a revision ends in the fresh-start ``Failed`` shape, no operation, target nor running
        # revision, its ``lastFailure`` kept; ``Ready`` would count capacity nothing promoted.
        return replace(src, phase=R.FAILED, operation=None, running_revision="", target_revision=""), None
    if not running:
        return replace(
            src, phase=R.PENDING, operation=None, running_revision="", target_revision=ctx.target
        ), None
    # Go ``status.AbandonedSurgeSourceMutation`` with a revision is ``ReadyOnRevisionMutation``
    # (``workload/status/decision.go`` @ 8263d0c7): Ready on it, operation and target revision cleared
    # (``ops/update_gang_test.go`` @ 58a57f25 ``TestAbandonFailedGangSurge_ResetsSourceAfterPodsGone``:
    # "source TargetRevision ... want cleared"). Before, the row kept its running revision as target.
    return replace(src, phase=R.READY, operation=None, target_revision=""), None


def _recycled_members(src: Row, missing: Sequence[str]) -> int:
    """Go ``recycledMembers``: the missing members the terminal recycle took (0 or 1): the source's
    failure record names one of them and is dated no later than the attempt's last progress, the two
    the recycle writes together (an escalation's record is later, a loss names no pod)."""
    op, failure = src.operation, src.last_failure or {}
    if op is None or op.retry_count == 0 or not failure.get("podName"):
        return 0
    at = parse_time(failure.get("time"))
    progress = op.last_progress_at or op.started_at
    if at is not None and at > progress:
        return 0  # a record of unknown time is Go's zero time: never after the progress
    return 1 if failure["podName"] in missing else 0


def _lost_replacement(
    ctx: Ctx, src: Row, tgt: Row, lost: list[str], out: Out, retry: RetryBook
) -> tuple[Row, Row, bool]:
    """``rebuildLostReplacement``: past the hand-over a replacement that lost members died behind a
    source out of rotation, so its rebuild is the next attempt. The loss closes the attempt once
    (``closeLostGangSurgeAttempt``: the source ``Failed`` with its surge kept, ``ReplacementLost``, one
    failure on the pin's ladder); once the ladder admits another attempt the members are created again
    and the source re-arms (``Updating``, retry counted, a fresh deadline, ``GangSurgeRebuilt``); a
    ladder that holds the revision ends the pair (``GangSurgeHeld``). Returns the rows and whether the
    missing members may be created this pass. A loss is counted as Go counts it: the marker row's
    published member count, less the members observed and the one the terminal recycle took
    (:func:`_recycled_members`); members missing at the published count are created under the attempt
    as it stands, nothing charged."""
    op = src.operation
    assert op is not None
    pin, size = op.target_revision, ctx.pods_per_instance
    # Go ``rebuildLostReplacement`` (ome-projects/ome ``ops/update_gang.go``, the newest stored, 47,210
    # characters): a loss is a drop in the member count against the count the marker row published,
    # less the members the recycle took; members already missing at the published count are a rebuild
    # still pending, created and charged nothing (update_surge_test.go @ 58a57f25
    # TestGangSurge_ReplacementPodsLostAroundThePromote "the replacement's pods vanish before the write").
    count = tgt.pod_count - (size - len(lost)) - _recycled_members(src, lost)
    if src.phase == R.UPDATING and count <= 0:
        return src, tgt, True
    if src.phase == R.UPDATING:
        message = f"replacement gang (surge-index={tgt.index}) lost {count} of {size} member(s) after it took over serving"
        out.event(
            "Warning",
            "InstanceFailed",
            f"InferenceReplica {ctx.namespace}/{ctx.name} {ctx.instance_key(src.index)} escalated to "
            f'Phase=Failed (pod=""): {message}',
        )
        retry.failure(pin, message, ctx.now, out)  # recordLostAttemptWave: the record's message
        failure = {"reason": REPLACEMENT_LOST, "message": message, "time": format_time(ctx.now)}
        src = replace(src, phase=R.FAILED, last_failure=failure)
        if retry.gate(pin, ctx.now)[0] == HELD_STATE:
            return src, _cleanup(tgt), False
        return src, tgt, False
    state, when = retry.gate(pin, ctx.now)
    if state == HELD_STATE:
        return src, _cleanup(tgt), False
    if state is not None:
        out.wake(when)
        return src, tgt, False
    retry.started(pin)
    out.event(
        "Normal",
        "GangSurgeRebuilt",
        f"OMENative {ctx.instance_key(src.index)} rebuilt {len(lost)} of {size} member(s) of the replacement gang "
        f"(surge-index={tgt.index}) at revision {pin}; retry {op.retry_count + 1} under a fresh deadline",
    )
    rearmed = replace(
        op, retry_count=op.retry_count + 1, started_at=ctx.now, deadline=ctx.deadline_from(ctx.now)
    )
    return replace(src, phase=R.UPDATING, operation=rearmed), tgt, True


# Go types.OperationExternallyHeld: the waits outside the workload's control (quota, the scheduler, the
# gang's PodGroup name, a silent node, the operator's pause), during which no readiness clock runs.
EXTERNAL_HOLDS = frozenset({QUOTA_EXCEEDED, UNSCHEDULABLE, PODGROUP_TERMINATING, NODE_UNKNOWN, PAUSED})


def _externally_held(row: Row | None) -> bool:
    op = row.operation if row is not None else None
    return op is not None and (op.waiting in EXTERNAL_HOLDS or op.capacity_refused_at is not None)


def _released_clock(ctx: Ctx, row: Row | None, pods: Sequence[PodView]) -> Row | None:
    """The replacement row's own clock on release (Go ``ReconcileGatedDeadlines``, as
    ``instances.step_row`` for a row stepped alone): parked while a pod of it still carries an admission
    scheduling gate (``steps.check_failure``), restarted with the full window once none does and no
    waiting token holds it."""
    op = row.operation if row is not None else None
    if row is None or op is None or op.deadline is not None or op.waiting:
        return row
    if op.capacity_refused_at is not None or row.phase not in (R.CREATING, R.UPDATING, R.RESTARTING):
        return row
    if any(p.admission_gated for p in pods):
        return row
    return replace(row, operation=replace(op, deadline=ctx.deadline_from(ctx.now)))


def _source_clock(ctx: Ctx, src: Row | None, tgt: Row | None, tgt_pods: Sequence[PodView] = ()) -> Row | None:
    """The source's readiness clock follows its replacement's hold: ome-projects/ome 4dfb96b1
    ``workload/escalation/deadline.go`` ``ReconcileGatedDeadlines`` with ``instanceHeldExternally``
    (which reads the row its ``SurgeIndex`` points at: "a gang surge creates pods under the SURGE index
    while the governing operation and its deadline live on the SOURCE"). Held: the deadline is parked;
    released with a parked deadline: a full window from now (none when no timeout is configured);
    otherwise untouched. Edge-triggered, as Go's. Pinned by ``escalation/gang_test.go``
    ``TestReconcileGatedDeadlines_ParksGangSurgeSourceOnMemberRejection`` /
    ``…ParksGangTerminatingSurgeSource`` and ``scheduler_test.go``
    ``…ParksUnschedulableGangSurgeSource``. A replacement pod still carrying an admission scheduling
    gate holds the source too (``inferencereplica/status.go`` @ 8263d0c7 ``reconcileHeldDeadlines``:
    "a gang-surge source's attempt pods live in its Operation.SurgeIndex bucket: while they queue for
    admission, the source's deadline must park too"; ``status_test.go``
    ``TestReconcileHeldDeadlines_GangSurgeSourceParked``)."""
    op = src.operation if src is not None else None
    if src is None or op is None or src.phase != R.UPDATING:
        return src
    held = _externally_held(src) or _externally_held(tgt) or any(p.admission_gated for p in tgt_pods)
    if held and op.deadline is not None:
        return replace(src, operation=replace(op, deadline=None))
    if not held and op.deadline is None and ctx.deadline_from(ctx.now) is not None:
        return replace(src, operation=replace(op, deadline=ctx.deadline_from(ctx.now)))
    return src


def step_gang_surge(
    ctx: Ctx,
    src: Row,
    tgt: Row | None,
    src_pods: Sequence[PodView],
    tgt_pods: Sequence[PodView],
    out: Out,
    retry: RetryBook,
) -> tuple[Row | None, Row | None]:
    """One pass of a gang surge pair (never while paused: the caller parks the pair whole). Returns the
    source's and the replacement's new rows (None: the row goes); the source's deadline parks while its
    replacement is held (:func:`_source_clock`)."""
    new_src, new_tgt = _step_pair(ctx, src, tgt, src_pods, tgt_pods, out, retry)
    new_src = _drain_deadline(ctx, new_src, new_tgt, tgt_pods, out)
    return _source_clock(ctx, new_src, new_tgt, tgt_pods), _released_clock(ctx, new_tgt, tgt_pods)


def _drain_deadline(
    ctx: Ctx, src: Row | None, tgt: Row | None, tgt_pods: Sequence[PodView], out: Out
) -> Row | None:
    """The source's operation deadline at the drain step (Go ``workload/escalation/escalation.go``
    ``Run``, the BROAD path, ome-projects/ome 4dfb96b1; ``escalation/deadline.go``
    ``operationDeadlinePassed``). The escalation pass reads every row whatever its step: a gang
    surge source still ``Updating`` at ``SurgeDrain`` whose deadline has passed, while its blamed
    pods (``evidence.PodsForStuckCheck``: a gang Update surge is judged on its replacement gang
    alone) are not all present, ContainersReady and in rotation (``podSetIsCapacity``), held by no
    admission gate nor outside wait (``anyPodAdmissionGated`` on the surge bucket,
    ``instanceHeldExternally``), is stamped ``Failed`` keeping its operation
    (``StampFailedKeepingOperation``: a gang attempt is not disposable), with the evidence a pod
    names (``FirstWorkloadCausedPod``, else the readiness limbo) or ``DeadlineExceeded``, and the
    one ``InstanceFailed`` Warning (pod ""). No RetryBlock is written: Go's pass writes none and past
    the Surge step no abandon charges the wave. ``ops/update_gang.go`` ``gangSurgeUpdate`` (newest
    stored, 47,210 characters) reads no phase past the Surge step, so the Failed source's drain and
    promote go on as before (pinned by the 612,458-character reconcile_test-like file,
    ``TestFailedGangSurgeAtDrainStep_*``). Before, ours read no deadline at this step."""
    op = src.operation if src is not None else None
    if src is None or op is None or src.phase != R.UPDATING or op.step != R.STEP_SURGE_DRAIN:
        return src
    if op.deadline is None or _externally_held(src) or _externally_held(tgt):
        return src
    if any(p.admission_gated for p in tgt_pods):
        return src
    if ctx.now <= op.deadline:
        out.wake_past(op.deadline)  # now.After: nothing expires at the instant itself
        return src
    blamed = live(tgt_pods)
    if fully_serving(blamed, ctx.pods_per_instance):
        return src
    msg = f"{DEADLINE_EXCEEDED}: {op.type}/{op.step} exceeded InstanceReadyTimeout"
    record = workload_caused_record(blamed, ctx.now) or limbo_failure(blamed, ctx.now)
    failure = (
        dict(record)
        if record is not None
        else {
            "reason": DEADLINE_EXCEEDED,
            "message": msg,
            "time": format_time(ctx.now),
        }
    )
    out.event(
        "Warning",
        "InstanceFailed",
        f"InferenceReplica {ctx.namespace}/{ctx.name} {ctx.instance_key(src.index)} escalated to "
        f'Phase=Failed (pod=""): {msg}',
    )
    return replace(src, phase=R.FAILED, last_failure=failure)


def _step_pair(
    ctx: Ctx,
    src: Row,
    tgt: Row | None,
    src_pods: Sequence[PodView],
    tgt_pods: Sequence[PodView],
    out: Out,
    retry: RetryBook,
) -> tuple[Row | None, Row | None]:
    op = src.operation
    assert op is not None
    assert op.surge_index is not None
    rev = op.target_revision
    if tgt is None or not is_gang_surge_target(tgt):
        # The marker is journaled with the claim; a row edited away is restored (restoreInstanceStatus-
        # GangSurgeTarget) and the next pass carries on.
        _, marker = start_gang_surge(ctx, src, rev, op.surge_index, Out(ctx.now))
        return src, marker
    top = tgt.operation
    assert top is not None
    if top.step == R.STEP_GANG_SURGE_TARGET_CLEANUP:
        # Past the Surge step the marker reaches cleanup only through a lost replacement's end.
        end = "" if op.step == R.STEP_SURGE else (WITHDRAWN if rev != ctx.target else HELD)
        return _abandon(ctx, src, tgt, src_pods, tgt_pods, out, retry, end)
    if op.step == R.STEP_SURGE:
        # supersededGangSurgeKeepsPin: a target that moved off the pin retires the replacement while
        # any source pod stands, Ready or not; only a whole, runtime-ready replacement whose source is
        # gone finishes on its pin. A spec change is not a failure of the retired revision: no charge.
        keeps_pin = not live(src_pods) and gang_whole_and_ready(ctx, tgt, tgt_pods, rev)
        if rev != ctx.target and not keeps_pin:
            return src, _cleanup(tgt)
        brought = Out(out.now)
        new_tgt, done = bring_up_gang(ctx, tgt, tgt_pods, brought, retry, src.index)
        if new_tgt.last_failure is not None and new_tgt.last_failure != tgt.last_failure:
            # A member recycled on this pass (ops/terminal_recycle.go, ome-projects/ome @ 4dfb96b1
            # terminal_recycle_test.go TestGangSurgeCreate_AdmissionRejectedTargetIsRecycled): the pods
            # live under the replacement's index, the bookkeeping lands on the source row, which owns
            # the operation.
            src = replace(src, last_failure=new_tgt.last_failure)
        if new_tgt.phase == R.FAILED:
            # Both halves end (ome-projects/ome 8263d0c7 escalation/gang_test.go
            # TestEscalation_WedgedGangReplacementFailsBothHalvesOfThePair): the source, where the
            # governing operation lives, is stamped Failed with its operation kept and the replacement's
            # failure record, which routes the next pass into the abandon (abandonFailedGangSurge).
            # The one InstanceFailed Warning is the source's, naming the wedged replacement pod
            # (escalation_test.go TestEscalateStuckPodFailures_GangSurgeAttributedToSource:
            # WarnInstanceFailed idx = the source's index, pod = the surge's stuck pod).
            brought.events = [_as_source(ctx, e, tgt.index, src.index) for e in brought.events]
            out.absorb(brought)
            failed_src = replace(src, phase=R.FAILED, last_failure=new_tgt.last_failure)
            return failed_src, _cleanup(replace(new_tgt, operation=top))
        out.absorb(brought)
        if not done:
            return src, new_tgt
        if ctx.drain_withheld is not None:
            out.drain_holds.append(ctx.drain_withheld)  # ops drainAdmitted: stay at Surge
            return src, new_tgt
        for p in live(src_pods):
            out.gate(
                p, False, f"replacement Instance {tgt.index} serves: drain the source gang", GANG_SURGE_DRAIN
            )
        # Go StampStep(src, SurgeDrain, updateProgress=true): the step change touches lastProgressAt.
        drain = replace(op, step=R.STEP_SURGE_DRAIN, last_progress_at=ctx.now)
        return replace(src, operation=drain), new_tgt
    # SurgeDrain: the source's pods leave rotation, drain and go; then its PodGroup; then the promote.
    names = gang_names(ctx, tgt.index)
    dead = [p for p in tgt_pods if p.name in names and p.ended]
    if dead:
        # Go ops/update_gang.go gangSurgeUpdate (the newest stored, 47,210 characters): a member in a
        # terminal phase, Terminating or not, is the recycle's (``recycleTerminalTargets`` with the
        # SOURCE as statusIdx): counted on the source's operation with its failure record, and nothing
        # is created this pass. Once it is gone ``_recycled_members`` reads it as the controller's own
        # removal, so it is recreated at once under the attempt as it stands, not charged as a loss.
        # A recorded member whose delete is on its way is waited for (Go's unmet expectations).
        if all(p.terminating for p in dead) and _recycled_members(src, [p.name for p in dead]):
            return src, tgt
        return recycle_terminal(ctx, src, dead[0], out, dead[1:], tgt.index), tgt
    lost = [n for n in names if by_name(tgt_pods, n) is None]
    if lost:
        if rev != ctx.target:
            return src, _cleanup(tgt)  # endWithdrawnGangSurge: nothing is rebuilt at a withdrawn pin
        src, tgt, create = _lost_replacement(ctx, src, tgt, lost, out, retry)
        if not create:
            return src, tgt
    new_tgt, whole = bring_up_gang(ctx, tgt, tgt_pods, out, None, src.index)
    if src_pods:
        ready = whole and all(p.ready for p in live(tgt_pods))
        for p in live(src_pods):
            out.gate(
                p, False, f"replacement Instance {tgt.index} serves: drain the source gang", GANG_SURGE_DRAIN
            )
            if ready and p.gate == "False" and drained(p, ctx.world.service, ctx.world.endpoints):
                out.delete(p, "drained: no EndpointSlice lists the pod as ready")
        return src, new_tgt
    if not release_pod_group(
        ctx, src.index, out, f"Instance {src.index} was replaced by Instance {tgt.index}"
    ):
        return src, new_tgt
    if not whole:
        return src, new_tgt
    out.event(
        "Normal",
        "RecreateUpdateCompleted",
        f"OMENative {ctx.instance_key(src.index)} gang surge complete: instance {tgt.index} promoted to "
        f"revision {rev}",
    )
    return None, complete(ctx, new_tgt, rev, 0)


def step_orphan_target(ctx: Ctx, tgt: Row, pods: Sequence[PodView], out: Out) -> Row | None:
    """A ``GangSurgeTarget`` row no source claims any more (its source was scaled down or torn down
    mid-surge): its pods and PodGroup go, then the row."""
    if _take_down(ctx, tgt, pods, out, "the gang surge that created this Instance is gone"):
        return None
    return tgt
