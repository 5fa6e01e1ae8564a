"""The crash-loop repair of a ``Ready`` Instance with no operation: a pod parked in a terminal waiting
reason on the current revision past the stuck-pod grace is rebuilt by a ``Restart``, whatever the
restart policy.

OME's rule (``workload/ops/restart.go``, the newest stored version, 78,474 characters,
``readCrashLoopRepair`` and ``crashLoopRepairReason``; ``workload/evidence/`` ``CrashLoopWedgedPod`` /
``CrashLoopWedgedPodOn``, 10,186 characters, with ``PodWedgedPastGrace`` and
``TerminalWaitingGraceLeft``, ``evidence/stuckpod.go``, 12,631 characters): "no other pass owns an
operation-free Ready row, so the repair starts regardless of the restart policy"; the grace counts from
the pod's creation, a set that fully serves is never a wedge, a pod of another revision is the
escalation's, the rebuild answers to the revision's RetryBlock when no counted crash is behind it, and a
pod parked inside the grace asks for a pass when the grace ends. Before, ours had no such repair: under
restart policy ``None`` a single pod crash-looping after its Instance had served was left to the
kubelet's restarts for good (``planner/restart.py`` ``op_less_crash_loop_repair``; docs/planner.md, "The
crash-loop repair of an idle Instance").
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.planner import plan
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

POD0 = "llama-pool-engine-0-default-0"
GRACE = timedelta(seconds=30)


def _settled(policy: str = "None", grace: timedelta = GRACE) -> tuple[Sim, Driver]:
    """One single-pod Instance under ``policy`` (its own stuck-after of 20 s), settled Ready and left to
    serve for an hour."""
    sim = Sim(settings=OperatorSettings(stuck_pod_grace_period=grace))
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": policy}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3600)
    sim.tick()
    return sim, driver


def _break(sim: Sim) -> None:
    """The pod's runner is pointed at an image that crashes at start (a break made under the row: the
    kubelet restarts the container in place, and it parks in CrashLoopBackOff)."""
    sim.behaviour["vllm:crash"] = "crash"
    sim.pods[POD0].obj["spec"]["containers"][0]["image"] = "vllm:crash"
    sim.tick()


def _row(sim: Sim) -> dict[str, object]:
    return dict(sim.rows()[0])


def test_a_crash_looping_pod_is_rebuilt_under_policy_none() -> None:
    sim, driver = _settled()
    incarnation = int(str(_row(sim)["incarnation"]))
    revision = str(_row(sim)["runningRevision"])
    _break(sim)
    for _ in range(12):
        driver.one_pass()
        if _row(sim)["phase"] == "Restarting":
            break
        sim.advance(5.0)
        sim.tick()
    row = _row(sim)
    assert row["phase"] == "Restarting", (sim.rows(), driver.describe())
    op = row.get("operation") or {}
    assert isinstance(op, dict)
    assert op.get("type") == "Restart"
    assert op.get("reason") == f"pod {POD0} wedged in CrashLoopBackOff past the stuck-pod grace"
    assert int(str(row["incarnation"])) == incarnation + 1
    triggered = [e.message for e in sim.events if e.event_reason == "RestartTriggered"]
    assert len(triggered) == 1, triggered
    assert "wedged in CrashLoopBackOff" in triggered[0], triggered

    # The rebuild renders the revision's own image and the Instance serves again; nothing is counted
    # on the retry ladder and nothing escalates.
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    row = _row(sim)
    assert (row["phase"], row["runningRevision"]) == ("Ready", revision)
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] != "vllm:crash"
    assert not sim.status.get("retryBlocks")
    assert "InstanceFailed" not in sim.event_reasons()


def test_a_held_block_on_the_revision_denies_the_repair() -> None:
    sim, _ = _settled()
    _break(sim)
    sim.advance(60)
    sim.tick()
    assert sim.replica is not None
    reasons = [getattr(a, "event_reason", "") for a in plan(sim.observe()).actions]
    assert "RestartTriggered" in reasons, "without the block the wedge is repaired"
    revision = _row(sim)["runningRevision"]
    sim.replica["status"]["retryBlocks"] = [
        {"targetRevision": revision, "state": "Held", "attemptsStarted": 3}
    ]
    out = plan(sim.observe())
    assert "RestartTriggered" not in [getattr(a, "event_reason", "") for a in out.actions]


def test_a_pod_parked_inside_the_grace_wakes_the_pass_at_its_end() -> None:
    """A pod created 20 s ago and already parked, under a two-minute grace: no repair yet, and the pass
    asks to be woken when the grace from the pod's creation ends (the grace ending raises no watch
    event)."""
    sim, _ = _settled(grace=timedelta(minutes=2))
    _break(sim)
    obj = sim.pods[POD0].obj
    created = sim.now - timedelta(seconds=20)
    obj["metadata"]["creationTimestamp"] = created.isoformat().replace("+00:00", "Z")
    obj["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}
    out = plan(sim.observe())
    assert "RestartTriggered" not in [getattr(a, "event_reason", "") for a in out.actions]
    assert out.requeue_after is not None
    assert out.requeue_after <= 101.0, out.requeue_after
