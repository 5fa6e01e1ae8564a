"""OME's ``workload/gang/gang_test.go``: PodGroups per Instance, the GangSchedulingUnavailable condition,
and the ``MaybeNoGangScheduler`` advisory.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/gang/gang_test.go`` @ 9177c1b0 (the newer of two
stored versions, all 41,041 characters read), over ``gang/gang.go`` (``EnsurePodGroups``,
``EnsurePodGroupsWithTopology``, ``patchGangSchedulingCondition``, ``maybeWarnNoGangScheduler``,
``effectiveSchedulerName``; the same functions live in ``workload/podgroup`` in the newer layout, whose
own test file is counted in its row). Go calls ``EnsurePodGroups`` against a fake client; ours runs the
planner in the simulated world (which installs or withholds the PodGroup CRD: ``Sim.gang_scheduling``)
and reads the PodGroups, the ``GangSchedulingUnavailable`` condition and the events; the scheduler
precedence is :func:`omereconcile.planner.gang_advice.effective_scheduler_name`.

Not mappable (14 of 32): the topology-key tests (9: ``HoldsLivePodTopologyUntilGroupIsEmpty``,
``UpgradeAnnotatesLegacyTPUDerivedTopology``, ``UsesAPIReaderForTopologySafety``,
``LeaderOnlyTrustsExistingPodGroupTopology``, ``CRDMissingPreservesLiveTopology``,
``CRDMissingLeaderOnlyWithDesiredTopologyFailsClosed``, ``CRDMissingLeaderOnlyWithoutDesiredTopologyContinues``
and the two ``EnsureSurgePodGroup`` ones) derive the effective topology from the live pods' affinity
through a live reader — ours has no such derivation (``docs/goparity.md``, ``podgroup_test.go``'s
note); ``NilClientErrors``, ``ISVCGoneIsSafe`` and ``MaybeWarnNoGangScheduler_NilSafety`` are Go
wiring guards; the two dedup tests pin this older Go's process-wide memory (``maybeNoGangSchedulerSeen``),
which the newest ``gang/gang.go`` @ 4dfb96b1 replaced with the row's ``announced`` record, as ours
does (``test_workload_status_announced.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.planner.gang_advice import effective_scheduler_name
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/gang/gang_test.go @ 9177c1b0"


def _up(
    replicas: int = 1, workers: int = 0, gang_scheduling: bool = True, scheduler: str | None = None
) -> Sim:
    sim = Sim(workers=workers, gang_scheduling=gang_scheduling)
    spec: dict[str, Any] = {"replicas": replicas}
    if scheduler is not None:
        tmpl = {"containers": [{"name": "ome-container", "image": "vllm:v1"}], "schedulerName": scheduler}
        spec["runners"] = [{"name": "leader", "size": 1, "template": {"spec": tmpl}}]
    sim.apply_replica(base_replica(**spec))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim


def _gang_condition(sim: Sim) -> tuple[str, str]:
    cond = sim.condition("GangSchedulingUnavailable")
    assert cond is not None
    return str(cond["status"]), str(cond["reason"])


def _advisories(sim: Sim) -> list[tuple[str, str]]:
    return [(e.type, e.message) for e in sim.events if e.event_reason == "MaybeNoGangScheduler"]


def test_single_pod_gets_no_pod_group_and_the_condition_false() -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_SinglePodNoPodGroupConditionFalse."""
    sim = _up()
    assert sim.pod_groups == {}
    assert _gang_condition(sim) == ("False", "GangSchedulingAvailable")


def test_multi_pod_with_the_crd_creates_the_gang() -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_MultiPodCRDAvailableCreatesGang: one leader and
    two workers make ``minMember`` 3; the condition is False (available)."""
    sim = _up(workers=2)
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0"]
    assert sim.pod_groups["llama-pool-engine-0"]["spec"]["minMember"] == 3
    assert _gang_condition(sim) == ("False", "GangSchedulingAvailable")


def test_multi_pod_without_the_crd_sets_the_condition_true_and_creates_no_group() -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_MultiPodCRDMissingSetsConditionTrueNoPodGroup."""
    sim = _up(workers=2, gang_scheduling=False)
    assert sim.pod_groups == {}
    assert _gang_condition(sim) == ("True", "PodGroupCRDNotInstalled")


