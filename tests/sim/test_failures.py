"""Failures, retries, recycling, render blocks and teardown."""

from __future__ import annotations

import itertools
from datetime import timedelta

from sim_rolling import rolling_into

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged, ready
from omerender import constants as c


def _rolled(sim: Sim, rev: str) -> bool:
    return converged(sim) and sim.status["currentRevision"] == rev


def _warnings(sim: Sim, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == reason and e.type == "Warning"]


def test_crashlooping_surge_fails_old_keeps_serving_then_held_then_fixed(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    driver.floor = lambda s: 1
    sim.behaviour["vllm:v2"] = "crash"
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.rows()[0]["phase"] == "Failed")
    row = sim.rows()[0]
    assert row["lastFailure"]["reason"] == "CrashLoopBackOff"
    assert (
        sim.live_pods() == ["llama-pool-engine-0-default-0"]
        or "llama-pool-engine-0-default-1" not in sim.live_pods()
    )
    msg = _warnings(sim, "InstanceFailed")[0]
    assert msg == (  # escalation/disposition.go DisposeExpiredAttempt, branch 3, ladder configured
        "InferenceReplica llama-demo/llama-pool component=engine instance=0 escalated to Phase=Failed "
        '(pod=""): CrashLoopBackOff: attempt disposed terminal (no workload-caused evidence, relocation '
        "unavailable) and counted on the revision's retry ladder"
    )
    assert sim.condition("Ready")["reason"] == "InstanceFailed"  # type: ignore[index]
    assert sim.condition("Ready")["message"] == "At least one Instance has Phase=Failed"  # type: ignore[index]
    stalled = sim.condition("RolloutStalled")
    assert stalled is not None
    assert stalled["status"] == "True"
    assert stalled["message"] == f"1/1 Instance(s) failing rollout to {v2} (CrashLoopBackOff x1)"
    # One ladder (workload/types retryblock_writer.go ApplyUpdateFailureToRetryBlock, ome-projects/ome
    # 58a57f25): a crash loop is a failed attempt at the revision and counts like any other — the
    # next attempt after 1 min, then 2 min, then Held at maxAttempts (the chart's 3).
    driver.run(lambda s: s.status.get("rolloutHold", {}).get("gate") == "Held", limit=1200)
    starts = [t for t, a in applied(driver, "CreatePod") if a.name.endswith("-1")]  # type: ignore[attr-defined]
    assert len(starts) == 3
    gaps = [(b - a).total_seconds() - 60 for a, b in itertools.pairwise(starts)]
    assert 59 <= gaps[0] < 75, gaps
    assert 119 <= gaps[1] < 135, gaps
    (block,) = sim.status["retryBlocks"]
    assert (block["state"], block["attemptsStarted"], block["reason"]) == ("Held", 3, "CrashLoopBackOff")
    (held,) = _warnings(sim, "RetryHeld")
    assert held.endswith(
        "held after 3 failed attempt(s) (last failure: CrashLoopBackOff); publish a "
        "corrected revision or raise lifecycle.updateRetry limits"
    )
    assert sim.serving_indices() == {0}
    # Lesson 1: a fixed revision rolls with no manual step.
    sim.image = "vllm:v3"
    v3 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v3))
    assert sim.rows()[0]["lastFailure"]["reason"] == "CrashLoopBackOff"  # survives recovery


def test_image_pull_failures_climb_the_ladder_then_hold() -> None:
    """A workload-caused failure charges an attempt: backoff 1 min, then 2 min, then Held (chart policy)."""
    sim, driver = _rolling_into("imagepull")
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.status.get("rolloutHold", {}).get("gate") == "Held", limit=1200)
    starts = [t for t, a in applied(driver, "CreatePod") if a.name.endswith("-1")]  # type: ignore[attr-defined]
    assert len(starts) == 3
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(starts)]
    # Each attempt fails 60 s after it starts (the stuck-pod grace), then waits 1 min, then 2 min.
    assert 59 <= gaps[0] - 60 < 75, gaps
    assert 119 <= gaps[1] - 60 < 135, gaps
    (held,) = _warnings(sim, "RetryHeld")
    assert held == (
        f"InferenceReplica llama-demo/llama-pool component=engine update to revision {v2} held after 3 failed "
        "attempt(s) (last failure: ImagePullBackOff); publish a corrected revision or raise "
        "lifecycle.updateRetry limits"
    )
    assert sim.serving_indices() == {0}


