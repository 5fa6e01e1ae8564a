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

from omereconcile.planner import rows as R
from omereconcile.planner.context import IN_PLACE_STRATEGIES, RECREATE, SURGE, Ctx, hash_of
from omereconcile.planner.gang import RESTART_POLICY_RECREATE, gang_names, release_pod_group
from omereconcile.planner.gang_ops import (
    gang_whole_and_ready,
    start_gang_restart,
    step_gang_create_pods,
    step_gang_idle,
)
from omereconcile.planner.gate import RECREATE_DRAIN, RESTART_DRAIN
from omereconcile.planner.inplace import (
    MODE_IN_PLACE,
    MODE_RECREATE,
    MODE_SURGE,
    STEP_IN_PLACE,
    choose_mode,
    start_in_place,
    step_in_place,
)
from omereconcile.planner.nodedeath import force_delete_silent, kubelet_silent
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import drained, ladder, live, owned, stuck_container
from omereconcile.planner.rejection import REJECTION_REASONS, dispose_rejection
from omereconcile.planner.reset import is_reset_journal, step_reset
from omereconcile.planner.restart import (
    rebuild_follows_target,
    single_pod_restart_reason,
    spent_repair,
    step_crash_ladder,
    step_spent_repair,
)
from omereconcile.planner.retry import IN_PROGRESS_STATE, RetryBook
from omereconcile.planner.rows import Operation, Row
from omereconcile.planner.steps import (
    bring_up,
    by_name,
    check_failure,
    complete,
    demote,
    new_operation,
    refreshed_failure_evidence,
    retire,
)
from omereconcile.planner.surge import SURGE_STEPS, failed_target_verdict, step_surge
from omereconcile.settings import format_go_duration
from omereconcile.world import PodView, format_time
from omerender import constants as c

__all__ = ["park", "start_create", "start_delete", "start_update", "step_row"]


def _op(ctx: Ctx, row: Row, type_: str, step: str, target: str, strategy: str | None = None) -> Operation:
    return new_operation(ctx, row.index, type_, step, target, strategy)


# -- starting operations ---------------------------------------------------------------------------


def start_create(ctx: Ctx, row: Row, target: str, out: Out, *, recycle: bool, new: bool) -> Row:
    op = _op(ctx, row, R.OP_CREATE, R.STEP_RECYCLE if recycle else R.STEP_CREATE_PODS, target)
    if new:
        # ops/create.go processStartActions, on the first materialization of the index.
        out.event(
            "Normal",
            "InstanceCreated",
            f"OMENative {ctx.instance_key(row.index)} materialized; {ctx.pods_per_instance} pod(s) requested",
        )
    return replace(row, phase=R.CREATING, operation=op, target_revision=target)


def start_update(ctx: Ctx, row: Row, target: str, out: Out, mode: str | None = None) -> Row:
    """The ``RecreateUpdateStarted`` texts are ``ops/update_surge.go`` ``surgeUpdate``'s and
    ``ops/update_recreate.go`` ``recreateUpdate``'s (``recreateRevisionCause``). ``mode`` is the
    in-place strategies' choice (``planner/inplace.py`` ``choose_mode``); the caller has already
    turned away an update ``InPlaceOnly`` refuses."""
    mode = mode or choose_mode(ctx, row, target) or MODE_RECREATE
    if mode == MODE_IN_PLACE:
        return start_in_place(ctx, row, target, out)
    if mode == MODE_SURGE:
        op = _op(ctx, row, R.OP_UPDATE, R.STEP_SURGE, target, SURGE)
        detail = f"surge to revision {target} (newOrdinal={1 - row.active_ordinal})"
        new_row = replace(row, phase=R.UPDATING, operation=op, target_revision=target)
    else:
        # RecreatePod deletes and recreates under the same name: a new incarnation (01 §4.1). The
        # cause is kept on the operation (patchInstanceStatusRecreatingForUpdate), so a revision roll
        # reads apart from a Restart's termination reason in status.
        cause = f"revision {row.running_revision} -> {target}"
        op = replace(_op(ctx, row, R.OP_UPDATE, R.STEP_DRAIN, target, RECREATE), reason=cause)
        detail = f"recreate ({cause}, incarnation={row.incarnation + 1})"
        new_row = replace(
            row, phase=R.UPDATING, operation=op, target_revision=target, incarnation=row.incarnation + 1
        )
    out.event("Normal", "RecreateUpdateStarted", f"OMENative {ctx.instance_key(row.index)} {detail}")
    return new_row


def start_delete(ctx: Ctx, row: Row, out: Out) -> Row:
    op = _op(ctx, row, R.OP_DELETE, R.STEP_DRAIN, row.target_revision or row.running_revision)
    return replace(row, phase=R.DELETING, operation=op)


# -- steps -----------------------------------------------------------------------------------------


def _delete_strays(ctx: Ctx, pods: Sequence[PodView], keep: set[str], out: Out) -> None:
    for p in live(pods):
        if p.name not in keep:
            retire(p, out, f"pod {p.name} belongs to no step of Instance {p.index}'s operation")


