"""Pod-level facts the state machine reads: the readiness ladder, drain proof, stuck containers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from omereconcile.planner.retry import WORKLOAD_CAUSED_REASONS
from omereconcile.world import ContainerView, Endpoints, PodView, ServiceView
from omerender import constants as c

__all__ = ["Ladder", "StuckContainer", "drained", "ladder", "stuck_container", "workload_caused_container"]

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
    """No EndpointSlice lists the pod as ready. With no Service nothing routes through it; with a
    Service but no slice seen yet, nothing is proven (03 §8 rule 15)."""
    if pod.gate != "False" and pod.containers_ready:
        return False  # the gate write has not landed yet
    if not service.exists:
        return True
    if not endpoints.slices_seen:
        return False
    ep = endpoints.by_pod.get(pod.name)
    return ep is None or not ep.ready


@dataclass(frozen=True, slots=True)
class StuckContainer:
    container: str
    reason: str
    since: datetime  # when the grace period started counting (the pod's creation)


def stuck_container(pod: PodView) -> StuckContainer | None:
    """A regular or init container parked in a terminal waiting reason, reported verbatim.

    OME ``evidence/stuckpod.go`` ``PodStuckInTerminalWaiting``: regular containers are scanned
    before init containers, a terminating pod or one without a creation stamp is never stuck, and
    the grace counts from the pod's creation (the kubelet gives no per-state time).
    """
    if pod.terminating or pod.creation_timestamp is None:
        return None
    for ct in (*pod.containers, *pod.init_containers):
        if ct.waiting_reason in STUCK_REASONS:
            return StuckContainer(ct.name, ct.waiting_reason, pod.creation_timestamp)
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


def live(pods: Iterable[PodView]) -> list[PodView]:
    return [p for p in pods if not p.terminating]


def owned(pod: PodView, prefix: str, component: str) -> bool:
    return (
        pod.labels.get(c.LABEL_INFERENCESERVICE) == prefix
        and pod.labels.get(c.LABEL_COMPONENT) == component
        and pod.labels.get(c.LABEL_MANAGED_BY) == c.MANAGED_BY_VALUE
    )
