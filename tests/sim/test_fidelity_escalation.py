"""How a failed attempt ends and what it announces, pinned to OME's escalation pass.

Go: ``workload/escalation/escalation.go`` ``Run`` and ``escalation/disposition.go``
``DisposeExpiredAttempt`` / ``disposableAttempt`` / ``sameTerminalFailure`` (the newest stored
versions). A Create or a single-pod Update ends through the disposition: a workload-caused waiting
reason on the attempt's pod takes branch 1 (the revision is charged, the Warning names the pod), any
other failure takes branch 3 (the Warning blames no pod, carries the disposition's detail and is not
repeated for the same ``lastFailure.reason``). ``rolloutHold`` is the update pass's admission verdict
(``executeUpdatePass``): a partition or a pause is not one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sim_rolling import rolling_into

from omereconcile.planner.podstate import limbo_failure
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import PodView

PREFIX = "InferenceReplica llama-demo/llama-pool component=engine instance=0 escalated to Phase=Failed "
POD0 = "llama-pool-engine-0-default-0"


def _failed_warnings(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "InstanceFailed" and e.type == "Warning"]


def _creates(driver: Driver, name: str) -> int:
    return [a.name for _, a in applied(driver, "CreatePod")].count(name)  # type: ignore[attr-defined]


def test_a_stuck_image_pull_warns_with_the_held_text_naming_the_pod() -> None:
    """Branch 1 on the stuck-pod path: the kubelet reason is workload-caused."""
    sim, driver = rolling_into("imagepull")
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: s.rows()[0]["phase"] == "Failed")
    assert _failed_warnings(sim)[0] == (
        PREFIX + '(pod="llama-pool-engine-0-default-1"): ImagePullBackOff: workload-caused failure; '
        f"revision {v2} held for retry — fix the image/config and publish a corrected revision"
    )
    assert sim.rows()[0]["lastFailure"]["reason"] == "ImagePullBackOff"


def test_a_deadline_over_an_image_pull_pod_is_the_revisions_failure() -> None:
    """The deadline path reads the attempt's pods too (``FirstWorkloadCausedPod``): with the stuck-pod
    path off, an image that never pulls still fails as ``ImagePullBackOff`` and, with no retry ladder,
    holds the revision on the first failure (the fail-safe)."""
    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=5))
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "imagepull"
    driver = Driver(sim)
    driver.run(lambda s: bool(s.rows()) and s.rows()[0]["phase"] == "Failed", limit=600)
    v1 = sim.render().name  # type: ignore[union-attr]
    failure = sim.rows()[0]["lastFailure"]
    assert (failure["reason"], failure["podName"]) == ("ImagePullBackOff", POD0)
    (block,) = sim.status["retryBlocks"]
    assert (block["targetRevision"], block["state"], block["attemptsStarted"]) == (v1, "Held", 1)
    assert _failed_warnings(sim) == [
        PREFIX + f'(pod="{POD0}"): ImagePullBackOff: workload-caused failure; revision {v1} held for '
        "retry — fix the image/config and publish a corrected revision"
    ]


def test_the_same_terminal_failure_is_announced_once() -> None:
    """Branch 3: with no retry ladder each rebuild of a crash-looping Create is failed by the stuck-pod
    path again, and only the first failure is announced (``sameTerminalFailure``: the prior
    ``lastFailure.reason`` is the same)."""
    sim = Sim(settings=OperatorSettings(stuck_pod_grace_period=timedelta(seconds=60)))
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "crash"
    driver = Driver(sim)
    driver.run(lambda s: _creates(driver, POD0) >= 3, limit=1200)
    assert sim.rows()[0]["lastFailure"]["reason"] == "CrashLoopBackOff"
    assert _failed_warnings(sim) == [
        PREFIX + '(pod=""): CrashLoopBackOff: attempt disposed terminal (no workload-caused evidence, '
        "relocation unavailable); operation-specific recovery decides whether another attempt is safe"
    ]


def test_a_deadline_records_the_readiness_limbo_of_a_pod_that_never_serves() -> None:
    """``FirstRunningNotReadyPod`` / ``ContainersNotReadyTermination``: a Running pod whose containers
    never become ready is what ``lastFailure`` names, not the bare timeout; the Warning still carries
    the deadline, and since the recorded reason is not the deadline's, each attempt is announced. The
    first attempt is the Create; the row it leaves (Failed, no running revision, its unready pod
    standing) is retried by the Update's recreate, as Go's newest ``ops/update.go``
    ``evaluateUpdateTriggerPods`` and ``SurgeHasNoSource`` route it (ome-projects/ome 58a57f25), so the
    second deadline names ``Update/Drain`` (a recreate stays at step ``Drain`` until promoted, Go
    ``recreateUpdate``)."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "never"
    driver = Driver(sim)
    driver.run(lambda s: _creates(driver, POD0) >= 3, limit=1200)
    failure = sim.rows()[0]["lastFailure"]
    assert {k: failure[k] for k in ("podName", "reason", "containerName", "message")} == {
        "podName": POD0,
        "reason": "ContainersNotReady",
        "containerName": "ome-container",
        "message": "pod is Running but its containers never became ready; not ready: ome-container",
    }
    rest = (
        " exceeded InstanceReadyTimeout: attempt disposed terminal (no workload-caused evidence, "
        "relocation unavailable); operation-specific recovery decides whether another attempt is safe"
    )
    assert _failed_warnings(sim) == [
        PREFIX + '(pod=""): DeadlineExceeded: Create/CreatePods' + rest,
        PREFIX + '(pod=""): DeadlineExceeded: Update/Drain' + rest,
    ]


