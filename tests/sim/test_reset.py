"""``ome.io/reset-instances`` (01 §4.8, 03 §8 rule 20): answered, journaled before any delete, its
events recorded before its removal (Go's order), removed even when nothing is reset, a no-op when
redelivered (Go's "nothing to reset"), and crash-safe between any two actions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omereconcile.actions import DeletePod, RecordEvent, RemoveAnnotation, WriteStatus
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Conflict, Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged, end_state
from omereconcile.world import parse_time

KEY = "ome.io/reset-instances"
HEAD = "InferenceReplica llama-demo/llama-pool component=engine"
RESET_TAIL = (
    "at operator request (ome.io/reset-instances annotation): pods deleted and preserved operation "
    "cleared; the lifecycle passes rebuild them"
)


def _pod(index: int) -> str:
    return f"llama-pool-engine-{index}-default-0"


def _row(sim: Sim, index: int) -> dict[str, Any] | None:
    return next((r for r in sim.rows() if r["index"] == index), None)


def _messages(sim: Sim, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == reason]


def _annotation(sim: Sim) -> str | None:
    assert sim.replica is not None
    return (sim.replica["metadata"].get("annotations") or {}).get(KEY)


def _failing(replicas: int, failing: int) -> tuple[Sim, Driver]:
    """A replica whose Instance ``failing`` crash-loops on its first pod and is marked Failed; the
    revision's first retry waits a minute. Pods created from now on are healthy."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    d = Driver(sim)
    d.run(lambda s: _pod(failing) in s.pods)
    sim.pods[_pod(failing)].behaviour = "crash"
    d.run(lambda s: (_row(s, failing) or {}).get("phase") == "Failed" and len(s.live_pods()) == replicas)
    return sim, d


def _next_retry(sim: Sim) -> Any:
    return parse_time(sim.status["retryBlocks"][0]["nextRetryAt"])


def test_reset_of_one_failed_instance_is_rebuilt_and_ready() -> None:
    sim, d = _failing(1, 0)
    retry_at = _next_retry(sim)
    failed_uid = sim.pods[_pod(0)].obj["metadata"]["uid"]
    phases: list[tuple[str, str | None]] = []

    def track(s: Sim) -> None:
        row = _row(s, 0)
        if row is not None:
            op = row.get("operation") or {}
            seen = (row["phase"], op.get("reason") or op.get("type"))
            if not phases or phases[-1] != seen:
                phases.append(seen)

    d.extra_checks.append(track)
    sim.annotate(KEY, "0")
    p = d.one_pass()
    kinds = [type(a).__name__ for a in p.actions]
    assert kinds == ["WriteStatus", "DeletePod", "RecordEvent", "RemoveAnnotation"]
    assert _annotation(sim) is None
    row = _row(sim, 0)
    assert row is not None
    assert row["phase"] == "Failed"
    assert row["operation"]["reason"] == "Reset"
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 0 {RESET_TAIL}"]
    # The journal clears once the pods are gone; the Instance waits Failed with no operation.
    d.run(lambda s: not s.pods and not (_row(s, 0) or {}).get("operation"), limit=30)
    assert sim.now < retry_at
    assert (_row(sim, 0) or {})["phase"] == "Failed"
    d.run(converged)
    row = _row(sim, 0)
    assert row is not None
    assert (row["phase"], row["incarnation"]) == ("Ready", 1)
    assert row["lastFailure"]["reason"] == "CrashLoopBackOff"
    # The rebuild waited for the revision's backoff: the reset only clears, the gates still apply.
    creates = [t for t, a in applied(d, "CreatePod")]
    assert creates[-1] >= retry_at
    deletes = [a for _, a in applied(d, "DeletePod")]
    assert [a.uid for a in deletes] == [failed_uid]  # type: ignore[attr-defined]
    assert phases == [
        ("Failed", "Reset"),
        ("Failed", None),
        ("Creating", "Create"),
        ("Ready", None),
    ]


