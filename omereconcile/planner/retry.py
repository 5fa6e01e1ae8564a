"""Per-revision retry authority for failed Creates and single-pod updates (01 §4.7).

The ladder is the operator's ``lifecycle.updateRetry`` (``settings.RetryPolicy``), applied as OME's
newest ``workload/types/retryblock_writer.go`` ``ApplyUpdateFailureToRetryBlock`` does (ome-projects/ome
58a57f25, the version whose cause is a ``FailureCause``; ``types/failurecause.go`` ``FailureCauseOf``):
there is one ladder, and every failed attempt at the revision climbs it.

- a **workload-caused** failure (the evidence travels with the pod template: ``ImagePullBackOff``,
  ``ErrImagePull``, ``InvalidImageName``, ``CreateContainerConfigError``, ``InvalidPodSpec``;
  ``workloadCausedWaitingReasons``) charges one attempt: ``Backoff`` with ``nextRetryAt`` while
  attempts remain, ``Held`` (and the ``RetryHeld`` Warning, once) when they are exhausted. With no
  policy the first one holds (fail-safe);
- an **unattributed** failure (a crash loop, a runtime start rejection, readiness never reached, an
  elapsed deadline: the revision or the node) charges one attempt the same way when a policy is
  configured, so a revision that crashes on every start ends ``Held`` at ``maxAttempts``; with no
  policy it is not recorded, and a ``Held`` block is left as it is;
- an **environment** failure (``Unschedulable``, ``PodGroupNameInUse``, ``AdmissionUnavailable``:
  ``environmentCausedReasons``) never touches the block;
- a failure while the block is already ``Backoff`` (the same wave, re-seen) or ``Held`` only
  refreshes its evidence;
- starting an attempt turns a due ``Backoff`` into ``RetryInProgress``; the count is charged at the
  failure, not the start (``escalation`` ``RetryBlockStartAttempt``).

The earlier stored writer (ae683e3f, the ``workloadCaused`` flag, which 01 §4.7 and OME's retry
guide describe) let an unattributed wave only pace; DECISIONS.md's fidelity order puts Go's code
first, and the newest tree's ``disposition_test.go`` pins the count
(``TestDispose_Terminal_WaveCountsOnTheLadder``).

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
from datetime import datetime

from omereconcile.planner.out import Out
from omereconcile.planner.rows import RetryBlock
from omereconcile.settings import RetryPolicy

__all__ = [
    "ENVIRONMENT_CAUSED_REASONS",
    "MAX_HISTORICAL_BLOCKS",
    "WORKLOAD_CAUSED_REASONS",
    "RetryBook",
    "environment_caused",
    "workload_caused",
]

MAX_HISTORICAL_BLOCKS = 3
BACKOFF_STATE = "Backoff"
HELD_STATE = "Held"
IN_PROGRESS_STATE = "RetryInProgress"

# OME types/failurecause.go workloadCausedWaitingReasons: the reasons that deterministically travel
# with the revision (relocating or simply retrying reproduces them); the only ones that charge it.
WORKLOAD_CAUSED_REASONS = frozenset(
    {"ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError", "InvalidPodSpec"}
)


# OME types/failurecause.go environmentCausedReasons (58a57f25): the cluster refused to run the attempt
# (no placement, the gang's PodGroup name owned by another controller, the admission webhook
# unreachable); no corrected revision changes any of them, so such a wave is never counted.
ENVIRONMENT_CAUSED_REASONS = frozenset({"Unschedulable", "PodGroupNameInUse", "AdmissionUnavailable"})


def workload_caused(reason: str) -> bool:
    """Go ``IsWorkloadCausedReason``."""
    return reason in WORKLOAD_CAUSED_REASONS


def environment_caused(reason: str) -> bool:
    """Go ``IsEnvironmentCausedReason`` (``FailureCauseOf`` answers ``CauseEnvironment``)."""
    return reason in ENVIRONMENT_CAUSED_REASONS


@dataclass
class RetryBook:
    blocks: dict[str, RetryBlock]
    replica_key: str  # "<ns>/<name>" for messages
    component: str
    # The operator's lifecycle.updateRetry; None (unset or invalid) is OME's nil policy.
    policy: RetryPolicy | None = None

    def failure(self, target: str, reason: str, now: datetime, out: Out) -> None:
        """One terminal failure wave of an attempt at ``target`` (Go ``ApplyUpdateFailureToRetryBlock``,
        ome-projects/ome 58a57f25 ``workload/types/retryblock_writer.go``; the cause is Go's
        ``FailureCauseOf(reason)``)."""
        if not target:
            return
        charged = workload_caused(reason)
        if environment_caused(reason):
            return
        prev = self.blocks.get(target)
        if not charged and (self.policy is None or (prev is not None and prev.state == HELD_STATE)):
            return
        attempts = prev.attempts_started if prev is not None else 0
        first = prev.first_failure_at if prev is not None else now
        if prev is not None and prev.state in (BACKOFF_STATE, HELD_STATE):
            # This wave is already recorded (or terminally held): refresh the evidence only.
            self.blocks[target] = replace(prev, last_failure_at=now, reason=reason)
            return
        attempts += 1
        if self.policy is None or self.policy.exhausted(attempts):
            self.blocks[target] = RetryBlock(target, HELD_STATE, attempts, first, now, None, reason)
            out.event(
                "Warning",
                "RetryHeld",
                f"InferenceReplica {self.replica_key} component={self.component} update to revision "
                f"{target} held after {attempts} failed attempt(s) (last failure: {reason}); publish a "
                "corrected revision or raise lifecycle.updateRetry limits",
            )
            return
        nxt = now + self.policy.next_delay(attempts)
        self.blocks[target] = RetryBlock(target, BACKOFF_STATE, attempts, first, now, nxt, reason)

    def gate(
        self, target: str, now: datetime, attempt_in_flight: bool = False
    ) -> tuple[str | None, datetime | None]:
        """(None, None) when an attempt may start now; else the state and when to look again.

        Go ``evaluateRetryBlockGate``: ``Held`` denies; ``RetryInProgress`` denies while an attempt
        at the revision is in flight (exactly one attempt at a time) and is treated as due once none
        is (a leaked authorisation); ``Backoff`` denies until ``nextRetryAt``."""
        block = self.blocks.get(target)
        if block is None:
            return None, None
        if block.state == IN_PROGRESS_STATE:
            return (IN_PROGRESS_STATE, None) if attempt_in_flight else (None, None)
        if block.state == HELD_STATE:
            return HELD_STATE, None
        if block.next_retry_at is not None and now < block.next_retry_at:
            return BACKOFF_STATE, block.next_retry_at
        return None, None

    def started(self, target: str) -> None:
        """Go ``RetryBlockStartAttempt``: a due ``Backoff`` block moves to ``RetryInProgress``."""
        block = self.blocks.get(target)
        if block is not None and block.state == BACKOFF_STATE:
            self.blocks[target] = replace(block, state=IN_PROGRESS_STATE)

    def started_since(self, target: str, since: datetime) -> None:
        """Go ``entryStampAttemptStarted`` (ome-projects/ome ``workload/status/decision.go`` @ 8263d0c7,
        pinned by ``decision_test.go`` ``TestEntryStamps_LadderFlipFollowsTheAttempt``): a later pass
        of an Update attempt that opened at ``since`` re-runs its entry stamp, and lands the flip of a
        due ``Backoff`` block the pass that opened it did not, when the attempt opened once the block
        was due (no ``nextRetryAt``, or ``since`` not before it). An attempt open since before then
        belongs to the wave the block already counts and starts nothing on the ladder."""
        block = self.blocks.get(target)
        if block is None or block.state != BACKOFF_STATE:
            return
        if block.next_retry_at is not None and since < block.next_retry_at:
            return
        self.blocks[target] = replace(block, state=IN_PROGRESS_STATE)

    def cap_history(self, update: str, limit: int | None) -> None:
        """The end-of-pass RetryBlock cap: the update revision's block stays; of the others, the
        oldest by ``lastFailureAt`` go until ``limit`` remain (a stable sort, so ties keep their order).

        Go: the newest stored reconciler (``inferencereplica/reconciler.go`` 4dfb96b1) takes the cap
        from the operator's ``lifecycle.retryBlockHistoryLimit`` ("Nil keeps every historical
        block"); the order is the earlier ``status_writer.go`` ``pruneRetryBlocks`` (ae43378d), whose
        fixed cap was ``MAX_HISTORICAL_BLOCKS``. The newest prune's own body is not in the index.
        ``None``: nothing is capped."""
        if limit is None:
            return
        others = [k for k in self.blocks if not update or k != update]
        excess = len(others) - limit
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
