"""The in-place strategies (``planner/inplace.py``; Go ``ops/update.go`` ``chooseUpdateModeForInstance``,
``ops/update_inplace.go`` ``inPlaceUpdate``): one rule per test."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import World, parse_time
from omerender import constants as c

MARKER = c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION
POD0 = "llama-pool-engine-0-default-0"


def _lc(type_: str, **ips: Any) -> dict[str, Any]:
    strategy: dict[str, Any] = {"type": type_, "rollingUpdate": {"maxUnavailable": 1}}
    if ips:
        strategy["inPlaceUpdateStrategy"] = ips
    return {"updateStrategy": strategy}


def _runners(image: str, env: str = "a") -> list[dict[str, Any]]:
    container = {"name": "ome-container", "image": image, "env": [{"name": "MODE", "value": env}]}
    return [{"name": "default", "size": 1, "template": {"spec": {"containers": [container]}}}]


def _start(sim: Sim, driver: Driver, replicas: int, **spec: Any) -> str:
    sim.update_spec(replicas=replicas, **spec)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == replicas)
    return str(sim.status["currentRevision"])


def _rolled(sim: Sim, rev: str) -> bool:
    return converged(sim) and sim.status["currentRevision"] == rev


def _uids(sim: Sim) -> dict[str, str]:
    return {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}


def test_image_change_patches_every_pod_in_place_and_keeps_the_floor(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, 3, lifecycle=_lc("InPlaceIfPossible"))
    before = _uids(sim)
    nodes = {n: p.obj["spec"]["nodeName"] for n, p in sim.pods.items()}
    driver.floor = lambda s: 2  # 3 Instances, maxUnavailable 1
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert _uids(sim) == before
    assert {n: p.obj["spec"]["nodeName"] for n, p in sim.pods.items()} == nodes
    for p in sim.pods.values():
        assert p.obj["spec"]["containers"][0]["image"] == "vllm:v2"
        assert p.obj["status"]["containerStatuses"][0]["image"] == "vllm:v2"
        assert p.obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == v2.rsplit("-", 1)[-1]
        assert MARKER not in (p.obj["metadata"].get("annotations") or {})
    assert [r["incarnation"] for r in sim.rows()] == [1, 1, 1]
    assert applied(driver, "CreatePod")[3:] == []
    assert applied(driver, "DeletePod") == []
    reasons = sim.event_reasons()
    assert reasons.count("InPlaceUpdateStarted") == reasons.count("InPlaceUpdateCompleted") == 3
    assert "RecreateUpdateStarted" not in reasons
    msgs = [e.message for e in sim.events if e.event_reason == "InPlaceUpdateStarted"]
    assert msgs[0] == f"OMENative component=engine instance=0 in-place update to revision {v2}"


def test_the_operation_steps_in_go_order(sim: Sim, driver: Driver) -> None:
    """Gate False, drain, the transition marker, the image patch, the runtime restart, gate True, then
    the promote with the marker cleared after it: each its own pass, operation Update/InPlace."""
    _start(sim, driver, 1, lifecycle=_lc("InPlaceOnly"))
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.one_pass()
    row = sim.rows()[0]
    op = row["operation"]
    assert (row["phase"], op["type"], op["step"], op["targetRevision"]) == (
        "Updating",
        "Update",
        "InPlace",
        v2,
    )
    assert op["id"].startswith("update-0-")
    driver.run(lambda s: _rolled(s, v2))
    kinds = [
        type(a).__name__ for _, a in driver.log if type(a).__name__ in ("SetServingGate", "PatchPodInPlace")
    ]
    patches = [a for _, a in applied(driver, "PatchPodInPlace")]
    gates = [a for _, a in applied(driver, "SetServingGate")]
    assert kinds[-5:] == [
        "SetServingGate",
        "PatchPodInPlace",
        "PatchPodInPlace",
        "SetServingGate",
        "PatchPodInPlace",
    ]
    assert gates[-2].status is False
    assert gates[-1].status is True
    assert json.loads(gates[-2].message) == [{"userAgent": "Update-in-place", "key": "0-1"}]  # type: ignore[attr-defined]
    marker, patch, clear = patches
    # The image the patch moves to and the container's restart count when it is issued (Go's
    # ``inPlaceImageTransition``): a restart past it is the kubelet acting on the patch.
    assert json.loads(marker.annotations[MARKER]) == {  # type: ignore[attr-defined]
        "targetImages": {"ome-container": "vllm:v2"},
        "restartCounts": {"ome-container": 0},
    }
    assert not marker.images  # type: ignore[attr-defined]
    assert patch.images == {"ome-container": "vllm:v2"}  # type: ignore[attr-defined]
    assert patch.labels == {c.LABEL_REVISION_HASH: v2.rsplit("-", 1)[-1]}  # type: ignore[attr-defined]
    assert clear.annotations == {MARKER: None}  # type: ignore[attr-defined]
    row = sim.rows()[0]
    assert (row["phase"], row["runningRevision"], row.get("operation")) == ("Ready", v2, None)


def test_mark_not_ready_false_keeps_the_pod_in_rotation(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible", markNotReadyDuringLifecycle=False))
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert [a for _, a in applied(driver, "SetServingGate") if not a.status] == []  # type: ignore[attr-defined]
    assert sim.pods[POD0].obj["spec"]["containers"][0]["image"] == "vllm:v2"


def test_grace_period_is_waited_after_the_drain(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible", gracePeriodSeconds=30))
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    # Counted from the gate's recorded transition (second precision, as metav1.Time).
    gate_off = next(a for _, a in applied(driver, "SetServingGate") if not a.status)  # type: ignore[attr-defined]
    since = parse_time(gate_off.last_transition_time)  # type: ignore[attr-defined]
    first_patch = applied(driver, "PatchPodInPlace")[0][0]
    assert since is not None
    assert (first_patch - since).total_seconds() >= 30


def test_in_place_if_possible_recreates_a_change_beyond_images(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible"), runners=_runners("vllm:v1"))
    uid = _uids(sim)[POD0]
    sim.update_spec(runners=_runners("vllm:v1", env="b"))
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert _uids(sim)[POD0] != uid
    assert sim.rows()[0]["incarnation"] == 2
    assert "RecreateUpdateStarted" in sim.event_reasons()
    assert applied(driver, "PatchPodInPlace") == []


def test_in_place_only_refuses_a_change_beyond_images(sim: Sim, driver: Driver) -> None:
    v1 = _start(sim, driver, 2, lifecycle=_lc("InPlaceOnly"), runners=_runners("vllm:v1"))
    before = {n: p.obj["metadata"]["resourceVersion"] for n, p in sim.pods.items()}
    sim.update_spec(runners=_runners("vllm:v1", env="b"))
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    assert {n: p.obj["metadata"]["resourceVersion"] for n, p in sim.pods.items()} == before
    assert [(r["phase"], r["runningRevision"], r.get("operation")) for r in sim.rows()] == [
        ("Ready", v1, None)
    ] * 2
    assert sim.status["currentRevision"] == v1
    warnings = [e for e in sim.events if e.event_reason == "InPlaceUpdateNotPossible"]
    assert warnings
    assert {(e.type, e.message) for e in warnings} == {
        (
            "Warning",
            "OMENative component=engine instance=0 rejected update: InPlaceOnly strategy but diff exceeds container images",
        )
    }


def test_init_container_image_is_not_an_in_place_change(sim: Sim, driver: Driver) -> None:
    runners = _runners("vllm:v1")
    runners[0]["template"]["spec"]["initContainers"] = [{"name": "model-init", "image": "init:v1"}]
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible"), runners=runners)
    runners[0]["template"]["spec"]["initContainers"][0]["image"] = "init:v2"
    sim.update_spec(runners=runners)
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert sim.rows()[0]["incarnation"] == 2
    assert applied(driver, "PatchPodInPlace") == []


def test_multi_pod_instances_recreate_whole(driver: Driver) -> None:
    sim = driver.sim
    sim.workers = 1
    _start(sim, driver, 1, lifecycle=_lc("InPlaceOnly"))
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert sim.rows()[0]["incarnation"] == 2
    assert applied(driver, "PatchPodInPlace") == []
    assert "InPlaceUpdateNotPossible" not in sim.event_reasons()


def test_a_lost_pod_re_resolves_the_roll_to_a_recreate(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible"))
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.one_pass()
    assert sim.rows()[0]["operation"]["step"] == "InPlace"
    del sim.pods[POD0]  # gone under the roll (evicted and collected)
    driver.run(lambda s: _rolled(s, v2))
    assert sim.rows()[0]["incarnation"] == 2
    lost = [e.message for e in sim.events if e.event_reason == "InPlaceUpdateNotPossible"]
    assert lost == [
        f"OMENative component=engine instance=0 lost the pod its in-place update to revision {v2} "
        "was patching; recreating instead"
    ]


def test_annotations_follow_the_revision_and_foreign_ones_stay(sim: Sim, driver: Driver) -> None:
    runners = _runners("vllm:v1")
    runners[0]["template"]["metadata"] = {"annotations": {"a": "1", "gone": "x"}}
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible"), runners=runners)
    notes = sim.pods[POD0].obj["metadata"].setdefault("annotations", {})
    notes.update({"a": "1", "gone": "x", "foreign": "keep"})
    runners = _runners("vllm:v2")
    runners[0]["template"]["metadata"] = {"annotations": {"a": "2"}}
    sim.update_spec(runners=runners)
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert sim.pods[POD0].obj["metadata"]["annotations"] == {"a": "2", "foreign": "keep"}


def test_a_marker_left_by_a_crash_is_taken_over_by_the_next_roll(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, 1, lifecycle=_lc("InPlaceIfPossible"))
    notes = sim.pods[POD0].obj["metadata"].setdefault("annotations", {})
    notes[MARKER] = json.dumps({"targetImages": {"ome-container": "vllm:v1"}})  # a clear that never landed
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert MARKER not in (sim.pods[POD0].obj["metadata"].get("annotations") or {})
    assert sim.pods[POD0].obj["status"]["containerStatuses"][0]["image"] == "vllm:v2"


@dataclass
class _MirroredRuntime(Sim):
    """A node whose runtime reports every image under a mirror's repository name."""

    def observe(self) -> World:
        world = super().observe()
        pods = tuple(
            replace(
                p,
                containers=tuple(replace(cv, image=f"mirror.example.com/{cv.image}") for cv in p.containers),
            )
            for p in world.pods
        )
        return replace(world, pods=pods)


def test_a_container_restarted_since_the_patch_confirms_its_image_under_a_mirror_name() -> None:
    """Go ``update_inplace.go`` (ome-projects/ome @ 58a57f25 and the newest stored version)
    ``inPlaceImageRollConfirmed`` / ``containerImageConfirmed`` / ``replacedSincePatch``: the marker
    records each container's restart count when its patch is issued, and a container the kubelet has
    restarted since counts as running the target image whatever reference the runtime reports. Under a
    registry mirror the roll promotes; before, it waited for the exact name to the deadline. A read
    in which the runtime has not restarted it yet still waits (the stale-read check of
    ``tests/goparity/test_workload_ops_update_inplace.py``)."""
    sim = _MirroredRuntime()
    sim.apply_replica(base_replica(replicas=1, lifecycle=_lc("InPlaceIfPossible")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    uid = sim.pods[POD0].obj["metadata"]["uid"]
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2), limit=120)
    row = sim.rows()[0]
    assert (row["phase"], row["runningRevision"], row["incarnation"]) == ("Ready", v2, 1)
    assert sim.pods[POD0].obj["metadata"]["uid"] == uid
    assert sim.pods[POD0].obj["status"]["containerStatuses"][0]["restartCount"] == 1
