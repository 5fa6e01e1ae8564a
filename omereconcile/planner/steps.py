"""Pod-level steps every operation shares: find a slot's pod, bring it up, retire it, fail the row.

Each follows one OME Go function (``pkg/controller/v1beta1/workload/...``), named in its docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from omereconcile.actions import CreatePod
from omereconcile.planner import rows as R
from omereconcile.planner.admission_hold import admission_hold
from omereconcile.planner.context import Ctx, hash_of
from omereconcile.planner.holds import (
    NODE_UNKNOWN,
    UNSCHEDULABLE,
    node_unknown_hold,
    scheduler_hold,
    unschedulable_failure_message,
)
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import (
    attempt_crash_looping,
    crash_loop_failure,
    fully_serving,
    ladder,
    limbo_failure,
    stuck_container,
    workload_caused_container,
)
from omereconcile.planner.quota import quota_hold
from omereconcile.planner.relocation import (
    apply_exclusions,
    attempt_suspect_node,
    migration_mode_allows,
    relocation_record,
)
from omereconcile.planner.retry import HELD_STATE, RetryBook, environment_caused
from omereconcile.planner.rows import Operation, Row, operation_id
from omereconcile.settings import format_go_duration
from omereconcile.world import PodView, format_time, parse_time
from omerender import constants as c

__all__ = [
    "DEADLINE_EXCEEDED",
    "UNSCHEDULABLE",
    "Failure",
    "bring_up",
    "by_name",
    "check_failure",
    "complete",
    "create_pod",
    "demote",
    "disposable",
    "dispose",
    "fail",
    "new_operation",
    "recycle_terminal",
    "recycled_on_excluded_node",
    "release_exclusions",
    "relocate",
    "render_pod",
    "retire",
    "retire_abandoned",
    "terminal_failure",
]

DEADLINE_EXCEEDED = "DeadlineExceeded"  # workload DeadlineExceededReason


def new_operation(
    ctx: Ctx,
    index: int,
    type_: str,
    step: str,
    target: str,
    strategy: str | None = None,
    surge_index: int | None = None,
) -> Operation:
    """An operation starting now, deadline a full window away.

    The id is OME's ``<type>-<index>-<unix seconds>`` (``create-0-1700000000``; ops ``StampCreating``,
    ``patchInstanceStatusUpdating``/``Recreating``, ``restart.go``: ``fmt.Sprintf("create-%d-%d", idx,
    now.Unix())`` and its ``update``/``restart`` siblings). It is an opaque label: nothing reads it back,
    so a row journaled under the earlier ``<index>-<type>-<unix>`` form keeps its operation unchanged.
    """
    return Operation(
        id=operation_id(type_, index, ctx.now),
        type=type_,
        step=step,
        target_revision=target,
        started_at=ctx.now,
        last_progress_at=ctx.now,
        deadline=ctx.deadline_from(ctx.now),
        strategy=strategy,
        surge_index=surge_index,
    )


def demote(ctx: Ctx, row: Row, out: Out) -> Row:
    """A Ready Instance no live pod backs goes ``Pending`` (workload truth pass
    ``DemoteUnbackedInstances``, a Warning)."""
    out.event(
        "Warning",
        "InstanceDemoted",
        f"Instance {row.index} (component={ctx.component}) demoted Ready→Pending: "
        "no live pods back the Ready phase",
    )
    return replace(row, phase=R.PENDING)


def by_name(pods: Sequence[PodView], name: str) -> PodView | None:
    # Prefer the live pod: a terminating same-named pod cannot coexist with a live one anyway.
    found = [p for p in pods if p.name == name]
    found.sort(key=lambda p: p.terminating)
    return found[0] if found else None


def retire(pod: PodView, out: Out, why: str) -> bool:
    """Remove a pod the operation no longer wants, never dropping the traffic it carries.

    OME ``ops/update.go`` ``deleteSupersededRevisionPods`` (and ``unrouteServingPods`` in
    ``ops/update_surge.go``): a pod whose serving gate is True is taken out of rotation and left for
    the next pass, so the endpoint controllers get a window to act on the withdrawal; one already
    out of rotation (or ended) is deleted now. Returns True once the delete is issued or under way.
    """
    if pod.terminating:
        return True
    if pod.gate == "True" and not pod.ended:
        out.gate(pod, False, f"{why}: leave rotation first, deleted on a later pass")
        return False
    out.delete(pod, why)
    return True


def retire_abandoned(ctx: Ctx, pod: PodView, out: Out, why: str) -> bool:
    """``retire`` for a surge replacement the rollout abandons (Go ``abandonedReplacementDeleteOptions``):
    one that never carried the serving gate (no ``ome.io/serving`` condition at all) owes no
    in-flight work, so with ``lifecycle.abandonedReplacementGrace`` configured it is deleted with that
    termination grace (seconds, rounded up) instead of its own; any other pod retires as usual."""
    grace = ctx.world.settings.abandoned_replacement_grace
    if grace > timedelta(0) and not pod.terminating and pod.condition(c.SERVING_GATE) is None:
        out.delete(pod, why, math.ceil(grace.total_seconds()))
        return True
    return retire(pod, out, why)


def create_pod(ctx: Ctx, row: Row, target: str, ordinal: int, out: Out, why: str) -> None:
    name = ctx.pod_name(row.index, ordinal)
    try:
        pod = render_pod(ctx, target, row.index, row.incarnation, c.RUNNER_DEFAULT, ordinal)
    except LookupError:
        revision_gone(ctx, row.index, target, out)
        return
    out.actions.append(CreatePod(name, pod, why))


REPAIR_REVISION_GONE = "RepairRevisionGone"


def revision_gone(ctx: Ctx, index: int, revision: str, out: Out) -> None:
    """A rebuild whose revision has no ControllerRevision left creates nothing and says so once per
    attempt (Go ome-projects/ome ``ops`` ``announceRevisionGone``, its words, through
    ``status/announced.go`` @ 4dfb96b1 ``Announce``; ``workload/types`` ``EventReasonRepairRevisionGone``):
    a pod built from the current template under the missing revision's label would route, count and
    drain one revision while running another, so the attempt waits for its deadline. The Warning is
    recorded on the row's ``announced`` record as ``RepairRevisionGone@<operation id>``, so later passes
    over the same attempt (and a restarted reconciler) do not repeat it; a new attempt says it again.
    The pass goes on for the other Instances (before, the pod factory's ``LookupError`` failed the whole
    pass every time)."""
    out.announce(
        index,
        REPAIR_REVISION_GONE,
        f"OMENative {ctx.instance_key(index)} cannot rebuild revision {revision}: its ControllerRevision "
        "is gone, so no pod is created from the current template under that revision; the attempt waits "
        "for its deadline",
    )


def render_pod(
    ctx: Ctx,
    target: str,
    index: int,
    incarnation: int,
    runner: str,
    ordinal: int,
    excluded_for: int | None = None,
) -> dict[str, object]:
    """The pod to create, with the node exclusions the relocation ledger holds for this Instance at
    ``target`` (Go ``RenderWithRevision``: ``applyRequiredNodeExclusion`` for each of
    ``InstancePlan.ExcludedNodes``; ``planner/relocation.py``), or for ``excluded_for`` when given (a
    gang surge's replacement carries its source's)."""
    pod = ctx.world.pod_factory(target, index, incarnation, runner, ordinal)
    owner = index if excluded_for is None else excluded_for
    nodes = ctx.ledger.excluded_nodes(ctx.component, owner, target) if ctx.ledger is not None else []
    return apply_exclusions(pod, nodes) if nodes else pod


def terminal_failure(ctx: Ctx, pod: PodView) -> dict[str, object]:
    """``ops/terminal_recycle.go`` ``terminalPodTermination``: the dead pod's diagnostics, the
    pod-level reason replacing the bare ``PodFailed`` placeholder when no container recorded one."""
    failure: dict[str, object] = {"podName": pod.name, "time": format_time(ctx.now)}
    dead = next((ct for ct in pod.containers if ct.terminated_reason), None)
    if dead is not None:
        failure.update(containerName=dead.name, reason=dead.terminated_reason)
        if dead.exit_code is not None:
            failure["exitCode"] = dead.exit_code
    else:
        failure["reason"] = pod.status_reason or "PodFailed"
    return failure


def recycle_terminal(
    ctx: Ctx, row: Row, pod: PodView, out: Out, more: Sequence[PodView] = (), pods_index: int | None = None
) -> Row:
    """``ops/terminal_recycle.go`` ``recycleTerminalPods``: a dead pod holding the slot's name is
    deleted so it can be recreated. Past the operation's deadline nothing is recycled (escalation
    owns the attempt). The first recycle of an attempt is immediate; later ones follow the
    ``updateRetry`` ladder indexed by ``retryCount`` from ``lastProgressAt`` (with no policy, the
    next pass). The count, ``lastProgressAt`` and ``lastFailure`` are written ahead of the delete; a
    dead pod already being deleted is counted and not deleted again. ``row`` owns the operation and
    takes the bookkeeping; ``pods_index`` is the Instance the pods live under, when another (Go's
    ``statusIdx``/``podIdx``: a gang surge's replacement members, the source's operation)."""
    op = row.operation
    assert op is not None
    if op.deadline is not None and ctx.now > op.deadline:
        return row
    policy = ctx.world.settings.update_retry
    if op.retry_count > 0 and policy is not None:
        not_before = (op.last_progress_at or op.started_at) + policy.next_delay(op.retry_count)
        if ctx.now < not_before:
            out.wake(not_before)
            return row
    n = op.retry_count + 1
    dead = [pod, *more]
    desc = ", ".join(
        f"{p.name} ({p.phase}" + (f"/{p.status_reason}" if p.status_reason else "") + ")" for p in dead
    )
    out.event(
        "Warning",
        "TerminalPodRecycled",
        f"OMENative {ctx.instance_key(row.index if pods_index is None else pods_index)} deleted terminal "
        f"pod(s) {desc} for recreate ({op.type} recycle {n})",
    )
    for p in dead:
        # One recycle for every dead member a pass finds (ome-projects/ome @ 58a57f25
        # terminal_recycle_external_test.go TestCreate_RecyclesWholeTerminalGangTogether).
        if not p.terminating:
            out.delete(p, f"pod ended in phase {p.phase}; recycled so it can be recreated")
    paced = replace(op, retry_count=n, last_progress_at=ctx.now)
    fresh = terminal_failure(ctx, pod)
    if _same_dead_pod_failure(row.last_failure, fresh, pod.creation_timestamp):
        return replace(row, operation=paced)
    return replace(row, operation=paced, last_failure=fresh)


def _same_failure_identity(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Go ``workload/status`` ``sameFailureIdentity``: pod, container, reason and exit code (time and
    message excluded)."""
    return all(a.get(k) == b.get(k) for k in ("podName", "containerName", "reason", "exitCode"))


