"""The retry ladder's rollout hold as OME's newest Go words it (``ladderHold``).

Read whole from ome-projects/ome (commit not named by the index): ``workload/reconcile.go`` (the
22,705-character version) ``ladderHold``, ``standingHold``, ``rolledNotServingClause``,
``ladderRebuildsClause`` and ``instanceNoun``; ``workload/plan_decision.go`` (49,435 characters)
``planUpdateSelection`` and ``ladderRebuilds``, and the ``UpdateSelection.LadderHold`` /
``Decision.LadderHold`` comments; ``workload/ops/restart.go`` (the newest of 5, 78,474 characters)
``LadderAttemptRebuilds`` and ``rebuildRevision``; ``workload/ops/update.go`` (50,518 characters)
``RetryBlockDenyingFreshStart``.

The hold is computed once per pass from the rows as the pass found them: the target's RetryBlock
when it denies a fresh start (``Held``; ``RetryInProgress`` while an Update at the target is in
flight; ``Backoff`` not yet due), else, while Instances already on the target crashed after
promotion, the block whose attempt is their rebuild. Its words are the status layer's reading of the
block (``update to <rev> <held|in backoff|retrying one attempt at a time> after <n> failed
attempt(s): <reason>``), then the Instances on the target that do not serve it, then the Instances
whose crashed set the ladder's attempt rebuilds (``; the attempt rebuilds Instance <i>``).

``ops.RetryBlockOfCrashedAttempt`` is not in the index: it is reproduced as ``ladderHold``'s comment
states it ("the block counts their crash and its attempt is their rebuild, so while that attempt is
due or under way … the ladder stays the hold the roll stands behind"): the target's block in a state
that does not deny a fresh start but has an attempt due or under way, a due ``Backoff`` or
``RetryInProgress``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from omereconcile.planner import rows as R
from omereconcile.planner.admission import rolled_not_serving_clause
from omereconcile.planner.context import Ctx
from omereconcile.planner.out import Out
from omereconcile.planner.restart import crash_rebuild_warranted, read_crash_ladder
from omereconcile.planner.retry import BACKOFF_STATE, HELD_STATE, IN_PROGRESS_STATE, RetryBook
from omereconcile.planner.rows import RetryBlock, Row
from omereconcile.world import PodView

__all__ = [
    "LadderHold",
    "ladder_attempt_rebuilds",
    "ladder_hold",
    "ladder_rebuilds",
    "ladder_rebuilds_clause",
    "rebuild_revision",
]


@dataclass(frozen=True, slots=True)
class LadderHold:
    """Go's ``types.RolloutHold`` as ``ladderHold`` builds it: gate ``Held`` or ``RetryBlock``."""

    gate: str
    reason: str


def rebuild_revision(row: Row) -> str:
    """Go ``rebuildRevision``: the revision a repair of the row rebuilds at, the one it runs, else the
    one it was converging to, else its operation's pin; empty when nothing records one."""
    if row.running_revision:
        return row.running_revision
    if row.target_revision:
        return row.target_revision
    return row.operation.target_revision if row.operation is not None else ""


def ladder_attempt_rebuilds(
    ctx: Ctx, row: Row | None, pods: Sequence[PodView], rev: str, retry: RetryBook
) -> bool:
    """Go ``ops.LadderAttemptRebuilds``: whether the attempt of ``rev``'s retry ladder rebuilds this
    row's crashed set. A ``Restarting`` row is the attempt under way when its rebuild revision is
    ``rev`` and ``rev``'s block is ``RetryInProgress``; any other row must run ``rev``, its crash must
    count on the ladder (``readCrashLadder``) and a trigger of the restart pass would rebuild the set
    (``crashRebuildWarranted``), while the ladder has not held (the rebuild waits on the backoff or
    on another attempt at ``rev``, or the ladder admits it this pass)."""
    if row is None or not rev:
        return False
    if row.phase == R.RESTARTING:
        block = retry.blocks.get(rev)
        return rebuild_revision(row) == rev and block is not None and block.state == IN_PROGRESS_STATE
    if row.running_revision != rev:
        return False
    # A scratch accumulator: the restart pass reads the same ladder and wakes for it itself.
    found = read_crash_ladder(ctx, row, pods, retry, Out(ctx.now))
    return found is not None and not found.held and crash_rebuild_warranted(ctx, row, pods)


def ladder_rebuilds(
    ctx: Ctx, rows: Sequence[Row], by_index: Mapping[int, list[PodView]], retry: RetryBook
) -> list[int]:
    """Go ``ladderRebuilds``: the Instances, in plan order, whose crashed set the target's ladder
    rebuilds in its attempt. Scaled-away (``Deleting``) rows are not planned."""
    return sorted(
        r.index
        for r in rows
        if r.phase != R.DELETING
        and ladder_attempt_rebuilds(ctx, r, by_index.get(r.index, []), ctx.target, retry)
    )


def ladder_rebuilds_clause(rebuilds: Sequence[int]) -> str:
    """Go ``ladderRebuildsClause``."""
    if not rebuilds:
        return ""
    noun = "Instances" if len(rebuilds) > 1 else "Instance"
    return f"; the attempt rebuilds {noun} {', '.join(str(i) for i in rebuilds)}"


def _denying(retry: RetryBook, target: str, ctx: Ctx, update_in_flight: bool) -> RetryBlock | None:
    """Go ``ops.RetryBlockDenyingFreshStart``: the target's block when the trigger gate
    (``evaluateRetryBlockGate`` with ``anyInFlightUpdateAt``) denies a fresh start."""
    block = retry.blocks.get(target)
    if block is None:
        return None
    state, _ = retry.gate(target, ctx.now, update_in_flight)
    return block if state is not None else None


def _of_crashed_attempt(retry: RetryBook, target: str) -> RetryBlock | None:
    """``ops.RetryBlockOfCrashedAttempt``, not in the index (module docstring): asked only once the
    block denies no fresh start, it is the target's block while its attempt is due (``Backoff``) or
    under way (``RetryInProgress``)."""
    block = retry.blocks.get(target)
    if block is None or block.state not in (BACKOFF_STATE, IN_PROGRESS_STATE):
        return None
    return block


def ladder_hold(
    ctx: Ctx,
    retry: RetryBook,
    update_in_flight: bool,
    rolled: Sequence[int],
    crashed: Sequence[int],
    rebuilds: Sequence[int],
) -> LadderHold | None:
    """Go ``workload/reconcile.go`` ``ladderHold``: the hold the target's RetryBlock stands for, or
    None. ``update_in_flight``: some row carries an Update toward the target (Go
    ``anyInFlightUpdateAt``); ``rolled``, ``crashed``: Go's ``RolledNotServing`` and
    ``CrashedNotServing``; ``rebuilds``: :func:`ladder_rebuilds`."""
    target = ctx.target
    if not target:
        return None
    block = _denying(retry, target, ctx, update_in_flight)
    of_crashed = False
    if block is None and crashed:
        block, of_crashed = _of_crashed_attempt(retry, target), True
    if block is None:
        return None
    gate = "RetryBlock"
    if block.state == HELD_STATE:
        gate, state = "Held", "held"
    elif block.state == IN_PROGRESS_STATE:
        state = "retrying one attempt at a time"
    elif block.state == BACKOFF_STATE:
        state = "retrying one attempt at a time" if of_crashed else "in backoff"
    else:
        return None
    return LadderHold(
        gate,
        f"update to {block.target_revision} {state} after {block.attempts_started} failed attempt(s): "
        f"{block.reason}{rolled_not_serving_clause(rolled, target)}{ladder_rebuilds_clause(rebuilds)}",
    )