def test_reset_all_rebuilds_every_failed_instance() -> None:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    sim.behaviour["vllm:v1"] = "imagepull"
    d = Driver(sim)
    d.run(lambda s: [r["phase"] for r in s.rows()] == ["Failed", "Failed"])
    sim.behaviour["vllm:v1"] = "ok"  # the registry is fixed
    sim.annotate(KEY, "all")
    d.one_pass()
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 0,1 {RESET_TAIL}"]
    assert _messages(sim, "InstancesResetSkipped") == []
    assert sim.live_pods() == []
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    assert [(r["phase"], r["incarnation"]) for r in sim.rows()] == [("Ready", 1), ("Ready", 1)]


def test_a_list_resets_the_failed_and_skips_the_ready_and_the_missing() -> None:
    sim, d = _failing(3, 1)
    before = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    sim.annotate(KEY, " 1, 0 ,7,1")
    p = d.one_pass()
    deleted = [a.name for a in p.actions if isinstance(a, DeletePod)]
    assert deleted == [_pod(1)]
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 1 {RESET_TAIL}"]
    assert _messages(sim, "InstancesResetSkipped") == [
        f"{HEAD}: reset skipped for instance(s) 0 (Phase=Ready), 7 (no such instance)"
    ]
    assert _annotation(sim) is None
    assert all(sim.pods[n].obj["metadata"]["uid"] == before[n] for n in (_pod(0), _pod(2)))
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 3)


def test_a_failed_instance_that_still_serves_is_skipped() -> None:
    """A failed surge keeps the old pod serving: draining it is the rollout's job, not the reset's."""
    sim = Sim()
    sim.apply_replica(base_replica())
    d = Driver(sim)
    d.run(converged)
    sim.behaviour["vllm:v2"] = "crash"
    sim.image = "vllm:v2"
    d.run(lambda s: s.rows()[0]["phase"] == "Failed")
    for value in ("0", "all"):
        sim.annotate(KEY, value)
        p = d.one_pass()
        assert not [a for a in p.actions if isinstance(a, DeletePod)]
        assert _annotation(sim) is None
    assert (
        _messages(sim, "InstancesResetSkipped")
        == [f"{HEAD}: reset skipped for instance(s) 0 (still serving)"] * 2
    )
    assert _messages(sim, "InstancesReset") == []
    assert sim.serving_indices() == {0}


def test_all_with_nothing_failed_says_so_and_removes_the_annotation(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    sim.annotate(KEY, "all")
    p = driver.one_pass()
    assert [type(a).__name__ for a in p.actions] == ["RecordEvent", "RemoveAnnotation"]
    assert _annotation(sim) is None
    assert _messages(sim, "InstancesResetSkipped") == [
        f"{HEAD}: reset requested for all instances but none is Failed; nothing to reset"
    ]


def test_a_failed_instance_with_nothing_left_is_skipped() -> None:
    sim, d = _failing(1, 0)
    sim.annotate(KEY, "0")
    d.run(lambda s: not s.pods and not (_row(s, 0) or {}).get("operation"), limit=30)
    sim.annotate(KEY, "0")
    p = d.one_pass()
    assert not [a for a in p.actions if isinstance(a, WriteStatus | DeletePod)]
    assert _messages(sim, "InstancesResetSkipped") == [
        f"{HEAD}: reset skipped for instance(s) 0 (nothing to reset)"
    ]
    assert _annotation(sim) is None


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ("ALL", "ALL"),
        ("1,x", "x"),
        ("-1", "-1"),
        ("", ""),
        ("0,,1", ""),
        ("1_0", "1_0"),
        ("4294967296", "4294967296"),
    ],
)
def test_a_malformed_value_is_rejected_nothing_reset(value: str, bad: str) -> None:
    sim, d = _failing(1, 0)
    pods = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()}
    sim.annotate(KEY, value)
    p = d.one_pass()
    assert [type(a).__name__ for a in p.actions] == ["RecordEvent", "RemoveAnnotation"]
    ev = p.actions[0]
    assert isinstance(ev, RecordEvent)
    assert (ev.type, ev.event_reason) == ("Warning", "InstancesResetRejected")
    assert ev.message == (
        f'{HEAD}: ome.io/reset-instances="{value}" rejected: "{bad}" is not a non-negative instance '
        "index; nothing reset"
    )
    assert _annotation(sim) is None
    assert {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()} == pods
    assert "operation" not in (_row(sim, 0) or {})