def _same_dead_pod_failure(
    recorded: Mapping[str, Any] | None, fresh: Mapping[str, Any], born: datetime | None
) -> bool:
    """Go ``workload/status/terminal.go`` ``sameDeadPodFailure`` (ome-projects/ome @ 8263d0c7, used by
    ``RecordRecycleAttempt``): a record already naming this failure is kept, time included, when the
    dead pod is no newer than it — the same pod seen again until its delete lands — while a same-name
    replacement (created after the record) starts afresh. As Go's zero times: a pod of unknown age is
    never newer, a record of unknown time is older than any known pod."""
    if recorded is None or not _same_failure_identity(recorded, fresh):
        return False
    if born is None:
        return True
    at = parse_time(recorded.get("time"))
    return at is not None and born <= at


def bring_up(ctx: Ctx, row: Row, pod: PodView | None, name: str, ordinal: int, out: Out) -> tuple[Row, bool]:
    """Create, recycle or wait for the pod in ``ordinal`` at the operation's target; write its gate
    True once ContainersReady (``ops/create.go`` ``processReadyActions``: ContainersReady permits the
    gate, the promote waits for PodReady and the ``minReadySeconds`` window).

    Returns the row and whether the pod serves and is Available (the step may finish).
    """
    op = row.operation
    assert op is not None
    if pod is None:
        if op.deadline is not None and ctx.now > op.deadline:
            # The operation is out of time: this pass fails it (check_failure), so creating its pod
            # now would leave a pod that no journaled operation explains.
            return row, False
        create_pod(
            ctx, row, op.target_revision, ordinal, out, f"{op.type} {op.step}: pod at {op.target_revision}"
        )
        return row, False
    if pod.ended and (not pod.terminating or op.type == R.OP_CREATE):
        # Go ``ops/create.go`` ``missingPodTargets`` reads a terminal pod as absent whether or not it
        # is Terminating, and ``processStartActions`` hands it to ``recycleTerminalPods``
        # (``ops/terminal_recycle.go``), which records the recycle and its event and skips only the
        # delete of a pod already on its way out (``out.delete`` skips it here).
        return recycle_terminal(ctx, row, pod, out), False
    if pod.terminating:
        return row, False
    if pod.revision_hash != hash_of(op.target_revision) or pod.incarnation != row.incarnation:
        retire(pod, out, f"pod is not at revision {op.target_revision} incarnation {row.incarnation}")
        return row, False
    lad = ladder(pod, ctx.world.endpoints, ctx.min_ready, ctx.now)
    if lad.ready:
        out.gate(pod, True, "all containers of the Instance are ready: enter rotation")
    out.wake(lad.available_at)
    return row, lad.serving and lad.available


