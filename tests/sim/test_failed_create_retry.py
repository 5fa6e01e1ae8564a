"""How a first create that failed with its pods standing is retried (issue 37).

OME's newest Go (ome-projects/ome ``workload/ops/update.go`` @ 58a57f25): ``evaluateUpdateTriggerPods``
sends a ``Failed`` row with no running revision and a standing pod set that is not all runtime-ready
on the target to the ordinary roll, and leaves a row with no pods to Create; ``UpdateWithPods`` runs
that roll as a recreate when the strategy is a surge (``SurgeHasNoSource``), and refuses it under
``InPlaceOnly`` on a single-pod Instance (``chooseUpdateModeForInstance``: no running revision is no
baseline to patch from). Ours: ``planner/rollout.py`` ``_failed_pods_roll``, ``surge_has_no_source``.
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied

POD0 = "llama-pool-engine-0-default-0"


def _failed_first_create(strategy: str | None) -> tuple[Sim, Driver]:
    """A single-pod replica whose pod runs but never becomes ready, driven until its Create's deadline
    disposes the row ``Failed`` (no running revision, the pod standing)."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(seconds=10)))
    lifecycle = {"updateStrategy": {"type": strategy}} if strategy else None
    sim.apply_replica(base_replica(lifecycle=lifecycle) if lifecycle else base_replica())
    sim.behaviour["vllm:v1"] = "never"
    driver = Driver(sim)
    for _ in range(100):  # passes half a second apart: the Failed row lasts one pass
        driver.one_pass()
        if sim.rows() and sim.rows()[0]["phase"] == "Failed":
            break
        sim.advance(0.5)
    row = sim.rows()[0]
    assert (row.get("runningRevision"), row.get("operation"), row["incarnation"]) == (None, None, 1), row
    assert POD0 in sim.live_pods()
    return sim, driver


def _creates(driver: Driver) -> int:
    return [a.name for _, a in applied(driver, "CreatePod")].count(POD0)  # type: ignore[attr-defined]


def test_the_default_strategy_retries_by_recreate_at_the_next_incarnation() -> None:
    """SurgeThenDrain (the default): no surge, whose replacement would stand beside the failed pod,
    but a recreate: the pod leaves rotation and goes, and its successor is built at incarnation 2;
    once it becomes ready the Instance is promoted there."""
    sim, driver = _failed_first_create(None)
    rev = sim.render().name  # type: ignore[union-attr]
    driver.one_pass()
    row = sim.rows()[0]
    op = row["operation"]
    assert (row["phase"], row["incarnation"], op["type"], op["step"], op["strategy"]) == (
        "Updating",
        2,
        "Update",
        "Drain",
        "RecreatePod",
    ), row
    assert [e.message for e in sim.events if e.event_reason == "RecreateUpdateStarted"] == [
        f"OMENative component=engine instance=0 recreate (revision  -> {rev}, incarnation=2)"
    ]
    assert len(sim.live_pods()) <= 1  # never a second pod beside the failed one
    sim.behaviour["vllm:v1"] = "ok"
    driver.run(lambda s: s.rows()[0]["phase"] == "Ready", limit=200)
    row = sim.rows()[0]
    assert (row["runningRevision"], row["incarnation"]) == (rev, 2), row
    assert sim.pods[POD0].obj["metadata"]["labels"]["ome.io/instance-incarnation"] == "2"


def test_in_place_only_refuses_the_retry_of_a_never_promoted_instance() -> None:
    """InPlaceOnly on a single-pod Instance: with no running revision there is no baseline to patch
    from, so Go's ``UpdateWithPods`` refuses the roll with ``InPlaceUpdateNotPossible`` and the row
    stays ``Failed``, its pod untouched, until the operator edits the strategy."""
    sim, driver = _failed_first_create("InPlaceOnly")
    before = _creates(driver)
    for _ in range(20):
        sim.advance(0.5)
        driver.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], row.get("operation"), row["incarnation"]) == ("Failed", None, 1), row
    assert _creates(driver) == before
    assert "InPlaceUpdateNotPossible" in sim.event_reasons()


def test_a_failed_row_with_no_pod_left_is_rebuilt_by_create() -> None:
    """An empty pod set proves nothing either way (``evaluateUpdateTriggerPods``: "the Create and
    demotion passes own a row with no pods"): once the failed pod is gone, the row is rebuilt by a
    Create at the same incarnation, not by a recreate."""
    sim, driver = _failed_first_create(None)
    sim.pods.pop(POD0)
    driver.one_pass()
    row = sim.rows()[0]
    assert (row["operation"]["type"], row["incarnation"]) == ("Create", 1), row
    assert "RecreateUpdateStarted" not in sim.event_reasons()
