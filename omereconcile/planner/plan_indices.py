"""Which Instances the plan drives: Go's ``instancePlanIndices`` on our rows.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/plan.go``, the stored version that carries
``scaleDownRank`` and ``failedGangSurgeFollowers`` (24,030 characters; the index names plan.go's
commit 4dfb96b1, whose other stored text, 17,949 characters, has neither): ``instancePlanIndices``,
``updateSurgeInFlightIndices``, ``updateSurgeSourceIndices``, ``failedGangSurgeSources``,
``gangSurgeTargetMarker``, ``failedGangSurgeFollowers``, ``updateHandoffPromoted``,
``scaleDownRank``, ``keepsPreference``, ``rowOnFailingRevision``, ``lowestUnusedIndex``.

The newest stored ``plan_test.go`` (ome-projects/ome 245145f4) calls ``instancePlanIndices`` with a
fourth argument, the Instances with a pod on a cordoned node, whose code is not in the index. Its
rule is read from that test's own words: "a row with a pod on a cordoned node leaves before every row
without one, whatever its health; within each group the health ranks and the lowest index decide as
before", and a failed gang surge pair counts as cordoned when either half has such a pod. Here that
is the rank plus ``CORDONED_RANK``.

Ours runs no migration (no ``Migrate`` operation), so Go's migration branches
(``migrationInFlightIndices``, ``migrationSourceIndices``, ``migrationHandoffPromoted``) have no
counterpart: every surge claim here is a gang SurgeThenDrain's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

from omereconcile.planner import rows as R
from omereconcile.planner.retry import BACKOFF_STATE, HELD_STATE, RetryBook
from omereconcile.planner.rows import Row

__all__ = [
    "CORDONED_RANK",
    "instance_plan_indices",
    "keeps_preference",
    "lowest_unused_index",
    "row_on_failing_revision",
    "scale_down_extras",
    "scale_down_rank",
]

LOWEST_SCALE_DOWN_RANK = 3  # Go ``lowestScaleDownRank``
CORDONED_RANK = LOWEST_SCALE_DOWN_RANK + 1  # added to the rank of a row with a pod on a cordoned node


def keeps_preference(row: Row) -> bool:
    """Go ``keepsPreference``: a Ready row with every pod its published counts hold in rotation (a
    row with no published pods is read by its phase)."""
    if row.phase != R.READY:
        return False
    return row.pod_count == 0 or row.serving_pod_count >= row.pod_count


def row_on_failing_revision(row: Row, retry: RetryBook) -> bool:
    """Go ``rowOnFailingRevision``: the revision the row's attempt is pinned to, else the one it runs,
    carries a ``Held`` or ``Backoff`` RetryBlock. Go also counts a ``RetryInProgress`` block when the
    row remembers a crash of its promoted set (``types.RemembersCrash``, whose body is not in the
    index): that case is read as sound here."""
    rev = row.target_revision or row.running_revision
    if not rev:
        return False
    block = retry.blocks.get(rev)
    return block is not None and block.state in (HELD_STATE, BACKOFF_STATE)


def scale_down_rank(row: Row, retry: RetryBook) -> int:
    """Go ``scaleDownRank``: 0 a serving row on a sound revision, 1 any other row on a sound revision,
    2 a serving row on a failing revision, 3 the rest."""
    return (0 if keeps_preference(row) else 1) + (2 if row_on_failing_revision(row, retry) else 0)


def lowest_unused_index(used: Collection[int]) -> int:
    """Go ``lowestUnusedIndex``: the smallest non-negative index not in ``used``."""
    i = 0
    while i in used:
        i += 1
    return i


def _gang_surge_marker(row: Row | None) -> bool:
    """Go ``gangSurgeTargetMarker``: the row a gang surge claims its replacement's index with."""
    op = row.operation if row is not None else None
    return (
        op is not None
        and op.type == R.OP_UPDATE
        and op.step in (R.STEP_GANG_SURGE_TARGET, R.STEP_GANG_SURGE_TARGET_CLEANUP)
    )


def _failed_gang_surge_sources(rows: Sequence[Row]) -> set[int]:
    """Go ``failedGangSurgeSources``: a ``Failed`` source that kept its surge operation pins nothing,
    unless its claimed index is held by a row other than a marker (then both stay intact)."""
    by_index = {r.index: r for r in rows}
    out: set[int] = set()
    for r in rows:
        op = r.operation
        if r.phase != R.FAILED or op is None or op.type != R.OP_UPDATE or op.surge_index is None:
            continue
        occupant = by_index.get(op.surge_index)
        if occupant is not None and not _gang_surge_marker(occupant):
            continue
        out.add(r.index)
    return out