def test_a_new_terminal_reason_is_announced_again() -> None:
    """The suppression keys on the reason: a crash loop after a deadline is news."""
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=5), stuck_pod_grace_period=timedelta(seconds=60)
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = "never"
    driver = Driver(sim)
    driver.run(lambda s: len(_failed_warnings(s)) == 1, limit=600)
    sim.behaviour["vllm:v1"] = "crash"  # the rebuild's pod crashes instead
    driver.run(lambda s: len(_failed_warnings(s)) == 2, limit=600)
    assert sim.rows()[0]["lastFailure"]["reason"] == "CrashLoopBackOff"
    assert _failed_warnings(sim)[1].startswith(
        PREFIX + '(pod=""): CrashLoopBackOff: attempt disposed terminal'
    )


def test_a_partition_publishes_no_rollout_hold(sim: Sim, driver: Driver) -> None:
    """The held Instances of a partition are not an admission denial: Go's update pass reports only
    the budget, the coordination and plan gates, the retry ladder and a withheld drain."""
    sim.apply_replica(base_replica(replicas=2, pacing={"partition": 1}))
    driver.run(converged)
    sim.image = "vllm:v2"
    seen: list[object] = []
    driver.extra_checks.append(lambda s: seen.append(s.status.get("rolloutHold")))
    driver.run(lambda s: (s.condition("Ready") or {}).get("reason") == "Staged")
    assert seen
    assert not any(seen)


def test_a_pause_publishes_no_rollout_hold(sim: Sim, driver: Driver) -> None:
    """A paused Component starts nothing, so the update pass denies nothing and reports no hold."""
    driver.run(converged)
    sim.update_spec(paused=True)
    sim.image = "vllm:v2"
    seen: list[object] = []
    driver.extra_checks.append(lambda s: seen.append(s.status.get("rolloutHold")))
    for _ in range(20):
        driver.one_pass()
        sim.advance(5)
    assert seen
    assert not any(seen)
    assert sim.rows()[0].get("operation") is None


