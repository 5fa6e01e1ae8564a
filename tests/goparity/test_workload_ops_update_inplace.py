"""OME's ``workload/ops/update_inplace_test.go``: the in-place patch losing its pod, its promote bar, a pause.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_inplace_test.go`` @ 58a57f25 (53,077
characters, read whole: the largest of the three stored versions; the listed dcfb4135 is an earlier
one), over ``ops/update_inplace.go`` ``inPlaceUpdate`` and ``ops/update.go`` ``UpdateWithPods``. Go
seeds an Instance inside an in-place roll and runs ``UpdateWithPods``; ours rolls a replica converged on
``vllm:v1`` to ``vllm:v2`` under ``InPlaceIfPossible`` in the simulated world and runs planner passes
half a second apart. Its ``TestUpdateInPlace_InvalidPatch_DisposesAndHoldsRevision`` is
``update_inplace_rejection_test.go``'s one case and is counted in that row.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import DesiredRevision, parse_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25"
POD0 = "llama-pool-engine-0-default-0"
RECREATE_STEPS = ("Drain", "CreatePods")


def _lc(**ips: Any) -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": "InPlaceIfPossible", "rollingUpdate": {"maxUnavailable": 1}}
    if ips:
        strategy["inPlaceUpdateStrategy"] = ips
    return {"updateStrategy": strategy}


def _ready(**spec: Any) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, lifecycle=_lc(), **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _target(sim: Sim) -> str:
    render = sim.render()
    assert isinstance(render, DesiredRevision)
    return render.name


def _row(sim: Sim) -> dict[str, Any]:
    return sim.rows()[0]


def _op(sim: Sim) -> dict[str, Any]:
    return dict(_row(sim).get("operation") or {})


def _rolled(sim: Sim, revision: str) -> bool:
    return (
        converged(sim) and sim.status["currentRevision"] == revision and sim.status.get("readyReplicas") == 1
    )


def _in_place_without_pod() -> tuple[Sim, Driver, dict[str, Any]]:
    """Go's ``inPlaceRollWithoutPods``: an in-place roll in flight (Updating, step InPlace, its own id
    and deadline) whose only pod has been lost (evicted and collected)."""
    sim, driver = _ready()
    sim.image = "vllm:v2"
    driver.one_pass()
    op = _op(sim)
    assert op["step"] == "InPlace"
    sim.advance(0.5)
    del sim.pods[POD0]
    return sim, driver, op


def test_in_place_roll_losing_its_only_pod_re_resolves_to_recreate() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceRollLosingItsOnlyPodReResolvesToRecreate: losing the pod re-resolves the
    roll to a recreate in the same pass: still Updating, step Drain, the same attempt (its id and
    deadline kept), the incarnation bumped, the strategy pin moved to RecreatePod, no retry block
    charged, and the replacement rendered at the target revision and incarnation 2."""
    sim, driver, before = _in_place_without_pod()
    target = _target(sim)
    driver.one_pass()
    row, op = _row(sim), _op(sim)
    assert (row["phase"], op["step"]) == ("Updating", "Drain"), GO
    assert (op["id"], op.get("deadline")) == (before["id"], before.get("deadline")), (GO, op, before)
    assert row["incarnation"] == 2, GO
    assert op.get("strategy") == "RecreatePod", GO
    assert not sim.status.get("retryBlocks"), GO
    sim.advance(0.5)
    driver.one_pass()
    pod = sim.pods[POD0].obj
    assert pod["metadata"]["labels"][c.LABEL_REVISION_HASH] == target.rsplit("-", 1)[-1], GO
    assert pod["metadata"]["labels"][c.LABEL_INSTANCE_INCARNATION] == "2", GO


def test_in_place_roll_keeps_patching_while_its_pod_lives() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceRollKeepsPatchingWhileItsPodLives: a pod that is merely not ready keeps
    the roll in place (step InPlace, incarnation 1)."""
    sim, driver = _ready()
    sim.image = "vllm:v2"
    for _ in range(12):
        driver.one_pass()
        assert (_op(sim).get("step"), _row(sim)["incarnation"]) in (("InPlace", 1), (None, 1)), GO
        sim.advance(0.5)


def test_in_place_roll_re_resolved_once_stays_one_attempt() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceRollReResolvedOnceStaysOneAttempt: the pass after the re-resolution,
    over the replacement pod, is a step inside the same attempt: the same id, start and deadline, and
    nothing announced again."""
    sim, driver, before = _in_place_without_pod()
    driver.one_pass()
    events = len(sim.events)
    for _ in range(2):
        sim.advance(0.5)
        driver.one_pass()
    op = _op(sim)
    assert op, GO
    assert (op["id"], op.get("startedAt"), op.get("deadline")) == (
        before["id"],
        before.get("startedAt"),
        before.get("deadline"),
    ), (GO, op, before)
    assert [e.event_reason for e in sim.events[events:]] == [], GO


