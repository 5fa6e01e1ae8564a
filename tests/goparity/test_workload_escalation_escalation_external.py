"""OME's ``workload/escalation/escalation_external_test.go``: the escalation pass's guards and evidence.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/escalation_external_test.go`` @
4dfb96b1 (the listed version), over ``escalation/escalation.go`` ``Run`` and the disposition. Go runs
the pass on rows built by ``escalationFixture`` and pods bucketed by Instance; ours is
:func:`omereconcile.planner.steps.check_failure` on the step's row and pod (the gang's
:func:`~omereconcile.planner.gang.bring_up_gang`, and :func:`~omereconcile.planner.instances.step_row`
for a Failed row). Go's plain deadline stamp keeps a Restart's or a gang surge's operation on the Failed
row; ours clears it, so those assertions are read as the phase, the record and the Warning. The cases
with no counterpart are listed, with why, in ``docs/goparity.md``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import WriteStatus
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context, hash_of
from omereconcile.planner.core import plan
from omereconcile.planner.gang import bring_up_gang
from omereconcile.planner.instances import step_row
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.steps import check_failure
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, NodeView, PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/escalation_external_test.go @ 4dfb96b1"
NODE = "node-a"
POLICY = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0)
TIMEOUT = timedelta(minutes=30)


def _ctx(stuck: timedelta = timedelta(0), workers: int = 0) -> Ctx:
    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=stuck)
    sim = Sim(settings=settings, workers=workers)
    sim.apply_replica(base_replica(replicas=1))
    # Go's pods sit on node-a, a Node the watch sees Ready (else the NodeUnknown hold parks them).
    world = replace(sim.observe(), nodes={NODE: NodeView(NODE, ready="True")})
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _row(
    ctx: Ctx, op_type: str, step: str, deadline: timedelta | None, phase: str, target: str = ""
) -> R.Row:
    op = R.Operation(
        f"{op_type.lower()}-0",
        op_type,
        step,
        target or ctx.spec_revision,
        ctx.now - timedelta(hours=2),
        deadline=None if deadline is None else ctx.now + deadline,
    )
    return R.Row(index=0, phase=phase, operation=op, incarnation=2 if op_type == R.OP_RESTART else 1)


def _pod(
    ctx: Ctx,
    name: str,
    *,
    waiting: str | None = None,
    message: str = "",
    conditions: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    revision: str | None = None,
    runner: str | None = None,
    since: timedelta = timedelta(hours=1),
    readiness_gate: bool = False,
) -> PodView:
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "creationTimestamp": format_time(ctx.now - since),
    }
    if revision is not None:
        meta["labels"] = {c.LABEL_REVISION_HASH: hash_of(revision)}
    if runner is not None:
        obj = dict(ctx.world.pod_factory(ctx.spec_revision, 0, 1, runner, 0))
        meta = {**obj["metadata"], "uid": meta["uid"], "creationTimestamp": meta["creationTimestamp"]}
    state: dict[str, Any] = (
        {"waiting": {"reason": waiting, "message": message}} if waiting else {"running": {}}
    )
    spec: dict[str, Any] = {"nodeName": NODE}
    if readiness_gate:
        spec["readinessGates"] = [{"conditionType": "ome.io/serving"}]
    status = {
        "phase": phase,
        "conditions": conditions or [],
        "containerStatuses": [{"name": "main", "ready": False, "state": state}],
    }
    return PodView.from_dict({"metadata": meta, "spec": spec, "status": status})


def _unready(ctx: Ctx, since: timedelta) -> list[dict[str, Any]]:
    """Go ``runningNotReadyPod``'s condition: ContainersReady False with the kubelet's reason and message."""
    return [
        {
            "type": "ContainersReady",
            "status": "False",
            "reason": "ContainersNotReady",
            "message": "containers with unready status: [main]",
            "lastTransitionTime": format_time(ctx.now - since),
        }
    ]


def _gate_not_folded(ctx: Ctx) -> list[dict[str, Any]]:
    """Go ``gateNotFoldedPod``: ContainersReady True, Ready False on an unsatisfied readiness gate."""
    at = format_time(ctx.now - timedelta(hours=1))
    return [
        {"type": "ContainersReady", "status": "True", "lastTransitionTime": at},
        {
            "type": "Ready",
            "status": "False",
            "reason": "ReadinessGatesNotReady",
            "message": 'corresponding condition of pod readiness gate "ome.io/serving" does not exist',
            "lastTransitionTime": at,
        },
    ]


def _pass(
    ctx: Ctx,
    row: R.Row,
    pod: PodView | None,
    members: list[PodView] | None = None,
    policy: RetryPolicy | None = None,
) -> tuple[R.Row, R.Row | None, Out, RetryBook]:
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine", policy=policy)
    name = pod.name if pod is not None else "llama-pool-engine-0-default-0"
    kept, failed = check_failure(ctx, row, pod, name, out, book, members=members)
    return kept, failed, out, book


def _warnings(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "InstanceFailed"]


def test_stuck_pod_not_serving_identical_disposition_outcome() -> None:
    """Go: same file, TestEscalation_StuckPodNotServing_IdenticalDispositionOutcome: a single-pod Update
    whose pod is in ``ImagePullBackOff`` past a one-second grace lands the whole disposition: a block on
    the attempt's target, the operation cleared, Failed, one Warning."""
    ctx = _ctx(stuck=timedelta(seconds=1))
    bad = "llama-pool-engine-bad0bad0"
    pod = _pod(ctx, "llama-pool-engine-0-default-1", waiting="ImagePullBackOff", since=timedelta(minutes=1))
    _, failed, out, book = _pass(ctx, _row(ctx, R.OP_UPDATE, R.STEP_DRAIN, TIMEOUT, R.UPDATING, bad), pod)
    assert failed is not None
    assert (failed.phase, failed.operation) == (R.FAILED, None)
    assert list(book.blocks) == [bad]
    assert len(_warnings(out)) == 1


