"""OME's ``workload/gang/inventory_test.go``: the PodGroup inventory a pass ensures and finalizes against.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/gang/inventory_test.go`` @ 4dfb96b1 (the listed
one of two stored versions, all 29,673 characters read), over ``gang/inventory.go``
(``ObservePodGroups``, ``EnsurePodGroupsWithState``, ``BuildFinalizeInstanceResources``). Most of the
file pins how Go reads PodGroups (one LIST, no hidden GET, soft failure when the CRD goes away, the
controller-UID index) — a pass of ours reads the world once, so those are not mappable (listed in
``docs/goparity.md``). What a user sees is ported in the simulated world: an Instance being torn down
gets no PodGroup recreated or re-sized, and (a known difference) a PodGroup the gang scheduler marked
``Failed`` is reset.
"""

from __future__ import annotations

import pytest

from omereconcile.actions import CreatePodGroup, UpdatePodGroup
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/gang/inventory_test.go @ 4dfb96b1"


def _gangs(replicas: int) -> tuple[Sim, Driver]:
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=replicas))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


@pytest.mark.parametrize(
    "entry",
    [
        "TestEnsurePodGroupsWithState_TerminalOwnedSkipsEnsure",
        "TestEnsurePodGroupsWithState_DeleteOwnedReboundSkipsEnsure",
    ],
)
def test_an_instance_being_deleted_gets_no_pod_group_ensured(entry: str) -> None:
    """Go: inventory_test.go @ 4dfb96b1, TestEnsurePodGroupsWithState_TerminalOwnedSkipsEnsure (a
    terminal-owned index's drifted group is neither recreated nor updated) and
    TestEnsurePodGroupsWithState_DeleteOwnedReboundSkipsEnsure (a Deleting row's group, once gone, is
    not recreated): scaling two gangs to one never creates or corrects the dropped Instance's PodGroup
    while it is torn down, and the group is gone at the end."""
    sim, driver = _gangs(2)
    sim.pod_groups["llama-pool-engine-1"]["spec"]["minMember"] = 99  # drift the ensure would correct
    start = len(driver.log)
    sim.update_spec(replicas=1)
    driver.run(lambda s: converged(s) and len(s.rows()) == 1)
    touched = [a.name for _, a in driver.log[start:] if isinstance(a, (CreatePodGroup, UpdatePodGroup))]
    assert "llama-pool-engine-1" not in touched, entry
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0"], entry


@pytest.mark.xfail(
    strict=True,
    reason="known difference: Go gang/inventory.go EnsurePodGroupsWithState resets a PodGroup the gang "
    "scheduler marked Failed (delete, PodGroupReset event, rebuild under the same name once no dead "
    "member holds it); ours reads no PodGroup phase",
)
def test_a_failed_pod_group_is_reset_not_escalated() -> None:
    """Go: inventory_test.go @ 4dfb96b1, TestGang_FailedPodGroupIsResetNotEscalated: the group is
    deleted and rebuilt, one PodGroupReset event names the failure, the row is untouched."""
    sim, driver = _gangs(1)
    sim.pod_groups["llama-pool-engine-0"].setdefault("status", {})["phase"] = "Failed"
    driver.one_pass()
    assert "PodGroupReset" in sim.event_reasons()


@pytest.mark.xfail(
    strict=True,
    reason="known difference: Go gang/inventory.go waits for a dead member's recycle before the "
    "PodGroup reset; ours has no reset at all",
)
def test_a_failed_pod_group_reset_waits_for_its_dead_member() -> None:
    """Go: inventory_test.go @ 4dfb96b1, TestGang_FailedPodGroupResetWaitsForTerminalMemberRecycle: no
    reset while a Failed member holds the group; the reset lands once it is recycled."""
    sim, driver = _gangs(1)
    sim.pod_groups["llama-pool-engine-0"].setdefault("status", {})["phase"] = "Failed"
    for _ in range(20):
        driver.one_pass()
        sim.advance(5.0)
    assert "PodGroupReset" in sim.event_reasons()
