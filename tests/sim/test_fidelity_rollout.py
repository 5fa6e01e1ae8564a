"""Rollout journal details pinned to OME's ops: ``workload/ops/update_recreate.go`` (newest stored
version, ome-projects/ome ae683e3f) and ``workload/ops/terminal_recycle.go``."""

from __future__ import annotations

import itertools

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import format_time


def test_a_recreate_records_its_revision_cause_on_the_operation(sim: Sim, driver: Driver) -> None:
    """``recreateUpdate`` stamps ``Operation.Reason = "revision <from> -> <to>"``
    (``recreateRevisionCause``, ``patchInstanceStatusRecreatingForUpdate``), the same cause its
    ``RecreateUpdateStarted`` event names."""
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim.apply_replica(base_replica(lifecycle=lc))
    driver.run(converged)
    v1 = sim.status["currentRevision"]
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    seen: list[object] = []
    driver.extra_checks.append(lambda s: seen.append((s.rows()[0].get("operation") or {}).get("reason")))
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == v2)
    assert f"revision {v1} -> {v2}" in seen
    started = [e.message for e in sim.events if e.event_reason == "RecreateUpdateStarted"]
    assert started == [
        f"OMENative component=engine instance=0 recreate (revision {v1} -> {v2}, incarnation=2)"
    ]


def test_the_cause_is_journaled_with_the_incarnation_bump() -> None:
    """The cause is journaled with the incarnation bump, before the old pod leaves rotation."""
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim = Sim()
    sim.apply_replica(base_replica(lifecycle=lc))
    driver = Driver(sim)
    driver.run(converged)
    v1 = sim.status["currentRevision"]
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.rows()[0].get("operation") is not None)
    op = sim.rows()[0]["operation"]
    assert (op["type"], op["step"], op["reason"]) == ("Update", "Drain", f"revision {v1} -> {v2}")


POD0 = "llama-pool-engine-0-default-0"


def test_terminal_recycles_within_an_attempt_follow_the_retry_ladder(sim: Sim, driver: Driver) -> None:
    """``ops/terminal_recycle.go`` ``recycleTerminalPods``: the first recycle of an attempt is
    immediate, each later one waits ``initialDelay × multiplier^(retryCount−1)`` (the chart's 1 min,
    then 2 min) from the operation's ``lastProgressAt``, which the recycle stamps."""
    driver.one_pass()  # finalizer
    sim.advance(0.5)
    driver.one_pass()  # revision, service, status, create

    def evicted_on_arrival(s: Sim) -> None:
        pod = s.pods.get(POD0)
        if pod is not None and pod.behaviour != "ended" and not pod.obj["metadata"].get("deletionTimestamp"):
            pod.obj["status"]["phase"] = "Failed"
            pod.obj["status"]["reason"] = "Evicted"
            pod.behaviour = "ended"

    driver.extra_checks.append(evicted_on_arrival)
    evicted_on_arrival(sim)
    driver.run(lambda s: "Create recycle 3" in " ".join(e.message for e in s.events), limit=900)
    deletes = [t for t, a in applied(driver, "DeletePod") if a.name == POD0]  # type: ignore[attr-defined]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(deletes)]
    assert len(deletes) == 3, deletes
    # lastProgressAt is stored to the second, as metav1.Time is.
    assert 59 <= gaps[0] < 66, gaps
    assert 119 <= gaps[1] < 126, gaps
    op = sim.rows()[0]["operation"]
    assert (op["retryCount"], op["lastProgressAt"]) == (3, format_time(deletes[2]))
