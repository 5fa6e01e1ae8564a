"""OME's ``workload/types/promotewindow_test.go``: the pass wakes on the earliest window to close.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/promotewindow_test.go`` @ dcfb4135 (the one
stored version, read whole), over ``types/promotewindow.go`` (``PromoteWindow.Observe`` / ``Pending``).
Ours: :class:`omereconcile.planner.out.Out` (``wake`` and ``requeue_after``): every Instance names the
instant it can next commit, and the pass requeues for the earliest. ``TestPromoteWindowIsNilSafe`` is
not mappable (a nil Go receiver).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from omereconcile.planner.out import Out

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/promotewindow_test.go @ dcfb4135"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_earliest_remainder_wins() -> None:
    """Go: promotewindow_test.go @ dcfb4135, TestPromoteWindowKeepsTheEarliestRemainder: nothing waiting
    owes no wake-up; of 30 s, 5 s and 10 s the pass wakes in 5 s."""
    out = Out(NOW)
    assert out.requeue_after() is None
    for seconds in (30, 5, 10):
        out.wake(NOW + timedelta(seconds=seconds))
    assert out.requeue_after() == 5.0


def test_an_elapsed_window_owes_no_wake_up() -> None:
    """Go: promotewindow_test.go @ dcfb4135, TestPromoteWindowIgnoresAnElapsedWindow: a window closing
    now or in the past asks for no wake-up."""
    out = Out(NOW)
    out.wake(NOW)
    out.wake(NOW - timedelta(seconds=1))
    assert out.requeue_after() is None
