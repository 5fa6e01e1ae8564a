"""Restarts of gang Instances as ``ops/restart.go`` decides them: a committed gang that loses a member
below ``Ready`` is rebuilt whole (``instanceLostGangMember``), a runner restart is dated against
``readySince`` (``runnerRestartedSinceReady``), and the failing pod's termination is kept as
``lastFailure`` before the drain takes it (``firstFailedPodTermination``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from test_gang_create import gang_pods, gang_sim

from omereconcile.planner.gang import runner_restarted_since_ready
from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import ContainerView, PodView

WORKER = "llama-pool-engine-0-worker-0"
LEADER = "llama-pool-engine-0-leader-0"


def _forming(sim: Sim) -> Driver:
    """The gang's pods all exist, a pass has published both (``podCount``), and the Instance is still
    Creating (its pods are slow to boot)."""
    sim.ready_delay = 120.0
    d = Driver(sim)
    d.run(
        lambda s: (
            len(s.live_pods()) == 2
            and s.rows()[0]["phase"] == "Creating"
            and s.rows()[0].get("podCount") == 2
        )
    )
    return d


def _triggered(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "RestartTriggered"]


def test_a_gang_losing_a_member_before_ready_is_rebuilt_whole() -> None:
    sim = gang_sim(replicas=1)
    d = _forming(sim)
    leader_uid = sim.pods[LEADER].obj["metadata"]["uid"]
    del sim.pods[WORKER]
    d.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], row["incarnation"]) == ("Restarting", 2)
    assert (row["operation"]["type"], row["operation"]["step"]) == ("Restart", "Drain")
    assert row["operation"]["reason"] == "gang member lost: 1 of 2 pods present"
    assert _triggered(sim) == [
        "OMENative component=engine instance=0 restart triggered: gang member lost: 1 of 2 pods present"
        " (incarnation=2)"
    ]
    assert next(e for e in sim.events if e.event_reason == "RestartTriggered").type == "Warning"
    # Not repaired by recreating the worker beside the survivor: nothing is created until the
    # survivor is gone.
    assert not applied(d, "CreatePod")[2:]
    d.run(lambda s: converged(s) and s.rows()[0]["phase"] == "Ready")
    assert sim.live_pods() == gang_pods(0)
    assert sim.pods[LEADER].obj["metadata"]["uid"] != leader_uid
    assert sim.rows()[0]["incarnation"] == 2
    assert len(_triggered(sim)) == 1


def test_under_restart_policy_none_a_forming_gang_recreates_only_the_lost_member() -> None:
    sim = gang_sim(replicas=1, lifecycle={"restartPolicy": "None"})
    d = _forming(sim)
    leader_uid = sim.pods[LEADER].obj["metadata"]["uid"]
    del sim.pods[WORKER]
    d.run(lambda s: converged(s) and len(s.live_pods()) == 2)
    assert sim.pods[LEADER].obj["metadata"]["uid"] == leader_uid
    assert sim.rows()[0]["incarnation"] == 1
    assert _triggered(sim) == []


def test_total_loss_before_ready_stays_with_the_create() -> None:
    sim = gang_sim(replicas=1)
    d = _forming(sim)
    sim.pods.clear()
    d.run(lambda s: converged(s) and len(s.live_pods()) == 2)
    assert sim.rows()[0]["incarnation"] == 1
    assert _triggered(sim) == []


def test_a_slow_booting_gang_is_not_restarted() -> None:
    """Nothing in the lost-member rule reads readiness or time: a whole gang that takes long to load
    its weights is left alone."""
    sim = gang_sim(replicas=1)
    sim.ready_delay = 120.0
    d = Driver(sim)
    d.run(lambda s: converged(s) and s.rows()[0]["phase"] == "Ready")
    assert sim.rows()[0]["incarnation"] == 1
    assert _triggered(sim) == []


def test_a_runner_restarted_in_place_after_ready_restarts_the_gang_and_keeps_its_termination() -> None:
    sim = gang_sim(replicas=1)
    d = Driver(sim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.advance(30.0)
    d.one_pass()
    assert _triggered(sim) == []  # the runs that formed the gang started before readySince
    sim.restart_runner(WORKER, "OOMKilled", 137)
    worker_uid = sim.pods[WORKER].obj["metadata"]["uid"]
    d.one_pass()
    row = sim.rows()[0]
    reason = f"pod {WORKER} container ome-container restarted after Ready: OOMKilled (exit 137)"
    assert (row["phase"], row["incarnation"], row["operation"]["reason"]) == ("Restarting", 2, reason)
    assert _triggered(sim) == [
        f"OMENative component=engine instance=0 restart triggered: {reason} (incarnation=2)"
    ]
    failure = dict(row["lastFailure"])
    assert failure.pop("time")
    assert failure == {
        "podName": WORKER,
        "containerName": "ome-container",
        "reason": "OOMKilled",
        "exitCode": 137,
    }
    d.run(lambda s: converged(s) and s.rows()[0]["phase"] == "Ready")
    assert sim.pods[WORKER].obj["metadata"]["uid"] != worker_uid
    assert sim.rows()[0]["incarnation"] == 2
    assert sim.rows()[0]["lastFailure"]["reason"] == "OOMKilled"  # kept across the rebuild
    assert len(_triggered(sim)) == 1


def test_under_restart_policy_none_a_runner_restart_does_not_rebuild_the_gang() -> None:
    sim = gang_sim(replicas=1, lifecycle={"restartPolicy": "None"})
    d = Driver(sim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.advance(30.0)
    sim.restart_runner(WORKER)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    assert sim.rows()[0]["incarnation"] == 1
    assert _triggered(sim) == []


READY = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
BEFORE, AFTER = READY - timedelta(minutes=5), READY + timedelta(seconds=1)


def _pod(*containers: ContainerView, init: tuple[ContainerView, ...] = ()) -> PodView:
    return PodView("p-0", "uid", "1", {}, phase="Running", containers=containers, init_containers=init)


def test_runner_restart_dates_only_the_runner_after_ready_since() -> None:
    ended = ContainerView("ome-container", terminated_reason="OOMKilled", exit_code=137, finished_at=AFTER)
    assert runner_restarted_since_ready(_pod(ended), READY) == (
        "pod p-0 container ome-container restarted after Ready: OOMKilled (exit 137)"
    )
    no_reason = ContainerView("ome-container", exit_code=2, finished_at=AFTER)
    assert runner_restarted_since_ready(_pod(no_reason), READY) == (
        "pod p-0 container ome-container restarted after Ready: Error (exit 2)"
    )
    started = ContainerView("ome-container", started_at=AFTER)
    assert runner_restarted_since_ready(_pod(started), READY) == (
        "pod p-0 container ome-container restarted after Ready"
    )
    # Evidence from before Ready, at Ready itself, or with no readySince dates nothing.
    old = ContainerView(
        "ome-container", terminated_reason="Error", exit_code=1, finished_at=BEFORE, started_at=READY
    )
    assert runner_restarted_since_ready(_pod(old), READY) is None
    assert runner_restarted_since_ready(_pod(ended), None) is None
    # A sidecar or an init container restarting in place never counts, a restart count alone neither.
    sidecar = ContainerView(
        "proxy", terminated_reason="Error", exit_code=1, finished_at=AFTER, started_at=AFTER
    )
    counted = ContainerView("ome-container", restart_count=3, started_at=BEFORE)
    assert runner_restarted_since_ready(_pod(sidecar, counted, init=(sidecar,)), READY) is None
