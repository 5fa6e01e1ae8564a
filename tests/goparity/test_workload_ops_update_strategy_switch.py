"""OME's ``workload/ops/update_strategy_switch_test.go``: ``updateStrategy.type`` edited mid-surge.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_strategy_switch_test.go`` @ 227e4861
(15,963 characters, the one stored version under that path, read whole), over ``ops/update.go``
``UpdateWithPods``. Superseded: the newest stored ``update_surge_test.go`` (58a57f25, 160,097 characters,
read whole) carries this file's section (``newMidSurgeFixture``, its ``run``) with a new preamble ("the
strategy is pinned on the operation, so an attempt already under way keeps the mechanism it opened
with"): ``…HoldsSourceInRotation``, ``…ConvergesToOnePod`` and ``…FinishesSurgeCycle`` with the same four
entries and assertions, and ``…RollsUnderNewStrategy`` replaced by
``…StrategyFlipAtUncommittedSurge_FinishesOnItsPin``, which pins the opposite outcome; the newest
``ops/update.go`` (50,518 characters) says the same in ``UpdateWithPods`` ("An attempt therefore runs to
its end on the mechanism it opened with") through ``effectiveUpdateStrategy`` and
``isSurgeOwnedStatus``. So the 13 cases here follow the newest text: the twelve unchanged ones cite
227e4861 (their words are the same at 58a57f25) and the thirteenth is the newest's replacement.
The update strategy is not part of the ControllerRevision, so editing it does not retarget the roll:
the same target keeps rolling under whatever mode the pass resolves. Go seeds one single-pod Instance
inside a SurgeThenDrain roll (source at ordinal 0, replacement at ordinal 1, the operation parked at a
step) and runs ``UpdateWithPods`` under the old or a new strategy. Ours reaches the same state in the
simulated world (a roll of the image under ``SurgeThenDrain``, passes until the step), edits
``spec.lifecycle.updateStrategy.type`` there, and runs planner passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_strategy_switch_test.go @ 227e4861"
GO_NEWEST = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_surge_test.go @ 58a57f25"
OLD = "llama-pool-engine-0-default-0"
NEW = "llama-pool-engine-0-default-1"
STRATEGIES = [
    pytest.param("SurgeThenDrain", id="SurgeThenDrain retained"),
    pytest.param("InPlaceIfPossible", id="flipped to InPlaceIfPossible"),
    pytest.param("InPlaceOnly", id="flipped to InPlaceOnly"),
    pytest.param("RecreatePod", id="flipped to RecreatePod"),
]
SURGE_STEPS = ("Surge", "SurgeDrain", "SurgeDrainSettle")


def _lifecycle(strategy: str) -> dict[str, Any]:
    return {"updateStrategy": {"type": strategy, "rollingUpdate": {"maxSurge": 1}}}


def _step(sim: Sim) -> str | None:
    op = sim.rows()[0].get("operation") or {}
    step = op.get("step")
    return step if isinstance(step, str) else None


def _live(sim: Sim, name: str) -> bool:
    pod = sim.pods.get(name)
    return pod is not None and not pod.obj["metadata"].get("deletionTimestamp")


def _surge_unready(sim: Sim) -> bool:
    return _step(sim) == "Surge" and NEW in sim.pods and sim.gate_of(NEW) != "True"


def _surge_ready(sim: Sim) -> bool:
    return _step(sim) == "Surge" and sim.gate_of(NEW) == "True" and sim.gate_of(OLD) == "True"


def _source_drained(sim: Sim) -> bool:
    return _step(sim) == "SurgeDrain" and sim.gate_of(OLD) == "False" and _live(sim, OLD)


def _mid_surge(until: Callable[[Sim], bool]) -> tuple[Sim, Driver]:
    """Go's ``newMidSurgeFixture``: one Ready single-pod Instance rolled from v1 to v2 under
    SurgeThenDrain, stopped (pass by pass, half a second apart) at the state ``until`` names."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, lifecycle=_lifecycle("SurgeThenDrain")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    for _ in range(300):
        driver.one_pass()
        if until(sim):
            return sim, driver
        sim.advance(0.5)
    raise AssertionError("the surge never reached the fixture's state")


