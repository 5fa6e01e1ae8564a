"""OME's ``workload/ops/delete_batch_test.go``: the scale-down drain — completion, the graceful delete,
node death in a drain, and the overdue-drain announcement.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/delete_batch_test.go`` @ 4dfb96b1 (86,524
characters, the listed one of its four stored versions, read whole), over ``ops/delete_batch.go``
``DeleteBatch`` and ``overdueDrain``. Most of the file pins Go's batch machinery (the
``ScaleDownPodBatchSize`` budget, the owner-aware atomic status adapter, the expectations cache, metrics,
injected API failures): see ``docs/goparity.md``. The cases here run one pure planner pass
(``planner.plan``) in the simulated world over Instances the planner itself put under a Delete (a
replica scaled down), their pods, rows or clock then set as Go seeds them (``planner/instances.py``
``_step_delete``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from omereconcile.actions import DeletePod, DeletePodGroup, ForceDeletePod, Plan, RecordEvent, WriteStatus
from omereconcile.planner import plan
from omereconcile.settings import ForceDeletePolicy, OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/delete_batch_test.go @ 4dfb96b1"
POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(minutes=2), node_unreachable_threshold=timedelta(minutes=5)
)


def _scaled_down(replicas: int = 2, keep: int = 1, workers: int = 0, **kw: Any) -> tuple[Sim, Driver]:
    """``replicas`` Instances Ready, then the replica scaled to ``keep``; one pass puts the others under a
    Delete (Deleting, Delete/Drain, their pods taken out of rotation)."""
    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=30), force_delete=POLICY)
    sim = Sim(settings=settings, workers=workers, **kw)
    sim.apply_replica(base_replica(replicas=replicas))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    sim.update_spec(replicas=keep)
    driver.one_pass()
    assert [r["phase"] for r in sim.rows() if r["index"] >= keep] == ["Deleting"] * (replicas - keep)
    return sim, driver


def _rows(out: Plan) -> dict[int, dict[str, Any]]:
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    return {r["index"]: r for r in written[-1].status.get("instanceStatuses") or []} if written else {}


def _events(out: Plan, reason: str) -> list[RecordEvent]:
    return [a for a in out.actions if isinstance(a, RecordEvent) and a.event_reason == reason]


def _deadline(sim: Sim, index: int, at: Any) -> None:
    row = next(r for r in sim.rows() if r["index"] == index)
    row["operation"]["deadline"] = format_time(at)


def _pin_terminating(sim: Sim, name: str, since: Any, finalizer: bool = True) -> None:
    """The pod on its way out (deleted at ``since``), held there by a finalizer (Go's test hold) unless
    ``finalizer`` is False (then only a silent node keeps it)."""
    meta = sim.pods[name].obj["metadata"]
    meta["deletionTimestamp"] = format_time(since)
    if finalizer:
        meta["finalizers"] = ["ome.io/test-hold"]


def test_completion_removes_the_rows_once() -> None:
    """Go: TestDeleteBatchCompletionFinalizesThenRemovesOnce: two Delete-owned Instances whose pods are
    gone: their resources are finalized and both rows removed in one status write."""
    sim, _ = _scaled_down(replicas=3, keep=1)
    for name in [n for n in sim.pods if not n.startswith("llama-pool-engine-0-")]:
        del sim.pods[name]
    out = plan(sim.observe())
    assert len([a for a in out.actions if isinstance(a, WriteStatus)]) == 1, GO
    assert sorted(_rows(out)) == [0], GO


def test_incomplete_resource_finalization_retains_status() -> None:
    """Go: TestDeleteBatchIncompleteResourceFinalizationRetainsStatus: a gang whose pods are gone but
    whose PodGroup is not yet (its delete issued, not confirmed) keeps its Deleting row and its
    Delete: the row goes only once the resources are gone."""
    sim, _ = _scaled_down(workers=1)
    for name in [n for n in sim.pods if n.startswith("llama-pool-engine-1-")]:
        del sim.pods[name]
    assert "llama-pool-engine-1" in sim.pod_groups
    out = plan(sim.observe())
    row = _rows(out).get(1) or next(r for r in sim.rows() if r["index"] == 1)
    assert (row["phase"], (row.get("operation") or {}).get("type")) == ("Deleting", "Delete"), GO
    assert [a.name for a in out.actions if isinstance(a, DeletePodGroup)] == ["llama-pool-engine-1"], GO


def test_stuck_terminating_escalates_in_the_drain() -> None:
    """Go: TestDeleteBatchStuckTerminatingEscalatesBeforeExpectationGate: a drain whose pod is stuck
    Terminating past its grace on a node dead for ten minutes force-deletes it (grace 0, pinned to its
    UID), with one PodForceDeleted."""
    sim, _ = _scaled_down()
    pod = "llama-pool-engine-1-default-0"
    node = sim.node_of(pod)
    sim.silence_node(node)
    sim.advance(600)
    _pin_terminating(sim, pod, sim.now - timedelta(minutes=10), finalizer=False)
    out = plan(sim.observe())
    # Go runs the delete batch alone; our whole pass also frees the kept Instance 0's pod on the same
    # dead node (the Create pass's sweep, ops/unknown_phase.go recoverUnknownPhaseInstances, since
    # issue 37's fifth round), so only the drained pod's writes are this test's.
    forced = [(a.name, a.uid) for a in out.actions if isinstance(a, ForceDeletePod) and a.name == pod]
    assert forced == [(pod, sim.pods[pod].obj["metadata"]["uid"])], GO
    assert len([e for e in _events(out, "PodForceDeleted") if pod in e.message]) == 1, GO


def test_graceful_delete_uses_observed_pod_uid() -> None:
    """Go: TestDeleteBatchGracefulDeleteUsesObservedPodUID: the drained pod's graceful delete is
    preconditioned on the UID the pass observed (a same-name successor is never deleted)."""
    sim, driver = _scaled_down()
    pod = "llama-pool-engine-1-default-0"
    for _ in range(20):
        out = driver.one_pass()
        deletes = [a for a in out.actions if isinstance(a, DeletePod) and a.name == pod]
        if deletes:
            assert deletes[0].uid == sim.pods[pod].obj["metadata"]["uid"], GO
            return
        sim.advance(1)
    raise AssertionError("the drained pod was never deleted")


def test_overdue_drain_announces_once_per_episode() -> None:
    """Go: TestDeleteBatchOverdueDrainAnnouncesOncePerEpisode: a drain three minutes past its deadline,
    its pod still Terminating: one DrainOverdue event naming the Instance, how long overdue (3m0s), the
    pod and that it is still Terminating; the row stays Deleting under its Delete, recording the
    announcement (``lastFailure`` DrainOverdue at the deadline, the pod's name); the pod is not
    force-deleted; the next pass announces nothing and writes nothing new."""
    sim, driver = _scaled_down()
    pod = "llama-pool-engine-1-default-0"
    _pin_terminating(sim, pod, sim.now)
    deadline = sim.now + timedelta(minutes=1)
    _deadline(sim, 1, deadline)
    sim.advance(240)
    first = driver.one_pass()
    events = _events(first, "DrainOverdue")
    assert len(events) == 1, GO
    for part in ("instance=1", "3m0s", pod, "still Terminating"):
        assert part in events[0].message, (GO, part)
    row = next(r for r in sim.rows() if r["index"] == 1)
    assert (row["phase"], row["operation"]["type"]) == ("Deleting", "Delete"), GO
    lf = row.get("lastFailure") or {}
    assert (lf.get("reason"), lf.get("time"), lf.get("podName")) == (
        "DrainOverdue",
        format_time(deadline),
        pod,
    ), GO
    assert pod in sim.pods, GO
    version = sim.replica["metadata"]["resourceVersion"] if sim.replica else ""
    sim.advance(5)
    second = driver.one_pass()
    assert _events(second, "DrainOverdue") == [], GO
    assert sim.replica is not None
    assert sim.replica["metadata"]["resourceVersion"] == version, GO


def test_drain_within_deadline_stays_silent() -> None:
    """Go: TestDeleteBatchDrainWithinDeadlineStaysSilent: a drain inside its deadline says nothing and
    records nothing."""
    sim, _ = _scaled_down()
    _pin_terminating(sim, "llama-pool-engine-1-default-0", sim.now)
    _deadline(sim, 1, sim.now + timedelta(hours=1))
    sim.advance(60)
    out = plan(sim.observe())
    assert _events(out, "DrainOverdue") == [], GO
    row = _rows(out).get(1) or next(r for r in sim.rows() if r["index"] == 1)
    assert row.get("lastFailure") is None, GO


def test_overdue_drain_reannounces_on_a_new_episode() -> None:
    """Go: TestOverdueDrainReannouncesOnANewEpisode: a row that announced an earlier episode (another
    deadline) under a new Delete is announced again rather than read as already told."""
    sim, _ = _scaled_down()
    _pin_terminating(sim, "llama-pool-engine-1-default-0", sim.now)
    earlier = sim.now - timedelta(hours=2)
    row = next(r for r in sim.rows() if r["index"] == 1)
    row["lastFailure"] = {
        "reason": "DrainOverdue",
        "time": format_time(earlier),
        "message": "earlier episode",
    }
    _deadline(sim, 1, sim.now + timedelta(minutes=1))
    sim.advance(120)
    assert len(_events(plan(sim.observe()), "DrainOverdue")) == 1, GO


def test_overdue_drain_ignores_rows_it_does_not_own() -> None:
    """Go: TestOverdueDrainIgnoresRowsItDoesNotOwn: a row with no pod left is completing, not overdue
    (it goes); an operation with no deadline never expires. (Its third facet, a non-Delete operation,
    is another step's by construction here.)"""
    sim, _ = _scaled_down()
    del sim.pods["llama-pool-engine-1-default-0"]
    _deadline(sim, 1, sim.now - timedelta(hours=1))
    out = plan(sim.observe())
    assert _events(out, "DrainOverdue") == [], GO
    assert 1 not in _rows(out), GO
    sim, _ = _scaled_down()
    _pin_terminating(sim, "llama-pool-engine-1-default-0", sim.now)
    next(r for r in sim.rows() if r["index"] == 1)["operation"].pop("deadline", None)
    sim.advance(3600)
    assert _events(plan(sim.observe()), "DrainOverdue") == [], GO


def test_overdue_drain_announces_every_overdue_row() -> None:
    """Go: TestDeleteBatchOverdueDrainAnnouncesDeferredRows: every Delete-owned row past its deadline
    is announced, including one Go's pod budget deferred out of the pass's wave (ours has no budget:
    both rows are driven, and both announced)."""
    sim, _ = _scaled_down(replicas=3, keep=1)
    for index in (1, 2):
        _pin_terminating(sim, f"llama-pool-engine-{index}-default-0", sim.now)
        _deadline(sim, index, sim.now + timedelta(minutes=1))
    sim.advance(180)
    out = plan(sim.observe())
    assert len(_events(out, "DrainOverdue")) == 2, GO
    rows = _rows(out)
    assert [(rows[i].get("lastFailure") or {}).get("reason") for i in (1, 2)] == ["DrainOverdue"] * 2, GO
