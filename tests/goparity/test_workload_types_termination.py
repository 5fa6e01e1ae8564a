"""OME's ``workload/types/termination_test.go``: a failure record carries when the failure happened.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/termination_test.go`` @ 9177c1b0 (the
listed one of three stored versions, read whole), over ``types.PodTermination`` /
``PodTerminationWithReason``: the record's time is the kubelet's ``finishedAt`` (the live termination,
else the last one behind a crash loop), the observation time only when no container recorded one — so
an unchanged failed pod yields the same record on every pass and the status write converges. Ours:
``planner/podstate.py`` ``crash_loop_failure`` (the container records) and ``planner/steps.py``
``terminal_failure`` (the pod-level fallback of a dead pod).

Not mappable (1): the "exit zero but terminated" entry of ``TestPodTermination_StableAcrossObservations``
— a container that exited cleanly is no crash loop for ours; a dead pod's record is
``terminal_failure``'s, which stamps the pass's time and is kept from one pass to the next by
``steps._same_dead_pod_failure`` rather than by a kubelet time.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from omereconcile.planner.podstate import crash_loop_failure
from omereconcile.planner.steps import terminal_failure
from omereconcile.world import ContainerView, PodView, format_time
from tests.goparity.reconciler_world import one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/termination_test.go @ 9177c1b0"
FAILED_AT = datetime(2026, 8, 19, 4, 28, 38, tzinfo=UTC)  # when the kubelet says the container died
OBSERVED_AT = datetime(2026, 8, 21, 15, 40, tzinfo=UTC)  # when a pass looked


def _pod(ct: ContainerView, phase: str = "Running") -> PodView:
    return PodView("router-0-default-0", "uid-r", "1", {}, phase=phase, containers=(ct,))


NON_ZERO = ContainerView(
    "ome-container", state_terminated_reason="Error", state_exit_code=1, state_finished_at=FAILED_AT
)
CRASH_LOOP = ContainerView(
    "ome-container",
    waiting_reason="CrashLoopBackOff",
    waiting=True,
    waiting_message="back-off 5m0s restarting failed container",
    exit_code=0,
    finished_at=FAILED_AT,
)


def test_the_record_uses_finished_at_not_the_pass() -> None:
    """Go: termination_test.go @ 9177c1b0, TestPodTermination_UsesFinishedAtNotNow."""
    record = crash_loop_failure([_pod(NON_ZERO)], OBSERVED_AT)
    assert record is not None
    assert record["time"] == format_time(FAILED_AT)
    assert record["exitCode"] == 1


def test_a_crash_loop_uses_the_last_termination_time() -> None:
    """Go: termination_test.go @ 9177c1b0, TestPodTermination_CrashLoopBackOffUsesLastTerminationFinishedAt."""
    record = crash_loop_failure([_pod(CRASH_LOOP)], OBSERVED_AT)
    assert record is not None
    assert record["reason"] == "CrashLoopBackOff"
    assert record["time"] == format_time(FAILED_AT)


def test_the_record_is_stable_across_observations() -> None:
    """Go: termination_test.go @ 9177c1b0, TestPodTermination_StableAcrossObservations, entries
    "non-zero exit" and "crashloopbackoff": two passes 437 ms apart record the same failure."""
    for ct in (NON_ZERO, CRASH_LOOP):
        first = crash_loop_failure([_pod(ct)], OBSERVED_AT)
        second = crash_loop_failure([_pod(ct)], OBSERVED_AT + timedelta(milliseconds=437))
        assert first is not None
        assert first == second


def test_with_no_kubelet_time_the_pass_time_is_recorded() -> None:
    """Go: termination_test.go @ 9177c1b0, TestPodTermination_FallsBackToNowWhenFinishedAtZero."""
    oom = ContainerView("ome-container", state_terminated_reason="OOMKilled", state_exit_code=137)
    record = crash_loop_failure([_pod(oom)], OBSERVED_AT)
    assert record is not None
    assert (record["reason"], record["time"]) == ("OOMKilled", format_time(OBSERVED_AT))


def test_a_pod_level_failure_records_the_pass_time() -> None:
    """Go: termination_test.go @ 9177c1b0, TestPodTermination_PodLevelFallbackUsesNow: a Failed pod with
    no container record is ``PodFailed`` at the pass's time."""
    ctx = one_replica_ctx()
    dead = PodView("router-0-default-0", "uid-r", "1", {}, phase="Failed")
    record = terminal_failure(ctx, dead)
    assert (record["reason"], record["time"]) == ("PodFailed", format_time(ctx.now))


def test_the_named_reason_keeps_finished_at() -> None:
    """Go: termination_test.go @ 9177c1b0, TestPodTerminationWithReason_PreservesFinishedAt: the crash-loop
    record of a container that exited 1 keeps the kubelet's time."""
    exited = ContainerView("ome-container", state_exit_code=1, state_finished_at=FAILED_AT)
    record = crash_loop_failure([_pod(exited)], OBSERVED_AT)
    assert record is not None
    assert record["time"] == format_time(FAILED_AT)
