"""OME's ``workload/ops/update_gang_terminal_cleanup_test.go``: the RetryBlock a failed gang surge's
abandon writes.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go`` @
ae683e3f (28,842 characters, the one stored version, read whole), over ``ops/update_gang.go``
``abandonFailedGangSurge``. Only ``TestAbandonFailedGangSurge_AtomicTailClassifiesFailureCause`` pins a
rule ours has: which abandon waves climb the retry ladder. Ours records a wave with
``planner/retry.py`` ``RetryBook.failure`` (the gang abandon calls it with the surge's failure
reason), called here directly; between waves the next attempt's start flips the block
(``RetryBook.started``) once the gate admits it at ``nextRetryAt``. The file's other tests inject
status-write failures into Go's atomic batch writer, or feed it a stale cache: see
``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import RetryPolicy

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @ ae683e3f"
T0 = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
TARGET = "gang-abandon-cause-engine-badrev"
POLICY = RetryPolicy(
    max_attempts=3, initial_delay=timedelta(minutes=1), max_delay=timedelta(minutes=30), multiplier=2
)


def _held(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "RetryHeld"]


def test_workload_caused_waves_hold_at_max_attempts() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @
    ae683e3f, TestAbandonFailedGangSurge_AtomicTailClassifiesFailureCause "workload-caused waves hold
    at MaxAttempts": each abandoned wave with ImagePullBackOff evidence counts one attempt: Backoff
    with no warning below the limit, then Held with one RetryHeld Warning naming three attempts."""
    book = RetryBook({}, "test-ns/gang-abandon-cause", "engine", POLICY)
    for wave in range(1, POLICY.max_attempts + 1):
        out = Out(T0)
        book.failure(TARGET, "ImagePullBackOff", T0, out)
        block = book.blocks[TARGET]
        assert block.attempts_started == wave, GO
        if wave < POLICY.max_attempts:
            assert (block.state, _held(out)) == ("Backoff", []), GO
            assert block.next_retry_at is not None
            assert book.gate(TARGET, block.next_retry_at) == (None, None)
            book.started(TARGET)
            continue
        assert block.state == "Held", GO
        warnings = _held(out)
        assert len(warnings) == 1
        assert f"held after {POLICY.max_attempts} failed attempt(s)" in warnings[0]


def test_environment_caused_wave_without_a_policy_leaves_no_block() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_terminal_cleanup_test.go @
    ae683e3f, TestAbandonFailedGangSurge_AtomicTailClassifiesFailureCause "environment-caused wave
    without a policy leaves no block": an elapsed deadline with no retry policy configured records no
    block and warns nothing."""
    book, out = RetryBook({}, "test-ns/gang-abandon-cause", "engine", None), Out(T0)
    book.failure(TARGET, "DeadlineExceeded", T0, out)
    assert book.blocks == {}, GO
    assert _held(out) == []