def complete(ctx: Ctx, row: Row, target: str, ordinal: int) -> Row:
    """The promote: the row Ready on ``target`` at slot ``ordinal``, its operation and target revision
    cleared (a converged row targets nothing).

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/decision.go`` @ 8263d0c7 (the largest
    of four stored versions; 4dfb96b1, f0c4ef77 and 58a57f25 say the same) ``ReadyOnRevisionMutation`` / ``StampReadyOnRevision`` (the plain promote, Create's
    and Update's) and ``StampReadyAtOrdinal`` (the surge promote): ``RunningRevision=rev``,
    ``TargetRevision=""``, ``Operation=nil``; pinned by ``ops/update_test.go`` @ 58a57f25
    ``TestUpdate_InPlaceConverges_MarksReadyWithRunningRevision`` and ``ops/update_surge_test.go`` @
    58a57f25 ``TestSurgeUpdate_Phase3PromotesAndAdvancesActiveOrdinal`` ("TargetRevision should be
    cleared"). Before, the row kept ``targetRevision`` equal to its running revision."""
    return replace(
        row,
        phase=R.READY,
        operation=None,
        running_revision=target,
        target_revision="",
        active_ordinal=ordinal,
        ready_since=ctx.now,
    )


def fail(
    ctx: Ctx,
    row: Row,
    pod_name: str,
    container: str | None,
    reason: str,
    message: str,
    out: Out,
    retry: RetryBook | None,
    event_reason: str | None = None,
    event_pod: str | None = None,
    announce: bool = True,
    record: Mapping[str, object] | None = None,
    keep_operation: bool = False,
) -> Row:
    """Phase=Failed with ``lastFailure``; the ``InstanceFailed`` Warning in the words of
    ``inferencereplica/reconciler.go`` ``instanceFailedMsg`` (pod empty for a deadline). ``retry`` is
    None for a failure that is not the revision's fault (an unschedulable pod): no retry charge.
    ``announce=False`` withholds the Warning (a repeat of the same terminal failure). ``record``, when
    given, is the ``lastFailure`` to keep instead (evidence a pod left); its reason is what the
    revision's block records. ``keep_operation``: the operation stays on the ``Failed`` row (Go
    ``status/decision.go`` ``StampFailedKeepingOperation`` / ``StampFailedOnStuckPod``, a spent
    Restart, ``planner/restart.py``)."""
    target = row.operation.target_revision if row.operation else row.target_revision
    failure: dict[str, object] = {
        "podName": pod_name,
        "reason": reason,
        "message": message,
        "time": format_time(ctx.now),
    }
    if not pod_name:
        del failure["podName"]
    if container:
        failure["containerName"] = container
    if record is not None:
        failure = dict(record)
        reason = str(record["reason"])
    if announce:
        out.event(
            "Warning",
            "InstanceFailed",
            f"InferenceReplica {ctx.namespace}/{ctx.name} {ctx.instance_key(row.index)} escalated to "
            f'Phase=Failed (pod="{pod_name if event_pod is None else event_pod}"): {event_reason or reason}',
        )
    if retry is not None:
        retry.failure(target, reason, ctx.now, out)
    kept = row.operation if keep_operation else None
    return replace(row, phase=R.FAILED, operation=kept, last_failure=failure, target_revision=target)


