"""The restart rules: when an Instance's pod set is rebuilt whole by a ``Restart``, which pass takes a
repair off the roll target, what the rebuild renders, and what happens to a repair whose attempt ended.

Gathered here (goT; behaviour unchanged by the move): ``single_pod_restart_reason`` (Go
``DetectRestartTriggerWithPods``'s ``Ready`` branch, was ``gang_ops``), ``demoted_ready_restarts``
(its ``types.DemotedReady`` read) and ``repair_yields`` (``RepairYieldsToTarget`` / ``rollTargetOpen``,
both were ``rollout``), ``rebuild_follows_target`` (``rebuildFollowsTarget``, was ``instances``) and
the spent-repair exits below. The gang trigger rules stay with the gang (``planner/gang.py``
``lost_gang_member``, ``gang_broken``, ``runner_restarted_since_ready``, ``_rebuild_denied`` for
``rebuildRetryBlockDenies``), and the Restart's state machine is ``instances._step_recreate`` (single
pod) and ``gang_ops.step_gang_create_pods`` (gang).

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/restart.go`` @ 58a57f25 (73,333
characters, read whole) and the newest stored version (78,474 characters, commit not named by the
index; its spent-repair functions, ``DetectRestartTriggerWithPods`` and ``Restart``'s spent-repair
cases are the same text): ``DetectRestartTriggerWithPods``, ``Restart`` and the spent-repair exits
(``SpentRepair``, ``spentRepairPodSetGone``, ``RepairResumes``, ``spentRepairTrigger``,
``spentRepairParked``, ``RepairRetryAt``, ``RepairRetriesExhausted``, ``repairRearmReason``,
``repairCloseReason``, ``RepairFailureSummary``), with ``workload/types`` ``RepairWaitsOnWorkload``;
pinned by ``restart_test.go`` @ 58a57f25 (``tests/goparity/test_workload_ops_restart.py``).

A **spent repair** is a ``Restart`` parked at ``Failed`` with its operation kept. Go's escalation
parks a Restart that way at its deadline or on a wedged pod, and so does ours since goY
(``steps.fail(keep_operation=True)`` from ``check_failure``; before, ours cleared the operation, so only
a status another writer left carried one). Its exits, as Go's:

- no live pod left (every pod gone or ended): the spent operation **closes** (``RepairClosed``), the
  row keeps ``Failed``, its incarnation and ``lastFailure``, and the Create pass rebuilds it as a fresh
  start on the pass after;
- the rebuilt set came up on its own (complete, at the row's incarnation, ContainersReady): the repair
  **resumes** its promote at that incarnation, with no new attempt;
- a set that stays wedged is **re-armed** on the operator's ``lifecycle.updateRetry`` ladder: a whole
  rebuild at the next incarnation once the ladder's delay for the next attempt has passed since the
  recorded failure, its operation counting the re-arm; never on a cause the kubelet retries in place
  (the workload-caused waiting reasons: the row waits for the configuration or image), with no
  ladder, with every re-arm spent, or while the running revision's RetryBlock denies a rebuild;
- a gang short of a member while another survives re-arms **at once** (Go's lost-member trigger,
  ``instanceLostGangMember``, which a spent Restart does not own the row against);
- otherwise it stays **parked**, the pass woken when the ladder comes due.

A spent repair off a roll target that can start is none of this: the restart selection yields it
(``plan_decision.go`` ``restartTrigger`` with ``RepairYieldsToTarget``) and the roll rebuilds it at the
target (``rollout.plan_instances``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.gang import (
    RESTART_POLICY_RECREATE,
    _rebuild_denied,
    bring_up_gang,
    lost_gang_member,
    pod_termination,
    runner_restarted_since_ready,
)
from omereconcile.planner.gang_ops import start_gang_restart, termination_short
from omereconcile.planner.out import Out
from omereconcile.planner.retry import HELD_STATE, WORKLOAD_CAUSED_REASONS, RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import bring_up, by_name, complete
from omereconcile.world import PodView, parse_time

__all__ = [
    "demoted_ready_restarts",
    "rebuild_follows_target",
    "repair_failure_summary",
    "repair_retries_exhausted",
    "repair_retry_at",
    "repair_waits_on_workload",
    "repair_yields",
    "single_pod_restart_reason",
    "spent_repair",
    "step_spent_repair",
]


# -- the restart triggers and the rebuild's revision ---------------------------------------------------


def single_pod_restart_reason(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> str | None:
    """Why a ``Ready`` single-pod Instance under ``RecreateInstanceOnPodRestart`` is restarted, in the
    words of ``ops/restart.go`` ``DetectRestartTriggerWithPods``'s ``Ready`` branch (ome-projects/ome,
    the newest stored version, the one carrying ``runnerRestartTrigger`` and ``readCrashLoopEpisode``;
    the same branch @ ae683e3f): per pod, its runner container restarted after ``readySince``
    (``runnerRestartedSinceReady``: the kubelet restarted it in place, the pod still Running under the
    same UID) or the pod ``Failed`` (the termination's ``ShortString``, e.g. ``pod p container c failed
    (OOMKilled, exit 137)``, else ``pod <p> Failed``); then no live pod (``pod count 0 below desired
    1``). None when the pod stands. Go's branch applies to any pod count; a gang reads ``gang_broken``.
    Not ported: ``runnerRestartTrigger``'s pacing by the running revision's crash ladder."""
    for p in pods:
        restarted = runner_restarted_since_ready(p, row.ready_since)
        if restarted is not None:
            return restarted
        if p.phase == "Failed":
            found = pod_termination(ctx, p)
            return termination_short(found) if found is not None else f"pod {p.name} Failed"
    standing = sum(1 for p in pods if not p.ended)
    if standing < 1:
        return f"pod count {standing} below desired 1"
    return None


def demoted_ready_restarts(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> bool:
    """A single-pod Instance whose restart policy repairs it and that has no pod left but ended ones:
    ``Ready`` as observed (its pod just went), or already demoted by the truth pass (Pending, no
    operation, running revision kept). The restart pass's, not Create's."""
    return (
        not ctx.gang
        and ctx.restart_policy == RESTART_POLICY_RECREATE
        and row.phase in (R.READY, R.PENDING)
        and row.operation is None
        and bool(row.running_revision)
        and all(p.ended for p in pods)
    )


def repair_yields(ctx: Ctx, row: Row, target: str, retry: RetryBook) -> bool:
    """Go ``ops/restart.go`` ``RepairYieldsToTarget`` (the newest stored version), for the demoted
    row (every pod ended, so no survivor keeps the repair): a repair is left to the pass that rebuilds
    the row at the target when the revision it would rebuild is not the target and the roll could
    start (``rollTargetOpen``: not paused, the target not ``Held``). Here that pass is Create, which
    rebuilds it at the target; under a pause or a held target the repair stands (``restart_test.go``
    ``TestRepairYieldsToTarget``, 58a57f25)."""
    block = retry.blocks.get(target)
    if ctx.paused or not target or (block is not None and block.state == HELD_STATE):
        return False
    return bool(row.running_revision) and row.running_revision != target


def rebuild_follows_target(
    ctx: Ctx, row: Row, pods: Sequence[PodView], retry: RetryBook, row_target: str
) -> bool:
    """Go ``rebuildFollowsTarget`` (ome-projects/ome ``workload/ops/restart.go``, the 78,474-character
    version the index holds; ``status/decision_test.go`` @ 8263d0c7
    ``TestStampRestartRevision_OnlyAnOpenRepairRecordsIt``): an open Restart that has created no pod of
    its rebuild yet renders the roll target instead of the revision its row records when the row is
    off a target the roll could start on (``rollTargetOpen``: not paused, the target's RetryBlock not
    ``Held``) and the Instance is not held back (Go: the canary step; here the partition, whose held
    Instances are repaired at what they run). The Instance serves nothing, so the rebuild is the pass
    that puts it on the target; before, the gang was rebuilt at the old revision and then rolled again.
    A rebuild whose pods exist finishes on the revision they carry."""
    op = row.operation
    assert op is not None
    if ctx.paused or row_target != ctx.target or op.target_revision == ctx.target:
        return False
    if any(p.incarnation == row.incarnation and not p.ended for p in pods):
        return False
    block = retry.blocks.get(ctx.target)
    return block is None or block.state != HELD_STATE


# -- the spent repair: a Restart parked at Failed ----------------------------------------------------


def spent_repair(row: Row) -> bool:
    """Go ``SpentRepair``: the row is a ``Restart`` parked at ``Failed``."""
    return row.phase == R.FAILED and row.operation is not None and row.operation.type == R.OP_RESTART


def repair_waits_on_workload(row: Row) -> bool:
    """Go ``types.RepairWaitsOnWorkload``: a spent repair parked on a workload-caused failure (the
    container config or image the pod template names), which the kubelet retries in place and a fresh
    pod set would wedge on identically: the ladder owes it no re-arm."""
    failure = row.last_failure
    return spent_repair(row) and failure is not None and failure.get("reason") in WORKLOAD_CAUSED_REASONS


def _parked_at(row: Row) -> datetime:
    """Go ``repairParkedAt``: the recorded failure's time, else the operation's last progress, else its
    start."""
    op = row.operation
    assert op is not None
    at = parse_time((row.last_failure or {}).get("time"))
    if at is not None:
        return at
    return op.last_progress_at or op.started_at


def repair_retry_at(ctx: Ctx, row: Row) -> datetime | None:
    """Go ``RepairRetryAt``: when a spent repair may re-arm (the recorded failure plus the ladder's
    delay for the next attempt), None when no re-arm is owed: no spent repair, a park on a cause the
    kubelet retries in place, no ladder configured, or every re-arm spent."""
    policy = ctx.world.settings.update_retry
    op = row.operation
    if not spent_repair(row) or repair_waits_on_workload(row) or policy is None or op is None:
        return None
    if policy.exhausted(op.retry_count):
        return None
    return _parked_at(row) + policy.next_delay(op.retry_count + 1)


def repair_retries_exhausted(ctx: Ctx, row: Row) -> bool:
    """Go ``RepairRetriesExhausted``: a spent repair has spent every re-arm the ladder allows. A park on
    a cause the kubelet retries in place is never read as exhausted: it waits for the fix."""
    policy = ctx.world.settings.update_retry
    op = row.operation
    return (
        spent_repair(row)
        and not repair_waits_on_workload(row)
        and policy is not None
        and op is not None
        and policy.exhausted(op.retry_count)
    )


def repair_failure_summary(row: Row) -> str:
    """Go ``RepairFailureSummary``: what parked the repair: the recorded failure by pod when it names
    one (``InstanceTermination.ShortString``), by its message otherwise, else its reason; with no
    record, the reason the repair opened with."""
    failure = row.last_failure
    if failure is None:
        return (row.operation.reason or "") if row.operation is not None else ""
    if failure.get("podName"):
        return termination_short(dict(failure))
    return str(failure.get("message") or failure.get("reason") or "")


def _set(pods: Sequence[PodView]) -> list[PodView]:
    """Go ``repairPodSet``: the pods a spent repair's exits are judged on: not ended, not deleting."""
    return [p for p in pods if not p.ended and not p.terminating]


