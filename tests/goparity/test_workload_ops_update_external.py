"""OME's ``workload/ops/update_external_test.go``: superseded-revision wreckage swept from an Instance.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_external_test.go`` @ 4dfb96b1 (4,077
characters, the one stored version, read whole), over ``ops/cleanup.go`` ``CleanupWreckage`` and
``alienRevisionPods`` (ae683e3f, the one stored version, read whole; the newer
``deleteSupersededRevisionPods`` it calls in later ``update.go`` versions takes a serving pod out of
rotation first and deletes it on a later pass, which is what the test pins). Go calls
``CleanupWreckage`` directly on a Ready Instance and a live pod whose ``ome.io/revision-hash`` names
neither the Instance's running revision nor the roll target. The workload pass reaches it only for an
Instance the update trigger declined (``EvaluateWreckage``: the corrective roll-back, roll target =
running revision), where the wreckage ``cleanup.go`` names is "the dead pod an exhausted attempt toward a
superseded revision left behind (e.g. parked at the surge ordinal)". Ours builds that state in the
simulated world: one Instance Ready on the current revision, and a pod of Instance 0 at ordinal 1 whose
revision hash is a third one, serving or not; then planner passes.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from omereconcile.actions import DeletePod, SetServingGate
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_external_test.go @ 4dfb96b1"
SOURCE = "llama-pool-engine-0-default-0"
ALIEN = "llama-pool-engine-0-default-1"


def _with_alien(serving: bool) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    source = sim.pods[SOURCE]
    obj = copy.deepcopy(source.obj)
    obj["metadata"].update(name=ALIEN, uid="alien-uid")
    obj["metadata"]["labels"].update({"ome.io/pod-ordinal": "1", "ome.io/revision-hash": "bbbbbbbb"})
    if not serving:
        for cond in obj["status"]["conditions"]:
            if cond["type"] == "Ready" or cond["type"].startswith("ome.io/"):
                cond["status"] = "False"
    sim.pods[ALIEN] = replace(source, obj=obj)
    assert (sim.gate_of(ALIEN) == "True") is serving
    return sim, driver


def _acts_on_alien(driver: Driver) -> list[str]:
    plan = driver.one_pass()
    driver.sim.advance(1)
    return [
        type(a).__name__
        for a in plan.actions
        if isinstance(a, DeletePod | SetServingGate) and a.name == ALIEN
    ]


def test_serving_alien_leaves_rotation_before_it_is_deleted() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_external_test.go @ 4dfb96b1,
    TestCleanupWreckage_ServingAlienLeavesRotationBeforeItIsDeleted: a serving alien is taken out of
    rotation first and survives that pass; the next pass deletes it. The serving source is not
    touched."""
    sim, driver = _with_alien(serving=True)
    assert _acts_on_alien(driver) == ["SetServingGate"], GO
    assert ALIEN in sim.pods, GO
    assert sim.gate_of(ALIEN) == "False", GO
    assert _acts_on_alien(driver) == ["DeletePod"], GO
    assert sim.gate_of(SOURCE) == "True"
    assert sim.rows()[0]["phase"] == "Ready"


def test_unrouted_alien_is_deleted_immediately() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_external_test.go @ 4dfb96b1,
    TestCleanupWreckage_UnroutedAlienIsDeletedImmediately: an alien that was never in rotation has
    nothing to wait for: it is deleted in the first pass."""
    sim, driver = _with_alien(serving=False)
    assert _acts_on_alien(driver) == ["DeletePod"], GO
    assert sim.gate_of(SOURCE) == "True"
