"""The counters a pass publishes, computed as OME's Go status aggregator computes them.

Per Instance (Go ``workload/status/aggregate.go`` ``CountersForInstance``), over every pod of the
Instance's bucket, terminating ones included:

- ``podCount``: the pods;
- ``readyPodCount``: ContainersReady True (``CountReadyPods``) — counted for ``readyReplicas``, never
  persisted (below);
- ``servingPodCount``: PodReady True, the ``ome.io/serving`` gate True, not terminating
  (``CountServingPods`` / ``podreadiness.ReadyAndServing``);
- ``availablePodCount``: listed by an EndpointSlice as ready and not terminating
  (``AvailablePodSet`` / ``drain.EndpointAvailable``) and, under a positive ``minReadySeconds``, PodReady
  for that long (``CountAvailablePods`` / ``podreadiness.IsPodAvailable``);
- ``scheduledPodCount``: pods with a node — counted, never persisted (below); ``admitted``: at least one
  pod and none held by a scheduling gate (``instancePodsAdmitted``).

What a row persists (Go ``irstatus.ClearPodDerivedObservations`` and ``inferencereplica/status_writer.go``
``updateInferenceReplicaStatus``, pinned by ``status_test.go`` ``assertCompactInferenceReplicaWrite`` and
``TestAggregateAndWriteStatusPersistsCompactRowsAndMirrorsCurrentObservations`` @ 58a57f25): every status
write omits ``readyPodCount``, ``scheduledPodCount`` and ``nodesOccupied`` ("workload decisions derive
them from current Pods"), and a row still carrying them from an older writer loses them on the next
write (:data:`TRANSIENT_ROW_FIELDS`).

Per replica (Go ``workload/observation.go`` ``TakeInlineV1Publication``): an Instance counts as ready,
serving or available once at least its desired pods are (``InstanceMeetsThreshold``, so a surge pod
never dips it); ``updatedReplicas`` counts rows running the update revision with no Update operation
pinned to another one (``rowOnTargetRevision``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.rows import Row
from omereconcile.world import Endpoints, PodView

__all__ = [
    "TRANSIENT_ROW_FIELDS",
    "ComponentCounters",
    "InstanceCounters",
    "component_counters",
    "desired_for",
    "instance_counters",
    "meets_threshold",
    "on_update_revision",
]

# The pod-derived row fields OME's newest Go never writes (``irstatus.ClearPodDerivedObservations``).
TRANSIENT_ROW_FIELDS = ("readyPodCount", "scheduledPodCount", "nodesOccupied")


@dataclass(frozen=True, slots=True)
class InstanceCounters:
    pod_count: int = 0
    ready_pod_count: int = 0
    serving_pod_count: int = 0
    available_pod_count: int = 0
    scheduled_pod_count: int = 0
    admitted: bool = False
    next_available_at: datetime | None = None  # when a pending pod's minReadySeconds window closes

    def overlay(self, row: Mapping[str, object]) -> dict[str, object]:
        """The row as Go publishes it: the persisted pod-derived fields replaced by this observation,
        the transient ones (:data:`TRANSIENT_ROW_FIELDS`) dropped."""
        out = {k: v for k, v in row.items() if k not in TRANSIENT_ROW_FIELDS}
        out.update(
            {
                "podCount": self.pod_count,
                "servingPodCount": self.serving_pod_count,
                "availablePodCount": self.available_pod_count,
                "admitted": self.admitted,
            }
        )
        return out


def _available(
    pod: PodView, endpoints: Endpoints, min_ready: timedelta, now: datetime
) -> tuple[bool, datetime | None]:
    """Go ``CountAvailablePods`` for one pod: (available, when it becomes so if pending)."""
    ep = endpoints.by_pod.get(pod.name)
    if ep is None or not ep.available:
        return False, None
    if min_ready <= timedelta(0):
        return True, None
    cond = pod.condition("Ready")
    if cond is None or cond.status != "True" or cond.last_transition_time is None:
        return False, None  # not Ready, or Ready of unprovable age: no later instant makes it Available
    at = cond.last_transition_time + min_ready
    if now >= at:
        return True, None
    return False, at


def instance_counters(
    pods: Sequence[PodView], endpoints: Endpoints, min_ready: timedelta, now: datetime
) -> InstanceCounters:
    """Go ``CountersForInstance`` over one Instance's pods."""
    available = 0
    pending: list[datetime] = []
    for p in pods:
        ok, at = _available(p, endpoints, min_ready, now)
        available += ok
        if at is not None:
            pending.append(at)
    return InstanceCounters(
        pod_count=len(pods),
        ready_pod_count=sum(1 for p in pods if p.containers_ready_condition),
        serving_pod_count=sum(
            1 for p in pods if not p.terminating and p.pod_ready_condition and p.gate == "True"
        ),
        available_pod_count=available,
        scheduled_pod_count=sum(1 for p in pods if p.node_name),
        admitted=bool(pods) and not any(p.admission_gated for p in pods),
        next_available_at=min(pending) if pending else None,
    )


def desired_for(desired_by_index: Mapping[int, int] | None, index: int, observed: int) -> int:
    """Go ``DesiredFor``: the plan's pod count for a planned index, else the observed count."""
    if desired_by_index is None:
        return observed
    return desired_by_index.get(index, observed)


def meets_threshold(pod_count: int, satisfying: int, desired: int) -> bool:
    """Go ``InstanceMeetsThreshold``: at least the desired pods satisfy the predicate (surge-tolerant)."""
    if pod_count == 0:
        return False
    if desired <= 0:
        return satisfying == pod_count
    return satisfying >= desired


def on_update_revision(row: Row, update: str) -> bool:
    """Go ``rowOnTargetRevision``: runs ``update`` and owes no roll to another revision."""
    if row.running_revision != update:
        return False
    op = row.operation
    if op is None or op.type != R.OP_UPDATE or not op.target_revision:
        return True
    return op.target_revision == update


@dataclass(frozen=True, slots=True)
class ComponentCounters:
    replicas: int
    ready: int
    serving: int
    available: int
    updated: int
    updated_ready: int
    next_available_at: datetime | None


def component_counters(
    rows: Sequence[Row],
    counters: Mapping[int, InstanceCounters],
    desired_by_index: Mapping[int, int] | None,
    update: str,
) -> ComponentCounters:
    """Go ``TakeInlineV1Publication``: one pass over the rows, Deleting ones included."""
    ready = serving = available = updated = updated_ready = 0
    pending: list[datetime] = []
    for r in rows:
        c = counters.get(r.index, InstanceCounters())
        want = desired_for(desired_by_index, r.index, c.pod_count)
        is_ready = meets_threshold(c.pod_count, c.ready_pod_count, want)
        ready += is_ready
        serving += meets_threshold(c.pod_count, c.serving_pod_count, want)
        available += meets_threshold(c.pod_count, c.available_pod_count, want)
        if c.next_available_at is not None:
            pending.append(c.next_available_at)
        if update and on_update_revision(r, update):
            updated += 1
            updated_ready += is_ready
    return ComponentCounters(
        replicas=len(rows),
        ready=ready,
        serving=serving,
        available=available,
        updated=updated,
        updated_ready=updated_ready,
        next_available_at=min(pending) if pending else None,
    )
