"""One test per lesson of 03 §7 that applies to single-pod Instances (lessons 1, 2 and 13 are in
test_failures.py, 10 in test_crash.py; 3–5 are revision-canonicalizer lessons owned by omerender's
golden tests, 11 needs multi-pod Instances)."""

from __future__ import annotations

import copy

from omereconcile.actions import CreateRevision
from omereconcile.planner import plan
from omereconcile.simulate.cluster import UID, Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, applied, converged, ready
from omerender import constants as c


def _roll(sim: Sim, image: str) -> str:
    sim.image = image
    return sim.render().name  # type: ignore[union-attr]


def test_lesson6_existing_revision_is_reused_by_a_fresh_planner(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    assert len(sim.revisions) == 1
    # A brand-new planner (no cache) sees the stored revision and reuses it: no CreateRevision.
    p = plan(sim.observe())
    assert not [a for a in p.actions if isinstance(a, CreateRevision)]
    # Even with the status wiped (as after a restore), the revision is reused by GET-and-compare.
    sim.replica["status"] = {}  # type: ignore[index]
    p = plan(sim.observe())
    assert not [a for a in p.actions if isinstance(a, CreateRevision)]


def test_lesson7_duplicate_revision_causes_no_churn(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    rev = next(iter(sim.revisions.values()))
    dup = copy.deepcopy(rev)
    dup["metadata"]["name"] = "llama-pool-engine-00000000"
    sim.revisions[dup["metadata"]["name"]] = dup  # same data, same number
    before = (sim.live_pods(), sim.status["currentRevision"])
    for _ in range(5):
        p = driver.one_pass()
        assert not [a for a in p.actions if type(a).__name__ in ("CreatePod", "DeletePod", "SetServingGate")]
        sim.advance(5)
    assert (sim.live_pods(), sim.status["currentRevision"]) == before


def test_lesson8_partition_held_through_scale_down_and_up(sim: Sim, driver: Driver) -> None:
    sim.update_spec(replicas=4, pacing={"partition": 1})
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 4)
    v1 = sim.status["currentRevision"]
    v2 = _roll(sim, "vllm:v2")
    driver.run(lambda s: ready(s) and (s.condition("Ready") or {}).get("reason") == "Staged")
    assert [r["runningRevision"] for r in sim.rows()] == [v1, v2, v2, v2]
    sim.update_spec(replicas=0)  # runs one Instance: the Ready lowest index, still held on v1
    driver.run(lambda s: ready(s) and len(s.rows()) == 1 and len(s.live_pods()) == 1)
    assert sim.status["currentRevision"] == v1  # the scale-down did not "complete" the rollout
    sim.update_spec(replicas=2)
    driver.run(lambda s: ready(s) and s.status["readyReplicas"] == 2 and len(s.rows()) == 2)
    assert [r["runningRevision"] for r in sim.rows()] == [v1, v2]
    assert sim.condition("Ready")["reason"] == "Staged"  # type: ignore[index]


def test_lesson9_scale_up_mid_rollout_creates_at_the_target(sim: Sim, driver: Driver) -> None:
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}
    sim.update_spec(replicas=2, lifecycle=lc)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    v2 = _roll(sim, "vllm:v2")
    driver.run(lambda s: any((r.get("operation") or {}).get("type") == "Update" for r in s.rows()))
    sim.update_spec(replicas=4)
    driver.run(
        lambda s: converged(s) and s.status["currentRevision"] == v2 and s.status["readyReplicas"] == 4
    )
    new = [a for _, a in applied(driver, "CreatePod") if a.name.split("-")[3] in ("2", "3")]  # type: ignore[attr-defined]
    assert new
    assert {a.pod["metadata"]["labels"][c.LABEL_REVISION_HASH] for a in new} == {v2.rsplit("-", 1)[1]}  # type: ignore[attr-defined]


def test_lesson12_one_replica_default_surge_completes() -> None:
    sim = Sim()
    sim.apply_replica(base_replica())  # replicas unset, strategy unset (SurgeThenDrain, no budget)
    driver = Driver(sim)
    driver.run(converged)
    driver.floor = lambda s: 1
    v2 = _roll(sim, "vllm:v2")
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)