def test_in_place_roll_losing_its_pod_twice_re_derives_the_same_recreate() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceRollLosingItsPodTwiceReDerivesTheSameRecreate: the recreate the first
    loss opened owns the empty pod set from there: losing its replacement too keeps the same
    operation at step Drain and the same incarnation, and announces nothing new."""
    sim, driver, before = _in_place_without_pod()
    driver.one_pass()
    sim.advance(0.5)
    driver.one_pass()
    first = _row(sim)
    assert first["operation"]["step"] in RECREATE_STEPS
    events = len(sim.events)
    sim.pods.pop(POD0, None)
    sim.advance(0.5)
    driver.one_pass()
    second = _row(sim)
    # Go keeps the recreate's step at Drain; ours has moved it to CreatePods by now (the known
    # difference ``test_recreate_keeps_its_step_at_drain`` pins).
    assert second["operation"]["step"] in RECREATE_STEPS, (GO, second)
    assert second["operation"]["id"] == before["id"], GO
    assert second["incarnation"] == first["incarnation"], GO
    assert [e.event_reason for e in sim.events[events:]] == [], GO


@pytest.mark.xfail(
    strict=True,
    reason=(
        "known difference: Go's recreate stamp (ops/update_recreate.go, its idempotency guard) treats a "
        "revision move during a recreate as a new Phase A and bumps the incarnation again; ours retargets "
        "the recreate in flight at the same incarnation"
    ),
)
def test_in_place_readiness_and_retarget_after_the_pod_loss() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceReadinessAndRetargetAfterThePodLoss: once the loss moved the row to the
    recreate, a further revision (v3) is the recreate's to take: step Drain toward v3, the incarnation
    bumped again, the roll not complete."""
    sim, driver, _ = _in_place_without_pod()
    driver.one_pass()
    bumped = _row(sim)["incarnation"]
    sim.advance(0.5)
    driver.one_pass()
    sim.image = "vllm:v3"
    v3 = _target(sim)
    sim.advance(0.5)
    driver.one_pass()
    op = _op(sim)
    assert (op.get("step") in RECREATE_STEPS, op.get("targetRevision")) == (True, v3), (GO, op)
    assert _row(sim)["incarnation"] > bumped, GO
    assert _row(sim)["phase"] == "Updating", GO


def test_in_place_promotion_waits_for_min_ready_seconds() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestInPlaceUpdate_PromotionWaitsForMinReadySeconds: the patched pod returns to rotation and the row
    stays Updating until the pod has been Ready for ``minReadySeconds`` (20 s); it is never taken out
    of rotation again while it waits, and then promotes."""
    sim, driver = _ready(minReadySeconds=20)
    sim.update_spec(lifecycle=_lc(markNotReadyDuringLifecycle=True))
    sim.image = "vllm:v2"
    v2 = _target(sim)
    driver.run(lambda s: _rolled(s, v2))
    gates = [(t, a.status) for t, a in applied(driver, "SetServingGate") if a.name == POD0]  # type: ignore[attr-defined]
    off = next(t for t, on in gates if not on)  # the in-place drain
    back = next(t for t, on in gates if on and t > off)
    assert [on for t, on in gates if t > back] == [], (GO, "taken out of rotation again while it waited")
    ready = next(cd for cd in sim.pods[POD0].obj["status"]["conditions"] if cd["type"] == "Ready")
    promoted = next(
        t
        for t, a in applied(driver, "WriteStatus")
        if (a.status.get("instanceStatuses") or [{}])[0].get("runningRevision") == v2  # type: ignore[attr-defined]
    )
    since = parse_time(ready["lastTransitionTime"])
    assert since is not None
    assert (promoted - since).total_seconds() >= 20, GO


def test_in_place_paused_completes_the_patch() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdate_InPlacePausedCompletesThePatch: an in-place patch is one step, so a pause taken while
    it runs does not interrupt it: the pod's images reach the target."""
    sim, driver = _ready()
    sim.update_spec(lifecycle=_lc(markNotReadyDuringLifecycle=True))
    sim.image = "vllm:v2"
    driver.one_pass()
    assert _op(sim)["step"] == "InPlace"
    sim.update_spec(paused=True)
    for _ in range(40):
        sim.advance(0.5)
        driver.one_pass()
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "vllm:v2", GO
    assert any(isinstance(a, A.PatchPodInPlace) and a.images for _, a in driver.log), GO


