"""Which Instances a scale-down keeps: Go ``workload/plan.go`` ``instancePlanIndices`` with
``scaleDownRank``, ``keepsPreference`` and ``rowOnFailingRevision`` (ome-projects/ome 4dfb96b1)."""

from __future__ import annotations

from datetime import datetime, timedelta

from omereconcile.planner.plan_indices import scale_down_rank
from omereconcile.planner.retry import BACKOFF_STATE, HELD_STATE, RetryBlock, RetryBook
from omereconcile.planner.rows import READY, Row
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver

POD0, POD1 = "llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"
T = datetime(2026, 1, 1)


def _two_instances() -> tuple[Sim, Driver]:
    """Instance 0 on ``sim-node``, Instance 1 on ``sim-node-b``, both Ready."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: s.status.get("readyReplicas") == 1)
    sim.node_objs["sim-node"]["spec"]["unschedulable"] = True
    sim.update_spec(replicas=2)
    driver.run(lambda s: s.status.get("readyReplicas") == 2 and not any(r.get("operation") for r in s.rows()))
    sim.node_objs["sim-node"]["spec"].pop("unschedulable")
    assert (sim.node_of(POD0), sim.node_of(POD1)) == ("sim-node", "sim-node-b")
    return sim, driver


def _book(state: str | None, rev: str = "r2") -> RetryBook:
    blocks = {} if state is None else {rev: RetryBlock(rev, state, 1, T, T, T + timedelta(minutes=1), "x")}
    return RetryBook(blocks, "ns/n", "engine")


def test_rank_orders_serving_sound_rows_first() -> None:
    """Go scaleDownRank: 0 serving on a sound revision, 1 other sound, 2 serving failing, 3 the rest."""
    serving = Row(index=0, phase=READY, running_revision="r2", pod_count=1, serving_pod_count=1)
    dark = Row(index=1, phase=READY, running_revision="r2", pod_count=1, serving_pod_count=0)
    unpublished = Row(index=2, phase=READY, running_revision="r2")
    creating = Row(index=3, running_revision="r2")
    assert [scale_down_rank(r, _book(None)) for r in (serving, dark, unpublished, creating)] == [0, 1, 0, 1]
    for state in (HELD_STATE, BACKOFF_STATE):
        assert [scale_down_rank(r, _book(state)) for r in (serving, dark)] == [2, 3]
    # The pinned attempt's revision is read before the running one.
    pinned = Row(
        index=4, phase=READY, running_revision="r1", target_revision="r2", pod_count=1, serving_pod_count=1
    )
    assert scale_down_rank(pinned, _book(HELD_STATE)) == 2
    assert scale_down_rank(pinned, _book("RetryInProgress")) == 0


def test_scale_down_keeps_the_serving_instance_over_the_lower_index() -> None:
    """A Ready Instance whose pod left rotation (its node stopped reporting) ranks below a serving one:
    scaling 2 -> 1 retires Instance 0 and keeps Instance 1, where the lowest index used to win."""
    sim, driver = _two_instances()
    sim.silence_node("sim-node")
    driver.run(lambda s: next(r for r in s.rows() if r["index"] == 0).get("servingPodCount") == 0)
    sim.update_spec(replicas=1)
    driver.one_pass()
    deleting = sorted(r["index"] for r in sim.rows() if r["phase"] == "Deleting")
    assert deleting == [0]
