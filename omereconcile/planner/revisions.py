"""ControllerRevisions: create or reuse the spec's revision, handle collisions, pick the roll target,
prune history (01 §9.4–§9.5).

The object itself is ``omerender.revision.controller_revision``'s; numbering and pruning work here on
the planner's ``RevisionView``s (which carry the controller owner, so foreign revisions are never pruned).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omereconcile.actions import CreateRevision, DeleteRevision
from omereconcile.world import DesiredRevision, RevisionView, World
from omerender.revision import controller_revision as revision_object
from omerender.stamps import owner_reference_of, selector_of

__all__ = [
    "RevisionDecision",
    "controller_revision",
    "next_revision_number",
    "resolve_revision",
    "revisions_to_prune",
    "roll_target",
]


def next_revision_number(existing: Iterable[RevisionView]) -> int:
    return max((r.revision for r in existing), default=0) + 1


def owner_reference(world: World) -> dict[str, Any]:
    return owner_reference_of(world.replica.name, world.replica.uid)


def selector_labels(world: World) -> dict[str, str]:
    return selector_of(world.replica.prefix, world.replica.component)


def controller_revision(world: World, desired: DesiredRevision, number: int) -> dict[str, Any]:
    """The ControllerRevision for ``desired``, built by omerender exactly as a preview prints it."""
    return revision_object(
        name=desired.name,
        namespace=world.replica.namespace,
        prefix=world.replica.prefix,
        component=world.replica.component,
        owner=owner_reference(world),
        payload=desired.payload,
        revision=number,
        pairing_protocol=desired.pairing_protocol,
    )


@dataclass(frozen=True, slots=True)
class RevisionDecision:
    """Either proceed (``create`` may be None when the revision exists and is ours), or stop the pass
    because the name collided (``collision_count`` is the bumped count to persist) or the render was
    made with a stale collision count."""

    create: CreateRevision | None = None
    collision_count: int | None = None
    stale: bool = False


def resolve_revision(world: World, desired: DesiredRevision) -> RevisionDecision:
    current = int(world.replica.status.get("collisionCount") or 0)
    if desired.collision_count != current:
        return RevisionDecision(stale=True)  # rendered before the last bump: re-render and come back
    existing = next((r for r in world.revisions if r.name == desired.name), None)
    if existing is None:
        number = next_revision_number(world.revisions)
        obj = controller_revision(world, desired, number)
        return RevisionDecision(
            create=CreateRevision(desired.name, obj, f"the spec renders revision {desired.name} (#{number})")
        )
    if existing.data == desired.payload and existing.owner_uid == world.replica.uid:
        return RevisionDecision()  # reuse: GET-and-compare, never a duplicate (03 §7 lesson 6)
    return RevisionDecision(collision_count=current + 1)


def roll_target(world: World, spec_revision: str) -> tuple[str, str | None]:
    """The roll target and, when ``rollbackToRevision`` names a revision another object controls,
    that name (the caller warns).

    Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/reconciler.go`` ``Reconcile``,
    the "Canary rollback" block (read at 4dfb96b1, the newest stored version; 55ce6311 and
    sgl-project 26b21f53 hold the same block). A name that resolves to no ControllerRevision
    ("stable CR GC'd — nothing to roll back to; proceed normally") rolls to the spec with no event
    and no condition: so does ours. Go reads the named revision without checking its controller;
    we do not roll a replica onto a revision another object controls (its payload is not ours to
    trust): that case rolls to the spec and is the one we warn about (a kept difference; Go has no
    event for it to copy).
    """
    pacing = world.replica.model.spec.pacing
    name = pacing.rollback_to_revision if pacing is not None else None
    if not name:
        return spec_revision, None
    rev = next((r for r in world.revisions if r.name == name), None)
    if rev is None:
        return spec_revision, None
    if rev.owner_uid != world.replica.uid:
        return spec_revision, name
    return name, None


def revisions_to_prune(
    revisions: Sequence[RevisionView], live: Iterable[str], limit: int | None, owner_uid: str
) -> list[str]:
    """Non-live revisions we control beyond the ``limit`` most recent; ``None`` keeps everything.
    Ties on the number break by creation time, then name, so the choice is deterministic."""
    if limit is None:
        return []
    live_set = set(live)
    mine = [r for r in revisions if r.owner_uid == owner_uid and r.name not in live_set]
    mine.sort(key=lambda r: (r.revision, r.created.timestamp() if r.created else 0.0, r.name), reverse=True)
    return sorted(r.name for r in mine[limit:])


def prune_actions(world: World, live: Iterable[str]) -> list[DeleteRevision]:
    spec_limit = world.replica.model.spec.revision_history_limit
    limit = spec_limit if spec_limit is not None else world.settings.revision_history_limit
    return [
        DeleteRevision(name, f"beyond revisionHistoryLimit {limit} and not live")
        for name in revisions_to_prune(world.revisions, live, limit, world.replica.uid)
    ]


def live_revisions(
    status: Mapping[str, Any], rows: Iterable[Mapping[str, Any]], extra: Iterable[str]
) -> set[str]:
    live = {status.get("currentRevision") or "", status.get("updateRevision") or ""}
    for row in rows:
        live.add(row.get("runningRevision") or "")
        live.add(row.get("targetRevision") or "")
        op = row.get("operation") or {}
        live.add(op.get("targetRevision") or "")
    live.update(extra)
    live.discard("")
    return live