def _settle(sim: Sim, driver: Driver) -> None:
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_flip_at_step_surge_holds_source_in_rotation(strategy: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_strategy_switch_test.go @
    227e4861, TestUpdateWithPods_StrategyFlipAtStepSurge_HoldsSourceInRotation (each entry): the
    replacement is not Ready, so the source is the only pod serving; under the old strategy or a new
    one the pass is not done, the source is not deleted and stays in rotation."""
    sim, driver = _mid_surge(_surge_unready)
    sim.update_spec(lifecycle=_lifecycle(strategy))
    driver.one_pass()
    assert _live(sim, OLD), GO
    assert sim.gate_of(OLD) == "True", GO
    assert sim.rows()[0]["phase"] == "Updating"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_flip_at_step_surge_converges_to_one_pod(strategy: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_strategy_switch_test.go @
    227e4861, TestUpdateWithPods_StrategyFlipAtStepSurge_ConvergesToOnePod (each entry): the
    replacement is Ready and serving beside the source; whatever the strategy is edited to, the roll
    completes and the single-pod Instance settles with one pod, on the target."""
    sim, driver = _mid_surge(_surge_ready)
    sim.update_spec(lifecycle=_lifecycle(strategy))
    _settle(sim, driver)
    assert len(sim.live_pods()) == 1, (GO, sim.live_pods())
    row = sim.rows()[0]
    assert row["phase"] == "Ready"
    assert row["runningRevision"] == sim.status["updateRevision"]


def test_strategy_flip_at_uncommitted_surge_finishes_on_its_pin() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_surge_test.go @ 58a57f25,
    TestUpdateWithPods_StrategyFlipAtUncommittedSurge_FinishesOnItsPin, the newest Go's text of
    227e4861's ``…RollsUnderNewStrategy`` (which it replaces; see the module docstring): a surge whose
    replacement has not come up keeps its pin when the strategy is edited to InPlaceIfPossible: the
    replacement is not reclaimed, the operation stays a surge pinned to SurgeThenDrain; once the
    replacement is Ready the cycle completes (the source deleted, Ready on the target), and with the
    attempt over nothing pins a strategy: the next roll resolves against the edited one (Go asserts
    ``effectiveUpdateStrategy``; ours reads the next roll's first operation: an in-place patch)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, lifecycle=_lifecycle("SurgeThenDrain")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v2"] = "never"
    sim.image = "vllm:v2"
    for _ in range(300):
        driver.one_pass()
        if _surge_unready(sim):
            break
        sim.advance(0.5)
    assert _surge_unready(sim), "the surge never reached the fixture's state"
    sim.update_spec(lifecycle=_lifecycle("InPlaceIfPossible"))
    for _ in range(3):
        sim.advance(0.5)
        driver.one_pass()
    assert _live(sim, NEW), (GO_NEWEST, "the replacement was reclaimed")
    op = sim.rows()[0].get("operation") or {}
    assert (op.get("step"), op.get("strategy")) == ("Surge", "SurgeThenDrain"), (GO_NEWEST, op)
    sim.behaviour["vllm:v2"] = "ok"
    sim.pods[NEW].behaviour = "ok"
    _settle(sim, driver)
    assert not _live(sim, OLD), (GO_NEWEST, "the drained source survived")
    row = sim.rows()[0]
    assert (row["phase"], row["runningRevision"]) == ("Ready", sim.status["updateRevision"]), GO_NEWEST
    sim.image = "vllm:v3"
    driver.one_pass()
    op = sim.rows()[0].get("operation") or {}
    assert (op.get("step"), op.get("strategy")) == ("InPlace", "InPlaceIfPossible"), (GO_NEWEST, op)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_flip_at_step_surge_drain_finishes_surge_cycle(strategy: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_strategy_switch_test.go @
    227e4861, TestUpdateWithPods_StrategyFlipAtStepSurgeDrain_FinishesSurgeCycle (each entry): past
    step Surge the source is out of rotation (drained), the point of no return: whatever the strategy
    is edited to, the surge cycle runs to completion: the source is deleted while the operation stays
    on a surge step (never handed to another mode), and the Instance ends on the replacement's slot.
    Go deletes the source in the one pass it runs (its fixture has no EndpointSlice to wait for); ours
    waits for the drain proof first, so the passes run until the source is gone."""
    sim, driver = _mid_surge(_source_drained)
    sim.update_spec(lifecycle=_lifecycle(strategy))
    for _ in range(20):
        driver.one_pass()
        step = _step(sim)
        assert step is None or step in SURGE_STEPS, (GO, step)
        if not _live(sim, OLD):
            break
        sim.advance(0.5)
    assert not _live(sim, OLD), (GO, "the drained source survived")
    _settle(sim, driver)
    assert sim.live_pods() == [NEW]
    assert sim.rows()[0]["activeOrdinal"] == 1
