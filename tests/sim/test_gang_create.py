"""Multi-pod (gang) Instances: PodGroup before pods, one pass for the whole gang, gates together,
status counts only whole gangs, scale-down and teardown remove the PodGroup after the pods."""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omerender import constants as c

LEADER = "llama-pool-engine-{i}-leader-0"
WORKER = "llama-pool-engine-{i}-worker-0"


def gang_sim(replicas: int = 2, workers: int = 1, **spec: Any) -> Sim:
    sim = Sim(workers=workers)
    sim.apply_replica(base_replica(replicas=replicas, **spec))
    return sim


def gang_pods(*indices: int) -> list[str]:
    return sorted(n.format(i=i) for i in indices for n in (LEADER, WORKER))


@pytest.fixture
def gsim() -> Sim:
    return gang_sim()


def test_gang_instances_come_up_whole_with_their_pod_groups(gsim: Sim) -> None:
    d = Driver(gsim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    assert gsim.live_pods() == gang_pods(0, 1)
    assert sorted(gsim.pod_groups) == ["llama-pool-engine-0", "llama-pool-engine-1"]
    assert gsim.pod_groups["llama-pool-engine-0"]["spec"]["minMember"] == 2
    # Every pod of an Instance is created in one pass, right after its PodGroup.
    first = next(p for p in d.plans if any(type(a).__name__ == "CreatePod" for a in p.actions))
    kinds = [(type(a).__name__, getattr(a, "name", "")) for a in first.actions]
    creates = [k for k in kinds if k[0] in ("CreatePodGroup", "CreatePod")]
    assert creates == [
        ("CreatePodGroup", "llama-pool-engine-0"),
        ("CreatePod", LEADER.format(i=0)),
        ("CreatePod", WORKER.format(i=0)),
        ("CreatePodGroup", "llama-pool-engine-1"),
        ("CreatePod", LEADER.format(i=1)),
        ("CreatePod", WORKER.format(i=1)),
    ]
    rows = gsim.rows()
    assert [(r["index"], r["phase"], r["podCount"], r["servingPodCount"]) for r in rows] == [
        (0, "Ready", 2, 2),
        (1, "Ready", 2, 2),
    ]
    # Each gang enters rotation in one pass: both gates go True in the same plan.
    for i in (0, 1):
        names = {LEADER.format(i=i), WORKER.format(i=i)}
        plans = [
            p
            for p in d.plans
            if any(type(a).__name__ == "SetServingGate" and a.status and a.name in names for a in p.actions)  # type: ignore[attr-defined]
        ]
        assert len(plans) == 1
        assert {a.name for a in plans[0].actions if type(a).__name__ == "SetServingGate"} >= names  # type: ignore[attr-defined]
    created = [e.message for e in gsim.events if e.event_reason == "InstanceCreated"]
    assert created[0] == "OMENative component=engine instance=0 materialized; 2 pod(s) requested"


def test_gates_flip_together_only_when_every_pod_is_ready(gsim: Sim) -> None:
    gsim.worker_behaviour["vllm:v1"] = "never"  # the worker never becomes ready
    d = Driver(gsim)
    for _ in range(30):
        d.one_pass()
        gsim.advance(1.0)
    # The leader is ContainersReady, but its gang is not: no gate is written True.
    assert gsim.gate_of(LEADER.format(i=0)) is None
    assert all(not a.status for _, a in applied(d, "SetServingGate"))  # type: ignore[attr-defined]
    assert gsim.status["readyReplicas"] == 0
    assert gsim.status["servingReplicas"] == 0
    assert [r["podCount"] for r in gsim.rows()] == [2, 2]  # each leader ContainersReady, its worker not
    ready = gsim.condition("Ready")
    assert ready is not None
    assert ready["status"] != "True"


def test_scale_down_drains_the_whole_gang_then_its_pod_group(gsim: Sim) -> None:
    d = Driver(gsim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    d.floor = lambda s: 1
    gsim.update_spec(replicas=1)
    d.run(lambda s: converged(s) and len(s.rows()) == 1 and not s.pod_groups.get("llama-pool-engine-1"))
    assert gsim.live_pods() == gang_pods(0)
    assert sorted(gsim.pod_groups) == ["llama-pool-engine-0"]
    deletes = [t for t, a in d.log if type(a).__name__ == "DeletePod" and "-1-" in a.name]  # type: ignore[attr-defined]
    group_delete = [t for t, a in applied(d, "DeletePodGroup")]
    assert len(deletes) == 2
    assert len(group_delete) == 1
    assert max(deletes) < group_delete[0]


def test_teardown_waits_for_pod_groups_and_counts_them() -> None:
    sim = gang_sim(replicas=1)
    d = Driver(sim)
    d.run(lambda s: converged(s))
    sim.delete_replica()
    d.one_pass()
    blocked = [e.message for e in sim.events if e.event_reason == "TeardownBlocked"]
    assert blocked
    assert "2 owned pod(s) and 1 owned PodGroup(s) remain" in blocked[-1]
    d.run(lambda s: s.replica is None)
    assert sim.pods == {}
    assert sim.pod_groups == {}
    # PodGroups are not watched: the pass that deletes one asks to look again by itself.
    deleting = [p for p in d.plans if any(type(a).__name__ == "DeletePodGroup" for a in p.actions)]
    assert [p.requeue_after for p in deleting] == [1.0]


def test_status_counts_an_instance_only_when_all_its_pods_are_ready(gsim: Sim) -> None:
    d = Driver(gsim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    st = gsim.status
    assert (st["replicas"], st["readyReplicas"], st["servingReplicas"], st["availableReplicas"]) == (
        2,
        2,
        2,
        2,
    )
    ready = gsim.condition("Ready")
    assert ready is not None
    assert (ready["status"], ready["reason"]) == ("True", "AllInstancesReady")
    assert gsim.pods[WORKER.format(i=0)].obj["metadata"]["labels"][c.LABEL_POD_GROUP] == "llama-pool-engine-0"


def _gang_condition(sim: Sim) -> tuple[str, str, str]:
    cond = sim.condition("GangSchedulingUnavailable")
    assert cond is not None
    return cond["status"], cond["reason"], cond["message"]


def test_without_the_pod_group_crd_gangs_still_come_up_and_the_condition_says_so() -> None:
    sim = gang_sim()
    sim.gang_scheduling = False
    Driver(sim).run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    assert sim.live_pods() == gang_pods(0, 1)
    assert sim.pod_groups == {}
    assert _gang_condition(sim) == (
        "True",
        "PodGroupCRDNotInstalled",
        "scheduler-plugins scheduling.x-k8s.io/v1alpha1 PodGroup CRD is not installed; multi-pod Instances "
        "may schedule partially",
    )


def test_with_the_crd_or_a_single_pod_replica_gang_scheduling_is_not_unavailable(gsim: Sim, sim: Sim) -> None:
    for world in (gsim, sim):
        Driver(world).run(converged)
        assert _gang_condition(world) == (
            "False",
            "GangSchedulingAvailable",
            "Gang scheduling is available or not required",
        )