def test_redelivery_after_a_crash_before_the_removal_resets_nothing_twice() -> None:
    """Go reset_instances_test.go TestConsumeResetInstances_CrashBeforeConsume_RedeliveryIsNoOp, in the
    simulated world: the pass records its answer and dies before the removal lands; the redelivery
    deletes and writes nothing, records no second reset, and says "nothing to reset"."""
    sim, d = _failing(1, 0)
    sim.annotate(KEY, "0")
    d.crash_at = frozenset({d.actions_applied + 3})  # dies after the status write, the delete, the event
    d.one_pass()
    assert _annotation(sim) == "0"
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 0 {RESET_TAIL}"]
    journal = (_row(sim, 0) or {})["operation"]
    sim.advance(0.5)
    p = d.one_pass()
    assert not [a for a in p.actions if type(a).__name__ in ("DeletePod", "CreatePod", "WriteStatus")]
    assert [type(a).__name__ for a in p.actions][-2:] == ["RecordEvent", "RemoveAnnotation"]
    assert _annotation(sim) is None
    assert (_row(sim, 0) or {})["operation"] == journal
    assert _messages(sim, "InstancesResetSkipped") == [
        f"{HEAD}: reset skipped for instance(s) 0 (nothing to reset)"
    ]
    assert len(applied(d, "DeletePod")) == 1
    d.run(converged)
    assert len(_messages(sim, "InstancesReset")) == 1


def test_redelivery_after_a_crash_before_the_deletes_finishes_the_reset() -> None:
    """A pass that dies after journaling the reset, before its delete: the redelivery finds the pod
    still live, answers "reset" (no second journal write) and the journal deletes the pod once."""
    sim, d = _failing(1, 0)
    sim.annotate(KEY, "0")
    d.crash_at = frozenset({d.actions_applied + 1})  # dies after the status write
    d.one_pass()
    assert _annotation(sim) == "0"
    journal = (_row(sim, 0) or {})["operation"]
    sim.advance(0.5)
    p = d.one_pass()
    assert [type(a).__name__ for a in p.actions] == ["DeletePod", "RecordEvent", "RemoveAnnotation"]
    assert (_row(sim, 0) or {})["operation"] == journal
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 0 {RESET_TAIL}"]
    d.run(converged)
    assert len(applied(d, "DeletePod")) == 1
    assert len(_messages(sim, "InstancesReset")) == 1


def test_a_plan_from_a_view_read_before_the_removal_landed_changes_nothing() -> None:
    sim, d = _failing(1, 0)
    sim.annotate(KEY, "0")
    assert sim.replica is not None
    stale_rv = sim.replica["metadata"]["resourceVersion"]
    stale = sim.observe()
    d.one_pass()
    late = plan(stale)  # a second worker, or a lagging cache, answering the same request again
    assert isinstance(late.actions[0], WriteStatus)
    with pytest.raises(Conflict):
        sim.apply(late.actions[0], stale_rv)
    # Even the removal alone is pinned: a stale request is never removed unanswered.
    sim.annotate(KEY, "0")
    with pytest.raises(Conflict):
        sim.apply(RemoveAnnotation(KEY, "stale"), stale_rv)


