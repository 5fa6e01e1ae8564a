"""A target that moves mid-operation, as OME's Go handles it: no pod with its serving gate True is
deleted without leaving rotation first, and an Instance's only serving pod is never thrown away.

The sim itself records a violation for any delete of a pod whose gate is True (``omereconcile.simulate.cluster.Sim.apply``).
"""

from __future__ import annotations

from typing import Any

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, applied, converged, rolled_back

SURGE_SLOT = "llama-pool-engine-0-default-1"
SOURCE = "llama-pool-engine-0-default-0"


def _rolled(sim: Sim, rev: str) -> bool:
    return converged(sim) and sim.status["currentRevision"] == rev


def _op(sim: Sim) -> dict[str, Any]:
    return sim.rows()[0].get("operation") or {}


def _slow() -> tuple[Sim, Driver]:
    """A one-Instance replica whose pods stay short of Available for ten minutes after Ready."""
    sim = Sim()
    sim.apply_replica(base_replica(minReadySeconds=600))
    return sim, Driver(sim)


def _serving_surge_at_step_surge(sim: Sim, driver: Driver) -> tuple[str, str]:
    """v1 converged, then v2 rolling: run until the replacement is in rotation but, held by the long
    ``minReadySeconds``, still at step Surge beside its source."""
    driver.run(converged)
    v1 = str(sim.status["currentRevision"])
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: SURGE_SLOT in s.pods and s.gate_of(SURGE_SLOT) == "True")
    assert _op(sim)["step"] == "Surge"
    assert _op(sim)["targetRevision"] == v2
    return v1, v2


def _order(driver: Driver, name: str) -> tuple[list[int], list[int]]:
    """Positions in the applied log of the gate-False writes and the deletes of pod ``name``."""
    offs, dels = [], []
    for i, (_, act) in enumerate(driver.log):
        if getattr(act, "name", None) != name:
            continue
        kind = type(act).__name__
        if kind == "SetServingGate" and not act.status:  # type: ignore[attr-defined]
            offs.append(i)
        elif kind == "DeletePod":
            dels.append(i)
    return offs, dels


def test_superseded_surge_unroutes_its_serving_replacement_then_deletes_it_then_resets() -> None:
    """update_surge.go surgeUpdate, the superseded-target redirect while the source stands."""
    sim, driver = _slow()
    v1, v2 = _serving_surge_at_step_surge(sim, driver)
    driver.floor = lambda s: 1
    sim.image = "vllm:v3"
    v3 = sim.render().name  # type: ignore[union-attr]
    start = len(driver.log)
    driver.run(lambda s: _rolled(s, v3))
    offs, dels = _order(driver, SURGE_SLOT)
    assert offs
    assert dels
    assert start <= offs[0] < dels[0]
    # Out of rotation and deleted in different passes (the endpoint controllers get a window).
    assert driver.log[offs[0]][0] < driver.log[dels[0]][0]
    # The row is reset only once the replacement is gone (its name is free for the next surge).
    reset = next(
        i for i, (_, a) in enumerate(driver.log) if getattr(a, "event_reason", "") == "SurgeAbandoned"
    )
    assert dels[0] < reset
    assert (driver.log[reset][0] - driver.log[dels[0]][0]).total_seconds() >= sim.delete_grace
    abandoned = [e.message for e in sim.events if e.event_reason == "SurgeAbandoned"]
    assert abandoned == [
        f"OMENative component=engine instance=0 abandoned superseded surge to {v2}; re-surging toward {v3}"
    ]
    assert sim.rows()[0]["runningRevision"] == v3
    assert v1 != v3


def test_superseded_surge_back_to_the_running_revision_stays_on_it() -> None:
    sim, driver = _slow()
    v1, v2 = _serving_surge_at_step_surge(sim, driver)
    driver.floor = lambda s: 1
    sim.update_spec(pacing={"rollbackToRevision": v1})
    driver.run(lambda s: rolled_back(s, v1))
    assert sim.live_pods() == [SOURCE]
    assert sim.rows()[0]["runningRevision"] == v1
    abandoned = [e.message for e in sim.events if e.event_reason == "SurgeAbandoned"]
    assert abandoned == [
        f"OMENative component=engine instance=0 abandoned surge to withdrawn revision {v2}; "
        f"the Instance stays on revision {v1}"
    ]