def _pod(
    conditions: list[dict[str, str]], *, waiting_init: bool = False, gates: tuple[str, ...] = ()
) -> PodView:
    return PodView.from_dict(
        {
            "metadata": {"name": POD0, "uid": "u", "resourceVersion": "1", "labels": {}},
            "spec": {"readinessGates": [{"conditionType": g} for g in gates]},
            "status": {
                "phase": "Running",
                "conditions": conditions,
                "containerStatuses": [
                    {
                        "name": "ome-container",
                        "ready": True,
                        "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}},
                    },
                    {
                        "name": "sidecar",
                        "ready": False,
                        "state": {"running": {"startedAt": "2025-01-01T00:00:00Z"}},
                    },
                ],
                "initContainerStatuses": (
                    [
                        {
                            "name": "model-init",
                            "ready": False,
                            "state": {"waiting": {"reason": "PodInitializing"}},
                        }
                    ]
                    if waiting_init
                    else []
                ),
            },
        }
    )


NOW = datetime(2025, 1, 1, 0, 10, tzinfo=UTC)


def test_readiness_limbo_names_the_not_ready_containers_and_the_kubelets_condition() -> None:
    """``ContainersNotReadyTermination``: the not-ready containers, then the ContainersReady reason and
    message, timed at the condition's transition."""
    cond = {
        "type": "ContainersReady",
        "status": "False",
        "reason": "ContainersNotReady",
        "message": "containers with unready status: [sidecar]",
        "lastTransitionTime": "2025-01-01T00:01:00Z",
    }
    assert limbo_failure([_pod([cond])], NOW) == {
        "podName": POD0,
        "reason": "ContainersNotReady",
        "containerName": "sidecar",
        "message": "pod is Running but its containers never became ready; not ready: sidecar; "
        "ContainersReady=False (ContainersNotReady): containers with unready status: [sidecar]",
        "time": "2025-01-01T00:01:00Z",
    }


def test_gate_limbo_names_the_unsatisfied_readiness_gates() -> None:
    """``GateNotFoldedTermination``: containers ready, Ready held back by a declared gate."""
    conds = [
        {"type": "ContainersReady", "status": "True"},
        {"type": "example.com/warm", "status": "False"},
        {
            "type": "Ready",
            "status": "False",
            "reason": "ReadinessGatesNotReady",
            "lastTransitionTime": "2025-01-01T00:02:00Z",
        },
    ]
    record = limbo_failure([_pod(conds, gates=("example.com/warm",))], NOW)
    assert record == {
        "podName": POD0,
        "reason": "ReadinessGateNotSatisfied",
        "message": "pod containers are ready but a readiness gate keeps it out of its Service; unsatisfied gates: "
        "example.com/warm; Ready=False (ReadinessGatesNotReady)",
        "time": "2025-01-01T00:02:00Z",
    }


def test_a_waiting_container_leaves_the_blame_to_the_kubelets_reason() -> None:
    """``FirstRunningNotReadyPod`` is suppressed when any container of the pod is waiting."""
    assert (
        limbo_failure([_pod([{"type": "ContainersReady", "status": "False"}], waiting_init=True)], NOW)
        is None
    )


def test_a_gang_deadline_reads_every_member_for_the_readiness_limbo() -> None:
    """A Create of any pod count ends through the disposition (``disposableAttempt``), which reads
    the attempt's whole pod set: a worker that runs but never becomes ready is the record, though no
    member is stuck in a kubelet reason."""
    sim = Sim(workers=1, settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    sim.apply_replica(base_replica(replicas=1))
    sim.worker_behaviour["vllm:v1"] = "never"
    driver = Driver(sim)
    driver.run(lambda s: len(_failed_warnings(s)) == 1, limit=600)
    failure = sim.rows()[0]["lastFailure"]
    assert (failure["reason"], failure["podName"]) == ("ContainersNotReady", "llama-pool-engine-0-worker-0")
    assert _failed_warnings(sim)[0].startswith(
        PREFIX + '(pod=""): DeadlineExceeded: Create/CreatePods exceeded'
    )
