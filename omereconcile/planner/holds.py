"""The scheduler hold: a pod the scheduler cannot place parks its operation (01 §4.5-§4.6).

Read from OME ``workload/holds/scheduler.go`` (``schedulerHold``, ``reportScheduler``),
``holds/table.go`` / ``holds/pass.go`` (``takesRowFrom``, ``heldSince``),
``workload/types/scheduling.go`` (``PodUnschedulable``, ``UnschedulableTermination``) and
``workload/escalation/scheduler.go`` (``unschedulableGraceElapsed``,
``unschedulableFailureMessage``, ``escalateSchedulerHold``), in the standalone-era tree that also
holds ``holds/quota.go``:

- a live pod with ``PodScheduled=False`` and reason ``Unschedulable`` holds the step on every
  operation that creates pods (Create, RecreatePod, surge): ``waiting: Unschedulable``, the
  ``InstanceReadyTimeout`` clock parked, and the scheduler's verdict left on ``lastFailure`` as
  evidence (``podName``, ``reason: Unschedulable``, the scheduler's ``message``, and as ``time`` the
  moment ``PodScheduled`` turned False, so an unchanged hold rewrites nothing);
- the token takes an unheld row or one held only by the pause; another wait keeps the row;
- once the pod schedules the token goes and the deadline is re-armed with a full window; the
  evidence stays on ``lastFailure``, which survives recovery;
- only an operator-configured ``unschedulableGracePeriod`` turns the wait into a failure, once
  ``now - since`` is strictly longer than the grace, measured from the ``PodScheduled`` transition
  (never from the pod's creation, and never when the scheduler left no transition time); zero
  means the wait lasts until room appears;
- that failure is the environment's, never the revision's: no retry block is touched. The Instance
  fails with ``lastFailure.reason: Unschedulable`` and message ``Unschedulable: <scheduler
  message>``, and ``InstanceFailed`` names the pod with that message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from omereconcile.planner.context import Ctx
from omereconcile.planner.nodedeath import force_delete_silent, kubelet_silent, sweep_frees
from omereconcile.planner.out import Out
from omereconcile.planner.quota import takes_row
from omereconcile.planner.rows import Row
from omereconcile.world import PodView, format_time, parse_time

__all__ = [
    "NODE_UNKNOWN",
    "UNSCHEDULABLE",
    "Unplaced",
    "first_unplaced",
    "node_unknown_hold",
    "scheduler_hold",
    "unplaced",
    "unschedulable_failure_message",
]

UNSCHEDULABLE = "Unschedulable"  # corev1.PodReasonUnschedulable, the waiting token


@dataclass(frozen=True, slots=True)
class Unplaced:
    """The scheduler's verdict on a pod (Go ``PodUnschedulable``)."""

    pod: str
    message: str
    since: datetime | None  # PodScheduled's lastTransitionTime; None when the scheduler left none


def unplaced(pod: PodView | None) -> Unplaced | None:
    if pod is None or pod.terminating:
        return None
    cond = pod.condition("PodScheduled")
    if cond is None or cond.status != "False" or cond.reason != UNSCHEDULABLE:
        return None
    return Unplaced(pod.name, cond.message or "", cond.last_transition_time)


def first_unplaced(pods: Sequence[PodView]) -> PodView | None:
    """Go ``FirstUnschedulablePod``: of several pods (a gang), the unplaceable one whose name sorts
    lowest, so the same pod is reported on every pass."""
    found = sorted((p for p in pods if unplaced(p) is not None), key=lambda p: p.name)
    return found[0] if found else None


def unschedulable_failure_message(message: str) -> str:
    """Go ``unschedulableFailureMessage``."""
    return f"{UNSCHEDULABLE}: {message}" if message else UNSCHEDULABLE


def _held_since(row: Row, now: datetime) -> datetime:
    """Go ``heldSince``: the time already recorded for this hold, else now."""
    op, failure = row.operation, row.last_failure or {}
    if op is not None and op.waiting == UNSCHEDULABLE and failure.get("reason") == UNSCHEDULABLE:
        recorded = parse_time(failure.get("time"))
        if recorded is not None:
            return recorded
    return now


def _same_hold(recorded: Mapping[str, Any] | None, evidence: Mapping[str, Any]) -> bool:
    """The recorded hold is this one: the same pod, reason and start (Go compares the evidence by
    which pod is held, why and since when)."""
    if recorded is None:
        return False
    return all(recorded.get(k) == evidence.get(k) for k in ("podName", "reason", "time"))


def _evidence(verdict: Unplaced, at: datetime) -> Mapping[str, Any]:
    """Go ``UnschedulableTermination``."""
    return {
        "podName": verdict.pod,
        "reason": UNSCHEDULABLE,
        "message": verdict.message,
        "time": format_time(at),
    }


