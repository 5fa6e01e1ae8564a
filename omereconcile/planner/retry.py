"""Per-revision retry authority for failed Creates and single-pod updates (01 §4.7).

A revision gets three attempts: the 2nd one minute after the first failure, the 3rd two minutes after
the second; a third failure holds the revision (``RetryHeld``) until the spec renders another one.
Blocks are kept only for the current roll target: a new revision starts with a clean slate.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from omereconcile.planner.out import Out
from omereconcile.planner.rows import RetryBlock

__all__ = ["BACKOFF", "MAX_ATTEMPTS", "RetryBook"]

BACKOFF = (timedelta(minutes=1), timedelta(minutes=2))
MAX_ATTEMPTS = 3
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

    def keep_only(self, target: str) -> None:
        for key in [k for k in self.blocks if k != target]:
            del self.blocks[key]
