"""Event reasons, types and texts of a single-pod Instance's life, as OME's ops record them:
``ops/create.go`` (``InstanceCreated``, ``InstanceReady``), ``ops/update_surge.go`` ``surgeUpdate``
(``RecreateUpdateStarted``/``RecreateUpdateCompleted``) and the truth pass's
``demoteUnbackedInstances`` (``InstanceDemoted``, a Warning)."""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, converged

KEY = "OMENative component=engine instance=0"


def _events(sim: Sim, *reasons: str) -> list[tuple[str, str, str]]:
    return [(e.type, e.event_reason, e.message) for e in sim.events if e.event_reason in reasons]


def test_create_and_surge_events_in_gos_words(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    assert _events(sim, "InstanceCreated", "InstanceReady") == [
        ("Normal", "InstanceCreated", f"{KEY} materialized; 1 pod(s) requested"),
        ("Normal", "InstanceReady", f"{KEY} is Ready (1 pod(s) serving)"),
    ]
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == v2)
    assert _events(sim, "RecreateUpdateStarted", "RecreateUpdateCompleted") == [
        ("Normal", "RecreateUpdateStarted", f"{KEY} surge to revision {v2} (newOrdinal=1)"),
        ("Normal", "RecreateUpdateCompleted", f"{KEY} surge to revision {v2} complete (activeOrdinal=1)"),
    ]


def test_a_ready_instance_that_lost_its_pod_is_demoted_with_a_warning(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    sim.update_spec(paused=True, pauseMode="Freeze")  # keeps the demoted row from being rebuilt at once
    del sim.pods["llama-pool-engine-0-default-0"]
    for _ in range(3):
        driver.one_pass()
        sim.advance(5)
    assert sim.rows()[0]["phase"] == "Pending"
    assert _events(sim, "InstanceDemoted") == [
        (
            "Warning",
            "InstanceDemoted",
            "Instance 0 (component=engine) demoted Ready→Pending: no live pods back the Ready phase",
        )
    ]
