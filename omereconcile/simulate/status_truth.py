"""The status-truth invariant: a status never claims more than the rows and pods written beside it.

Checked by the sim driver on every status write of every scenario, against the pods of the pass that
computed the write (the status describes its own observation; later writes of the same pass move pods
on). Each rule is OME's own, restated here independently of the planner code that produces the status:

- **Rows back the counters** (Go ``workload/observation.go`` ``TakeInlineV1Publication`` with
  ``workload/status/aggregate.go`` ``InstanceMeetsThreshold``/``DesiredFor``): ``servingReplicas`` and
  ``availableReplicas`` are at most the rows whose own published ``servingPodCount`` /
  ``availablePodCount`` meet the threshold; ``readyReplicas`` at most the rows whose pods of the pass
  (ContainersReady True) meet it — a row does not persist ``readyPodCount`` (Go
  ``irstatus.ClearPodDerivedObservations``), so with the pods unknown only the row count bounds it;
  ``replicas`` is the row count; ``updatedReadyReplicas`` is at most ``readyReplicas``.
- **A demoted row backs nothing**: a ``Pending`` row is an Instance no live pod backs (the truth pass,
  ``planUnbackedDemotions``: a Terminating pod still counts as live, so the demotion waits until the loss
  is total), so it never meets the ready or serving threshold in the status that records it.
- **A settled Ready row has pods** (``DemotableReady``: "a row never claims Ready beside a zero pod
  count").
- **Pods back the rows** (``CountersForInstance``): each row's ``servingPodCount`` is at most its pods
  PodReady, gated True and not terminating, ``podCount`` the pods of its index; no row carries
  ``readyPodCount``, ``scheduledPodCount`` or ``nodesOccupied`` (never persisted).
- **The Ready condition repeats the counters** (``inferencereplica/status.go``
  ``computeReadyCondition``): ``AllInstancesReady`` only with ``readyReplicas == replicas`` and the
  message ``<ready>/<replicas> Instances Ready``; ``MinimumAvailable`` names ``servingReplicas``;
  ``Staged`` only with every row ``Ready``; ``RolloutInProgress`` only while ``currentRevision`` differs
  from ``updateRevision``; ``True`` for no other reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omereconcile.planner.counters import TRANSIENT_ROW_FIELDS, meets_threshold
from omereconcile.world import PodView

__all__ = ["status_claims"]

_TRUE_REASONS = ("AllInstancesReady", "MinimumAvailable", "Staged")


def _serving(p: PodView) -> bool:
    ready = p.condition("Ready")
    return not p.terminating and ready is not None and ready.status == "True" and p.gate == "True"


def status_claims(
    status: Mapping[str, Any],
    pods_by_index: Mapping[int, Sequence[PodView]] | None,
    desired_by_index: Mapping[int, int] | None,
) -> list[str]:
    """What the written ``status`` claims beyond its rows and the pods of its pass (empty: nothing).
    ``pods_by_index`` None: the pods are not known (a status seen through a watch), only the status's
    own claims are read."""
    rows: list[Mapping[str, Any]] = list(status.get("instanceStatuses") or [])
    bad: list[str] = []
    support = {"readyReplicas": 0, "servingReplicas": 0, "availableReplicas": 0}
    for r in rows:
        idx = int(r["index"])
        count = int(r.get("podCount") or 0)
        desired = count if desired_by_index is None else desired_by_index.get(idx, count)
        pods = None if pods_by_index is None else list(pods_by_index.get(idx, ()))
        counts: dict[str, int | None] = {
            "readyReplicas": None if pods is None else sum(1 for p in pods if p.containers_ready),
            "servingReplicas": int(r.get("servingPodCount") or 0),
            "availableReplicas": int(r.get("availablePodCount") or 0),
        }
        for field, n in counts.items():
            meets = True if n is None else meets_threshold(count, n, desired)
            if r.get("phase") == "Pending" and field != "availableReplicas":
                if n is not None and meets:
                    what = "ready pods" if field == "readyReplicas" else "servingPodCount"
                    bad.append(f"row {idx} is Pending yet its {what} count it")
                continue
            support[field] += meets
        if r.get("phase") == "Ready" and not r.get("operation") and count == 0:
            bad.append(f"row {idx} claims Ready beside a zero pod count")
        persisted = [k for k in TRANSIENT_ROW_FIELDS if k in r]
        if persisted:
            bad.append(f"row {idx} persists {', '.join(persisted)}, which OME never writes")
        if pods is None:
            continue
        if count > len(pods):
            bad.append(f"row {idx} counts {count} pods, its pass saw {len(pods)}")
        if int(r.get("servingPodCount") or 0) > sum(1 for p in pods if _serving(p)):
            bad.append(f"row {idx} servingPodCount {r.get('servingPodCount')} beyond its serving pods")
    if "replicas" in status and int(status["replicas"]) != len(rows):
        bad.append(f"replicas {status['replicas']} beside {len(rows)} rows")
    for field, backed in support.items():
        claimed = int(status.get(field) or 0)
        if claimed > backed:
            bad.append(f"{field} {claimed} beyond the {backed} rows that back it")
    ready_n = int(status.get("readyReplicas") or 0)
    if int(status.get("updatedReadyReplicas") or 0) > ready_n:
        bad.append("updatedReadyReplicas beyond readyReplicas")
    cond = next((cd for cd in status.get("conditions") or [] if cd.get("type") == "Ready"), None)
    if cond is not None:
        bad += _ready_claims(cond, status, rows)
    return bad


def _ready_claims(
    cond: Mapping[str, Any], status: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> list[str]:
    reason, message = cond.get("reason"), str(cond.get("message") or "")
    n, ready_n = len(rows), int(status.get("readyReplicas") or 0)
    serving_n = int(status.get("servingReplicas") or 0)
    bad: list[str] = []
    if cond.get("status") == "True" and reason not in _TRUE_REASONS:
        bad.append(f"Ready=True with reason {reason}")
    if reason == "AllInstancesReady" and (ready_n != n or message != f"{ready_n}/{n} Instances Ready"):
        bad.append(f"AllInstancesReady {message!r} beside readyReplicas {ready_n} of {n} rows")
    if reason == "MinimumAvailable" and not message.startswith(f"{serving_n}/{n} Instances serving"):
        bad.append(f"MinimumAvailable {message!r} beside servingReplicas {serving_n} of {n} rows")
    if reason == "Staged" and any(r.get("phase") != "Ready" for r in rows):
        bad.append("Staged beside a row that is not Ready")
    if reason == "RolloutInProgress" and status.get("currentRevision") == status.get("updateRevision"):
        bad.append("RolloutInProgress with currentRevision equal to updateRevision")
    return bad