# escalation/disposition.go DisposeExpiredAttempt: the detail its InstanceFailed Warning appends to
# the reason of a failure with no workload-caused evidence (branch 3).
TERMINAL_DETAIL = (
    "attempt disposed terminal (no workload-caused evidence, relocation unavailable); "
    "operation-specific recovery decides whether another attempt is safe"
)
TERMINAL_COUNTED_DETAIL = (
    "attempt disposed terminal (no workload-caused evidence, relocation unavailable) and counted on "
    "the revision's retry ladder"
)
# Branch 2: a relocation directive stands for the attempt.
RELOCATED_DETAIL = "attempt disposed with relocation directive; the rebuild is steered off the recorded node"


@dataclass(frozen=True, slots=True)
class Failure:
    """What an escalation found: the pod and container it blames (none for a deadline), the short
    reason and message for ``lastFailure``, the reason the escalation hands the disposition (the
    bare kubelet reason of a stuck pod, ``deadlineFailureMessage`` for a deadline) and, for a
    deadline, the readiness-limbo evidence of the attempt's pod."""

    pod_name: str
    container: str | None
    reason: str
    message: str
    escalation: str
    record: Mapping[str, object] | None = None  # what the pod shows, kept as lastFailure instead


def workload_caused_record(pods: Sequence[PodView], now: datetime) -> dict[str, object] | None:
    """What the plain deadline stamp of a non-disposable attempt (a gang surge's) records when one of
    its pods waits in a workload-caused reason: that pod's reason, container and message instead of the
    bare elapsed timeout, so the gang abandon charges the revision's ladder on it once the pods are
    gone. Go: ome-projects/ome 4dfb96b1 ``workload/escalation/escalation.go`` ``Run`` (the BROAD path's
    ``evidence.FirstWorkloadCausedPod`` ahead of the readiness limbo readers, then
    ``status.StampFailedKeepingOperation``); pinned by ``deadline_test.go``
    ``TestExpireOperations_DeadlineKeepsWorkloadCausedPodEvidence``."""
    for pod in pods:
        ct = workload_caused_container(pod)
        if ct is None or not ct.waiting_reason:
            continue
        return {
            "podName": pod.name,
            "containerName": ct.name,
            "reason": ct.waiting_reason,
            "message": ct.waiting_message or f"container {ct.name} waiting in {ct.waiting_reason}",
            "time": format_time(now),
        }
    return None