def test_restart_deadline_elapsed_fails_instance() -> None:
    """Go: same file, TestEscalation_RestartDeadlineElapsed_FailsInstance: a Restart past its deadline
    whose pod waits in ``PodInitializing`` (no better cause) fails ``DeadlineExceeded`` with one Warning
    (Go keeps the Restart operation on the Failed row; ours clears it)."""
    ctx = _ctx()
    pod = _pod(ctx, "llama-pool-engine-0-default-0", waiting="PodInitializing")
    _, failed, out, _ = _pass(
        ctx, _row(ctx, R.OP_RESTART, R.STEP_DRAIN, -timedelta(minutes=1), R.RESTARTING), pod
    )
    assert failed is not None
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == "DeadlineExceeded"
    assert len(_warnings(out)) == 1


@pytest.mark.parametrize(("reason", "fails"), [("DeadlineExceeded", False), ("CrashLoopBackOff", True)])
def test_restart_deadline_exceeded_waiting_no_fast_fail(reason: str, fails: bool) -> None:
    """Go: same file, TestEscalation_RestartDeadlineExceededWaiting_NoFastFail, entry ``reason``:
    ``DeadlineExceeded`` is no terminal waiting reason, so a Restart whose pod shows it past the grace
    keeps its step; ``CrashLoopBackOff`` on the same shape fails it."""
    ctx = _ctx(stuck=timedelta(seconds=1))
    pod = _pod(ctx, "llama-pool-engine-0-default-0", waiting=reason)
    kept, failed, out, _ = _pass(ctx, _row(ctx, R.OP_RESTART, R.STEP_DRAIN, TIMEOUT, R.RESTARTING), pod)
    assert (failed is not None) is fails
    if not fails:
        assert kept.phase == R.RESTARTING
        assert kept.operation is not None
        assert _warnings(out) == []


def test_expire_operations_exact_boundary() -> None:
    """Go: same file, TestExpireOperations_ExactBoundary: a second before the deadline nothing expires;
    at the deadline itself nothing expires either (``now.After(deadline)``); a second after, the
    attempt fails with one Warning. Failed before (ours expired at the deadline); fixed by Go's
    ``operationDeadlinePassed`` (``planner/steps.py`` ``check_failure``, ``bring_up``)."""
    ctx0 = _ctx()
    deadline = ctx0.now + timedelta(minutes=30)
    seen = []
    for at in (deadline - timedelta(seconds=1), deadline, deadline + timedelta(seconds=1)):
        ctx = replace(ctx0, now=at)
        op = R.Operation(
            "create-0", R.OP_CREATE, R.STEP_CREATE_PODS, ctx.spec_revision, ctx0.now, deadline=deadline
        )
        _, failed, out, _ = _pass(ctx, R.Row(index=0, phase=R.CREATING, operation=op), None)
        seen.append((failed is not None, len(_warnings(out))))
    assert seen == [(False, 0), (False, 0), (True, 1)]


