"""The stuck-pod grace of an attempt's pod that served and then broke counts from the break.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/stuckpod.go`` (the newest stored
version) ``PodStuckInTerminalWaiting`` / ``WaitingEpisodeStart``: the grace is measured from the later
of the pod's creation and its ContainersReady condition's last move away from True.
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GRACE = timedelta(seconds=60)  # the sim's operator setting


def _surge_pod(sim: Sim) -> str | None:
    return next(
        (n for n, p in sim.pods.items() if p.obj["spec"]["containers"][0]["image"] == "vllm:v2"), None
    )


def _containers_ready(sim: Sim, name: str) -> bool:
    conds = sim.pods[name].obj["status"].get("conditions", [])
    return any(cd["type"] == "ContainersReady" and cd["status"] == "True" for cd in conds)


def test_a_surge_pod_that_served_then_crash_loops_gets_the_grace_from_the_break() -> None:
    """A surge replacement held at step Surge by ``minReadySeconds`` has been ContainersReady for 90 s
    (older than the 60 s grace) when its runner starts crash-looping. Before, the pass that first saw
    ``CrashLoopBackOff`` failed the surge at once (the grace counted from the pod's creation); now the
    surge fails only once the grace has passed since the break."""
    sim = Sim()
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}
    sim.apply_replica(base_replica(replicas=1, minReadySeconds=300, lifecycle=lc))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    for _ in range(200):
        driver.one_pass()
        sim.advance(1)
        name = _surge_pod(sim)
        if name is not None and _containers_ready(sim, name):
            break
    assert name is not None
    assert _containers_ready(sim, name)
    sim.advance(90)
    sim.pods[name].behaviour = "crash"
    sim.tick()
    broke = sim.now
    assert sim.pods[name].obj["status"]["containerStatuses"][0]["state"] == {
        "waiting": {"reason": "CrashLoopBackOff"}
    }
    failed_at = None
    while sim.now < broke + 2 * GRACE:
        driver.one_pass()
        (row,) = sim.rows()
        if row["phase"] == "Failed":
            failed_at = sim.now
            break
        assert row["operation"]["step"] == "Surge"
        sim.advance(10)
    assert failed_at is not None
    assert broke + GRACE <= failed_at < broke + GRACE + timedelta(seconds=10)
    assert sim.rows()[0]["lastFailure"]["reason"] == "CrashLoopBackOff"
