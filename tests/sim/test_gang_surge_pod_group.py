"""A gang surge's replacement keeps its PodGroup in line like any planned gang (Go
``workload/gang/gang.go`` ``EnsurePodGroupsWithState`` @ 4dfb96b1 walks every Instance of the plan,
and ``workload/plan.go`` ``instancePlanIndices`` pins the replacement beside its source)."""

from __future__ import annotations

from test_gang_create import gang_sim

from omereconcile.actions import UpdatePodGroup
from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, applied, converged


def _updates(driver: Driver) -> list[UpdatePodGroup]:
    return [a for _, a in applied(driver, "UpdatePodGroup") if isinstance(a, UpdatePodGroup)]


def _surging(sim: Sim) -> bool:
    return any((r.get("operation") or {}).get("step") == "GangSurgeTarget" for r in sim.rows()) and (
        "llama-pool-engine-1" in sim.pod_groups
    )


def test_a_gang_surge_replacement_pod_group_that_drifted_is_put_back() -> None:
    """One gang Instance rolls by SurgeThenDrain: its replacement is Instance 1, above the replica
    count. Its PodGroup's minMember is edited to 99 while the surge runs; the next pass puts it back
    to 2 (before: only ``0..replicas-1`` were checked, so the replacement's group stayed at 99 and its
    gang could not be admitted)."""
    sim = gang_sim(replicas=1)
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.image = "vllm:v2"
    driver.run(_surging)
    group = sim.pod_groups["llama-pool-engine-1"]
    assert group["spec"]["minMember"] == 2
    group["spec"]["minMember"] = 99
    before = len(_updates(driver))
    driver.one_pass()
    fixed = _updates(driver)[before:]
    assert [u.name for u in fixed] == ["llama-pool-engine-1"]
    assert fixed[0].patch == {"spec": {"minMember": 2}}
    assert group["spec"]["minMember"] == 2
