"""Typed views of ``status.instanceStatuses`` rows and ``status.retryBlocks`` (the planner's journal).

The status is the only memory a restarted reconciler has, so everything a pass decided and the next
pass must know is one of these fields. Only fields of OME's CRD are used (unknown status fields
would be pruned by a structural schema).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from omereconcile.world import format_time, parse_time

__all__ = [
    "STANDING_REASONS",
    "Operation",
    "RetryBlock",
    "Row",
    "announced",
    "announcement_marker",
    "mark_announced",
    "operation_id",
    "replace",
]

# Phases (01 §4.2)
PENDING = "Pending"
CREATING = "Creating"
READY = "Ready"
UPDATING = "Updating"
RESTARTING = "Restarting"
FAILED = "Failed"
DELETING = "Deleting"

# Operation types and steps (01 §4.4). Create uses Recycle (delete a failed Instance's pods) before
# CreatePods; RecreatePod updates stay at Drain until promoted (Go recreateUpdate); SurgeThenDrain uses
# Surge then SurgeDrain.
OP_CREATE = "Create"
OP_UPDATE = "Update"
OP_DELETE = "Delete"
STEP_RECYCLE = "Recycle"
STEP_CREATE_PODS = "CreatePods"
STEP_DRAIN = "Drain"
STEP_SURGE = "Surge"
STEP_SURGE_DRAIN = "SurgeDrain"
# Multi-pod (gang) Instances: a Restart recreates the whole gang (Drain → CreatePods); a gang surge
# marks its replacement Instance's row GangSurgeTarget, and GangSurgeTargetCleanup while a failed or
# superseded replacement is taken down (01 §4.4).
OP_RESTART = "Restart"
STEP_GANG_SURGE_TARGET = "GangSurgeTarget"
STEP_GANG_SURGE_TARGET_CLEANUP = "GangSurgeTargetCleanup"


def _time(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


def operation_id(type_: str, index: int, now: datetime) -> str:
    """OME's operation id, ``<lower-case type>-<index>-<unix seconds>`` (``create-0-1700000000``).

    An opaque label: the planner and the executor never parse it, and a stored row keeps whatever id it
    was journaled with (an earlier release wrote ``<index>-<type>-<unix>``).
    """
    return f"{type_.lower()}-{index}-{int(now.timestamp())}"


@dataclass(frozen=True, slots=True)
class Operation:
    id: str
    type: str
    step: str
    target_revision: str
    started_at: datetime
    deadline: datetime | None = None
    strategy: str | None = None
    waiting: str | None = None
    reason: str | None = None
    retry_count: int = 0
    # OME InstanceOperation.CapacityRefusedAt: the executor's record of a quota refusal (planner/quota.py).
    capacity_refused_at: datetime | None = None
    surge_index: int | None = None  # a gang surge's replacement Instance (on the source's operation)
    # OME InstanceOperation.LastProgressAt: when the operation last advanced (its start, then each
    # terminal-pod recycle); the recycle pacing is anchored on it.
    last_progress_at: datetime | None = None
    # OME InstanceOperation.FromNode, HintTargetNodes, RequestUUID ("set only when Type=Migrate"): the
    # planner starts no Migrate, but a row journaled by another writer keeps them on every rewrite
    # (status_size_test.go TestInferenceReplicaStatusSizeCompactionDropsExactlyThreeFields).
    from_node: str | None = None
    hint_target_nodes: tuple[str, ...] = ()
    request_uuid: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "type": self.type,
            "step": self.step,
            "targetRevision": self.target_revision,
            "startedAt": format_time(self.started_at),
        }
        if self.last_progress_at is not None:
            out["lastProgressAt"] = format_time(self.last_progress_at)
        if self.deadline is not None:
            out["deadline"] = format_time(self.deadline)
        if self.strategy:
            out["strategy"] = self.strategy
        if self.waiting:
            out["waiting"] = self.waiting
        if self.reason:
            out["reason"] = self.reason
        if self.retry_count:
            out["retryCount"] = self.retry_count
        if self.capacity_refused_at is not None:
            out["capacityRefusedAt"] = format_time(self.capacity_refused_at)
        if self.surge_index is not None:
            out["surgeIndex"] = self.surge_index
        if self.from_node:
            out["fromNode"] = self.from_node
        if self.hint_target_nodes:
            out["hintTargetNodes"] = list(self.hint_target_nodes)
        if self.request_uuid:
            out["requestUUID"] = self.request_uuid
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Operation:
        return cls(
            id=str(d.get("id", "")),
            type=str(d.get("type", "")),
            step=str(d.get("step", "")),
            target_revision=str(d.get("targetRevision", "")),
            started_at=parse_time(d.get("startedAt")) or datetime.fromtimestamp(0).astimezone(),
            deadline=parse_time(d.get("deadline")),
            strategy=d.get("strategy"),
            waiting=d.get("waiting"),
            reason=d.get("reason"),
            retry_count=int(d.get("retryCount", 0) or 0),
            capacity_refused_at=parse_time(d.get("capacityRefusedAt")),
            surge_index=int(d["surgeIndex"]) if d.get("surgeIndex") is not None else None,
            last_progress_at=parse_time(d.get("lastProgressAt")),
            from_node=d.get("fromNode") or None,
            hint_target_nodes=tuple(str(n) for n in d.get("hintTargetNodes") or ()),
            request_uuid=d.get("requestUUID") or None,
        )


@dataclass(frozen=True, slots=True)
class Row:
    """One Instance. ``active_ordinal`` is the slot of its serving pod (single-pod SurgeThenDrain)."""

    index: int
    incarnation: int = 1
    phase: str = CREATING
    running_revision: str = ""
    target_revision: str = ""
    active_ordinal: int = 0
    pod_count: int = 0
    serving_pod_count: int = 0
    available_pod_count: int = 0
    ready_since: datetime | None = None
    operation: Operation | None = None
    last_failure: Mapping[str, Any] | None = None
    # OME InstanceStatus.Announced (``announced,omitempty``, a set): the once-only messages already
    # delivered, one ``<reason>@<episode>`` marker each (:func:`mark_announced`).
    announced: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)  # fields we do not own, kept verbatim

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.extra)
        out.update(
            {
                "index": self.index,
                "incarnation": self.incarnation,
                "phase": self.phase,
                "podCount": self.pod_count,
                "servingPodCount": self.serving_pod_count,
                "availablePodCount": self.available_pod_count,
            }
        )
        if self.active_ordinal:
            # Go ``activeOrdinal,omitempty``: slot 0 is never written (18 bytes a row; 90 KB of a
            # 5,000-Instance status, status_size_test.go's steady-state budget).
            out["activeOrdinal"] = self.active_ordinal
        if self.running_revision:
            out["runningRevision"] = self.running_revision
        if self.target_revision:
            out["targetRevision"] = self.target_revision
        if self.ready_since is not None:
            out["readySince"] = format_time(self.ready_since)
        if self.operation is not None:
            out["operation"] = self.operation.to_dict()
        if self.last_failure is not None:
            out["lastFailure"] = dict(self.last_failure)
        if self.announced:
            out["announced"] = list(self.announced)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Row:
        known = {
            "index",
            "incarnation",
            "phase",
            "runningRevision",
            "targetRevision",
            "activeOrdinal",
            "podCount",
            "servingPodCount",
            "availablePodCount",
            "readySince",
            "operation",
            "lastFailure",
            "announced",
        }
        op = d.get("operation")
        return cls(
            index=int(d["index"]),
            incarnation=int(d.get("incarnation", 1) or 1),
            phase=str(d.get("phase", CREATING)),
            running_revision=str(d.get("runningRevision", "") or ""),
            target_revision=str(d.get("targetRevision", "") or ""),
            active_ordinal=int(d.get("activeOrdinal", 0) or 0),
            pod_count=int(d.get("podCount", 0) or 0),
            serving_pod_count=int(d.get("servingPodCount", 0) or 0),
            available_pod_count=int(d.get("availablePodCount", 0) or 0),
            ready_since=parse_time(d.get("readySince")),
            operation=Operation.from_dict(op) if isinstance(op, Mapping) and op else None,
            last_failure=d.get("lastFailure"),
            announced=tuple(str(m) for m in d.get("announced") or () if isinstance(m, str)),
            extra={k: v for k, v in d.items() if k not in known},
        )


# The row's ``announced`` record. Go: ome-projects/ome
# ``pkg/controller/v1beta1/workload/status/announced.go`` @ 4dfb96b1 (read whole): a once-only message
# (a Warning an operator needs once per episode, not once per pass) is keyed on the row it is about, so
# a restarted reconciler does not say it again. Its episode is named by its scope: a standing message
# (about the Instance as built) keys on the incarnation, ``#<incarnation>``; every other reason is
# attempt-scoped and keys on the operation in flight, ``<operation id>``, else on the incarnation.
# Go ``scopes``: the standing reasons; every other reason is attempt-scoped.
STANDING_REASONS = frozenset({"MaybeNoGangScheduler", "GangSplitRisk"})


def _incarnation_episode(row: Row) -> str:
    """Go ``incarnationEpisode``."""
    return f"#{row.incarnation}"


def _attempt_episode(row: Row) -> str:
    """Go ``attemptEpisode``: the operation in flight, else the incarnation."""
    if row.operation is not None and row.operation.id:
        return row.operation.id
    return _incarnation_episode(row)


def announcement_marker(reason: str, row: Row) -> str:
    """Go ``announcementMarker``: ``<reason>@<episode>``, the episode by the reason's scope."""
    episode = _incarnation_episode(row) if reason in STANDING_REASONS else _attempt_episode(row)
    return f"{reason}@{episode}"


