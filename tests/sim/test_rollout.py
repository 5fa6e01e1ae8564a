"""Updates: SurgeThenDrain and RecreatePod, budgets, partition, rollback, pause, minReadySeconds."""

from __future__ import annotations

import copy
from typing import Any

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, InvariantError, applied, converged, ready, rolled_back


def _rolled(sim: Sim, rev: str) -> bool:
    return converged(sim) and sim.status["currentRevision"] == rev


def _start(sim: Sim, driver: Driver, replicas: int = 1, **spec: Any) -> str:
    sim.update_spec(replicas=replicas, **spec)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == replicas)
    return str(sim.status["currentRevision"])


def _new_revision(sim: Sim, image: str = "vllm:v2") -> str:
    sim.image = image
    return sim.render().name  # type: ignore[union-attr]


def test_runtime_change_rolls_instance_0_to_the_other_slot(sim: Sim, driver: Driver) -> None:
    _start(sim, driver)
    driver.floor = lambda s: 1  # maxSurge-only SurgeThenDrain: never below the pre-rollout count
    v2 = _new_revision(sim)
    driver.run(lambda s: _rolled(s, v2))
    assert sim.live_pods() == ["llama-pool-engine-0-default-1"]
    row = sim.rows()[0]
    assert (row["incarnation"], row["activeOrdinal"], row["runningRevision"]) == (1, 1, v2)
    creates = applied(driver, "CreatePod")
    gate_off = [(t, a) for t, a in applied(driver, "SetServingGate") if not a.status]  # type: ignore[attr-defined]
    deletes = applied(driver, "DeletePod")
    assert [a.name for _, a in gate_off] == [a.name for _, a in deletes] == ["llama-pool-engine-0-default-0"]  # type: ignore[attr-defined]
    assert creates[-1][0] < gate_off[0][0] <= deletes[0][0]
    assert "RecreateUpdateStarted" in sim.event_reasons()
    assert "RecreateUpdateCompleted" in sim.event_reasons()
    # A second roll goes back to slot 0.
    v3 = _new_revision(sim, "vllm:v3")
    driver.run(lambda s: _rolled(s, v3))
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]


def test_rolling_update_reports_rollout_in_progress(sim: Sim, driver: Driver) -> None:
    _start(sim, driver)
    v2 = _new_revision(sim)
    driver.one_pass()
    cond = sim.condition("Ready")
    assert cond is not None
    assert cond["status"] == "Unknown"
    assert cond["reason"] == "RolloutInProgress"
    assert cond["message"] == f"Rolling out {v2} (0/1 Instances on target)"


def test_recreate_pod_respects_max_unavailable(sim: Sim, driver: Driver) -> None:
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    _start(sim, driver, replicas=3, lifecycle=lc)
    driver.floor = lambda s: 2
    v2 = _new_revision(sim)
    driver.run(lambda s: _rolled(s, v2))
    assert sim.live_pods() == [f"llama-pool-engine-{i}-default-0" for i in range(3)]
    assert [r["incarnation"] for r in sim.rows()] == [2, 2, 2]


def test_max_surge_caps_instances_with_extra_pods(sim: Sim, driver: Driver) -> None:
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": "25%"}}}  # 25% of 3 rounds up to 1
    _start(sim, driver, replicas=3, lifecycle=lc)
    driver.floor = lambda s: 3

    def one_surge(s: Sim) -> None:
        idx = [n.split("-")[3] for n in s.live_pods()]
        if len(idx) - len(set(idx)) > 1:
            raise InvariantError(f"more than one Instance surging: {s.live_pods()}")

    driver.extra_checks.append(one_surge)
    v2 = _new_revision(sim)
    driver.run(lambda s: _rolled(s, v2))


