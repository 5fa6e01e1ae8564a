"""Rollout journal details pinned to OME's ops (``workload/ops/update_recreate.go``, newest stored
version at ome-projects/ome ae683e3f)."""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged


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