def test_broken_first_revision_replaced_by_fixed_one_single_replica() -> None:
    """Lessons 1 and 2: replicas=1, v1 never becomes ready (image pull), v2 fixes it."""
    sim = Sim()
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "imagepull"
    driver = Driver(sim)
    driver.run(lambda s: bool(s.rows()) and s.rows()[0]["phase"] == "Failed")
    assert sim.rows()[0]["lastFailure"]["reason"] == "ImagePullBackOff"
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: _rolled(s, v2))
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]


def test_never_ready_past_instance_ready_timeout_fails_with_deadline() -> None:
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "never"
    driver = Driver(sim)
    # No retry policy: a deadline is not the revision's fault, so no block paces the next attempt.
    driver.run(lambda s: bool(s.rows()) and bool(s.rows()[0].get("lastFailure")))
    assert "retryBlocks" not in sim.status
    failure = sim.rows()[0]["lastFailure"]
    # escalation/disposition.go: a Running pod that never became ready is the recorded evidence
    # (evidence.ContainersNotReadyTermination); the Warning names the deadline and no pod.
    assert (failure["reason"], failure["podName"]) == ("ContainersNotReady", "llama-pool-engine-0-default-0")
    assert _warnings(sim, "InstanceFailed") == [
        "InferenceReplica llama-demo/llama-pool component=engine instance=0 escalated to Phase=Failed "
        '(pod=""): DeadlineExceeded: Create/CreatePods exceeded InstanceReadyTimeout: attempt disposed '
        "terminal (no workload-caused evidence, relocation unavailable); operation-specific recovery decides "
        "whether another attempt is safe"
    ]
    assert (sim.condition("InstanceReadyTimeoutUnconfigured") or {}).get("status") == "False"


def test_unconfigured_ready_timeout_condition_and_one_warning(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    cond = sim.condition("InstanceReadyTimeoutUnconfigured")
    assert cond is not None
    assert cond["status"] == "True"
    assert len(_warnings(sim, "InstanceReadyTimeoutUnconfigured")) == 1


def test_ended_pod_is_recycled_during_create(sim: Sim, driver: Driver) -> None:
    driver.one_pass()  # finalizer
    sim.advance(0.5)
    driver.one_pass()  # revision, service, status, create
    pod = sim.pods["llama-pool-engine-0-default-0"]
    pod.obj["status"]["phase"] = "Failed"
    pod.obj["status"]["reason"] = "Evicted"
    pod.behaviour = "ended"
    driver.run(converged)
    msgs = _warnings(sim, "TerminalPodRecycled")
    assert msgs == [
        "OMENative component=engine instance=0 deleted terminal pod(s) llama-pool-engine-0-default-0 "
        "(Failed/Evicted) for recreate (Create recycle 1)"
    ]
    # terminal_recycle.go: the dead pod's diagnostics survive on lastFailure.
    failure = sim.rows()[0]["lastFailure"]
    assert (failure["podName"], failure["reason"]) == ("llama-pool-engine-0-default-0", "Evicted")


def _rolling_into(behaviour: str, settings: OperatorSettings | None = None) -> tuple[Sim, Driver]:
    """A converged one-Instance replica (floor 1 from then on) whose next revision, v2, behaves so."""
    return rolling_into(behaviour, settings)


def _parked_unschedulable_surge(settings: OperatorSettings) -> tuple[Sim, Driver]:
    """A converged replica whose next revision cannot schedule, run until its surge is parked."""
    sim, driver = _rolling_into("unschedulable", settings)
    driver.run(lambda s: (s.rows()[0].get("operation") or {}).get("waiting") == "Unschedulable")
    return sim, driver


def test_unschedulable_surge_keeps_old_serving_and_never_charges_the_retry_budget() -> None:
    """Lesson 13: no room to surge → explicit wait with the clock parked, old pod serves, failure
    after the operator's grace; an unschedulable pod is not the revision's fault, so no retry block."""
    sim, driver = _parked_unschedulable_surge(
        OperatorSettings(
            unschedulable_grace_period=timedelta(minutes=2), instance_ready_timeout=timedelta(minutes=1)
        )
    )
    assert "deadline" not in sim.rows()[0]["operation"]  # parked: the 1-minute timeout does not run
    driver.run(lambda s: "InstanceFailed" in s.event_reasons())
    assert sim.rows()[0]["lastFailure"]["reason"] == "Unschedulable"
    assert not sim.status.get("retryBlocks")
    assert "RetryHeld" not in sim.event_reasons()
    assert sim.serving_indices() == {0}


def test_unschedulable_without_a_grace_stays_parked() -> None:
    """No built-in unschedulable grace (OME's manager has none): the wait is parked, never failed."""
    sim, driver = _parked_unschedulable_surge(OperatorSettings(instance_ready_timeout=timedelta(minutes=1)))
    for _ in range(20):
        sim.advance(60)
        driver.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["step"], row["operation"]["waiting"]) == (
        "Updating",
        "Surge",
        "Unschedulable",
    )
    assert "InstanceFailed" not in sim.event_reasons()
    assert sim.serving_indices() == {0}