def test_zero_surge_budget_is_a_named_hold(sim: Sim, driver: Driver) -> None:
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 0}}}
    _start(sim, driver, lifecycle=lc)
    _new_revision(sim)
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert hold["reason"] == "per-Component surge budget 0 exhausted (would become 1)"
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]
    sim.update_spec(lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    driver.run(converged)
    assert "rolloutHold" not in sim.status


def test_partition_holds_lowest_and_releases(sim: Sim, driver: Driver) -> None:
    v1 = _start(sim, driver, replicas=3, pacing={"partition": 2})
    v2 = _new_revision(sim)
    driver.floor = lambda s: 3
    driver.run(lambda s: ready(s) and (s.condition("Ready") or {}).get("reason") == "Staged")
    revs = [r["runningRevision"] for r in sim.rows()]
    assert revs == [v1, v1, v2]
    assert sim.condition("Ready")["message"] == (  # type: ignore[index]
        f"Staged at partition 2: 1/3 Instances on {v2}, 2 held on the prior revision"
    )
    sim.update_spec(pacing={"partition": 0})
    driver.run(lambda s: _rolled(s, v2))


def test_rollback_to_a_stored_revision_and_forward_again(sim: Sim, driver: Driver) -> None:
    v1 = _start(sim, driver)
    v2 = _new_revision(sim)
    driver.run(lambda s: _rolled(s, v2))
    sim.update_spec(pacing={"rollbackToRevision": v1})
    driver.run(lambda s: rolled_back(s, v1))
    assert sim.rows()[0]["runningRevision"] == v1
    # Go publishes against the spec's revision while the pin stands (reconciler.go: specTarget): it
    # stays updateRevision, the currentRevision that named it is withdrawn once a row runs another
    # (CurrentRevisionFor), and Ready reads a rollout in flight toward it (computeReadyCondition).
    assert sim.status["updateRevision"] == v2
    assert "currentRevision" not in sim.status
    assert (sim.status["updatedReplicas"], sim.status["readyReplicas"]) == (0, 1)
    cond = sim.condition("Ready")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "Unknown",
        "RolloutInProgress",
        f"Rolling out {v2} (0/1 Instances on target)",
    )
    pod = sim.pods[sim.live_pods()[0]]
    assert pod.obj["spec"]["containers"][0]["image"] == "vllm:v1"
    sim.update_spec(pacing=None)
    driver.run(lambda s: _rolled(s, v2))


def test_rollback_to_a_missing_revision_rolls_to_spec_silently(sim: Sim, driver: Driver) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler.go @ 4dfb96b1,
    Reconcile's canary-rollback block: a name that resolves to no ControllerRevision ("stable CR
    GC'd — nothing to roll back to; proceed normally") rolls to the spec and records nothing."""
    _start(sim, driver)
    v2 = _new_revision(sim)
    sim.update_spec(pacing={"rollbackToRevision": "llama-pool-engine-deadbeef"})
    driver.run(lambda s: _rolled(s, v2))
    assert [e for e in sim.events if "Rollback" in e.event_reason] == []


def test_rollback_to_a_foreign_revision_rolls_to_spec_and_warns(sim: Sim, driver: Driver) -> None:
    """A revision another object controls is never rolled onto (Go reads it without checking the
    controller; ours refuses it): the replica rolls to the spec and one Warning says why and what to do."""
    v1 = _start(sim, driver)
    foreign = copy.deepcopy(sim.revisions[v1])
    foreign["metadata"]["name"] = "llama-pool-engine-f0e1d2c3"
    foreign["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "other",
            "uid": "other-uid",
            "controller": True,
        }
    ]
    sim.revisions["llama-pool-engine-f0e1d2c3"] = foreign
    v2 = _new_revision(sim)
    sim.update_spec(pacing={"rollbackToRevision": "llama-pool-engine-f0e1d2c3"})
    driver.run(lambda s: _rolled(s, v2))
    warnings = [e for e in sim.events if e.event_reason == "RollbackRevisionNotFound"]
    assert len(warnings) == 1
    assert warnings[0].type == "Warning"
    assert warnings[0].message == (
        "pacing.rollbackToRevision llama-pool-engine-f0e1d2c3 names a ControllerRevision that "
        f"InferenceReplica {sim.replica['metadata']['namespace']}/llama-pool does not control; rolling "
        f"to the spec's revision {v2} (name one of this replica's revisions, or remove the field)"
    )


