"""OME's root ``workload_test`` file of 89,329 characters (the dispatcher's rollout tests).

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, a ``workload_test`` package file of 89,329
characters whose path and commit the index does not name (found by content; read whole). Its first
tests are ``reconcile_test.go`` @ 9177c1b0's and are ported in ``test_workload_reconcile.py``; a
28,726-character earlier text holds 8 of its 23 tests. Go drives ``workload.Reconcile`` against a fake
client with a hand-built ``ComponentPlan``; here a replica is applied to the simulated world, the
spec is edited the way the plan was built, and planner passes run. Which of the file's cases are
ported, not mappable or not yet ported is in docs/goparity.md ("The reconciler tier").
"""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner.context import build_context
from omereconcile.planner.surge import SURGE_STEPS
from omereconcile.simulate.cluster import Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, converged
from omereconcile.world import DesiredRevision, format_time
from omerender import constants as c
from tests.sim.test_holds_admission import OutageSim

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ (workload_test, 89,329 characters)"


def _runners(image: str, annotations: dict[str, str] | None = None) -> list[dict[str, Any]]:
    container = {"name": "ome-container", "image": image}
    template: dict[str, Any] = {"spec": {"containers": [container]}}
    if annotations is not None:
        template["metadata"] = {"annotations": annotations}
    return [{"name": "default", "size": 1, "template": template}]


def _converged(replicas: int, lifecycle: dict[str, Any], runners: list[dict[str, Any]]) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas, lifecycle=lifecycle, runners=runners))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def _rows(sim: Sim) -> dict[int, dict[str, Any]]:
    return {int(r["index"]): r for r in sim.rows()}


def _partition(pacing: dict[str, Any] | None, rolling: dict[str, Any] | None) -> int:
    """The partition a pass of a 4-Instance replica applies (Go ``EffectivePartition`` over the spec)."""
    spec: dict[str, Any] = {"replicas": 4}
    if pacing is not None:
        spec["pacing"] = pacing
    if rolling is not None:
        spec["lifecycle"] = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": rolling}}
    sim = Sim()
    sim.apply_replica(base_replica(**spec))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None).partition


@pytest.mark.parametrize(
    ("pacing", "rolling", "want"),
    [
        pytest.param(None, None, 0, id="neither set"),
        pytest.param(None, {"partition": 2}, 2, id="user partition only"),
        pytest.param({"partition": 3}, None, 3, id="pacing partition only"),
        pytest.param({"partition": 3}, {"partition": 2}, 3, id="pacing wins over user"),
        pytest.param({"partition": 0}, {"partition": 2}, 0, id="pacing 0 releases over user"),
        pytest.param({}, {"partition": 2}, 2, id="pacing block without partition defers"),
    ],
)
def test_effective_partition(
    pacing: dict[str, Any] | None, rolling: dict[str, Any] | None, want: int
) -> None:
    """Go: … workload_test (89,329 characters), TestEffectivePartition (each entry): the projected
    ``pacing.partition`` wins whenever it is set, an explicit 0 releasing every Instance even over a
    user partition; only an absent pacing partition defers to ``rollingUpdate.partition``. Go's nil
    (no partition) is ours 0: both hold nothing."""
    assert _partition(pacing, rolling) == want


UNAVAILABLE_STRATEGIES = ["SurgeThenDrain", "InPlaceIfPossible", "RecreatePod"]