def test_deadline_with_gate_not_folded_pod_names_the_gate() -> None:
    """Go: same file, TestEscalation_DeadlineWithGateNotFoldedPod_NamesTheGate: a Create past its
    deadline whose pod passed its probes but whose readiness gate never folded records
    ``ReadinessGateNotSatisfied`` naming the gate, and charges no block."""
    ctx = _ctx()
    pod = _pod(ctx, "llama-pool-engine-0-default-0", conditions=_gate_not_folded(ctx), readiness_gate=True)
    pod = replace(pod, containers=tuple(replace(ct, ready=True) for ct in pod.containers))
    _, failed, _, book = _pass(
        ctx, _row(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, -timedelta(hours=1), R.CREATING), pod
    )
    assert failed is not None
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == "ReadinessGateNotSatisfied"
    assert "ome.io/serving" in str(failed.last_failure["message"])
    assert book.blocks == {}


def test_restart_deadline_with_gate_not_folded_pod_names_the_gate() -> None:
    """Go: same file, TestEscalation_RestartDeadlineWithGateNotFoldedPod_NamesTheGate: the same evidence
    on the repair path."""
    ctx = _ctx()
    pod = _pod(ctx, "llama-pool-engine-0-default-0", conditions=_gate_not_folded(ctx), readiness_gate=True)
    pod = replace(pod, containers=tuple(replace(ct, ready=True) for ct in pod.containers))
    _, failed, _, book = _pass(
        ctx, _row(ctx, R.OP_RESTART, R.STEP_DRAIN, -timedelta(hours=1), R.RESTARTING), pod
    )
    assert failed is not None
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == "ReadinessGateNotSatisfied"
    assert "ome.io/serving" in str(failed.last_failure["message"])
    assert book.blocks == {}


def test_deadline_with_running_not_ready_pod_names_the_probe() -> None:
    """Go: same file, TestEscalation_DeadlineWithRunningNotReadyPod_NamesTheProbe: a Create past its
    deadline whose pod runs yet never reports ready records ``ContainersNotReady``, the container
    ``main`` and the condition's message; no block."""
    ctx = _ctx()
    pod = _pod(ctx, "llama-pool-engine-0-default-0", conditions=_unready(ctx, timedelta(hours=1)))
    _, failed, _, book = _pass(
        ctx, _row(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, -timedelta(hours=1), R.CREATING), pod
    )
    assert failed is not None
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == "ContainersNotReady"
    assert failed.last_failure["containerName"] == "main"
    assert "containers with unready status: [main]" in str(failed.last_failure["message"])
    assert book.blocks == {}


def test_deadline_with_crash_loop_pod_keeps_ambiguous_blame() -> None:
    """Go: same file, TestEscalation_DeadlineWithCrashLoopPod_KeepsAmbiguousBlame: a crash-looping pod at
    the deadline fails the Create, and with no ladder configured (Go's fixture sets none) no block is
    written: a crash loop is not the revision's fault for certain."""
    ctx = _ctx()
    pod = _pod(
        ctx,
        "llama-pool-engine-0-default-0",
        waiting="CrashLoopBackOff",
        message="back-off 5m0s",
        conditions=_unready(ctx, timedelta(hours=1)),
    )
    _, failed, _, book = _pass(
        ctx, _row(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, -timedelta(hours=1), R.CREATING), pod
    )
    assert failed is not None
    assert failed.phase == R.FAILED
    assert book.blocks == {}