@pytest.mark.xfail(
    strict=True,
    reason=(
        "known difference: Go's recreate (ops/update_recreate.go recreateUpdate) keeps operation.step at "
        "Drain through its delete and rebuild phases; ours writes CreatePods once the old pod is gone"
    ),
)
def test_recreate_keeps_its_step_at_drain() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceRollLosingItsPodTwiceReDerivesTheSameRecreate and
    TestUpdateWithPods_InPlaceReadinessAndRetargetAfterThePodLoss, their ``Step=Drain`` checks: the
    recreate that owns the row after the pod loss is at step Drain on the passes after it."""
    sim, driver, _ = _in_place_without_pod()
    driver.one_pass()
    sim.advance(0.5)
    driver.one_pass()
    sim.advance(0.5)
    driver.one_pass()
    assert _op(sim).get("step") == "Drain", GO


def _in_place_in_flight() -> tuple[Sim, Any]:
    """Go's ``inPlaceInFlightFixture``: an in-place roll whose patch is issued (the pod's spec on
    ``vllm:v2``) and not yet confirmed. Returns the sim and the observed world."""
    sim, driver = _ready()
    sim.image = "vllm:v2"
    driver.one_pass()
    assert _op(sim)["step"] == "InPlace"
    return sim, sim.observe()


_OBSERVATIONS = {
    "a container restarting under the patch": lambda p, now: replace(
        p, containers=tuple(replace(cv, restart_count=3, running=True, ready=False) for cv in p.containers)
    ),
    "the pod wedged Terminating from outside": lambda p, now: replace(
        p, deletion_timestamp=now - timedelta(minutes=5), finalizers=("test.ome.io/block",)
    ),
    "the node hosting the pod gone": lambda p, now: replace(p, node_name="node-that-no-longer-exists"),
    "the pod evicted": lambda p, now: replace(p, phase="Failed", status_reason="Evicted"),
    "the pod in a terminal Failed phase": lambda p, now: replace(p, phase="Failed"),
    "the pod in a terminal Succeeded phase": lambda p, now: replace(p, phase="Succeeded"),
}


_RECREATES = pytest.mark.xfail(
    strict=True,
    reason="known difference: ours re-resolves an in-place roll whose pod is Terminating or dead to a "
    "recreate at once (step Drain, incarnation 2); Go keeps patching until the operation deadline, only "
    "an absent pod re-resolving it",
)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param("a container restarting under the patch"),
        pytest.param("the pod wedged Terminating from outside", marks=_RECREATES),
        pytest.param("the node hosting the pod gone"),
        pytest.param("the pod evicted", marks=_RECREATES),
        pytest.param("the pod in a terminal Failed phase", marks=_RECREATES),
        pytest.param("the pod in a terminal Succeeded phase", marks=_RECREATES),
    ],
)
def test_in_place_pod_observations_that_decide_nothing(case: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateInPlace_PodObservationsThatDecideNothing (each subtest): with the patch in flight, none of
    these readings of its pod promotes, ends the attempt, bumps the incarnation or moves the step: one
    pass leaves the row Updating at step InPlace, incarnation 1, no failure recorded and no revision
    blocked."""
    _, world = _in_place_in_flight()
    pods = tuple(_OBSERVATIONS[case](p, world.now) if p.name == POD0 else p for p in world.pods)
    out = plan(replace(world, pods=pods))
    writes = [a for a in out.actions if isinstance(a, A.WriteStatus)]
    status = writes[-1].status if writes else world.replica.status
    row = status["instanceStatuses"][0]
    before = world.replica.status["instanceStatuses"][0]
    assert (row["phase"], (row.get("operation") or {}).get("step"), row["incarnation"]) == (
        "Updating",
        "InPlace",
        1,
    ), (GO, row)
    assert row.get("lastFailure") == before.get("lastFailure"), (GO, row)
    assert status.get("retryBlocks") == world.replica.status.get("retryBlocks"), (
        GO,
        status.get("retryBlocks"),
    )
