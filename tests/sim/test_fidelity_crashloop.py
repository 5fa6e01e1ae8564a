"""What a deadline records about a crash-looping attempt, pinned to OME's disposition.

Go: ``escalation/disposition.go`` ``DisposeExpiredAttempt`` reads ``evidence.FirstCrashLoopingPod`` after
the workload-caused pod and before the readiness limbo, and keeps
``types.PodTerminationWithReason(pod, "CrashLoopBackOff", now)`` as ``lastFailure``. A crash loop has two
faces and the deadline may catch either: parked in CrashLoopBackOff, or Running again between two crashes
(not Ready, restarted, the last run exited non-zero). Either way the record names the crash and its exit
(reason, exit code, the kubelet's ``finishedAt``), not a readiness limbo and not the bare timeout; the
Warning still carries the deadline. A restart that exited 0 is no crash.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver
from omereconcile.world import format_time

POD0 = "llama-pool-engine-0-default-0"
WARNING = (
    "InferenceReplica llama-demo/llama-pool component=engine instance=0 escalated to Phase=Failed "
    '(pod=""): DeadlineExceeded: Create/CreatePods exceeded InstanceReadyTimeout: attempt disposed terminal '
    "(no workload-caused evidence, relocation unavailable); operation-specific recovery decides whether "
    "another attempt is safe"
)


def _sim(behaviour: str) -> tuple[Sim, Driver]:
    # No stuck-pod grace: the deadline, not the stuck-pod path, ends the attempt.
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    sim.apply_replica(base_replica())
    sim.behaviour["vllm:v1"] = behaviour
    return sim, Driver(sim)


def _first_failure(sim: Sim, driver: Driver) -> dict[str, object]:
    driver.run(lambda s: bool(s.rows()) and "lastFailure" in s.rows()[0], limit=900)
    failure: dict[str, object] = sim.rows()[0]["lastFailure"]
    return failure


def _warnings(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "InstanceFailed" and e.type == "Warning"]


@pytest.mark.parametrize(
    ("behaviour", "reason", "exit_code"),
    [("never", "Error", 1), ("crash", "OOMKilled", 137)],
    ids=["running-between-crashes", "parked-in-crash-loop-backoff"],
)
def test_either_face_of_a_crash_loop_records_the_crash_and_its_exit(
    behaviour: str, reason: str, exit_code: int
) -> None:
    # "never": running again, not ready, its last run exited non-zero (not a readiness limbo);
    # "crash": parked in CrashLoopBackOff with the last run's exit on lastState.
    sim, driver = _sim(behaviour)
    driver.run(lambda s: POD0 in s.pods, limit=60)
    sim.advance(30)
    crashed_at = format_time(sim.now)
    sim.restart_runner(POD0, reason, exit_code)
    failure = _first_failure(sim, driver)
    assert failure == {
        "podName": POD0,
        "containerName": "ome-container",
        "reason": reason,
        "exitCode": exit_code,
        "time": crashed_at,
    }
    assert _warnings(sim) == [WARNING]


def test_crash_loop_backoff_without_a_recorded_exit_names_the_waiting_container() -> None:
    sim, driver = _sim("crash")
    failure = _first_failure(sim, driver)
    assert {k: failure[k] for k in ("podName", "containerName", "reason")} == {
        "podName": POD0,
        "containerName": "ome-container",
        "reason": "CrashLoopBackOff",
    }
    assert "exitCode" not in failure


def test_a_clean_restart_is_no_crash_and_leaves_the_readiness_limbo() -> None:
    sim, driver = _sim("never")
    driver.run(lambda s: POD0 in s.pods, limit=60)
    sim.restart_runner(POD0, "Completed", 0)
    failure = _first_failure(sim, driver)
    assert (failure["reason"], failure["podName"]) == ("ContainersNotReady", POD0)
