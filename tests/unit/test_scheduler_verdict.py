"""The scheduler's verdict on a pod, as OME's ``types/scheduling.go`` reads it."""

from __future__ import annotations

from typing import Any

from omereconcile.planner.holds import first_unplaced, unplaced, unschedulable_failure_message
from omereconcile.world import PodView


def _pod(name: str, status: str = "False", reason: str = "Unschedulable", **meta: Any) -> PodView:
    cond = {"type": "PodScheduled", "status": status, "reason": reason, "message": f"no room for {name}"}
    cond["lastTransitionTime"] = "2025-01-01T00:00:10Z"
    return PodView.from_dict({"metadata": {"name": name, **meta}, "status": {"conditions": [cond]}})


def test_only_a_live_pod_the_scheduler_ruled_unschedulable_is_unplaced() -> None:
    verdict = unplaced(_pod("a"))
    assert verdict is not None
    assert (verdict.pod, verdict.message) == ("a", "no room for a")
    assert verdict.since is not None
    assert unplaced(_pod("a", reason="SchedulingGated")) is None
    assert unplaced(_pod("a", status="True", reason="")) is None
    assert unplaced(_pod("a", deletionTimestamp="2025-01-01T00:00:20Z")) is None
    assert unplaced(None) is None


def test_of_a_gang_the_lowest_name_is_reported_every_time() -> None:
    pods = [_pod("g-1"), _pod("g-0", status="True", reason=""), _pod("g-2")]
    chosen = first_unplaced(pods)
    assert chosen is not None
    assert chosen.name == "g-1"
    assert first_unplaced(list(reversed(pods))) == chosen
    assert first_unplaced([]) is None


def test_the_failure_message_carries_the_schedulers_words() -> None:
    assert (
        unschedulable_failure_message("0/4 nodes are available") == "Unschedulable: 0/4 nodes are available"
    )
    assert unschedulable_failure_message("") == "Unschedulable"