@pytest.mark.parametrize(
    "strategy",
    UNAVAILABLE_STRATEGIES,
    ids=["SurgeThenDrain retained", "flipped to InPlaceIfPossible", "flipped to RecreatePod"],
)
def test_strategy_flip_mid_surge_respects_the_unavailability_budget(strategy: str) -> None:
    """Go: … workload_test (89,329 characters),
    TestReconcile_StrategyFlipMidSurge_RespectsUnavailabilityBudget (each entry): four Instances under
    maxSurge 1 and maxUnavailable 1, Instance 0 admitted under maxSurge and still at its Surge step;
    the strategy is edited and one pass runs. At the end of that pass no more Instances are driven as
    unavailable-mode updates than maxUnavailable allows, and no more as surge-mode updates than
    maxSurge allows, whichever mode the in-flight Instance is handed to. Go counts the rows a pass
    stamped; here every row carrying an Update at the end of the pass is counted, a superset."""
    rolling = {"maxSurge": 1, "maxUnavailable": 1}
    sim, driver = _converged(
        4, {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": rolling}}, _runners("vllm:v1")
    )
    sim.update_spec(runners=_runners("vllm:v2"))
    driver.one_pass()
    steps = {i: (r.get("operation") or {}).get("step") for i, r in _rows(sim).items()}
    assert steps[0] in SURGE_STEPS, steps
    sim.update_spec(lifecycle={"updateStrategy": {"type": strategy, "rollingUpdate": rolling}})
    driver.one_pass()
    updates = [
        (r.get("operation") or {}).get("step")
        for r in sim.rows()
        if (r.get("operation") or {}).get("type") == "Update"
    ]
    surging = [s for s in updates if s in SURGE_STEPS]
    unavailable = [s for s in updates if s and s not in SURGE_STEPS]
    assert len(unavailable) <= 1, updates
    assert len(surging) <= 1, updates


def test_in_place_metadata_update_progresses_within_max_unavailable() -> None:
    """Go: … workload_test (89,329 characters),
    TestReconcile_InPlaceMetadataUpdateProgressesWithinMaxUnavailable (also sgl-project/ome
    ``workload/inplace_progress_test.go`` @ bb4fa1ee): two Instances under InPlaceIfPossible with
    maxUnavailable 1 and ``markNotReadyDuringLifecycle: false``; a change to the pod template's
    annotations alone is patched onto each pod in place. The roll holds its one slot until Instance 0
    is promoted on the target, then advances to Instance 1: never both Updating at once, each pod
    keeps its UID, and both end Ready on the target with the new annotation and the target's hash."""
    lifecycle = {
        "updateStrategy": {
            "type": "InPlaceIfPossible",
            "rollingUpdate": {"maxUnavailable": 1},
            "inPlaceUpdateStrategy": {"markNotReadyDuringLifecycle": False},
        }
    }
    sim, driver = _converged(2, lifecycle, _runners("vllm:v1", {"release": "one"}))
    uids = {name: p.obj["metadata"]["uid"] for name, p in sim.pods.items()}
    sim.update_spec(runners=_runners("vllm:v1", {"release": "two"}))
    target = sim.render().name  # type: ignore[union-attr]
    order: list[int] = []

    def one_at_a_time(s: Sim) -> None:
        updating = sorted(int(r["index"]) for r in s.rows() if r.get("phase") == "Updating")
        if len(updating) > 1:
            raise InvariantError(f"both Instances Updating at once under maxUnavailable 1: {s.rows()}")
        for index in updating:
            if index not in order:
                order.append(index)

    driver.extra_checks.append(one_at_a_time)
    driver.run(
        lambda s: (
            converged(s)
            and all(r.get("runningRevision") == target and r.get("phase") == "Ready" for r in s.rows())
        )
    )
    assert order == [0, 1]
    for name, pod in sim.pods.items():
        meta = pod.obj["metadata"]
        assert meta["uid"] == uids[name]
        assert (meta.get("annotations") or {}).get("release") == "two"
        assert meta["labels"]["ome.io/revision-hash"] == target.rsplit("-", 1)[-1]


# -- the terminating-surge fixtures: extra pods the API still lists hold surge slots ---------------

SURGE_ONE = {
    "updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
}
GRACE = 30.0


def _extra_pod(
    sim: Sim, index: int, ordinal: int, *, terminating: bool, listed_past_grace: bool = False
) -> str:
    """A pod of Instance ``index`` at ``ordinal`` on a revision no row runs (Go's ``crashrev``): a
    replacement an abandoned attempt left Terminating (``terminatingEnginePod``, deletion deadline
    ``GRACE`` from now; ``listed_past_grace`` keeps the object listed after it, as a kubelet that has
    not reaped it does) or alive (``liveEnginePod``)."""
    source = sim.pods[f"llama-pool-engine-{index % 2}-default-0"]
    obj = copy.deepcopy(source.obj)
    name = f"llama-pool-engine-{index}-default-{ordinal}"
    obj["metadata"].update(name=name, uid=f"uid-{name}")
    labels = obj["metadata"]["labels"]
    labels.update(
        {
            c.LABEL_INSTANCE_INDEX: str(index),
            c.LABEL_POD_ORDINAL: str(ordinal),
            c.LABEL_REVISION_HASH: "crashrev",
        }
    )
    pod = SimPod(obj=obj, created=sim.now, behaviour="ok")
    if terminating:
        deadline = sim.now + timedelta(seconds=GRACE)
        obj["metadata"]["deletionTimestamp"] = format_time(deadline)
        pod.gone_at = None if listed_past_grace else deadline
    sim.pods[name] = pod
    sim.tick()
    return name


def _retired_pod(sim: Sim, driver: Driver) -> str:
    """A Terminating pod of an index the plan no longer owns: the third Instance scaled away, its pod
    inside a ``GRACE`` deletion grace and kept listed past it (Go's index-5 ``terminatingEnginePod``;
    the sim keeps every pod under a row, so the scale-down's ``Deleting`` row stands in for Go's
    row-less index, which ``extra_pod_surge`` reads the same way)."""
    sim.delete_grace = GRACE
    sim.update_spec(replicas=2)
    name = "llama-pool-engine-2-default-0"
    for _ in range(40):
        driver.one_pass()
        if sim.pods[name].obj["metadata"].get("deletionTimestamp"):
            sim.pods[name].gone_at = None
            return name
        sim.advance(0.5)
    raise AssertionError(driver.describe())


def _fail_row(sim: Sim, index: int) -> None:
    """Go ``correctedPushRows``: the row a disposed attempt left, Failed with no operation on its
    running revision, its source still serving."""
    row = next(r for r in sim.status["instanceStatuses"] if r["index"] == index)
    row.update(
        phase="Failed",
        lastFailure={"reason": "CrashLoopBackOff", "message": "replacement crashed after it served"},
    )
    row.pop("operation", None)


def _surge_pods(sim: Sim, target: str) -> list[str]:
    hash_ = target.rsplit("-", 1)[-1]
    return sorted(
        n for n, p in sim.pods.items() if p.obj["metadata"]["labels"].get(c.LABEL_REVISION_HASH) == hash_
    )


def _push(sim: Sim) -> str:
    sim.update_spec(runners=_runners("vllm:v2"))
    return sim.render().name  # type: ignore[union-attr]


def test_corrected_push_waits_for_a_terminating_replacement() -> None:
    """Go: … workload_test (89,329 characters), TestReconcile_CorrectedPushWaitsForATerminatingReplacement:
    a replacement an abandoned attempt left Terminating inside its deletion grace holds its surge
    slot, so a corrected push opens no surge beside it; the Component reports the Budget hold naming
    the Terminating pod, and the pass asks to come back when the pod's grace elapses."""
    sim, driver = _converged(2, SURGE_ONE, _runners("vllm:v1"))
    _fail_row(sim, 1)
    abandoned = _extra_pod(sim, 1, 1, terminating=True)
    target = _push(sim)
    plan = driver.one_pass()
    assert _surge_pods(sim, target) == []
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert hold["target"] == target
    assert abandoned in hold["reason"]
    assert "Terminating pod" in hold["reason"]
    assert plan.requeue_after == pytest.approx(GRACE, abs=1.0)


def test_corrected_push_opens_once_the_replacement_is_gone() -> None:
    """Go: … TestReconcile_CorrectedPushOpensOnceTheReplacementIsGone: the first pass after the
    Terminating replacement leaves the API admits the surge the hold withheld, and the hold clears."""
    sim, driver = _converged(2, SURGE_ONE, _runners("vllm:v1"))
    _fail_row(sim, 1)
    abandoned = _extra_pod(sim, 1, 1, terminating=True)
    target = _push(sim)
    driver.one_pass()
    assert "rolloutHold" in sim.status
    del sim.pods[abandoned]
    sim.advance(1.0)
    driver.one_pass()
    assert len(_surge_pods(sim, target)) == 1
    assert "rolloutHold" not in sim.status


def test_corrected_push_opens_once_the_grace_elapsed_though_the_pod_is_listed() -> None:
    """Go: … TestReconcile_CorrectedPushOpensOnceTheGraceElapsedThoughThePodIsListed: a replacement
    past its own deletion deadline stops counting although its kubelet has not reaped it, so the surge
    opens and the hold clears without anything being force-deleted."""
    sim, driver = _converged(2, SURGE_ONE, _runners("vllm:v1"))
    _fail_row(sim, 1)
    abandoned = _extra_pod(sim, 1, 1, terminating=True, listed_past_grace=True)
    target = _push(sim)
    driver.one_pass()
    assert "rolloutHold" in sim.status
    sim.advance(GRACE + 1.0)
    driver.one_pass()
    assert abandoned in sim.pods  # still listed
    assert len(_surge_pods(sim, target)) == 1
    assert "rolloutHold" not in sim.status


def test_terminating_pod_of_an_unowned_index_holds_the_roll_only_within_its_grace() -> None:
    """Go: … TestReconcile_TerminatingPodOfAnUnownedIndexHoldsTheRollOnlyWithinItsGrace: a pod the
    plan does not own (a scaled-away index), Terminating, holds a surge slot inside its grace, named by
    the hold, the pass waking when the grace elapses; past the grace one surge opens and the hold
    clears, the object listed or not."""
    sim, driver = _converged(3, SURGE_ONE, _runners("vllm:v1"))
    retired = _retired_pod(sim, driver)
    target = _push(sim)
    plan = driver.one_pass()
    assert _surge_pods(sim, target) == []
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert retired in hold["reason"]
    assert plan.requeue_after == pytest.approx(GRACE, abs=1.0)
    sim.advance(GRACE + 1.0)
    driver.one_pass()
    assert len(_surge_pods(sim, target)) == 1
    assert "rolloutHold" not in sim.status


def test_surge_hold_names_the_live_extra_pod() -> None:
    """Go: … TestReconcile_SurgeHoldNamesTheLiveExtraPod: with a live extra pod on Instance 1 and a
    Terminating pod of an unowned index, no start is admitted; the Budget hold names the Terminating
    pod, the live extra pod and says "extra pod", and the pass wakes when the grace elapses. Past it,
    the Instance holding the extra pod starts, evicting its extra pod before it creates anything, and
    the hold clears; Instance 0 waits."""
    sim, driver = _converged(3, SURGE_ONE, _runners("vllm:v1"))
    retired = _retired_pod(sim, driver)
    wreckage = _extra_pod(sim, 1, 1, terminating=False)
    target = _push(sim)
    plan = driver.one_pass()
    assert _surge_pods(sim, target) == []
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert hold["target"] == target
    for want in (retired, wreckage, "extra pod"):
        assert want in hold["reason"], hold["reason"]
    assert plan.requeue_after == pytest.approx(GRACE, abs=1.0)
    sim.advance(GRACE + 1.0)
    driver.one_pass()
    assert _surge_pods(sim, target) == []
    assert wreckage not in sim.pods or sim.pods[wreckage].obj["metadata"].get("deletionTimestamp")
    rows = _rows(sim)
    assert rows[1]["phase"] == "Updating"
    assert rows[0]["phase"] == "Ready"
    assert "rolloutHold" not in sim.status


@pytest.mark.parametrize("node", ["distinct-images", "second-tag-of-one-image"])
@pytest.mark.parametrize("policy", ["None", "RecreateInstanceOnPodRestart"])
@pytest.mark.parametrize("max_unavailable", [1, "25%"], ids=["maxUnavailable-1", "maxUnavailable-25pct"])
def test_in_place_only_image_push_rolls_every_instance(
    max_unavailable: int | str, policy: str, node: str
) -> None:
    """Go: … TestReconcile_InPlaceOnly_ImagePushRollsEveryInstance (each entry): four single-pod
    Instances on v1 under InPlaceOnly; an image push patches each pod where it runs, one Instance out
    of rotation at a time (the budget, 1 of 4 either way), no pod recreated (the same UIDs), no repair
    and no ``RestartTriggered``, until every Instance is Ready on the new revision. The second-tag
    entries (the node reports the pushed image under the old tag) land through the restart count the
    in-place transition records (``planner/inplace.py``, Go's ``replacedSincePatch``)."""
    sim = Sim()
    if node == "second-tag-of-one-image":
        kubelet = sim._kubelet

        def second_tag(pod: SimPod) -> None:
            kubelet(pod)
            for cs in pod.obj["status"].get("containerStatuses", []):
                if cs.get("image") == "vllm:v2":
                    cs["image"] = "vllm:v1"

        sim._kubelet = second_tag  # type: ignore[method-assign]
    lifecycle = {
        "restartPolicy": policy,
        "updateStrategy": {"type": "InPlaceOnly", "rollingUpdate": {"maxUnavailable": max_unavailable}},
    }
    sim.apply_replica(base_replica(replicas=4, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 4)
    uids = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    sim.image = "vllm:v2"
    pushed = sim.render().name  # type: ignore[union-attr]

    def landed() -> bool:
        return (
            converged(sim)
            and sim.status.get("currentRevision") == pushed
            and all(r["phase"] == "Ready" and not r.get("operation") for r in sim.rows())
        )

    for _ in range(160):
        driver.one_pass()
        sim.advance(5)
        assert {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()} == uids, GO
        assert 4 - len(sim.serving_indices()) <= 1, GO
        assert not any((r.get("operation") or {}).get("type") == "Restart" for r in sim.rows()), GO
        if landed():
            break
    assert landed(), GO
    assert {p.obj["spec"]["containers"][0]["image"] for p in sim.pods.values()} == {"vllm:v2"}, GO
    assert "RestartTriggered" not in sim.event_reasons(), GO


def test_rollback_held_in_place_push_on_never_ready_revision_lands_the_starting_revision() -> None:
    """Go: … TestRollback_HeldInPlacePushOnNeverReadyRevisionLandsTheStartingRevision, the standalone
    shape: four single-pod Instances on v1 under InPlaceIfPossible (maxSurge 0, maxUnavailable 1). A
    push whose diff reaches past the images (a readiness probe, here beside an image the sim never
    readies; the sim's pods carry the image alone, so the pod is told by its revision hash) rolls as a
    recreate and parks at its budget: Instance 0 dark on the new revision, the
    other three untouched and serving, through three more passes. Re-applying v1 lands it on every
    Instance within the budget: the three serving Instances keep their pods, Instance 0 is rebuilt at
    v1, no pod of the new revision is left and no repair opens."""
    probe = {"httpGet": {"path": "/never-ready", "port": 8080}}
    lifecycle = {
        "updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    }
    sim, driver = _converged(4, lifecycle, _runners("vllm:v1"))
    sim.behaviour["vllm:v1-probe"] = "never"
    uids = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    starting = sim.status["currentRevision"]
    stuck = _runners("vllm:v1-probe")
    stuck[0]["template"]["spec"]["containers"][0]["readinessProbe"] = probe
    sim.update_spec(runners=stuck)
    pushed = sim.render().name  # type: ignore[union-attr]
    pod0 = "llama-pool-engine-0-default-0"

    def within_budget() -> None:
        assert len(sim.serving_indices()) >= 3, GO
        assert not any((r.get("operation") or {}).get("type") == "Restart" for r in sim.rows()), GO

    def parked() -> bool:
        row = _rows(sim)[0]
        pod = sim.pods.get(pod0)
        return (
            row["phase"] == "Updating"
            and (row.get("operation") or {}).get("targetRevision") == pushed
            and pod is not None
            and pod.obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == pushed.rsplit("-", 1)[-1]
            and all(sim.pods[_pod_name(i)].obj["metadata"]["uid"] == uids[_pod_name(i)] for i in (1, 2, 3))
            and sim.serving_indices() == {1, 2, 3}
        )

    for _ in range(20):
        driver.one_pass()
        sim.advance(5)
        within_budget()
        if parked():
            break
    assert parked(), GO
    for _ in range(3):
        driver.one_pass()
        sim.advance(5)
        within_budget()
    assert parked(), GO

    sim.update_spec(runners=_runners("vllm:v1"))
    for _ in range(40):
        driver.one_pass()
        sim.advance(5)
        within_budget()
        for i in (1, 2, 3):
            assert sim.pods[_pod_name(i)].obj["metadata"]["uid"] == uids[_pod_name(i)], GO
        if (
            converged(sim)
            and sim.status.get("currentRevision") == starting
            and all(r["phase"] == "Ready" and not r.get("operation") for r in sim.rows())
        ):
            break
    assert sim.status.get("currentRevision") == starting, GO
    assert all(r["phase"] == "Ready" and not r.get("operation") for r in sim.rows()), GO
    assert not any(
        p.obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == pushed.rsplit("-", 1)[-1]
        for p in sim.pods.values()
    ), GO
    assert {p.obj["spec"]["containers"][0]["image"] for p in sim.pods.values()} == {"vllm:v1"}, GO
    assert "RestartTriggered" not in sim.event_reasons(), GO


def _pod_name(index: int) -> str:
    return f"llama-pool-engine-{index}-default-0"


# -- an admission outage on a surge, the ceiling over a live extra pod, the floor's release ----------


def test_admission_outage_on_a_surge_holds_at_the_cadence() -> None:
    """Go: … workload_test (89,329 characters), TestReconcile_AdmissionOutageOnASurgeHoldsAtTheCadence:
    two single-pod Instances serving v1 under SurgeThenDrain maxSurge 1; a push while the API server
    cannot call its admission webhook refuses the surge's create on six passes. The wait is announced
    once (``InstanceAdmissionUnavailable``), the first refused pass records it and no later one writes
    the replica, exactly one row (the one surge maxSurge admits) holds ``AdmissionUnavailable`` with
    the API server's words naming the webhook, and both Instances keep serving v1; once admission
    answers the roll completes with no operation left. Go's per-pass ``RequeueAfter`` equal to the
    configured operation cadence is not asserted: ours has no such operator setting, and a refused
    pass ends as an API error the controller retries with its backoff (``controller/passes.py``)."""
    sim = OutageSim(settings=Sim().settings)
    sim.apply_replica(base_replica(replicas=2, lifecycle=SURGE_ONE, runners=_runners("vllm:v1")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.events.clear()
    sim.admission_down = True
    target = _push(sim)
    written = ""
    for refused in range(1, 7):
        if refused == 2:
            # The first refused pass records the wait; from here nothing may rewrite the replica.
            written = str(sim.replica["metadata"]["resourceVersion"])  # type: ignore[index]
        driver.one_pass()
        sim.advance(5)
    assert sim.refusals >= 6, GO
    assert sim.event_reasons().count("InstanceAdmissionUnavailable") == 1, GO
    assert str(sim.replica["metadata"]["resourceVersion"]) == written, GO  # type: ignore[index]
    held = [r for r in sim.rows() if (r.get("operation") or {}).get("waiting") == "AdmissionUnavailable"]
    assert len(held) == 1, (GO, sim.rows())
    assert "failed calling webhook" in held[0]["lastFailure"]["message"], GO
    assert sim.serving_indices() == {0, 1}, GO
    assert {_pod_image(sim, n) for n in sim.live_pods() if sim.gate_of(n) == "True"} == {"vllm:v1"}, GO
    sim.admission_down = False
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == target)
    assert all(not r.get("operation") for r in sim.rows()), GO


def _pod_image(sim: Sim, name: str) -> str:
    return str(sim.pods[name].obj["spec"]["containers"][0]["image"])


def _live_extra_pod(sim: Sim, index: int, ordinal: int) -> str:
    """Go ``liveEnginePod``: a pod of Instance ``index`` at ``ordinal`` on a revision no row runs
    (``crashrev``), alive, Pending, serving nothing (no readiness, no serving gate)."""
    name = _extra_pod(sim, index, ordinal, terminating=False)
    pod = sim.pods[name]
    pod.behaviour = "pending"
    pod.obj["status"] = {"phase": "Pending", "conditions": []}
    sim.tick()
    return name


def test_corrected_push_keeps_the_ceiling_over_a_live_extra_pod() -> None:
    """Go: … TestReconcile_CorrectedPushKeepsTheCeilingOverALiveExtraPod (``wreckedPushRows``): two
    Instances under SurgeThenDrain maxSurge 1, both Failed with no operation on the prior revision after
    a crashing push; Instance 0 holds only its rebuilt pod (alive, on the crashing revision, serving
    nothing), Instance 1 its serving source and the replacement a disposed surge left alive. A corrected
    push: the Component already carries replicas plus maxSurge pods, so the first pass creates nothing,
    never lists more than three pods, evicts the extra pod by starting Instance 1's surge (Updating at
    step ``Surge``), and leaves Instance 0 Failed with no operation. The pass after the eviction opens
    exactly Instance 1's surge (``…-1-default-1`` on the target) and Instance 0 still waits. (Ours
    started the dark Instance 0 at once outside the ceiling, a Create, until a Failed row off the
    target took the roll, as Go's update trigger reads it: ``planner/rollout.py`` ``_failed_row_rolls``.)"""
    sim, driver = _converged(2, SURGE_ONE, _runners("vllm:v1"))
    rebuilt = _live_extra_pod(sim, 0, 0)  # takes the place of Instance 0's pod
    wreckage = _live_extra_pod(sim, 1, 1)
    _fail_row(sim, 0)
    _fail_row(sim, 1)
    target = _push(sim)
    driver.one_pass()
    assert _surge_pods(sim, target) == [], GO
    assert len(sim.pods) <= 3, (GO, sorted(sim.pods))
    assert wreckage not in sim.live_pods(), GO
    rows = _rows(sim)
    assert rows[1]["phase"] == "Updating", (GO, rows[1])
    assert (rows[1].get("operation") or {}).get("step") == "Surge", (GO, rows[1])
    assert rows[0]["phase"] == "Failed", (GO, rows[0])
    assert not rows[0].get("operation"), (GO, rows[0])
    assert rebuilt in sim.pods, GO
    sim.advance(GRACE)  # the evicted pod leaves the API
    driver.one_pass()
    assert _surge_pods(sim, target) == ["llama-pool-engine-1-default-1"], GO
    assert len(sim.pods) <= 3, (GO, sorted(sim.pods))
    rows = _rows(sim)
    assert rows[0]["phase"] == "Failed", (GO, rows[0])
    assert not rows[0].get("operation"), (GO, rows[0])


POLICY_NONE_SURGE = {**SURGE_ONE, "restartPolicy": "None"}
WINDOW = 60.0  # Go's StuckPodGrace of one minute, the proven window


def _second_surge_opened() -> tuple[Sim, Driver, str]:
    """Two single-pod Instances under SurgeThenDrain maxSurge 1, maxUnavailable 0 and restart policy
    None, a one-minute stuck-pod grace, pushed until Instance 0 is Ready on the target (its pod
    promoted, serving) and Instance 1's surge has just opened at step ``Surge``, its source serving."""
    base = Sim()
    sim = Sim(settings=replace(base.settings, stuck_pod_grace_period=timedelta(seconds=WINDOW)))
    sim.apply_replica(base_replica(replicas=2, lifecycle=POLICY_NONE_SURGE, runners=_runners("vllm:v1")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    target = _push(sim)
    for _ in range(400):
        if (_rows(sim)[1].get("operation") or {}).get("step") == "Surge":
            break
        driver.one_pass()
        sim.advance(0.5)
    row0 = _rows(sim)[0]
    assert (row0["phase"], row0.get("runningRevision")) == ("Ready", target), (GO, driver.describe())
    return sim, driver, target


def _promoted(sim: Sim) -> str:
    """Instance 0's one pod, the replacement its surge promoted."""
    (name,) = [n for n in sim.live_pods() if n.startswith("llama-pool-engine-0-")]
    return name


def _floor_checked(sim: Sim, driver: Driver, held: bool) -> Any:
    """One pass over the story's state, then Go's verdict: held, Instance 1 stays at ``Surge`` with its
    source serving and the Component reports the floor's Budget hold naming Instance 0 ("no source
    leaves rotation"); released, Instance 1 moves to ``SurgeDrain``, its source leaves rotation and no
    hold stands."""
    plan = driver.one_pass()
    sim.tick()
    row = _rows(sim)[1]
    source = "llama-pool-engine-1-default-0"
    hold = sim.status.get("rolloutHold") or {}
    if held:
        assert (hold.get("gate"), hold.get("target")) == ("Budget", sim.status["updateRevision"]), (GO, hold)
        assert "no source leaves rotation" in hold.get("reason", ""), (GO, hold)
        assert "Instance 0 " in hold.get("reason", ""), (GO, hold)
        assert (row.get("operation") or {}).get("step") == "Surge", (GO, row)
        assert sim.gate_of(source) == "True", GO
    else:
        assert not hold, (GO, hold)
        assert (row.get("operation") or {}).get("step") == "SurgeDrain", (GO, row)
        assert sim.gate_of(source) != "True", GO
    return plan


def _pass_until(sim: Sim, driver: Driver, at: datetime) -> None:
    while sim.now + timedelta(seconds=1) <= at:
        driver.one_pass()
        sim.advance(1)
    sim.advance((at - sim.now).total_seconds())


@pytest.mark.parametrize(
    "held", [True, False], ids=["Ready again for less than the window", "Ready again for the window"]
)
def test_healed_runner_stops_holding_the_floor(held: bool) -> None:
    """Go: … TestReconcile_HealedRunnerStopsHoldingTheFloor (each entry): Instance 0 is Ready on the
    target with a pod whose runner restarted after the row entered Ready (the sim's ``restart_runner``)
    and serves again on the same row; Instance 1 is at step ``Surge``. While the pod has been Ready
    again for less than the window (half of it) the Instance holds its slot: the Component is below its
    floor, the source keeps serving and the Budget hold names Instance 0. Once the pod has held Ready
    for the window, the source leaves rotation (``SurgeDrain``) and no hold stands. Go's drain gate
    (``DrainGate``, a rollout group's consult) has no counterpart; its asks are the source's drain."""
    sim, driver, _ = _second_surge_opened()
    sim.restart_runner(_promoted(sim))
    ready_again = sim.now + timedelta(seconds=sim.ready_delay)
    _pass_until(sim, driver, ready_again + timedelta(seconds=WINDOW / 2 if held else WINDOW + 1))
    _floor_checked(sim, driver, held)


@pytest.mark.parametrize("held", [True, False], ids=["unready inside the grace", "unready for the grace"])
def test_dark_rolled_instance_holds_no_floor(held: bool) -> None:
    """Go: … TestReconcile_DarkRolledInstanceHoldsNoFloor (each entry): Instance 0 is Ready on the
    target with its promoted pod running but failing readiness since a moment (the sim's never-ready
    runner: ContainersReady False, the serving gate still True, no restart on its record); Instance 1
    is at step ``Surge``. Unready for less than the stuck-pod grace (half of it): the floor holds (the
    source keeps serving, the Budget hold names Instance 0) and the pass wakes no later than the grace
    left. Unready for the grace: the pod is dark, nothing it does lifts the shortfall, so the source
    leaves rotation (``SurgeDrain``) and no hold stands."""
    sim, driver, _ = _second_surge_opened()
    sim.pods[_promoted(sim)].behaviour = "never"
    sim.tick()
    dark_at = sim.now
    _pass_until(sim, driver, dark_at + timedelta(seconds=WINDOW / 2 if held else WINDOW))
    plan = _floor_checked(sim, driver, held)
    if held:
        assert plan.requeue_after is not None, GO
        assert 0 < plan.requeue_after <= WINDOW / 2, (GO, plan.requeue_after)
