"""Crash injection: the controller dies between any two actions; a fresh planner with only API state
continues and reaches the same end, never creating or deleting anything twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, converged, end_state


def _at_most_one_surge(s: Sim) -> None:
    idx = [n.split("-")[3] for n in s.live_pods()]
    if len(idx) - len(set(idx)) > 1:
        raise InvariantError(f"more than one Instance surging: {s.live_pods()}")


def _surge_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """Create 2 Instances, roll a runtime change with maxSurge 1, scale to 1."""
    sim = Sim()
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}
    sim.apply_replica(base_replica(replicas=2, lifecycle=lc))
    d = Driver(sim, crash_at=crash_at)
    d.extra_checks.append(_at_most_one_surge)  # lesson 10: a restart never releases the whole budget
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    d.floor = lambda s: 2
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    d.floor = lambda s: None
    sim.update_spec(replicas=1)
    d.run(lambda s: converged(s) and len(s.rows()) == 1 and len(s.live_pods()) == 1)
    return d, end_state(sim)


def _recreate_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """Three Instances rolled by RecreatePod with maxUnavailable 1, then deleted."""
    sim = Sim()
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim.apply_replica(base_replica(replicas=3, lifecycle=lc))
    d = Driver(sim, crash_at=crash_at)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 3)
    d.floor = lambda s: 2
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    state = end_state(sim)
    d.floor = lambda s: None
    sim.delete_replica()
    d.run(lambda s: s.replica is None)
    assert sim.pods == {}
    assert sim.service is None
    return d, state


def _superseded_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """A surge whose replacement already serves is superseded (v2 -> v3) at step Surge: the
    replacement leaves rotation, is deleted, the row resets and re-surges to v3."""
    sim = Sim()
    sim.apply_replica(base_replica(minReadySeconds=60))
    d = Driver(sim, crash_at=crash_at)
    d.run(converged)
    d.floor = lambda s: 1
    sim.image = "vllm:v2"
    d.run(
        lambda s: (
            "llama-pool-engine-0-default-1" in s.pods and s.gate_of("llama-pool-engine-0-default-1") == "True"
        )
    )
    sim.image = "vllm:v3"
    v3 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v3)
    return d, end_state(sim)


def _baseline(scenario: Callable[[frozenset[int]], tuple[Driver, Any]]) -> tuple[int, Any]:
    d, state = scenario(frozenset())
    return d.actions_applied, state


SURGE_TOTAL, SURGE_END = _baseline(_surge_scenario)
RECREATE_TOTAL, RECREATE_END = _baseline(_recreate_scenario)
SUPERSEDED_TOTAL, SUPERSEDED_END = _baseline(_superseded_scenario)


@pytest.mark.parametrize("k", range(1, SUPERSEDED_TOTAL + 1))
def test_crash_after_any_action_of_a_superseded_surge_reaches_the_same_end(k: int) -> None:
    _, state = _superseded_scenario(frozenset({k}))
    assert state == SUPERSEDED_END


@pytest.mark.parametrize("k", range(1, SURGE_TOTAL + 1))
def test_crash_after_any_action_of_a_surge_rollout_reaches_the_same_end(k: int) -> None:
    _, state = _surge_scenario(frozenset({k}))
    assert state == SURGE_END


@settings(
    derandomize=True,
    database=None,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.sets(st.integers(1, RECREATE_TOTAL), min_size=1, max_size=5))
def test_repeated_crashes_during_recreate_rollout_and_teardown(points: set[int]) -> None:
    _, state = _recreate_scenario(frozenset(points))
    assert state == RECREATE_END


def test_scenarios_are_not_trivial() -> None:
    assert SURGE_TOTAL > 30
    assert RECREATE_TOTAL > 30
    assert SUPERSEDED_TOTAL > 20


@settings(
    derandomize=True,
    database=None,
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.sets(st.integers(1, SURGE_TOTAL), min_size=2, max_size=6))
def test_repeated_crashes_during_surge_rollout_and_scale_down(points: set[int]) -> None:
    _, state = _surge_scenario(frozenset(points))
    assert state == SURGE_END


def _retry_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """A revision fails once, its retry succeeds: the block goes when the Instance promotes on it."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    d = Driver(sim, crash_at=crash_at)
    d.run(converged)
    sim.behaviour["vllm:v2"] = "crash"
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: bool(s.status.get("retryBlocks")), limit=600)
    sim.behaviour["vllm:v2"] = "ok"
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2, limit=900)
    return d, (*end_state(sim), "retryBlocks" in sim.status)


RETRY_TOTAL, RETRY_END = _baseline(_retry_scenario)


@pytest.mark.parametrize("k", range(1, RETRY_TOTAL + 1))
def test_crash_after_any_action_of_a_retried_revision_reaches_the_same_end(k: int) -> None:
    _, state = _retry_scenario(frozenset({k}))
    assert state == RETRY_END
    assert state[-1] is False  # the promotion answered the block