def test_pause_holds_updates_and_new_instances_then_releases(sim: Sim, driver: Driver) -> None:
    _start(sim, driver)
    sim.update_spec(paused=True)
    v2 = _new_revision(sim)
    sim.update_spec(replicas=2)
    for _ in range(6):
        driver.one_pass()
        sim.advance(5)
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]
    assert len(sim.rows()) == 1
    sim.update_spec(paused=False)
    driver.run(lambda s: _rolled(s, v2) and s.status["readyReplicas"] == 2)


def test_pause_mid_rollout_parks_and_resumes(sim: Sim, driver: Driver) -> None:
    _start(sim, driver)
    v2 = _new_revision(sim)
    driver.run(lambda s: any((r.get("operation") or {}).get("type") == "Update" for r in s.rows()))
    sim.update_spec(paused=True)
    driver.one_pass()
    op = sim.rows()[0]["operation"]
    assert op["waiting"] == "Paused"
    assert "deadline" not in op
    before = list(sim.live_pods())
    for _ in range(5):
        sim.advance(5)
        driver.one_pass()
    assert sim.live_pods() == before
    sim.update_spec(paused=False)
    driver.run(lambda s: _rolled(s, v2))


def _kill(sim: Sim, name: str) -> None:
    del sim.pods[name]


def test_pause_rebuilds_no_lost_single_pod_instance_in_either_mode(sim: Sim, driver: Driver) -> None:
    """Go ``workload/plan_decision.go`` ``Plan`` / ``ops/create.go`` ``CreateCommittedIndices``
    (ome-projects/ome): a paused Component runs the Create pass only for a committed create, and
    ``PauseModeRecover`` repairs through the RestartPolicy alone, which a single-pod Instance leaves at
    ``None``. So a lost single-pod Instance stays ``Pending`` under Freeze and under Recover, and the
    unpause rebuilds it (incarnation kept)."""
    _start(sim, driver)
    sim.update_spec(paused=True, pauseMode="Freeze")
    _kill(sim, "llama-pool-engine-0-default-0")
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    assert sim.live_pods() == []
    assert sim.rows()[0]["phase"] == "Pending"
    assert "InstanceDemoted" in sim.event_reasons()
    sim.update_spec(pauseMode="Recover")
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    assert sim.live_pods() == []
    assert sim.rows()[0]["phase"] == "Pending"
    sim.update_spec(paused=False)
    driver.run(lambda s: ready(s) and s.live_pods() == ["llama-pool-engine-0-default-0"])
    assert sim.rows()[0]["incarnation"] == 1  # the rebuild of a Pending Instance keeps it


def test_freeze_lets_a_committed_create_finish(sim: Sim, driver: Driver) -> None:
    """Go ``holds/pause.go`` ``pauseHeldOperation``: "a committed create finishes the set it
    started", under Freeze too; ``CreateCommittedIndices`` completes and promotes it while paused."""
    _start(sim, driver)
    sim.update_spec(replicas=2)
    driver.run(lambda s: any(r["index"] == 1 and r["phase"] == "Creating" for r in s.rows()))
    sim.update_spec(paused=True, pauseMode="Freeze")
    driver.run(lambda s: all(r["phase"] == "Ready" and not r.get("operation") for r in s.rows()))
    assert len(sim.rows()) == 2
    assert sorted(sim.live_pods()) == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"]


def test_min_ready_seconds_paces_the_drain_exactly(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, minReadySeconds=30)
    _new_revision(sim)
    driver.run(lambda s: any(not a.status for _, a in applied(driver, "SetServingGate")))  # type: ignore[attr-defined]
    new = sim.pods["llama-pool-engine-0-default-1"]
    ready_at = next(cd for cd in new.obj["status"]["conditions"] if cd["type"] == "Ready")[
        "lastTransitionTime"
    ]
    off_at = next(t for t, a in applied(driver, "SetServingGate") if not a.status)  # type: ignore[attr-defined]
    from omereconcile.world import parse_time

    waited = (off_at - parse_time(ready_at)).total_seconds()  # type: ignore[operator]
    assert 30 <= waited < 31.5, waited
    # The planner asked to be woken at exactly that instant (not a doubled window).
    assert any(p.requeue_after is not None and 0 < p.requeue_after <= 30 for p in driver.plans)
