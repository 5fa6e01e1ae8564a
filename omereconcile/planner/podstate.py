"""Pod-level facts the state machine reads: the readiness ladder, drain proof, stuck containers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from omereconcile.planner.gate import SURGE_DRAIN, held_by
from omereconcile.planner.retry import WORKLOAD_CAUSED_REASONS
from omereconcile.world import ContainerView, Endpoints, PodView, ServiceView, format_time, parse_time
from omerender import constants as c

__all__ = [
    "Ladder",
    "StuckContainer",
    "attempt_crash_looping",
    "crash_loop_failure",
    "drained",
    "fully_serving",
    "ladder",
    "limbo_failure",
    "readiness_dark_at",
    "stuck_container",
    "workload_caused_container",
]

# The kubelet waiting reasons a container cannot leave on its own (OME workload/types
# terminalWaitingReasons, read by IsTerminalWaitingReason): all seven, matched verbatim.
STUCK_REASONS = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "CreateContainerConfigError",
        "CreateContainerError",
        "CrashLoopBackOff",
        "RunContainerError",
    }
)


@dataclass(frozen=True, slots=True)
class Ladder:
    """Ready (ContainersReady) ⊇ serving (and gate True) ⊇ available (endpoint + minReadySeconds)."""

    ready: bool
    serving: bool
    available: bool
    available_at: datetime | None  # when a pending pod becomes Available (for the exact requeue)


def ladder(pod: PodView, endpoints: Endpoints, min_ready: timedelta, now: datetime) -> Ladder:
    if pod.terminating:
        return Ladder(False, False, False, None)
    ready = pod.containers_ready
    serving = ready and pod.gate == "True"
    ep = endpoints.by_pod.get(pod.name)
    listed = ep is not None and ep.ready and not ep.terminating
    available = False
    at: datetime | None = None
    if listed and pod.ready:
        cond = pod.condition("Ready")
        since = cond.last_transition_time if cond is not None else None
        if since is None or min_ready <= timedelta(0):
            available = True
        else:
            at = since + min_ready
            available = now >= at
            if available:
                at = None
    return Ladder(ready, serving, available, at)


def drained(pod: PodView, service: ServiceView, endpoints: Endpoints) -> bool:
    """No EndpointSlice lists the pod as ready. The slices are read first: only when none is seen
    does the Service decide — none means nothing routes through the pod, one without slices yet
    proves nothing (03 §8 rule 15).

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/drain/drain.go`` @ dcfb4135 (the newest
    of three stored versions) ``IsPodDrained`` / ``Batcher.IsPodDrained``: ``drainedWhenSliceListEmpty``
    is consulted only for an empty slice list; slices that still list the pod ready keep it undrained
    even after its Service is gone (``drain_test.go`` ``TestBatcher_MatchesIsPodDrainedSemantics``).
    Before, a missing Service read as drained whatever the slices still said."""
    if pod.gate != "False" and pod.containers_ready:
        return False  # the gate write has not landed yet
    if not endpoints.slices_seen:
        return not service.exists
    ep = endpoints.by_pod.get(pod.name)
    return ep is None or not ep.ready


@dataclass(frozen=True, slots=True)
class StuckContainer:
    container: str
    reason: str
    since: datetime  # when the grace period started counting (the waiting episode's start)


def waiting_episode_start(pod: PodView) -> datetime | None:
    """When the pod's current waiting episode began: the later of its creation and the last
    transition of its ContainersReady condition away from True (a pod that served and then broke
    is measured from the break); None without a creation stamp, which proves no duration.

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/stuckpod.go``
    ``WaitingEpisodeStart``, the newest of three stored versions (the one that carries it; its test
    ``stuckpod_test.go`` @ 58a57f25 ``TestWaitingEpisodeStart``)."""
    if pod.creation_timestamp is None:
        return None
    since = pod.creation_timestamp
    for cond in pod.conditions:
        if cond.type != "ContainersReady" or cond.status == "True" or cond.last_transition_time is None:
            continue
        since = max(since, cond.last_transition_time)
    return since


def stuck_container(pod: PodView) -> StuckContainer | None:
    """A regular or init container parked in a terminal waiting reason, reported verbatim, with the
    instant the stuck-pod grace counts from.

    OME ``evidence/stuckpod.go`` ``PodStuckInTerminalWaiting`` (the newest stored version): regular
    containers are scanned before init containers, a terminating pod or one without a creation stamp
    is never stuck, and the grace counts from the waiting episode's start
    (:func:`waiting_episode_start`): a pod that served and then parks is given the grace from the
    moment it broke, not read as stuck on the first pass that sees it (before: from its creation).
    """
    since = waiting_episode_start(pod)
    if pod.terminating or since is None:
        return None
    for ct in (*pod.containers, *pod.init_containers):
        if ct.waiting_reason in STUCK_REASONS:
            return StuckContainer(ct.name, ct.waiting_reason, since)
    return None


def workload_caused_container(pod: PodView) -> ContainerView | None:
    """OME ``evidence.FirstWorkloadCausedPod`` for one pod: the first regular, then init, container
    waiting in a reason that travels with the revision (``types/failurecause.go``); a terminating pod
    shows none."""
    if pod.terminating:
        return None
    for ct in (*pod.containers, *pod.init_containers):
        if ct.waiting_reason in WORKLOAD_CAUSED_REASONS:
            return ct
    return None


CRASH_LOOP = "CrashLoopBackOff"  # Go evidence.ReasonCrashLoop


def _crash_looping(ct: ContainerView) -> bool:
    """Go ``evidence.containerCrashLooping``: either face of a crash loop, parked in CrashLoopBackOff or
    running again between two crashes (not Ready, a restart behind it whose exit was non-zero)."""
    if ct.waiting:
        return ct.waiting_reason == CRASH_LOOP
    if ct.ready:
        return False
    if ct.state_exit_code is not None and ct.state_exit_code != 0:
        return True
    return ct.restart_count > 0 and ct.exit_code is not None and ct.exit_code != 0


def attempt_crash_looping(pods: Iterable[PodView], revision_hash: str, reason: str) -> bool:
    """Whether an attempt's failure is a crash loop, which no node is blamed for.

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/disposition.go``, the newest
    stored version (36,185 characters), ``attemptCrashLooping``: the escalator classified
    ``CrashLoopBackOff`` (``reason``), or a live pod of the attempt shows either face of one
    (``evidence.FirstCrashLoopingPod``, scoped to the attempt's revision like the readiness readers: a
    pod with no revision label stays in scope, a surge's source of another revision does not). "A
    container that keeps exiting does so on any node, so the rebuild is never steered off the node it
    ran on."
    """
    if reason == CRASH_LOOP:
        return True
    for pod in pods:
        if pod.terminating or (pod.revision_hash and revision_hash and pod.revision_hash != revision_hash):
            continue
        if any(_crash_looping(ct) for ct in (*pod.containers, *pod.init_containers)):
            return True
    return False


def _exit_record(pod: PodView, ct: ContainerView, now: datetime) -> dict[str, object] | None:
    # Go types.nonZeroTerminated + terminationFromTerminated: the live state wins over the last one.
    if ct.state_exit_code is not None and ct.state_exit_code != 0:
        reason, code, message, at = (
            ct.state_terminated_reason,
            ct.state_exit_code,
            ct.state_message,
            ct.state_finished_at,
        )
    elif ct.exit_code is not None and ct.exit_code != 0:
        reason, code, message, at = ct.terminated_reason, ct.exit_code, ct.last_message, ct.finished_at
    else:
        return None
    record: dict[str, object] = {"podName": pod.name, "containerName": ct.name, "reason": reason or "Error"}
    record["exitCode"] = code
    if message:
        record["message"] = message
    record["time"] = format_time(at or now)
    return record


def crash_loop_failure(pods: Iterable[PodView], now: datetime) -> dict[str, object] | None:
    """What a deadline records about an attempt whose container keeps exiting.

    OME ``escalation/disposition.go`` ``DisposeExpiredAttempt`` reads ``evidence.FirstCrashLoopingPod``
    after the workload-caused pod and before the readiness limbo, and records
    ``types.PodTerminationWithReason(pod, "CrashLoopBackOff", now)``: the pod's first container (regular,
    then init) whose live or last termination exited non-zero, with its reason (``Error`` when the
    kubelet left none), exit code, message and ``finishedAt``; else the first container parked in a
    terminal waiting reason, with the waiting message and the last termination's time. Either face of
    the loop yields one of the two, so the pod-level fallbacks of ``PodTermination`` are never reached
    from here. ``None`` when no live pod is crash-looping.
    """
    for pod in pods:
        if pod.terminating:
            continue
        containers = (*pod.containers, *pod.init_containers)
        if not any(_crash_looping(ct) for ct in containers):
            continue
        for ct in containers:
            record = _exit_record(pod, ct, now)
            if record is not None:
                return record
        for ct in containers:
            if ct.waiting_reason in STUCK_REASONS:
                record = {"podName": pod.name, "containerName": ct.name, "reason": ct.waiting_reason}
                if ct.waiting_message:
                    record["message"] = ct.waiting_message
                record["time"] = format_time(ct.finished_at or now)
                return record
        return {"podName": pod.name, "reason": CRASH_LOOP, "time": format_time(now)}
    return None


def _all_running(pod: PodView) -> bool:
    return pod.phase == "Running" and bool(pod.containers) and all(ct.running for ct in pod.containers)


def _condition_tail(record: dict[str, object], message: str, pod: PodView, type_: str, now: datetime) -> None:
    cond, when = pod.condition(type_), now
    if cond is not None:
        if cond.reason:
            message += f"; {type_}=False ({cond.reason})"
        if cond.message:
            message += f": {cond.message}"
        if cond.last_transition_time is not None:
            when = cond.last_transition_time
    record.update(message=message, time=format_time(when))


def limbo_failure(pods: Iterable[PodView], now: datetime) -> dict[str, object] | None:
    """What a deadline records about an attempt whose pods run yet never serve (OME ``evidence``,
    newest stored version: ``FirstRunningNotReadyPod`` / ``ContainersNotReadyTermination``, then
    ``FirstGateNotFoldedPod`` / ``GateNotFoldedTermination``). Nothing when any live pod has a
    waiting container: the kubelet named a failure, and that name owns the blame. Otherwise the first
    pod that is Running with every regular container running and ContainersReady not True
    (``ContainersNotReady``), else the first whose containers are ready but whose Ready never follows
    (``ReadinessGateNotSatisfied``). Evidence only: the time is the condition's transition, so an
    unchanged pod gives an identical record."""
    candidates = [p for p in pods if not p.terminating]
    if any(ct.waiting for p in candidates for ct in (*p.containers, *p.init_containers)):
        return None
    running = [p for p in candidates if _all_running(p)]
    for pod in running:
        cr = pod.condition("ContainersReady")
        if cr is None or cr.status != "True":
            record: dict[str, object] = {"podName": pod.name, "reason": "ContainersNotReady"}
            message = "pod is Running but its containers never became ready"
            names = [ct.name for ct in (*pod.containers, *pod.init_containers) if not ct.ready]
            if names:
                record["containerName"] = names[0]
                message += "; not ready: " + ", ".join(names)
            _condition_tail(record, message, pod, "ContainersReady", now)
            return record
    for pod in running:
        if not pod.ready:
            record = {"podName": pod.name, "reason": "ReadinessGateNotSatisfied"}
            message = "pod containers are ready but a readiness gate keeps it out of its Service"
            unsatisfied = [
                g for g in pod.readiness_gates if (c_ := pod.condition(g)) is None or c_.status != "True"
            ]
            if unsatisfied:
                message += "; unsatisfied gates: " + ", ".join(unsatisfied)
            _condition_tail(record, message, pod, "Ready", now)
            return record
    return None


def live(pods: Iterable[PodView]) -> list[PodView]:
    return [p for p in pods if not p.terminating]


def owned(pod: PodView, prefix: str, component: str) -> bool:
    return (
        pod.labels.get(c.LABEL_INFERENCESERVICE) == prefix
        and pod.labels.get(c.LABEL_COMPONENT) == component
        and pod.labels.get(c.LABEL_MANAGED_BY) == c.MANAGED_BY_VALUE
    )


def fully_serving(pods: Sequence[PodView], desired: int) -> bool:
    """Go ``query.PodSetFullyServing`` (ome-projects/ome 4dfb96b1, read by ``escalation.go``
    ``podSetFullyServing`` and the admission hold): at least ``desired`` live pods, each
    ContainersReady, not terminal, and carrying the serving gate True; Terminating pods are left out
    (they neither disqualify the set nor count toward it), and so is a pod the surge's own drain holds
    out of rotation ahead of deleting it (its gate's writers include ``Update-surge-drain``, whoever
    else holds it): the newest stored ``query/discover_test.go`` (25,957 characters),
    ``TestPodSetFullyServing_SkipsAPodTheSurgeDrained``; the function body of that version is not in the
    index, so whether such a pod is skipped before or after the terminal check was not read (ours skips
    it first, as a Terminating one)."""
    if desired <= 0:
        return False
    count = 0
    for p in pods:
        if p.terminating or held_by(p, SURGE_DRAIN):
            continue
        if p.ended or not p.containers_ready_condition or p.gate != "True":
            return False
        count += 1
    return count >= desired


def readiness_dark_at(pods: Sequence[PodView], grace: timedelta) -> datetime | None:
    """When a pod set's shortfall is dark pods alone: every live pod short of serving
    (``fully_serving``) is Running with its containers running and ContainersReady False, a pod whose
    runner is up and fails readiness; it is dark once it has been so for the stuck-pod grace (OME's
    newest ``planUpdateSelection`` reads ``ops.RolledInstanceDark`` and ``InPlaceCannotRestore`` so,
    as ``TestReconcile_DarkRolledInstanceHoldsNoFloor`` and the dark-Instance roll stories of the
    612,458-character ``reconcile_test`` pin them; neither body is in the index). The instant the last
    of them goes dark, or None when none falls short or some shortfall is not a readiness failure
    (an ended or waiting pod, a gate turned off)."""
    latest: datetime | None = None
    for p in pods:
        if p.terminating or fully_serving([p], 1):
            continue
        cond = p.condition("ContainersReady")
        if (
            p.ended
            or p.phase != "Running"
            or not p.containers
            or not all(ct.running for ct in p.containers)
            or cond is None
            or cond.status == "True"
        ):
            return None
        since = cond.last_transition_time or p.creation_timestamp
        if since is None:
            return None
        latest = since + grace if latest is None else max(latest, since + grace)
    return latest


def rebuilt_after_failure(
    pod: PodView, failure: Mapping[str, object] | None, revision_born: datetime | None, window: timedelta
) -> bool:
    """Go ``RebuiltAfterFailure`` (``workload/ops/update.go``, the newest of 6, 50,518 characters):
    ``pod`` is the rebuild answering a death of the set the roll is landing. The row's recorded
    failure names a container (a record without one is a wait the pod never served through), is
    strictly younger than the revision being rolled (a revision whose creation is unknown does not
    exclude), and the pod was created no earlier than it and inside the proven window of it."""
    failed_at = parse_time((failure or {}).get("time"))
    if failed_at is None or not (failure or {}).get("containerName"):
        return False
    if pod.creation_timestamp is None or window <= timedelta(0):
        return False
    if revision_born is not None and not failed_at > revision_born:
        return False
    return failed_at <= pod.creation_timestamp < failed_at + window


def unavailable_until(pod: PodView, window: timedelta, now: datetime) -> datetime | None:
    """Go ``podreadiness.IsPodAvailable`` (``workload/podreadiness/readiness.go`` @ 58a57f25, 26,065
    characters): None when the pod is Available (PodReady True, held for ``window`` since its
    ``lastTransitionTime``; a window <= 0 makes Available the same as Ready), else the instant it
    becomes Available, or ``now`` when no later instant does (not Ready, or a Ready condition with no
    ``lastTransitionTime``, whose age cannot be proven)."""
    cond = pod.condition("Ready")
    if cond is None or cond.status != "True":
        return now
    if window <= timedelta(0):
        return None
    if cond.last_transition_time is None:
        return now
    available_at = cond.last_transition_time + window
    return available_at if now < available_at else None
