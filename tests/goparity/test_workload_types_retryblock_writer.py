"""OME's ``workload/types/retryblock_writer_test.go``: one failure wave on a revision's retry block.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/retryblock_writer_test.go`` @ 58a57f25 (9,693
characters, read whole), over ``types/retryblock_writer.go`` @ 58a57f25
``ApplyUpdateFailureToRetryBlock(block, policy, now, reason, cause)`` and ``types/failurecause.go`` @
58a57f25 ``FailureCauseOf``. Ours: ``planner/retry.py`` ``RetryBook.failure(target, reason, now, out)``,
which takes the cause from the reason as ``FailureCauseOf`` does. Go's block with no state is no block
here; Go's ``heldAttempts`` is our ``RetryHeld`` Warning.

Which version is the newest: three are stored. dcfb4135 (6,004 characters) and ae683e3f (6,591: the
same text plus ``TestIsWorkloadCausedReason``) pin the ``workloadCaused bool`` writer, under which an
uncharged wave only paces at the current rung; 58a57f25 replaces both with the ``FailureCause`` tests
(``UnattributedWave``, ``EnvironmentWaveIsNeverCounted``, ``OneLadderForEveryCause``,
``FailureCauseOf``): one ladder, every wave that is not the environment's counts. 58a57f25 is the later:
its ``failurecause.go`` (7,592 characters) holds ae683e3f's (4,306) text plus ``FailureCause``,
``environmentCausedReasons`` and ``RepairWaitsOnWorkload``; its writer adds
``RecordUpdateFailureInRetryBlockAt``; and ``ops/update_recreate.go`` grows ae683e3f (8,103) →
4dfb96b1 (8,507) → 58a57f25 (8,537), each the one before plus additions. An earlier port read ae683e3f
as the newest and kept its two pacing cases as strict xfails; they pinned superseded Go and are
replaced by 58a57f25's cases, which ours passes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook, environment_caused, workload_caused
from omereconcile.planner.rows import RetryBlock
from omereconcile.settings import RetryPolicy

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/retryblock_writer_test.go @ 58a57f25"
NOW = datetime(2026, 7, 22, 12, 0, tzinfo=UTC)
EARLIER = NOW - timedelta(minutes=10)
DUE = NOW - timedelta(seconds=30)
POLICY = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0)


def _block(state: str, attempts: int, next_at: datetime | None = None, reason: str = "") -> RetryBlock:
    return RetryBlock("rev", state, attempts, EARLIER, EARLIER, next_at, reason)


def _wave(
    block: RetryBlock | None, policy: RetryPolicy | None, reason: str
) -> tuple[RetryBlock | None, list[str]]:
    """One wave; the block after it and the reasons of the events it recorded."""
    book = RetryBook({"rev": block} if block is not None else {}, "ns/llama", "engine", policy)
    out = Out(NOW)
    book.failure("rev", reason, NOW, out)
    return book.blocks.get("rev"), [e.event_reason for e in out.events]


def _shape(block: RetryBlock | None) -> tuple[str, int, datetime | None, str] | None:
    return None if block is None else (block.state, block.attempts_started, block.next_retry_at, block.reason)


# --- TestApplyUpdateFailure_UnattributedWave -----------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "block", "policy", "want", "held"),
    [
        (
            "new block counts the first wave and paces at the first rung",
            None,
            POLICY,
            ("Backoff", 1, NOW + timedelta(minutes=1), "DeadlineExceeded"),
            False,
        ),
        (
            "retry in progress one short of MaxAttempts Holds",
            _block("RetryInProgress", 2),
            POLICY,
            ("Held", 3, None, "DeadlineExceeded"),
            True,
        ),
        (
            "same-wave Backoff refreshes evidence only",
            _block("Backoff", 1, DUE, "first"),
            POLICY,
            ("Backoff", 1, DUE, "DeadlineExceeded"),
            False,
        ),
        (
            "Held keeps the evidence that justified the hold",
            _block("Held", 3, None, "ImagePullBackOff"),
            POLICY,
            ("Held", 3, None, "ImagePullBackOff"),
            False,
        ),
        ("nil policy leaves the block untouched instead of holding", None, None, None, False),
    ],
)
def test_unattributed_wave(
    entry: str,
    block: RetryBlock | None,
    policy: RetryPolicy | None,
    want: tuple[str, int, datetime | None, str] | None,
    held: bool,
) -> None:
    """Go: retryblock_writer_test.go @ 58a57f25, TestApplyUpdateFailure_UnattributedWave, each entry: a
    wave the revision cannot be blamed for (``DeadlineExceeded``) counts on the ladder like any failed
    attempt; a same-wave Backoff and a Held block only keep or refresh their evidence; no policy, no
    record. A persisted wave is dated now."""
    got, events = _wave(block, policy, "DeadlineExceeded")
    assert _shape(got) == want, (GO, entry)
    assert ("RetryHeld" in events) is held, (GO, entry)
    if got is not None and got != block:
        assert got.last_failure_at == NOW, (GO, entry)


# --- TestApplyUpdateFailure_WorkloadWave ---------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "block", "policy", "want", "held"),
    [
        (
            "new block backs off at the first rung",
            None,
            POLICY,
            ("Backoff", 1, NOW + timedelta(minutes=1)),
            False,
        ),
        (
            "retry in progress one short of Held exhausts the ladder",
            _block("RetryInProgress", 2),
            POLICY,
            ("Held", 3, None),
            True,
        ),
        ("nil policy fails safe to Held on the first wave", None, None, ("Held", 1, None), True),
    ],
)
def test_workload_wave(
    entry: str,
    block: RetryBlock | None,
    policy: RetryPolicy | None,
    want: tuple[str, int, datetime | None],
    held: bool,
) -> None:
    """Go: retryblock_writer_test.go @ 58a57f25, TestApplyUpdateFailure_WorkloadWave, each entry: a wave
    that blames the revision (``ImagePullBackOff``) counts, and the policy (nil included) decides
    Backoff or Held."""
    got, events = _wave(block, policy, "ImagePullBackOff")
    assert _shape(got) == (*want, "ImagePullBackOff"), (GO, entry)
    assert ("RetryHeld" in events) is held, (GO, entry)


# --- TestApplyUpdateFailure_EnvironmentWaveIsNeverCounted ----------------------------------------


@pytest.mark.parametrize(
    ("entry", "block", "policy"),
    [
        ("new block under a policy", None, POLICY),
        ("retry in progress one short of Held", _block("RetryInProgress", 2), POLICY),
        ("new block with no policy", None, None),
    ],
)
def test_environment_wave_is_never_counted(
    entry: str, block: RetryBlock | None, policy: RetryPolicy | None
) -> None:
    """Go: retryblock_writer_test.go @ 58a57f25, TestApplyUpdateFailure_EnvironmentWaveIsNeverCounted,
    each entry: a scheduler hold touches no block in any state, with or without a policy."""
    got, events = _wave(block, policy, "Unschedulable")
    assert got == block, (GO, entry)
    assert events == [], (GO, entry)


# --- TestApplyUpdateFailure_OneLadderForEveryCause -----------------------------------------------


def test_one_ladder_for_every_cause() -> None:
    """Go: retryblock_writer_test.go @ 58a57f25, TestApplyUpdateFailure_OneLadderForEveryCause: one
    counter: a workload-caused wave after a counted crash-loop wave, and a crash-loop wave after a
    counted workload wave, both Hold at ``maxAttempts`` 2, the second naming the crash loop."""
    two = RetryPolicy(2, timedelta(minutes=1), timedelta(minutes=30), 2.0)
    got, events = _wave(_block("RetryInProgress", 1, reason="CrashLoopBackOff"), two, "ImagePullBackOff")
    assert (_shape(got), "RetryHeld" in events) == (("Held", 2, None, "ImagePullBackOff"), True), GO
    got, events = _wave(_block("RetryInProgress", 1, reason="ImagePullBackOff"), two, "CrashLoopBackOff")
    assert (_shape(got), "RetryHeld" in events) == (("Held", 2, None, "CrashLoopBackOff"), True), GO


# --- TestFailureCauseOf --------------------------------------------------------------------------


def test_failure_cause_of() -> None:
    """Go: retryblock_writer_test.go @ 58a57f25, TestFailureCauseOf (one case, its table asserted
    together): the workload-caused set blames the revision, the environment set names the cluster,
    everything else is an attempt that failed without blame. Go's ``PodGroupOwnershipConflictReason`` is
    the word ``PodGroupOwnershipConflict`` (``types/gangscheduling.go`` @ 4dfb96b1); ours records that failure as
    ``PodGroupNameInUse`` (``planner/gang.py``), a difference of words not changed here."""

    def cause(reason: str) -> str:
        if workload_caused(reason):
            return "Workload"
        return "Environment" if environment_caused(reason) else "Unattributed"

    table = {
        "ImagePullBackOff": "Workload",
        "InvalidPodSpec": "Workload",
        "Unschedulable": "Environment",
        "PodGroupNameInUse": "Environment",
        "CrashLoopBackOff": "Unattributed",
        "RunContainerError": "Unattributed",
        "DeadlineExceeded": "Unattributed",
        "ContainersNotReady": "Unattributed",
        "": "Unattributed",
    }
    assert {reason: cause(reason) for reason in table} == table, GO
