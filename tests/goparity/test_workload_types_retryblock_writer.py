"""OME's ``workload/types/retryblock_writer_test.go``: one failure wave on a revision's retry block.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/retryblock_writer_test.go`` @ ae683e3f (the
listed, newest of three stored versions, read whole), over ``types/retryblock_writer.go``
``ApplyUpdateFailureToRetryBlock(block, policy, now, reason, charged)``. Ours:
``planner/retry.py`` ``RetryBook.failure(target, reason, now, out)``, which decides ``charged`` itself
from the reason (``workload_caused``; the Go callers' choice of ``charged`` at ae683e3f was not read).
Go's block with no state is no block here.

Known differences (strict xfails, 2): at ae683e3f an uncharged wave paces the next attempt at the
current rung WITHOUT counting it and never holds; ours (the 58a57f25 rule) counts every wave that
is not environment-caused, so an uncharged ``DeadlineExceeded`` wave starts the count at 1 and one
short of the limit holds the revision.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook, workload_caused
from omereconcile.planner.rows import RetryBlock
from omereconcile.settings import RetryPolicy

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/retryblock_writer_test.go @ ae683e3f"
NOW = datetime(2026, 7, 22, 12, 0, tzinfo=UTC)
EARLIER = NOW - timedelta(minutes=10)
DUE = NOW - timedelta(seconds=30)
POLICY = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0)
UNCOUNTED = (
    "known difference: Go types/retryblock_writer.go @ ae683e3f ApplyUpdateFailureToRetryBlock paces an "
    "uncharged wave at the current rung without counting it; ours (planner/retry.py RetryBook.failure, the "
    "58a57f25 rule) counts every wave that is not environment-caused"
)


def _block(state: str, attempts: int, next_at: datetime | None = None, reason: str = "") -> RetryBlock:
    return RetryBlock("rev", state, attempts, EARLIER, EARLIER, next_at, reason)


def _wave(block: RetryBlock | None, policy: RetryPolicy | None, reason: str) -> RetryBlock | None:
    book = RetryBook({"rev": block} if block is not None else {}, "ns/llama", "engine", policy)
    book.failure("rev", reason, NOW, Out(NOW))
    return book.blocks.get("rev")


def test_is_workload_caused_reason() -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestIsWorkloadCausedReason (one case, its table entries
    asserted together)."""
    for reason in ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError"):
        assert workload_caused(reason)
    for reason in ("CrashLoopBackOff", "RunContainerError", "CreateContainerError", "DeadlineExceeded", ""):
        assert not workload_caused(reason)


@pytest.mark.xfail(strict=True, reason=UNCOUNTED)
def test_environment_wave_new_block_paces_without_counting() -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestApplyUpdateFailure_EnvironmentWave, "new block paces
    at the first rung without counting"."""
    got = _wave(None, POLICY, "DeadlineExceeded")
    assert got is not None
    assert (got.state, got.attempts_started, got.next_retry_at) == ("Backoff", 0, NOW + timedelta(minutes=1))


@pytest.mark.xfail(strict=True, reason=UNCOUNTED)
def test_environment_wave_one_short_of_held_never_holds() -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestApplyUpdateFailure_EnvironmentWave, "retry in
    progress one short of Held paces at its rung and never Holds"."""
    got = _wave(_block("RetryInProgress", 2), POLICY, "DeadlineExceeded")
    assert got is not None
    assert (got.state, got.attempts_started, got.next_retry_at) == ("Backoff", 2, NOW + timedelta(minutes=2))


def test_environment_wave_same_wave_backoff_refreshes_evidence_only() -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestApplyUpdateFailure_EnvironmentWave, "same-wave Backoff
    refreshes evidence only"."""
    got = _wave(_block("Backoff", 1, DUE, "first"), POLICY, "DeadlineExceeded")
    assert got is not None
    assert (got.state, got.attempts_started, got.next_retry_at, got.reason) == (
        "Backoff",
        1,
        DUE,
        "DeadlineExceeded",
    )
    assert got.last_failure_at == NOW


def test_environment_wave_keeps_a_held_block() -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestApplyUpdateFailure_EnvironmentWave, "Held keeps the
    evidence that justified the hold"."""
    held = _block("Held", 3, None, "ImagePullBackOff")
    assert _wave(held, POLICY, "DeadlineExceeded") == held


def test_environment_wave_without_policy_writes_nothing() -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestApplyUpdateFailure_EnvironmentWave, "nil policy leaves
    the block untouched instead of holding"."""
    assert _wave(None, None, "DeadlineExceeded") is None


@pytest.mark.parametrize(
    ("entry", "block", "policy", "state", "count", "next_at"),
    [
        ("new block backs off at the first rung", None, POLICY, "Backoff", 1, NOW + timedelta(minutes=1)),
        (
            "retry in progress one short of Held exhausts the ladder",
            _block("RetryInProgress", 2),
            POLICY,
            "Held",
            3,
            None,
        ),
        ("nil policy fails safe to Held on the first wave", None, None, "Held", 1, None),
    ],
)
def test_workload_wave(
    entry: str,
    block: RetryBlock | None,
    policy: RetryPolicy | None,
    state: str,
    count: int,
    next_at: datetime | None,
) -> None:
    """Go: retryblock_writer_test.go @ ae683e3f, TestApplyUpdateFailure_WorkloadWave, each entry: a charged
    (image-pull) wave counts, and the policy (nil included) decides Backoff or Held."""
    got = _wave(block, policy, "ImagePullBackOff")
    assert got is not None
    assert (got.state, got.attempts_started, got.next_retry_at, got.reason) == (
        state,
        count,
        next_at,
        "ImagePullBackOff",
    ), entry
