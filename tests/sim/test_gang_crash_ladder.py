"""The crash ladder for a gang: a leader+worker Instance whose rolled revision crash-loops after promotion
climbs the running revision's retry ladder as a single-pod Instance does.

OME's rule (``workload/ops/restart.go``, the newest stored version, 78,474 characters: ``readRunnerCrash``,
``runnerLoops``, ``readCrashLadder``, ``countCrashOnLadder``, ``runnerRestartTrigger``) never asks the pod
count: the crash of any member's runner on a complete promoted set is counted once on the revision's
``RetryBlock``, the whole-gang rebuild waits for the ladder's backoff and is its attempt
(``status.RetryBlockAttemptStarted``), the ladder admits one attempt at a time, and once it holds the row
parks ``Failed`` with one ``InstanceFailed`` while the leader is down. The ladder's own rebuild coming back
``Ready`` prunes nothing (``status.StampReady``; the newest ``RetryBlockPruneOnPromote``). Before, ours ran
the ladder for single-pod Instances only: every crash of a gang was rebuilt at once and no ``RetryBlock``
was written (docs/planner.md, "The gang form").
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time

RECREATE = "RecreateInstanceOnPodRestart"
LEADER = "llama-pool-engine-{}-leader-0"


def _rolled() -> tuple[Sim, Driver, str]:
    """Two gangs (leader + 1 worker) under RecreateInstanceOnPodRestart and a two-attempt ladder, rolled
    onto v2 and settled there."""
    settings = OperatorSettings(
        stuck_pod_grace_period=timedelta(minutes=10),
        update_retry=RetryPolicy(2, timedelta(seconds=20), timedelta(minutes=1), 2.0),
    )
    sim = Sim(settings=settings, workers=1)
    lifecycle = {
        "restartPolicy": RECREATE,
        "updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
    }
    sim.apply_replica(base_replica(replicas=2, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.image = "vllm:v2"
    v2 = str(sim.render().name)  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == v2)
    return sim, driver, v2


def _crash_twice(sim: Sim, index: int) -> None:
    """The leader's runner dies twice in place (the kubelet restarts it each time): the second
    termination records a run that began after Ready, a loop (Go ``RunnerRestartedAgainSinceReady``)."""
    pod = sim.pods[LEADER.format(index)]
    for _ in range(2):
        began = pod.started_at or pod.created
        pod.last_terminated = {
            "reason": "Error",
            "exitCode": 1,
            "startedAt": format_time(began),
            "finishedAt": format_time(sim.now),
        }
        pod.started_at = pod.restarted_at = sim.now
        sim.advance(1.0)
        sim.tick()


def _row(sim: Sim, index: int) -> dict[str, object]:
    return next(r for r in sim.rows() if r["index"] == index)


def _block(sim: Sim, revision: str) -> dict[str, object] | None:
    return next((b for b in sim.status.get("retryBlocks") or [] if b.get("targetRevision") == revision), None)


def _restarting(sim: Sim) -> list[int]:
    return [int(r["index"]) for r in sim.rows() if r["phase"] == "Restarting"]


def _passes(sim: Sim, driver: Driver, n: int, seconds: float = 5.0) -> None:
    for _ in range(n):
        driver.one_pass()
        assert len(_restarting(sim)) <= 1, ("the ladder admits one rebuild at a time", sim.rows())
        sim.advance(seconds)


def test_a_gang_crash_loop_climbs_the_ladder_then_parks_failed() -> None:
    sim, driver, v2 = _rolled()
    triggered = sim.event_reasons().count("RestartTriggered")
    other = _row(sim, 1)["incarnation"]

    # The crash is counted on v2's ladder at its first sighting; the backoff paces the rebuild.
    _crash_twice(sim, 0)
    _passes(sim, driver, 1)
    assert (_block(sim, v2) or {}).get("state") == "Backoff", sim.status.get("retryBlocks")
    assert _row(sim, 0)["phase"] == "Ready", "the rebuild waits for the ladder's backoff"
    assert sim.event_reasons().count("RestartTriggered") == triggered

    # Once the backoff is due the whole gang is rebuilt, and that rebuild is the ladder's attempt.
    for _ in range(12):
        _passes(sim, driver, 1)
        if _restarting(sim):
            break
    assert _restarting(sim) == [0], sim.rows()
    assert (_block(sim, v2) or {}).get("state") == "RetryInProgress"
    assert sim.event_reasons().count("RestartTriggered") == triggered + 1

    # The rebuilt gang comes back Ready; its promote does not prune the block it was paced by.
    for _ in range(40):
        _passes(sim, driver, 1)
        if _row(sim, 0)["phase"] == "Ready":
            break
    assert _row(sim, 0)["phase"] == "Ready", sim.rows()
    assert _block(sim, v2) is not None, "the ladder's own rebuild pruned its block"

    # The rebuilt set crashes too: the second failed attempt holds v2 and parks the row Failed while
    # the leader is down.
    _crash_twice(sim, 0)
    _passes(sim, driver, 1)
    assert (_block(sim, v2) or {}).get("state") == "Held", sim.status.get("retryBlocks")
    assert _row(sim, 0)["phase"] == "Failed", sim.rows()
    failed = [e.message for e in sim.events if e.event_reason == "InstanceFailed"]
    assert len(failed) == 1, failed
    assert "crash after promotion" in failed[0], failed
    assert sim.event_reasons().count("RetryHeld") == 1
    # The park follows its set: serving again, the row is Ready naming the loop (Go
    # readCrashLoopEpisode); the hold stands, nothing more is rebuilt, the other gang is untouched.
    _passes(sim, driver, 10)
    assert _row(sim, 0)["phase"] == "Ready", sim.rows()
    assert "crash loop on a held revision" in str((_row(sim, 0).get("lastFailure") or {}).get("message"))  # type: ignore[union-attr]
    assert (_block(sim, v2) or {}).get("state") == "Held"
    assert sim.event_reasons().count("RestartTriggered") == triggered + 1
    assert _row(sim, 1)["phase"] == "Ready"
    assert _row(sim, 1)["incarnation"] == other
