"""The status a pass publishes, pinned rule by rule to OME's Go controller (docs/planner.md, "Status").

Each test names the Go function whose behaviour it pins. Scenarios run in the simulated cluster with
the driver's invariants (and crash injection where a test adds it); a few rules that need a status no
honest run reaches quickly start from a converged run and edit the stored status, as a restarted
controller would find it.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from omereconcile.planner.counters import component_counters, instance_counters
from omereconcile.planner.instances import overdue_drain_detail
from omereconcile.planner.out import Out
from omereconcile.planner.rows import Operation, Row
from omereconcile.settings import OperatorSettings, settings_from_configmap
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import Endpoints, PodView, format_time
from omerender import constants as c

POD0 = "llama-pool-engine-0-default-0"
POD1 = "llama-pool-engine-1-default-0"


def _record(driver: Driver, pick: Any) -> list[Any]:
    seen: list[Any] = []

    def check(sim: Sim) -> None:
        if sim.replica is not None and sim.status:
            seen.append(pick(sim))

    driver.extra_checks.append(check)
    return seen


def _start(sim: Sim, driver: Driver, **spec: Any) -> str:
    sim.apply_replica(base_replica(**spec))
    driver.run(converged)
    return str(sim.status["currentRevision"])


def _ready(sim: Sim) -> tuple[str, str, str]:
    cond = sim.condition("Ready") or {}
    return cond.get("status", ""), cond.get("reason", ""), cond.get("message", "")


def _warnings(sim: Sim, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == reason]


# -- counters (aggregate.go CountersForInstance, observation.go TakeInlineV1Publication) -------------------


def test_a_surge_pod_never_dips_the_counters_and_rows_carry_every_pod_count(sim: Sim, driver: Driver) -> None:
    driver.coalescer = None  # every count as computed, not only those published (coalesce.py)
    driver.run(converged)
    row = sim.rows()[0]
    assert (row["podCount"], row["servingPodCount"], row["availablePodCount"], row["admitted"]) == (
        1,
        1,
        1,
        True,
    )
    # Go irstatus.ClearPodDerivedObservations: the pod-derived observations are never persisted.
    assert not {"readyPodCount", "scheduledPodCount", "nodesOccupied"} & row.keys()
    sim.image = "vllm:v2"
    seen = _record(
        driver,
        lambda s: (s.rows()[0]["podCount"], s.status["readyReplicas"]),
    )
    driver.run(converged)
    # InstanceMeetsThreshold: two pods, one ContainersReady, one desired -> the Instance stays ready.
    assert (2, 1) in seen
    assert all(ready == 1 for _, ready in seen)


def test_available_follows_the_slice_endpoint_ready_and_not_terminating() -> None:
    """drain.EndpointAvailable: the headless Service publishes not-ready addresses, so with no
    minReadySeconds window a listed, not-yet-Ready pod counts Available, as it does in Go."""
    pod = PodView.from_dict(
        {
            "metadata": {"name": POD0, "uid": "u", "resourceVersion": "1", "labels": {}},
            "spec": {"nodeName": "n1", "schedulingGates": [{"name": "kueue"}]},
            "status": {"conditions": [{"type": "ContainersReady", "status": "False"}]},
        }
    )
    listed = Endpoints.from_slices(
        [{"endpoints": [{"targetRef": {"name": POD0}, "conditions": {"ready": True, "serving": False}}]}]
    )
    now = sim_now()
    got = instance_counters([pod], listed, timedelta(0), now)
    assert (got.available_pod_count, got.ready_pod_count, got.serving_pod_count) == (1, 0, 0)
    assert got.admitted is False  # a scheduling gate holds it (PodAdmissionGated)
    terminating = Endpoints.from_slices(
        [{"endpoints": [{"targetRef": {"name": POD0}, "conditions": {"ready": True, "terminating": True}}]}]
    )
    assert instance_counters([pod], terminating, timedelta(0), now).available_pod_count == 0
    # Under a window, PodReady must have held for minReadySeconds (IsPodAvailable).
    assert instance_counters([pod], listed, timedelta(seconds=30), now).available_pod_count == 0


def sim_now() -> Any:
    return Sim().now


def test_updated_replicas_skip_a_row_whose_update_targets_another_revision() -> None:
    """observation.go rowOnTargetRevision."""
    t = sim_now()
    plain = Row(index=0, phase="Ready", running_revision="r-2")
    pinned = Row(
        index=1,
        phase="Updating",
        running_revision="r-2",
        operation=Operation("1-Update-0", "Update", "Surge", "r-1", t),
    )
    got = component_counters([plain, pinned], {}, None, "r-2")
    assert (got.replicas, got.updated) == (2, 1)


def test_deleting_rows_count_and_the_floor_is_taken_from_min_desired_rows(sim: Sim, driver: Driver) -> None:
    driver.coalescer = None  # every count as computed, not only those published (coalesce.py)
    _start(sim, driver, replicas=2)
    seen = _record(
        driver,
        lambda s: (s.status["replicas"], s.status["readyReplicas"], s.status["servingReplicas"], _ready(s)),
    )
    sim.update_spec(replicas=1)
    driver.run(lambda s: converged(s) and len(s.rows()) == 1)
    # The Deleting row still counts: ready (ContainersReady) after its gate went False, serving not.
    assert any(r == 2 and ready == 2 and serving == 1 for r, ready, serving, _ in seen), seen
    # Denominator: the rows (2), floor: min(desired 1, rows 2) with no maxUnavailable = 1
    # (isvcstatus.InstanceAvailabilityFloor).
    assert ("True", "MinimumAvailable", "1/2 Instances serving (min 1)") in [cond for *_, cond in seen]
    assert _ready(sim) == ("True", "AllInstancesReady", "1/1 Instances Ready")


# -- currentRevision (aggregate.go CurrentRevisionFor) and retryBlocks -------------------------------------


def _block(rev: str, state: str, at: str, **extra: Any) -> dict[str, Any]:
    return {
        "targetRevision": rev,
        "state": state,
        "attemptsStarted": 1,
        "firstFailureAt": at,
        "lastFailureAt": at,
        "reason": "CrashLoopBackOff",
        **extra,
    }


def test_current_revision_waits_while_a_retry_block_names_the_update_revision(
    sim: Sim, driver: Driver
) -> None:
    v1 = _start(sim, driver)
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    # A restarted controller finds the row Ready on v2 but a live Backoff block for v2 (a crash of the
    # promoted set): the rollout has not proven itself, so currentRevision stays back.
    later = format_time(sim.now + timedelta(minutes=5))
    sim.status["currentRevision"] = v1
    sim.status["retryBlocks"] = [_block(v2, "Backoff", format_time(sim.now), nextRetryAt=later)]
    driver.one_pass()
    assert sim.status["currentRevision"] == v1
    assert _ready(sim) == ("Unknown", "RolloutInProgress", f"Rolling out {v2} (1/1 Instances on target)")
    hold = sim.status["rolloutHold"]
    assert (hold["gate"], hold["target"]) == ("RetryBlock", v2)
    assert hold["reason"] == f"update to {v2} in backoff after 1 failed attempt(s): CrashLoopBackOff"


def test_a_successful_retry_removes_its_block_and_promotes(sim: Sim, driver: Driver) -> None:
    """RetryBlockPruneOnPromote: the Instance Ready on the revision answers its block."""
    _start(sim, driver)
    sim.behaviour["vllm:v2"] = "crash"
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.rows()[0]["phase"] == "Failed")
    assert [b["targetRevision"] for b in sim.status["retryBlocks"]] == [v2]
    sim.behaviour["vllm:v2"] = "ok"
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2, limit=900)
    assert "retryBlocks" not in sim.status


def test_retry_blocks_keep_the_configured_history_and_drop_superseded_ones_unless_paused() -> None:
    """lifecycle.retryBlockHistoryLimit 3 (reconciler.go 4dfb96b1; the order of status_writer.go
    pruneRetryBlocks: oldest lastFailureAt first, order kept) and retryblock_prune.go
    PruneSupersededRetryBlocks (not while paused)."""
    sim = Sim(settings=OperatorSettings(retry_block_history_limit=3))
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _start(sim, driver)
    sim.update_spec(paused=True)
    driver.run(lambda s: s.status.get("observedGeneration") == 2)
    t = [format_time(sim.now - timedelta(minutes=m)) for m in (50, 40, 30, 20, 10)]
    sim.status["retryBlocks"] = [
        _block("old-c", "Held", t[2]),
        _block("old-a", "Held", t[0]),
        _block("old-e", "Held", t[4]),
        _block("old-b", "Held", t[1]),
        _block("old-d", "Held", t[3]),
    ]
    driver.one_pass()
    assert [b["targetRevision"] for b in sim.status["retryBlocks"]] == ["old-c", "old-e", "old-d"]
    sim.update_spec(paused=None)
    driver.one_pass()
    assert "retryBlocks" not in sim.status  # none names a revision still in play


def test_retry_blocks_are_all_kept_without_a_history_limit(sim: Sim, driver: Driver) -> None:
    """No lifecycle.retryBlockHistoryLimit: "Nil keeps every historical block" (reconciler.go
    4dfb96b1 lifecycleSettings); the fixed cap of three is gone."""
    _start(sim, driver)
    sim.update_spec(paused=True)
    driver.run(lambda s: s.status.get("observedGeneration") == 2)
    t = [format_time(sim.now - timedelta(minutes=m)) for m in (50, 40, 30, 20, 10)]
    sim.status["retryBlocks"] = [_block(f"old-{i}", "Held", t[i]) for i in range(5)]
    driver.one_pass()
    assert [b["targetRevision"] for b in sim.status["retryBlocks"]] == [f"old-{i}" for i in range(5)]


def test_retry_block_history_limit_is_read_from_the_operator_configmap() -> None:
    """A positive count is the cap; a non-positive one is reported and treated as unset (Go
    ToRetryBlockHistoryLimit: "a non-positive value is an error the caller treats as unconfigured")."""
    ok = settings_from_configmap({"lifecycle": '{"retryBlockHistoryLimit": 2}'})
    assert (ok.retry_block_history_limit, ok.retry_block_history_limit_invalid) == (2, None)
    bad = settings_from_configmap({"lifecycle": '{"retryBlockHistoryLimit": 0}'})
    assert bad.retry_block_history_limit is None
    assert bad.retry_block_history_limit_invalid is not None
    assert "lifecycle.retryBlockHistoryLimit" in bad.retry_block_history_limit_invalid
    assert settings_from_configmap({}).retry_block_history_limit is None


# -- conditions (status.go) ------------------------------------------------------------------------------


def test_rollout_stalled_ignores_an_instance_retrying_after_its_failure(sim: Sim, driver: Driver) -> None:
    """computeRolloutStalledCondition: an operation started at or after the last failure is a retry."""
    _start(sim, driver)
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    seen = _record(
        driver,
        lambda s: (
            bool(s.rows()[0].get("lastFailure")),
            (s.rows()[0].get("operation") or {}).get("type"),
            (s.condition("RolloutStalled") or {}).get("status"),
        ),
    )
    driver.run(lambda s: (s.status.get("retryBlocks") or [{}])[0].get("attemptsStarted") == 2, limit=600)
    driver.run(lambda s: s.rows()[0].get("operation") is not None, limit=600)
    assert (True, None, "True") in seen  # failed and idle: stalled
    assert (True, "Update", "False") in seen  # the retry in flight: progressing


def test_drain_overdue_is_announced_once_on_the_row_and_read_back_as_the_condition() -> None:
    """ops delete_batch.go announceOverdueDrains and status.go computeDrainOverdueCondition."""
    sim = Sim(delete_grace=120.0)
    driver = Driver(sim)
    _start(sim, driver, replicas=2, lifecycle={"instanceReadyTimeout": "20s"})
    sim.update_spec(replicas=1)
    driver.run(lambda s: (s.condition("DrainOverdue") or {}).get("status") == "True", limit=300)
    row = next(r for r in sim.rows() if r["index"] == 1)
    deadline = row["operation"]["deadline"]
    assert row["phase"] == "Deleting"
    assert row["lastFailure"] == {
        "podName": POD1,
        "reason": "DrainOverdue",
        "message": f"1 pod(s) still Terminating ({POD1})",
        "time": deadline,
    }
    cond = sim.condition("DrainOverdue") or {}
    assert (cond["reason"], cond["message"]) == (
        "DrainsOverdue",
        "1 Instance(s) draining past their deadline (1)",
    )
    assert (sim.condition("RolloutStalled") or {}).get("status") == "False"  # not a rollout failure
    driver.run(lambda s: len(s.rows()) == 1, limit=300)
    events = _warnings(sim, "DrainOverdue")
    assert len(events) == 1
    assert events[0].startswith("OMENative component=engine instance=1: drain overdue by ")
    assert f"(deadline {deadline}); 1 pod(s) still Terminating ({POD1})" in events[0]
    cond = sim.condition("DrainOverdue") or {}
    assert (cond["status"], cond["message"]) == ("False", "no drain is past its deadline")


def test_drain_overdue_detail_tells_terminating_pods_from_pods_still_draining() -> None:
    """ops delete_batch.go overdueDrainPodDetail / overdueDrainPodName: pods with a deletion timestamp
    are "still Terminating", the rest "still draining"; the record names the first Terminating pod."""

    def pod(name: str, deleting: bool) -> PodView:
        meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": name}
        if deleting:
            meta["deletionTimestamp"] = "2025-01-01T00:00:00Z"
        return PodView.from_dict({"metadata": meta, "spec": {}, "status": {}})

    pods = [pod("p-c", False), pod("p-b", True), pod("p-a", False)]
    assert overdue_drain_detail(pods) == (
        "1 pod(s) still Terminating (p-b); 2 pod(s) still draining (p-a, p-c)",
        "p-b",
    )
    assert overdue_drain_detail([pod("p-a", False)]) == ("1 pod(s) still draining (p-a)", "p-a")
    assert overdue_drain_detail([]) == ("no pods observed", "")


def test_instance_ready_timeout_condition_texts(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    cond = sim.condition("InstanceReadyTimeoutUnconfigured") or {}
    text = (
        "no instanceReadyTimeout is set on the Component or in lifecycle.instanceReadyTimeout; "
        "operations open with no readiness deadline"
    )
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "InstanceReadyTimeoutUnconfigured",
        text,
    )
    assert _warnings(sim, "InstanceReadyTimeoutUnconfigured") == [f"OMENative component=engine: {text}"]
    sim.update_spec(lifecycle={"instanceReadyTimeout": "45m"})
    driver.run(lambda s: (s.condition("InstanceReadyTimeoutUnconfigured") or {}).get("status") == "False")
    cond = sim.condition("InstanceReadyTimeoutUnconfigured") or {}
    assert (cond["reason"], cond["message"]) == (
        "InstanceReadyTimeoutConfigured",
        "Instance readiness deadline is 45m0s",
    )


def test_staged_needs_every_row_ready(sim: Sim, driver: Driver) -> None:
    """ReachedDesiredShape: a partition is at rest only when every row, a Deleting one included, is
    Ready."""
    _start(sim, driver, replicas=3, pacing={"partition": 1})
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _ready(s)[1] == "Staged")
    assert _ready(sim) == (
        "True",
        "Staged",
        f"Staged at partition 1: 2/3 Instances on {v2}, 1 held on the prior revision",
    )
    seen = _record(driver, lambda s: ([r["phase"] for r in s.rows()], _ready(s)[1]))
    sim.update_spec(replicas=2)
    driver.run(lambda s: len(s.rows()) == 2 and _ready(s)[1] == "Staged")
    during = [reason for phases, reason in seen if "Deleting" in phases]
    assert during
    assert "Staged" not in during
    assert _ready(sim) == (
        "True",
        "Staged",
        f"Staged at partition 1: 1/2 Instances on {v2}, 1 held on the prior revision",
    )


def test_teardown_writes_rows_only(sim: Sim, driver: Driver) -> None:
    """The Go reconciler skips aggregateAndWriteStatus under teardown: counters and conditions stay."""
    driver.run(converged)
    before = {k: v for k, v in sim.status.items() if k != "instanceStatuses"}
    sim.delete_replica()
    seen = _record(
        driver, lambda s: ({k: v for k, v in s.status.items() if k != "instanceStatuses"}, s.rows())
    )
    driver.run(lambda s: s.replica is None)
    assert seen
    assert all(agg == before for agg, _ in seen)
    assert any(rows and rows[0]["phase"] == "Deleting" for _, rows in seen)


# -- the ome.io/serving gate (podreadiness/readiness.go) ---------------------------------------------------


def _gate(sim: Sim, name: str) -> dict[str, Any]:
    return next(cd for cd in sim.pods[name].obj["status"]["conditions"] if cd["type"] == c.SERVING_GATE)


def test_gate_is_serving_then_not_ready_with_the_writers_holds(sim: Sim, driver: Driver) -> None:
    _start(sim, driver, replicas=2)
    gate = _gate(sim, POD1)
    assert (gate["status"], gate["reason"], gate["message"]) == ("True", "Serving", "")
    seen = _record(driver, lambda s: dict(_gate(s, POD1)) if POD1 in s.pods else None)
    sim.update_spec(replicas=1)
    driver.run(lambda s: POD1 not in s.pods)
    held = [g for g in seen if g is not None and g["status"] == "False"]
    assert held
    assert {(g["reason"], g["message"]) for g in held} == {
        ("NotReady", json.dumps([{"userAgent": "Delete-drain", "key": "1"}], separators=(",", ":")))
    }


def _gated_pod(status: str, holds: list[dict[str, str]], since: str, ordinal: int = 0) -> PodView:
    return PodView.from_dict(
        {
            "metadata": {
                "name": POD0,
                "uid": "u",
                "resourceVersion": "7",
                "labels": {
                    c.LABEL_INSTANCE_INDEX: "0",
                    c.LABEL_INSTANCE_INCARNATION: "1",
                    c.LABEL_POD_ORDINAL: str(ordinal),
                },
            },
            "status": {
                "conditions": [
                    {
                        "type": c.SERVING_GATE,
                        "status": status,
                        "reason": "NotReady" if holds else "Serving",
                        "message": json.dumps(holds, separators=(",", ":")) if holds else "",
                        "lastTransitionTime": since,
                    }
                ]
            },
        }
    )


def test_releasing_one_hold_of_two_keeps_the_not_ready_since_instant() -> None:
    """transitionTime: a write that only changes the hold list carries lastTransitionTime forward, and
    serving again releases only the planner's own holds: a foreign hold keeps the pod out."""
    since = "2026-01-01T00:00:00Z"
    own = {"userAgent": "Delete-drain", "key": "0"}
    foreign = {"userAgent": "Migrate-source-drain", "key": "m"}
    out = Out(sim_now())
    out.gate(_gated_pod("False", [own, foreign], since), True, "serve")
    (act,) = out.actions
    assert (act.status, act.condition_reason, act.last_transition_time) == (False, "NotReady", since)  # type: ignore[attr-defined]
    assert json.loads(act.message) == [foreign]  # type: ignore[attr-defined]
    out = Out(sim_now())
    out.gate(_gated_pod("False", [foreign], since), True, "serve")
    assert out.actions == []


def test_only_a_serving_pod_gets_a_hold_keyed_as_go_keys_it() -> None:
    """MarkPodNotServing is called for IsServing pods only; surgeDrainKey(index, newOrdinal)."""
    since = "2026-01-01T00:00:00Z"
    out = Out(sim_now())
    out.gate(
        _gated_pod("False", [{"userAgent": "Other", "key": "x"}], since), False, "drain", "Update-surge-drain"
    )
    assert out.actions == []
    out.gate(_gated_pod("True", [], since, ordinal=0), False, "drain", "Update-surge-drain")
    (act,) = out.actions
    assert json.loads(act.message) == [{"userAgent": "Update-surge-drain", "key": "update-surge-drain-0-1"}]  # type: ignore[attr-defined]
    assert act.last_transition_time == format_time(sim_now())  # type: ignore[attr-defined]
