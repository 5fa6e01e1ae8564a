"""A pause and an attempt already under way: the step it is on runs to its boundary, nothing new starts.

Go (ome-projects/ome) ``workload/plan_decision.go`` ``Plan``, the newest stored version: "an attempt
already in flight still runs the step it is on to that step's boundary. What a pause withholds is the
next operation and the next step, so a pause never leaves an Instance mid-step — dark between a delete
and its recreate, or half-materialized — for the length of the hold. PauseFreeze deepens the hold onto
the restart pass: no repair starts, and one already under way only finishes its step." The rows keep
the pause's token and a parked clock meanwhile (``holds/pause.go`` ``reportPause``, ``status.go``
``reconcileHeldDeadlines``). Each rule is run under both pause modes.
"""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

MODES = ["Recover", "Freeze"]


def _up(n: int, **spec: Any) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=n, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == n)
    return sim, driver


def _row(sim: Sim, index: int) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == index)


def _op(sim: Sim, index: int) -> dict[str, Any]:
    return dict(_row(sim, index).get("operation") or {})


def _new_revision(sim: Sim) -> str:
    sim.image = "vllm:v2"
    return sim.render().name  # type: ignore[union-attr]


def _gone(sim: Sim, name: str) -> bool:
    """The pod is deleted: absent, or asked to terminate."""
    pod = sim.pods.get(name)
    return pod is None or bool(pod.obj["metadata"].get("deletionTimestamp"))


def _passes(sim: Sim, driver: Driver, n: int = 20) -> None:
    for _ in range(n):
        driver.one_pass()
        sim.advance(2.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_recreate_paused_between_its_delete_and_its_recreate_gets_its_pod(mode: str) -> None:
    """RecreatePod, paused with the old pod gone and the new one not yet created: the recreate
    finishes (before: the Instance stayed without a pod until the unpause). The other Instance, on
    the prior revision, is not started, and a paused step carries the ``Paused`` token, no deadline."""
    lifecycle = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim, driver = _up(2, lifecycle=lifecycle)
    prior = sim.status["currentRevision"]
    v2 = _new_revision(sim)
    driver.run(lambda s: _op(s, 0).get("type") == "Update" and _gone(s, "llama-pool-engine-0-default-0"))
    sim.update_spec(paused=True, pauseMode=mode)
    driver.one_pass()
    op = _op(sim, 0)
    if op:  # still under way: held by the pause, its clock parked
        assert (op["waiting"], op.get("deadline")) == ("Paused", None)
    _passes(sim, driver)
    assert (_row(sim, 0)["phase"], _row(sim, 0)["runningRevision"], _op(sim, 0)) == ("Ready", v2, {})
    assert sorted(sim.live_pods()) == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"]
    assert sim.serving_instances() == {0, 1}
    assert (_row(sim, 1)["runningRevision"], _op(sim, 1)) == (prior, {})


@pytest.mark.parametrize("mode", MODES)
def test_an_in_place_patch_under_way_finishes(mode: str) -> None:
    """InPlaceIfPossible, an image-only change, paused mid-patch: the patch finishes on the target,
    the other Instance is not started."""
    lifecycle = {"updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxUnavailable": 1}}}
    sim, driver = _up(2, lifecycle=lifecycle)
    prior = sim.status["currentRevision"]
    v2 = _new_revision(sim)
    driver.run(lambda s: _op(s, 0).get("step") == "InPlace")
    sim.update_spec(paused=True, pauseMode=mode)
    _passes(sim, driver)
    assert (_row(sim, 0)["phase"], _row(sim, 0)["runningRevision"], _op(sim, 0)) == ("Ready", v2, {})
    assert (_row(sim, 1)["runningRevision"], _op(sim, 1)) == (prior, {})
    assert sim.serving_instances() == {0, 1}


@pytest.mark.parametrize("mode", MODES)
def test_a_surge_drain_under_way_finishes(mode: str) -> None:
    """SurgeThenDrain, paused at ``SurgeDrain`` (the source already leaving rotation, the replacement
    the Instance's only capacity): the drain finishes and the replacement is promoted."""
    lifecycle = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}
    sim, driver = _up(2, lifecycle=lifecycle)
    driver.floor = lambda s: 1
    prior = sim.status["currentRevision"]
    v2 = _new_revision(sim)
    driver.run(lambda s: _op(s, 0).get("step") == "SurgeDrain", limit=600)
    sim.update_spec(paused=True, pauseMode=mode)
    _passes(sim, driver)
    assert (_row(sim, 0)["runningRevision"], _row(sim, 0)["activeOrdinal"], _op(sim, 0)) == (v2, 1, {})
    assert "llama-pool-engine-0-default-0" not in sim.live_pods()
    assert (_row(sim, 1)["runningRevision"], _op(sim, 1)) == (prior, {})


@pytest.mark.parametrize("mode", MODES)
def test_a_surge_at_its_entry_step_stops_at_the_promote_bar(mode: str) -> None:
    """SurgeThenDrain, paused at ``Surge``: the replacement comes up and enters rotation, the source's
    drain (the next step) waits for the unpause, under Freeze too (before: Freeze parked the surge
    where it stood, its replacement never brought up)."""
    sim, driver = _up(1)
    driver.floor = lambda s: 1
    v2 = _new_revision(sim)
    driver.one_pass()  # the surge starts
    assert _op(sim, 0)["step"] == "Surge"
    sim.update_spec(paused=True, pauseMode=mode)
    _passes(sim, driver)
    op = _op(sim, 0)
    assert (op["step"], op["waiting"], op.get("deadline")) == ("Surge", "Paused", None)
    assert sorted(sim.live_pods()) == ["llama-pool-engine-0-default-0", "llama-pool-engine-0-default-1"]
    gates = (sim.gate_of("llama-pool-engine-0-default-0"), sim.gate_of("llama-pool-engine-0-default-1"))
    assert gates == ("True", "True")  # both in rotation: the source is not drained
    sim.update_spec(paused=None, pauseMode=None)
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    assert sim.live_pods() == ["llama-pool-engine-0-default-1"]


def test_a_frozen_pause_finishes_the_open_repair_and_starts_none() -> None:
    """RecreateInstanceOnPodRestart under Freeze: a Restart that has drained its pod recreates it at
    the bumped incarnation (before: parked, the Instance without a pod until the unpause); a fresh pod
    loss on another Instance opens no repair (it is demoted ``Pending`` and waits)."""
    sim, driver = _up(2, lifecycle={"restartPolicy": "RecreateInstanceOnPodRestart"})
    sim.pods.pop("llama-pool-engine-0-default-0")
    driver.run(lambda s: _op(s, 0).get("type") == "Restart")
    sim.update_spec(paused=True, pauseMode="Freeze")
    sim.pods.pop("llama-pool-engine-1-default-0")
    driver.one_pass()
    op = _op(sim, 0)
    if op:
        assert (op["waiting"], op.get("deadline")) == ("Paused", None)
    _passes(sim, driver)
    assert (_row(sim, 0)["phase"], _row(sim, 0)["incarnation"], _op(sim, 0)) == ("Ready", 2, {})
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]
    assert (_row(sim, 1)["phase"], _op(sim, 1)) == ("Pending", {})
