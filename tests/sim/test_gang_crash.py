"""Crash injection for gang Instances: the controller dies after any single action of a gang surge
roll, an abandoned gang surge, or a restart and teardown; a fresh planner reaches the same end with
no pod or PodGroup created or deleted twice (the simulator records any such write as a violation).

A crash between the creates of one gang leaves a committed Instance with a member missing and one
standing, which is rebuilt as a whole at the next incarnation (``ops/restart.go``
``instanceLostGangMember``); the end states are therefore compared without incarnations, and each
scenario asserts the incarnation steps it causes itself."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, applied, baseline, converged, end_state


def _gang_state(sim: Sim) -> tuple[object, ...]:
    pods, rows, revision = end_state(sim)
    rows = tuple((r[0], *r[2:]) for r in rows)  # type: ignore[attr-defined,index]
    return (pods, rows, revision, tuple(sorted(sim.pod_groups)))


def _incarnations(sim: Sim) -> dict[int, int]:
    return {r["index"]: r["incarnation"] for r in sim.rows()}


def _no_second_gang_surge(s: Sim) -> None:
    if s.replica is not None and len(s.rows()) > 3:
        raise InvariantError(f"more than one gang surge at once: {[r['index'] for r in s.rows()]}")


def _surge_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """Two gangs (leader + 1 worker) roll to v2 with maxSurge 1, then scale to 1."""
    sim = Sim(workers=1)
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}
    sim.apply_replica(base_replica(replicas=2, lifecycle=lc))
    d = Driver(sim, crash_at=crash_at)
    d.extra_checks.append(_no_second_gang_surge)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    d.floor = lambda s: 2
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    d.floor = lambda s: None
    sim.update_spec(replicas=1)
    d.run(lambda s: converged(s) and len(s.rows()) == 1 and len(s.pod_groups) == 1)
    return d, _gang_state(sim)


def _abandon_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """A gang surge whose worker crash-loops is abandoned; the fixed revision then rolls."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    d = Driver(sim, crash_at=crash_at)
    d.run(converged)
    d.floor = lambda s: 1
    sim.worker_behaviour["vllm:v2"] = "crash"
    sim.image = "vllm:v2"
    d.run(lambda s: bool(s.status.get("retryBlocks")) and len(s.rows()) == 1, limit=900)
    sim.worker_behaviour["vllm:v2"] = "ok"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2, limit=900)
    return d, _gang_state(sim)


def _restart_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """A worker is lost and the gang restarts; then the replica is deleted."""
    sim = Sim(workers=2)
    sim.apply_replica(base_replica(replicas=2))
    d = Driver(sim, crash_at=crash_at)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    before = _incarnations(sim)
    del sim.pods["llama-pool-engine-1-worker-1"]
    d.run(lambda s: converged(s) and _incarnations(s)[1] == before[1] + 1)
    assert _incarnations(sim)[0] == before[0]
    state = _gang_state(sim)
    sim.delete_replica()
    d.run(lambda s: s.replica is None)
    assert sim.pods == {}
    assert sim.pod_groups == {}
    return d, state


LOSS_AT: list[int] = []  # actions applied before the loss, per run of the scenario


def _lost_member_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """A forming gang (its pods slow to boot) loses its worker and is rebuilt whole."""
    sim = Sim(workers=1, ready_delay=60.0)
    sim.apply_replica(base_replica(replicas=1))
    d = Driver(sim, crash_at=crash_at)
    d.run(
        lambda s: (
            len(s.live_pods()) == 2
            and s.rows()[0]["phase"] == "Creating"
            and s.rows()[0]["operation"]["type"] == "Create"
            and s.rows()[0].get("podCount") == 2  # published: a pass has seen both members
        )
    )
    before = _incarnations(sim)[0]
    LOSS_AT.append(d.actions_applied)
    del sim.pods["llama-pool-engine-0-worker-0"]
    d.run(lambda s: converged(s) and _incarnations(s)[0] == before + 1)
    # Announced at most once; a crash between the journal write and the event loses the event.
    assert len([e for e in sim.events if e.event_reason == "RestartTriggered"]) <= 1
    return d, _gang_state(sim)