def _step_create_pods(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook) -> Row:
    if ctx.gang:
        return step_gang_create_pods(ctx, row, pods, out, retry)
    op = row.operation
    assert op is not None
    name = ctx.pod_name(row.index, row.active_ordinal)
    _delete_strays(ctx, pods, {name}, out)
    pod = by_name(pods, name)
    if (
        op.type == R.OP_CREATE
        and pod is not None
        and not pod.terminating
        and pod.revision_hash != hash_of(op.target_revision)
    ):
        # ops/update.go deleteSupersededRevisionPods: what a retired attempt left behind goes.
        if retire(pod, out, f"pod is at a revision the Create attempt at {op.target_revision} retired"):
            out.event(
                "Normal",
                "SupersededWreckageCleaned",
                f"OMENative {ctx.instance_key(row.index)} deleted 1 superseded-revision pod(s); "
                f"current target {op.target_revision}",
            )
        return row
    if (
        op.type == R.OP_UPDATE
        and pod is not None
        and pod.ended
        and not pod.terminating
        and not _admission_rejected(pod)
    ):
        # A recreate's rebuilt pod in a terminal phase: wait, see ``_admission_rejected``.
        row, failed = check_failure(ctx, row, pod, name, out, retry, created=True)
        return failed if failed is not None else row
    row, done = bring_up(ctx, row, pod, name, row.active_ordinal, out)
    if done:
        if op.type == R.OP_CREATE:
            if row.phase != R.READY:
                # ops/create.go commitReadyActions, for a row that was not Ready before.
                out.event(
                    "Normal",
                    "InstanceReady",
                    f"OMENative {ctx.instance_key(row.index)} is Ready (1 pod(s) serving)",
                )
        elif op.type == R.OP_RESTART:
            # ops/restart.go Restart, phase C (as a gang's, planner/gang_ops.py).
            out.event(
                "Normal",
                "RestartCompleted",
                f"OMENative {ctx.instance_key(row.index)} restart complete (incarnation={row.incarnation})",
            )
        else:
            out.event(
                "Normal",
                "RecreateUpdateCompleted",
                f"OMENative {ctx.instance_key(row.index)} recreate to revision {op.target_revision} complete",
            )
        return complete(ctx, row, op.target_revision, row.active_ordinal)
    live_pod = pod if pod is not None and not pod.terminating and not pod.ended else None
    row, failed = check_failure(ctx, row, live_pod, name, out, retry)
    return failed if failed is not None else row


_UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"
_OUT_OF_RESOURCE_PREFIX = "OutOf"
_RESOURCE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-./_")


def _admission_rejected(pod: PodView) -> bool:
    """Whether the kubelet refused to admit the pod after the scheduler placed it: phase ``Failed``
    with reason ``UnexpectedAdmissionError`` or ``OutOf<resource>`` (a lowercase-led resource name,
    ``OutOfcpu``, ``OutOfnvidia.com/gpu``).

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query`` ``PodAdmissionRejected`` and
    ``isOutOfResourceReason`` (the stored version read whole, 21,238 characters). Its one use here is
    the recreate's phase B/C (``ops/update_recreate.go`` @ 58a57f25 ``recreateUpdate``): the rebuilt
    pod is recycled (``recycleAdmissionRejectedTargets``, ``ops/terminal_recycle.go``) only when the
    kubelet refused it; any other terminal pod (Failed for another reason, Succeeded) holds its name
    and fails ``query.AllPodsRuntimeReady``, so the pass waits and only the operation deadline ends
    the roll (``update_recreate_test.go`` @ 4dfb96b1 ``TestRecreateDrain_PodObservationsThatDecideNothing``:
    no ``lastFailure``, no RetryBlock). 01 §4.5 has Create and Restart recycle ended pods and says
    nothing of an update; before (issue 37, goR2) ours recycled the pod at once, with
    ``TerminalPodRecycled`` and the pod's end on ``lastFailure``."""
    if pod.phase != "Failed":
        return False
    reason = pod.status_reason or ""
    if reason == _UNEXPECTED_ADMISSION_ERROR:
        return True
    resource = reason[len(_OUT_OF_RESOURCE_PREFIX) :] if reason.startswith(_OUT_OF_RESOURCE_PREFIX) else ""
    return bool(resource) and "a" <= resource[0] <= "z" and set(resource) <= _RESOURCE_NAME_CHARS


def _one_promote_away(pods: Sequence[PodView], name: str, pinned: str) -> bool:
    pod = by_name(pods, name)
    return (
        pod is not None
        and not pod.terminating
        and pod.containers_ready
        and pod.revision_hash == hash_of(pinned)
    )


def _retire_create(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, target: str
) -> tuple[Row, bool] | None:
    """``ops/create.go`` ``retireSupersededCreateMutation``: a Create attempt pinned to a revision the
    roll no longer targets is replaced by a fresh attempt at the target (new identity, deadline
    re-armed; not a failure, so no retry charge), with ``CreateAttemptSuperseded``. Not when the
    Instance served before (a recorded running revision: rolling it is the update's business), and
    not when the attempt is one promote away (its pod is ContainersReady: retiring it would drop
    traffic; it finishes at its revision and is then surged). Returns None while the target's retry
    gate denies the replacement: the old attempt then stays as it is; else the row and whether the
    attempt was retired in this pass."""
    op = row.operation
    assert op is not None
    if op.target_revision == target or op.step != R.STEP_CREATE_PODS:
        return row, False
    if not op.target_revision and not any(
        p.revision_hash and p.revision_hash != hash_of(target) for p in live(pods)
    ):
        # retireSupersededCreateMutation (the newest stored create.go): an unpinned attempt is retired
        # only when a pod's revision label proves it belongs to another revision; otherwise it is
        # adopted, pinned to the target, and goes on building in this pass.
        return replace(row, operation=replace(op, target_revision=target), target_revision=target), False
    if row.running_revision:
        return row, False
    if ctx.gang and gang_whole_and_ready(ctx, row, pods, op.target_revision):
        return row, False
    if _one_promote_away(pods, ctx.pod_name(row.index, row.active_ordinal), op.target_revision):
        return row, False
    state, when = retry.gate(target, ctx.now, _other_attempt_in_flight(ctx, row.index, target, retry))
    if state is not None:
        out.wake(when)
        return None
    out.event(
        "Normal",
        "CreateAttemptSuperseded",
        f"OMENative {ctx.instance_key(row.index)} retired the Create attempt pinned to {op.target_revision} "
        f"and restarted it at {target}",
    )
    return replace(
        row, operation=_op(ctx, row, R.OP_CREATE, R.STEP_CREATE_PODS, target), target_revision=target
    ), True


