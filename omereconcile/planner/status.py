"""The status a pass writes: counts (01 §1.4, §4.3), revisions, the rollout hold, and the conditions
(``Ready`` by the precedence table of 01 §6.1, plus the advisory ones)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import ladder
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rollout import Hold
from omereconcile.planner.rows import Row
from omereconcile.settings import format_go_duration
from omereconcile.world import PodView, format_time

__all__ = ["build_status", "set_condition"]

READY = "Ready"
ADVISORY = ("RolloutStalled", "DrainOverdue", "InstanceReadyTimeoutUnconfigured")


def set_condition(
    conditions: Sequence[Mapping[str, Any]],
    type_: str,
    status: str,
    reason: str,
    message: str,
    generation: int,
    now: datetime,
) -> list[dict[str, Any]]:
    """Upsert one metav1.Condition; lastTransitionTime moves only when the status does."""
    out: list[dict[str, Any]] = []
    found = False
    for cond in conditions:
        if cond.get("type") != type_:
            out.append(dict(cond))
            continue
        found = True
        ltt = cond.get("lastTransitionTime") if cond.get("status") == status else format_time(now)
        out.append(_cond(type_, status, reason, message, generation, ltt or format_time(now)))
    if not found:
        out.append(_cond(type_, status, reason, message, generation, format_time(now)))
    return out


def _cond(type_: str, status: str, reason: str, message: str, generation: int, ltt: str) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "observedGeneration": generation,
        "lastTransitionTime": ltt,
        "reason": reason,
        "message": message,
    }


def find_condition(conditions: Sequence[Mapping[str, Any]], type_: str) -> Mapping[str, Any] | None:
    return next((cd for cd in conditions if cd.get("type") == type_), None)


def _ready(ctx: Ctx, pods: Sequence[PodView]) -> bool:
    return any(ladder(p, ctx.world.endpoints, ctx.min_ready, ctx.now).ready for p in pods)


def build_status(
    ctx: Ctx,
    rows: Sequence[Row],
    by_index: Mapping[int, Sequence[PodView]],
    hold: Hold | None,
    held: frozenset[int],
    retry: RetryBook,
    out: Out,
) -> dict[str, Any]:
    old = ctx.world.replica.status
    target = ctx.target
    live_rows = [r for r in rows if r.phase != R.DELETING]
    ready_idx = {r.index for r in rows if _ready(ctx, by_index.get(r.index, []))}
    ready = sum(1 for r in live_rows if r.index in ready_idx)
    serving = sum(1 for r in rows if r.serving_pod_count >= 1)
    available = sum(1 for r in rows if r.available_pod_count >= 1)
    updated = [r for r in rows if r.running_revision == ctx.spec_revision]
    on_target_ready = sum(1 for r in live_rows if r.running_revision == target and r.index in ready_idx)

    current = old.get("currentRevision") or ""
    if (
        ctx.desired > 0
        and len(live_rows) == ctx.desired
        and all(
            r.phase == R.READY and r.running_revision == target and r.operation is None for r in live_rows
        )
    ):
        current = target  # promoted once every Instance is Ready on the target

    status: dict[str, Any] = {k: v for k, v in old.items() if k not in ("rolloutHold",)}
    status.update(
        {
            "observedGeneration": ctx.world.replica.generation,
            "replicas": len(rows),
            "readyReplicas": ready,
            "servingReplicas": serving,
            "availableReplicas": available,
            "updatedReplicas": len(updated),
            "updatedReadyReplicas": sum(1 for r in updated if r.index in ready_idx),
            "updateRevision": ctx.spec_revision,
            "labelSelector": ctx.label_selector,
            "instanceStatuses": [r.to_dict() for r in rows],
        }
    )
    if current:
        status["currentRevision"] = current
    retry.keep_only(target)
    if retry.blocks:
        status["retryBlocks"] = [b.to_dict() for _, b in sorted(retry.blocks.items())]
    else:
        status.pop("retryBlocks", None)
    if hold is not None:
        prev = old.get("rolloutHold") or {}
        same = prev.get("gate") == hold.gate and prev.get("target") == target
        status["rolloutHold"] = {
            "gate": hold.gate,
            "reason": hold.reason,
            "target": target,
            "since": prev.get("since") if same and prev.get("since") else format_time(ctx.now),
        }

    in_flight = current != target
    progress = f"Rolling out {target} ({on_target_ready}/{ctx.desired} Instances on target)"
    conds: list[dict[str, Any]] = [dict(cd) for cd in old.get("conditions", []) or []]
    conds = set_condition(
        conds, READY, *_ready_row(ctx, rows, held, in_flight, progress, ready, serving), *_gn(ctx)
    )
    conds = set_condition(conds, "RolloutStalled", *_stalled(ctx, rows, in_flight, progress), *_gn(ctx))
    conds = set_condition(conds, "DrainOverdue", *_drain_overdue(ctx, rows), *_gn(ctx))
    conds = _timeout_condition(ctx, conds, out)
    status["conditions"] = conds
    return status


def _gn(ctx: Ctx) -> tuple[int, datetime]:
    return ctx.world.replica.generation, ctx.now


def _floor(ctx: Ctx) -> int:
    if ctx.max_unavailable is None:
        return ctx.desired
    return max(ctx.desired - ctx.max_unavailable, 0)


def _ready_row(
    ctx: Ctx,
    rows: Sequence[Row],
    held: frozenset[int],
    in_flight: bool,
    progress: str,
    ready: int,
    serving: int,
) -> tuple[str, str, str]:
    live_rows = [r for r in rows if r.phase != R.DELETING]
    if any(r.phase == R.FAILED for r in rows):
        return "False", "InstanceFailed", "At least one Instance has Phase=Failed"
    if in_flight and ctx.partition > 0 and held:
        movers = [r for r in live_rows if r.index not in held]
        if all(
            r.phase == R.READY and r.running_revision == ctx.target and r.operation is None for r in movers
        ):
            p = ctx.partition
            return (
                "True",
                "Staged",
                f"Staged at partition {p}: {ctx.desired - p}/{ctx.desired} Instances on {ctx.target}, "
                f"{p} held on the prior revision",
            )
    if in_flight and ctx.desired > 0:
        return "Unknown", "RolloutInProgress", progress
    if ctx.desired == 0:
        return "False", "NoReplicas", "InferenceReplica has no desired Instances"
    if ready >= ctx.desired and len(live_rows) == ctx.desired:
        return "True", "AllInstancesReady", f"{ready}/{ctx.desired} Instances Ready"
    floor = _floor(ctx)
    if serving >= floor:
        return "True", "MinimumAvailable", f"{serving}/{ctx.desired} Instances serving (min {floor})"
    return (
        "False",
        "ReplicaCountMismatch",
        f"{serving}/{ctx.desired} Instances serving, need {floor} (no rollout in flight)",
    )


def _stalled(ctx: Ctx, rows: Sequence[Row], in_flight: bool, progress: str) -> tuple[str, str, str]:
    if not in_flight:
        return "False", "Progressing", "no rollout in flight"
    failing = [r for r in rows if r.last_failure and r.running_revision != ctx.target]
    if not failing:
        return "False", "Progressing", progress
    reasons = Counter(str((r.last_failure or {}).get("reason") or "") for r in failing)
    reasons.pop("", None)
    detail = ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items())) or "terminal failure"
    return (
        "True",
        "InstancesFailing",
        f"{len(failing)}/{ctx.desired} Instance(s) failing rollout to {ctx.target} ({detail})",
    )


def _drain_overdue(ctx: Ctx, rows: Sequence[Row]) -> tuple[str, str, str]:
    late = [
        r.index
        for r in rows
        if r.phase == R.DELETING and r.operation and r.operation.deadline and ctx.now > r.operation.deadline
    ]
    if late:
        return "True", "DrainsOverdue", f"Instance(s) {', '.join(map(str, late))} past their drain deadline"
    return "False", "DrainsWithinDeadline", "no drain is past its deadline"


def _timeout_condition(ctx: Ctx, conds: list[dict[str, Any]], out: Out) -> list[dict[str, Any]]:
    type_ = "InstanceReadyTimeoutUnconfigured"
    if ctx.ready_timeout is None:
        prev = find_condition(conds, type_)
        msg = (
            "instanceReadyTimeout is set neither on the replica (spec.lifecycle.instanceReadyTimeout) nor "
            "in the operator's lifecycle config; operations have no deadline"
        )
        if prev is None or prev.get("status") != "True":
            out.event("Warning", type_, msg)  # once, with the condition
        return set_condition(conds, type_, "True", type_, msg, *_gn(ctx))
    return set_condition(
        conds,
        type_,
        "False",
        "InstanceReadyTimeoutConfigured",
        f"instanceReadyTimeout is {format_go_duration(ctx.ready_timeout)}",
        *_gn(ctx),
    )