def test_superseded_surge_whose_source_is_gone_keeps_and_promotes_its_ready_replacement() -> None:
    """The replacement is the Instance's only serving pod: it keeps its pin and promotes, then the
    newer target rolls from there."""
    sim, driver = _slow()
    _, v2 = _serving_surge_at_step_surge(sim, driver)
    del sim.pods[SOURCE]  # the source is lost (node gone) while the replacement already serves
    sim.tick()
    driver.floor = lambda s: 1

    def replacement_kept(s: Sim) -> None:
        row = s.rows()[0]
        if row.get("activeOrdinal", 0) == 0 and SURGE_SLOT not in s.pods:
            raise InvariantError("the only serving pod was deleted")

    driver.extra_checks.append(replacement_kept)
    sim.image = "vllm:v3"
    v3 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.rows()[0].get("runningRevision") == v2)
    row = sim.rows()[0]
    assert (row["activeOrdinal"], row["runningRevision"]) == (1, v2)
    assert "SurgeAbandoned" not in sim.event_reasons()
    assert f"OMENative component=engine instance=0 surge to revision {v2} complete (activeOrdinal=1)" in [
        e.message for e in sim.events
    ]
    driver.extra_checks.clear()
    driver.run(lambda s: _rolled(s, v3), limit=7200)
    assert sim.live_pods() == [SOURCE]


def _creating_with_min_ready(sim: Sim, driver: Driver) -> str:
    """A new replica whose only pod is in rotation but not yet Available (minReadySeconds)."""
    driver.run(lambda s: SOURCE in s.pods and s.gate_of(SOURCE) == "True")
    row = sim.rows()[0]
    assert (row["phase"], _op(sim)["type"]) == ("Creating", "Create")
    return str(_op(sim)["targetRevision"])


def test_superseded_create_one_promote_away_finishes_at_its_revision_then_surges() -> None:
    """create.go createFilteredBatched: a fully ready attempt is not retired."""
    sim, driver = _slow()
    v1 = _creating_with_min_ready(sim, driver)
    driver.floor = lambda s: 1
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.rows()[0].get("runningRevision") == v1, limit=7200)
    assert "CreateAttemptSuperseded" not in sim.event_reasons()
    assert "OMENative component=engine instance=0 is Ready (1 pod(s) serving)" in [
        e.message for e in sim.events
    ]
    driver.run(lambda s: _rolled(s, v2), limit=7200)
    assert sim.live_pods() == [SURGE_SLOT]


def test_superseded_create_with_a_serving_pod_that_lost_readiness_drains_it_before_deleting() -> None:
    """Not one promote away (ContainersReady lost), so retired; its gate-True pod leaves rotation
    first and is deleted on a later pass (update.go deleteSupersededRevisionPods)."""
    sim, driver = _slow()
    v1 = _creating_with_min_ready(sim, driver)
    sim.pods[SOURCE].behaviour = "never"  # the container stops being ready; the gate is still True
    sim.tick()
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    start = len(driver.log)
    driver.run(lambda s: _rolled(s, v2), limit=7200)
    offs, dels = _order(driver, SOURCE)
    assert offs
    assert dels
    assert start <= offs[0] < dels[0]
    assert driver.log[offs[0]][0] < driver.log[dels[0]][0]
    retired = [e.message for e in sim.events if e.event_reason == "CreateAttemptSuperseded"]
    assert retired == [
        f"OMENative component=engine instance=0 retired the Create attempt pinned to {v1} and restarted it at {v2}"
    ]


def test_pause_brings_an_in_flight_surge_to_the_promote_bar_and_holds_the_drain(
    sim: Sim, driver: Driver
) -> None:
    driver.run(converged)
    driver.floor = lambda s: 1
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _op(s).get("step") == "Surge")
    sim.update_spec(paused=True)
    for _ in range(20):
        driver.one_pass()
        sim.advance(5)
    assert sim.gate_of(SURGE_SLOT) == "True"  # the replacement came up and entered rotation
    assert sim.gate_of(SOURCE) == "True"  # but the source was never taken out
    op = _op(sim)
    assert (op["step"], op["waiting"]) == ("Surge", "Paused")
    sim.update_spec(paused=False)
    driver.run(lambda s: _rolled(s, v2))


def test_recreate_budget_projects_in_flight_plus_starts_against_max_unavailable() -> None:
    """escalation/budget.go BudgetDenies: prior Updating (non-surge) rows + starts this pass + 1."""
    sim = Sim()
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 2}}}
    sim.apply_replica(base_replica(replicas=4, lifecycle=lc))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 4)
    most = 0

    def within_budget(s: Sim) -> None:
        nonlocal most
        n = sum(1 for r in s.rows() if r["phase"] == "Updating")
        most = max(most, n)
        if n > 2:
            raise InvariantError(f"{n} Instances recreating at once with maxUnavailable 2")

    driver.extra_checks.append(within_budget)
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert most == 2
    assert len(applied(driver, "CreatePod")) >= 4