def announced(row: Row, reason: str) -> bool:
    """Go ``Announced``: whether ``reason`` was already delivered in the row's current episode."""
    return announcement_marker(reason, row) in row.announced


def mark_announced(row: Row, reason: str) -> Row | None:
    """Go ``markAnnounced``: the row recording ``reason`` for its current episode, the markers of every
    ended episode dropped in the same write (a marker lives while its episode is the row's current
    attempt or its current incarnation; one with no ``@`` belongs to no episode and is dropped); None
    when it was already delivered, and the caller must not say it again."""
    marker = announcement_marker(reason, row)
    if marker in row.announced:
        return None
    live = {_attempt_episode(row), _incarnation_episode(row)}
    kept = tuple(m for m in row.announced if "@" in m and m.rsplit("@", 1)[1] in live)
    return replace(row, announced=(*kept, marker))


@dataclass(frozen=True, slots=True)
class RetryBlock:
    """Retry authority for one target revision (01 §1.4 ``RetryBlock``, §4.7)."""

    target_revision: str
    state: str  # Backoff | Held | RetryInProgress
    attempts_started: int
    first_failure_at: datetime
    last_failure_at: datetime
    next_retry_at: datetime | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "targetRevision": self.target_revision,
            "state": self.state,
            "attemptsStarted": self.attempts_started,
            "firstFailureAt": format_time(self.first_failure_at),
            "lastFailureAt": format_time(self.last_failure_at),
            "reason": self.reason,
        }
        if self.next_retry_at is not None:
            out["nextRetryAt"] = format_time(self.next_retry_at)
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RetryBlock:
        first = parse_time(d.get("firstFailureAt")) or datetime.fromtimestamp(0).astimezone()
        return cls(
            target_revision=str(d.get("targetRevision", "")),
            state=str(d.get("state", "Backoff")),
            attempts_started=int(d.get("attemptsStarted", 0) or 0),
            first_failure_at=first,
            last_failure_at=parse_time(d.get("lastFailureAt")) or first,
            next_retry_at=parse_time(d.get("nextRetryAt")),
            reason=str(d.get("reason", "")),
        )


def load_rows(status: Mapping[str, Any]) -> list[Row]:
    return sorted(
        (Row.from_dict(r) for r in status.get("instanceStatuses", []) or [] if "index" in r),
        key=lambda r: r.index,
    )


def load_retry_blocks(status: Mapping[str, Any]) -> dict[str, RetryBlock]:
    blocks = (RetryBlock.from_dict(b) for b in status.get("retryBlocks", []) or [])
    return {b.target_revision: b for b in blocks}


def opt_time(value: datetime | None) -> str | None:
    return _time(value)


def operation_row(
    status: Mapping[str, Any], index: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:
    """A deep copy of ``status`` with its row at ``index`` and that row's operation, for the executor's
    records written on an operation in flight (a quota refusal, an admission wait, an API rejection);
    None when there is no such row, or it has no phase or no operation."""
    new = copy.deepcopy(dict(status))
    for row in new.get("instanceStatuses") or []:
        if row.get("index") != index:
            continue
        op = row.get("operation")
        if not row.get("phase") or not isinstance(op, dict):
            return None
        return new, row, op
    return None