def _rebuild_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """A replacement gang loses a member after the hand-over and is rebuilt as the next attempt."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1, minReadySeconds=30))
    d = Driver(sim, crash_at=crash_at)
    d.run(converged)
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: any((r.get("operation") or {}).get("step") == "SurgeDrain" for r in s.rows()), limit=300)
    sim.pods.pop("llama-pool-engine-1-worker-0", None)
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2, limit=900)
    return d, _gang_state(sim)


SURGE_TOTAL, SURGE_END = baseline(_surge_scenario)
REBUILD_TOTAL, REBUILD_END = baseline(_rebuild_scenario)
ABANDON_TOTAL, ABANDON_END = baseline(_abandon_scenario)
RESTART_TOTAL, RESTART_END = baseline(_restart_scenario)
LOST_TOTAL, LOST_END = baseline(_lost_member_scenario)
# Its crash points are those after the loss: a crash while the gang is still being created restarts
# it before the loss (test_a_crash_between_the_creates_of_a_gang_completes_the_create).
LOST_FROM = LOSS_AT[-1]


def test_gang_scenarios_are_not_trivial() -> None:
    assert SURGE_TOTAL > 40
    assert ABANDON_TOTAL > 20
    assert RESTART_TOTAL > 20
    assert REBUILD_TOTAL > 20
    assert LOST_TOTAL - LOST_FROM > 10


SCENARIOS = {
    "gang surge roll": (_surge_scenario, SURGE_TOTAL, SURGE_END),
    "abandoned gang surge": (_abandon_scenario, ABANDON_TOTAL, ABANDON_END),
    "gang restart and teardown": (_restart_scenario, RESTART_TOTAL, RESTART_END),
    "replacement lost after the hand-over": (_rebuild_scenario, REBUILD_TOTAL, REBUILD_END),
    "gang member lost before Ready": (_lost_member_scenario, LOST_TOTAL, LOST_END),
}
FIRST = {"gang member lost before Ready": LOST_FROM + 1}
POINTS = [
    (name, k) for name, (_, total, _) in SCENARIOS.items() for k in range(FIRST.get(name, 1), total + 1)
]


@pytest.mark.parametrize(("scenario", "k"), POINTS)
def test_crash_after_any_single_action_reaches_the_same_end(scenario: str, k: int) -> None:
    run, _, end = SCENARIOS[scenario]
    _, state = run(frozenset({k}))
    assert state == end


# Deterministic examples (the suite is reproducible), no per-example deadline (a scenario takes a while).
REPEATED = settings(
    derandomize=True,
    database=None,
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@REPEATED
@given(st.sets(st.integers(1, SURGE_TOTAL), min_size=2, max_size=6))
def test_repeated_crashes_during_a_gang_surge_roll(points: set[int]) -> None:
    _, state = _surge_scenario(frozenset(points))
    assert state == SURGE_END


def test_a_crash_between_the_creates_of_a_gang_rebuilds_it_whole() -> None:
    """The planner dies after the first pod create of a gang whose Create is journaled at
    ``CreatePods``: the next planner reads the committed Create short of a member with one standing,
    and under ``RecreateInstanceOnPodRestart`` rebuilds the gang whole at incarnation 2 (one
    ``RestartTriggered``; the lone member deleted, both created anew), as OME's Go does
    (``ops/restart.go`` ``instanceLostGangMember``: "Create commits CreatePods before issuing Pod
    creates, so an interrupted partial create is safely repaired as a whole Instance"). Until goG2 ours
    created the missing member beside the first at incarnation 1."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    clean = Driver(sim)
    clean.run(converged)
    first_create = next(i for i, (_, a) in enumerate(clean.log, 1) if type(a).__name__ == "CreatePod")

    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    d = Driver(sim, crash_at=frozenset({first_create}))
    d.run(converged)
    (row,) = sim.rows()
    assert (row["phase"], row["incarnation"]) == ("Ready", 2)
    restarts = [e.message for e in sim.events if e.event_reason == "RestartTriggered"]
    assert len(restarts) == 1
    assert "gang member lost: 1 of 2 pods present" in restarts[0]
    assert len(applied(d, "CreatePod")) == 3
    assert len(applied(d, "DeletePod")) == 1
