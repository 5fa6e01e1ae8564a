"""OME's ``workload/escalation/refresh_test.go``: a Failed row's generic deadline evidence is refreshed.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/refresh_test.go`` @ dcfb4135 (one
stored version), over ``escalation/refresh.go`` ``refreshedFailureEvidence`` and ``escalation.go``
``Run``. Go runs the escalation pass on a ``Failed`` row whose ``lastFailure`` is the elapsed-deadline
record and whose pod has since wedged in ``CrashLoopBackOff``; ours is
:func:`omereconcile.planner.instances.step_row` on that row and pod (the refresh is its first step for a
Failed row, ``planner/steps.py`` ``refreshed_failure_evidence``). Go's fixture keeps the spent Restart
operation on the Failed row; a Failed row here carries none (ours clears the operation when it fails),
so the row is given without one and "the operation preserved" is read as "no operation appears".
All three failed before: ours had no refresh.
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.instances import step_row
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/refresh_test.go @ dcfb4135"
NAME = "llama-pool-engine-0-default-0"
DEADLINE_MESSAGE = "DeadlineExceeded: Restart/Drain exceeded InstanceReadyTimeout"


def _ctx() -> Ctx:
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=timedelta(seconds=1)
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _wedged(ctx: Ctx) -> PodView:
    """Go ``wedgedPod``: the container parked in ``CrashLoopBackOff`` with the kubelet's message."""
    obj = dict(ctx.world.pod_factory(ctx.spec_revision, 0, 1, c.RUNNER_DEFAULT, 0))
    meta = dict(obj["metadata"])
    meta.update({"uid": "uid-0", "creationTimestamp": format_time(ctx.now - timedelta(minutes=1))})
    obj["metadata"] = meta
    obj["spec"] = {**obj["spec"], "nodeName": "sim-node"}
    obj["status"] = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "main",
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": "back-off restarting failed container",
                    }
                },
            }
        ],
    }
    return PodView.from_dict(obj)


def _failed(ctx: Ctx, failure: dict[str, object]) -> R.Row:
    return R.Row(
        index=0,
        phase=R.FAILED,
        pod_count=1,
        running_revision=ctx.spec_revision,
        target_revision=ctx.spec_revision,
        last_failure=failure,
    )


def _on_deadline(ctx: Ctx) -> dict[str, object]:
    """Go ``failedOnDeadline``: the generic elapsed-deadline record, an hour old."""
    return {
        "reason": "DeadlineExceeded",
        "message": DEADLINE_MESSAGE,
        "time": format_time(ctx.now - timedelta(hours=1)),
    }


def _pass(ctx: Ctx, row: R.Row, pod: PodView) -> tuple[R.Row, Out, RetryBook]:
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    after = step_row(ctx, row, [pod], out, book, ctx.spec_revision)
    assert after is not None
    return after, out, book


def test_failed_row_refreshes_generic_deadline_evidence() -> None:
    """Go: same file, TestEscalation_FailedRowRefreshesGenericDeadlineEvidence: the record is replaced
    once with the concrete cause (``CrashLoopBackOff``, the pod, the container ``main``, the kubelet's
    message) keeping the original failure time; the row stays Failed, no Warning, no block."""
    ctx = _ctx()
    row, out, book = _pass(ctx, _failed(ctx, _on_deadline(ctx)), _wedged(ctx))
    assert row.phase == R.FAILED
    assert row.operation is None
    failure = row.last_failure
    assert failure is not None
    assert (failure["reason"], failure["podName"], failure["containerName"]) == (
        "CrashLoopBackOff",
        NAME,
        "main",
    )
    assert failure["message"] == "back-off restarting failed container"
    assert failure["time"] == format_time(ctx.now - timedelta(hours=1))
    assert [e for e in out.events if e.event_reason == "InstanceFailed"] == []
    assert book.blocks == {}


def test_failed_row_evidence_refresh_is_edge_triggered() -> None:
    """Go: same file, TestEscalation_FailedRowEvidenceRefreshIsEdgeTriggered: a second pass over the
    same evidence rewrites nothing."""
    ctx = _ctx()
    pod = _wedged(ctx)
    first, _, _ = _pass(ctx, _failed(ctx, _on_deadline(ctx)), pod)
    second, _, _ = _pass(ctx, first, pod)
    assert second.last_failure == first.last_failure
    assert first.last_failure is not None
    assert first.last_failure["reason"] == "CrashLoopBackOff"


def test_failed_row_keeps_concrete_evidence() -> None:
    """Go: same file, TestEscalation_FailedRowKeepsConcreteEvidence: a concrete reason already recorded
    (``ImagePullBackOff``) is the first named cause and is never replaced."""
    ctx = _ctx()
    concrete = {
        "reason": "ImagePullBackOff",
        "podName": NAME,
        "message": f"pod {NAME} container main stuck (ImagePullBackOff)",
        "time": format_time(ctx.now - timedelta(hours=1)),
    }
    row, _, _ = _pass(ctx, _failed(ctx, concrete), _wedged(ctx))
    assert row.last_failure == concrete
