"""OME's ``workload/holds/gang_test.go``: a PodGroup name still held by a group being collected.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/gang_test.go`` @ 4dfb96b1 (the one stored
version), over ``holds/gang.go`` @ dcfb4135 (``gangHold``, ``gangOwnerMayReport``, ``reportGang``,
``gangHoldObservedAt``), ``types`` ``GangTermination`` / ``GangReadingFor`` and ``holds/table.go``
``takesRowFrom``. Go feeds the hold pass a classified PodGroup observation; here the PodGroup is put
in :class:`omereconcile.simulate.cluster.Sim` (a group of ours with a ``deletionTimestamp`` and a
finalizer, so it stays) and passes of the planner run, or, for the scheduler's incumbent token,
:func:`omereconcile.planner.gang.bring_up_gang` runs on a row built by hand. Which subtests have no
counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import build_context, hash_of
from omereconcile.planner.gang import PODGROUP_TERMINATING, bring_up_gang
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.planner.out import Out
from omereconcile.simulate.cluster import T0, UID, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, PodCondition, PodView
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/gang_test.go @ 4dfb96b1"
GROUP0 = "llama-pool-engine-0"


def _gang(replicas: int = 1, **spec: Any) -> tuple[Sim, Driver]:
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=replicas, **spec))
    return sim, Driver(sim)


def _terminating_group(sim: Sim, name: str) -> None:
    """A PodGroup of ours on its way out (a finalizer keeps it): the name is not usable yet."""
    assert sim.replica is not None
    sim.pod_groups[name] = {
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": sim.replica["metadata"]["namespace"],
            "uid": "old-pg",
            "ownerReferences": [{"kind": "InferenceReplica", "uid": UID, "controller": True}],
            "deletionTimestamp": "2025-01-01T00:00:00Z",
            "finalizers": ["example.com/hold"],
        },
        "spec": {"minMember": 2},
    }


def _passes(sim: Sim, driver: Driver, n: int) -> None:
    for _ in range(n):
        driver.one_pass()
        sim.advance(1)


def _row(sim: Sim, index: int) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == index)


def test_records_the_wait() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/gang_test.go @ 4dfb96b1,
    TestGang_RecordsAndReleasesTheNameWait, "records the wait": the Create row waits on
    ``PodGroupTerminating`` with the group's explanation on ``lastFailure``; no pod is created, and
    later passes over the unchanged hold rewrite nothing (``gangHoldObservedAt``). The explanation
    failed before (ours left ``lastFailure`` empty), fixed by Go's ``reportGang``
    (``planner/gang.py`` ``_gang_hold``)."""
    sim, driver = _gang()
    _terminating_group(sim, GROUP0)
    _passes(sim, driver, 3)
    row = _row(sim, 0)
    assert row["operation"]["waiting"] == PODGROUP_TERMINATING
    assert "deadline" not in row["operation"]
    assert row["lastFailure"]["reason"] == PODGROUP_TERMINATING
    assert f"PodGroup {GROUP0} is terminating" in row["lastFailure"]["message"]
    assert sim.pods == {}
    writes = len(sim.writes)
    _passes(sim, driver, 3)
    assert sim.writes[writes:] == []
    # PodGroups are not watched: the wait asks to be looked at again (Go polls a terminating group).
    assert driver.one_pass().requeue_after == 1.0


def test_released_once_the_name_is_usable() -> None:
    """Go: same file and test, "released once the name is usable": once the old group is collected the
    token goes, the group is created again and the gang comes up."""
    sim, driver = _gang()
    _terminating_group(sim, GROUP0)
    _passes(sim, driver, 3)
    assert _row(sim, 0)["operation"]["waiting"] == PODGROUP_TERMINATING
    del sim.pod_groups[GROUP0]  # its finalizer removed: the object is gone
    driver.one_pass()
    assert "waiting" not in _row(sim, 0)["operation"]
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    assert sim.pod_groups[GROUP0]["metadata"]["uid"] != "old-pg"


def test_a_gang_surge_source_reads_no_group_of_its_own() -> None:
    """Go: same file and test, "a gang-surge source reads no group of its own" (``GangReadingFor``): the
    group of a gang-surge source (whose attempt lives under the surge index) being collected puts no
    token on the source row."""
    sim, driver = _gang(replicas=1, lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    driver.one_pass()
    assert _row(sim, 0)["operation"]["surgeIndex"] == 1
    meta = sim.pod_groups[GROUP0]["metadata"]
    meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    meta["finalizers"] = ["example.com/hold"]
    for _ in range(5):
        driver.one_pass()
        sim.advance(1)
        source = _row(sim, 0)
        assert (source.get("operation") or {}).get("waiting") != PODGROUP_TERMINATING


def test_the_scheduler_keeps_a_row_it_reached_first() -> None:
    """Go: same file and test, "the scheduler keeps a row it reached first": a gang member the
    scheduler cannot place holds the row on ``Unschedulable``; the group being collected does not take
    the row from it (``takesRowFrom``), and the clock stays parked. Failed before (ours overwrote the
    token with ``PodGroupTerminating``), fixed by Go's rule (``planner/gang.py`` ``_gang_hold``)."""
    sim, _ = _gang()
    _terminating_group(sim, GROUP0)
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    leader = ctx.pod_name(0, 0, "leader")
    cond = PodCondition("PodScheduled", "False", reason=UNSCHEDULABLE, message="0/3 nodes are available")
    labels = {
        c.LABEL_INSTANCE_INDEX: "0",
        c.LABEL_INSTANCE_INCARNATION: "1",
        c.LABEL_REVISION_HASH: hash_of(desired.name),
    }
    pod = PodView(leader, "uid-leader", "1", labels, conditions=(cond,), creation_timestamp=T0)
    evidence = {"podName": leader, "reason": UNSCHEDULABLE, "message": "0/3 nodes are available", "time": "x"}
    op = R.Operation("create-0", R.OP_CREATE, R.STEP_CREATE_PODS, desired.name, T0, waiting=UNSCHEDULABLE)
    row = R.Row(index=0, phase=R.CREATING, operation=op, last_failure=evidence)
    out = Out(ctx.now)
    held, done = bring_up_gang(ctx, row, [pod], out, None)
    assert not done
    assert out.actions == []  # the leader is the row's own member: nothing retired, nothing created
    assert held.operation is not None
    assert held.operation.waiting == UNSCHEDULABLE
    assert held.last_failure == evidence
    armed = replace(row, operation=replace(op, deadline=T0 + timedelta(minutes=5)))
    parked, _ = bring_up_gang(ctx, armed, [pod], Out(ctx.now), None)
    assert parked.operation is not None
    assert parked.operation.deadline is None