def test_running_not_ready_before_deadline_untouched() -> None:
    """Go: same file, TestEscalation_RunningNotReadyBeforeDeadline_Untouched: a day of failing probes
    changes nothing while the deadline is an hour away."""
    ctx = _ctx()
    pod = _pod(ctx, "llama-pool-engine-0-default-0", conditions=_unready(ctx, timedelta(hours=24)))
    row = _row(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, timedelta(hours=1), R.CREATING)
    kept, failed, out, book = _pass(ctx, row, pod)
    assert failed is None
    assert kept == row
    assert _warnings(out) == []
    assert book.blocks == {}


def test_surge_deadline_blames_the_target_not_the_source() -> None:
    """Go: same file, TestEscalation_SurgeDeadlineBlamesTheTargetNotTheSource: a single-pod surge past
    its deadline, with the old source (listed first) and the replacement both in readiness limbo:
    the attempt ends (operation cleared), the record names the replacement, no block."""
    ctx = _ctx()
    old, new = "llama-pool-engine-01d01d00", ctx.spec_revision
    source = _pod(
        ctx, "llama-pool-engine-0-default-0", conditions=_unready(ctx, timedelta(hours=2)), revision=old
    )
    target = _pod(
        ctx, "llama-pool-engine-0-default-1", conditions=_unready(ctx, timedelta(hours=1)), revision=new
    )
    row = replace(_row(ctx, R.OP_UPDATE, R.STEP_SURGE, -timedelta(hours=1), R.UPDATING), running_revision=old)
    _, failed, _, book = _pass(ctx, row, target, members=[target])
    assert source.name != target.name
    assert failed is not None
    assert (failed.phase, failed.operation) == (R.FAILED, None)
    assert failed.last_failure is not None
    assert failed.last_failure["podName"] == target.name
    assert book.blocks == {}


def test_escalate_stuck_pod_failures_captures_last_failure() -> None:
    """Go: same file, TestEscalateStuckPodFailures_CapturesLastFailure: a stuck ``ImagePullBackOff`` pod
    fails the Instance with its pod, reason and container on ``lastFailure`` and no exit code."""
    ctx = _ctx(stuck=timedelta(milliseconds=1))
    pod = _pod(
        ctx,
        "llama-pool-engine-0-default-0",
        waiting="ImagePullBackOff",
        message="back-off pulling image",
        since=timedelta(minutes=1),
    )
    _, failed, _, _ = _pass(ctx, _row(ctx, R.OP_UPDATE, R.STEP_DRAIN, TIMEOUT, R.UPDATING), pod)
    assert failed is not None
    assert failed.phase == R.FAILED
    record = failed.last_failure
    assert record is not None
    assert (record["podName"], record["reason"], record["containerName"]) == (
        pod.name,
        "ImagePullBackOff",
        "main",
    )
    assert "exitCode" not in record


def test_escalate_stuck_pod_failures_already_failed_no_op() -> None:
    """Go: same file, TestEscalateStuckPodFailures_AlreadyFailedNoOp: a Failed row with a wedged pod in
    front of it takes no second Warning (``step_row`` on the Failed row)."""
    ctx = _ctx(stuck=timedelta(milliseconds=1))
    pod = _pod(ctx, "llama-pool-engine-0-default-0", waiting="ImagePullBackOff", since=timedelta(minutes=1))
    row = R.Row(index=0, phase=R.FAILED, last_failure={"reason": "ImagePullBackOff", "podName": pod.name})
    out = Out(ctx.now)
    kept = step_row(ctx, row, [pod], out, RetryBook({}, "llama-demo/llama-pool", "engine"), ctx.spec_revision)
    assert kept is not None
    assert kept.phase == R.FAILED
    assert _warnings(out) == []


def _gang_target(ctx: Ctx, deadline: timedelta) -> R.Row:
    op = R.Operation(
        "update-1",
        R.OP_UPDATE,
        R.STEP_GANG_SURGE_TARGET,
        ctx.spec_revision,
        ctx.now - timedelta(hours=2),
        deadline=ctx.now + deadline,
    )
    return R.Row(index=0, phase=R.CREATING, operation=op, pod_count=2)


