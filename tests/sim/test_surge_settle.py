"""``SurgeDrainSettle`` as the newest Go reads it (``TestSurgeUpdate_PersistedSettleStepDeletesTheSource``):
a row journaled at that step has its drain confirmed, so the pass that reads it deletes the source; the
step is never written, and it counts against ``maxSurge`` like the other surge steps."""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, applied, converged

OLD = "llama-pool-engine-0-default-0"
NEW = "llama-pool-engine-0-default-1"


def _held_out(sim: Sim) -> bool:
    op = (sim.rows()[0].get("operation") or {}) if sim.rows() else {}
    return op.get("step") == "SurgeDrain" and sim.gate_of(OLD) == "False"


def _pass_until_held_out(sim: Sim, driver: Driver) -> None:
    """Pass by pass (the clock half a second apart) until the source is out of rotation, before the
    pass that would prove its drain."""
    for _ in range(200):
        driver.one_pass()
        if _held_out(sim):
            return
        sim.advance(0.5)
    raise AssertionError("the source never left rotation")


def _at_surge_drain(sim: Sim, driver: Driver) -> None:
    sim.update_spec(replicas=1, lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.image = "vllm:v2"
    _pass_until_held_out(sim, driver)


def _slices_still_route(sim: Sim) -> None:
    """EndpointSlices that still list the source as ready: no drain proof this pass."""
    sim.slices = [
        {
            "endpoints": [
                {"targetRef": {"kind": "Pod", "name": n}, "conditions": {"ready": True, "serving": True}}
                for n in (OLD, NEW)
            ]
        }
    ]


def test_surge_drain_waits_for_the_drain_proof(sim: Sim, driver: Driver) -> None:
    _at_surge_drain(sim, driver)
    _slices_still_route(sim)
    driver.one_pass()
    assert not sim.pods[OLD].obj["metadata"].get("deletionTimestamp")


def test_a_journaled_settle_step_deletes_the_source_at_once(sim: Sim, driver: Driver) -> None:
    _at_surge_drain(sim, driver)
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0]["operation"]["step"] = "SurgeDrainSettle"
    _slices_still_route(sim)
    deletes = len(applied(driver, "DeletePod"))
    driver.one_pass()
    assert sim.pods[OLD].obj["metadata"].get("deletionTimestamp")
    assert len(applied(driver, "DeletePod")) == deletes + 1
    driver.run(lambda s: converged(s) and s.live_pods() == [NEW])


def test_the_settle_step_is_never_written(sim: Sim, driver: Driver) -> None:
    sim.update_spec(lifecycle={"updateStrategy": {"inPlaceUpdateStrategy": {"gracePeriodSeconds": 30}}})
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.image = "vllm:v2"
    driver.run(lambda s: converged(s) and s.live_pods() == [NEW])
    steps = {
        (r.get("operation") or {}).get("step")
        for _, a in applied(driver, "WriteStatus")
        for r in a.status.get("instanceStatuses") or []  # type: ignore[attr-defined]
    }
    assert "SurgeDrain" in steps
    assert "SurgeDrainSettle" not in steps


def test_a_settle_row_and_its_replacement_hold_the_surge_slot(driver: Driver) -> None:
    sim = driver.sim
    sim.update_spec(replicas=2, lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    sim.image = "vllm:v2"
    _pass_until_held_out(sim, driver)
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0]["operation"]["step"] = "SurgeDrainSettle"
    _slices_still_route(sim)
    driver.one_pass()
    # Instance 1 may not start while Instance 0's settle row holds the only surge slot.
    assert sim.rows()[1].get("operation") is None