def refreshed_failure_evidence(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> Row:
    """The one effect escalation has on a row already ``Failed``: a ``lastFailure`` that says only
    ``DeadlineExceeded`` is replaced, once, by the concrete cause a pod of the row now names — a
    container parked in a terminal waiting reason past ``stuckPodGracePeriod`` — with its pod,
    container and message; the recorded time stays, and nothing else moves (no event, no RetryBlock,
    no phase or operation). A concrete reason already recorded is never replaced, which also makes the
    refresh edge-triggered.

    Go: ome-projects/ome dcfb4135 ``workload/escalation/refresh.go`` ``refreshedFailureEvidence``
    (one stored version) with ``status.RecordRefreshedFailure``, called by ``escalation.go`` ``Run``
    for every Failed row."""
    failure = row.last_failure
    grace = ctx.world.settings.stuck_pod_grace_period
    if row.phase != R.FAILED or failure is None or failure.get("reason") != DEADLINE_EXCEEDED:
        return row
    if grace <= timedelta(0):
        return row
    for pod in sorted(pods, key=lambda p: p.name):
        if pod.terminating:
            continue
        stuck = stuck_container(pod)
        if stuck is None or ctx.now - stuck.since < grace:
            continue
        detail = next((ct.waiting_message for ct in pod.containers if ct.name == stuck.container), "")
        record: dict[str, object] = {
            "podName": pod.name,
            "containerName": stuck.container,
            "reason": stuck.reason,
            "message": detail or f"container {stuck.container} waiting in {stuck.reason}",
        }
        if "time" in failure:
            record["time"] = failure["time"]
        return replace(row, last_failure=record)
    return row


def _plain_book(op: Operation, retry: RetryBook) -> RetryBook | None:
    """The book a plain Failed stamp charges: none for a Restart. Go (ome-projects/ome 4dfb96b1
    ``workload/escalation/escalation.go`` ``Run``) stamps a non-disposable attempt with
    ``StampFailedOnStuckPod`` / the deadline termination and writes no RetryBlock; a gang surge's
    wave reaches the ladder through its abandon (``abandonFailedGangSurge``), which here is this
    stamp's charge."""
    return None if op.type == R.OP_RESTART else retry


def disposable(op: Operation) -> bool:
    """``escalation/disposition.go`` ``disposableAttempt`` (newest stored version): a Create, or an
    Update that is not part of a gang surge, ends through ``DisposeExpiredAttempt``; every other
    operation (a gang surge's, a Restart) keeps the plain Failed stamp and Warning."""
    if op.type == R.OP_CREATE:
        return True
    return (
        op.type == R.OP_UPDATE
        and op.surge_index is None
        and op.step not in (R.STEP_GANG_SURGE_TARGET, R.STEP_GANG_SURGE_TARGET_CLEANUP)
    )


def superseded_leftover(ctx: Ctx, row: Row, attempt: Sequence[PodView]) -> bool:
    """Go ``DisposeExpiredAttempt``'s superseded-leftover guard (ome-projects/ome 58a57f25
    ``workload/escalation/disposition.go``, ``DispositionSkippedSuperseded``): the attempt's first
    workload-caused pod carries a revision hash that is known and not the attempt's target (its pinned
    target, else the update revision: ours, the spec's), and the attempt is not an unpinned Create.
    Such a pod is the drain leftover of a prior failed attempt, not this attempt's failure: charging
    it would hold the corrective revision the row was just retargeted to. Nothing is written; the
    leftover is the surge reclassify's or the wreckage sweep's to remove."""
    op = row.operation
    if op is None:
        return False
    pod = next((p for p in attempt if workload_caused_container(p) is not None), None)
    if pod is None or not pod.revision_hash:
        return False
    pinned = op.target_revision or row.target_revision
    if op.type == R.OP_CREATE and not pinned:
        return False  # an unpinned Create the pod proves is another revision's: disposed, uncharged
    target = pinned or ctx.spec_revision
    return bool(target) and pod.revision_hash != hash_of(target)


def dispose(
    ctx: Ctx,
    row: Row,
    attempt: Sequence[PodView],
    failure: Failure,
    out: Out,
    retry: RetryBook,
) -> Row | None:
    """End a disposable attempt as ``DisposeExpiredAttempt`` does.

    Branch 1: a container of the attempt's pod waiting in a workload-caused reason names the cause
    whichever path fired (``evidence.FirstWorkloadCausedPod``): the revision's block is charged and
    the Warning names the pod, ``<reason>: workload-caused failure; revision <rev> held for retry —
    fix the image/config and publish a corrected revision``. Otherwise a relocation directive is
    recorded when ``relocate`` allows (branch 2: no retry charge, the detail says the rebuild is
    steered off the node), else branch 3. Either way the Warning blames no pod, reads
    ``<escalation reason>: <detail>`` and is withheld when ``lastFailure.reason`` already records this
    reason (``sameTerminalFailure``: an attempt failing the same way again).

    None when the only workload-caused pod is a superseded revision's leftover
    (:func:`superseded_leftover`): the attempt is skipped, nothing written or announced.
    """
    op = row.operation
    assert op is not None
    if superseded_leftover(ctx, row, attempt):
        return None
    target = op.target_revision or row.target_revision
    found = [(p, c) for p in attempt if (c := workload_caused_container(p)) is not None]
    pod, cause = found[0] if found else (None, None)
    if pod is not None and not target:
        # Go (disposition.go, the newest stored version): an attempt carrying no target falls back to
        # the update revision, unless its pod is on a known other revision: an unpinned Create whose
        # pod proves another revision owns the failure charges neither (TestDispose_Unpinned...).
        target = ctx.spec_revision
        if op.type == R.OP_CREATE and pod.revision_hash and pod.revision_hash != hash_of(target):
            target = ""
        if target:
            row = replace(row, operation=replace(op, target_revision=target))  # what ``fail`` charges
    if pod is not None and cause is not None and cause.waiting_reason and target:
        reason = cause.waiting_reason
        held = (
            f"{reason}: workload-caused failure; revision {target} held for retry — fix the "
            "image/config and publish a corrected revision"
        )
        msg = failure.message if reason == failure.reason else f"container {cause.name} waiting in {reason}"
        return fail(ctx, row, pod.name, cause.name, reason, msg, out, retry, event_reason=held)
    relocated = pod is None and relocate(ctx, row, attempt, failure, target or ctx.spec_revision, out, retry)
    charge = "" if relocated else terminal_charge_revision(ctx, row, attempt, failure, retry)
    if charge:
        # One wave counts once: the relocation ledger took it above, or the revision's ladder takes it
        # here, written ahead of the op-clear as Go writes it (terminalWaveReason: the kubelet reason a
        # stuck pod showed, else the evidence's own reason, else the bare deadline).
        record_reason = str((failure.record or {}).get("reason") or "")
        wave = failure.reason if failure.record is None or not record_reason else record_reason
        retry.failure(charge, wave, ctx.now, out)
    detail = RELOCATED_DETAIL if relocated else TERMINAL_COUNTED_DETAIL if charge else TERMINAL_DETAIL
    repeat = row.last_failure is not None and row.last_failure.get("reason") == failure.reason
    return fail(
        ctx,
        row,
        failure.pod_name,
        failure.container,
        failure.reason,
        failure.message,
        out,
        None,
        event_reason=f"{failure.escalation}: {detail}",
        event_pod="",
        announce=not repeat,
        record=failure.record,
    )


def terminal_charge_revision(
    ctx: Ctx, row: Row, attempt: Sequence[PodView], failure: Failure, retry: RetryBook
) -> str:
    """The revision a terminal wave counts against on the retry ladder, or "" when it is not counted.

    Go: ome-projects/ome 58a57f25 ``workload/escalation/disposition.go`` ``terminalChargeRevision``
    (with ``attemptTargetRevision``): no ladder configured, an environment cause (a scheduler hold),
    no resolvable target, or evidence on a pod of a known, different revision (a superseded attempt's
    leftover, whose crash must not charge the revision that replaced it) count nothing; otherwise the
    operation's pinned target, else the update revision (ours: the spec's)."""
    op = row.operation
    if retry.policy is None or environment_caused(failure.reason):
        return ""
    target = (op.target_revision if op is not None else "") or ctx.spec_revision
    if not target:
        return ""
    named = failure.pod_name or str((failure.record or {}).get("podName") or "")
    evidence = next((p for p in attempt if named and p.name == named), None)
    if evidence is not None and evidence.revision_hash and evidence.revision_hash != hash_of(target):
        return ""
    return target


# The limbo evidence (Go's limboDetail) a relocation record carries: what went wrong on the node.
_LIMBO_REASONS = ("ContainersNotReady", "ReadinessGateNotSatisfied")


def relocate(
    ctx: Ctx,
    row: Row,
    attempt: Sequence[PodView],
    failure: Failure,
    target: str,
    out: Out,
    retry: RetryBook,
) -> bool:
    """``DisposeExpiredAttempt`` branch 2 and ``recordRelocationDirective``
    (ome-projects/ome ``workload/escalation/disposition.go``, the newest stored version, 36,185
    characters; 58a57f25 is the one before it): an attempt with no workload-caused evidence that is no
    crash loop (``attemptCrashLooping``: the escalation's reason is ``CrashLoopBackOff``, or a live pod
    of the attempt shows either face of one; a container that keeps exiting does so on any node),
    under ``migrationPolicy.mode`` Auto (or Surge), with the operator's ``autoMigrate.maxAttempts`` > 0,
    at a revision some Instance has run (``revisionHasServed``: a row's ``runningRevision`` as the pass
    found it) and the retry ladder has not Held (``revisionHeld``: the hold is the ladder's verdict
    that the revision itself fails), whose own pods sit on exactly one node
    (``AttemptSuspectNode``), records a relocation directive on the ledger unless it replays this
    attempt's own directive, would make the template's required node affinity unsatisfiable, or the
    budget is spent. True when a directive stands for this attempt (the caller then charges no retry).
    A new one is announced (``AutoMigrationTriggered``; ``AutoMigrationCapReached`` when it fills the
    last slot) and mirrored as a born-terminal ``Relocated`` record in ``status.migrations``."""
    book = ctx.ledger
    op = row.operation
    if book is None or op is None or not book.available or book.max_attempts <= 0:
        return False
    if not migration_mode_allows(ctx.migration_mode) or not target:
        return False
    if attempt_crash_looping(attempt, hash_of(target), failure.reason):
        return False
    served = row.running_revision == target or any(
        r.running_revision == target for r in R.load_rows(ctx.world.replica.status)
    )
    if not served:
        return False
    held = retry.blocks.get(target)
    if held is not None and held.state == HELD_STATE:
        return False
    node = attempt_suspect_node(attempt, hash_of(target))
    if not node:
        return False
    # The guard judges the spec's own templates (Go captures DispositionDeps.PodSpec/WorkerPodSpec from
    # the spec render, not a rollback's stored revision).
    runners = sorted({runner for runner, _ in ctx.gang_slots}) or [c.RUNNER_DEFAULT]
    specs = [
        ctx.world.pod_factory(ctx.spec_revision, row.index, row.incarnation, r, 0).get("spec")
        for r in runners
    ]
    recorded, attempt_no, request = book.record(
        component=ctx.component,
        index=row.index,
        node=node,
        revision=target,
        attempt_started=op.started_at,
        attempt_id=op.id,
        replica_uid=ctx.world.replica.uid,
        now=ctx.now,
        specs=specs,
    )
    if not recorded or attempt_no == 0:
        return recorded
    record = failure.record or {}
    detail = str(record.get("message") or "") if record.get("reason") in _LIMBO_REASONS else ""
    book.records.append(relocation_record(request, row.index, node, attempt_no, detail, ctx.now))
    key = f"OMENative {ctx.instance_key(row.index)}"
    out.event(
        "Normal",
        "AutoMigrationTriggered",
        f"{key} relocation directive recorded: attempt {attempt_no}/{book.max_attempts}, rebuild steered "
        f"off node {node} (uuid={request})",
    )
    if attempt_no == book.max_attempts:
        out.event(
            "Warning",
            "AutoMigrationCapReached",
            f"{key} relocation budget exhausted ({attempt_no}/{book.max_attempts} attempts); further "
            "expiries dispose terminal without relocation",
        )
    return True


def recycled_on_excluded_node(ctx: Ctx, failed: Row, pod: PodView, out: Out) -> None:
    """``FailedSurgeTargetRecycled`` (Go ``ops/update_surge.go`` ``recycleFailedCreateContainerTarget``,
    newest stored version): a failed surge target whose failure is ``CreateContainerError`` and that
    sits on a node the relocation ledger excludes for its revision (the disposition authorized the
    move) is deleted, the source serving on. Here every failed surge target is retired (see
    docs/planner.md, "Failed surge"); the event names the ones Go would recycle."""
    failure = failed.last_failure or {}
    revision = failed.target_revision
    if failure.get("reason") != "CreateContainerError" or not pod.node_name or ctx.ledger is None:
        return
    if pod.terminating or pod.revision_hash != hash_of(revision) or pod.gate == "True" or pod.ready:
        return
    if pod.node_name not in ctx.ledger.excluded_nodes(ctx.component, failed.index, revision):
        return
    out.event(
        "Normal",
        "FailedSurgeTargetRecycled",
        f"OMENative {ctx.instance_key(failed.index)} deleted failed non-serving surge target {pod.name} on "
        f"excluded node {pod.node_name}; retry will create a fresh pod",
    )


def release_exclusions(ctx: Ctx, row: Row, out: Out) -> None:
    """``releaseNodeExclusions``: an attempt the scheduler could not place past the operator's grace
    lets go of the exclusions its Instance holds for the revision it rendered, so the rebuild may land
    anywhere, the blamed node included; announced once with the nodes freed
    (``NodeExclusionReleased``). The entries stay on the budget."""
    op = row.operation
    if ctx.ledger is None or op is None:
        return
    revision = op.target_revision or ctx.spec_revision
    released = ctx.ledger.release(ctx.component, row.index, revision)
    if released:
        out.event(
            "Normal",
            "NodeExclusionReleased",
            f"OMENative {ctx.instance_key(row.index)} node exclusion released for revision {revision}: no "
            f"other node had room for the rebuild; it may land on {', '.join(released)} again",
        )


def check_failure(
    ctx: Ctx,
    row: Row,
    pod: PodView | None,
    name: str,
    out: Out,
    retry: RetryBook,
    *,
    created: bool | None = None,
    members: Sequence[PodView] | None = None,
) -> tuple[Row, Row | None]:
    """The step's pod's evidence, as ``workload/escalation.go`` ``escalateFromEvidence`` reads it.

    Unschedulable parks the clock (and past its grace fails without charging the revision's retry
    budget); a container stuck in a terminal waiting reason past ``stuckPodGracePeriod`` fails the
    Instance with that reason (zero grace: the path is off); otherwise an elapsed operation deadline
    fails it as ``DeadlineExceeded: <Type>/<Step> exceeded InstanceReadyTimeout``
    (``deadlineFailureMessage``). Returns the (possibly parked) row and the failed row, if any.
    """
    # Outside waits (planner/quota.py, planner/holds.py) park the clock; past the operator's
    # unschedulable grace the Instance fails without charging the revision.
    # ``created``: every pod of the step exists (a gang passes it; its evidence pod may be one member
    # while the quota refused another). By default the step's one pod is the evidence. ``members``:
    # the attempt's pods a disposition reads for a workload-caused reason or readiness limbo (a
    # gang's; by default the step's pod).
    attempt = list(members) if members is not None else ([pod] if pod is not None else [])
    row = quota_hold(ctx, row, pod is not None if created is None else created)
    row = admission_hold(ctx, row, pod is not None if created is None else created)
    row, no_room = scheduler_hold(ctx, row, pod, out)
    op = row.operation
    assert op is not None
    if ctx.paused:
        # Go inferencereplica/status.go @ 8263d0c7 reconcileHeldDeadlines: "pausing holds every in-flight
        # Instance" (its deadline is parked), and the escalation pass skips a paused Component: an
        # operation that runs under the pause (a committed Create) fails on no evidence and no clock
        # (status_test.go TestAggregateStatus_PausedInstance_DeadlineParkedAndRearmed). The unpause
        # re-arms a full window (instances.step_row).
        if op.deadline is not None:
            row = replace(row, operation=replace(op, deadline=None))
        return row, None
    if any(p.admission_gated for p in attempt):
        # Go escalation/deadline.go ReconcileGatedDeadlines (ome-projects/ome, the newest stored
        # version; inferencereplica/status.go @ 8263d0c7 reconcileHeldDeadlines supplies ``gated``):
        # a pod still carrying an admission scheduling gate (Kueue) is queued, not stuck. Its clock
        # is parked (the zero deadline) and the escalation pass skips the Instance outright; once the
        # gates are lifted the window restarts from admission (``instances.step_row``).
        if op.deadline is not None:
            row = replace(row, operation=replace(op, deadline=None))
        return row, None
    if fully_serving(attempt, ctx.pods_per_instance):
        # The failed-while-serving guard (ome-projects/ome 4dfb96b1 workload/escalation/escalation.go
        # Run, podSetIsCapacity / query.PodSetFullyServing): an attempt whose pods are all present,
        # ContainersReady and in rotation is never stamped Failed, whatever its clock or a stale
        # waiting reason says; the step finishes it instead. Go also withholds the exemption while a
        # surge reports its source out of rotation (SourceUnrouted), a token ours does not have.
        return row, None
    if no_room is not None:
        if disposable(op) and superseded_leftover(ctx, row, attempt):
            # Go hands the scheduler grace's bucket to DisposeExpiredAttempt, whose superseded guard
            # skips the attempt: nothing written or announced (scheduler_test.go @ 4dfb96b1,
            # TestEscalation_UnschedulableSupersededLeftoverIsSilent).
            return row, None
        msg = unschedulable_failure_message(no_room.message)
        if disposable(op):
            release_exclusions(ctx, row, out)
        return row, fail(
            ctx, row, "", None, UNSCHEDULABLE, msg, out, None, event_reason=msg, event_pod=no_room.pod
        )
    # A name held by a pod whose kubelet stopped reporting parks the clock (planner/holds.py); what such
    # a pod's stale statuses say is no evidence of the attempt.
    row = node_unknown_hold(ctx, row, attempt, out)
    op = row.operation
    assert op is not None
    if op.waiting == NODE_UNKNOWN:
        return row, None
    grace_stuck = ctx.world.settings.stuck_pod_grace_period
    if pod is not None and grace_stuck > timedelta(0):
        stuck = stuck_container(pod)
        if stuck is not None:
            if ctx.now - stuck.since >= grace_stuck:
                msg = (
                    f"container {stuck.container} waiting in {stuck.reason} for longer than "
                    f"{format_go_duration(grace_stuck)}"
                )
                if disposable(op):
                    found = Failure(name, stuck.container, stuck.reason, msg, stuck.reason)
                    return row, dispose(ctx, row, attempt or [pod], found, out, retry)
                return row, fail(
                    ctx,
                    row,
                    name,
                    stuck.container,
                    stuck.reason,
                    msg,
                    out,
                    _plain_book(op, retry),
                    keep_operation=op.type == R.OP_RESTART,
                )
            out.wake(stuck.since + grace_stuck)
    if op.deadline is not None:
        # Go operationDeadlinePassed: now.After(deadline) — at the deadline itself nothing expires
        # (escalation_external_test.go TestExpireOperations_ExactBoundary); look again just past it.
        if ctx.now > op.deadline:
            msg = f"{DEADLINE_EXCEEDED}: {op.type}/{op.step} exceeded InstanceReadyTimeout"
            # A container that keeps exiting, or a pod that runs yet never serves, says why better than
            # the elapsed timeout (DisposeExpiredAttempt: FirstCrashLoopingPod before the limbo readers).
            limbo = limbo_failure(attempt, ctx.now)
            if disposable(op):
                found = Failure(
                    "", None, DEADLINE_EXCEEDED, msg, msg, crash_loop_failure(attempt, ctx.now) or limbo
                )
                return row, dispose(ctx, row, attempt, found, out, retry)
            # The plain stamp (escalation.go Run, BROAD path): a workload-caused pod, else the readiness
            # limbo; Go reads no crash loop here.
            return row, fail(
                ctx,
                row,
                "",
                None,
                DEADLINE_EXCEEDED,
                msg,
                out,
                _plain_book(op, retry),
                event_reason=msg,
                record=workload_caused_record(attempt, ctx.now) or limbo,
                keep_operation=op.type == R.OP_RESTART,
            )
        out.wake_past(op.deadline)
    return row, None
