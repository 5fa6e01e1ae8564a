"""Crash injection for the in-place roll: the controller dies after any one action; a fresh planner
with only the API's state finishes the roll with the same end, every pod kept (same UID), the floor
held and no pod created or deleted."""

from __future__ import annotations

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged, end_state
from omerender.constants import ANNOTATION_IN_PLACE_IMAGE_TRANSITION as MARKER


def _in_place_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """Three Instances rolled in place by an image change with maxUnavailable 1."""
    sim = Sim()
    lc = {"updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxUnavailable": 1}}}
    sim.apply_replica(base_replica(replicas=3, lifecycle=lc))
    d = Driver(sim, crash_at=crash_at)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 3)
    uids = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    creates = len(applied(d, "CreatePod"))
    d.floor = lambda s: 2
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    assert {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()} == uids
    assert len(applied(d, "CreatePod")) == creates
    assert applied(d, "DeletePod") == []
    images = tuple(sorted((n, p.obj["spec"]["containers"][0]["image"]) for n, p in sim.pods.items()))
    return d, (*end_state(sim), images)


def _markers(driver: Driver) -> list[str]:
    pods = driver.sim.pods
    return [n for n, p in pods.items() if MARKER in (p.obj["metadata"].get("annotations") or {})]


_BASE_DRIVER, IN_PLACE_END = _in_place_scenario(frozenset())
IN_PLACE_TOTAL = _BASE_DRIVER.actions_applied


def test_the_scenario_is_not_trivial_and_clears_every_marker() -> None:
    assert IN_PLACE_TOTAL > 30
    assert _markers(_BASE_DRIVER) == []


@pytest.mark.parametrize("k", range(1, IN_PLACE_TOTAL + 1))
def test_crash_after_any_action_of_an_in_place_roll_reaches_the_same_end(k: int) -> None:
    d, state = _in_place_scenario(frozenset({k}))
    assert state == IN_PLACE_END
    # A crash between the promote and the marker's clear leaves the marker on the Ready pod, as the
    # newest Go accepts (the next roll's patch re-records it); at most that one pod carries it.
    assert len(_markers(d)) <= 1
