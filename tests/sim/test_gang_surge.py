"""SurgeThenDrain, RecreatePod and restarts of multi-pod (gang) Instances (01 §5.2, §4.2)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from test_gang_create import gang_pods, gang_sim

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, InvariantError, applied, converged

RETRY = "ome.io/release-held-revision"


def _up(sim: Sim) -> Driver:
    d = Driver(sim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == len(s.rows()))
    return d


def _new_revision(sim: Sim, image: str = "vllm:v2") -> str:
    sim.image = image
    return sim.render().name  # type: ignore[union-attr]


def _rolled(sim: Sim, rev: str) -> bool:
    return converged(sim) and sim.status["currentRevision"] == rev


def test_gang_surge_builds_a_whole_replacement_at_the_lowest_unused_index() -> None:
    sim = gang_sim(replicas=2, lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    d = _up(sim)
    d.floor = lambda s: 2  # SurgeThenDrain never takes a serving gang out before its replacement serves

    def one_gang_surging(s: Sim) -> None:
        if len(s.rows()) > 3:
            raise InvariantError(f"more than one gang surge at once: {[r['index'] for r in s.rows()]}")

    d.extra_checks.append(one_gang_surging)
    v2 = _new_revision(sim)
    d.one_pass()
    rows = {r["index"]: r for r in sim.rows()}
    # The lowest index moves first (Go's plan order); its replacement takes index 2.
    assert rows[0]["operation"]["step"] == "Surge"
    assert rows[0]["operation"]["surgeIndex"] == 2
    assert "operation" not in rows[1]
    assert rows[2]["operation"]["step"] == "GangSurgeTarget"
    assert (rows[2]["incarnation"], rows[2]["phase"]) == (1, "Creating")
    started = [e.message for e in sim.events if e.event_reason == "RecreateUpdateStarted"]
    assert started == [f"OMENative component=engine instance=0 gang surge to revision {v2} (surge-index=2)"]
    d.run(lambda s: _rolled(s, v2))
    # 0 -> 2, then 1 -> the lowest unused index, which is 0 again once Instance 0 is gone.
    assert sorted(r["index"] for r in sim.rows()) == [0, 2]
    assert sim.live_pods() == gang_pods(0, 2)
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0", "llama-pool-engine-2"]
    assert all(r["incarnation"] == 1 and r["runningRevision"] == v2 for r in sim.rows())
    done = [e.message for e in sim.events if e.event_reason == "RecreateUpdateCompleted"]
    assert (
        done[0]
        == f"OMENative component=engine instance=0 gang surge complete: instance 2 promoted to revision {v2}"
    )
    # The source leaves rotation before any of its pods is deleted, and its PodGroup goes last.
    log = [(type(a).__name__, getattr(a, "name", ""), getattr(a, "status", None)) for _, a in d.log]
    first_delete = next(i for i, e in enumerate(log) if e[0] == "DeletePod")
    assert any(e[0] == "SetServingGate" and e[2] is False for e in log[:first_delete])
    # ... and is deleted only once the EndpointSlices proved it drained, a later pass.
    for name in ("llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"):
        off = min(t for t, a in applied(d, "SetServingGate") if a.name == name and not a.status)  # type: ignore[attr-defined]
        gone = min(t for t, a in applied(d, "DeletePod") if a.name == name)  # type: ignore[attr-defined]
        assert off < gone
    group_delete = next(i for i, e in enumerate(log) if e[0] == "DeletePodGroup")
    assert log[group_delete][1] == "llama-pool-engine-0"
    assert all(e[0] != "DeletePod" or "-0-" not in e[1] for e in log[group_delete:])


def test_a_crash_looping_worker_abandons_the_gang_surge_and_the_old_gang_keeps_serving() -> None:
    sim = gang_sim(replicas=1)
    d = _up(sim)
    v1 = sim.status["currentRevision"]
    d.floor = lambda s: 1
    sim.worker_behaviour["vllm:v2"] = "crash"
    _new_revision(sim)
    d.run(lambda s: "GangSurgeAbandoned" in s.event_reasons() and len(s.rows()) == 1, limit=600)
    row = sim.rows()[0]
    assert (row["index"], row["phase"], row["runningRevision"]) == (0, "Ready", v1)
    assert row.get("operation") is None
    assert sim.live_pods() == gang_pods(0)
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0"]
    abandoned = next(e for e in sim.events if e.event_reason == "GangSurgeAbandoned")
    assert abandoned.type == "Warning"
    assert abandoned.message == (
        "OMENative component=engine instance=0 abandoned failed gang surge (surge-index=1); "
        f"resetting to revision {v1} for a fresh rollout"
    )
    # The failure is recorded against the revision the surge was pinned to (how a crash loop counts
    # toward a hold is the retry ladder's business).
    block = sim.status["retryBlocks"][0]
    assert block["reason"] == "CrashLoopBackOff"
    assert block["targetRevision"] == sim.render().name  # type: ignore[union-attr]
    # The replacement's PodGroup went after its pods.
    kinds = [(type(a).__name__, getattr(a, "name", "")) for _, a in d.log]
    pg = kinds.index(("DeletePodGroup", "llama-pool-engine-1"))
    assert not any(k == "DeletePod" and "-1-" in n for k, n in kinds[pg:])


def test_a_superseded_gang_surge_is_abandoned_as_normal_and_rolls_to_the_new_target() -> None:
    sim = gang_sim(replicas=1)
    d = _up(sim)
    d.floor = lambda s: 1
    sim.behaviour["vllm:v2"] = "never"
    _new_revision(sim)
    for _ in range(4):
        d.one_pass()
        sim.advance(1.0)
    v3 = _new_revision(sim, "vllm:v3")
    d.run(lambda s: _rolled(s, v3))
    abandoned = [e for e in sim.events if e.event_reason == "GangSurgeAbandoned"]
    assert [e.type for e in abandoned] == ["Normal"]
    assert "abandoned superseded gang surge (surge-index=1)" in abandoned[0].message
    assert "retryBlocks" not in sim.status or not sim.status["retryBlocks"]


def test_recreate_pod_recreates_the_whole_gang_at_the_next_incarnation() -> None:
    sim = gang_sim(
        replicas=2,
        lifecycle={"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}},
    )
    d = _up(sim)
    d.floor = lambda s: 1
    v2 = _new_revision(sim)
    d.run(lambda s: _rolled(s, v2))
    assert sim.live_pods() == gang_pods(0, 1)
    assert [(r["index"], r["incarnation"]) for r in sim.rows()] == [(0, 2), (1, 2)]
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0", "llama-pool-engine-1"]


def test_a_worker_deleted_by_hand_restarts_the_whole_gang() -> None:
    sim = gang_sim(replicas=1)
    d = _up(sim)
    leader_uid = sim.pods["llama-pool-engine-0-leader-0"].obj["metadata"]["uid"]
    del sim.pods["llama-pool-engine-0-worker-0"]  # kubectl delete --force
    d.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], row["incarnation"], row["operation"]["type"]) == ("Restarting", 2, "Restart")
    assert row["operation"]["reason"] == "pod count 1 below desired 2"
    triggered = next(e for e in sim.events if e.event_reason == "RestartTriggered")
    assert triggered.type == "Warning"
    assert triggered.message == (
        "OMENative component=engine instance=0 restart triggered: pod count 1 below desired 2 (incarnation=2)"
    )
    d.one_pass()
    gate = next(
        cd
        for cd in sim.pods["llama-pool-engine-0-leader-0"].obj["status"]["conditions"]
        if cd["type"] == "ome.io/serving"
    )
    assert gate["message"] == '[{"userAgent":"Restart-drain","key":"0-2"}]'
    d.run(lambda s: converged(s) and s.rows()[0]["phase"] == "Ready")
    assert sim.live_pods() == gang_pods(0)
    assert sim.pods["llama-pool-engine-0-leader-0"].obj["metadata"]["uid"] != leader_uid
    assert sim.rows()[0]["incarnation"] == 2
    completed = [e.message for e in sim.events if e.event_reason == "RestartCompleted"]
    assert completed == ["OMENative component=engine instance=0 restart complete (incarnation=2)"]
    # The leader left rotation before it was deleted.
    gate_off = [a.name for _, a in applied(d, "SetServingGate") if not a.status]  # type: ignore[attr-defined]
    assert "llama-pool-engine-0-leader-0" in gate_off


def test_restart_policy_none_recreates_only_the_lost_member() -> None:
    sim = gang_sim(replicas=1, lifecycle={"restartPolicy": "None"})
    d = _up(sim)
    leader_uid = sim.pods["llama-pool-engine-0-leader-0"].obj["metadata"]["uid"]
    del sim.pods["llama-pool-engine-0-worker-0"]
    d.run(lambda s: converged(s) and len(s.live_pods()) == 2)
    assert sim.pods["llama-pool-engine-0-leader-0"].obj["metadata"]["uid"] == leader_uid
    assert sim.rows()[0]["incarnation"] == 1
    assert "RestartTriggered" not in sim.event_reasons()


def test_unschedulable_gang_surge_parks_and_leaves_the_serving_gang_alone() -> None:
    sim = gang_sim(replicas=1)
    d = _up(sim)
    d.floor = lambda s: 1
    serving = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    sim.behaviour["vllm:v2"] = "unschedulable"
    _new_revision(sim)
    for _ in range(40):
        d.one_pass()
        sim.advance(5.0)
    src = next(r for r in sim.rows() if r["index"] == 0)
    tgt = next(r for r in sim.rows() if r["index"] == 1)
    assert src["operation"]["step"] == "Surge"
    assert tgt["operation"]["waiting"] == "Unschedulable"
    assert "deadline" not in tgt["operation"]
    assert {n: sim.pods[n].obj["metadata"]["uid"] for n in serving} == serving
    assert all(sim.gate_of(n) == "True" for n in serving)
    # Room frees up: the surge completes.
    sim.behaviour["vllm:v2"] = "ok"
    for p in sim.pods.values():
        if p.behaviour == "unschedulable":
            p.behaviour = "ok"
            p.created = sim.now
    d.run(lambda s: converged(s) and s.status["currentRevision"] == s.status["updateRevision"])
    assert sim.live_pods() == gang_pods(1)


def test_a_revision_whose_gang_surges_keep_failing_is_held_after_three_attempts() -> None:
    sim = gang_sim(replicas=1)
    d = _up(sim)
    d.floor = lambda s: 1
    sim.worker_behaviour["vllm:v2"] = "imagepull"  # a revision-caused failure, charged every time
    v2 = _new_revision(sim)
    d.run(
        lambda s: any(b["state"] == "Held" for b in s.status.get("retryBlocks", [])) and len(s.rows()) == 1,
        limit=1800,
    )
    block = sim.status["retryBlocks"][0]
    assert (block["targetRevision"], block["attemptsStarted"]) == (v2, 3)
    assert sim.event_reasons().count("GangSurgeAbandoned") == 3
    assert "RetryHeld" in sim.event_reasons()
    # Held: no fourth surge, and the old gang serves on.
    for _ in range(20):
        d.one_pass()
        sim.advance(5.0)
    assert sim.event_reasons().count("RecreateUpdateStarted") == 3
    assert sim.live_pods() == gang_pods(0)
    assert sim.status["rolloutHold"]["gate"] == "Held"


@pytest.mark.parametrize("mode", ["Recover", "Freeze"])
def test_a_paused_gang_surge_is_parked_whole_and_finishes_after_the_unpause(mode: str) -> None:
    """Go ``workload/plan_decision.go`` ``pausedUpdateContinuations`` (the newest stored version): a
    gang SurgeThenDrain cycle is excluded whole from a paused pass, in either pause mode; the source
    keeps serving, both rows carry the pause's token with their clocks stopped, and the replacement is
    neither let into rotation nor handed over until the unpause. (Before: the replacement gang was still brought up under Recover.)"""
    sim = gang_sim(replicas=1)
    d = _up(sim)
    d.floor = lambda s: 1
    v2 = _new_revision(sim)
    d.one_pass()  # the surge starts: both rows are written, the replacement gang's pods created
    assert sim.live_pods() == gang_pods(0, 1)
    sim.update_spec(paused=True, pauseMode=mode)
    for _ in range(30):
        d.one_pass()
        sim.advance(1.0)
    assert sim.live_pods() == gang_pods(0, 1), mode
    assert sim.serving_instances() == {0}, mode  # the replacement is not let into rotation
    rows = {r["index"]: r for r in sim.rows()}
    assert rows[0]["operation"]["step"] == "Surge", mode
    for index in (0, 1):
        assert rows[index]["operation"].get("waiting") == "Paused", (mode, index)
        assert not rows[index]["operation"].get("deadline"), (mode, index)
    sim.update_spec(paused=None, pauseMode=None)
    d.run(lambda s: _rolled(s, v2))
    assert sim.live_pods() == gang_pods(1), mode


def test_an_unschedulable_gang_surge_past_its_grace_is_abandoned_without_a_retry_charge() -> None:
    sim = gang_sim(replicas=1)
    sim.settings = replace(sim.settings, unschedulable_grace_period=timedelta(seconds=60))
    d = _up(sim)
    d.floor = lambda s: 1
    v1 = sim.status["currentRevision"]
    source = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    sim.behaviour["vllm:v2"] = "unschedulable"
    _new_revision(sim)
    d.run(lambda s: "GangSurgeAbandoned" in s.event_reasons(), limit=600)
    failed = next(e for e in sim.events if e.event_reason == "InstanceFailed")
    assert failed.message.endswith("Unschedulable")
    abandoned = next(e for e in sim.events if e.event_reason == "GangSurgeAbandoned")
    assert abandoned.type == "Warning"
    # Not the revision's fault: no retry charge, so the next surge starts at once (and parks again).
    assert not sim.status.get("retryBlocks")
    src = next(r for r in sim.rows() if r["index"] == 0)
    assert src["runningRevision"] == v1
    assert {n: sim.pods[n].obj["metadata"]["uid"] for n in source} == source
    assert sim.event_reasons().count("RecreateUpdateStarted") == 2


def test_scale_down_mid_gang_surge_keeps_the_surging_instance_and_its_replacement() -> None:
    sim = gang_sim(replicas=2, lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    d = _up(sim)
    v2 = _new_revision(sim)
    d.one_pass()  # Instance 1 starts its surge to index 2
    sim.update_spec(replicas=1)
    d.run(lambda s: _rolled(s, v2) and len(s.rows()) == 1 and len(s.pod_groups) == 1)
    # Instance 0 was scaled away; Instance 1's replacement (index 2) is the one left.
    assert sim.live_pods() == gang_pods(2)
    assert sorted(sim.pod_groups) == ["llama-pool-engine-2"]


def test_teardown_mid_gang_surge_removes_both_gangs_and_their_pod_groups() -> None:
    sim = gang_sim(replicas=1)
    d = _up(sim)
    _new_revision(sim)
    for _ in range(3):
        d.one_pass()
        sim.advance(1.0)
    assert "llama-pool-engine-1" in sim.pod_groups
    sim.delete_replica()
    d.run(lambda s: s.replica is None)
    assert sim.pods == {}
    assert sim.pod_groups == {}


def test_a_ready_replacement_is_still_abandoned_when_the_target_moves_while_the_source_stands() -> None:
    sim = gang_sim(replicas=1, minReadySeconds=60)
    d = _up(sim)
    d.floor = lambda s: 1
    _new_revision(sim)
    d.run(lambda s: s.serving_instances() == {0, 1})  # the replacement serves, its window is open
    assert next(r for r in sim.rows() if r["index"] == 0)["operation"]["step"] == "Surge"
    v3 = _new_revision(sim, "vllm:v3")
    d.run(lambda s: _rolled(s, v3))
    abandoned = [e for e in sim.events if e.event_reason == "GangSurgeAbandoned"]
    assert [e.type for e in abandoned] == ["Normal"]
    assert sim.live_pods() == gang_pods(1)  # v3's replacement took the freed index 1 again


def _lose_replacement_after_hand_over(sim: Sim, d: Driver) -> None:
    """Run a gang surge to its drain step, then delete a replacement member by hand."""
    d.run(lambda s: any((r.get("operation") or {}).get("step") == "SurgeDrain" for r in s.rows()), limit=120)
    del sim.pods["llama-pool-engine-1-worker-0"]


def test_a_replacement_lost_after_the_hand_over_is_rebuilt_as_the_next_attempt() -> None:
    sim = gang_sim(replicas=1, minReadySeconds=30)
    d = _up(sim)
    v2 = _new_revision(sim)
    _lose_replacement_after_hand_over(sim, d)
    d.one_pass()
    src = next(r for r in sim.rows() if r["index"] == 0)
    assert (src["phase"], src["operation"]["step"], src["lastFailure"]["reason"]) == (
        "Failed",
        "SurgeDrain",
        "ReplacementLost",
    )
    assert (
        src["lastFailure"]["message"]
        == "replacement gang (surge-index=1) lost 1 of 2 member(s) after it took over serving"
    )
    d.run(lambda s: _rolled(s, v2), limit=900)
    rebuilt = [e.message for e in sim.events if e.event_reason == "GangSurgeRebuilt"]
    assert rebuilt == [
        f"OMENative component=engine instance=0 rebuilt 1 of 2 member(s) of the replacement gang (surge-index=1) "
        f"at revision {v2}; retry 1 under a fresh deadline"
    ]
    assert sim.live_pods() == gang_pods(1)


def test_a_lost_replacement_whose_revision_admits_no_attempt_is_held() -> None:
    sim = gang_sim(replicas=1, minReadySeconds=30)
    d = _up(sim)
    v2 = _new_revision(sim)
    _lose_replacement_after_hand_over(sim, d)
    d.one_pass()  # the loss closes the attempt
    # The ladder holds the revision (its attempts are spent): no rebuild, the pair ends held.
    stamp = sim.status["conditions"][0]["lastTransitionTime"]
    sim.status["retryBlocks"] = [
        {
            "targetRevision": v2,
            "state": "Held",
            "attemptsStarted": 3,
            "firstFailureAt": stamp,
            "lastFailureAt": stamp,
            "reason": "ReplacementLost",
        }
    ]
    d.run(lambda s: "GangSurgeHeld" in s.event_reasons() and len(s.rows()) == 1, limit=300)
    row = sim.rows()[0]
    assert (row["index"], row["phase"], row.get("operation")) == (0, "Failed", None)
    assert row["lastFailure"]["reason"] == "ReplacementLost"
    assert row["lastFailure"]["message"] == (
        f"replacement gang (surge-index=1) lost members after it took over serving; revision {v2} holds after "
        "3 attempt(s)"
    )
    held = next(e for e in sim.events if e.event_reason == "GangSurgeHeld")
    assert held.type == "Warning"
    assert held.message.startswith(
        f"OMENative component=engine instance=0 held: revision {v2} admits no further attempt"
    )
    assert "GangSurgeRebuilt" not in sim.event_reasons()
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0"]
    assert "llama-pool-engine-1-leader-0" not in sim.live_pods()


def test_a_lost_replacement_whose_target_moved_is_not_rebuilt_and_the_source_returns() -> None:
    sim = gang_sim(replicas=1, minReadySeconds=30)
    d = _up(sim)
    v1 = sim.status["currentRevision"]
    _new_revision(sim)
    _lose_replacement_after_hand_over(sim, d)
    sim.image = "vllm:v1"  # the spec goes back: the pin is withdrawn
    d.run(lambda s: "GangSurgeAbandoned" in s.event_reasons() and len(s.rows()) == 1, limit=300)
    ev = next(e for e in sim.events if e.event_reason == "GangSurgeAbandoned")
    assert ev.type == "Normal"
    # The source gang was already drained and deleted: the Instance starts afresh at the target.
    assert ev.message.endswith(
        "while the replacement gang was short of members, so nothing is rebuilt at it; the source's pods are "
        "gone and it re-enters as a fresh start at the roll target"
    )
    assert "GangSurgeRebuilt" not in sim.event_reasons()
    d.run(lambda s: converged(s) and s.serving_instances() == {0})
    assert sim.rows()[0]["runningRevision"] == v1
    assert sim.live_pods() == gang_pods(0)
