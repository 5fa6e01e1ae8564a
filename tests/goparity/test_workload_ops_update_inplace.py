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

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.planner import plan
from omereconcile.planner.admission_hold import (
    admission_unavailable_message,
    is_admission_unavailable,
    record_admission_wait,
)
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import ContainerView, DesiredRevision, PodView, World, parse_time
from omerender import constants as c
from tests.goparity.reconciler_world import config_change_cases

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25"
POD0 = "llama-pool-engine-0-default-0"
RECREATE_STEPS = ("Drain",)  # Go keeps a recreate at Drain through every phase
MARKER = c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION
IN_PLACE_REFUSED = "InPlaceUpdateNotPossible"


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
    # Go keeps the recreate's step at Drain (``test_recreate_keeps_its_step_at_drain``).
    assert second["operation"]["step"] in RECREATE_STEPS, (GO, second)
    assert second["operation"]["id"] == before["id"], GO
    assert second["incarnation"] == first["incarnation"], GO
    assert [e.event_reason for e in sim.events[events:]] == [], GO


def test_in_place_readiness_and_retarget_after_the_pod_loss() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceReadinessAndRetargetAfterThePodLoss: once the loss moved the row to the
    recreate, a further revision (v3) is the recreate's to take: step Drain toward v3, the incarnation
    bumped again, the roll not complete. Was a strict xfail: ours retargeted the recreate in flight at
    the same incarnation; Go's ``status.StampRecreating`` guard holds only at the same target
    (``planner/instances.py`` ``_restamp_recreate``)."""
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


def test_recreate_keeps_its_step_at_drain() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateWithPods_InPlaceRollLosingItsPodTwiceReDerivesTheSameRecreate and
    TestUpdateWithPods_InPlaceReadinessAndRetargetAfterThePodLoss, their ``Step=Drain`` checks: the
    recreate that owns the row after the pod loss is at step Drain on the passes after it. Was a strict
    xfail: ours wrote ``CreatePods`` once the old pod was gone (``planner/instances.py``
    ``_step_recreate`` now keeps Go's ``Drain``)."""
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


_DEAD = ("the pod evicted", "the pod in a terminal Failed phase", "the pod in a terminal Succeeded phase")


