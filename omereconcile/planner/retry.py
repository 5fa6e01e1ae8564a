"""Per-revision retry authority for failed Creates and single-pod updates (01 §4.7).

A revision gets three attempts: the 2nd one minute after the first failure, the 3rd two minutes after
the second; a third failure holds the revision (``RetryHeld``) until the spec renders another one.

Retention follows OME's Go controller:

- a block is removed when an Instance is promoted Ready on its revision
  (``workload/escalation`` ``RetryBlockPruneOnPromote``);
- every block write keeps the update revision's block and at most three others, dropping the oldest
  by ``lastFailureAt`` (``inferencereplica/status_writer.go`` ``pruneRetryBlocks``,
  ``maxHistoricalRetryBlocks = 3``), blocks staying in the order they were first written;
- at the end of a pass that is neither paused nor a teardown, blocks naming none of the revisions
  still in play (current, update, the roll target, any row's operation target) are removed
  (``escalation/retryblock_prune.go`` ``PruneSupersededRetryBlocks``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from omereconcile.planner.out import Out
from omereconcile.planner.rows import RetryBlock

__all__ = ["BACKOFF", "MAX_ATTEMPTS", "MAX_HISTORICAL_BLOCKS", "RetryBook"]

BACKOFF = (timedelta(minutes=1), timedelta(minutes=2))
MAX_ATTEMPTS = 3
MAX_HISTORICAL_BLOCKS = 3
BACKOFF_STATE = "Backoff"
HELD_STATE = "Held"
IN_PROGRESS_STATE = "RetryInProgress"


@dataclass
class RetryBook:
    blocks: dict[str, RetryBlock]
    replica_key: str  # "<ns>/<name>" for messages
    component: str
    # Attempts before the revision is held. Without the operator's lifecycle.updateRetry the first
    # revision-caused failure holds (01 §4.7, fail-safe): the core passes 1 then.
    max_attempts: int = MAX_ATTEMPTS

    def failure(self, target: str, reason: str, now: datetime, out: Out) -> None:
        prev = self.blocks.get(target)
        attempts = prev.attempts_started if prev is not None else 1
        first = prev.first_failure_at if prev is not None else now
        if attempts >= self.max_attempts:
            self.blocks[target] = RetryBlock(target, HELD_STATE, attempts, first, now, None, reason)
            out.event(
                "Warning",
                "RetryHeld",
                f"InferenceReplica {self.replica_key} component={self.component} update to revision "
                f"{target} held after {attempts} failed attempt(s) (last failure: {reason}); publish a "
                "corrected revision or raise lifecycle.updateRetry limits",
            )
            return
        nxt = now + BACKOFF[min(attempts, len(BACKOFF)) - 1]
        self.blocks[target] = RetryBlock(target, BACKOFF_STATE, attempts, first, now, nxt, reason)

    def gate(self, target: str, now: datetime) -> tuple[str | None, datetime | None]:
        """(None, None) when an attempt may start now; else the state and when to look again."""
        block = self.blocks.get(target)
        if block is None or block.state == IN_PROGRESS_STATE:
            return None, None
        if block.state == HELD_STATE:
            return HELD_STATE, None
        if block.next_retry_at is not None and now < block.next_retry_at:
            return BACKOFF_STATE, block.next_retry_at
        return None, None

    def started(self, target: str) -> None:
        block = self.blocks.get(target)
        if block is not None and block.state == BACKOFF_STATE:
            self.blocks[target] = replace(
                block,
                state=IN_PROGRESS_STATE,
                attempts_started=block.attempts_started + 1,
                next_retry_at=None,
            )

    def cap_history(self, update: str) -> None:
        """Go ``pruneRetryBlocks``: the update revision's block stays; of the others, the oldest by
        ``lastFailureAt`` go until three remain (a stable sort, so ties keep their order)."""
        others = [k for k in self.blocks if not update or k != update]
        excess = len(others) - MAX_HISTORICAL_BLOCKS
        if excess <= 0:
            return
        for key in sorted(others, key=lambda k: self.blocks[k].last_failure_at)[:excess]:
            del self.blocks[key]

    def promoted(self, revision: str) -> bool:
        """Go ``RetryBlockPruneOnPromote``: an Instance Ready on ``revision`` answers its block."""
        return self.blocks.pop(revision, None) is not None

    def prune_superseded(self, in_play: set[str]) -> None:
        """Go ``PruneSupersededRetryBlocks``: drop blocks whose revision nothing resolves to any more."""
        for key in [k for k in self.blocks if k and k not in in_play]:
            del self.blocks[key]

    def rollout_hold(self, update: str, now: datetime) -> tuple[str, str] | None:
        """Go ``computeRetryBlockRolloutHold``: (gate, reason) while the update revision's block stops
        every fresh attempt — ``Held``, or ``Backoff`` whose ``nextRetryAt`` is still ahead."""
        b = self.blocks.get(update)
        if b is None:
            return None
        if b.state == HELD_STATE:
            return (
                "Held",
                f"update to {b.target_revision} held after {b.attempts_started} failed attempt(s): {b.reason}",
            )
        if b.state == BACKOFF_STATE and b.next_retry_at is not None and b.next_retry_at > now:
            return (
                "RetryBlock",
                f"update to {b.target_revision} in backoff after {b.attempts_started} failed attempt(s): "
                f"{b.reason}",
            )
        return None