def test_scale_down_leaves_the_extra_group_until_its_pods_are_gone() -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_ScaleDownLeavesExtraPodGroupsForFinalizer: the
    pass that scales 2 gangs to 1 keeps both groups; the dropped one goes once its pods are gone."""
    sim = _up(replicas=2, workers=1)
    driver = Driver(sim)
    sim.update_spec(replicas=1)
    driver.one_pass()
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0", "llama-pool-engine-1"]
    driver.run(lambda s: converged(s) and len(s.rows()) == 1)
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0"]


def test_one_pod_group_per_multi_pod_instance() -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_MultiInstanceMultiPodPodGroupsPerInstance."""
    sim = _up(replicas=3, workers=1)
    assert sorted(sim.pod_groups) == [f"llama-pool-engine-{i}" for i in range(3)]


def test_ensuring_twice_keeps_one_group() -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_Idempotent: further passes create nothing."""
    sim = _up(workers=1)
    before = dict(sim.pod_groups)
    driver = Driver(sim)
    plan = driver.one_pass()
    assert not [a for a in plan.actions if type(a).__name__ == "CreatePodGroup"]
    assert sim.pod_groups == before


def test_the_condition_flips_false_when_the_crd_arrives() -> None:
    """Go: gang_test.go @ 9177c1b0, TestPatchGangSchedulingCondition_StatusUpdateFlipsCondition: True
    (PodGroupCRDNotInstalled) while the CRD is missing, False (GangSchedulingAvailable) once it is."""
    sim = _up(workers=1, gang_scheduling=False)
    assert _gang_condition(sim) == ("True", "PodGroupCRDNotInstalled")
    sim.gang_scheduling = True
    sim.update_spec(minReadySeconds=1)  # a pass that writes status
    Driver(sim).run(converged)
    assert _gang_condition(sim) == ("False", "GangSchedulingAvailable")


@pytest.mark.parametrize(
    ("entry", "scheduler", "workers", "fired"),
    [
        ("empty schedulerName multi-pod fires", "", 2, True),
        ("default-scheduler multi-pod fires", "default-scheduler", 2, True),
        ("custom schedulerName multi-pod silent", "scheduler-plugins-scheduler", 2, False),
        ("single-pod default-scheduler silent", "default-scheduler", 0, False),
        ("single-pod empty silent", "", 0, False),
    ],
)
def test_maybe_no_gang_scheduler_matrix(entry: str, scheduler: str, workers: int, fired: bool) -> None:
    """Go: gang_test.go @ 9177c1b0, TestEnsurePodGroups_MaybeNoGangSchedulerWarning_Matrix, each entry:
    a Warning naming scheduler-plugins-scheduler when a gang's PodGroup is created under no (or the
    default) scheduler; silent for a named scheduler and for single-pod replicas."""
    sim = _up(workers=workers, scheduler=scheduler)
    got = _advisories(sim)
    assert bool(got) is fired, entry
    if fired:
        (kind, message), *_ = got
        assert kind == "Warning"
        assert "scheduler-plugins-scheduler" in message


@pytest.mark.parametrize(
    ("entry", "leader", "worker", "want"),
    [
        ("both nil", None, None, ""),
        ("both empty", {}, {}, ""),
        ("leader set", {"schedulerName": "custom"}, {}, "custom"),
        ("only worker set", {}, {"schedulerName": "worker-sched"}, "worker-sched"),
        ("leader wins", {"schedulerName": "leader"}, {"schedulerName": "worker"}, "leader"),
        ("nil leader, worker set", None, {"schedulerName": "worker"}, "worker"),
    ],
)
def test_effective_scheduler_name_leader_wins_then_worker(
    entry: str, leader: dict[str, Any] | None, worker: dict[str, Any] | None, want: str
) -> None:
    """Go: gang_test.go @ 9177c1b0, TestEffectiveSchedulerName_LeaderWinsThenWorker, each entry."""
    payload: dict[str, Any] = {}
    if leader is not None:
        payload["podSpec"] = leader
    if worker is not None:
        payload["workerPodSpec"] = worker
    assert effective_scheduler_name(payload) == want, entry
