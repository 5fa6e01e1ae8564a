"""OME's ``inferencereplica/promote_test.go``: when ``status.currentRevision`` is promoted.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/promote_test.go`` @ 614ba948 (one stored
version, read whole), over ``buildPromoteCurrentRevision``, whose gate is ``workload.RolloutComplete``
(the partition-0 predicate: every Instance Ready on the target). Go calls the callback on a fake
client seeded with the test's status; here a replica is rolled in the simulated world and the
planner's status writes are read. Not mappable (3, listed in ``docs/goparity.md``):
``UsesAuthoritativeStatusAfterLifecycleWrite`` (a stale cache read racing a status write),
``SameNameReplacementAborts`` and ``GenerationChangeAborts`` (the RMW closure's UID and generation
preconditions on a re-read; ours writes the status whole, pinned to the resourceVersion it planned on).
"""

from __future__ import annotations

from omereconcile.actions import WriteStatus
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/promote_test.go @ 614ba948"


def _rolled(partition: int) -> tuple[Sim, Driver, str, str]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2, pacing={"partition": partition}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    prior = sim.status["currentRevision"]
    sim.image = "vllm:v2"
    target = sim.render().name  # type: ignore[union-attr]
    return sim, driver, prior, target


def test_partitioned_rollout_does_not_promote() -> None:
    """``TestPromoteCurrentRevision_PartitionedRolloutDoesNotPromote``: converged at partition 1
    (Instance 1 on the target, Instance 0 held Ready on the prior revision), the current revision
    stays the prior one; staged shows as current != update."""
    sim, driver, prior, target = _rolled(partition=1)
    driver.run(lambda s: (s.condition("Ready") or {}).get("reason") == "Staged")
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    assert sorted(r["runningRevision"] for r in sim.rows()) == sorted([prior, target]), GO
    assert sim.status["currentRevision"] == prior, GO
    assert sim.status["updateRevision"] == target, GO


def test_full_converge_promotes() -> None:
    """``TestPromoteCurrentRevision_FullConvergePromotes``: every Instance Ready on the target
    (partition 0) promotes the current revision to it."""
    sim, driver, _, target = _rolled(partition=0)
    driver.run(lambda s: converged(s) and all(r["runningRevision"] == target for r in s.rows()))
    driver.run(lambda s: s.status["currentRevision"] == target)
    assert sim.status["currentRevision"] == target, GO


def test_already_equal_writes_nothing() -> None:
    """``TestPromoteCurrentRevision_AlreadyEqualNoWrite``: a converged replica already on its target
    makes no status write, so a steady-state pass stays silent."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    assert sim.status["currentRevision"] == sim.status["updateRevision"]
    before = len(driver.plans)
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    writes = [a for p in driver.plans[before:] for a in p.actions if isinstance(a, WriteStatus)]
    assert writes == [], GO