def _failed_gang_surge_followers(
    rows: Sequence[Row], unpinned: set[int]
) -> tuple[dict[int, int], dict[int, int]]:
    """Go ``failedGangSurgeFollowers``: each unpinned failed source with the marker it still names
    (``marker_of`` by source, ``source_of`` by marker); a marker two sources name follows the first."""
    marker_of: dict[int, int] = {}
    source_of: dict[int, int] = {}
    present = {r.index for r in rows}
    for r in rows:
        if r.index not in unpinned or r.operation is None or r.operation.surge_index is None:
            continue
        marker = r.operation.surge_index
        if marker not in present or marker in source_of:
            continue
        marker_of[r.index] = marker
        source_of[marker] = r.index
    return marker_of, source_of


def _update_handoff_promoted(source: Row, target: Row, references: int) -> bool:
    """Go ``updateHandoffPromoted``: the source is in ``SurgeDrain`` on the revision its operation
    pins, and the one row at its claimed index is a settled ``Ready`` Instance promoted on exactly that
    revision (incarnation 1, ordinal 0, no operation, no pending target)."""
    op = source.operation
    return (
        references == 1
        and source.phase == R.UPDATING
        and source.running_revision != ""
        and source.target_revision != ""
        and op is not None
        and op.type == R.OP_UPDATE
        and op.step == R.STEP_SURGE_DRAIN
        and op.surge_index == target.index
        and op.target_revision == source.target_revision
        and target.incarnation == 1
        and target.active_ordinal == 0
        and target.phase == R.READY
        and target.running_revision == source.target_revision
        and target.target_revision == ""
        and target.operation is None
    )


def instance_plan_indices(
    rows: Sequence[Row], replicas: int, retry: RetryBook, cordoned: Collection[int] = ()
) -> list[int]:
    """Go ``instancePlanIndices``: the indices the plan drives, sorted.

    Pass 1 pins every live gang surge pair (the source counts toward the replica budget, the
    replacement is the transient +1) unless the source's replacement is proven promoted (then the
    source is retiring and never kept). Pass 2 fills the budget with the other rows in rank order
    (``scale_down_rank``, plus ``CORDONED_RANK`` for a row with a pod on a cordoned node), the lowest
    index first within a rank; a failed gang surge source pins nothing but brings its marker along.
    Pass 3 adds the lowest unused indices until the budget is met."""
    by_index = {r.index: r for r in rows}
    unpinned = _failed_gang_surge_sources(rows)
    marker_of, source_of = _failed_gang_surge_followers(rows, unpinned)
    protected: set[int] = set()
    sources: set[int] = set()
    referenced: set[int] = set()
    references: Counter[int] = Counter()
    for r in rows:
        op = r.operation
        if op is None or op.type != R.OP_UPDATE or op.surge_index is None:
            continue
        references[op.surge_index] += 1
        if r.index in unpinned:
            continue
        protected.add(r.index)
        sources.add(r.index)
        referenced.add(op.surge_index)
    protected |= referenced
    retiring: set[int] = set()
    for r in rows:
        op = r.operation
        if op is None or op.type != R.OP_UPDATE or op.surge_index is None:
            continue
        target = by_index.get(op.surge_index)
        if target is None or not _update_handoff_promoted(r, target, references[op.surge_index]):
            continue
        protected.discard(r.index)
        protected.discard(op.surge_index)
        sources.discard(r.index)
        retiring.add(r.index)

    cordoned_set = set(cordoned)

    def rank(r: Row) -> int:
        pair = {r.index, marker_of.get(r.index, r.index)}
        return scale_down_rank(r, retry) + (CORDONED_RANK if pair & cordoned_set else 0)

    ordered = sorted(by_index)
    indices: list[int] = []
    picked: set[int] = set()
    steady = 0
    for idx in ordered:
        if idx in protected:
            indices.append(idx)
            picked.add(idx)
            steady += idx in sources
    ranks = {idx: rank(by_index[idx]) for idx in ordered}
    for level in range(CORDONED_RANK + LOWEST_SCALE_DOWN_RANK + 1):
        for idx in ordered:
            if steady >= replicas:
                break
            if idx in picked or idx in retiring or idx in source_of or ranks[idx] != level:
                continue
            indices.append(idx)
            picked.add(idx)
            steady += 1
            marker = marker_of.get(idx)
            if marker is not None and marker not in picked:
                indices.append(marker)
                picked.add(marker)
    taken = set(by_index) | picked
    while steady < replicas:
        nxt = lowest_unused_index(taken)
        indices.append(nxt)
        taken.add(nxt)
        steady += 1
    return sorted(indices)


def scale_down_extras(rows: Sequence[Row], plan: Collection[int]) -> list[int]:
    """The rows the scale-down retires: every row outside the plan not already being deleted (Go's
    ``ScaleDownExtras`` over the plan, whose body is not in the index; its migration exclusions have
    no counterpart here)."""
    keep = set(plan)
    return sorted(r.index for r in rows if r.index not in keep and r.phase != R.DELETING)