def _resumes(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> bool:
    """Go ``RepairResumes``: the rebuilt set is one promote away: complete, every pod at the row's
    incarnation and ContainersReady. A set at an older incarnation is a drain the attempt never
    finished and is rebuilt instead."""
    pod_set = _set(pods)
    return (
        len(pod_set) >= ctx.pods_per_instance
        and all(p.incarnation == row.incarnation for p in pod_set)
        and all(p.containers_ready for p in pod_set)
    )


def step_spent_repair(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook
) -> tuple[Row, bool]:
    """One pass over a spent repair (module docstring). Returns the row and whether a re-arm opened a
    fresh ``Restart`` this pass, which the caller drives on (its drain) in the same pass, as Go's
    ``Restart`` does after ``StampRestarting``."""
    op = row.operation
    assert op is not None
    key = ctx.instance_key(row.index)
    if not any(not p.ended for p in pods):
        # Go spentRepairPodSetGone / status.CloseSpentRepair: a pod still terminating is live until gone.
        reason = (
            f"repair parked after {repair_failure_summary(row)} closed: no live pod left to resume or rebuild"
        )
        out.event(
            "Normal",
            "RepairClosed",
            f"OMENative {key} {reason}; the Create pass rebuilds the Instance as a fresh start",
        )
        return replace(row, operation=None), False
    if len(_set(pods)) < ctx.pods_per_instance:
        # Go spentRepairTrigger: an incomplete set is not decided by the ladder. A pod still
        # terminating holds its name; a gang short of a member with a survivor re-arms at once through
        # the lost-member trigger (instanceLostGangMember's spent-Restart exemption), each cycle
        # bounded by the attempt's deadline.
        lost = lost_gang_member(ctx, row, pods, out) if ctx.gang else None
        if lost is None:
            return row, False
        return _rearm(ctx, row, pods, lost, out), True
    revision = row.running_revision or row.target_revision or op.target_revision
    if _resumes(ctx, row, pods):
        # Go Restart, the RepairResumes case: phases A and B have nothing to do, phase C gates the set
        # into rotation and promotes it once PodReady past minReadySeconds. No deadline is read.
        pinned = replace(row, operation=replace(op, target_revision=revision))
        if ctx.gang:
            stepped, done = bring_up_gang(ctx, pinned, pods, out, retry)
        else:
            name = ctx.pod_name(row.index, row.active_ordinal)
            stepped, done = bring_up(ctx, pinned, by_name(pods, name), name, row.active_ordinal, out)
        if not done:
            return row, False
        out.event(
            "Normal", "RestartCompleted", f"OMENative {key} restart complete (incarnation={row.incarnation})"
        )
        return complete(ctx, stepped, revision, 0 if ctx.gang else row.active_ordinal), False
    if _rebuild_denied(ctx, row)[0]:
        return row, False
    at = repair_retry_at(ctx, row)
    if at is None:
        return row, False
    if ctx.now < at:
        # The ladder coming due raises no watch event.
        out.wake(at)
        return row, False
    why = f"repair re-armed (attempt {op.retry_count + 1}) after {repair_failure_summary(row)}"
    return _rearm(ctx, row, pods, why, out), True


def _rearm(ctx: Ctx, row: Row, pods: Sequence[PodView], why: str, out: Out) -> Row:
    """Go ``repairRearmReason`` and ``StampRestarting`` on a spent repair: a fresh Restart at the next
    incarnation, counting the re-arm on its operation."""
    op = row.operation
    assert op is not None
    rearmed = start_gang_restart(ctx, row, pods, why, out)
    assert rearmed.operation is not None
    return replace(rearmed, operation=replace(rearmed.operation, retry_count=op.retry_count + 1))