def test_freeze_lets_the_reset_run_and_holds_the_rebuild() -> None:
    sim, d = _failing(1, 0)
    sim.update_spec(paused=True, pauseMode="Freeze")
    retry_at = _next_retry(sim)
    sim.annotate(KEY, "0")
    d.run(lambda s: not s.pods and not (_row(s, 0) or {}).get("operation"), limit=30)
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 0 {RESET_TAIL}"]
    creates = len(applied(d, "CreatePod"))
    while sim.now < retry_at + (retry_at - sim.now):
        d.one_pass()
        sim.advance(5)
    assert len(applied(d, "CreatePod")) == creates
    assert (_row(sim, 0) or {})["phase"] == "Failed"
    sim.update_spec(paused=None, pauseMode=None)
    d.run(converged)
    assert (_row(sim, 0) or {})["incarnation"] == 1


def test_a_held_revision_still_holds_the_rebuild() -> None:
    sim = Sim()
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "imagepull"
    d = Driver(sim)
    d.run(lambda s: s.status.get("rolloutHold", {}).get("gate") == "Held", limit=1200)
    assert sim.live_pods() == [_pod(0)]  # the failed pod is kept for inspection
    sim.annotate(KEY, "0")
    d.run(lambda s: not s.pods and not (_row(s, 0) or {}).get("operation"), limit=30)
    creates = len(applied(d, "CreatePod"))
    for _ in range(20):
        d.one_pass()
        sim.advance(30)
    assert len(applied(d, "CreatePod")) == creates
    assert (_row(sim, 0) or {})["phase"] == "Failed"
    sim.image = "vllm:v2"  # a corrected revision replaces the held one
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)


# -- crash injection ---------------------------------------------------------------------------------


def _reset_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...], int]:
    """Two Instances, 1 fails; ``1,5`` is requested; the Instance is rebuilt Ready."""
    sim, d = _failing(2, 1)
    start = d.actions_applied
    d.crash_at = crash_at
    sim.annotate(KEY, "1,5")
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    assert _annotation(sim) is None
    # Go's order (the events, then the removal): the reset is recorded by at most one pass, since a
    # pass records it only after its delete; a redelivery after a failed removal records its own
    # answer, which names the reset Instance "nothing to reset" (Go's RedeliveryIsNoOp).
    assert len(_messages(sim, "InstancesReset")) <= 1
    skips = set(_messages(sim, "InstancesResetSkipped"))
    assert skips <= {
        f"{HEAD}: reset skipped for instance(s) 5 (no such instance)",
        f"{HEAD}: reset skipped for instance(s) 5 (no such instance), 1 (nothing to reset)",
    }
    return d, end_state(sim), start


_BASE, RESET_END, RESET_START = _reset_scenario(frozenset())
RESET_TOTAL = _BASE.actions_applied


def test_the_reset_scenario_records_each_answer_once() -> None:
    sim = _BASE.sim
    assert _messages(sim, "InstancesReset") == [f"{HEAD}: reset instance(s) 1 {RESET_TAIL}"]
    assert _messages(sim, "InstancesResetSkipped") == [
        f"{HEAD}: reset skipped for instance(s) 5 (no such instance)"
    ]
    assert RESET_TOTAL - RESET_START > 5


@pytest.mark.parametrize("k", range(RESET_START + 1, RESET_TOTAL + 1))
def test_crash_after_any_action_of_a_reset_reaches_the_same_end(k: int) -> None:
    d, state, _ = _reset_scenario(frozenset({k}))
    assert state == RESET_END
    # One reset: the failed pod deleted once, and one rebuild.
    deleted = [a.name for _, a in applied(d, "DeletePod")]  # type: ignore[attr-defined]
    assert deleted.count(_pod(1)) == 1


@settings(
    derandomize=True,
    database=None,
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.sets(st.integers(RESET_START + 1, RESET_TOTAL), min_size=2, max_size=5))
def test_repeated_crashes_during_a_reset_reach_the_same_end(points: set[int]) -> None:
    d, state, _ = _reset_scenario(frozenset(points))
    assert state == RESET_END
    deleted = [a.name for _, a in applied(d, "DeletePod")]  # type: ignore[attr-defined]
    assert deleted.count(_pod(1)) == 1
