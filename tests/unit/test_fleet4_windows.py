"""The end of a count window is a pass only while counts are still held back: a status write that
landed after the hold carried them, and the pass scheduled for the window's end is skipped unread."""

from __future__ import annotations

from typing import Any

from omereconcile.controller import Controller, WorkQueue
from omereconcile.controller.queue import WINDOW

KEY = ("ns", "pool")


class NoKube:
    """Sends nothing: any request would raise AttributeError."""

    on_request: Any = None


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_tagged_delayed_add_reports_its_tag_when_it_comes_due() -> None:
    clock = Clock()
    due: list[tuple[tuple[str, str], str]] = []
    q = WorkQueue(clock=clock, on_due=lambda key, tag: due.append((key, tag)))
    q.add_after(KEY, 5.0, "window@1")
    q.add_after(("ns", "other"), 1.0)  # untagged: nothing reported
    assert q.get(timeout=0) is None
    clock.t += 5.0
    assert {q.get(timeout=0), q.get(timeout=0)} == {KEY, ("ns", "other")}
    assert due == [(KEY, "window@1")]


def _ctrl() -> Controller:
    return Controller(NoKube(), namespaces=["ns"])  # type: ignore[arg-type]


def test_only_window_ends_from_before_the_last_status_write_are_stale() -> None:
    ctrl = _ctrl()
    ctrl._status_written[KEY] = 10.0
    ctrl._window_held[KEY] = 5.0
    assert ctrl._stale_window_only(KEY, [WINDOW])
    assert ctrl._stale_window_only(KEY, [WINDOW, WINDOW])
    ctrl._window_held[KEY] = 9.5  # the latest of two holds, both before the write
    assert ctrl._stale_window_only(KEY, [WINDOW, WINDOW])
    ctrl._window_held[KEY] = 11.0
    assert not ctrl._stale_window_only(KEY, [WINDOW])  # held after the write: still due
    ctrl._window_held[KEY] = 5.0
    assert not ctrl._stale_window_only(KEY, [WINDOW, "pods"])  # an event came too
    assert not ctrl._stale_window_only(KEY, [WINDOW, "wake"])  # the planner's own deadline
    assert not ctrl._stale_window_only(KEY, [WINDOW, "retry"])
    assert not ctrl._stale_window_only(KEY, [])
    ctrl._window_held[("ns", "never-written")] = 5.0
    assert not ctrl._stale_window_only(("ns", "never-written"), [WINDOW])
    assert not ctrl._stale_window_only(("ns", "never-held"), [WINDOW])


def test_a_stale_window_end_is_skipped_without_a_request() -> None:
    ctrl = _ctrl()
    ctrl._status_written[KEY] = 10.0
    ctrl._window_held[KEY] = 5.0
    ctrl.queue.on_due(KEY, WINDOW)  # type: ignore[misc]
    res = ctrl.reconcile(KEY)  # NoKube: a GET would raise
    assert res.result == "success"
    assert not res.follow_up
    assert ctrl.stale_windows == 1
    assert ctrl.passes == 0


def test_a_re_run_whose_trigger_the_last_pass_took_is_skipped_without_a_request() -> None:
    """An event that lands while a pass runs, after the pass took its triggers, makes the key dirty:
    the pass has read the change already (the store is updated before the event is handed on)."""
    ctrl = _ctrl()
    ctrl._enqueue(KEY, "pods")
    assert ctrl.queue.get(timeout=0) == KEY
    with ctrl._stats_lock:  # what reconcile takes before it reads
        taken = ctrl._trigger.pop(KEY)
    ctrl._enqueue(KEY, "endpointslices")  # lands before the pass takes its triggers...
    assert taken == ["pods"]
    ctrl.queue.done(KEY)
    assert ctrl.queue.get(timeout=0) == KEY  # ...so the key runs again, with that trigger
    assert ctrl._trigger[KEY] == ["endpointslices"]
    ctrl._trigger.pop(KEY)  # had the running pass taken it too, the re-run has none left:
    res = ctrl.reconcile(KEY)  # NoKube: a GET would raise
    assert res.result == "success"
    assert ctrl.repeats == 1
    assert ctrl.passes == 0
