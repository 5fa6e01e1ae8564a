"""Count-only status writes: what counts as the journal, and how long the controller holds counts back."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.coalesce import DEFAULT_WINDOW, StatusCoalescer
from omereconcile.planner.journal import counters_only, journal_view

OLD: dict[str, Any] = {
    "observedGeneration": 2,
    "replicas": 2,
    "readyReplicas": 2,
    "servingReplicas": 2,
    "availableReplicas": 2,
    "updatedReplicas": 1,
    "updatedReadyReplicas": 1,
    "updateRevision": "pool-engine-b",
    "currentRevision": "pool-engine-a",
    "instanceStatuses": [
        {
            "index": 0,
            "phase": "Ready",
            "runningRevision": "pool-engine-b",
            "podCount": 1,
            "servingPodCount": 1,
        },
        {
            "index": 1,
            "phase": "Updating",
            "runningRevision": "pool-engine-a",
            "podCount": 1,
            "servingPodCount": 1,
            "admitted": True,
            "operation": {"id": "u1", "type": "Update", "step": "Surge", "targetRevision": "pool-engine-b"},
        },
    ],
    "conditions": [
        {
            "type": "Ready",
            "status": "Unknown",
            "reason": "RolloutInProgress",
            "message": "Rolling out pool-engine-b (1/2 Instances on target)",
            "observedGeneration": 2,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
    ],
}


def _with(**changes: Any) -> dict[str, Any]:
    new = copy.deepcopy(OLD)
    new.update(changes)
    return new


def test_counts_alone_are_not_the_journal() -> None:
    new = _with(readyReplicas=1, servingReplicas=1)
    new["instanceStatuses"][1].update(podCount=2, servingPodCount=0, admitted=False, readyPodCount=1)
    new["conditions"][0]["message"] = "Rolling out pool-engine-b (0/2 Instances on target)"
    assert counters_only(OLD, new)
    assert journal_view(new) == journal_view(OLD)


def test_an_unchanged_status_is_not_a_count_only_write() -> None:
    assert not counters_only(OLD, copy.deepcopy(OLD))


@pytest.mark.parametrize(
    "change",
    [
        "step",  # an operation changes step
        "end",  # an operation ends
        "start",  # an operation starts
        "condition status",
        "condition reason",
        "revision",
        "generation",
        "hold",
    ],
)
def test_any_journal_change_with_the_counts_is_written_at_once(change: str) -> None:
    new = _with(readyReplicas=1)
    rows = new["instanceStatuses"]
    if change == "step":
        rows[1]["operation"]["step"] = "SurgeDrain"
    elif change == "end":
        rows[1].pop("operation")
        rows[1]["phase"] = "Ready"
    elif change == "start":
        rows[0]["operation"] = {
            "id": "u2",
            "type": "Update",
            "step": "Surge",
            "targetRevision": "pool-engine-c",
        }
    elif change == "condition status":
        new["conditions"][0]["status"] = "True"
    elif change == "condition reason":
        new["conditions"][0]["reason"] = "AllInstancesReady"
    elif change == "revision":
        new["currentRevision"] = "pool-engine-b"
    elif change == "generation":
        new["observedGeneration"] = 3
    else:
        new["rolloutHold"] = {"gate": "Budget", "reason": "r", "target": "pool-engine-b", "since": "t"}
    assert not counters_only(OLD, new)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _plan(*acts: A.Action, requeue: float | None = None) -> A.Plan:
    return A.Plan(tuple(acts), requeue_after=requeue)


COUNTS = A.WriteStatus({"readyReplicas": 1}, "counts", counters_only=True)
JOURNAL = A.WriteStatus({"readyReplicas": 1}, "journal")
GATE = A.SetServingGate("p1", "u", "7", True, "serve the replacement")
KEY = ("ns", "pool")


def test_a_count_only_write_is_held_back_for_the_window_then_written() -> None:
    clock = Clock()
    co = StatusCoalescer(5.0, clock=clock)
    held = co.filter(KEY, _plan(COUNTS, GATE))
    assert held.actions == (GATE,)  # the gate flip follows a journaled step: it still goes
    assert held.requeue_after == 5.0  # a pass when the window ends, even without a watch event
    clock.t += 3.0
    again = co.filter(KEY, _plan(COUNTS))
    assert again.actions == ()
    assert again.requeue_after == pytest.approx(2.0)  # the window runs from the first held write
    assert co.pending() == 1
    clock.t += 2.0
    assert co.filter(KEY, _plan(COUNTS)).actions == (COUNTS,)
    assert (co.held, co.released) == (2, 1)


def test_a_due_write_that_did_not_land_stays_due() -> None:
    clock = Clock()
    co = StatusCoalescer(5.0, clock=clock)
    co.filter(KEY, _plan(COUNTS))
    clock.t += 6.0
    assert co.filter(KEY, _plan(COUNTS)).actions == (COUNTS,)  # e.g. it met a 409
    clock.t += 0.1
    assert co.filter(KEY, _plan(COUNTS)).actions == (COUNTS,)
    co.written(KEY)
    assert co.pending() == 0
    assert co.filter(KEY, _plan(COUNTS)).actions == ()  # landed: a new window


def test_a_journal_write_carries_the_counts_and_restarts_the_window() -> None:
    clock = Clock()
    co = StatusCoalescer(5.0, clock=clock)
    co.filter(KEY, _plan(COUNTS))
    clock.t += 4.0
    plan = _plan(JOURNAL, GATE)
    assert co.filter(KEY, plan) is plan
    clock.t += 4.0
    assert co.filter(KEY, _plan(COUNTS)).requeue_after == 5.0  # counted from now, not from before


def test_a_status_already_published_forgets_the_held_counts() -> None:
    clock = Clock()
    co = StatusCoalescer(5.0, clock=clock)
    co.filter(KEY, _plan(COUNTS))
    clock.t += 4.0
    co.filter(KEY, _plan(GATE))  # the counts went back to what the API holds
    clock.t += 2.0
    assert co.filter(KEY, _plan(COUNTS)).actions == ()


def test_replicas_are_held_back_independently_and_an_earlier_wake_is_kept() -> None:
    clock = Clock()
    co = StatusCoalescer(5.0, clock=clock)
    co.filter(("ns", "a"), _plan(COUNTS))
    clock.t += 5.0
    assert co.filter(("ns", "b"), _plan(COUNTS, requeue=1.5)).requeue_after == 1.5
    assert co.filter(("ns", "a"), _plan(COUNTS)).actions == (COUNTS,)
    co.forget(("ns", "a"))
    assert co.filter(("ns", "a"), _plan(COUNTS)).actions == ()


def test_a_zero_window_writes_every_count_and_a_negative_one_is_refused() -> None:
    co = StatusCoalescer(0.0, clock=Clock())
    assert co.filter(KEY, _plan(COUNTS)).actions == (COUNTS,)
    with pytest.raises(ValueError, match="window must be >= 0"):
        StatusCoalescer(-1.0)
    assert DEFAULT_WINDOW > 0