def test_lesson14_the_instance_out_of_rotation_is_replaced_first(sim: Sim, driver: Driver) -> None:
    """Go's newest ``planUpdateSelection`` offers the budget to fresh starts ``OutOfRotation`` first,
    then in plan (index) order; ``CurrentUnavailableInFlight`` charges the crash-looping Instance's own
    recreate, so no healthy Instance is taken down while Instance 1 is out."""
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim.update_spec(replicas=3, lifecycle=lc)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 3)
    sim.pods["llama-pool-engine-1-default-0"].behaviour = "crash"  # Instance 1 starts crash-looping
    sim.advance(10)
    assert sim.serving_indices() == {0, 2}
    driver.floor = lambda s: 2  # no healthy Instance is taken down while 1 is already out
    v2 = _roll(sim, "vllm:v2")
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    started = [e.message for e in sim.events if e.event_reason == "RecreateUpdateStarted"]
    # Then index order among the serving ones (03 rule 8's "highest index down" is overruled by Go).
    assert [m.split()[2] for m in started] == ["instance=1", "instance=0", "instance=2"]


def test_lesson15_drain_waits_for_endpoint_slices(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    _roll(sim, "vllm:v2")
    old = "llama-pool-engine-0-default-0"
    while not any(not a.status for _, a in applied(driver, "SetServingGate")):  # type: ignore[attr-defined]
        driver.one_pass()
        if not any(not a.status for _, a in applied(driver, "SetServingGate")):  # type: ignore[attr-defined]
            sim.advance(0.5)
    # The gate is False, but the EndpointSlice controller stalls with the old pod still listed ready.
    assert sim.slices[0]["endpoints"][0]["conditions"]["ready"] is True
    real = sim._endpoint_slices
    sim._endpoint_slices = lambda: None  # type: ignore[method-assign]
    try:
        for _ in range(10):
            driver.one_pass()
            sim.advance(2)
        assert old in sim.live_pods()
        assert not applied(driver, "DeletePod")
    finally:
        sim._endpoint_slices = real  # type: ignore[method-assign]
    driver.run(converged)
    assert old not in sim.pods


def test_empty_endpoint_list_for_an_existing_service_is_not_a_drain(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    _roll(sim, "vllm:v2")
    real = sim._endpoint_slices
    sim._endpoint_slices = lambda: setattr(sim, "slices", [])  # type: ignore[method-assign]
    try:
        for _ in range(30):
            driver.one_pass()
            sim.advance(1)
        assert not applied(driver, "DeletePod")
    finally:
        sim._endpoint_slices = real  # type: ignore[method-assign]


def test_revision_collision_bumps_the_count_and_uses_a_new_name() -> None:
    sim = Sim()
    sim.apply_replica(base_replica())
    taken = sim.render().name  # type: ignore[union-attr]
    sim.revisions[taken] = {
        "metadata": {"name": taken, "ownerReferences": [{"uid": UID, "controller": True}]},
        "data": {"podSpec": {"containers": [{"name": "other", "image": "x"}]}},
        "revision": 1,
    }
    driver = Driver(sim)
    driver.run(converged)
    assert sim.status["collisionCount"] == 1
    assert sim.status["currentRevision"] != taken
    msgs = [e.message for e in sim.events if e.event_reason == "RevisionCollision"]
    assert msgs == [
        "InferenceReplica llama-demo/llama-pool ControllerRevision hash collision; CollisionCount bumped to 1"
    ]


def test_revision_history_is_pruned_to_the_limit(sim: Sim, driver: Driver) -> None:
    sim.update_spec(revisionHistoryLimit=1)
    driver.run(converged)
    names = [sim.status["currentRevision"]]
    for image in ("vllm:v2", "vllm:v3", "vllm:v4"):
        names.append(_roll(sim, image))
        driver.run(lambda s, n=names[-1]: converged(s) and s.status["currentRevision"] == n)
    driver.one_pass()
    assert sorted(sim.revisions) == sorted(names[-2:])
    assert sorted(r["revision"] for r in sim.revisions.values()) == [3, 4]


def test_no_revision_is_pruned_without_a_limit(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    for image in ("vllm:v2", "vllm:v3"):
        rev = _roll(sim, image)
        driver.run(lambda s, n=rev: converged(s) and s.status["currentRevision"] == n)
    assert len(sim.revisions) == 3


def test_floor_checker_catches_a_violation() -> None:
    """The invariant machinery itself: an impossible floor must trip."""
    sim = Sim()
    sim.apply_replica(base_replica())
    driver = Driver(sim, floor=lambda s: 5)
    try:
        driver.run(converged)
    except InvariantError:
        return
    raise AssertionError("floor violation went unnoticed")
