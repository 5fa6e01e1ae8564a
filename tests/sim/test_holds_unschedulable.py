"""The scheduler hold as OME's ``holds/scheduler.go`` and ``escalation/scheduler.go`` run it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sim_rolling import rolling_into

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import parse_time

SURGE = "llama-pool-engine-0-default-1"
VERDICT = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available."
GRACE = timedelta(minutes=2)


def _scheduled_cond(sim: Sim, name: str) -> dict[str, Any]:
    return next(cd for cd in sim.pods[name].obj["status"]["conditions"] if cd["type"] == "PodScheduled")


def _parked(settings: OperatorSettings) -> tuple[Sim, Driver]:
    sim, driver = rolling_into("unschedulable", settings)
    driver.run(
        lambda s: SURGE in s.pods and (s.rows()[0].get("operation") or {}).get("waiting") == "Unschedulable"
    )
    return sim, driver


def test_the_hold_leaves_the_schedulers_verdict_as_evidence_and_rewrites_nothing_while_unchanged() -> None:
    sim, driver = _parked(OperatorSettings(instance_ready_timeout=timedelta(minutes=1)))
    cond = _scheduled_cond(sim, SURGE)
    row = sim.rows()[0]
    assert "deadline" not in row["operation"]
    assert row["lastFailure"] == {
        "podName": SURGE,
        "reason": "Unschedulable",
        "message": "",
        "time": cond["lastTransitionTime"],
    }
    writes = len(sim.writes)
    for _ in range(5):
        sim.advance(60)
        driver.one_pass()
    assert sim.writes[writes:] == []  # an unchanged hold is write-free
    assert sim.serving_indices() == {0}


def test_the_grace_counts_from_the_podscheduled_transition_and_must_be_exceeded() -> None:
    sim, driver = _parked(
        OperatorSettings(unschedulable_grace_period=GRACE, instance_ready_timeout=timedelta(minutes=1))
    )
    # The scheduler ruled later than the pod was created: the window starts at its ruling.
    sim.advance(30)
    cond = _scheduled_cond(sim, SURGE)
    cond.update(lastTransitionTime=sim.now.strftime("%Y-%m-%dT%H:%M:%SZ"), message=VERDICT)
    since = parse_time(cond["lastTransitionTime"])
    assert since is not None
    driver.one_pass()
    assert sim.rows()[0]["lastFailure"]["message"] == VERDICT
    sim.advance((since + GRACE - sim.now).total_seconds())  # exactly the grace: not longer than it yet
    assert sim.now == since + GRACE
    driver.one_pass()
    assert sim.rows()[0]["phase"] == "Updating"
    driver.run(lambda s: "InstanceFailed" in s.event_reasons(), limit=60)
    row = sim.rows()[0]
    failed_at = parse_time(row["lastFailure"]["time"])
    assert failed_at is not None
    assert since + GRACE < failed_at <= since + GRACE + timedelta(seconds=2)
    assert row["lastFailure"] == {
        "reason": "Unschedulable",
        "message": f"Unschedulable: {VERDICT}",
        "time": row["lastFailure"]["time"],
    }
    (event,) = [e.message for e in sim.events if e.event_reason == "InstanceFailed"]
    assert event == (
        "InferenceReplica llama-demo/llama-pool component=engine instance=0 escalated to Phase=Failed "
        f'(pod="{SURGE}"): Unschedulable: {VERDICT}'
    )
    assert "retryBlocks" not in sim.status  # the environment's failure, not the revision's
    assert sim.serving_indices() == {0}


def test_without_a_transition_time_the_hold_never_escalates() -> None:
    sim, driver = _parked(OperatorSettings(unschedulable_grace_period=GRACE))
    del _scheduled_cond(sim, SURGE)["lastTransitionTime"]
    for _ in range(10):
        sim.advance(60)
        driver.one_pass()
    assert (sim.rows()[0]["phase"], sim.rows()[0]["operation"]["waiting"]) == ("Updating", "Unschedulable")
    assert "InstanceFailed" not in sim.event_reasons()


def test_room_appearing_releases_the_hold_with_a_full_window() -> None:
    timeout = timedelta(minutes=1)
    sim, driver = _parked(OperatorSettings(instance_ready_timeout=timeout))
    sim.advance(300)
    driver.one_pass()
    for p in sim.pods.values():
        p.behaviour = "ok"
    sim.behaviour["vllm:v2"] = "ok"
    sim.advance(1)
    driver.one_pass()
    op = sim.rows()[0]["operation"]
    assert op.get("waiting") is None
    deadline = parse_time(op["deadline"])
    assert deadline is not None
    assert sim.now + timeout - timedelta(seconds=1) <= deadline <= sim.now + timeout
    assert sim.rows()[0]["lastFailure"]["reason"] == "Unschedulable"  # the evidence survives release
    driver.run(converged)


def test_a_recreate_whose_new_pod_cannot_schedule_parks_then_fails_past_the_grace() -> None:
    """The same hold on RecreatePod's rebuild (its step stays ``Drain``, as Go's ``recreateUpdate``
    keeps it through every phase): parked, then the environment's failure."""
    sim = Sim(
        settings=OperatorSettings(
            unschedulable_grace_period=GRACE, instance_ready_timeout=timedelta(minutes=1)
        )
    )
    sim.apply_replica(base_replica(lifecycle={"updateStrategy": {"type": "RecreatePod"}}))
    driver = Driver(sim)
    driver.run(converged)
    sim.behaviour["vllm:v2"] = "unschedulable"
    sim.image = "vllm:v2"
    driver.run(lambda s: (s.rows()[0].get("operation") or {}).get("waiting") == "Unschedulable")
    op = sim.rows()[0]["operation"]
    assert (op["type"], op["step"], op.get("deadline")) == ("Update", "Drain", None)
    driver.run(lambda s: "InstanceFailed" in s.event_reasons())
    assert sim.rows()[0]["lastFailure"]["reason"] == "Unschedulable"
    assert "retryBlocks" not in sim.status
