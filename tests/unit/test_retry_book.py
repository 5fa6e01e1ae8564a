"""The retry ladder as OME applies one failure wave to a RetryBlock (``ApplyUpdateFailureToRetryBlock``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import RetryPolicy

T0 = datetime(2025, 1, 1, tzinfo=UTC)
CHART = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0)
REV = "pool-engine-abcd1234"


def _book(policy: RetryPolicy | None) -> tuple[RetryBook, Out]:
    return RetryBook({}, "ns/pool", "engine", policy), Out(T0)


def test_workload_caused_failures_charge_the_ladder_until_held() -> None:
    book, out = _book(CHART)
    now = T0
    for attempt, delay in ((1, 60), (2, 120)):
        book.failure(REV, "ImagePullBackOff", now, out)
        block = book.blocks[REV]
        assert (block.state, block.attempts_started) == ("Backoff", attempt)
        assert block.next_retry_at == now + timedelta(seconds=delay)
        assert book.gate(REV, now) == ("Backoff", block.next_retry_at)
        now = block.next_retry_at
        assert book.gate(REV, now) == (None, None)
        book.started(REV)
        assert book.blocks[REV].state == "RetryInProgress"
        assert book.blocks[REV].attempts_started == attempt  # charged at the failure, not the start
    book.failure(REV, "ErrImagePull", now, out)
    held = book.blocks[REV]
    assert (held.state, held.attempts_started, held.next_retry_at) == ("Held", 3, None)
    assert [e.event_reason for e in out.events] == ["RetryHeld"]
    assert book.gate(REV, now + timedelta(days=1)) == ("Held", None)


def test_a_crash_loop_climbs_the_same_ladder_until_held() -> None:
    """Go ``ApplyUpdateFailureToRetryBlock`` (ome-projects/ome 58a57f25): one ladder; an unattributed
    wave (a crash loop, an elapsed deadline) counts like a workload-caused one when a policy is set."""
    book, out = _book(CHART)
    now = T0
    for attempt, reason in ((1, "CrashLoopBackOff"), (2, "DeadlineExceeded")):
        book.failure(REV, reason, now, out)
        block = book.blocks[REV]
        assert (block.state, block.attempts_started, block.reason) == ("Backoff", attempt, reason)
        now = block.next_retry_at or now
        book.started(REV)
    book.failure(REV, "ContainersNotReady", now, out)
    held = book.blocks[REV]
    assert (held.state, held.attempts_started, held.next_retry_at) == ("Held", 3, None)
    assert [e.event_reason for e in out.events] == ["RetryHeld"]


def test_an_environment_cause_never_touches_the_block() -> None:
    """Go ``FailureCauseOf`` → ``CauseEnvironment`` (58a57f25 ``environmentCausedReasons``)."""
    book, out = _book(CHART)
    for reason in ("Unschedulable", "PodGroupNameInUse", "AdmissionUnavailable"):
        book.failure(REV, reason, T0, out)
    assert book.blocks == {}
    assert out.events == []


def test_the_same_wave_seen_again_refreshes_only_its_evidence() -> None:
    book, out = _book(CHART)
    book.failure(REV, "ImagePullBackOff", T0, out)
    later = T0 + timedelta(seconds=20)
    book.failure(REV, "ErrImagePull", later, out)
    block = book.blocks[REV]
    assert (block.attempts_started, block.reason, block.last_failure_at) == (1, "ErrImagePull", later)
    assert block.first_failure_at == T0
    assert block.next_retry_at == T0 + timedelta(minutes=1)


def test_without_a_policy_the_first_workload_caused_failure_holds_and_nothing_else_is_recorded() -> None:
    book, out = _book(None)
    book.failure(REV, "CrashLoopBackOff", T0, out)
    book.failure(REV, "DeadlineExceeded", T0, out)
    assert book.blocks == {}
    book.failure(REV, "CreateContainerConfigError", T0, out)
    assert (book.blocks[REV].state, book.blocks[REV].attempts_started) == ("Held", 1)
    assert len(out.events) == 1
    # A Held block keeps the evidence that held it against an uncharged wave.
    book.failure(REV, "CrashLoopBackOff", T0 + timedelta(minutes=5), out)
    assert book.blocks[REV].reason == "CreateContainerConfigError"
