"""OME's ``workload/holds/scheduler_test.go``: a pod the scheduler cannot place parks its attempt.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/scheduler_test.go`` @ 58a57f25 (the newer of
two stored versions: it holds the other's text plus
``TestScheduler_HoldsTheRecreateWhoseReplacementHasNoPlacement``), over ``holds/scheduler.go`` @
4dfb96b1 (``schedulerHold``, ``reportScheduler``) and ``holds/pass.go`` @ 58a57f25. Go runs the hold
pass over a store of one row and its pods; ours is :func:`omereconcile.planner.holds.scheduler_hold` on
the row and the step's pod, and, for the teardown row and the recreate, the planner in the simulated
world. (The escalation half, the grace, is ``test_workload_escalation_scheduler.py``.)
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.holds import UNSCHEDULABLE, scheduler_hold
from omereconcile.planner.out import Out
from omereconcile.planner.quota import QUOTA_EXCEEDED
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import PodCondition, PodView, format_time
from tests.goparity.reconciler_world import creating_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/scheduler_test.go @ 58a57f25"
POD = "llama-pool-engine-0-default-0"
MESSAGE = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu"  # Go's schedulerMessage
SINCE = T0 - timedelta(minutes=5)


def _unschedulable(name: str = POD) -> PodView:
    """Go's ``unschedulablePod(name, schedulerMessage, since)``."""
    cond = PodCondition(
        "PodScheduled", "False", reason="Unschedulable", message=MESSAGE, last_transition_time=SINCE
    )
    return PodView(name, f"uid-{name}", "1", {}, conditions=(cond,), creation_timestamp=SINCE)


def _hold(ctx: Ctx, row: R.Row, pod: PodView | None) -> R.Row:
    held, verdict = scheduler_hold(ctx, row, pod, Out(ctx.now))
    assert verdict is None  # no grace configured: the row is never failed here
    return held


def test_records_the_hold_with_the_schedulers_message() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/scheduler_test.go @ 58a57f25,
    TestScheduler_RecordsAndReleasesTheHold, "records the hold with the scheduler's message": the row
    waits on ``Unschedulable`` and ``lastFailure`` carries the pod, the scheduler's message and the
    condition's transition time."""
    row = _hold(one_replica_ctx(), creating_row(), _unschedulable())
    assert row.operation is not None
    assert row.operation.waiting == UNSCHEDULABLE
    assert row.operation.deadline is None
    assert row.last_failure == {
        "podName": POD,
        "reason": UNSCHEDULABLE,
        "message": MESSAGE,
        "time": format_time(SINCE),
    }


def test_released_once_the_pod_is_placed() -> None:
    """Go: same file and test, "released once the pod is placed" (``PodScheduled`` True)."""
    placed = replace(_unschedulable(), conditions=(PodCondition("PodScheduled", "True"),))
    row = _hold(one_replica_ctx(), creating_row(UNSCHEDULABLE), placed)
    assert row.operation is not None
    assert row.operation.waiting is None


def test_released_once_the_pod_is_gone() -> None:
    """Go: same file and test, "released once the pod is gone"."""
    row = _hold(one_replica_ctx(), creating_row(UNSCHEDULABLE), None)
    assert row.operation is not None
    assert row.operation.waiting is None


def test_edge_triggered_across_passes() -> None:
    """Go: same file and test, "edge-triggered across passes": re-observing what the pass wrote, two
    more passes over an unchanged cluster write nothing (ours: the row they return is unchanged)."""
    ctx = one_replica_ctx()
    once = _hold(ctx, creating_row(), _unschedulable())
    twice = _hold(ctx, once, _unschedulable())
    assert twice == once
    assert _hold(ctx, twice, _unschedulable()) == once


def test_another_authority_keeps_the_row() -> None:
    """Go: same file and test, "another authority keeps the row": a quota-refused row keeps
    ``QuotaExceeded`` beside an unplaceable pod (its clock stays parked)."""
    row = _hold(one_replica_ctx(), creating_row(QUOTA_EXCEEDED, refused=True), _unschedulable())
    assert row.operation is not None
    assert row.operation.waiting == QUOTA_EXCEEDED
    assert row.operation.deadline is None
    assert row.last_failure is None


def test_a_teardown_row_is_left_to_delete_batch() -> None:
    """Go: same file and test, "a teardown row is left to DeleteBatch": 2 -> 1 while Instance 1's pod
    cannot be placed; once its row is a Delete it carries no ``Unschedulable``."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v1"] = "unschedulable"  # pods created from now on are never placed
    sim.update_spec(replicas=2)
    driver.run(
        lambda s: any(r.get("operation", {}).get("waiting") == UNSCHEDULABLE for r in s.rows()), limit=60
    )
    sim.update_spec(replicas=1)
    seen: list[tuple[str, str, str]] = []
    for _ in range(6):
        driver.one_pass()
        sim.advance(5)
        seen += [
            (
                r["phase"],
                str((r.get("operation") or {}).get("type")),
                str((r.get("operation") or {}).get("waiting")),
            )
            for r in sim.rows()
            if r["index"] == 1
        ]
    deletes = [s for s in seen if s[1] == R.OP_DELETE]
    assert deletes
    assert all(waiting != UNSCHEDULABLE for _, _, waiting in deletes)


def test_holds_the_recreate_whose_replacement_has_no_placement() -> None:
    """Go: same file, TestScheduler_HoldsTheRecreateWhoseReplacementHasNoPlacement: a RecreatePod roll
    deleted the Instance's pod and cannot place the replacement; the Update row waits on
    ``Unschedulable`` with the scheduler's verdict on ``lastFailure``, naming the replacement."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim.apply_replica(base_replica(replicas=1, lifecycle=lc))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    old_uid = sim.pods[POD].obj["metadata"]["uid"]
    sim.behaviour["vllm:v2"] = "unschedulable"
    sim.image = "vllm:v2"
    driver.run(lambda s: (s.rows()[0].get("operation") or {}).get("waiting") == UNSCHEDULABLE, limit=120)
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["type"]) == ("Updating", R.OP_UPDATE)
    assert sim.pods[POD].obj["metadata"]["uid"] != old_uid  # the replacement, not the drained pod
    cond = next(cd for cd in sim.pods[POD].obj["status"]["conditions"] if cd["type"] == "PodScheduled")
    assert row["lastFailure"] == {
        "podName": POD,
        "reason": UNSCHEDULABLE,
        "message": cond.get("message", ""),
        "time": cond["lastTransitionTime"],
    }