def scheduler_hold(ctx: Ctx, row: Row, pod: PodView | None, out: Out) -> tuple[Row, Unplaced | None]:
    """Report, release or escalate the step's pod's scheduler hold. Returns the row and, once the
    operator's grace is over, the verdict to fail the Instance with."""
    op = row.operation
    assert op is not None
    verdict = unplaced(pod)
    if verdict is None:
        if op.waiting == UNSCHEDULABLE:
            op = replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now))
            return replace(row, operation=op), None
        return row, None
    if takes_row(UNSCHEDULABLE, op.waiting):
        evidence = _evidence(verdict, verdict.since or _held_since(row, ctx.now))
        if op.waiting == UNSCHEDULABLE and _same_hold(row.last_failure, evidence):
            # Edge-triggered on the held state (which pod, why, since when), never on the scheduler's
            # message, which it recomputes every cycle: the message from the hold's start stays
            # (Go holds/table_test.go TestExternalHold_EdgeTriggered; escalation/scheduler_test.go
            # TestEscalation_UnschedulableHoldIgnoresMessageChurn).
            evidence = dict(row.last_failure or evidence)
        row = replace(row, operation=replace(op, waiting=UNSCHEDULABLE, deadline=None), last_failure=evidence)
    elif op.deadline is not None:
        row = replace(row, operation=replace(op, deadline=None))  # any outside wait parks the clock
    grace = ctx.world.settings.unschedulable_grace_period
    if grace <= timedelta(0) or verdict.since is None:
        return row, None
    if row.operation is None or row.operation.waiting != UNSCHEDULABLE:
        # Another authority's wait holds the row: its writer owns the attempt's end, and the grace
        # never escalates on evidence this hold did not record
        # (TestEscalation_UnschedulableYieldsToAnotherWaitingToken).
        return row, None
    if ctx.now - verdict.since > grace:
        return row, verdict
    out.wake_past(verdict.since + grace)
    return row, None


# -- NodeUnknown ---------------------------------------------------------------------------------------
NODE_UNKNOWN = "NodeUnknown"  # Go types.WaitingReasonNodeUnknown: environment-caused, never charged


def _node_unknown_evidence(ctx: Ctx, pod: PodView) -> Mapping[str, Any]:
    """Go ``NodeUnknownTermination``: which pod holds the name and which node went quiet under it; the
    time is the pod's creation, so re-observing the same wait rewrites nothing."""
    node = pod.node_name or "<unbound>"
    if pod.phase == "Unknown":
        why = f"pod {pod.name} is in phase Unknown on node {node}"
    else:
        seen = (ctx.world.nodes or {}).get(pod.node_name or "")
        state = "deleted" if seen is None else f"Ready={seen.ready or 'absent'}"
        if seen is not None and seen.unreachable_since:
            state += ", unreachable taint"
        why = f"pod {pod.name} is on node {node} ({state})"
    return {
        "podName": pod.name,
        "reason": NODE_UNKNOWN,
        "message": f"{NODE_UNKNOWN}: {why}; its kubelet has stopped reporting, so the name is held rather "
        "than recycled",
        "time": format_time(pod.creation_timestamp or ctx.now),
    }


def node_unknown_hold(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row:
    """Go ``holds/nodeunknown.go`` ``reportNodeUnknown`` with ``ops/unknown_phase.go``
    ``recoverUnknownPhaseTargets``, on the pods a step needs (``pods``: the names it creates).

    A pod whose kubelet stopped reporting (``planner/nodedeath.py`` ``kubelet_silent``) holds its name:
    it may still run, so the name is never recycled as a dead pod's is. On node-death evidence under
    ``lifecycle.forceDelete`` it is force-deleted this pass, which frees the name and records no wait;
    otherwise the step's clock parks with ``waiting: NodeUnknown`` and the pod named on ``lastFailure``
    (no retry charge: a silent node says nothing about the template). Once no such pod is left the token
    goes and the deadline is re-armed with a full window, as every hold's is."""
    op = row.operation
    assert op is not None
    held: list[PodView] = []
    for pod in sorted(pods, key=lambda p: p.name):
        if not kubelet_silent(ctx.world.nodes, pod, ctx.world.settings.force_delete):
            continue
        if pod.terminating:
            # The stuck-Terminating sweep owns it (planner/nodedeath.py sweep_terminating).
            if not sweep_frees(ctx.world.nodes, pod, ctx.world.settings.force_delete, ctx.now).actionable:
                held.append(pod)
            continue
        if not force_delete_silent(ctx, row.index, pod, out).actionable:
            held.append(pod)
    if not held:
        if op.waiting == NODE_UNKNOWN:
            return replace(row, operation=replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now)))
        return row
    if takes_row(NODE_UNKNOWN, op.waiting):
        evidence = _node_unknown_evidence(ctx, held[0])
        return replace(row, operation=replace(op, waiting=NODE_UNKNOWN, deadline=None), last_failure=evidence)
    if op.deadline is not None:
        return replace(row, operation=replace(op, deadline=None))  # any outside wait parks the clock
    return row