def test_gang_deadline_with_running_not_ready_pods_names_the_probe() -> None:
    """Go: same file, TestEscalation_GangDeadlineWithRunningNotReadyPods_NamesTheProbe: a gang surge
    past its deadline whose members run yet never report ready fails with ``ContainersNotReady`` on
    the record, a reason the gang abandon does not charge the ladder on (not workload-caused)."""
    ctx = _ctx(workers=1)
    members = [
        _pod(ctx, "leader", conditions=_unready(ctx, timedelta(hours=1)), runner="leader"),
        _pod(ctx, "worker", conditions=_unready(ctx, timedelta(hours=1)), runner="worker"),
    ]
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine", policy=POLICY)
    failed, _ = bring_up_gang(ctx, _gang_target(ctx, -timedelta(hours=1)), members, out, book)
    assert failed.phase == R.FAILED
    assert failed.last_failure is not None
    assert failed.last_failure["reason"] == "ContainersNotReady"
    assert book.blocks[ctx.spec_revision].reason == "ContainersNotReady"
    assert book.blocks[ctx.spec_revision].attempts_started == 1  # one ladder: counted, not blamed


GANG_STUCK = [
    ("replacement pods not created yet", None, False),
    ("replacement pods healthy", "running", False),
    ("replacement pod also stuck", "ImagePullBackOff", True),
]


@pytest.mark.parametrize(("name", "worker", "fails"), GANG_STUCK, ids=[g[0] for g in GANG_STUCK])
def test_escalate_stuck_pod_failures_gang_surge_ignores_failed_source(
    name: str, worker: str | None, fails: bool
) -> None:
    """Go: same file, TestEscalateStuckPodFailures_GangSurgeIgnoresFailedSource, entry ``name`` (with
    TestEscalateStuckPodFailures_GangSurgeAttributedToSource for the stuck replacement): the old source's
    stuck pod is never the surge's evidence; only a stuck replacement member fails the attempt, naming
    that member. Ours judges the surge on the replacement row, which reads its own members only."""
    ctx = _ctx(stuck=timedelta(milliseconds=1), workers=1)
    members: list[PodView] = []
    if worker is not None:
        members = [
            _pod(ctx, "leader", runner="leader", since=timedelta(minutes=1)),
            _pod(
                ctx,
                "worker",
                runner="worker",
                waiting=None if worker == "running" else worker,
                since=timedelta(minutes=1),
            ),
        ]
    out = Out(ctx.now)
    row, _ = bring_up_gang(ctx, _gang_target(ctx, TIMEOUT), members, out, RetryBook({}, "ns/n", "engine"))
    assert (row.phase == R.FAILED) is fails
    if fails:
        (warning,) = _warnings(out)
        assert 'pod="llama-pool-engine-0-worker-0"' in warning


# --- the failed-while-serving guard -------------------------------------------------------------------


def _serving(ctx: Ctx, name: str, *, deleting: bool = False, phase: str = "Running") -> PodView:
    """Go ``servingPod``: ContainersReady and in the serving rotation (``ome.io/serving`` True)."""
    meta: dict[str, Any] = {
        "name": name,
        "uid": f"uid-{name}",
        "creationTimestamp": format_time(ctx.now - timedelta(hours=1)),
    }
    if deleting:
        meta["deletionTimestamp"] = format_time(ctx.now - timedelta(minutes=1))
    return PodView.from_dict(
        {
            "metadata": meta,
            "spec": {"nodeName": NODE},
            "status": {
                "phase": phase,
                "conditions": [
                    {"type": "ContainersReady", "status": "True"},
                    {"type": "ome.io/serving", "status": "True"},
                ],
                "containerStatuses": [{"name": "main", "ready": True, "state": {"running": {}}}],
            },
        }
    )


def test_deadline_elapsed_but_serving_no_failed_stamp() -> None:
    """Go: same file, TestEscalation_DeadlineElapsedButServing_NoFailedStamp: an Update an hour past its
    deadline whose pod is present, ContainersReady and serving is not stamped Failed: the row and its
    operation are left as they are, no Warning, no block. Failed before (ours had no such guard);
    fixed by Go's ``podSetIsCapacity`` (``planner/steps.py`` ``check_failure``)."""
    ctx = _ctx()
    row = _row(ctx, R.OP_UPDATE, R.STEP_DRAIN, -timedelta(hours=1), R.UPDATING)
    kept, failed, out, book = _pass(ctx, row, _serving(ctx, "llama-pool-engine-0-default-0"))
    assert failed is None
    assert kept.phase == R.UPDATING
    assert kept.operation is not None
    assert _warnings(out) == []
    assert book.blocks == {}


