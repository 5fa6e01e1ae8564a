"""The retry ladder's rollout hold in OME's newest Go words (``workload/reconcile.go`` ``ladderHold``,
fed by ``workload/plan_decision.go`` ``ladderRebuilds`` and ``ops/restart.go``
``LadderAttemptRebuilds``; ours ``planner/ladder_hold.py``).

A roll has landed on both single-pod Instances when Instance 0's promoted runner crashes and stays in
CrashLoopBackOff: the running revision's ladder counts the crash, and the hold the roll stands behind
is the ladder's, naming the Instance on the target that does not serve and the Instance whose crashed
set the ladder's attempt rebuilds: "in backoff" while the backoff runs, "retrying one attempt at a
time" once the rebuild is the attempt under way."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

POD0 = "llama-pool-engine-0-default-0"
LIFECYCLE = {
    "restartPolicy": "RecreateInstanceOnPodRestart",
    "updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}},
}


def _landed() -> tuple[Sim, Driver, str]:
    """Two single-pod Instances rolled onto a second revision, a ten-minute stuck-pod grace (the
    proven window) and a ladder of three attempts (20 s doubling to a minute)."""
    settings = OperatorSettings(
        stuck_pod_grace_period=timedelta(minutes=10),
        update_retry=RetryPolicy(3, timedelta(seconds=20), timedelta(minutes=1), 2.0),
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=2, lifecycle=LIFECYCLE))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    sim.image = "vllm:v2"
    rev = str(sim.render().name)  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == rev)
    return sim, driver, rev


def _crash_loop(sim: Sim) -> None:
    """Instance 0's runner dies after serving and the kubelet parks it in CrashLoopBackOff."""
    sim.advance(30)
    sim.restart_runner(POD0)
    pod = sim.pods[POD0]
    pod.behaviour = "crash"
    pod.created = min(pod.created, sim.now - timedelta(seconds=sim.stuck_after))
    sim.tick()


def _holds(sim: Sim, driver: Driver, passes: int) -> list[tuple[str | None, dict[str, Any] | None]]:
    """Each pass's block state and published hold, five seconds apart."""
    seen: list[tuple[str | None, dict[str, Any] | None]] = []
    for _ in range(passes):
        driver.one_pass()
        blocks = sim.status.get("retryBlocks") or [{}]
        seen.append((blocks[0].get("state"), sim.status.get("rolloutHold")))
        sim.advance(5)
    return seen


def test_the_ladder_names_the_instance_not_serving_and_the_rebuild_its_attempt_makes() -> None:
    sim, driver, rev = _landed()
    assert "rolloutHold" not in sim.status
    _crash_loop(sim)
    seen = _holds(sim, driver, 10)
    clauses = f"; Instance 0 on revision {rev} not serving; the attempt rebuilds Instance 0"
    backoff = [h for state, h in seen if state == "Backoff" and h and h["gate"] == "RetryBlock"]
    assert backoff, seen
    assert backoff[-1]["target"] == rev
    assert backoff[-1]["reason"] == (
        f"update to {rev} in backoff after 1 failed attempt(s): CrashLoopBackOff{clauses}"
    )
    retrying = [h for state, h in seen if state == "RetryInProgress" and h]
    assert retrying, seen
    assert retrying[0]["gate"] == "RetryBlock"
    assert retrying[0]["reason"] == (
        f"update to {rev} retrying one attempt at a time after 1 failed attempt(s): CrashLoopBackOff{clauses}"
    )


def test_a_roll_the_ladder_holds_before_it_lands_names_no_rebuild() -> None:
    """A push whose pod never pulls: each failed attempt is counted until the ladder holds, and the
    ladder's hold is the status layer's reading of the block, with nothing on the target to name (Go
    ``ladderHold``'s clauses are empty)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2, lifecycle={"updateStrategy": {"type": "RecreatePod"}}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    sim.image = "vllm:missing"
    sim.behaviour["vllm:missing"] = "imagepull"
    rev = str(sim.render().name)  # type: ignore[union-attr]
    driver.run(lambda s: (s.status.get("rolloutHold") or {}).get("gate") == "Held", limit=400)
    hold = sim.status["rolloutHold"]
    assert hold["target"] == rev
    attempts = sim.status["retryBlocks"][0]["attemptsStarted"]
    assert hold["reason"] == f"update to {rev} held after {attempts} failed attempt(s): ImagePullBackOff"
