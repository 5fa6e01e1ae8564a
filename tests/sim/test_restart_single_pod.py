"""A single-pod Instance under ``restartPolicy: RecreateInstanceOnPodRestart`` that loses its pod is
published ``Pending`` (its running revision kept), then restarted at the next incarnation.

Go: ome-projects/ome ``inferencereplica/status_test.go`` @ 8263d0c7
``TestAggregateAndWriteStatus_DemotesReadyRowWithoutPods`` ("restart-owned pod loss publishes
Pending") and the newest stored ``workload/ops/restart.go`` ``DetectRestartTriggerWithPods`` (a
``DemotedReady`` row is read by its pod count as Ready is: ``pod count 0 below desired 1``) and
``Restart`` (the incarnation bump). Under ``restartPolicy: None`` the same loss is rebuilt by a Create
at the same incarnation.
"""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

POD0 = "llama-pool-engine-0-default-0"


def _lose_pod0(policy: str) -> tuple[Sim, list[str]]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2, lifecycle={"restartPolicy": policy}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.user_delete(POD0)
    phases: list[str] = []
    for _ in range(200):
        driver.one_pass()
        sim.advance(0.5)
        phase = sim.rows()[0]["phase"]
        if not phases or phases[-1] != phase:
            phases.append(phase)
        if converged(sim) and phase == "Ready" and len(phases) > 1:
            break
    return sim, phases


def test_recreate_instance_demotes_then_restarts_at_the_next_incarnation() -> None:
    sim, phases = _lose_pod0("RecreateInstanceOnPodRestart")
    assert phases == ["Ready", "Pending", "Restarting", "Ready"]
    row = sim.rows()[0]
    assert (row["phase"], row["incarnation"]) == ("Ready", 2)
    (trigger,) = [e for e in sim.events if e.event_reason == "RestartTriggered"]
    assert "pod count 0 below desired 1 (incarnation=2)" in trigger.message
    assert sim.rows()[1]["incarnation"] == 1  # the other Instance is untouched


def test_policy_none_rebuilds_through_create_at_the_same_incarnation() -> None:
    sim, phases = _lose_pod0("None")
    assert phases == ["Ready", "Pending", "Creating", "Ready"]
    assert sim.rows()[0]["incarnation"] == 1
    assert not [e for e in sim.events if e.event_reason == "RestartTriggered"]