def test_deadline_elapsed_below_desired_serving_still_escalates() -> None:
    """Go: same file, TestEscalation_DeadlineElapsedBelowDesiredServing_StillEscalates: a two-pod Create
    past its deadline with one member serving has not converged: it fails, with one Warning."""
    ctx = _ctx(workers=1)
    leader = _serving(ctx, "llama-pool-engine-0-leader-0")
    row = R.Row(
        index=0,
        phase=R.CREATING,
        operation=R.Operation(
            "create-0",
            R.OP_CREATE,
            R.STEP_CREATE_PODS,
            ctx.spec_revision,
            ctx.now - timedelta(hours=2),
            deadline=ctx.now - timedelta(hours=1),
        ),
    )
    _, failed, out, _ = _pass(ctx, row, leader, members=[leader])
    assert failed is not None
    assert failed.phase == R.FAILED
    assert len(_warnings(out)) == 1


DRAINING = [
    ("drained source beside its serving replacement", True, "serving", False),
    ("deleting pod alone cannot cover the desired count", True, None, True),
    ("drain in flight beside a terminal replacement", True, "terminal", True),
]


@pytest.mark.parametrize(
    ("name", "source", "replacement", "escalates"), DRAINING, ids=[d[0] for d in DRAINING]
)
def test_draining_pod_does_not_mask_stuck_replacement(
    name: str, source: bool, replacement: str | None, escalates: bool
) -> None:
    """Go: same file, TestEscalation_DrainingPodDoesNotMaskStuckReplacement, entry ``name``: a SurgeDrain
    an hour past its deadline: a deleting source beside a serving replacement is exempt; a deleting
    pod alone, or beside a terminal replacement, escalates (one Warning). Ours: the surge step's
    ``check_failure`` on the replacement (a terminal one is no live evidence), the deleting source
    beside it."""
    ctx = _ctx()
    pods = [_serving(ctx, "llama-pool-engine-0-default-0", deleting=True)] if source else []
    target: PodView | None = None
    if replacement == "serving":
        target = _serving(ctx, "llama-pool-engine-0-default-1")
    row = _row(ctx, R.OP_UPDATE, R.STEP_SURGE_DRAIN, -timedelta(hours=1), R.UPDATING)
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    _, failed = check_failure(
        ctx,
        row,
        target,
        "llama-pool-engine-0-default-1",
        out,
        book,
        members=[*pods, *([target] if target else [])],
    )
    assert (failed is not None) is escalates
    assert len(_warnings(out)) == (1 if escalates else 0)


def test_routed_source_keeps_the_serving_exemption() -> None:
    """Go: same file, TestEscalation_RoutedSourceKeepsTheServingExemption: a surge whose pod reads
    ContainersReady and serving (its container meanwhile parked in ``ImagePullBackOff``) with no report
    of an unrouted source is left alone past the stuck-pod grace: no Failed, no Warning."""
    ctx = _ctx(stuck=timedelta(seconds=1))
    pod = _serving(ctx, "llama-pool-engine-0-default-0")
    pod = replace(
        pod,
        containers=tuple(
            replace(ct, waiting_reason="ImagePullBackOff", running=False) for ct in pod.containers
        ),
    )
    kept, failed, out, _ = _pass(ctx, _row(ctx, R.OP_UPDATE, R.STEP_SURGE, TIMEOUT, R.UPDATING), pod)
    assert failed is None
    assert kept.phase == R.UPDATING
    assert _warnings(out) == []


# --- the pause and a corrective revision ---------------------------------------------------------------


def _surge_row(ctx: Ctx, target: str, deadline: timedelta, waiting: str | None = None) -> R.Row:
    """Go's single-pod Surge row (``insts`` / ``failingSurge``): Updating, committed to ``target``."""
    op = R.Operation(
        "surge-0",
        R.OP_UPDATE,
        R.STEP_SURGE,
        target,
        ctx.now - timedelta(hours=1),
        deadline=ctx.now + deadline,
        waiting=waiting,
    )
    return R.Row(
        index=0,
        phase=R.UPDATING,
        operation=op,
        running_revision="llama-pool-engine-prior000",
        target_revision=target,
        pod_count=1,
    )


