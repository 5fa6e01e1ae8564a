"""``operation.lastProgressAt`` beyond the start and the terminal-pod recycle, as OME stamps it.

Go (``workload/status``): ``StampSurgeDrainStep`` moves a surge from Surge to SurgeDrain and touches
``LastProgressAt``; the gang surge's source moves to SurgeDrain through ``StampStep(..., updateProgress
= true)``. So once the replacement serves, the row's ``lastProgressAt`` is the moment of that step, not the
operation's start.
"""

from __future__ import annotations

from sim_rolling import rolling_into
from test_gang_create import gang_sim

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time


def _on_step(sim: Sim, step: str) -> dict[str, str] | None:
    return next((r["operation"] for r in sim.rows() if r.get("operation", {}).get("step") == step), None)


def _stamps_the_drain_step(sim: Sim, driver: Driver) -> None:
    driver.run(lambda s: _on_step(s, "Surge") is not None, limit=600)
    surge = _on_step(sim, "Surge")
    assert surge is not None
    assert surge["lastProgressAt"] == surge["startedAt"]
    # The pass that moves the step writes it: record the clock of the first pass that sees SurgeDrain.
    seen_at = None
    for _ in range(2000):  # sim time, not wall time: bounded so a regression fails instead of hanging
        at = format_time(sim.now)
        driver.one_pass()
        if _on_step(sim, "SurgeDrain") is not None:
            seen_at = at
            break
        sim.advance(0.5)
    drain = _on_step(sim, "SurgeDrain")
    assert drain is not None
    assert drain["startedAt"] == surge["startedAt"]
    assert drain["lastProgressAt"] == seen_at
    assert drain["lastProgressAt"] > drain["startedAt"]


def test_a_surge_entering_surge_drain_touches_last_progress_at() -> None:
    sim, driver = rolling_into("ok")
    _stamps_the_drain_step(sim, driver)
    driver.run(converged)


def test_a_gang_surge_source_entering_surge_drain_touches_last_progress_at() -> None:
    sim = gang_sim(replicas=1, lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == len(s.rows()))
    driver.floor = lambda s: 1
    sim.image = "vllm:v2"
    _stamps_the_drain_step(sim, driver)
    driver.run(converged)
