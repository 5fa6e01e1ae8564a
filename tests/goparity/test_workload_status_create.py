"""OME's ``workload/status/create_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/create_test.go`` @ dcfb4135 (the one
stored version; ``create.go`` @ dcfb4135, ``CreatingMutation``, ``ReadyMutation``/``StampReady``). Go
applies each mutation to a hand-built row; here one replica is created and the rows the passes write
are read. ``TestCreateReplacementMutation_RequiresTheRetiredAttemptsIdentity`` (6 subtests) and
``TestCreateRollbackMutation_RestoresOnlyTheCommittedTransition`` are compare-and-swap preconditions
of Go's batched row writer, which the planner does not have (it writes the whole status under the
replica's resourceVersion): listed as not mappable in ``docs/goparity.md``.
"""

from __future__ import annotations

from omereconcile.actions import WriteStatus
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/create_test.go @ dcfb4135"


def _new(replicas: int = 1) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    return sim, Driver(sim)


def test_creating_mutation_claims_once_and_keeps_the_attempt() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/create_test.go @ dcfb4135,
    TestCreatingMutation_ClaimsOnceAndPinsAnUnpinnedAttempt: a fresh slot is claimed Creating at
    incarnation 1 with a Create attempt at step ``CreatePods``, and later passes neither re-claim it
    (same id, same incarnation) nor move its pin. (Go's unpinned claim has no counterpart: the planner
    knows the target revision before it claims, so the claim is pinned at once.)"""
    sim, driver = _new()
    claimed = None
    for _ in range(6):
        driver.one_pass()
        sim.advance(0.2)
        rows = sim.rows()
        if rows and rows[0].get("operation"):
            if claimed is None:
                claimed = dict(rows[0])
            else:
                assert rows[0]["incarnation"] == 1
                assert rows[0]["operation"]["id"] == claimed["operation"]["id"]
                assert rows[0]["operation"]["targetRevision"] == claimed["operation"]["targetRevision"]
    assert claimed is not None, "no pass claimed the slot"
    op = claimed["operation"]
    assert (claimed["index"], claimed["phase"], claimed["incarnation"]) == (0, "Creating", 1)
    assert (op["type"], op["step"]) == ("Create", "CreatePods")
    assert op["targetRevision"] == sim.status["updateRevision"]


def test_stamp_ready_clears_the_attempt_once() -> None:
    """Go: … create_test.go @ dcfb4135, TestStampReady_ClearsTheAttemptAndKeepsTheRevision: the
    promote enters Ready with ``readySince`` the promote instant and no attempt; a later pass on the
    Ready row writes nothing and keeps ``readySince``. (The kept running revision is the plain promote's
    for a pod set the pass does not vouch for; the planner's promote reads the pods' revision, so that
    half is not mapped.)"""
    sim, driver = _new()
    driver.run(converged)
    row = sim.rows()[0]
    assert row["phase"] == "Ready"
    assert "operation" not in row
    since = row["readySince"]
    sim.advance(60)
    plan = driver.one_pass()
    assert not [a for a in plan.actions if isinstance(a, WriteStatus)]
    assert sim.rows()[0]["readySince"] == since