def _surge_pod(ctx: Ctx, revision: str, waiting: str, since: timedelta) -> PodView:
    """Go ``stuck()`` / ``waitingPod``: the surge slot's pod (ordinal 1) at ``revision``, on node-a, its
    container waiting in ``waiting`` since ``since`` ago."""
    obj = dict(ctx.world.pod_factory(ctx.spec_revision, 0, 1, "default", 1))
    labels = {**obj["metadata"]["labels"], c.LABEL_REVISION_HASH: hash_of(revision)}
    at = format_time(ctx.now - since)
    obj["metadata"] = {**obj["metadata"], "labels": labels, "uid": "uid-surge", "creationTimestamp": at}
    obj["spec"] = {**obj["spec"], "nodeName": NODE}
    obj["status"] = {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": at}],
        "containerStatuses": [{"name": "main", "ready": False, "state": {"waiting": {"reason": waiting}}}],
    }
    return PodView.from_dict(obj)


def test_paused_hold_skips_stuck_pod_fast_path() -> None:
    """Go: same file, TestEscalation_PausedHoldSkipsStuckPodFastPath, its held and released halves: a
    single-pod surge whose new pod sits in ``ImagePullBackOff`` past a one-second grace is left Updating
    with no Warning while the pause holds it (token ``Paused``), and is Failed once the pause is gone.
    Ours: ``instances.step_row`` under the replica's pause (it parks the row before any evidence is
    read), then without it. The third half (a ``SourceUnrouted`` token) has no counterpart: ours has no
    such token."""
    ctx = _ctx(stuck=timedelta(seconds=1))
    bad = ctx.spec_revision  # the surge's target is the update revision (ours abandons a superseded one)
    stuck = _surge_pod(ctx, bad, "ImagePullBackOff", timedelta(minutes=1))
    held_out = Out(ctx.now)
    held = step_row(
        replace(ctx, paused=True),
        _surge_row(ctx, bad, TIMEOUT, waiting="Paused"),
        [stuck],
        held_out,
        RetryBook({}, "llama-demo/llama-pool", "engine"),
        bad,
    )
    assert held is not None
    assert held.phase == R.UPDATING
    assert _warnings(held_out) == []
    released_out = Out(ctx.now)
    released = step_row(
        ctx,
        _surge_row(ctx, bad, TIMEOUT),
        [stuck],
        released_out,
        RetryBook({}, "llama-demo/llama-pool", "engine"),
        ctx.spec_revision,
    )
    assert released is not None
    assert released.phase == R.FAILED
    assert len(_warnings(released_out)) == 1


CORRECTIVE = [
    ("the operation deadline ends it", "ContainerCreating", -timedelta(minutes=1), timedelta(0)),
    ("the stuck-pod fast path ends it", "ImagePullBackOff", TIMEOUT, timedelta(seconds=1)),
]
PINNED = "llama-pool-engine-pinned00"


@pytest.mark.parametrize(("name", "waiting", "deadline", "grace"), CORRECTIVE, ids=[c[0] for c in CORRECTIVE])
def test_corrective_revision_does_not_ride_the_failing_surge(
    name: str, waiting: str, deadline: timedelta, grace: timedelta
) -> None:
    """Go: same file, TestEscalation_CorrectiveRevisionDoesNotRideTheFailingSurge, entry ``name``, the
    ending pass: the operator's corrective revision is observed on the very pass that ends a single-pod
    surge pinned to another revision; the attempt ends against its pin (Failed; any block names the
    pinned revision, never the corrective one). Ours: ``instances.step_row`` with the spec (the
    corrective revision) as the pass's target. Failed before (ours abandoned the superseded surge,
    unread); fixed in ``planner/surge.py`` ``step_surge``: the evidence is read before the supersede
    abandon."""
    ctx = _ctx(stuck=grace)
    assert ctx.spec_revision != PINNED
    pod = _surge_pod(ctx, PINNED, waiting, timedelta(hours=1))
    book = RetryBook({}, "llama-demo/llama-pool", "engine", policy=POLICY)
    failed = step_row(ctx, _surge_row(ctx, PINNED, deadline), [pod], Out(ctx.now), book, ctx.spec_revision)
    assert failed is not None
    assert failed.phase == R.FAILED
    assert set(book.blocks) <= {PINNED}