def test_unschedulable_create_parks_its_clock_too() -> None:
    """Item: the clock parks on every step, Create included, not only on a surge."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=1)))
    sim.behaviour["vllm:v1"] = "unschedulable"
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(
        lambda s: bool(s.rows()) and (s.rows()[0].get("operation") or {}).get("waiting") == "Unschedulable"
    )
    for _ in range(10):
        sim.advance(60)
        driver.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["type"]) == ("Creating", "Create")
    assert "deadline" not in row["operation"]
    sim.behaviour["vllm:v1"] = "ok"  # room appears: the pod schedules and the Instance comes up
    for p in sim.pods.values():
        p.behaviour = "ok"
    driver.run(converged)


def test_render_block_sets_ready_false_warns_once_and_renders_when_fixed() -> None:
    sim = Sim()
    sim.apply_replica(base_replica())
    msg = 'ClusterBaseModel "llama-3-2-1b-instruct" not found'
    sim.block = ("ModelNotFound", msg)
    driver = Driver(sim)
    for _ in range(5):
        driver.one_pass()
        sim.advance(5)
    cond = sim.condition("Ready")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "False",
        "ModelNotFound",
        msg,
    )
    assert _warnings(sim, "ModelNotFound") == [msg]
    assert sim.pods == {}
    assert sim.revisions == {}
    sim.block = None
    driver.run(converged)


def test_render_block_warns_again_at_a_new_generation() -> None:
    """Go ``inferencereplica/render.go`` ``reportRenderBlocked`` (ome-projects/ome @ a543351b) records
    the Warning when the Ready condition's observedGeneration differs too: a spec edit that leaves the
    replica blocked for the same reason says so again, once, at the new generation."""
    sim = Sim()
    sim.apply_replica(base_replica())
    msg = 'ClusterBaseModel "llama-3-2-1b-instruct" not found'
    sim.block = ("ModelNotFound", msg)
    driver = Driver(sim)
    for _ in range(3):
        driver.one_pass()
        sim.advance(5)
    assert _warnings(sim, "ModelNotFound") == [msg]
    sim.update_spec(replicas=2)
    for _ in range(3):
        driver.one_pass()
        sim.advance(5)
    assert _warnings(sim, "ModelNotFound") == [msg, msg]
    cond = sim.condition("Ready")
    assert cond is not None
    assert cond["observedGeneration"] == sim.replica["metadata"]["generation"] == 2  # type: ignore[index]


def test_render_block_leaves_existing_pods_alone(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    writes = len(driver.log)
    sim.block = ("RuntimeNotFound", 'ClusterServingRuntime "x" not found')
    for _ in range(4):
        driver.one_pass()
        sim.advance(5)
    kinds = {type(a).__name__ for _, a in driver.log[writes:]}
    assert kinds == {"WriteStatus", "RecordEvent"}
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]
    # A changed block warns again.
    sim.block = ("RuntimeDisabled", 'ClusterServingRuntime "x" is disabled')
    driver.one_pass()
    assert [e.event_reason for e in sim.events[-1:]] == ["RuntimeDisabled"]


def test_deletion_drains_every_instance_then_lifts_the_finalizer(sim: Sim, driver: Driver) -> None:
    sim.update_spec(replicas=2)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    sim.delete_replica()
    driver.run(lambda s: s.replica is None)
    gate_off = {a.name for _, a in applied(driver, "SetServingGate") if not a.status}  # type: ignore[attr-defined]
    deleted = [(t, a.name) for t, a in applied(driver, "DeletePod")]  # type: ignore[attr-defined]
    assert (
        {n for _, n in deleted}
        == gate_off
        == {"llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"}
    )
    blocked = _warnings(sim, "TeardownBlocked")
    assert blocked
    assert blocked[0] == (
        'teardown blocked: 2 owned pod(s) and 0 owned PodGroup(s) remain (selector: parent="llama-pool", '
        'component="engine"); finalizer ome.io/ir-teardown holds until cleanup completes (no '
        "lifecycle.teardown.deadline configured); manual escape: kubectl patch inferencereplica llama-pool "
        """-n llama-demo --type=merge -p '{"metadata":{"finalizers":null}}'"""
    )
    kinds = [type(a).__name__ for _, a in driver.log]
    assert kinds.index("DeleteService") < kinds.index("RemoveFinalizer")
    assert sim.service is None
    assert sim.pods == {}


def test_teardown_deadline_releases_the_finalizer() -> None:
    sim = Sim(settings=OperatorSettings(teardown_deadline=timedelta(minutes=1)), delete_grace=3600)
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(converged)
    sim.delete_replica()
    driver.run(lambda s: s.replica is None, limit=600)
    assert len(_warnings(sim, "TeardownDeadlineExceeded")) == 1


def test_finalizer_is_added_before_any_other_work(sim: Sim, driver: Driver) -> None:
    first = driver.one_pass()
    assert [type(a).__name__ for a in first.actions] == ["AddFinalizer"]
    assert c.TEARDOWN_FINALIZER in sim.replica["metadata"]["finalizers"]  # type: ignore[index]


def test_ready_condition_during_scale_up_is_replica_count_mismatch(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    sim.update_spec(replicas=2)
    driver.one_pass()
    cond = sim.condition("Ready")
    assert cond is not None
    assert cond["reason"] == "ReplicaCountMismatch"
    assert cond["message"] == "1/2 Instances serving, need 2 (no rollout in flight)"
    assert ready(sim) is False


def test_without_update_retry_the_first_revision_caused_failure_holds() -> None:
    """01 §4.7 fail-safe: no lifecycle.updateRetry, no retry ladder: the revision is held at once."""
    sim, driver = _rolling_into("imagepull", OperatorSettings(stuck_pod_grace_period=timedelta(seconds=60)))
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.status.get("rolloutHold", {}).get("gate") == "Held", limit=1200)
    surges = [a for _, a in applied(driver, "CreatePod") if a.name.endswith("-1")]  # type: ignore[attr-defined]
    assert len(surges) == 1
    (held,) = _warnings(sim, "RetryHeld")
    assert held.startswith(
        f"InferenceReplica llama-demo/llama-pool component=engine update to revision {v2} held after 1 failed attempt(s)"
    )
    assert sim.serving_indices() == {0}


def test_without_update_retry_a_crash_loop_never_holds() -> None:
    """No policy, no pacing ladder: a crash loop records no block and the surge is simply retried."""
    sim, driver = _rolling_into("crash", OperatorSettings(stuck_pod_grace_period=timedelta(seconds=60)))
    driver.run(
        lambda s: len([a for _, a in applied(driver, "CreatePod") if a.name.endswith("-1")]) == 3, limit=1200
    )
    assert "retryBlocks" not in sim.status
    assert "RetryHeld" not in sim.event_reasons()
    assert sim.status.get("rolloutHold") is None
    assert sim.serving_indices() == {0}


def test_stuck_evidence_reads_init_containers_and_keeps_the_reason_verbatim() -> None:
    """evidence/stuckpod.go PodStuckInTerminalWaiting: init containers count; no reason is renamed."""
    sim, driver = _rolling_into("initconfig")
    driver.run(lambda s: (s.rows()[0].get("lastFailure") or {}).get("reason") is not None, limit=600)
    failure = sim.rows()[0]["lastFailure"]
    assert (failure["reason"], failure["containerName"]) == ("CreateContainerConfigError", "model-init")


def test_a_surge_out_of_time_never_creates_its_pod_in_the_pass_that_fails_it() -> None:
    """With a readiness deadline shorter than the start-up and no retry ladder, each attempt fails by
    its deadline and the next starts at once, while the failed replacement (same name) is still
    terminating. The attempt that finds the name free only when its own deadline has passed must fail
    without creating the pod (the driver's invariant: every create is journaled by a live operation)."""
    sim = Sim(settings=OperatorSettings(), ready_delay=60.0)  # every pod takes 60 s to start
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(converged)
    driver.floor = lambda s: 1
    sim.settings = OperatorSettings(instance_ready_timeout=timedelta(seconds=30))
    sim.delete_grace = 30.0  # the failed replacement's name frees just as the next attempt runs out of time
    sim.image = "vllm:v2"
    # Only the first of the identical failures is announced (disposition.go sameTerminalFailure).
    driver.run(
        lambda s: (
            [a.name for _, a in applied(driver, "CreatePod")].count("llama-pool-engine-0-default-1") >= 3
        ),
        limit=600,
    )
    creates = [a.name for _, a in applied(driver, "CreatePod")]  # type: ignore[attr-defined]
    assert creates.count("llama-pool-engine-0-default-1") >= 2
    assert sim.serving_indices() == {0}
    # The deadline expires just past it (Go operationDeadlinePassed: now.After(deadline)), when the
    # replacement already runs but is not ready: the record names that limbo, not the bare timeout.
    assert sim.rows()[0]["lastFailure"]["reason"] == "ContainersNotReady"
