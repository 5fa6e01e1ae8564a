"""The seed's Steps 1–3 in the simulated world."""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, converged, ready
from omerender import constants as c


def test_step1_one_instance_ready_and_serving(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]
    assert sim.gate_of("llama-pool-engine-0-default-0") == "True"
    assert sim.service is not None
    assert sim.service["metadata"]["name"] == "llama-pool-engine-headless"
    assert sim.service["spec"]["clusterIP"] == "None"
    assert sim.service["spec"]["publishNotReadyAddresses"] is True
    assert c.TEARDOWN_FINALIZER in sim.replica["metadata"]["finalizers"]  # type: ignore[index]
    st = sim.status
    assert st["replicas"] == st["readyReplicas"] == st["availableReplicas"] == st["servingReplicas"] == 1
    assert (
        st["labelSelector"]
        == "component=engine,ome.io/inferenceservice=llama-pool,ome.io/managed-by=OMENative,"
        "ome.io/runner in (default,leader)"
    )
    assert st["observedGeneration"] == 1
    assert st["currentRevision"] == st["updateRevision"]
    assert sim.condition("Ready")["reason"] == "AllInstancesReady"  # type: ignore[index]
    assert sim.condition("Ready")["message"] == "1/1 Instances Ready"  # type: ignore[index]
    row = sim.rows()[0]
    assert (row["index"], row["incarnation"], row["phase"], row.get("activeOrdinal", 0)) == (0, 1, "Ready", 0)
    assert "operation" not in row


def test_settled_replica_makes_no_writes(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    for _ in range(3):
        sim.advance(30)
        p = driver.one_pass()
        assert p.actions == (), p.describe()


def test_step3_scale_to_two_takes_index_one(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    sim.update_spec(replicas=2)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    assert sim.live_pods() == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"]
    assert [r["index"] for r in sim.rows()] == [0, 1]
    assert sim.status["availableReplicas"] == 2


def test_replicas_unset_or_zero_runs_one(sim: Sim, driver: Driver) -> None:
    sim.update_spec(replicas=0)
    driver.run(converged)
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]


def test_scale_down_keeps_ready_lowest_and_drains_first(sim: Sim, driver: Driver) -> None:
    sim.update_spec(replicas=3)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 3)
    sim.update_spec(replicas=1)
    seen_gate_false = False

    def until(s: Sim) -> bool:
        nonlocal seen_gate_false
        return ready(s) and s.live_pods() == ["llama-pool-engine-0-default-0"] and len(s.rows()) == 1

    # Every delete of a scale-down is preceded by the gate going False on that pod.
    driver.run(until)
    deletes = [a for p in driver.plans for a in p.actions if type(a).__name__ == "DeletePod"]
    gates = [
        a for p in driver.plans for a in p.actions if type(a).__name__ == "SetServingGate" and not a.status
    ]  # type: ignore[attr-defined]
    assert (
        {d.name for d in deletes}
        == {g.name for g in gates}
        == {  # type: ignore[attr-defined]
            "llama-pool-engine-1-default-0",
            "llama-pool-engine-2-default-0",
        }
    )
    del seen_gate_false


def test_headless_service_drift_is_corrected(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    assert sim.service is not None
    sim.service["spec"]["publishNotReadyAddresses"] = False
    sim.service["spec"]["ports"] = [{"port": 80}]
    p = driver.one_pass()
    assert [type(a).__name__ for a in p.actions] == ["PatchService"]
    assert sim.service["spec"]["publishNotReadyAddresses"] is True
    assert "ports" not in sim.service["spec"]
    assert driver.one_pass().actions == ()
