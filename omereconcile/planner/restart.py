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
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.admission import proven_window
from omereconcile.planner.context import Ctx, hash_of
from omereconcile.planner.gang import (
    RESTART_POLICY_RECREATE,
    _rebuild_denied,
    bring_up_gang,
    gang_broken,
    lost_gang_member,
    pod_termination,
    runner_restarted_again_since_ready,
    runner_restarted_since_ready,
)
from omereconcile.planner.gang_ops import start_gang_restart, termination_short
from omereconcile.planner.inplace import revision_payload
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import fully_serving, rebuilt_after_failure, stuck_container
from omereconcile.planner.retry import (
    BACKOFF_STATE,
    HELD_STATE,
    IN_PROGRESS_STATE,
    WORKLOAD_CAUSED_REASONS,
    RetryBook,
)
from omereconcile.planner.rows import RetryBlock, Row
from omereconcile.planner.steps import bring_up, by_name, complete, fail
from omereconcile.world import ContainerView, PodView, format_time, parse_time
from omerender import constants as c

__all__ = [
    "CRASH_LOOP_SERVING_NOTE",
    "CrashLadder",
    "count_crash_on_ladder",
    "crash_loop_wedged_pod_on",
    "crash_of_promoted_set",
    "crash_rebuild_warranted",
    "crash_remembered",
    "crash_selected",
    "demoted_ready_restarts",
    "op_less_crash_loop_repair",
    "read_crash_ladder",
    "read_crash_loop_episode",
    "rebuild_follows_target",
    "repair_failure_summary",
    "repair_retries_exhausted",
    "repair_retry_at",
    "repair_waits_on_workload",
    "repair_yields",
    "settle_crash_loop_episode",
    "single_pod_restart_reason",
    "spent_repair",
    "step_crash_ladder",
    "step_spent_repair",
    "terminal_waiting_grace_left",
    "wedge_reason",
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


# -- the crash ladder: a crash of a promoted single-pod set on the running revision's retry ladder ----
#
# Go: ome-projects/ome ``workload/ops/restart.go``, the newest stored version (78,474 characters,
# commit not named by the index, read whole): ``readRunnerCrash``, ``runnerLoops``, ``revisionFailing``,
# ``firstRestartInsideWindow``, ``crashRemembered``, ``crashOfPromotedSet``, ``crashCountedOnBlock``,
# ``rememberCrash``, ``crashRebuildWarranted``, ``readCrashLadder``, ``anyInFlightAttemptAt``,
# ``runnerRestartTrigger``, ``countCrashOnLadder`` and the crash-loop episode (``readCrashLoopEpisode``,
# ``settleCrashLoopEpisode``, ``crashLoopParkServes``, ``revisionHeld``, ``podSetProven``,
# ``CrashLoopServingNote``), with ``workload/status`` ``UnparkServing``, ``RecordCrashLoopNote`` and
# ``ClearCrashLoopNote`` as ``status_test.go``'s ``TestCrashLoopNote_RecordedOnceAndCleared`` pins
# them, and ``RestartOpensLadderAttempt``. Go's rule is pod-count agnostic (``readRunnerCrash`` reads
# every live member against ``inst.TotalPods()``, ``podRunsDesiredRunnerImage`` a worker against the
# worker template, ``crashRebuildWarranted`` any member's restart), so it runs for a single-pod
# Instance and a gang alike (``step_crash_ladder``, called by ``instances.step_row`` ahead of the idle
# rules; a gang's crash the ladder does not read keeps ``gang_broken``). The wedge
# ``crashRebuildWarranted`` asks for is ``evidence.CrashLoopWedgedPodOn`` (``workload/evidence/``, the
# 10,186-character file) with ``PodWedgedPastGrace`` (``evidence/stuckpod.go``, 12,631 characters),
# its parked shape only (``_wedged_on_running``).

CRASH_LOOP_SERVING_NOTE = (
    "crash loop on a held revision: the pod set serves between crashes, and the Instance reads Failed "
    "while it is down"
)
EPISODE_UNPARK = "unpark"
EPISODE_NAME = "name"
EPISODE_CLEAR = "clear"


def _main_container(pod: PodView) -> ContainerView | None:
    for ct in pod.containers:
        if ct.name == c.MAIN_CONTAINER:
            return ct
    return None


def _on_revision(pod: PodView, revision: str) -> bool:
    """Go ``RevisionFromPod(pod).Same(running)`` with the zero exemptions: a pod with no revision label,
    or a row with none, reads as on it."""
    return not pod.revision_hash or not revision or pod.revision_hash == hash_of(revision)


def crash_remembered(row: Row) -> bool:
    """Go ``crashRemembered``: the row records a failure dated after it entered ``Ready``."""
    at = parse_time((row.last_failure or {}).get("time"))
    return at is not None and row.ready_since is not None and at > row.ready_since


def crash_of_promoted_set(row: Row, pods: Sequence[PodView]) -> bool:
    """Go ``crashOfPromotedSet``: the remembered crash names a pod of the promoted set (the row's
    incarnation, the running revision)."""
    if not crash_remembered(row):
        return False
    name = (row.last_failure or {}).get("podName")
    for p in pods:
        if p.name != name:
            continue
        if p.incarnation is not None and p.incarnation != row.incarnation:
            return False
        return _on_revision(p, row.running_revision)
    return False


def _runs_desired_image(ctx: Ctx, row: Row, pod: PodView) -> bool:
    """Go ``podRunsDesiredRunnerImage``: only a row running the update revision is compared, and the
    pod's runner image must be the one that revision renders for it (a gang's worker: the worker
    template, when the revision has one)."""
    if not row.running_revision or row.running_revision != ctx.spec_revision:
        return False
    payload = revision_payload(ctx, row.running_revision)
    spec = payload.get("podSpec") if payload is not None else None
    worker = payload.get("workerPodSpec") if payload is not None else None
    if pod.runner == c.RUNNER_WORKER and isinstance(worker, dict):
        spec = worker
    want = ""
    for ct in (spec or {}).get("containers") or []:
        if isinstance(ct, dict) and ct.get("name") == c.MAIN_CONTAINER:
            want = str(ct.get("image") or "")
    return bool(want) and dict(pod.images).get(c.MAIN_CONTAINER) == want


def _revision_failing(retry: RetryBook, row: Row, pod: PodView) -> bool:
    """Go ``revisionFailing``: the running revision's ladder holds, or the pod was created once the
    ladder had recorded a failure."""
    block = retry.blocks.get(row.running_revision)
    if block is None:
        return False
    if block.state == HELD_STATE:
        return True
    if pod.creation_timestamp is None:
        return False
    return pod.creation_timestamp >= block.last_failure_at


def _rebuilt_after_failure(ctx: Ctx, row: Row, pod: PodView) -> bool:
    """Go ``rebuiltAfterFailure``: the row's failure record predates this set's Ready and the pod is the
    rebuild answering it (``podstate.rebuilt_after_failure``, Go ``RebuiltAfterFailure``), judged
    against the update revision's creation (``RevisionBorn``)."""
    failed_at = parse_time((row.last_failure or {}).get("time"))
    if failed_at is None or row.ready_since is None or failed_at > row.ready_since:
        return False
    born = next((r.created for r in ctx.world.revisions if r.name == ctx.spec_revision), None)
    return rebuilt_after_failure(pod, row.last_failure, born, proven_window(ctx))


def _runner_loops(ctx: Ctx, row: Row, pod: PodView, retry: RetryBook) -> bool:
    """Go ``runnerLoops``: the row remembers a crash, the runner ran again since Ready, it is parked in
    a terminal waiting reason, the set is the row's rebuild after a failure just before it, or the
    ladder already reads the revision as failing where the pod stands."""
    if crash_remembered(row) or runner_restarted_again_since_ready(pod, row.ready_since):
        return True
    if stuck_container(pod) is not None:
        return True
    return _rebuilt_after_failure(ctx, row, pod) or _revision_failing(retry, row, pod)


@dataclass(frozen=True, slots=True)
class _Crash:
    pod: PodView
    reason: str

    def restart_reason(self) -> str:
        return f"pod {self.pod.name} crashed after promotion: {self.reason}"


def _read_runner_crash(ctx: Ctx, row: Row, pods: Sequence[PodView], retry: RetryBook) -> _Crash | None:
    """Go ``readRunnerCrash``: the crash of a complete promoted set on a ``Ready`` row."""
    if row.phase != R.READY or not row.running_revision:
        return None
    live = [p for p in pods if not p.ended]
    if len(live) < ctx.pods_per_instance:
        return None
    for p in live:
        if p.terminating or not _on_revision(p, row.running_revision):
            continue
        if runner_restarted_since_ready(p, row.ready_since) is None:
            continue
        if not _runs_desired_image(ctx, row, p) or not _runner_loops(ctx, row, p, retry):
            continue
        stuck = stuck_container(p)
        found = pod_termination(ctx, p)
        reason = stuck.reason if stuck is not None else str((found or {}).get("reason") or "")
        return _Crash(p, reason or "Error")
    return None


def _first_restart_inside_window(ctx: Ctx, row: Row, pod: PodView) -> bool:
    """Go ``firstRestartInsideWindow``: the first restart after Ready, as far as the kubelet's record
    bounds it, came within the crash window (``crashWindow``: the proven window)."""
    ready = row.ready_since
    ct = _main_container(pod)
    if ready is None or ct is None:
        return False
    if ct.finished_at is not None and ct.finished_at > ready:
        first = ct.finished_at
        if ct.last_started_at is not None and ct.last_started_at > ready:
            first = ct.last_started_at
    elif ct.started_at is not None and ct.started_at > ready:
        first = ct.started_at
    else:
        return False
    return first <= ready + proven_window(ctx)


def _counted_on_block(row: Row, block: RetryBlock | None) -> bool:
    """Go ``crashCountedOnBlock``: the row's record is dated no earlier than the block's first failure."""
    at = parse_time((row.last_failure or {}).get("time"))
    return crash_remembered(row) and block is not None and at is not None and at >= block.first_failure_at


def _in_flight_at(ctx: Ctx, rev: str) -> bool:
    """Go ``anyInFlightAttemptAt``: a Create in flight anywhere, an Update pinned to ``rev`` or a Restart
    rebuilding it."""
    for r in R.load_rows(ctx.world.replica.status):
        op = r.operation
        if op is None:
            continue
        if op.type == R.OP_CREATE and r.phase == R.CREATING:
            return True
        if op.type == R.OP_UPDATE and op.target_revision == rev:
            return True
        if r.phase == R.RESTARTING and (r.running_revision or r.target_revision or op.target_revision) == rev:
            return True
    return False


@dataclass(frozen=True, slots=True)
class CrashLadder:
    """Go ``crashLoopLadder``: the running revision's ladder read against the crash of the promoted set,
    computed on a copy of the block with the writer's own transition."""

    rev: str
    crash: _Crash
    remember: bool  # the first sighting of this set's crash: the row records it
    record: bool  # the block does not count it yet
    held: bool
    parks: bool  # held and the set out of serving
    open: bool  # the ladder admits the rebuild this pass
    attempts: int

    @property
    def fires(self) -> bool:
        return self.open or self.record or self.parks or self.remember


def read_crash_ladder(
    ctx: Ctx, row: Row, pods: Sequence[PodView], retry: RetryBook, out: Out
) -> CrashLadder | None:
    """Go ``readCrashLadder``. None when there is no crash of the promoted set, the first restart came
    after the crash window on a revision whose ladder does not hold (a steady-state break, repaired
    without counting), or the ladder records nothing for it (no policy, or an environment cause). A
    backoff not yet due wakes the pass when it is."""
    crash = _read_runner_crash(ctx, row, pods, retry)
    if crash is None:
        return None
    rev = row.running_revision
    cur = retry.blocks.get(rev)
    held_revision = cur is not None and cur.state == HELD_STATE
    remembered = crash_remembered(row)
    if not remembered and not held_revision and not _first_restart_inside_window(ctx, row, crash.pod):
        return None
    copy = RetryBook(dict(retry.blocks), retry.replica_key, retry.component, retry.policy)
    record = False
    if (cur is None or cur.state not in (HELD_STATE, BACKOFF_STATE)) and not _counted_on_block(row, cur):
        record = True
        copy.failure(rev, crash.reason, ctx.now, Out(ctx.now))
    block = copy.blocks.get(rev)
    if block is None:
        return None
    if block.state == HELD_STATE:
        parks = not fully_serving(pods, ctx.pods_per_instance)
        return CrashLadder(rev, crash, not remembered, record, True, parks, False, block.attempts_started)
    # Go RestartOpensLadderAttempt: the ladder authorizes one attempt at a revision at a time, so a
    # pass opens one such rebuild per revision; an attempt this pass already started (the block turned
    # RetryInProgress since the pass read the status) is in flight for the rest of it.
    found = R.load_retry_blocks(ctx.world.replica.status).get(rev)
    started_here = block.state == IN_PROGRESS_STATE and (found is None or found.state != IN_PROGRESS_STATE)
    state, due = copy.gate(rev, ctx.now, started_here or _in_flight_at(ctx, rev))
    if state is not None and due is not None:
        out.wake(due)
    return CrashLadder(
        rev, crash, not remembered, record, False, False, state is None, block.attempts_started
    )


def crash_loop_wedged_pod_on(
    ctx: Ctx, row: Row, pods: Sequence[PodView], rev: str
) -> tuple[tuple[PodView, str] | None, timedelta]:
    """Go ``evidence.CrashLoopWedgedPodOn`` (ome-projects/ome ``workload/evidence/``, the 10,186-character
    file, commit not named by the index, read whole) with its parked shape only
    (``unreadyIsWedge`` false; ``PodWedgedPastGrace`` and ``TerminalWaitingGraceLeft``,
    ``evidence/stuckpod.go``, 12,631 characters): on a ``Ready``, operation-free row with a stuck-pod
    grace, a set not fully serving holds a live pod of ``rev`` parked in a terminal waiting reason and
    older than the grace, measured from the pod's creation ("the time a pod gets to come up, after which
    a parked pod is a wedge at once"), so a set that serves between its crashes is a wedge once it is
    past the grace. Returns the wedged pod with its waiting reason (None without a wedge) and, without
    one, how long the earliest parked pod still has inside the grace (zero when none is parked): the
    grace ending raises no watch event. Not ported: the promoted-then-unready shape
    (``PodUnreadyPastGrace``, read under ``RecreateInstanceOnPodRestart`` by the ladder's wedge).
    Before goG ours measured the grace from the waiting episode's start, so a flapping set never read
    as a wedge."""
    grace = ctx.world.settings.stuck_pod_grace_period
    none = timedelta(0)
    if row.phase != R.READY or row.operation is not None or grace <= none:
        return None, none
    if fully_serving(pods, ctx.pods_per_instance):
        return None, none
    left = none
    for p in pods:
        if p.terminating or not _on_revision(p, rev):
            continue
        stuck = stuck_container(p)
        if stuck is not None and p.creation_timestamp is not None and ctx.now - p.creation_timestamp >= grace:
            return (p, stuck.reason), none  # Go PodWedgedPastGrace
        pod_left = terminal_waiting_grace_left(p, ctx.now, grace)
        if pod_left > none and (left == none or pod_left < left):
            left = pod_left
    return None, left


def terminal_waiting_grace_left(pod: PodView | None, now: datetime, grace: timedelta) -> timedelta:
    """Go ``evidence.TerminalWaitingGraceLeft`` (``evidence/stuckpod.go``, 12,631 characters): how much
    of ``grace`` a pod parked in a terminal waiting reason has left before it reads as wedged, counted
    from its creation; zero once the grace has passed, for a pod parked in no such reason, and for a pod
    with no creation stamp (or no pod)."""
    none = timedelta(0)
    if pod is None or pod.creation_timestamp is None or stuck_container(pod) is None:
        return none
    return max(grace - (now - pod.creation_timestamp), none)


def wedge_reason(pod: PodView, reason: str) -> str:
    """Go ``evidence.WedgeReason`` for a parked pod: the repair's reason."""
    return f"pod {pod.name} wedged in {reason} past the stuck-pod grace"


def _wedged_on_running(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> str | None:
    """Go ``evidence.CrashLoopWedgedPodOn`` on the running revision (``crash_loop_wedged_pod_on``): the wedge the
    ladder's ``crashRebuildWarranted`` asks for, named by Go ``WedgeReason`` ("pod <p> wedged in
    <reason> past the stuck-pod grace"); None without a wedge."""
    wedged, _ = crash_loop_wedged_pod_on(ctx, row, pods, row.running_revision)
    return None if wedged is None else wedge_reason(*wedged)


def _current_revision(ctx: Ctx) -> str:
    """Go ``input.ObservedState.CurrentRevision``: the status's ``currentRevision`` as observed."""
    return str(ctx.world.replica.status.get("currentRevision") or "")


def op_less_crash_loop_repair(
    ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook
) -> Row | None:
    """Go ``ops/restart.go`` ``readCrashLoopRepair`` where the running revision's ladder reads no crash
    (ome-projects/ome, the newest stored version, 78,474 characters, commit not named by the index;
    ``crashLoopRepairReason``, the trigger ``DetectRestartTriggerWithPods`` asks right after the
    crash-loop episode and ahead of the policy's triggers): "a pod wedged in a terminal kubelet waiting
    reason cannot recover on its own and no other pass owns an operation-free Ready row, so the repair
    starts regardless of the restart policy". The wedge is ``evidence.CrashLoopWedgedPod``: the
    parked shape of ``CrashLoopWedgedPodOn`` read on the Component's **current** revision ("a wedge no
    counted crash is behind is repaired on the Component's current revision alone, and an off-current
    one is the escalation's"), a pod that runs but fails readiness being no wedge of an idle row. The
    repair is a ``Restart`` named by ``WedgeReason``, unless the revision the row would rebuild is
    denied by its RetryBlock (``rebuildRetryBlockDenies``: "a wedge with no such restart answers to the
    RetryBlock as a repair of a never-Ready Instance does") or the restart selection leaves the row to
    the roll (``plan_decision.go`` ``restartTrigger`` with ``RepairYieldsToTarget``: the row runs a
    revision other than an open roll target). A parked pod inside the grace wakes the pass when the
    grace ends; a denying ``Backoff`` wakes it when due too (ours: Go's ``readCrashLoopRepair`` deposits
    no wake there, and what else requeues Go's pass then was not read). Not ported: the repair admission of ``reconcile.go`` ``executeRestartPass``
    (``RestartOpensUnavailability`` put to the unavailability budget, the repair batch size), which
    ours has for no restart. Returns the opened Restart, or None: the earlier rules apply."""
    wedged, left = crash_loop_wedged_pod_on(ctx, row, pods, _current_revision(ctx))
    if wedged is None:
        if left > timedelta(0):
            out.wake(ctx.now + left)
        return None
    denied, due = _rebuild_denied(ctx, row)
    if denied:
        out.wake(due)
        return None
    if repair_yields(ctx, row, ctx.target, retry):
        return None
    return start_gang_restart(ctx, row, pods, wedge_reason(*wedged), out)


def crash_rebuild_warranted(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> bool:
    """Go ``crashRebuildWarranted``: the set is wedged past the grace, or the policy rebuilds on a
    runner restart after Ready."""
    if _wedged_on_running(ctx, row, pods) is not None:
        return True
    return ctx.restart_policy == RESTART_POLICY_RECREATE and any(
        runner_restarted_since_ready(p, row.ready_since) is not None for p in pods
    )


def crash_selected(ctx: Ctx, row: Row, pods: Sequence[PodView], ladder: CrashLadder) -> bool:
    """Whether one of Go's restart triggers selects a row whose crash the ladder reads
    (``DetectRestartTriggerWithPods``): the first sighting is remembered whatever the policy
    (``readCrashLadder``'s ``remember``), and the wedge (``readCrashLoopRepair``) or the policy's
    ``runnerRestartTrigger`` select it while the ladder opens, records or parks."""
    if ladder.remember:
        return True
    return crash_rebuild_warranted(ctx, row, pods) and (ladder.open or ladder.record or ladder.parks)


def count_crash_on_ladder(
    ctx: Ctx, row: Row, pods: Sequence[PodView], ladder: CrashLadder, out: Out, retry: RetryBook
) -> tuple[Row, bool]:
    """Go ``countCrashOnLadder``: the crash is counted on the block at its first sighting (the block
    written before the row) and remembered on the row dated at this pass; where a trigger would rebuild
    the set, a held ladder parks the row ``Failed`` naming the crash while its set is out of serving
    (one ``InstanceFailed``) and names the loop on it while it serves, and a backoff not due leaves the
    row. Returns the row and whether no rebuild opens this pass."""
    crash = ladder.crash
    found = pod_termination(ctx, crash.pod) or {"podName": crash.pod.name, "containerName": c.MAIN_CONTAINER}
    termination = {**found, "reason": crash.reason, "time": format_time(ctx.now)}
    if ladder.record:
        retry.failure(ladder.rev, crash.reason, ctx.now, out)
    if ladder.remember or ladder.record:
        row = replace(row, last_failure=termination)
    if not crash_rebuild_warranted(ctx, row, pods):
        return row, True
    if ladder.held:
        if not ladder.parks:
            return _noted(row), True
        message = (
            f"{crash.reason}: crash after promotion; revision {ladder.rev} held after {ladder.attempts} "
            "failed attempts"
        )
        failed = fail(
            ctx, row, crash.pod.name, c.MAIN_CONTAINER, crash.reason, "", out, None,
            announce=False, record=termination,
        )  # fmt: skip
        # Go status.Announce: "the park lands again on every crash of a set that serves between them;
        # the warning is owed once per pod set" (the row's announced record, by its incarnation).
        out.announce(
            row.index,
            "InstanceFailed",
            f"InferenceReplica {ctx.namespace}/{ctx.name} {ctx.instance_key(row.index)} escalated to "
            f'Phase=Failed (pod="{crash.pod.name}"): {message}',
        )
        return replace(failed, target_revision=row.target_revision), True
    return row, not ladder.open


def _noted(row: Row) -> Row:
    """Go ``status.RecordCrashLoopNote``: the note appended once to the failure message of a Ready,
    operation-free row with a record (``"; "``-joined, the whole message when there was none)."""
    failure = row.last_failure
    if failure is None or row.operation is not None or row.phase != R.READY or _failure_noted(row):
        return row
    message = str(failure.get("message") or "")
    noted = f"{message}; {CRASH_LOOP_SERVING_NOTE}" if message else CRASH_LOOP_SERVING_NOTE
    return replace(row, last_failure={**failure, "message": noted})


def _failure_noted(row: Row) -> bool:
    """Go ``status.FailureNoted``."""
    return CRASH_LOOP_SERVING_NOTE in str((row.last_failure or {}).get("message") or "")


def _cleared(row: Row) -> Row:
    """Go ``status.ClearCrashLoopNote``: the note leaves the message, the record's time kept."""
    failure = row.last_failure
    if failure is None or not _failure_noted(row):
        return row
    message = str(failure.get("message") or "")
    message = message.replace(f"; {CRASH_LOOP_SERVING_NOTE}", "").replace(CRASH_LOOP_SERVING_NOTE, "")
    return replace(row, last_failure={**failure, "message": message})


def _pod_set_proven(ctx: Ctx, pods: Sequence[PodView]) -> bool:
    """Go ``podSetProven``: every pod of the set has held PodReady for the proven window
    (``podreadiness.IsPodAvailable``); an empty set proves nothing."""
    window = proven_window(ctx)
    pod_set = _set(pods)
    for p in pod_set:
        cond = p.condition("Ready")
        if cond is None or cond.status != "True" or not p.ready:
            return False
        if window > timedelta(0) and (
            cond.last_transition_time is None or not cond.last_transition_time + window < ctx.now
        ):
            return False
    return bool(pod_set)


def _park_serves(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> bool:
    """Go ``crashLoopParkServes``: the park's set is complete, at the row's incarnation on the running
    revision, and fully serving."""
    pod_set = _set(pods)
    if len(pod_set) < ctx.pods_per_instance:
        return False
    for p in pod_set:
        if p.incarnation != row.incarnation or not _on_revision(p, row.running_revision):
            return False
    return fully_serving(pod_set, ctx.pods_per_instance)


def read_crash_loop_episode(
    ctx: Ctx, row: Row, pods: Sequence[PodView], retry: RetryBook
) -> tuple[str, str] | None:
    """Go ``readCrashLoopEpisode``: the step owed to an operation-free row remembering a crash of its
    promoted set, with the note an unpark writes: a park whose set serves returns to ``Ready`` (naming
    the loop while the ladder holds and the set is unproven), a held serving ``Ready`` row names the
    loop, and a note goes once the set is proven or the hold released. None: nothing owed."""
    if row.operation is not None or not row.running_revision or not crash_of_promoted_set(row, pods):
        return None
    block = retry.blocks.get(row.running_revision)
    held = block is not None and block.state == HELD_STATE
    if row.phase == R.FAILED:
        if not _park_serves(ctx, row, pods):
            return None
        return EPISODE_UNPARK, CRASH_LOOP_SERVING_NOTE if held and not _pod_set_proven(ctx, pods) else ""
    if row.phase == R.READY:
        noted = _failure_noted(row)
        proven = _pod_set_proven(ctx, pods)
        if not noted and held and fully_serving(pods, ctx.pods_per_instance) and not proven:
            return EPISODE_NAME, ""
        if noted and (not held or proven):
            return EPISODE_CLEAR, ""
    return None


def settle_crash_loop_episode(row: Row, episode: tuple[str, str]) -> Row:
    """Go ``settleCrashLoopEpisode`` (``status.UnparkServing``: ``readySince`` and the record's time
    kept, the note appended when given). Nothing opens."""
    step, note = episode
    if step == EPISODE_UNPARK:
        unparked = replace(row, phase=R.READY)
        return _noted(unparked) if note else unparked
    if step == EPISODE_NAME:
        return _noted(row)
    return _cleared(row)


def step_crash_ladder(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out, retry: RetryBook) -> Row | None:
    """The restart pass's crash rules for an operation-free row, single pod or gang, ahead of the
    policy's triggers (Go ``DetectRestartTriggerWithPods`` and ``Restart``, the newest stored version,
    whose crash reading never asks the pod count: a gang's crash is any member's runner restart on a
    complete set, its rebuild the whole gang's ``Restart``, named by the policy's trigger,
    ``gang_broken``): a
    crash-loop park follows its pod set and a held serving row names the loop, whatever the policy
    (``readCrashLoopEpisode``); a crash of the promoted set is counted on the running revision's retry
    ladder, which paces the rebuild, and parks the row ``Failed`` once it holds (``readCrashLadder``,
    ``countCrashOnLadder``); a rebuild the ladder admits opens a ``Restart`` that is the ladder's attempt
    (``status.RetryBlockAttemptStarted``); where the ladder reads no crash, a pod wedged past the
    stuck-pod grace on the current revision is repaired by a ``Restart`` whatever the policy
    (``readCrashLoopRepair``, ``op_less_crash_loop_repair``, since goJ). None: none of these reads the
    row, the earlier rules apply. Under Freeze the restart pass opens nothing, and nothing here runs."""
    if ctx.freeze or row.operation is not None:
        return None
    episode = read_crash_loop_episode(ctx, row, pods, retry)
    if episode is not None:
        return settle_crash_loop_episode(row, episode)
    active = None if ctx.gang else by_name(pods, ctx.pod_name(row.index, row.active_ordinal))
    if not ctx.gang and (active is None or active.terminating or active.ended):
        return None
    ladder = read_crash_ladder(ctx, row, pods, retry, out)
    if ladder is None:
        # Go readCrashLoopRepair without a ladder: the wedge on the current revision, any policy.
        return op_less_crash_loop_repair(ctx, row, pods, out, retry)
    _, left = crash_loop_wedged_pod_on(ctx, row, pods, row.running_revision)
    if left > timedelta(0):
        out.wake(ctx.now + left)  # Go readCrashLoopRepair: the grace ending raises no watch event
    if not crash_selected(ctx, row, pods, ladder):
        return row
    row, parked = count_crash_on_ladder(ctx, row, pods, ladder, out, retry)
    if parked:
        return row
    # The reason is the first of Go's triggers that selects the row (DetectRestartTriggerWithPods, in
    # its order): the wedge (crashLoopRepairReason, WedgeReason), the crash's first sighting
    # (readCrashLadder's remember), then the policy's runner restart (runnerRestartTrigger: per pod, a
    # single pod's or each gang member's).
    why = _wedged_on_running(ctx, row, pods)
    if why is None and ladder.remember:
        why = ladder.crash.restart_reason()
    if why is None and ctx.restart_policy == RESTART_POLICY_RECREATE:
        why = gang_broken(ctx, row, pods) if active is None else single_pod_restart_reason(ctx, row, [active])
    restarted = start_gang_restart(ctx, row, pods, why or ladder.crash.restart_reason(), out)
    retry.started(ladder.rev)
    return restarted