def test_corrective_revision_drives_a_fresh_attempt_from_failed() -> None:
    """Go: same file, TestEscalation_CorrectiveRevisionDoesNotRideTheFailingSurge, both entries' second
    half: from the Failed row the surge left (its pin ``target_revision``, running the prior revision),
    the corrective revision is driven as a fresh attempt (Go ``StartingFresh``), not the ended surge
    continued: a new Update operation at the corrective revision, started this pass, no retry counted.
    Ours: the whole planner (:func:`omereconcile.planner.core.plan`) over a world whose status carries
    that row."""
    ctx = _ctx()
    failed = replace(_surge_row(ctx, PINNED, -timedelta(minutes=1)), phase=R.FAILED, operation=None)
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=TIMEOUT))
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    prior = sim.status["currentRevision"]
    sim.image = "vllm:v3"  # the corrective revision
    corrective = sim.render().name  # type: ignore[union-attr]
    sim.status["instanceStatuses"] = [replace(failed, running_revision=prior).to_dict()]
    p = plan(sim.observe())
    status = [a.status for a in p.actions if isinstance(a, WriteStatus)][-1]
    (row,) = R.load_rows(status)
    assert row.phase == R.UPDATING
    assert row.operation is not None
    assert row.operation.type == R.OP_UPDATE
    assert row.operation.target_revision == corrective
    assert row.operation.retry_count == 0
    assert row.operation.started_at == sim.now.replace(microsecond=0)


# -- admission scheduling gates (Kueue): the escalation pass skips a queued Instance -----------------


def test_escalation_an_admission_gated_instance_is_not_expired() -> None:
    """Go: same file, TestEscalation_AdmissionGatedInstance_DeadlineSkipped: a Creating Instance whose
    pod still carries an admission scheduling gate, its deadline an hour past, is queued, not stuck:
    it stays Creating and no ``InstanceFailed`` Warning is said. Ours: ``check_failure`` parks its
    clock and reads no evidence (``ReconcileGatedDeadlines``; failed before: the deadline failed it)."""
    ctx = _ctx()
    row = _row(ctx, R.OP_CREATE, R.STEP_CREATE_PODS, -timedelta(hours=1), R.CREATING)
    name = "llama-pool-engine-0-default-0"
    gated = PodView.from_dict(
        {
            "metadata": {
                "name": name,
                "uid": "uid-0",
                "creationTimestamp": format_time(ctx.now - timedelta(hours=1)),
            },
            "spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
            "status": {"phase": "Pending"},
        }
    )
    out = Out(ctx.now)
    kept, failed = check_failure(ctx, row, gated, name, out, RetryBook({}, "llama-demo/llama-pool", "engine"))
    assert failed is None
    assert kept.phase == R.CREATING
    assert _warnings(out) == []


def test_escalation_a_gang_surge_source_whose_attempt_pods_queue_is_not_expired() -> None:
    """Go: same file, TestEscalation_GangSurgeSource_GatedAttemptPods_DeadlineSkipped: a gang surge's
    source, whose attempt pods (its ``surgeIndex`` bucket) queue for admission, is not expired past its
    deadline — it stays Updating, no Warning, no RetryBlock for the (healthy) target revision. Ours in
    the sim (a one-Instance leader+worker gang rolled to an image Kueue queues, 30-minute timeout, an
    hour of passes): the source's clock parks with its replacement's (``gang_ops._source_clock``;
    failed before: the source's clock kept running and the attempt was failed at it)."""
    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=30))
    sim = Sim(settings=settings, workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v2"] = "gated"
    sim.image = "vllm:v2"
    for _ in range(60):
        driver.one_pass()
        sim.advance(60)
    source = sim.rows()[0]
    assert (source["phase"], source["operation"]["step"], source["operation"]["surgeIndex"]) == (
        "Updating",
        "Surge",
        1,
    )
    assert not sim.status.get("retryBlocks")
    assert "InstanceFailed" not in sim.event_reasons()