def _other_attempt_in_flight(ctx: Ctx, index: int, target: str, retry: RetryBook) -> bool:
    """``ops/create.go`` ``retargetDeniedByRetryBlock`` (the newest stored version): the in-flight
    question a ``RetryInProgress`` block asks of a retirement, asked as the first-attempt gate asks
    it: another row's Update toward ``target``, or any other row's in-flight Create, pinned or not
    (an unpinned Create would escape a revision-scoped reading). The row being retired is left out:
    it is pinned to the revision it leaves. Read only when the target's block is RetryInProgress."""
    block = retry.blocks.get(target)
    if block is None or block.state != IN_PROGRESS_STATE:
        return False
    for other in R.load_rows(ctx.world.replica.status):
        op = other.operation
        if other.index == index or op is None:
            continue
        if op.type == R.OP_UPDATE and op.target_revision == target:
            return True
        if op.type == R.OP_CREATE and other.phase == R.CREATING:
            return True
    return False


def _retarget(ctx: Ctx, row: Row, target: str) -> Row:
    """A rebuild whose pods are going anyway (``Recycle``) follows the target. (An Update's recreate
    is re-stamped instead: ``_restamp_recreate``.)"""
    op = row.operation
    assert op is not None
    if op.target_revision == target:
        return row
    new_op = replace(op, target_revision=target, started_at=ctx.now, deadline=ctx.deadline_from(ctx.now))
    return replace(row, operation=new_op, target_revision=target)