@pytest.mark.parametrize(
    "case",
    [
        pytest.param("a container restarting under the patch"),
        pytest.param("the pod wedged Terminating from outside"),
        pytest.param("the node hosting the pod gone"),
        *(pytest.param(case) for case in _DEAD),
    ],
)
def test_in_place_pod_observations_that_decide_nothing(case: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateInPlace_PodObservationsThatDecideNothing (each subtest): with the patch in flight, none of
    these readings of its pod promotes, ends the attempt, bumps the incarnation or moves the step: one
    pass leaves the row Updating at step InPlace, incarnation 1, and no revision blocked.

    A pod in a terminal phase (evicted, Failed, Succeeded) follows the newest stored ``inPlaceUpdate``
    (30,306 characters, later than 58a57f25's 29,692): ``recycleTerminalTargets`` frees it on that pass
    (deleted, the recycle recorded on ``lastFailure`` by ``RecordRecycleAttempt``, a
    ``TerminalPodRecycled`` Warning), where 58a57f25's, which this test was written against, patched it
    to the deadline and recorded nothing: the test's "no LastFailure" check is that version's. Every
    other reading leaves ``lastFailure`` as it was and deletes nothing."""
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
    assert status.get("retryBlocks") == world.replica.status.get("retryBlocks"), (
        GO,
        status.get("retryBlocks"),
    )
    deleted = [a.name for a in out.actions if isinstance(a, A.DeletePod)]
    recycled = [
        a for a in out.actions if isinstance(a, A.RecordEvent) and a.event_reason == "TerminalPodRecycled"
    ]
    if case in _DEAD:
        assert (deleted, len(recycled)) == ([POD0], 1), (GO, out.actions)
        assert (row.get("lastFailure") or {}).get("podName") == POD0, (GO, row)
    else:
        assert (deleted, recycled) == ([], []), (GO, out.actions)
        assert row.get("lastFailure") == before.get("lastFailure"), (GO, row)


def test_in_place_dead_pod_is_recycled_then_the_roll_recreates() -> None:
    """Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_inplace.go`` ``inPlaceUpdate``,
    the newest stored version (30,306 characters): "A pod in a terminal phase can never report the new
    image: free it now rather than patch and poll it to the deadline; the empty set then re-resolves the
    roll to recreate". An in-place roll whose pod is evicted under the patch deletes it, re-resolves to
    a recreate within the same attempt (``status.StampRecreateFromInPlace`` edits the operation: its id,
    deadline and recycle count kept, the incarnation bumped) and completes on v2 well inside its
    deadline."""
    sim, driver = _ready()
    sim.image = "vllm:v2"
    v2 = _target(sim)
    driver.one_pass()
    before = _op(sim)
    assert before["step"] == "InPlace"
    evicted = sim.pods[POD0]
    evicted.obj["status"].update(phase="Failed", reason="Evicted")
    evicted.behaviour = "ended"
    sim.advance(0.5)
    driver.one_pass()
    assert (_op(sim)["step"], _row(sim)["incarnation"]) == ("InPlace", 1), GO
    assert any(isinstance(a, A.DeletePod) and a.name == POD0 for _, a in driver.log), GO
    for _ in range(40):  # the pod collected, the roll re-resolves
        sim.advance(0.5)
        driver.one_pass()
        if _op(sim).get("step") != "InPlace":
            break
    op = _op(sim)
    # StampRecreateFromInPlace edits the operation: the attempt's id, deadline and recycle count stay.
    assert (op["step"], op["id"], op.get("deadline"), op.get("retryCount")) == (
        "Drain",
        before["id"],
        before.get("deadline"),
        1,
    ), (GO, op)
    driver.run(lambda s: _rolled(s, v2), limit=300)
    assert _row(sim)["incarnation"] == 2, GO
    reasons = [e.event_reason for e in sim.events]
    assert reasons.index("TerminalPodRecycled") < reasons.index(IN_PLACE_REFUSED), (GO, reasons)


# -- the promote bar over a converged pod, the transition marker, operator edits -------------------


def _decided(world: World) -> tuple[dict[str, Any], list[Any]]:
    """One planner pass over ``world``: the Instance row it leaves and the pod writes it asks for."""
    out = plan(world)
    writes = [a for a in out.actions if isinstance(a, A.WriteStatus)]
    status = writes[-1].status if writes else world.replica.status
    pods = [a for a in out.actions if isinstance(a, (A.PatchPodInPlace, A.SetServingGate, A.DeletePod))]
    return dict(status["instanceStatuses"][0]), pods


def _promoted(row: dict[str, Any], target: str) -> bool:
    return row["phase"] == "Ready" and row.get("runningRevision") == target and not row.get("operation")


def _with_pod(world: World, edit: Callable[[PodView], PodView]) -> World:
    return replace(world, pods=tuple(edit(p) if p.name == POD0 else p for p in world.pods))


def _runtime(image: str, restarts: int | None = None) -> Callable[[PodView], PodView]:
    """The runtime reporting ``image`` (and, given, that restart count) for every container."""
    return lambda p: replace(
        p,
        containers=tuple(
            replace(cv, image=image, restart_count=cv.restart_count if restarts is None else restarts)
            for cv in p.containers
        ),
    )


def _without_marker(p: PodView) -> PodView:
    return replace(p, annotations={k: v for k, v in p.annotations.items() if k != MARKER})


def _converged_in_place(**spec: Any) -> tuple[World, str]:
    """Go's ``newConvergedInPlaceFixture``: an in-place roll whose only remaining step is the
    promote: the pod relabelled to the target, on the target image at runtime, back in rotation and
    PodReady, the row still Updating at step InPlace. Returns the world the promoting pass reads."""
    sim, driver = _ready(**spec)
    sim.update_spec(lifecycle=_lc(markNotReadyDuringLifecycle=True))
    sim.image = "vllm:v2"
    target = _target(sim)
    for _ in range(200):
        world = sim.observe()
        pod = next(p for p in world.pods if p.name == POD0)
        if (
            _op(sim).get("step") == "InPlace"
            and pod.revision_hash == target.rsplit("-", 1)[-1]
            and pod.gate == "True"
            and pod.ready
        ):
            # Go's fixture pod carries no transition marker: the runtime image is the only proof.
            return _with_pod(world, _without_marker), target
        driver.one_pass()
        sim.advance(0.5)
    raise AssertionError("the in-place roll never reached its promote")


def test_in_place_zero_window_promotion_retry_does_not_redrain() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestInPlaceUpdate_ZeroWindowPromotionRetryDoesNotRedrain: with no ``minReadySeconds``, a pass that
    finds the pod already on the target revision and serving promotes it as it is: the row Ready on
    the target with no operation, and the pod never taken out of rotation on that pass."""
    world, target = _converged_in_place()
    row, writes = _decided(world)
    assert _promoted(row, target), (GO, row)
    assert [a for a in writes if isinstance(a, A.SetServingGate) and not a.status] == [], (GO, writes)
    assert [a for a in writes if isinstance(a, A.PatchPodInPlace) and a.images] == [], (GO, writes)


def test_in_place_promotion_keeps_the_runtime_image_check() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestInPlaceUpdate_PromotionKeepsTheRuntimeImageCheck: a pod that is PodReady with no window left
    still waits while its runtime reports the image it was rolled off (the row stays Updating), and
    promotes once the runtime reports the target image."""
    world, target = _converged_in_place()
    row, _ = _decided(_with_pod(world, _runtime("vllm:v1")))
    assert (row["phase"], (row.get("operation") or {}).get("step")) == ("Updating", "InPlace"), (GO, row)
    row, _ = _decided(_with_pod(world, _runtime("vllm:v2")))
    assert _promoted(row, target), (GO, row)


def _metadata_roll() -> tuple[Sim, Driver, str]:
    """Go's fixture of ``TestUpdateInPlaceMetadataRollRepairsImageDriftBeforePromotion``: the running
    and target revisions share the image and differ in a pod annotation only; the pod's image (spec
    and runtime) has drifted from it."""
    sim = Sim()
    runners = _runners("example.com/app:v1", release="one")
    sim.apply_replica(
        base_replica(replicas=1, lifecycle=_lc(markNotReadyDuringLifecycle=False), runners=runners)
    )
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    pod = sim.pods[POD0]
    pod.obj["spec"]["containers"][0]["image"] = "example.com/app:drift"
    pod.runtime_image = "example.com/app:drift"
    sim.update_spec(runners=_runners("example.com/app:v1", release="two"))
    return sim, driver, _target(sim)


def _runners(image: str, *, release: str) -> list[dict[str, Any]]:
    template = {
        "metadata": {"annotations": {"release": release}},
        "spec": {"containers": [{"name": "ome-container", "image": image}]},
    }
    return [{"name": "default", "size": 1, "template": template}]


def _marker(sim: Sim) -> dict[str, Any] | None:
    raw = (sim.pods[POD0].obj["metadata"].get("annotations") or {}).get(MARKER)
    return json.loads(raw) if raw is not None else None


def test_in_place_metadata_roll_repairs_image_drift_before_promotion() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateInPlaceMetadataRollRepairsImageDriftBeforePromotion: an annotation-only roll over a pod
    whose image drifted records the transition marker first (the image still the drift), patches the
    image back on the next pass, does not promote while the runtime still reports the drift, and
    promotes once the runtime runs the revision's image, clearing the marker."""
    sim, driver, target = _metadata_roll()
    driver.one_pass()
    assert (_marker(sim) or {}).get("targetImages") == {"ome-container": "example.com/app:v1"}, GO
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "example.com/app:drift", GO
    sim.advance(0.5)
    driver.one_pass()
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "example.com/app:v1", GO
    assert sim.pods[POD0].obj["metadata"]["annotations"]["release"] == "two", GO
    # The stale read: ContainersReady still true, the runtime still on the drift, not restarted.
    stale = _with_pod(sim.observe(), _runtime("example.com/app:drift", restarts=0))
    row, _ = _decided(stale)
    assert (row["phase"], row.get("runningRevision") == target) == ("Updating", False), (GO, row)
    driver.run(lambda s: _rolled(s, target))
    row = _row(sim)
    assert _promoted(row, target), (GO, row)
    assert sim.pods[POD0].obj["status"]["containerStatuses"][0]["image"] == "example.com/app:v1", GO
    assert _marker(sim) is None, GO


def test_in_place_image_transition_retargets_unconfirmed_images() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestInPlaceImageTransitionRetargetsUnconfirmedImages: a pod still on v1 whose marker records a
    pending move to v2, when the target moves to v3: the marker is rewritten to v3 before any image
    patch, and the patch waits for the next pass."""
    sim, driver = _ready()
    sim.update_spec(lifecycle=_lc(markNotReadyDuringLifecycle=False))
    sim.image = "vllm:v2"
    driver.one_pass()
    assert (_marker(sim) or {}).get("targetImages") == {"ome-container": "vllm:v2"}
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "vllm:v1"
    sim.image = "vllm:v3"
    sim.advance(0.5)
    writes = [a for a in driver.one_pass().actions if isinstance(a, A.PatchPodInPlace)]
    assert [a.images for a in writes] == [{}], (GO, writes)
    assert (_marker(sim) or {}).get("targetImages") == {"ome-container": "vllm:v3"}, GO
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "vllm:v1", GO


def _two_container_roll() -> tuple[World, str]:
    """Go's ``TestInPlaceImageTransitionInvalidMarkersFailClosed`` pod: two containers, ``main`` on
    ``example.com/app:v2`` (the roll's change) and ``helper`` on ``example.com/helper:v1``, the pod's
    spec already the target's. Returns the world the promoting pass would read (row at step InPlace,
    the pod patched, PodReady and listed), its runtime reporting mirror aliases of both images."""

    def runners(app: str) -> list[dict[str, Any]]:
        containers = [
            {"name": "main", "image": app},
            {"name": "helper", "image": "example.com/helper:v1"},
        ]
        return [{"name": "default", "size": 1, "template": {"spec": {"containers": containers}}}]

    sim = Sim()
    sim.apply_replica(
        base_replica(
            replicas=1,
            lifecycle=_lc(markNotReadyDuringLifecycle=False),
            runners=runners("example.com/app:v1"),
        )
    )
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    # The simulated pod factory renders one container; the pod carries the revision's two.
    sim.pods[POD0].obj["spec"]["containers"] = copy.deepcopy(
        runners("example.com/app:v1")[0]["template"]["spec"]["containers"]
    )
    sim.update_spec(runners=runners("example.com/app:v2"))
    target = _target(sim)
    # The simulated kubelet reports one container status; the pass reads the runtime of both.
    exact = {"main": "example.com/app:v2", "helper": "example.com/helper:v1"}
    aliases = {"main": "mirror.example.com/app:v2", "helper": "mirror.example.com/helper:v1"}

    def runtime(images: dict[str, str]) -> Callable[[PodView], PodView]:
        containers = tuple(
            ContainerView(name=n, image=i, ready=True, running=True) for n, i in images.items()
        )
        return lambda p: replace(p, containers=containers)

    for _ in range(200):  # to the pass that would promote: the pod patched, runtime-ready, listed
        world = sim.observe()
        if _promoted(_decided(_with_pod(world, runtime(exact)))[0], target):
            break
        driver.one_pass()
        sim.advance(0.5)
    else:
        raise AssertionError("the two-container roll never reached its promote")
    pod = next(p for p in world.pods if p.name == POD0)
    assert dict(pod.images) == exact
    assert MARKER in pod.annotations
    return _with_pod(world, runtime(aliases)), target


def _with_marker(raw: str) -> Callable[[PodView], PodView]:
    return lambda p: replace(p, annotations={**p.annotations, MARKER: raw})


_BOTH = {"helper": "example.com/helper:v1", "main": "example.com/app:v2"}


@pytest.mark.parametrize(
    ("raw", "corrected"),
    [
        pytest.param("{", _BOTH, id="malformed JSON"),
        pytest.param('{"targetImages":{}}', _BOTH, id="empty target set"),
        pytest.param('{"targetImages":{"removed":"example.com/removed:v1"}}', _BOTH, id="removed container"),
        pytest.param(
            '{"targetImages":{"main":"example.com/app:v1"}}',
            {"main": "example.com/app:v2"},
            id="stale target value",
        ),
        pytest.param(
            '{"targetImages":{"main":"example.com/app:v2"},"confirmed":true}',
            None,
            id="forged confirmed field",
        ),
    ],
)
def test_in_place_image_transition_invalid_markers_fail_closed(
    raw: str, corrected: dict[str, str] | None
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestInPlaceImageTransitionInvalidMarkersFailClosed (each subtest): a marker that is malformed,
    empty, names a container the target lacks, or records a stale image is never taken as proof: the
    pass rewrites it (every target image when it is unreadable, the target's image for each name it
    keeps otherwise) and promotes nothing; an unknown field beside a current marker changes nothing.
    Either way the runtime's mirror aliases never satisfy the exact-image proof: with the marker
    current the row still does not promote."""
    world, target = _two_container_roll()
    row, writes = _decided(_with_pod(world, _with_marker(raw)))
    markers = [json.loads(a.annotations[MARKER]) for a in writes if isinstance(a, A.PatchPodInPlace)]
    assert markers == ([] if corrected is None else [{"targetImages": corrected}]), (GO, writes)
    assert not _promoted(row, target), (GO, row)
    current = raw if corrected is None else json.dumps({"targetImages": corrected})
    row, writes = _decided(_with_pod(world, _with_marker(current)))
    assert [a for a in writes if isinstance(a, A.PatchPodInPlace)] == [], (GO, writes)
    assert not _promoted(row, target), (GO, "runtime aliases satisfied a pending exact-image proof", row)


@pytest.mark.parametrize("tweak", config_change_cases())
def test_in_place_operator_config_changes_do_not_change_the_patch(tweak: Callable[[World], World]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateInPlace_OperatorConfigChangesDoNotChangeThePatch (counted as one case), over
    ``configChangeCases()``: a patch already converging reads none of the operator's knobs, so a pass
    under each edit leaves the row, the pod writes and the wake-up exactly as the unedited pass, and
    writes no RetryBlock. Of Go's seven knobs ours has these three; the scale-down and requeue
    cadences, the gang schedule clamp and the migration audit caps are Go settings ours lacks."""
    sim, _ = _in_place_in_flight()
    driver = Driver(sim)
    for _ in range(40):  # to the pass that records the marker: the pod out of rotation and drained
        sim.advance(0.5)
        world = sim.observe()
        if any(isinstance(a, A.PatchPodInPlace) for a in plan(world).actions):
            break
        driver.one_pass()

    def decided(w: World) -> tuple[Any, ...]:
        out = plan(w)
        written = [a for a in out.actions if isinstance(a, A.WriteStatus)]
        status = dict(written[-1].status) if written else dict(w.replica.status)
        pods = [a for a in out.actions if not isinstance(a, (A.WriteStatus, A.RecordEvent))]
        return status["instanceStatuses"], pods, out.requeue_after, status.get("retryBlocks") or []

    rows, pods, wake, blocks = decided(world)
    assert pods, "the unedited pass has pod work to compare"
    edited = tweak(world)
    got_rows, got_pods, got_wake, got_blocks = decided(edited)
    assert (got_rows, got_pods, got_wake) == (rows, pods, wake), GO
    seeded = {b["targetRevision"] for b in edited.replica.status.get("retryBlocks") or []}
    assert blocks == [], GO
    assert {b["targetRevision"] for b in got_blocks} <= seeded, GO


# -- an admission webhook the API server cannot reach -------------------------------------------------

REFUSAL = (
    'Internal error occurred: failed calling webhook "pod-mutator.example.com": failed to call webhook: '
    'Post "https://ome-webhook.example.svc:443/mutate-pods?timeout=10s": context deadline exceeded'
)


@dataclass
class _AdmissionOutage(Sim):
    """The API server failing closed on a pod-mutating webhook it cannot call: every pod patch is
    refused with a 500 (Go's ``apierrors.NewInternalError``), recorded on the row as the executor
    records it (``planner/admission_hold.py`` ``record_admission_wait``)."""

    down: bool = False

    def apply(self, act: A.Action, replica_rv: str) -> None:
        if self.down and isinstance(act, A.PatchPodInPlace):
            assert act.index is not None
            status, announce = record_admission_wait(self.status, act.index, act.name, REFUSAL, self.now)
            text = admission_unavailable_message("engine", act.index, REFUSAL)
            self.record_refusal(status, announce, "InstanceAdmissionUnavailable", text, REFUSAL)
        super().apply(act, replica_rv)


def test_in_place_admission_unavailable_says_why_the_patch_waits() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_inplace_test.go @ 58a57f25,
    TestUpdateInPlace_AdmissionUnavailable_SaysWhyThePatchWaits: a pod patch refused because the API
    server cannot reach an admission webhook is a wait: the row keeps its phase and operation, the
    operation carries the ``AdmissionUnavailable`` token, ``lastFailure`` holds the API server's words,
    no revision is blamed, and one event names the webhook."""
    assert is_admission_unavailable(500, REFUSAL), "the executor classifies Go's refusal as the wait"
    sim = _AdmissionOutage()
    sim.apply_replica(base_replica(replicas=1, lifecycle=_lc(markNotReadyDuringLifecycle=False)))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.down = True
    sim.image = "vllm:v2"
    for _ in range(3):
        driver.one_pass()
        sim.advance(0.5)
    row, op = _row(sim), _op(sim)
    assert (row["phase"], op.get("step"), op.get("waiting")) == (
        "Updating",
        "InPlace",
        "AdmissionUnavailable",
    ), (
        GO,
        row,
    )
    failure = row.get("lastFailure") or {}
    assert failure.get("reason") == "AdmissionUnavailable", (GO, failure)
    assert "failed calling webhook" in str(failure.get("message")), (GO, failure)
    assert not sim.status.get("retryBlocks"), GO
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "vllm:v1", GO
    named = [
        e
        for e in sim.events
        if e.event_reason == "InstanceAdmissionUnavailable" and "failed calling webhook" in e.message
    ]
    assert len(named) == 1, (GO, [e.event_reason for e in sim.events])