def _step_create(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row:
    op = row.operation
    assert op is not None
    if op.step == R.STEP_RECYCLE:
        row = _retarget(ctx, row, row_target)
        op = row.operation
        assert op is not None
        for p in live(pods):
            retire(p, out, "rebuild of a failed Instance: its pods go first")
        if pods:
            return row
        row = replace(row, operation=replace(op, step=R.STEP_CREATE_PODS))
    else:
        retired = _retire_create(ctx, row, pods, out, retry, row_target)
        if retired is None:
            return row
        row, retiring = retired
        if retiring:
            # ops/create.go createFilteredBatched (the newest stored version, 53,576 characters): a
            # retirement is the Instance's whole pass (``continue``): no pod is created or deleted
            # beside it, so a half-built gang never gets a member at the new target while the old
            # attempt's pods stand. The next pass owns what the retired attempt left behind.
            return row
    return _step_create_pods(ctx, row, pods, out, retry)


def _restamp_recreate(ctx: Ctx, row: Row, target: str, retry: RetryBook) -> Row:
    """An Update's recreate whose target moved is a new attempt at the new target, at the next
    incarnation: what the old attempt built (its rebuilt pods, at the old target) is now the old
    incarnation, drained and deleted by phase A before the new pods are created.

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/decision.go`` ``StampRecreating``
    (the newest stored version, the one carrying ``entryStampAttemptStarted``; commit not named by the
    index), run by ``ops/update_recreate.go`` @ 58a57f25 ``recreateUpdate`` on every pass: its
    skip-write guard holds only for a row ``Updating`` with an Update at step ``Drain`` *and*
    ``TargetRevision`` equal to the target; anything else bumps ``Incarnation`` and writes a fresh
    operation (new id, start, deadline, ``revision <running> -> <target>`` reason) and starts an attempt
    on the target's RetryBlock (``RetryBlockAttemptStarted``: a due ``Backoff`` block moves to
    ``RetryInProgress``). ``recreateUpdate`` then partitions the pods by the new incarnation. No
    ``RecreateUpdateStarted``: the pass's observed row was already at ``Drain`` (``wasNotRecreating``
    false). Pinned by ``update_test.go`` @ 58a57f25
    ``TestUpdateWithPods_RecreateFallbackRetargetedToTheRunningRevisionStaysARecreate`` ("want a bump
    past 2") and ``update_inplace_test.go`` @ 58a57f25
    ``TestUpdateWithPods_InPlaceReadinessAndRetargetAfterThePodLoss``. Go writes the spec's strategy on
    the new operation; ours keeps ``RecreatePod`` pinned, since the attempt is a recreate (an in-place
    roll that fell back to one is dispatched by its pin). Before (issue 37, goR2) ours re-pinned the
    operation (id kept, clock re-armed) and rebuilt at the same incarnation, deleting and recreating
    pods under one incarnation, against 01 §4.1 ("+1 on an update that deletes and recreates pods
    under the same names")."""
    cause = f"revision {row.running_revision} -> {target}"
    op = replace(_op(ctx, row, R.OP_UPDATE, R.STEP_DRAIN, target, RECREATE), reason=cause)
    retry.started(target)
    return replace(
        row,
        phase=R.UPDATING,
        operation=op,
        target_revision=target,
        incarnation=max(row.incarnation, 1) + 1,
    )


def _orphans(ctx: Ctx, index: int) -> list[PodView]:
    """The pods of ours labelled with Instance ``index`` but with no readable incarnation label: Go's
    ``query.BucketPodsByInstanceIdx`` puts them in the Instance's bucket and
    ``query.PartitionPodsByIncarnation`` calls them "unknown". ``planner/rollout.py`` ``group_pods``
    leaves them out of every other reading (a known difference, docs/goparity.md)."""
    return [p for p in ctx.unlabelled_pods if owned(p, ctx.prefix, ctx.component) and p.index == index]


def _refuse_orphans(
    ctx: Ctx, row: Row, pods: Sequence[PodView], orphans: Sequence[PodView], out: Out, retry: RetryBook
) -> Row:
    """A Restart or a recreate that finds an orphan of its Instance: one ``FoundOrphan`` Warning per
    orphan, in Go's words, and nothing deleted or created (an operator must relabel or remove the pod).
    Go (ome-projects/ome ``workload/ops/restart.go`` @ ae683e3f ``Restart``; ``update_recreate.go``
    ``recreateUpdate``) returns there; its escalation pass still judges the attempt apart from the op,
    on ``evidence.AttemptStuckPods``' scope, where a pod with no incarnation label stays in a Restart's:
    so the attempt's pods and the orphans are read here for the usual evidence (a stuck container past
    the grace, the deadline). Go ``evidence/stuckpod.go`` ``AttemptStuckPods`` (the newest stored
    version): a Restart owns the pods not below the row's incarnation, an Update those on its revision,
    a pod without the label in either case."""
    op = row.operation
    assert op is not None
    verb = "refusing to delete" if op.type == R.OP_RESTART else "refusing to recreate-update"
    for p in orphans:
        out.event(
            "Warning",
            "FoundOrphan",
            f"OMENative {ctx.instance_key(row.index)} found orphan pod {ctx.namespace}/{p.name} without "
            f"{c.LABEL_INSTANCE_INCARNATION}; {verb}",
        )
    want = hash_of(op.target_revision)

    def own(p: PodView) -> bool:
        # AttemptStuckPods: a Restart owns the pods not below its incarnation, an Update those on its
        # revision; a pod without the label stays in scope either way.
        if op.type == R.OP_RESTART:
            return p.incarnation is None or p.incarnation >= row.incarnation
        return not want or not p.revision_hash or p.revision_hash == want  # no target: scope open

    scope = [p for p in (*pods, *orphans) if not p.terminating and not p.ended and own(p)]
    evidence = next((p for p in scope if p.unschedulable_since is not None), None) or next(
        (p for p in scope if stuck_container(p) is not None), None
    )
    name = evidence.name if evidence is not None else orphans[0].name
    row, failed = check_failure(ctx, row, evidence, name, out, retry, created=True, members=scope)
    return failed if failed is not None else row


def _step_recreate(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row:
    """A recreate (an Update under ``RecreatePod``) or a Restart: drain and delete the old
    incarnation's pods, then create the new incarnation's and promote.

    An Update's step stays ``Drain`` through all three phases, which the pods tell apart: Go
    ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_recreate.go`` @ 58a57f25 (the newest
    of the stored versions read; ae683e3f's text plus the admission-rejected recycle) ``recreateUpdate``
    re-runs ``status.StampRecreating`` (Step=Drain) on every pass and picks phase A (old pods left), B
    (create the missing new pods) or C (serve, promote) from ``PartitionPodsByIncarnation``; pinned by
    ``update_recreate_test.go`` @ 4dfb96b1 ``TestRecreateDrain_PodObservationsThatDecideNothing`` and
    ``update_inplace_test.go`` @ 58a57f25 (``Step=Drain`` after the in-place roll's pod loss). Before,
    ours wrote ``CreatePods`` once the old incarnation was gone. A Restart still moves to
    ``CreatePods`` (its own step machine, ``ops/restart.go``, not re-read here).

    A revision move during an Update's recreate is a new attempt (``_restamp_recreate``), stamped before
    the pods are read, as ``recreateUpdate`` stamps before it partitions them.

    A pod of the Instance (its index label) with no readable incarnation label stops both, as in Go
    (ome-projects/ome ``workload/ops/restart.go`` @ ae683e3f ``Restart`` and ``update_recreate.go``
    ``recreateUpdate``: ``query.PartitionPodsByIncarnation``'s "unknown" pods): see :func:`_orphans`."""
    op = row.operation
    assert op is not None
    if op.type == R.OP_UPDATE and row_target and op.target_revision != row_target:
        row = _restamp_recreate(ctx, row, row_target, retry)
        op = row.operation
        assert op is not None
    orphans = _orphans(ctx, row.index)
    if orphans:
        return _refuse_orphans(ctx, row, pods, orphans, out, retry)
    if op.step == R.STEP_DRAIN:
        old = [p for p in pods if p.incarnation != row.incarnation]
        writer = RESTART_DRAIN if op.type == R.OP_RESTART else RECREATE_DRAIN
        for p in live(old):
            out.gate(p, False, "leave rotation before the pod is recreated", writer)
            if p.gate == "False" and drained(p, ctx.world.service, ctx.world.endpoints):
                out.delete(p, "drained: no EndpointSlice lists the pod as ready")
        if old:
            return row
        if op.type == R.OP_RESTART:
            row = replace(row, operation=replace(op, step=R.STEP_CREATE_PODS))
    if op.type == R.OP_RESTART and rebuild_follows_target(ctx, row, pods, retry, row_target):
        # Go ``StampRestartRevision``: the revision is recorded on the row before the first pod of the
        # rebuild is created, so the row names the pod set the repair builds and promotes.
        assert row.operation is not None
        row = replace(
            row,
            running_revision=ctx.target,
            target_revision=ctx.target,
            operation=replace(row.operation, target_revision=ctx.target),
        )
    return _step_create_pods(ctx, row, pods, out, retry)


def _step_delete(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row | None:
    for p in live(pods):
        out.gate(p, False, "scale-down or teardown: leave rotation before deletion")
        if p.gate == "False" and drained(p, ctx.world.service, ctx.world.endpoints):
            out.delete(p, "drained: no EndpointSlice lists the pod as ready")
    if not pods:
        # A gang's PodGroup goes after its pods (01 §3.6); the row goes once it is gone too.
        return None if release_pod_group(ctx, row.index, out, "its Instance is gone") else row
    op = row.operation
    assert op is not None
    if op.deadline is not None:
        if ctx.now > op.deadline and not _overdue_announced(row, op.deadline):
            # Go workload/ops delete_batch.go announceOverdueDrains: once per overdue episode, recorded
            # on the row as lastFailure (reason DrainOverdue, time = the deadline), which the
            # DrainOverdue condition reads; the drain itself goes on.
            detail, pod_name = overdue_drain_detail(pods)
            overdue = timedelta(seconds=round((ctx.now - op.deadline).total_seconds()))
            out.event(
                "Warning",
                "DrainOverdue",
                f"OMENative {ctx.instance_key(row.index)}: drain overdue by {format_go_duration(overdue)} "
                f"(deadline {format_time(op.deadline)}); {detail}",
            )
            failure = {
                "podName": pod_name,
                "reason": "DrainOverdue",
                "message": detail,
                "time": format_time(op.deadline),
            }
            return replace(row, last_failure=failure)
        out.wake(op.deadline)
    return row


def overdue_drain_detail(pods: Sequence[PodView]) -> tuple[str, str]:
    """What an overdue drain still waits on, and the record's pod: Go ``ops/delete_batch.go``
    ``overdueDrainPodDetail`` and ``overdueDrainPodName`` (ome-projects/ome, the version that carries
    ``announceOverdueDrains``). Pods with a deletion timestamp are "still Terminating", the others
    (not yet asked to terminate, still in rotation) "still draining", each list by name; the record
    names the first Terminating pod, else the first pod."""
    ordered = sorted(pods, key=lambda p: p.name)
    terminating = [p.name for p in ordered if p.terminating]
    pending = [p.name for p in ordered if not p.terminating]
    parts = []
    if terminating:
        parts.append(f"{len(terminating)} pod(s) still Terminating ({', '.join(terminating)})")
    if pending:
        parts.append(f"{len(pending)} pod(s) still draining ({', '.join(pending)})")
    detail = "; ".join(parts) or "no pods observed"
    first = terminating[0] if terminating else (ordered[0].name if ordered else "")
    return detail, first


def _overdue_announced(row: Row, deadline: datetime) -> bool:
    lf = row.last_failure or {}
    return lf.get("reason") == "DrainOverdue" and lf.get("time") == format_time(deadline)


def _idle_strays(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> None:
    """The pods of an operation-free single-pod row other than its active one are strays, deleted; a
    failed surge's replacement Go leaves standing is kept (parked for the operator or recycled by
    rollout's failed_target_recovery this pass, planner/surge.py)."""
    keep = {ctx.pod_name(row.index, row.active_ordinal)}
    verdict, parked = failed_target_verdict(ctx, row, pods)
    if verdict and parked is not None:
        keep.add(parked.name)
    _delete_strays(ctx, pods, keep, out)


def _step_idle(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row:
    if ctx.gang:
        return step_gang_idle(ctx, row, pods, out)
    name = ctx.pod_name(row.index, row.active_ordinal)
    _idle_strays(ctx, row, pods, out)
    active = by_name(pods, name)
    running = active is not None and not active.terminating and not active.ended
    recreates = ctx.restart_policy == RESTART_POLICY_RECREATE and not ctx.freeze
    if row.phase == R.READY and active is not None and running and recreates:
        # Go ops/restart.go DetectRestartTriggerWithPods, the Ready branch's runnerRestartTrigger (the
        # newest stored version; @ ae683e3f runnerRestartedSinceReady): under
        # RecreateInstanceOnPodRestart a runner the kubelet restarted in place after readySince lost
        # the process the Instance was promoted with, so the Instance is rebuilt at the next
        # incarnation, single pod as gang. (A pod that ended is the restart selection's, rollout.py.)
        restarted = single_pod_restart_reason(ctx, row, [active])
        if restarted is not None:
            return start_gang_restart(ctx, row, pods, restarted, out)
    if row.phase == R.READY and not running:
        if any(p.terminating for p in pods):
            # Go workload planUnbackedDemotions: "a Terminating pod still counts as live, deferring the
            # correction until the loss is total and settled" -- the row stays Ready, published with the
            # terminating pod's counts, until the pod object is gone.
            return row
        # workload truth pass (DemoteUnbackedInstances), a Warning.
        return demote(ctx, row, out)
    if active is None or not running:
        return row
    lad = ladder(active, ctx.world.endpoints, ctx.min_ready, ctx.now)
    if lad.ready and row.phase in (R.READY, R.FAILED):
        out.gate(active, True, "all containers of the Instance are ready: enter rotation")
    if row.phase == R.FAILED and lad.serving and lad.available:
        # The pod that missed its deadline came up after all: the Instance recovers on its target.
        # Or the spec was reverted to the revision its serving pod runs (a corrective roll-back
        # after a failed update): nothing is left to roll, and the Instance is promoted where it
        # serves. Go: ome-projects/ome ``workload/ops/cleanup.go`` @ ae683e3f ``CleanupWreckage``
        # ("after the debris is gone the Create pass re-proves readiness and promotes"), pinned by
        # ``workload/corrective_recovery_test.go`` @ ae683e3f
        # ``TestCorrectiveRecovery_SinglePod_RollBack``. Before, the row kept the abandoned target
        # and stayed Failed for good.
        for rev in (row.target_revision, ctx.target):
            if rev and active.revision_hash == hash_of(rev):
                return complete(ctx, row, rev, row.active_ordinal)
    return row


def _free_silent_names(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> None:
    """Go ``ops/unknown_phase.go`` ``recoverUnknownPhaseInstances`` (ome-projects/ome, the newest stored
    version, 5,517 characters): "the Create pass runs the sweep over every planned Instance, so a
    serving Instance whose node dies is rebuilt elsewhere by the ordinary missing-pod paths once the
    names are freed". An Instance with no operation whose pod's kubelet stopped reporting has that pod
    force-deleted on node-death evidence under ``lifecycle.forceDelete`` (the evidence's boundary is a
    wake-up until then); a step's own pods go through ``holds.node_unknown_hold``, a Terminating pod
    through the sweep. A pause runs no Create pass, so nothing is freed under one. Go test: the
    612,458-character root reconcile_test,
    TestNodeLoss_ServingInstanceIsRebuiltElsewhereUnderTheForceDeletePolicy. Before, only a row with an
    operation freed a silent pod's name, and a Ready Instance on a dead node waited for its node."""
    if ctx.paused or ctx.world.settings.force_delete is None:
        return
    names = set(gang_names(ctx, row.index)) if ctx.gang else {ctx.pod_name(row.index, row.active_ordinal)}
    for pod in sorted(pods, key=lambda p: p.name):
        if (
            pod.name in names
            and not pod.terminating
            and kubelet_silent(ctx.world.nodes, pod, ctx.world.settings.force_delete)
        ):
            force_delete_silent(ctx, row.index, pod, out)


def park(ctx: Ctx, row: Row) -> Row:
    """Go ``holds/pause.go`` ``pauseHold``: the weakest authority on the row. A row another authority
    already holds (quota, the scheduler, a silent node: its ``waiting`` token) keeps that token; the
    pause only stops the next step and the clock."""
    op = row.operation
    assert op is not None
    if op.waiting == "Paused":
        # The clock stays parked for the length of the hold, even if a deadline was written beside the
        # token (Go escalation/deadline.go ReconcileGatedDeadlines; deadline_test.go
        # TestReconcileGatedDeadlines_PausedHoldParksAndRearms @ 8263d0c7).
        return row if op.deadline is None else replace(row, operation=replace(op, deadline=None))
    if op.waiting:
        return row  # that authority owns the token and its clock; the pause only withholds the step
    return replace(row, operation=replace(op, waiting="Paused", deadline=None))


def step_row(
    ctx: Ctx,
    row: Row,
    pods: Sequence[PodView],
    out: Out,
    retry: RetryBook,
    row_target: str,
    *,
    full_create: bool = False,
) -> Row | None:
    """Advance one Instance by what this pass can do. ``None`` means the Instance is gone.

    ``full_create``: Go's full Create pass runs this pass (``rollout._full_create_pass``). A Create a
    settled Instance opens then (a gang under restart policy ``None`` refilling a lost member) is
    stepped in the same pass: Go's ``ops/create.go`` ``createFilteredBatched`` commits the
    ``Creating`` intent and then creates the missing pods (``processStartActions``), pinned by
    ``ops/create_test.go`` (the newest stored) ``TestCreate_NonRecreatePolicy_SelfHealsMissingPod``.
    Before issue 37 (goY) the member was created one pass after the stamp."""
    row = refreshed_failure_evidence(ctx, row, pods)
    op = row.operation
    if op is None:
        _free_silent_names(ctx, row, pods, out)
        # The crash ladder and the crash-loop episode come first, single pod or gang (Go
        # DetectRestartTriggerWithPods reads them ahead of the policy's triggers; planner/restart.py).
        # A gang's strays are step_gang_idle's (its members by name), never the single-pod sweep's.
        crashed = step_crash_ladder(ctx, row, pods, out, retry)
        if crashed is not None:
            if crashed.operation is None and not ctx.gang:
                _idle_strays(ctx, crashed, pods, out)
            return crashed
        idle = _step_idle(ctx, row, pods, out)
        new_op = idle.operation
        if full_create and new_op is not None and new_op.type == R.OP_CREATE and idle.phase == R.CREATING:
            return step_row(ctx, idle, pods, out, retry, row_target)
        return idle
    if op.type == R.OP_DELETE:
        return _step_delete(ctx, row, pods, out)
    if is_reset_journal(op):
        # The operator's reset runs even under Freeze; the rebuild after it waits for the normal gates.
        return step_reset(ctx, row, pods, out)
    if op.waiting in REJECTION_REASONS:
        # The API server refused the attempt's pod write for good (recorded by the executor): Go
        # disposes it at the write site, before any hold or step (planner/rejection.py).
        return dispose_rejection(ctx, row, ctx.pod_name(row.index, row.active_ordinal), out, retry)
    if spent_repair(row):
        # A Restart parked at Failed keeps its exits (planner/restart.py; Go ops/restart.go
        # DetectRestartTriggerWithPods reads it ahead of the restart policy). Under Freeze the restart
        # pass opens nothing, and what Go's frozen pass does with a spent repair was not read: it stays.
        if ctx.paused and ctx.freeze:
            return row
        row, opened = step_spent_repair(ctx, row, pods, out, retry)
        return _advance(ctx, row, pods, out, retry, row_target, paused=False) if opened else row
    # Pause parks in-flight work (clock stopped, 01 §4.6). A committed Create finishes under either
    # mode (Go holds/pause.go pauseHeldOperation: "a committed create finishes the set it started";
    # ops/create.go CreateCommittedIndices runs for it while paused); Freeze parks every other one.
    committed_create = op.type == R.OP_CREATE and op.step == R.STEP_CREATE_PODS and row.phase == R.CREATING
    if ctx.paused and (op.type == R.OP_UPDATE or (ctx.freeze and op.type == R.OP_RESTART)):
        return _step_paused(ctx, row, pods, out, retry, row_target)
    if ctx.paused and ctx.freeze and not committed_create:
        return park(ctx, row)
    if ctx.paused and committed_create and not row.running_revision and op.target_revision != ctx.target:
        # ops/create.go createFinishableAt (ome-projects/ome, the newest stored create.go, 53,576
        # characters; CreateCommittedIndices is the pass a paused Component runs): a first
        # materialization (no running revision: the attempt owns its pods) committed to a revision the
        # Component no longer converges to, or naming none, is not finished under a pause; retiring it
        # is a new operation the pause withholds, so the row is left as it is until the unpause. Go
        # test: the 612,458-character root reconcile_test, TestReconcile_PausedLeavesASupersededCreateAlone.
        # Before: the set was finished at the pinned revision under the pause.
        return park(ctx, row)
    if op.waiting == "Paused" and not ctx.paused:
        # Unpaused: the full window again from now (01 §4.6). While the pause stands, a row it does
        # not hold (a committed Create) keeps the token the episode left (Go reportPause).
        row = replace(row, operation=replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now)))
    elif (
        not ctx.paused
        and not op.waiting
        and op.capacity_refused_at is None
        and op.deadline is None
        and op.surge_index is None
        and row.phase in (R.CREATING, R.UPDATING, R.RESTARTING)
        and not any(p.admission_gated for p in pods)
    ):
        # Go escalation/deadline.go ReconcileGatedDeadlines, run each pass by inferencereplica/status.go
        # @ 8263d0c7 reconcileHeldDeadlines: a transient row whose clock is parked and that nothing
        # holds any more (no pause, no waiting token, no pod still carrying an admission scheduling
        # gate — steps.check_failure parks those) gets the full window from now: a committed Create
        # the pause parked without a token ("unpausing rearms each parked deadline from that point"),
        # an Instance Kueue has just admitted ("the clock starts from admission"). A gang surge's
        # source follows its replacement instead (gang_ops._source_clock). With no readiness timeout
        # configured there is no clock to restart.
        row = replace(row, operation=replace(op, deadline=ctx.deadline_from(ctx.now)))
    return _advance(ctx, row, pods, out, retry, row_target, paused=False)


def _advance(
    ctx: Ctx,
    row: Row,
    pods: Sequence[PodView],
    out: Out,
    retry: RetryBook,
    row_target: str,
    *,
    paused: bool,
) -> Row | None:
    """The operation's step machine, one pass."""
    op = row.operation
    assert op is not None
    if op.type == R.OP_CREATE:
        return _step_create(ctx, row, pods, out, retry, row_target)
    if op.type == R.OP_UPDATE and op.step == STEP_IN_PLACE:
        if not op.strategy and ctx.strategy not in IN_PLACE_STRATEGIES:
            return _unpinned_in_place(ctx, row, row_target, out)
        return step_in_place(ctx, row, pods, out, retry, row_target)
    if op.strategy == RECREATE or op.type == R.OP_RESTART:
        return _step_recreate(ctx, row, pods, out, retry, row_target)
    return step_surge(ctx, row, pods, out, retry, paused=paused)


def _unpinned_in_place(ctx: Ctx, row: Row, row_target: str, out: Out) -> Row:
    """An in-place roll whose operation pins no strategy (a row an older controller wrote), the
    strategy since edited away from the in-place pair: the attempt runs under the edited strategy.

    Go (ome-projects/ome): ``workload/ops/update.go`` ``UpdateWithPods`` and ``effectiveUpdateStrategy``
    (58a57f25, and unchanged in the newest stored version, 50,518 characters, read whole): the
    strategy an attempt runs under is "the one pinned on the operation in flight, or the desired one
    when no attempt owns the Instance" — and an operation with an empty ``Strategy`` pins nothing,
    so the desired strategy resolves the mode. A row at step ``InPlace`` is not surge-owned
    (``isSurgeOwnedStatus``) nor a recreate in flight (``recreateInFlight``), so
    ``chooseUpdateModeForInstance`` decides: ``RecreatePod`` runs ``recreateUpdate``, whose stamp
    (``patchInstanceStatusRecreatingForUpdate``: its guard requires step ``Drain``, "so a prior in-place
    pass at the same target doesn't block the bump") opens a new operation at step ``Drain`` with the
    incarnation bumped and ``RecreateUpdateStarted``; ``SurgeThenDrain`` runs ``surgeUpdate``, which
    opens a surge. Pinned by ``update_test.go`` @ 58a57f25
    ``TestUpdate_StrategyChangeMidRollout_RecreateStillBumpsIncarnation``. Every in-place operation
    ours opens pins its strategy (``inplace.start_in_place``), so only such inherited rows take this
    path. Before: ours dispatched the row by its step and kept patching in place."""
    mode = MODE_RECREATE if ctx.strategy == RECREATE else MODE_SURGE
    return start_update(ctx, row, row_target, out, mode)


def _step_paused(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook, row_target: str
) -> Row | None:
    """An attempt already under way while the Component is paused: an ``Update`` under either mode, a
    ``Restart`` under ``Freeze`` (a standard pause does not hold a repair). It runs the step it is on
    to that step's boundary and starts no next step; the row carries the pause's token (unless another
    authority already holds it) and its clock stays parked.

    Go (ome-projects/ome): ``workload/plan_decision.go`` ``Plan``, the newest stored version (49,435
    characters, the one that carries ``LadderHold``/``StandingHold``; commit not named by the index):
    "an attempt already in flight still runs the step it is on to that step's boundary. What a pause
    withholds is the next operation and the next step, so a pause never leaves an Instance mid-step —
    dark between a delete and its recreate, or half-materialized — for the length of the hold.
    PauseFreeze deepens the hold onto the restart pass: no repair starts, and one already under way
    only finishes its step" (``pausedUpdateContinuations``, ``restartContinuations``); the ops it
    dispatches carry no pause check of their own (``ops/update.go`` ``UpdateWithPods``,
    ``ops/update_recreate.go`` ``recreateUpdate``, ``ops/update_surge.go`` ``surgeUpdate``,
    ``ops/restart.go`` ``Restart`` @ ae683e3f). The token and the parked clock are
    ``holds/pause.go`` ``pauseHeldOperation``/``reportPause`` (dcfb4135: update held in both modes,
    restart under a freeze only) and ``status.go`` ``reconcileHeldDeadlines`` (8263d0c7). Pinned by
    ``plan_decision_test.go`` ``TestPlan_Paused_AdvancesInFlightAttemptsOnly``,
    ``TestPlan_PauseFreeze_AdvancesTheOpenRollOnly``, ``…AdvancesTheOpenDrain`` and
    ``…AdvancesOpenRepairOnly``. So a RecreatePod Instance paused between its delete and its recreate
    gets its pod, an in-place patch and a surge's drain finish, and a frozen repair recreates what it
    deleted. The single-pod surge's entry step is the one boundary a pause stops at: its replacement
    comes up to the promote bar and the drain, the next step, waits (the source keeps serving).
    Before: every paused Update (and under ``Freeze`` every Restart) was parked where it stood."""
    op = row.operation
    assert op is not None
    parked = park(ctx, row)
    if op.type == R.OP_UPDATE and op.strategy != RECREATE and op.step in SURGE_STEPS:
        # ops/update_surge.go surgeUpdate (ome-projects/ome @ 58a57f25, update_surge_test.go
        # TestSurgeUpdate_PausedHoldsAtTheSurgeStepBoundary, …PausedDrainDeletesAndPromotes): a
        # pause holds an attempt at a step boundary. A paused surge still reaches the promote bar
        # but the drain, a new step, waits; a drain already under way runs to its end (the source
        # is deleted and the row promotes onto the replacement's slot). Under either mode.
        return step_surge(ctx, parked, pods, out, retry, paused=True)
    if op.type == R.OP_UPDATE and op.step == STEP_IN_PLACE:
        return _step_in_place_paused(ctx, parked, pods, out, retry)
    # The roll is what the pause withholds: an open Update finishes at the revision it is pinned to, not
    # at the revision a paused Instance is repaired at.
    pinned = op.target_revision if op.type == R.OP_UPDATE and op.target_revision else row_target
    advanced = _advance(ctx, parked, pods, out, retry, pinned, paused=True)
    if advanced is None or advanced.operation is None or advanced.phase in (R.READY, R.FAILED):
        return advanced
    return park(ctx, advanced)


def _step_in_place_paused(ctx: Ctx, parked: Row, pods: Sequence[PodView], out: Out, retry: RetryBook) -> Row:
    """ops/update_inplace.go inPlaceUpdate (ome-projects/ome @ 58a57f25, update_inplace_test.go
    TestUpdate_InPlacePausedCompletesThePatch): the in-place patch is one step, so a pause taken while
    it runs does not leave the Instance on a half-applied revision. Only the patch itself runs: a pass
    that would open another step (a retarget, the re-resolution to a recreate) or end the attempt in
    failure is withheld like any other step. Under either pause mode (goN: the newest ``Plan`` holds
    Update the same under ``Freeze``)."""
    op = parked.operation
    assert op is not None
    scratch = Out(ctx.now)
    book = replace(retry, blocks=dict(retry.blocks))  # a withheld failure charges nothing
    stepped = step_in_place(ctx, parked, pods, scratch, book, op.target_revision)
    after = stepped.operation
    if stepped.phase == R.FAILED or (
        after is not None and (after.id != op.id or after.step != STEP_IN_PLACE)
    ):
        return parked
    out.absorb(scratch)
    retry.blocks.clear()
    retry.blocks.update(book.blocks)
    return stepped if after is None else park(ctx, stepped)
