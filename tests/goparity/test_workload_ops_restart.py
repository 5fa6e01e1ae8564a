"""OME's ``workload/ops/restart_test.go``, its trigger rules: when a multi-pod Instance that lost a
member is rebuilt whole, and when a runner's in-place restart breaks a Ready Instance.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/restart_test.go`` @ 58a57f25 (132,593
characters, read whole; 9177c1b0 is an earlier 37,578) and the newest stored version (168,703
characters, commit not named by the index, read whole: 58a57f25's cases plus 31, ``GO_NEWEST``), over
``ops/restart.go`` ``DetectRestartTriggerWithPods`` (its ``instanceLostGangMember`` branch) and
``runnerRestartedSinceReady``. Ours: ``planner/gang.py`` ``lost_gang_member`` (asked below Ready; the
Ready branch reads ``gang_broken``) and ``runner_restarted_since_ready``, called on the rows and pods
Go's tests build; the Restart state machine's passes, the demoted-row repair, ``RepairYieldsToTarget``
and the spent-repair ladder (a Restart parked at Failed, ``planner/restart.py``) run one planner pass
in the simulated world. What is not mapped, and the known differences, are listed in
``docs/goparity.md``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import gang_broken, lost_gang_member, runner_restarted_since_ready
from omereconcile.planner.ladder_hold import ladder_attempt_rebuilds
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, PodView, format_time, parse_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/restart_test.go @ 58a57f25"
NOW = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
REV = "llama-pool-engine-c4e45f68"  # Go gangLossRevision: both running and converging toward it
RECREATE = "RecreateInstanceOnPodRestart"


def _ctx(policy: str = RECREATE, workers: int = 1) -> Ctx:
    """A leader+worker replica (two pods per Instance) under ``policy``; Go's plan of two runners."""
    sim = Sim(settings=OperatorSettings(), workers=workers)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": policy}))
    world = replace(sim.observe(), now=NOW)
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _pods(n: int, phase: str = "Running") -> list[PodView]:
    """Go ``gangLossPods``: ``n`` placeholder pods; only the count (and a terminal phase) is read."""
    return [
        PodView.from_dict(
            {
                "metadata": {"name": f"gang-pod-{i}", "namespace": "llama-demo", "uid": f"u{i}"},
                "status": {"phase": phase},
            }
        )
        for i in range(n)
    ]


def _op(type_: str, step: str) -> R.Operation:
    return R.Operation("op-0", type_, step, "", NOW - timedelta(hours=1))


def _create_owned(phase: str, pod_count: int, step: str = R.STEP_CREATE_PODS) -> R.Row:
    """Go ``createOwned``: a Create-owned Instance at a frozen incarnation whose running revision is
    already its target."""
    return R.Row(
        index=0,
        incarnation=74,
        phase=phase,
        pod_count=pod_count,
        running_revision=REV,
        target_revision=REV,
        operation=_op(R.OP_CREATE, step),
    )


def _bare(phase: str, pod_count: int, op: R.Operation | None = None, target: bool = True) -> R.Row:
    return R.Row(
        index=0,
        incarnation=74,
        phase=phase,
        pod_count=pod_count,
        running_revision=REV,
        target_revision=REV if target else "",
        operation=op,
    )


@pytest.mark.parametrize(
    ("row", "live", "expected", "policy", "want"),
    [
        pytest.param(
            _create_owned(R.CREATING, 2), 2, 2, RECREATE, False, id="materialized and complete is silent"
        ),
        pytest.param(
            _create_owned(R.CREATING, 2), 1, 2, RECREATE, True, id="materialized then partial fires"
        ),
        pytest.param(
            _bare(R.FAILED, 1),
            1,
            2,
            RECREATE,
            True,
            id="failed with no operation survives count refresh",
        ),
        pytest.param(
            _create_owned(R.CREATING, 0),
            1,
            2,
            RECREATE,
            True,
            id="committed birth with one survivor fires",
        ),
        pytest.param(
            _create_owned(R.CREATING, 1),
            1,
            2,
            RECREATE,
            True,
            id="current published count does not erase commit",
        ),
        pytest.param(
            _bare(R.CREATING, 1),
            1,
            2,
            RECREATE,
            False,
            id="legacy incomplete status is not proven materialized",
        ),
        pytest.param(
            _bare(R.CREATING, 2), 1, 2, RECREATE, True, id="legacy complete status uses count fallback"
        ),
        pytest.param(
            _create_owned(R.CREATING, 2, step=""),
            1,
            2,
            RECREATE,
            True,
            id="unknown create step retains legacy complete-count proof",
        ),
        pytest.param(
            _create_owned(R.CREATING, 1, step=""),
            1,
            2,
            RECREATE,
            False,
            id="unknown create step with incomplete count is not a commit marker",
        ),
        pytest.param(_create_owned(R.CREATING, 2), 0, 2, RECREATE, False, id="total loss stays with create"),
        pytest.param(
            _create_owned(R.CREATING, 1), 0, 1, RECREATE, False, id="single-pod instance is out of scope"
        ),
        pytest.param(
            _bare(R.UPDATING, 2, _op(R.OP_UPDATE, R.STEP_DRAIN), target=False),
            1,
            2,
            RECREATE,
            False,
            id="update-owned churn is not loss",
        ),
        pytest.param(
            _bare(R.FAILED, 2, _op(R.OP_RESTART, R.STEP_DRAIN), target=False),
            1,
            2,
            RECREATE,
            True,
            id="spent restart attempt at failed re-arms",
        ),
        pytest.param(
            _bare(R.FAILED, 2, _op(R.OP_UPDATE, R.STEP_DRAIN), target=False),
            1,
            2,
            RECREATE,
            False,
            id="failed with preserved update operation stays update-owned",
        ),
        pytest.param(_create_owned(R.DELETING, 2), 1, 2, RECREATE, False, id="deleting is teardown"),
        pytest.param(
            _create_owned(R.CREATING, 2),
            1,
            2,
            "None",
            False,
            id="other restart policies keep create's self-heal",
        ),
    ],
)
def test_gang_member_loss_below_ready(row: R.Row, live: int, expected: int, policy: str, want: bool) -> None:
    """Go: TestDetectRestartTrigger_GangMemberLossBelowReady (each entry but the three below; the three
    committed-materialization entries were strict xfails until goG2): a
    committed multi-pod Instance missing a member while one survives is rebuilt whole under
    RecreateInstanceOnPodRestart, with a reason naming the loss; a gang merely slow to form, a total
    loss, a single-pod Instance, rows another operation owns, teardown and other policies are not."""
    ctx = _ctx(policy, workers=expected - 1)
    assert ctx.pods_per_instance == expected
    reason = lost_gang_member(ctx, row, _pods(live))
    assert (reason is not None) == want, (GO, reason)
    if reason is not None:
        assert "gang member lost" in reason, GO


def test_gang_member_loss_held_revision_is_not_rebuilt() -> None:
    """Go: TestDetectRestartTrigger_GangMemberLossBelowReady "held revision is not rebuilt": a Held block
    on the revision the rebuild would re-materialize denies the Restart. Failed before, fixed by Go's
    rule (``ops/restart.go`` ``rebuildRetryBlockDenies``; ``planner/gang.py`` ``_rebuild_denied``):
    ours rebuilt the gang at the held revision."""
    ctx = _ctx()
    status = dict(ctx.world.replica.status)
    status["retryBlocks"] = [{"targetRevision": REV, "state": "Held", "attemptsStarted": 1}]
    world = replace(ctx.world, replica=replace(ctx.world.replica, status=status))
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    held = build_context(world, desired, desired.name, None)
    assert lost_gang_member(held, _create_owned(R.CREATING, 2), _pods(1)) is None, GO


def test_gang_member_loss_denied_by_a_backoff_asks_for_a_pass_when_it_is_due() -> None:
    """Not a Go case (not counted): ``rebuildRetryBlockDenies`` denies the rebuild until a ``Backoff``
    block's ``nextRetryAt``; ours then asks for a pass at that moment (``Out.wake``), since no watched
    object changes when a backoff ends (Go's controller requeues on its own schedule)."""
    ctx = _ctx()
    due = ctx.now + timedelta(seconds=90)
    status = dict(ctx.world.replica.status)
    status["retryBlocks"] = [
        {"targetRevision": REV, "state": "Backoff", "attemptsStarted": 1, "nextRetryAt": format_time(due)}
    ]
    world = replace(ctx.world, replica=replace(ctx.world.replica, status=status))
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    backoff = build_context(world, desired, desired.name, None)
    out = Out(backoff.now)
    assert lost_gang_member(backoff, _create_owned(R.CREATING, 2), _pods(1), out) is None, GO
    assert out.wakes == [due], GO


def test_gang_member_loss_backoff_on_unrelated_revision_does_not_block() -> None:
    """Go: TestDetectRestartTrigger_GangMemberLossBelowReady "backoff on an unrelated revision does not
    block": a Held block on another revision leaves the rebuild alone: it fires."""
    ctx = _ctx()
    status = dict(ctx.world.replica.status)
    status["retryBlocks"] = [{"targetRevision": "other-revision", "state": "Held", "attemptsStarted": 1}]
    world = replace(ctx.world, replica=replace(ctx.world.replica, status=status))
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    assert lost_gang_member(
        build_context(world, desired, desired.name, None), _create_owned(R.CREATING, 2), _pods(1)
    )


def test_gang_member_loss_after_pod_count_refresh() -> None:
    """Go: TestDetectRestartTrigger_GangMemberLossAfterPodCountRefresh: a complete gang (two pods,
    podCount 2) needs no restart; once a member is gone and publication has refreshed podCount to 1,
    the committed CreatePods operation still proves the materialization, so the loss fires. A strict
    xfail until goG2 (ours needed the published podCount at the desired count); fixed by Go's
    ``createCommitted`` (``planner/gang.py`` ``lost_gang_member``)."""
    ctx = _ctx()
    assert lost_gang_member(ctx, _create_owned(R.CREATING, 2), _pods(2)) is None, GO
    reason = lost_gang_member(ctx, _create_owned(R.CREATING, 1), _pods(1))
    assert reason is not None, GO
    assert "gang member lost" in reason, GO


def test_slow_gang_never_recycled() -> None:
    """Go: TestDetectRestartTrigger_SlowGangNeverRecycled: a complete gang 72 hours into its Create, two
    days past its deadline, is never recycled: the predicate reads no clock."""
    ctx = _ctx()
    row = _create_owned(R.CREATING, 2)
    assert row.operation is not None
    op = replace(row.operation, started_at=NOW - timedelta(hours=72), deadline=NOW - timedelta(hours=48))
    assert lost_gang_member(ctx, replace(row, operation=op), _pods(2)) is None, GO


# -- a runner restarted in place after Ready ------------------------------------------------------------

READY_SINCE = NOW - timedelta(hours=1)


def _runner(name: str, started: datetime, terminated: dict[str, Any] | None = None) -> dict[str, Any]:
    """Go ``runnerStatus``: the current run's start; ``terminated``, the previous run's record."""
    cs: dict[str, Any] = {
        "name": name,
        "restartCount": 0,
        "state": {"running": {"startedAt": format_time(started)}},
    }
    if terminated is not None:
        cs["restartCount"] = 1
        cs["lastState"] = {"terminated": terminated}
    return cs


def _running_pod(*statuses: dict[str, Any]) -> PodView:
    return PodView.from_dict(
        {
            "metadata": {"name": "llama-pool-engine-0-default-0", "namespace": "llama-demo", "uid": "u0"},
            "status": {"phase": "Running", "containerStatuses": list(statuses)},
        }
    )


def test_runner_restart_after_ready() -> None:
    """Go: TestDetectRestartTrigger_RunnerRestartAfterReady: the runner OOMKilled (exit 137) nine
    minutes after Ready and restarted in place inside the same pod: the trigger fires, its reason
    naming the cause and the exit code."""
    pod = _running_pod(
        _runner(
            c.MAIN_CONTAINER,
            READY_SINCE + timedelta(minutes=10),
            {
                "reason": "OOMKilled",
                "exitCode": 137,
                "finishedAt": format_time(READY_SINCE + timedelta(minutes=9)),
            },
        )
    )
    reason = runner_restarted_since_ready(pod, READY_SINCE)
    assert reason is not None, GO
    assert "OOMKilled" in reason, GO
    assert "137" in reason, GO


def test_boot_restarts_forgiven() -> None:
    """Go: TestDetectRestartTrigger_BootRestartsForgiven: every restart predates Ready (probe kills
    while loading weights): no trigger."""
    pod = _running_pod(
        _runner(
            c.MAIN_CONTAINER,
            READY_SINCE - timedelta(minutes=5),
            {"reason": "Error", "exitCode": 1, "finishedAt": format_time(READY_SINCE - timedelta(minutes=6))},
        )
    )
    assert runner_restarted_since_ready(pod, READY_SINCE) is None, GO


def test_sidecar_restart_ignored() -> None:
    """Go: TestDetectRestartTrigger_SidecarRestartIgnored: a sidecar restarted after Ready never breaks
    the Instance's process group; only the runner counts."""
    pod = _running_pod(
        _runner(c.MAIN_CONTAINER, READY_SINCE - timedelta(minutes=5)),
        _runner(
            "serving-sidecar",
            READY_SINCE + timedelta(minutes=20),
            {
                "reason": "Error",
                "exitCode": 1,
                "finishedAt": format_time(READY_SINCE + timedelta(minutes=19)),
            },
        ),
    )
    assert runner_restarted_since_ready(pod, READY_SINCE) is None, GO


def test_nil_ready_since_stays_silent() -> None:
    """Go: TestDetectRestartTrigger_NilReadySinceStaysSilent: an Instance promoted before ``readySince``
    existed has no anchor: the trigger stays silent rather than guess."""
    pod = _running_pod(
        _runner(
            c.MAIN_CONTAINER,
            NOW,
            {"reason": "Error", "exitCode": 1, "finishedAt": format_time(NOW - timedelta(minutes=1))},
        )
    )
    assert runner_restarted_since_ready(pod, None) is None, GO


# -- a Ready row demoted for losing every pod (one planner pass in the simulated world) ----------------

POD0 = "llama-pool-engine-0-default-0"


def _demoted(policy: str = RECREATE, keep_pod: bool = False, **row: Any) -> Sim:
    """Go ``demoted``: a single-pod Instance once Ready, demoted to Pending for losing its pod (no
    operation, the revision it ran recorded), its pod gone unless ``keep_pod``; ``row`` edits the
    row."""
    from omereconcile.simulate.driver import Driver, converged

    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)))
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": policy}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    ran = sim.rows()[0]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = {
        "index": 0,
        "incarnation": 1,
        "phase": "Pending",
        "runningRevision": ran["runningRevision"],
        **row,
    }
    if not keep_pod:
        del sim.pods[POD0]
    return sim


def _repair(sim: Sim) -> tuple[dict[str, Any], str | None]:
    """(the row after one pass, the Restart's reason or None when no Restart opened)."""
    from omereconcile.actions import WriteStatus
    from omereconcile.planner import plan

    out = plan(sim.observe())
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    row = dict(written[-1].status["instanceStatuses"][0]) if written else dict(sim.rows()[0])
    op = row.get("operation") or {}
    return row, (op.get("reason") if op.get("type") == R.OP_RESTART else None)


def test_demoted_row_no_pods_opens_the_repair() -> None:
    """Go: TestDetectRestartTrigger_DemotedRowRepairsAtRunningRevision "no pods opens the repair": under
    RecreateInstanceOnPodRestart the demoted row is read as Ready is: a Restart, "pod count 0 below
    desired 1", at the running revision with the incarnation bumped."""
    row, reason = _repair(_demoted())
    assert reason == "pod count 0 below desired 1", GO
    assert (row["phase"], row["incarnation"]) == ("Restarting", 2), GO


def test_demoted_row_other_policy_leaves_it_to_create() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "a policy other than RecreateInstance leaves it to
    Create": under restartPolicy None no Restart opens (ours: the Create pass rebuilds it)."""
    row, reason = _repair(_demoted("None"))
    assert reason is None, GO
    assert (row.get("operation") or {}).get("type") == R.OP_CREATE, GO


def test_demoted_row_that_never_ran_a_revision_is_a_first_materialization() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "a row that never ran a revision is a first
    materialization": with no running revision recorded, Create owns it."""
    _, reason = _repair(_demoted(runningRevision=""))
    assert reason is None, GO


def test_demoted_row_with_an_operation_keeps_its_owner() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "an operation keeps the row with its owner": a row an
    Update owns is not the restart pass's to repair."""
    sim = _demoted()
    row0 = sim.rows()[0]
    row0["operation"] = {
        "id": "update-0-1",
        "type": "Update",
        "step": "Surge",
        "targetRevision": row0["runningRevision"],
        "startedAt": format_time(sim.now),
    }
    _, reason = _repair(sim)
    assert reason is None, GO


def test_demoted_row_held_revision_denies_the_rebuild() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "a block held against the running revision denies the
    rebuild": below Ready a rebuild answers to the revision's RetryBlock."""
    sim = _demoted()
    assert sim.replica is not None
    rev = sim.rows()[0]["runningRevision"]
    sim.replica["status"]["retryBlocks"] = [{"targetRevision": rev, "state": "Held", "attemptsStarted": 1}]
    _, reason = _repair(sim)
    assert reason is None, GO


def test_demoted_row_block_on_another_revision_does_not_deny() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "a block on another revision does not deny it"."""
    sim = _demoted()
    assert sim.replica is not None
    sim.replica["status"]["retryBlocks"] = [
        {"targetRevision": "llama-pool-engine-0000other", "state": "Held", "attemptsStarted": 1}
    ]
    _, reason = _repair(sim)
    assert reason == "pod count 0 below desired 1", GO


def test_demoted_row_holding_its_pod_set_is_not_a_loss() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "a row holding its pod set is not a loss": the demoted
    row's pod is present at its incarnation: nothing to repair, no Restart."""
    _, reason = _repair(_demoted(keep_pod=True))
    assert reason is None, GO


def test_demoted_row_pod_evidence_stays_anchored_on_ready() -> None:
    """Go: …DemotedRowRepairsAtRunningRevision "pod evidence stays anchored on Ready": a Pending row
    recording ``readySince`` whose pod's runner started twenty minutes after it is the boot path
    below Ready, not a restart trigger."""
    sim = _demoted(keep_pod=True)
    row0 = sim.rows()[0]
    ready_since = sim.now - timedelta(hours=1)
    row0["readySince"] = format_time(ready_since)
    status = sim.pods[POD0].obj["status"]
    for cs in status.get("containerStatuses") or []:
        cs["state"] = {"running": {"startedAt": format_time(ready_since + timedelta(minutes=20))}}
    _, reason = _repair(sim)
    assert reason is None, GO


# -- the op-less crash-loop repair (one planner pass in the simulated world) ------------------------------


def _crash_loop(
    grace: timedelta, phase: str = "Ready", hash_label: str | None = None, serving: bool = False
) -> Sim:
    """Go ``crashLoopInput``: a Ready, operation-free single-pod row on its revision (restart policy
    None), its pod wedged in CrashLoopBackOff for an hour (not ready, not serving), the stuck-pod grace
    ``grace``."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=grace)
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": "None"}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3600)
    obj = sim.pods[POD0].obj
    since = format_time(sim.now - timedelta(minutes=59))
    obj["status"]["containerStatuses"] = [
        {
            "name": c.MAIN_CONTAINER,
            "ready": False,
            "restartCount": 5,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
            "lastState": {"terminated": {"reason": "Error", "exitCode": 1, "finishedAt": since}},
        }
    ]
    for cond in obj["status"]["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready", "ome.io/serving"):
            cond["status"] = "True" if serving and cond["type"] != "Ready" else "False"
            cond["lastTransitionTime"] = since
    if hash_label is not None:
        obj["metadata"]["labels"]["ome.io/revision-hash"] = hash_label
    sim.rows()[0]["phase"] = phase
    return sim


def test_op_less_crash_loop_repairs_under_policy_none() -> None:
    """Go: TestDetectRestartTrigger_OpLessCrashLoopRepairsUnderPolicyNone: the wedge older than the
    grace (one minute) opens a Restart under RestartPolicy=None, naming the pod and the reason. Ours
    since goJ (``planner/restart.py`` ``op_less_crash_loop_repair``, Go ``readCrashLoopRepair``); it was
    a known difference."""
    _, reason = _repair(_crash_loop(timedelta(minutes=1)))
    assert reason is not None, GO
    assert "CrashLoopBackOff" in reason, GO
    assert POD0 in reason, GO


@pytest.mark.parametrize(
    ("grace", "phase", "hash_label", "serving"),
    [
        pytest.param(
            timedelta(hours=2),
            "Ready",
            None,
            False,
            id="TestDetectRestartTrigger_CrashLoopWithinGraceStaysSilent",
        ),
        pytest.param(
            timedelta(0),
            "Ready",
            None,
            False,
            id="TestDetectRestartTrigger_UnconfiguredGraceDisablesCrashLoopRepair",
        ),
        pytest.param(
            timedelta(minutes=1),
            "Ready",
            "otherrev",
            False,
            id="TestDetectRestartTrigger_OffRevisionWedgeLeftToEscalation",
        ),
        pytest.param(
            timedelta(minutes=1),
            "Ready",
            None,
            True,
            id="TestDetectRestartTrigger_CrashLoopOnServingPodSetStaysSilent",
        ),
        pytest.param(
            timedelta(minutes=1),
            "Pending",
            None,
            False,
            id="TestDetectRestartTrigger_PendingRowIsNotACrashLoopRepair",
        ),
    ],
)
def test_crash_loop_left_alone(grace: timedelta, phase: str, hash_label: str | None, serving: bool) -> None:
    """Go: the crash-loop cases where no repair opens: a wedge younger than the grace; no grace
    configured; a wedged pod on another revision (a leftover, the escalation's); a pod set still
    serving (ContainersReady and the serving gate True); a row below Ready.
    (Ours: ``planner/restart.py`` ``op_less_crash_loop_repair`` reads none of them as a wedge.)"""
    _, reason = _repair(_crash_loop(grace, phase, hash_label, serving))
    assert reason is None, GO


def test_crash_loop_denied_by_held_retry_block() -> None:
    """Go: TestDetectRestartTrigger_CrashLoopDeniedByHeldRetryBlock: a Held block on the row's
    revision denies the repair."""
    sim = _crash_loop(timedelta(minutes=1))
    assert sim.replica is not None
    rev = sim.rows()[0]["runningRevision"]
    sim.replica["status"]["retryBlocks"] = [{"targetRevision": rev, "state": "Held", "attemptsStarted": 3}]
    _, reason = _repair(sim)
    assert reason is None, GO


def test_container_restart_still_honours_policy_none() -> None:
    """Go: TestDetectRestartTrigger_ContainerRestartStillHonoursPolicyNone: under RestartPolicy=None a
    runner that died (OOMKilled) and came back inside the same pod after Ready is not a wedge: no
    Restart."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=timedelta(minutes=1)
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": "None"}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3600)
    sim.restart_runner(POD0, reason="OOMKilled", exit_code=137)
    _, reason = _repair(sim)
    assert reason is None, GO


# -- a gang surge's marker and a promoted replacement ---------------------------------------------------


def _member(ctx: Ctx, index: int, runner: str, phase: str) -> PodView:
    name = ctx.pod_name(index, 0, runner)
    labels = {
        "ome.io/instance-index": str(index),
        "ome.io/instance-incarnation": "1",
        "ome.io/runner": runner,
    }
    return PodView.from_dict(
        {
            "metadata": {"name": name, "namespace": "llama-demo", "uid": f"u-{name}", "labels": labels},
            "status": {"phase": phase},
        }
    )


@pytest.mark.parametrize("step", [R.STEP_GANG_SURGE_TARGET, R.STEP_GANG_SURGE_TARGET_CLEANUP])
@pytest.mark.parametrize("phase", ["Failed", "Succeeded"])
def test_gang_surge_marker_is_not_repaired_on_its_own(step: str, phase: str) -> None:
    """Go: TestDetectRestartTrigger_GangSurgeMarkerIsNotRepairedOnItsOwn (each step and terminal phase):
    a surge target marker (Creating, its Update kept at GangSurgeTarget or GangSurgeTargetCleanup) whose
    replacement pod ended is not rebuilt by the restart pass behind the surge's back: its operation
    owns it."""
    ctx = _ctx()
    marker = R.Row(
        index=2,
        incarnation=1,
        phase=R.CREATING,
        pod_count=2,
        target_revision=REV,
        operation=replace(_op(R.OP_UPDATE, step), target_revision=REV),
    )
    assert lost_gang_member(ctx, marker, [_member(ctx, 2, "leader", phase)]) is None, GO


def test_promoted_gang_target_owns_a_missing_member() -> None:
    """Go: TestDetectRestartTrigger_PromotedGangTargetOwnsAMissingMember: a replacement promoted Ready
    (operation cleared, ``readySince`` set) is an ordinary Instance: losing a member is the restart
    pass's business, with a reason naming why (``planner/gang.py`` ``gang_broken``, the Ready branch)."""
    ctx = _ctx()
    promoted = R.Row(
        index=2,
        incarnation=1,
        phase=R.READY,
        pod_count=2,
        running_revision=REV,
        ready_since=NOW - timedelta(hours=1),
    )
    reason = gang_broken(ctx, promoted, [_member(ctx, 2, "leader", "Running")])
    assert reason, GO


# -- the Restart's passes on a single-pod Instance (the simulated world) ---------------------------------


def _ready_single(**spec: Any) -> tuple[Sim, Any]:
    from omereconcile.simulate.driver import Driver, converged

    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)))
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": RECREATE}, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _restarting(**spec: Any) -> tuple[Sim, Any]:
    """Go's pre-bumped row: Restarting at incarnation 2 under Restart/Drain, the incarnation-1 pod
    still standing (serving)."""
    sim, driver = _ready_single(**spec)
    rev = sim.rows()[0]["runningRevision"]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = _restart_row(
        rev, sim.now, sim.now + timedelta(hours=1), phase="Restarting", reason="x"
    )
    return sim, driver


def _acts(out: Any, kind: str) -> list[Any]:
    return [a for a in out.actions if type(a).__name__ == kind]


def test_restart_drain_old_pod_flips_serving_false() -> None:
    """Go: TestRestart_DrainOldPod_FlipsServingFalse: the old incarnation's pod, still serving, is
    taken out of rotation first; the Restart is not done."""
    from omereconcile.planner import plan

    sim, _ = _restarting()
    out = plan(sim.observe())
    assert [(a.name, a.status) for a in _acts(out, "SetServingGate")] == [(POD0, False)], GO
    assert _acts(out, "DeletePod") == [], GO


def test_restart_deletes_old_pod_once_drained() -> None:
    """Go: TestRestart_DeletesOldPodOnceDrained: once the old pod is out of rotation and no
    EndpointSlice lists it ready, it is deleted (the next pass creates the new one)."""
    sim, driver = _restarting()
    for _ in range(20):
        out = driver.one_pass()
        if _acts(out, "DeletePod"):
            assert [a.name for a in _acts(out, "DeletePod")] == [POD0], GO
            assert sim.gate_of(POD0) == "False", GO
            return
        sim.advance(0.5)
    raise AssertionError("the drained old pod was never deleted")


def test_restart_refuses_to_delete_orphan_pod() -> None:
    """Go: TestRestart_RefusesToDeleteOrphanPod: a pod under the selector without
    ``ome.io/instance-incarnation`` is an orphan: the Restart does not delete it and does not
    advance. (Go's comment names a FoundOrphan Warning; its test asserts only that the pod stays.
    Ours records the Warning too and neither deletes nor creates: planner/instances.py
    ``_refuse_orphans``, tests/goparity/test_workload_evidence_stuckpod.py.)"""
    from omereconcile.planner import plan

    sim, _ = _restarting()
    del sim.pods[POD0].obj["metadata"]["labels"]["ome.io/instance-incarnation"]
    out = plan(sim.observe())
    assert POD0 not in [a.name for a in _acts(out, "DeletePod")], GO
    row = next(r for r in out.actions if type(r).__name__ == "WriteStatus").status["instanceStatuses"][0]
    assert row["phase"] == "Restarting", GO


def test_restart_creates_new_pod_at_bumped_incarnation() -> None:
    """Go: TestRestart_CreatesNewPodAtBumpedIncarnation: Restarting at incarnation 2 with no pod left:
    the new pod is created with incarnation label 2."""
    from omereconcile.planner import plan

    sim, _ = _restarting()
    del sim.pods[POD0]
    out = plan(sim.observe())
    created = _acts(out, "CreatePod")
    assert [a.name for a in created] == [POD0], GO
    assert created[0].pod["metadata"]["labels"]["ome.io/instance-incarnation"] == "2", GO


def _failed_oom(sim: Sim) -> None:
    """Go ``failedPodOOM``: the pod Failed, its main container terminated OOMKilled (exit 137); the
    kubelet withdraws its readiness."""
    pod = sim.pods[POD0]
    status = pod.obj["status"]
    status["phase"] = "Failed"
    pod.behaviour = "ended"
    status["containerStatuses"] = [
        {
            "name": c.MAIN_CONTAINER,
            "ready": False,
            "restartCount": 0,
            "state": {
                "terminated": {
                    "reason": "OOMKilled",
                    "exitCode": 137,
                    "message": "container killed due to memory limit",
                    "finishedAt": format_time(sim.now),
                }
            },
        }
    ]
    for cond in status["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "False"


def test_restart_converges_across_passes() -> None:
    """Go: TestRestart_ConvergesAcrossPasses: a Ready Instance whose pod Failed is restarted and
    converges: Ready at incarnation 2 with no operation. (Ours demotes the row first and restarts it
    from Pending, the known difference of ``terminal_pods_test.go``; the end state is Go's.)"""
    from omereconcile.simulate.driver import converged

    sim, driver = _ready_single()
    _failed_oom(sim)
    driver.run(
        lambda s: converged(s) and s.status.get("readyReplicas") == 1 and s.rows()[0]["incarnation"] == 2
    )
    row = sim.rows()[0]
    assert (row["phase"], row["incarnation"], row.get("operation")) == ("Ready", 2, None), GO


def test_restart_captures_last_failure_before_drain() -> None:
    """Go: TestRestart_CapturesLastFailureBeforeDrain: the first pass keeps the failed pod's
    diagnostics on ``lastFailure`` before the drain takes the pod: pod, container, OOMKilled, 137."""
    sim, driver = _ready_single()
    _failed_oom(sim)
    for _ in range(3):
        driver.one_pass()
        sim.advance(0.5)
    lf = sim.rows()[0].get("lastFailure") or {}
    assert (lf.get("podName"), lf.get("reason"), lf.get("exitCode")) == (POD0, "OOMKilled", 137), GO
    assert lf.get("containerName") == c.MAIN_CONTAINER, GO


@pytest.mark.parametrize(
    "case",
    ["TestDetectRestartTrigger_RichReasonForFailedPod", "TestRestart_EmitsRichRestartTriggeredEvent"],
)
def test_restart_reason_names_the_termination(case: str) -> None:
    """Go: TestDetectRestartTrigger_RichReasonForFailedPod and TestRestart_EmitsRichRestartTriggered-
    Event: the restart's reason, and its RestartTriggered Warning, name the termination (OOMKilled,
    137), not a bare "pod Failed"."""
    sim, driver = _ready_single()
    _failed_oom(sim)
    for _ in range(3):
        driver.one_pass()
        sim.advance(0.5)
    events = [e.message for e in sim.events if e.event_reason == "RestartTriggered"]
    assert events, GO
    assert "OOMKilled" in events[0], GO
    assert "137" in events[0], GO


def test_restart_pod_vanished_preserves_prior_last_failure() -> None:
    """Go: TestRestart_PodVanished_PreservesPriorLastFailure: the pod already vanished ("pod count
    below desired"): no pod yields a fresh record, so the prior ``lastFailure`` (Error, exit 1) is
    kept through the Restart's first pass."""
    sim, driver = _ready_single()
    prior = {"podName": POD0, "reason": "Error", "exitCode": 1, "time": format_time(sim.now)}
    sim.rows()[0]["lastFailure"] = dict(prior)
    del sim.pods[POD0]
    for _ in range(3):
        driver.one_pass()
        sim.advance(0.5)
        if sim.rows()[0]["phase"] == "Restarting":
            break
    row = sim.rows()[0]
    assert row["phase"] == "Restarting", GO
    assert (row.get("lastFailure") or {}).get("reason") == "Error", GO


def test_restart_promotion_waits_for_pod_ready_and_window() -> None:
    """Go: TestRestart_PromotionWaitsForPodReadyAndWindow: phase C writes the serving gate on the
    rebuilt pod and holds the promote: first until the kubelet folds the gate into PodReady, then
    until the pod has held Ready for ``minReadySeconds`` (20 s), the pass waking at the remainder
    (15 s when PodReady came 5 s ago); then Ready with no operation."""
    from omereconcile.planner import plan

    sim, driver = _restarting(minReadySeconds=20)

    def _cond(type_: str) -> bool:
        pod = sim.pods.get(POD0)
        labels = pod.obj["metadata"]["labels"] if pod else {}
        conds = pod.obj["status"].get("conditions", []) if pod else []
        return labels.get("ome.io/instance-incarnation") == "2" and any(
            x["type"] == type_ and x["status"] == "True" for x in conds
        )

    for _ in range(200):
        driver.one_pass()
        sim.advance(0.5)
        if _cond("ContainersReady") and sim.gate_of(POD0) != "True":
            break
    out = plan(sim.observe())
    assert [(a.name, a.status) for a in _acts(out, "SetServingGate")] == [(POD0, True)], GO
    row = next(a for a in out.actions if type(a).__name__ == "WriteStatus").status["instanceStatuses"][0]
    assert row["phase"] == "Restarting", GO
    for _ in range(200):
        driver.one_pass()
        sim.advance(0.5)
        if _cond("Ready"):
            break
    ready = next(x for x in sim.pods[POD0].obj["status"]["conditions"] if x["type"] == "Ready")
    since = parse_time(ready["lastTransitionTime"])
    assert since is not None
    sim.advance((since + timedelta(seconds=5) - sim.now).total_seconds())
    out = plan(sim.observe())
    assert sim.rows()[0]["phase"] == "Restarting", GO
    assert out.requeue_after == pytest.approx(15, abs=1), GO
    sim.advance(15)
    out = plan(sim.observe())
    row = next(a for a in out.actions if type(a).__name__ == "WriteStatus").status["instanceStatuses"][0]
    assert (row["phase"], row.get("operation")) == ("Ready", None), GO


@pytest.mark.parametrize("gang", [pytest.param(False, id="single pod"), pytest.param(True, id="gang")])
def test_restart_renders_the_stamped_revision_template(gang: bool) -> None:
    """Go: TestRestart_RendersTheStampedRevisionTemplate (both subtests): the rebuild renders the
    template the stamped (running) revision stores, not the Component's current one: with the image
    moved to v2 under a pause (which withholds the roll), the rebuilt pods carry the running revision's
    image under its revision label."""
    from omereconcile.simulate.driver import Driver, converged

    sim = Sim(
        settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)), workers=1 if gang else 0
    )
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": RECREATE}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    running = sim.rows()[0]["runningRevision"]
    sim.update_spec(paused=True)
    sim.image = "vllm:v2"
    rev = running
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = _restart_row(
        rev,
        sim.now,
        sim.now + timedelta(hours=1),
        phase="Restarting",
        reason="pod count 0 below desired 1",
        step="CreatePods",
    )
    for name in list(sim.pods):
        del sim.pods[name]
    from omereconcile.planner import plan

    out = plan(sim.observe())
    created = _acts(out, "CreatePod")
    assert len(created) == (2 if gang else 1), GO
    for act in created:
        assert act.pod["metadata"]["labels"]["ome.io/revision-hash"] == running.rsplit("-", 1)[-1], GO
        assert act.pod["spec"]["containers"][0]["image"] == "vllm:v1", GO


def _open_rebuild(gang: bool, leader_rebuilt: bool = False, held: bool = False) -> tuple[Sim, str, str]:
    """Go ``restartingRow``: an open Restart at incarnation 2 recording the running revision, its old
    pods gone and (unless ``leader_rebuilt``) none of its own created yet, while the spec moved to v2
    (a new roll target; ``held``: a Held RetryBlock on it). Returns the sim, the running revision and
    the target."""
    from omereconcile.simulate.driver import Driver, converged

    sim = Sim(
        settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)), workers=1 if gang else 0
    )
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": RECREATE}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    running = sim.rows()[0]["runningRevision"]
    sim.image = "vllm:v2"
    target = sim.observe().render
    assert isinstance(target, DesiredRevision)
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = _restart_row(
        running,
        sim.now,
        sim.now + timedelta(hours=1),
        phase="Restarting",
        reason="pod count 0 below desired 1",
    )
    if held:
        sim.replica["status"]["retryBlocks"] = [
            {"targetRevision": target.name, "state": "Held", "attemptsStarted": 3}
        ]
    for name in list(sim.pods):
        if leader_rebuilt and "-leader-" in name:
            sim.pods[name].obj["metadata"]["labels"]["ome.io/instance-incarnation"] = "2"
            continue
        del sim.pods[name]
    return sim, running, target.name


@pytest.mark.parametrize(
    ("gang", "leader_rebuilt", "held", "follows"),
    [
        pytest.param(False, False, False, True, id="single pod"),
        pytest.param(True, False, False, True, id="gang"),
        pytest.param(True, True, False, False, id="gang whose leader is already rebuilt"),
        pytest.param(False, False, True, False, id="target the RetryBlock holds"),
    ],
)
def test_restart_rebuild_with_no_pod_yet_follows_the_target(
    gang: bool, leader_rebuilt: bool, held: bool, follows: bool
) -> None:
    """Go: TestRestart_RebuildWithNoPodYetFollowsTheTarget (each subtest): an open repair whose rebuild
    has created no pod yet renders the roll target when the row is off it, the row recording the
    target first; it keeps the revision it stamped once a pod of its own exists, and when the
    RetryBlock holds the target."""
    from omereconcile.actions import WriteStatus
    from omereconcile.planner import plan

    sim, running, target = _open_rebuild(gang, leader_rebuilt, held)
    out = plan(sim.observe())
    want = target if follows else running
    created = _acts(out, "CreatePod")
    assert created, GO
    for act in created:
        assert act.pod["metadata"]["labels"]["ome.io/revision-hash"] == want.rsplit("-", 1)[-1], GO
    row = next(a for a in out.actions if isinstance(a, WriteStatus)).status["instanceStatuses"][0]
    assert (row["phase"], row.get("runningRevision")) == ("Restarting", want), GO


def test_restart_holds_when_the_stamped_revision_is_gone() -> None:
    """Go: TestRestart_HoldsWhenTheStampedRevisionIsGone (restart_test.go @ 58a57f25): two passes over
    an open Restart recording a revision that is gone: no pod is created from the current template
    under that label, the row stays Restarting on the gone revision, and exactly one RepairRevisionGone
    Warning names it across the two passes (Go ``announceRevisionGone`` through ``status.Announce``,
    the row's ``announced`` record: ``planner/status.py`` ``settle_announcements``). Go calls
    ``ops.Restart`` with no roll target (``nil``), so there is nothing for the rebuild to follow; ours
    always has the spec's revision as its target, and a pause is what withholds it (as Go's own
    ``TestRestart_RendersTheStampedRevisionTemplate`` does with ``plan.Paused``). Before: a strict xfail,
    the Warning said on every pass (and the port drove it unpaused with a roll target, which Go's
    ``TestRestart_RebuildWithNoPodYetFollowsTheTarget`` follows in Go too)."""
    from omereconcile.actions import RecordEvent, WriteStatus
    from omereconcile.planner import plan

    sim, _running, _target = _open_rebuild(gang=False)
    gone = "llama-pool-engine-0000gone"
    row0 = sim.rows()[0]
    row0.update(runningRevision=gone, targetRevision=gone)
    row0["operation"]["targetRevision"] = gone
    sim.update_spec(paused=True)
    warnings: list[str] = []
    for _ in range(2):
        out = plan(sim.observe())
        assert _acts(out, "CreatePod") == [], GO
        warnings += [
            a.message
            for a in out.actions
            if isinstance(a, RecordEvent) and a.event_reason == "RepairRevisionGone"
        ]
        written = [a for a in out.actions if isinstance(a, WriteStatus)]
        if written:
            assert sim.replica is not None
            sim.replica["status"] = dict(written[-1].status)
    assert len(warnings) == 1, GO
    assert gone in warnings[0], GO
    assert (sim.rows()[0]["phase"], sim.rows()[0]["runningRevision"]) == ("Restarting", gone), GO


def test_restart_at_a_gone_revision_creates_nothing_and_says_so() -> None:
    """Go: TestRestart_HoldsWhenTheStampedRevisionIsGone, the words of its Warning, under a pause so the
    rebuild keeps its stamped revision (not counted as a case; the count across passes is above): a
    pass over an open Restart recording a revision whose ControllerRevision is gone creates no pod,
    records RepairRevisionGone in Go's words (``announceRevisionGone``) and leaves the row Restarting on
    that revision. Before, the pod factory's ``LookupError`` failed the whole pass every time."""
    from omereconcile.actions import RecordEvent, WriteStatus
    from omereconcile.planner import plan

    sim, _running, _target = _open_rebuild(gang=False)
    gone = "llama-pool-engine-0000gone"
    row0 = sim.rows()[0]
    row0.update(runningRevision=gone, targetRevision=gone)
    row0["operation"]["targetRevision"] = gone
    sim.update_spec(paused=True)
    out = plan(sim.observe())
    assert _acts(out, "CreatePod") == [], GO
    (warning,) = [
        a.message
        for a in out.actions
        if isinstance(a, RecordEvent) and a.event_reason == "RepairRevisionGone"
    ]
    assert warning == (
        f"OMENative component=engine instance=0 cannot rebuild revision {gone}: its ControllerRevision is "
        "gone, so no pod is created from the current template under that revision; the attempt waits for "
        "its deadline"
    ), GO
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    rows = written[-1].status["instanceStatuses"] if written else sim.rows()
    assert (rows[0]["phase"], rows[0]["runningRevision"]) == ("Restarting", gone), GO


def test_restart_demoted_row_rebuilds_at_running_revision() -> None:
    """Go: TestRestart_DemotedRowRebuildsAtRunningRevision: the repair of a demoted row, under a pause
    that withholds the roll to a moved target, is the ordinary Restart: incarnation bumped to 2,
    Restarting, still recording the running revision, and its pod recreated at that revision (its
    label), never the target's."""
    from omereconcile.planner import plan

    sim = _demoted()
    running = sim.rows()[0]["runningRevision"]
    sim.update_spec(paused=True)
    sim.image = "vllm:v2"
    out = plan(sim.observe())
    row = next(a for a in out.actions if type(a).__name__ == "WriteStatus").status["instanceStatuses"][0]
    assert (row["phase"], row["incarnation"], row.get("runningRevision")) == ("Restarting", 2, running), GO
    created = _acts(out, "CreatePod")
    assert [a.name for a in created] == [POD0], GO
    labels = created[0].pod["metadata"]["labels"]
    assert labels["ome.io/instance-incarnation"] == "2", GO
    assert labels["ome.io/revision-hash"] == running.rsplit("-", 1)[-1], GO


def test_new_target_waits_for_an_open_crash_loop_repair() -> None:
    """Go: TestDetectUpdateTrigger_NewTargetAgainstACrashLoopRepair "repair open: the target waits": a
    row below Ready under an open Restart is not rolled; the new target waits for the repair."""
    from omereconcile.planner import plan

    sim, _ = _restarting()
    sim.image = "vllm:v2"
    out = plan(sim.observe())
    row = next(a for a in out.actions if type(a).__name__ == "WriteStatus").status["instanceStatuses"][0]
    assert (row.get("operation") or {}).get("type") == R.OP_RESTART, GO


def test_new_target_takes_a_crash_looping_ready_row() -> None:
    """Go: TestDetectUpdateTrigger_NewTargetAgainstACrashLoopRepair "repair not yet open: the roll
    takes the row": a Ready row off the new target, its pod wedged in a crash loop the repair would
    otherwise open on, is yielded to the roll: the update takes it."""
    from omereconcile.planner import plan

    sim = _crash_loop(timedelta(minutes=1))
    sim.image = "vllm:v2"
    out = plan(sim.observe())
    row = next(a for a in out.actions if type(a).__name__ == "WriteStatus").status["instanceStatuses"][0]
    assert (row.get("operation") or {}).get("type") == R.OP_UPDATE, GO


def test_restart_operator_config_retry_block_history_changes_nothing() -> None:
    """Go: TestRestart_OperatorConfigChangesDoNotChangeWhatItDecides "retry block history" (its other
    three edits are Go settings ours does not have): a repair waiting out its promote window decides
    the same row and wake-up with stale RetryBlocks in status."""
    from dataclasses import replace as dc_replace

    from omereconcile.actions import WriteStatus
    from omereconcile.planner import plan

    sim, driver = _restarting(minReadySeconds=20)
    for _ in range(200):
        driver.one_pass()
        sim.advance(0.5)
        pod = sim.pods.get(POD0)
        rebuilt = pod is not None and pod.obj["metadata"]["labels"].get("ome.io/instance-incarnation") == "2"
        if rebuilt and any(
            x["type"] == "Ready" and x["status"] == "True" for x in pod.obj["status"]["conditions"]
        ):
            break
    sim.advance(5)
    world = sim.observe()

    def decided(w: Any) -> tuple[Any, Any]:
        out = plan(w)
        written = [a for a in out.actions if isinstance(a, WriteStatus)]
        rows = written[-1].status["instanceStatuses"] if written else w.replica.status["instanceStatuses"]
        return rows, out.requeue_after

    base_rows, base_wake = decided(world)
    assert base_rows[0]["phase"] == "Restarting"
    assert base_wake
    status = dict(world.replica.status)
    status["retryBlocks"] = [
        {"targetRevision": "llama-pool-engine-stale001", "state": "Held", "attemptsStarted": 1}
    ]
    edited = dc_replace(world, replica=dc_replace(world.replica, status=status))
    assert decided(edited) == (base_rows, base_wake), GO


def test_open_repair_keeps_driving_under_policy_none() -> None:
    """Go: TestDetectRestartTrigger_OpenRepairKeepsDrivingUnderPolicyNone: once a Restart is open the
    row is driven every pass whatever the restart policy: under None the open Restart still advances
    (its old pod taken out of rotation), not left stalled at Drain."""
    from omereconcile.planner import plan

    sim, _ = _restarting()
    assert sim.replica is not None
    sim.update_spec(lifecycle={"restartPolicy": "None"})
    out = plan(sim.observe())
    assert [(a.name, a.status) for a in _acts(out, "SetServingGate")] == [(POD0, False)], GO


def test_gang_wedged_on_one_member_opens_one_repair() -> None:
    """Go: TestDetectRestartTrigger_GangWedgedOnOneMemberOpensOneRepair: a Ready two-pod Instance (one
    runner, size 2) whose second member is wedged in CrashLoopBackOff for an hour, the other healthy,
    opens ONE Restart for the Instance naming the wedged member (policy None). Ours since goJ
    (``planner/restart.py`` ``op_less_crash_loop_repair``); it was a known difference. Go's further
    assertion, that ``RestartOpensUnavailability`` puts the repair to the unavailability budget, has
    no counterpart (ours has no repair admission) and is not asserted."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=timedelta(minutes=1)
    )
    sim = Sim(settings=settings, workers=1)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": "None"}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3600)
    worker = "llama-pool-engine-0-worker-0"
    obj = sim.pods[worker].obj
    since = format_time(sim.now - timedelta(minutes=59))
    obj["status"]["containerStatuses"] = [
        {
            "name": c.MAIN_CONTAINER,
            "ready": False,
            "restartCount": 5,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        }
    ]
    for cond in obj["status"]["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "False"
            cond["lastTransitionTime"] = since
    _, reason = _repair(sim)
    assert reason is not None, GO
    assert worker in reason, GO


def _armed(sim: Sim) -> dict[str, Any]:
    """One planner pass over ``sim``; its status write, if any, is stored as the replica's status (the
    stamp lands), the pods left as they were. Returns the row after the pass."""
    from omereconcile.actions import WriteStatus
    from omereconcile.planner import plan

    assert sim.replica is not None
    written = [a for a in plan(sim.observe()).actions if isinstance(a, WriteStatus)]
    if written:
        sim.replica["status"] = dict(written[-1].status)
    return dict(sim.rows()[0])


def test_re_observed_crash_loop_arms_nothing_a_second_time() -> None:
    """Go: TestRestart_ReObservedCrashLoopArmsNothingASecondTime (the newest stored version; not
    mappable before goJ, ours having no op-less crash-loop repair): the stamp lands (Restarting at
    incarnation 2); the same wedged pod re-observed on the next pass arms nothing a second time: the
    incarnation stays, the row stays Restarting with the one open Restart. Go calls ``ops.Restart``
    twice; here two planner passes run, the first opening the repair through its trigger."""
    sim = _crash_loop(timedelta(minutes=1))
    armed = _armed(sim)
    assert (armed["phase"], armed["incarnation"]) == ("Restarting", 2), GO
    op = armed.get("operation") or {}
    assert op.get("type") == R.OP_RESTART, GO
    assert sim.pods[POD0].obj["status"]["containerStatuses"][0]["state"] == {
        "waiting": {"reason": "CrashLoopBackOff"}
    }
    again = _armed(sim)
    assert again["incarnation"] == armed["incarnation"], GO
    assert again["phase"] == "Restarting", GO
    assert (again.get("operation") or {}).get("type") == R.OP_RESTART, GO
    assert (again.get("operation") or {}).get("id") == op.get("id"), GO


def test_pod_lost_as_the_repair_stamp_commits_still_drains() -> None:
    """Go: TestRestart_PodLostAsTheRepairStampCommitsStillDrains (the newest stored version; not
    mappable before goJ): the wedged pod the crash-loop trigger read is gone by the time the stamp
    commits; the stamp lands unchanged (Restarting, incarnation 2, an open Restart), and the repair,
    owning the pod set, recreates the missing pod at the bumped incarnation on the next pass. Go calls
    ``ops.Restart`` on a row with no pod; ours opens a Restart only through its trigger, so the first
    pass reads the wedged pod and the pod is deleted before the second."""
    from omereconcile.actions import CreatePod
    from omereconcile.planner import plan

    sim = _crash_loop(timedelta(minutes=1))
    armed = _armed(sim)
    assert (armed["phase"], armed["incarnation"]) == ("Restarting", 2), GO
    assert (armed.get("operation") or {}).get("type") == R.OP_RESTART, GO
    del sim.pods[POD0]
    created = [a for a in plan(sim.observe()).actions if isinstance(a, CreatePod)]
    assert len(created) == 1, GO
    assert created[0].pod["metadata"]["labels"][c.LABEL_INSTANCE_INCARNATION] == "2", GO


def _restarted_in_place(sim: Sim) -> None:
    """Go ``TestDetectRestartTrigger_RunnerRestartAfterReady``'s pod on the Ready row: its runner
    OOMKilled (exit 137) after ``readySince`` and running again in the same pod (same UID, Running)."""
    ready_since = parse_time(sim.rows()[0]["readySince"])
    assert ready_since is not None
    status = sim.pods[POD0].obj["status"]
    statuses = [cs for cs in status.get("containerStatuses") or [] if cs["name"] != c.MAIN_CONTAINER]
    crashed = {
        "reason": "OOMKilled",
        "exitCode": 137,
        "finishedAt": format_time(ready_since + timedelta(seconds=1)),
    }
    statuses.append(_runner(c.MAIN_CONTAINER, ready_since + timedelta(seconds=2), crashed))
    status["containerStatuses"] = statuses


@pytest.mark.parametrize(
    ("policy", "restarts"),
    [
        pytest.param(RECREATE, True, id="RecreateInstanceOnPodRestart"),
        pytest.param(None, False, id="default-None"),
    ],
)
def test_runner_restart_after_ready_restarts_a_single_pod_instance(
    policy: str | None, restarts: bool
) -> None:
    """Go: TestDetectRestartTrigger_RunnerRestartAfterReady through the planner: its plan is a
    single-pod engine under RecreateInstanceOnPodRestart (``buildPlanSinglePodEngineForRestart``), and
    the newest ``DetectRestartTriggerWithPods`` reads ``runnerRestartTrigger`` on every Ready row under
    that policy, not only a gang's. The in-place restart opens a Restart (Restarting, incarnation 2,
    the reason naming OOMKilled and 137, one RestartTriggered). Under the single-pod default (``None``)
    the same restart is the kubelet's alone: the row stays Ready. Failed before (ours read it for
    gangs only: ``planner/gang.py`` ``gang_broken``)."""
    from omereconcile.simulate.driver import Driver, converged

    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)))
    lifecycle = {"restartPolicy": policy} if policy else {}
    sim.apply_replica(base_replica(replicas=1, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(60)
    _restarted_in_place(sim)
    driver.one_pass()
    row = sim.rows()[0]
    triggered = [e.message for e in sim.events if e.event_reason == "RestartTriggered"]
    if not restarts:
        assert (row["phase"], row["incarnation"], triggered) == ("Ready", 1, []), GO
        return
    assert (row["phase"], row["incarnation"]) == ("Restarting", 2), GO
    reason = (row.get("operation") or {}).get("reason") or ""
    assert "restarted after Ready" in reason, GO
    assert "OOMKilled" in reason, GO
    assert "137" in reason, GO
    assert len(triggered) == 1, GO


# -- RepairYieldsToTarget: whose pass rebuilds a row off the roll target (one planner pass) ---------------


def _moved_target(sim: Sim) -> str:
    """Moves the desired template (a new roll target) and returns the target's revision name."""
    sim.image = "vllm:v2"
    desired = sim.observe().render
    assert isinstance(desired, DesiredRevision)
    return desired.name


@pytest.mark.parametrize(
    ("case", "moved", "paused", "block", "terminal_pod", "repaired"),
    [
        pytest.param("on target", False, False, None, False, True, id="on the target is repaired"),
        pytest.param("paused", True, True, None, False, True, id="a paused Component keeps the repair"),
        pytest.param(
            "held", True, False, "Held", False, True, id="a target the RetryBlock holds keeps the repair"
        ),
        pytest.param(
            "backoff",
            True,
            False,
            "Backoff",
            False,
            False,
            id="a target in Backoff only paces the roll and yields",
        ),
        pytest.param(
            "no pod", True, False, None, False, False, id="a demoted row with no pod left yields to Create"
        ),
        pytest.param(
            "terminal",
            True,
            False,
            None,
            True,
            False,
            id="a demoted row whose only pod is terminal yields to Create",
        ),
    ],
)
def test_repair_yields_to_target(
    case: str, moved: bool, paused: bool, block: str | None, terminal_pod: bool, repaired: bool
) -> None:
    """Go: TestRepairYieldsToTarget (these entries, on the demoted single-pod row, the one restart
    trigger ours shares with Go's table: its Ready entries ask the same question of the same rule): a
    repair whose rebuild revision is not the roll target is left to the pass that rebuilds the row at
    the target (here Create) unless the roll cannot start (a pause, a Held target); a Backoff target
    only paces the roll. Ours: the Restart opens (incarnation 2) or the Create takes the row at the
    target."""
    sim = _demoted(keep_pod=terminal_pod)
    if terminal_pod:
        sim.pods[POD0].obj["status"]["phase"] = "Failed"
    target = _moved_target(sim) if moved else sim.rows()[0]["runningRevision"]
    if paused:
        sim.update_spec(paused=True)
    if block is not None:
        assert sim.replica is not None
        entry: dict[str, Any] = {"targetRevision": target, "state": block, "attemptsStarted": 1}
        if block == "Backoff":
            entry["nextRetryAt"] = format_time(sim.now + timedelta(minutes=10))
        sim.replica["status"]["retryBlocks"] = [entry]
    row, reason = _repair(sim)
    if repaired:
        assert reason == "pod count 0 below desired 1", GO
        assert (row["phase"], row["incarnation"]) == ("Restarting", 2), GO
    else:
        assert reason is None, GO
        assert row["incarnation"] == 1, GO
        if block is None:
            op = row.get("operation") or {}
            assert (op.get("type"), op.get("targetRevision")) == (R.OP_CREATE, target), GO


def test_repair_yields_to_target_open_restart_is_driven() -> None:
    """Go: TestRepairYieldsToTarget "an open Restart is driven whatever the target": a moved target
    leaves the Restart owning its row."""
    sim, _ = _restarting()
    _moved_target(sim)
    row, _ = _repair(sim)
    assert (row.get("operation") or {}).get("type") == R.OP_RESTART, GO


# -- the spent-repair ladder: a Restart parked at Failed (one planner pass in the simulated world) ------
#
# Go parks a Restart at Failed with its operation kept (its deadline, or a wedged pod); ours stamps such
# a Restart Failed with the operation cleared, so the row below is one another writer (OME's Go
# controller) left in the replica's status, read by ours as Go reads it (planner/restart.py).


def _restart_row(
    rev: str,
    started: datetime,
    deadline: datetime,
    *,
    phase: str,
    reason: str,
    incarnation: int = 2,
    step: str = "Drain",
    **more: Any,
) -> dict[str, Any]:
    """Row 0 journaling a Restart (``restart-0-1``) at ``rev``, as Go's fixtures seed one; ``more`` adds
    row fields (``podCount``, ``lastFailure``), and a ``retryCount`` goes on the operation."""
    op: dict[str, Any] = {
        "id": "restart-0-1",
        "type": "Restart",
        "step": step,
        "reason": reason,
        "targetRevision": rev,
        "startedAt": format_time(started),
        "deadline": format_time(deadline),
    }
    if "retryCount" in more:
        op["retryCount"] = more.pop("retryCount")
    row = {
        "index": 0,
        "incarnation": incarnation,
        "phase": phase,
        "runningRevision": rev,
        "targetRevision": rev,
        "operation": op,
    }
    return {**row, **more}


LADDER = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=10), 2.0)  # Go retryLadder(3, time.Minute)


def _spent(
    retries: int = 0,
    failed_ago: timedelta = timedelta(hours=1),
    ladder: RetryPolicy | None = LADDER,
    reason: str = "CrashLoopBackOff",
    pod: str = "wedged",
) -> tuple[Sim, Any]:
    """Go ``spentRepairFixtureOn``: a single-pod Instance under RecreateInstanceOnPodRestart whose
    Restart (``restart-0-1``, "pod lost", started 2 h ago, deadline 1 h ago, ``retries`` re-arms spent)
    is parked at Failed at incarnation 2 with the failure ``reason`` recorded ``failed_ago``; the
    operator's ``updateRetry`` ladder ``ladder``. ``pod`` is what holds the row's name: ``wedged`` (the
    rebuilt pod at incarnation 2 parked in ``reason``, Go ``wedgedRebuiltPod``), ``up`` (at incarnation
    2, ContainersReady, serving and PodReady, Go ``promotableRebuiltPod``), ``old`` (the same at
    incarnation 1, the set the attempt never drained), ``evicted`` (at incarnation 2, Failed/Evicted,
    Go ``evictedRebuiltPod``), ``terminating`` (the wedged pod with a deletionTimestamp and a
    finalizer) or ``none``."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30),
        stuck_pod_grace_period=timedelta(minutes=1),
        update_retry=ladder,
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": RECREATE}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3 * 3600)
    now = sim.now
    rev = sim.rows()[0]["runningRevision"]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = _restart_row(
        rev,
        now - timedelta(hours=2),
        now - timedelta(hours=1),
        phase="Failed",
        reason="pod lost",
        retryCount=retries,
        lastFailure={"podName": POD0, "reason": reason, "time": format_time(now - failed_ago)},
    )
    obj = sim.pods[POD0].obj
    status = obj["status"]
    obj["metadata"]["labels"]["ome.io/instance-incarnation"] = "1" if pod == "old" else "2"
    if pod in ("wedged", "terminating", "evicted"):
        obj["metadata"]["creationTimestamp"] = format_time(now - failed_ago - timedelta(minutes=1))
        sim.pods[POD0].behaviour = "pending"  # the kubelet never starts it (Go's fixture has no kubelet)
        status["phase"] = "Failed" if pod == "evicted" else "Pending"
        state = (
            {"terminated": {"exitCode": 137, "reason": "Error", "finishedAt": format_time(now)}}
            if pod == "evicted"
            else {"waiting": {"reason": reason}}
        )
        status["containerStatuses"] = [
            {"name": c.MAIN_CONTAINER, "ready": False, "restartCount": 3, "state": state}
        ]
        for cond in status["conditions"]:
            if cond["type"] in ("ContainersReady", "Ready", "ome.io/serving"):
                cond["status"] = "False"
        if pod == "evicted":
            status["reason"] = "Evicted"
            status["message"] = "The node was low on resource: memory."
        if pod == "terminating":
            obj["metadata"]["deletionTimestamp"] = format_time(now)
            obj["metadata"]["finalizers"] = ["example.com/termination"]
    elif pod == "none":
        del sim.pods[POD0]
    sim._endpoint_slices()  # the EndpointSlice controller catches up with the seeded pod
    return sim, driver


def _one(sim: Sim) -> tuple[dict[str, Any], Any]:
    """One planner pass: (the row it writes, else the row as stored; the plan)."""
    from omereconcile.actions import WriteStatus
    from omereconcile.planner import plan

    out = plan(sim.observe())
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    row = dict(written[-1].status["instanceStatuses"][0]) if written else dict(sim.rows()[0])
    return row, out


def _events(out: Any, reason: str) -> list[str]:
    return [a.message for a in out.actions if type(a).__name__ == "RecordEvent" and a.event_reason == reason]


def _untouched(row: dict[str, Any], reason: str, retries: int = 0) -> None:
    """Go "the parked repair untouched": Failed at incarnation 2, the spent operation kept."""
    op = row.get("operation") or {}
    assert (row["phase"], row["incarnation"], op.get("id"), op.get("retryCount", 0)) == (
        "Failed",
        2,
        "restart-0-1",
        retries,
    ), GO
    assert (row.get("lastFailure") or {}).get("reason") == reason, GO


def test_deadline_failed_row_resumes_its_promote() -> None:
    """Go: TestRestart_DeadlineFailedRowResumesItsPromote: the rebuilt pod came up after the deadline
    ended the attempt: the repair resumes its promote at the incarnation the pod carries (Ready at 2,
    the spent operation cleared), with no new attempt."""
    sim, _ = _spent(pod="up")
    row, out = _one(sim)
    assert (row["phase"], row["incarnation"], row.get("operation")) == ("Ready", 2, None), GO
    assert _events(out, "RestartTriggered") == [], GO
    assert _events(out, "RestartCompleted"), GO


def test_spent_repair_re_arms_when_the_ladder_is_due() -> None:
    """Go: TestDetectRestartTrigger_SpentRepairReArmsWhenTheLadderIsDue: two minutes after the failure,
    a one-minute ladder is due: a fresh Restart at incarnation 3 counting one re-arm, its reason naming
    the attempt and the failure that parked the last one, the wedged pod deleted by its drain; on the
    pass after, the open repair is driven with no second re-arm."""
    sim, driver = _spent(failed_ago=timedelta(minutes=2))
    row, out = _one(sim)
    op = row.get("operation") or {}
    assert (row["phase"], row["incarnation"], op.get("type"), op.get("retryCount")) == (
        "Restarting",
        3,
        R.OP_RESTART,
        1,
    ), GO
    assert "repair re-armed (attempt 1)" in op["reason"], GO
    assert "CrashLoopBackOff" in op["reason"], GO
    assert [a.name for a in _acts(out, "DeletePod")] == [POD0], GO
    driver.one_pass()
    sim.advance(0.5)
    after, out2 = _one(sim)
    assert (after["incarnation"], (after.get("operation") or {}).get("retryCount")) == (3, 1), GO
    assert _events(out2, "RestartTriggered") == [], GO


@pytest.mark.parametrize(
    ("retries", "failed_ago", "wait"),
    [
        pytest.param(
            0, timedelta(seconds=20), 40, id="TestDetectRestartTrigger_SpentRepairWaitsForTheLadder"
        ),
        pytest.param(1, timedelta(seconds=90), 30, id="TestDetectRestartTrigger_SpentRepairLadderGrows"),
    ],
)
def test_spent_repair_waits_for_the_ladder(retries: int, failed_ago: timedelta, wait: int) -> None:
    """Go: TestDetectRestartTrigger_SpentRepairWaitsForTheLadder (20 s into the 1 m first rung: 40 s
    left) and …SpentRepairLadderGrows (a second re-arm waits out the 2 m second rung, 90 s in: 30 s
    left): the repair stays parked and the pass is told when to come back."""
    sim, _ = _spent(retries=retries, failed_ago=failed_ago)
    row, out = _one(sim)
    _untouched(row, "CrashLoopBackOff", retries)
    assert out.requeue_after == pytest.approx(wait, abs=1), GO


@pytest.mark.parametrize(
    ("retries", "ladder", "held"),
    [
        pytest.param(0, None, False, id="TestDetectRestartTrigger_SpentRepairWithoutALadderStaysParked"),
        pytest.param(3, LADDER, False, id="TestDetectRestartTrigger_SpentRepairStopsAtMaxAttempts"),
        pytest.param(0, LADDER, True, id="TestDetectRestartTrigger_SpentRepairHeldRevisionDeniesTheReArm"),
    ],
)
def test_spent_repair_stays_parked(retries: int, ladder: RetryPolicy | None, held: bool) -> None:
    """Go: …SpentRepairWithoutALadderStaysParked (no ladder: the park stays, no wake-up),
    …SpentRepairStopsAtMaxAttempts (three re-arms spent of three: nothing more, no wake-up) and
    …SpentRepairHeldRevisionDeniesTheReArm (a Held block on the revision the repair rebuilds denies the
    re-arm, as every rebuild of it): the parked repair untouched, its wedged pod left, an hour after
    the failure."""
    sim, _ = _spent(retries=retries, ladder=ladder)
    if held:
        assert sim.replica is not None
        rev = sim.rows()[0]["runningRevision"]
        sim.replica["status"]["retryBlocks"] = [
            {"targetRevision": rev, "state": "Held", "attemptsStarted": 3}
        ]
    row, out = _one(sim)
    _untouched(row, "CrashLoopBackOff", retries)
    assert _acts(out, "DeletePod") == [], GO
    assert out.requeue_after is None, GO


def test_spent_repair_old_incarnation_set_re_arms() -> None:
    """Go: TestDetectRestartTrigger_SpentRepairOldIncarnationSetReArms: the row's name is held by the
    incarnation the attempt never drained, healthy and serving: not a set that came up, so it is
    rebuilt on the ladder (a re-arm), not resumed."""
    sim, _ = _spent(pod="old")
    row, _ = _one(sim)
    assert (row["phase"], row["incarnation"]) == ("Restarting", 3), GO
    assert "repair re-armed" in (row.get("operation") or {}).get("reason", ""), GO


CLOSE_CASES = [
    pytest.param("CrashLoopBackOff", 0, LADDER, id="crash loop/ladder configured"),
    pytest.param("CrashLoopBackOff", 0, None, id="crash loop/no ladder"),
    pytest.param("CrashLoopBackOff", 3, LADDER, id="crash loop/ladder spent"),
    pytest.param("ImagePullBackOff", 0, LADDER, id="kubelet-retried cause/ladder configured"),
    pytest.param("CreateContainerConfigError", 0, None, id="kubelet-retried cause/no ladder"),
]


def _assert_closed(sim: Sim, driver: Any, reason: str) -> Any:
    """Go ``assertSpentRepairClosed``: the close fires with no wake-up, clears the spent operation and
    keeps Failed, incarnation 2 and the failure record; on the pass after, the restart pass has nothing
    to decide (ours: the Create pass takes the fresh start)."""
    row, out = _one(sim)
    closed = _events(out, "RepairClosed")
    assert len(closed) == 1, GO
    assert "closed" in closed[0], GO
    assert (row["phase"], row.get("operation"), row["incarnation"]) == ("Failed", None, 2), GO
    assert (row.get("lastFailure") or {}).get("reason") == reason, GO
    assert out.requeue_after in (None, 0.0), GO
    driver.one_pass()
    after, out2 = _one(sim)
    assert (after.get("operation") or {}).get("type") != R.OP_RESTART, GO
    assert _events(out2, "RestartTriggered") == [], GO
    return out


@pytest.mark.parametrize(("reason", "retries", "ladder"), CLOSE_CASES)
def test_spent_repair_with_no_pods_closes(reason: str, retries: int, ladder: RetryPolicy | None) -> None:
    """Go: TestDetectRestartTrigger_SpentRepairWithNoPodsCloses (each subtest): a parked repair with no
    pod left has nothing to resume or re-arm: it closes, whatever parked it and whether or not a ladder
    is configured; the Create pass rebuilds the row as a fresh start."""
    sim, driver = _spent(retries=retries, ladder=ladder, reason=reason, pod="none")
    _assert_closed(sim, driver, reason)


@pytest.mark.parametrize(("reason", "retries", "ladder"), CLOSE_CASES)
def test_spent_repair_with_only_a_terminal_pod_closes(
    reason: str, retries: int, ladder: RetryPolicy | None
) -> None:
    """Go: TestDetectRestartTrigger_SpentRepairWithOnlyATerminalPodCloses (each subtest): the only pod
    was evicted after the park: no live pod, so the repair closes, and the dead occupant is left for
    the Create pass's recycle (not deleted by the close)."""
    sim, driver = _spent(retries=retries, ladder=ladder, reason=reason, pod="evicted")
    out = _assert_closed(sim, driver, reason)
    assert _acts(out, "DeletePod") == [], GO


def test_spent_repair_with_a_live_pod_a_set_that_came_up_resumes() -> None:
    """Go: TestDetectRestartTrigger_SpentRepairWithALivePodIsNotClosed "a set that came up resumes"."""
    sim, _ = _spent(pod="up")
    row, out = _one(sim)
    assert (row["phase"], row["incarnation"], row.get("operation")) == ("Ready", 2, None), GO
    assert _events(out, "RepairClosed") == [], GO


def test_spent_repair_with_a_live_pod_a_wedged_set_re_arms() -> None:
    """Go: …SpentRepairWithALivePodIsNotClosed "a wedged set re-arms on the ladder"."""
    sim, _ = _spent(failed_ago=timedelta(minutes=2))
    row, out = _one(sim)
    assert "repair re-armed" in (row.get("operation") or {}).get("reason", ""), GO
    assert _events(out, "RepairClosed") == [], GO


def test_spent_repair_with_a_live_pod_a_terminating_pod_holds_its_name() -> None:
    """Go: …SpentRepairWithALivePodIsNotClosed "a terminating pod holds its name": neither the close
    nor a re-arm is decided while the pod still terminates, and no wake-up is owed (the pod leaving is
    the next event)."""
    sim, _ = _spent(pod="terminating")
    row, out = _one(sim)
    _untouched(row, "CrashLoopBackOff")
    assert out.requeue_after is None, GO


KUBELET_RETRIED = ["CreateContainerConfigError", "ErrImagePull", "ImagePullBackOff", "InvalidImageName"]


@pytest.mark.parametrize("failed_ago", [timedelta(minutes=2), timedelta(hours=1)], ids=["2m0s", "1h0m0s"])
@pytest.mark.parametrize("reason", KUBELET_RETRIED)
def test_spent_repair_on_a_kubelet_retried_cause_owes_no_re_arm(reason: str, failed_ago: timedelta) -> None:
    """Go: TestDetectRestartTrigger_SpentRepairOnAKubeletRetriedCauseOwesNoReArm (each subtest): a
    repair parked on a cause the kubelet retries in place owes no re-arm, past the ladder's first delay
    and past its whole span alike: the row stays Failed with its reason, no wake-up, no Restarting
    stamp, and the wedged pod stays for the kubelet to retry."""
    sim, _ = _spent(failed_ago=failed_ago, reason=reason)
    row, out = _one(sim)
    _untouched(row, reason)
    assert out.requeue_after is None, GO
    assert _acts(out, "DeletePod") == [], GO


def _spent_row(reason: str, retries: int = 0, failure: bool = True) -> R.Row:
    """Go's ``parked``/``spent`` rows of the two predicate tests."""
    op = replace(
        _op(R.OP_RESTART, R.STEP_DRAIN),
        id="restart-0-1",
        started_at=NOW - timedelta(hours=2),
        last_progress_at=NOW - timedelta(minutes=90),
        retry_count=retries,
    )
    record = {"podName": POD0, "reason": reason, "time": format_time(NOW - timedelta(hours=1))}
    return R.Row(
        index=0, incarnation=2, phase=R.FAILED, operation=op, last_failure=record if failure else None
    )


def _ladder_ctx() -> Ctx:
    ctx = _ctx()
    settings = replace(ctx.world.settings, update_retry=LADDER)
    return replace(ctx, world=replace(ctx.world, settings=settings))


def test_repair_retry_at_owes_no_re_arm_to_a_kubelet_retried_cause() -> None:
    """Go: TestRepairRetryAt_OwesNoReArmToAKubeletRetriedCause: no re-arm is owed to a cause the
    kubelet retries in place; every other parked cause (and an empty one) is owed one at the ladder's
    first delay after the recorded failure; a park that recorded no failure is measured from the
    operation's last progress."""
    from omereconcile.planner.restart import repair_retry_at

    ctx = _ladder_ctx()
    for reason in KUBELET_RETRIED:
        assert repair_retry_at(ctx, _spent_row(reason)) is None, GO
    for reason in ["CrashLoopBackOff", "RunContainerError", "CreateContainerError", "DeadlineExceeded", ""]:
        assert repair_retry_at(ctx, _spent_row(reason)) == NOW - timedelta(hours=1) + timedelta(minutes=1), GO
    bare = _spent_row("CrashLoopBackOff", failure=False)
    assert repair_retry_at(ctx, bare) == NOW - timedelta(minutes=90) + timedelta(minutes=1), GO


def test_repair_retries_exhausted_skips_a_kubelet_retried_cause() -> None:
    """Go: TestRepairRetriesExhausted_SkipsAKubeletRetriedCause: a ladder spent (3 of 3) on a cause the
    kubelet retries in place is not read as exhausted; on CrashLoopBackOff it is."""
    from omereconcile.planner.restart import repair_retries_exhausted

    ctx = _ladder_ctx()
    for reason in KUBELET_RETRIED:
        assert not repair_retries_exhausted(ctx, _spent_row(reason, retries=3)), GO
    assert repair_retries_exhausted(ctx, _spent_row("CrashLoopBackOff", retries=3)), GO


def test_open_repair_on_a_kubelet_retried_cause_is_driven_on() -> None:
    """Go: TestDetectRestartTrigger_OpenRepairOnAKubeletRetriedCauseIsDrivenOn: a re-arm already in
    flight (Restarting, one re-arm counted, its failure CreateContainerConfigError) is driven on by the
    Restart's own steps: no second re-arm, no new incarnation, no RestartTriggered. As Go's call, with
    no pod: the Restart creates the pod at its incarnation."""
    sim, _ = _spent(
        retries=1, failed_ago=timedelta(minutes=1), reason="CreateContainerConfigError", pod="none"
    )
    sim.rows()[0]["phase"] = "Restarting"
    sim.rows()[0]["operation"]["deadline"] = format_time(sim.now + timedelta(minutes=30))
    row, out = _one(sim)
    op = row.get("operation") or {}
    assert (row["incarnation"], op.get("id"), op.get("retryCount")) == (2, "restart-0-1", 1), GO
    assert _events(out, "RestartTriggered") == [], GO
    created = _acts(out, "CreatePod")
    assert [a.pod["metadata"]["labels"]["ome.io/instance-incarnation"] for a in created] == ["2"], GO


@pytest.mark.parametrize("ladder", [LADDER, None], ids=["ladder", "no ladder"])
def test_kubelet_retried_cause_cleared_resumes_the_promote(ladder: RetryPolicy | None) -> None:
    """Go: TestRestart_KubeletRetriedCauseClearedResumesThePromote (its two ladders, one Go case): once
    the pod the kubelet retried in place comes up, the repair parked on ImagePullBackOff resumes its
    promote at incarnation 2, with no re-arm between, whether or not a ladder is configured."""
    sim, _ = _spent(reason="ImagePullBackOff", ladder=ladder, pod="up")
    row, out = _one(sim)
    assert (row["phase"], row["incarnation"], row.get("operation")) == ("Ready", 2, None), GO
    assert _events(out, "RestartTriggered") == [], GO


# -- RepairYieldsToTarget: the entries read on a Ready row, a Failed gang and a superseded Create -----


def test_repair_yields_to_target_ready_off_the_target_yields() -> None:
    """Go: TestRepairYieldsToTarget "Ready off the target yields": a Ready single-pod row whose pod is
    gone (Go's pod-count trigger) while the roll target moved is left to the update pass, which
    rebuilds it at the target: no Restart at the old revision, an Update at the target instead."""
    sim, _ = _ready_single()
    del sim.pods[POD0]
    target = _moved_target(sim)
    row, out = _one(sim)
    op = row.get("operation") or {}
    assert (op.get("type"), op.get("targetRevision"), row["incarnation"]) == (R.OP_UPDATE, target, 1), GO
    assert _events(out, "RestartTriggered") == [], GO


def _ready_gang() -> Sim:
    from omereconcile.simulate.driver import Driver, converged

    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)), workers=1)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": RECREATE}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim


WORKER0 = "llama-pool-engine-0-worker-0"


def test_repair_yields_to_target_failed_off_the_target_yields() -> None:
    """Go: TestRepairYieldsToTarget "Failed off the target yields": a Failed gang that lost a member
    (its leader survives; Go's lost-member trigger) while the roll target moved is rebuilt at the
    target, not repaired at the revision it ran: no Restart, the row's new attempt pinned to the target.
    (Go's rebuilding pass is the update pass, ours too: ``rollout._failed_row_rolls``.)"""
    sim = _ready_gang()
    sim.rows()[0]["phase"] = "Failed"
    del sim.pods[WORKER0]
    target = _moved_target(sim)
    row, out = _one(sim)
    assert ((row.get("operation") or {}).get("targetRevision"), row["incarnation"]) == (target, 1), GO
    assert _events(out, "RestartTriggered") == [], GO


def test_repair_yields_to_target_superseded_first_materialization_yields_to_its_retirement() -> None:
    """Go: TestRepairYieldsToTarget "a superseded first materialization yields to its retirement": a
    gang's first Create, committed at CreatePods on the old revision, lost a member (its leader
    survives; Go's lost-member trigger) while the roll target moved: the Create pass retires the
    attempt for one at the target (``CreateAttemptSuperseded``) instead of a Restart rebuilding the
    superseded revision. (Unmoved, the same row is rebuilt whole by a Restart: the control.)"""
    for moved in (False, True):
        sim = _ready_gang()
        running = sim.rows()[0]["runningRevision"]
        assert sim.replica is not None
        sim.replica["status"]["instanceStatuses"][0] = {
            "index": 0,
            "incarnation": 1,
            "phase": "Creating",
            "podCount": 2,
            "operation": {
                "id": "create-0-1",
                "type": "Create",
                "step": "CreatePods",
                "targetRevision": running,
                "startedAt": format_time(sim.now),
                "deadline": format_time(sim.now + timedelta(hours=1)),
            },
        }
        del sim.pods[WORKER0]
        target = _moved_target(sim) if moved else running
        row, out = _one(sim)
        op = row.get("operation") or {}
        if not moved:
            assert (op.get("type"), row["incarnation"]) == (R.OP_RESTART, 2), GO
            continue
        assert (op.get("type"), op.get("targetRevision"), row["incarnation"]) == (R.OP_CREATE, target, 1), GO
        assert _events(out, "CreateAttemptSuperseded"), GO
        assert _events(out, "RestartTriggered") == [], GO


# -- the held crash loop: a crash of a promoted single-pod set on a revision whose ladder holds --------

CRASH_WINDOW = timedelta(seconds=90)  # Go crashLoopWindow: the stuck-pod grace, no minReadySeconds
EPISODE_ROLL_XFAIL = (
    "known difference: Go's RepairYieldsToTarget never yields a row owed a crash-loop episode "
    "(readCrashLoopEpisode, ops/restart.go newest stored) and its restart pass unparks a Failed park whose "
    "set serves again (status.UnparkServing); ours' roll plans the Failed row off the corrected target "
    "(rollout.plan_instances, an Update) before the restart pass reads the episode, so the row is rebuilt "
    "at the target instead of returned to Ready. Whether Go's update pass takes the unparked row later in "
    "the same reconcile was not read"
)
CRASH_NOTE = "crash loop"


def _held_crash_loop(phase: str, serving: bool, ready_for: timedelta, held: bool = True) -> tuple[Sim, Any]:
    """Go ``newHeldCrashLoop`` and ``input``: an operation-free single-pod row (``phase``) on its
    revision, Ready since an hour ago, remembering its set's crash 20 minutes after that (Error, exit 1,
    "back-off restarting failed container"); its pod back up and serving (PodReady for ``ready_for``)
    or parked in CrashLoopBackOff; the stuck-pod grace 90 s; ``held``: the running revision's ladder
    Held after three attempts, the crash counted on it."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=CRASH_WINDOW, update_retry=LADDER
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": RECREATE}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(2 * 3600)
    now = sim.now
    ready_since = now - timedelta(hours=1)
    crashed_at = ready_since + timedelta(minutes=20)
    rev = sim.rows()[0]["runningRevision"]
    crashed = {
        "reason": "Error",
        "exitCode": 1,
        "startedAt": format_time(ready_since + timedelta(minutes=5)),
        "finishedAt": format_time(crashed_at),
    }
    obj = sim.pods[POD0].obj
    status = obj["status"]
    sim.pods[POD0].behaviour = "pending"
    if serving:
        status["containerStatuses"] = [
            {
                "name": c.MAIN_CONTAINER,
                "ready": True,
                "restartCount": 1,
                "state": {"running": {"startedAt": format_time(crashed_at + timedelta(minutes=1))}},
                "lastState": {"terminated": crashed},
            }
        ]
        for cond in status["conditions"]:
            if cond["type"] in ("ContainersReady", "Ready", "ome.io/serving"):
                cond["status"] = "True"
                cond["lastTransitionTime"] = format_time(now - ready_for)
    else:
        status["containerStatuses"] = [
            {
                "name": c.MAIN_CONTAINER,
                "ready": False,
                "restartCount": 2,
                "state": {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": "back-off restarting failed container",
                    }
                },
                "lastState": {"terminated": crashed},
            }
        ]
        for cond in status["conditions"]:
            if cond["type"] in ("ContainersReady", "Ready"):
                cond["status"] = "False"
                cond["lastTransitionTime"] = format_time(now - timedelta(minutes=1))
    assert sim.replica is not None
    row = sim.rows()[0]
    row.update(
        phase=phase,
        readySince=format_time(ready_since),
        lastFailure={
            "podName": POD0,
            "containerName": c.MAIN_CONTAINER,
            "reason": "Error",
            "exitCode": 1,
            "message": "back-off restarting failed container",
            "time": format_time(crashed_at),
        },
    )
    row.pop("operation", None)
    if held:
        sim.replica["status"]["retryBlocks"] = [
            {
                "targetRevision": rev,
                "state": "Held",
                "attemptsStarted": 3,
                "firstFailureAt": format_time(ready_since + timedelta(minutes=10)),
                "lastFailureAt": format_time(crashed_at),
                "reason": "Error",
            }
        ]
    sim._endpoint_slices()
    return sim, driver


def _names_crash_loop(row: dict[str, Any]) -> bool:
    return CRASH_NOTE in str((row.get("lastFailure") or {}).get("message") or "")


def test_held_ladder_keeps_a_serving_set_ready_and_names_the_loop() -> None:
    """Go: TestRestart_HeldLadderKeepsAServingSetReadyAndNamesTheLoop: a held ladder parks nothing a
    serving set sits on: the row stays Ready naming the crash loop, readySince kept, no warning."""
    sim, _ = _held_crash_loop("Ready", serving=True, ready_for=timedelta(seconds=30))
    row, out = _one(sim)
    assert (row["phase"], row.get("operation")) == ("Ready", None), GO
    assert _names_crash_loop(row), GO
    assert _events(out, "InstanceFailed") == [], GO


def test_held_ladder_parks_the_set_once_it_leaves_serving() -> None:
    """Go: TestRestart_HeldLadderParksTheSetOnceItLeavesServing: once the set is out of serving the
    hold parks the row: Failed, no operation, the crashed pod recorded, one InstanceFailed warning
    naming the hold ("held after 3 failed attempts")."""
    sim, _ = _held_crash_loop("Ready", serving=False, ready_for=timedelta(0))
    row, out = _one(sim)
    assert (row["phase"], row.get("operation")) == ("Failed", None), GO
    assert (row.get("lastFailure") or {}).get("podName") == POD0, GO
    warned = _events(out, "InstanceFailed")
    assert len(warned) == 1, GO
    assert "held after 3 failed attempts" in warned[0], GO


@pytest.mark.parametrize(
    ("held", "named"),
    [
        pytest.param(True, True, id="under the held ladder, naming the loop"),
        pytest.param(False, False, id="after the hold is released, as plain Ready"),
    ],
)
def test_crash_loop_park_returns_to_ready_while_its_set_serves(held: bool, named: bool) -> None:
    """Go: TestRestart_CrashLoopParkReturnsToReadyWhileItsSetServes (its two serving subtests): a park
    whose only pod is Ready and serving returns to Ready with no operation, readySince and the failure
    record's time kept, no warning; it names the crash loop under the held ladder, not after a
    release."""
    sim, _ = _held_crash_loop("Failed", serving=True, ready_for=timedelta(seconds=30), held=held)
    before = sim.rows()[0]
    row, out = _one(sim)
    assert (row["phase"], row.get("operation")) == ("Ready", None), GO
    assert _names_crash_loop(row) == named, GO
    assert row.get("readySince") == before["readySince"], GO
    assert (row.get("lastFailure") or {}).get("time") == before["lastFailure"]["time"], GO
    assert _events(out, "InstanceFailed") == [], GO


def test_crash_loop_park_while_the_pod_is_down_stays_parked() -> None:
    """Go: …CrashLoopParkReturnsToReadyWhileItsSetServes "while the pod is down it stays parked": a
    park whose pod is down in CrashLoopBackOff under the held ladder stays Failed (ours: the Held block
    denies the rebuild too)."""
    sim, _ = _held_crash_loop("Failed", serving=False, ready_for=timedelta(0))
    row, out = _one(sim)
    assert row["phase"] == "Failed", GO
    assert row.get("operation") is None, GO
    assert _events(out, "RestartTriggered") == [], GO


@pytest.mark.parametrize(
    ("held", "advance"),
    [
        pytest.param(True, CRASH_WINDOW, id="the set holds Ready for the window"),
        pytest.param(False, timedelta(0), id="the hold is released"),
    ],
)
def test_proven_set_clears_the_crash_loop_note(held: bool, advance: timedelta) -> None:
    """Go: TestRestart_ProvenSetClearsTheCrashLoopNote: once named, the note leaves on its own: a set
    that holds Ready for the proven window, or a released hold, leaves plain Ready with the kubelet's
    own message kept as history, no warning."""
    sim, driver = _held_crash_loop("Ready", serving=True, ready_for=timedelta(seconds=30))
    row, _ = _one(sim)
    assert _names_crash_loop(row), GO
    driver.one_pass()
    # The clock alone moves, as Go's test reads the same pod later: the simulated kubelet's tick would
    # rewrite the seeded container statuses (the pod's behaviour is "pending").
    sim.now += advance
    if not held:
        assert sim.replica is not None
        sim.replica["status"]["retryBlocks"] = []
    row, out = _one(sim)
    assert (row["phase"], _names_crash_loop(row)) == ("Ready", False), GO
    assert (row.get("lastFailure") or {}).get("message") == "back-off restarting failed container", GO
    assert _events(out, "InstanceFailed") == [], GO


def test_spent_gang_repair_short_of_a_member_re_arms_at_once() -> None:
    """Go: the lost-member exit of a spent repair (``ops/restart.go`` @ 58a57f25
    ``spentRepairTrigger``: "a gang short of a member re-arms through the lost-member trigger";
    ``instanceLostGangMember``'s spent-Restart exemption), pinned in the simulated world beside the
    detector entry "spent restart attempt at failed re-arms" (not a Go case of its own): a gang's
    Restart parked at Failed whose worker is gone while its leader stands is rebuilt whole at once, at
    the next incarnation, the re-arm counted, whatever the ladder's delay."""
    sim = _ready_gang()
    rev = sim.rows()[0]["runningRevision"]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = _restart_row(
        rev,
        sim.now - timedelta(hours=2),
        sim.now - timedelta(hours=1),
        phase="Failed",
        reason="pod lost",
        incarnation=1,
        podCount=2,
        lastFailure={"podName": WORKER0, "reason": "CrashLoopBackOff", "time": format_time(sim.now)},
    )
    del sim.pods[WORKER0]
    row, out = _one(sim)
    op = row.get("operation") or {}
    assert (row["phase"], row["incarnation"], op.get("retryCount")) == ("Restarting", 2, 1), GO
    assert op.get("reason") == "gang member lost: 1 of 2 pods present", GO
    assert len(_events(out, "RestartTriggered")) == 1, GO


@pytest.mark.parametrize("paused", [False, True], ids=["roll open", "paused"])
def test_spent_repair_off_an_open_roll_target_is_left_to_the_roll(paused: bool) -> None:
    """Go: the restart pass's selection (``plan_decision.go`` ``restartTrigger``: a trigger is dropped
    when ``RepairYieldsToTarget``), asked of a spent repair as ``TestRepairYieldsToTarget`` "Failed off
    the target yields" asks it of a Failed row (not a Go case of its own): a Restart parked at Failed,
    its ladder due, while the roll target moved, is rebuilt at the target by the update trigger, which
    reads Failed as Ready (Go ``ops/update.go`` ``evaluateUpdateTriggerFast``, the newest of six; ours
    ``rollout._failed_row_rolls``: an Update, where ours used Create's recycle before), not re-armed at
    the revision it ran. Under a pause the roll cannot start, so the repair keeps its exits: the re-arm
    at incarnation 3."""
    sim, _ = _spent(failed_ago=timedelta(minutes=2))
    target = _moved_target(sim)
    if paused:
        sim.update_spec(paused=True)
    row, out = _one(sim)
    op = row.get("operation") or {}
    if paused:
        assert (row["phase"], row["incarnation"], op.get("type")) == ("Restarting", 3, R.OP_RESTART), GO
        return
    assert (op.get("type"), op.get("targetRevision"), row["incarnation"]) == (R.OP_UPDATE, target, 2), GO
    assert _events(out, "RestartTriggered") == [], GO


def test_spent_gang_repair_whose_set_came_up_resumes() -> None:
    """Go: ``RepairResumes`` for a gang (``ops/restart.go`` @ 58a57f25: "complete, every pod at the
    row's incarnation, and every pod ContainersReady"; not a Go case of its own, the gang form of
    ``DeadlineFailedRowResumesItsPromote``): a gang's Restart parked at Failed whose leader and worker
    both came up at incarnation 2 is promoted there, the spent operation cleared, RestartCompleted."""
    sim = _ready_gang()
    rev = sim.rows()[0]["runningRevision"]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = _restart_row(
        rev,
        sim.now - timedelta(hours=2),
        sim.now - timedelta(hours=1),
        phase="Failed",
        reason="pod lost",
        podCount=2,
        lastFailure={
            "podName": WORKER0,
            "reason": "CrashLoopBackOff",
            "time": format_time(sim.now - timedelta(hours=1)),
        },
    )
    for pod in sim.pods.values():
        pod.obj["metadata"]["labels"]["ome.io/instance-incarnation"] = "2"
    row, out = _one(sim)
    assert (row["phase"], row["incarnation"], row.get("operation")) == ("Ready", 2, None), GO
    assert len(_events(out, "RestartCompleted")) == 1, GO
    assert _events(out, "RestartTriggered") == [], GO


# -- the newest stored restart_test.go (168,703 characters): the cases it adds to 58a57f25 -------------

GO_NEWEST = (
    "ome-projects/ome pkg/controller/v1beta1/workload/ops/restart_test.go (newest stored, 168,703 chars)"
)


@pytest.mark.parametrize(
    ("partition", "follows"),
    [pytest.param(1, False, id="held by the step"), pytest.param(0, True, id="released by the step")],
)
def test_restart_rebuild_with_no_pod_yet_keeps_the_revision_the_canary_step_holds(
    partition: int, follows: bool
) -> None:
    """Go (newest): TestRestart_RebuildWithNoPodYetKeepsTheRevisionTheCanaryStepHolds: an open repair
    that has created no pod yet keeps the revision its row records while the step holds the Instance
    (ours: ``pacing.partition`` 1 keeps the lowest Instance on its revision), and follows the roll
    target once the step releases it (partition 0)."""
    from omereconcile.actions import WriteStatus
    from omereconcile.planner import plan

    sim, running, target = _open_rebuild(gang=False)
    assert sim.replica is not None
    sim.replica["spec"]["pacing"] = {"partition": partition}
    out = plan(sim.observe())
    want = target if follows else running
    created = _acts(out, "CreatePod")
    assert len(created) == 1, GO_NEWEST
    assert created[0].pod["metadata"]["labels"]["ome.io/revision-hash"] == want.rsplit("-", 1)[-1], GO_NEWEST
    row = next(a for a in out.actions if isinstance(a, WriteStatus)).status["instanceStatuses"][0]
    assert (row["phase"], row.get("runningRevision")) == ("Restarting", want), GO_NEWEST


def _unready_after_serving(policy: str, unready_for: timedelta, gang: bool = False, dark: str = "") -> Sim:
    """Go ``unreadyAfterServingInput`` (and the gang form): a Ready, operation-free row on its revision
    whose promoted pod (``dark``: that gang member) runs but stopped passing readiness ``unready_for``
    ago (Running, not ready, ContainersReady and Ready False since then; the serving gate stays True),
    under ``policy`` and a one-minute stuck-pod grace."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=timedelta(minutes=1)
    )
    sim = Sim(settings=settings, workers=1 if gang else 0)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": policy}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3 * 3600)
    since = format_time(sim.now - unready_for)
    for name, pod in sim.pods.items():
        if gang and f"-{dark}-" not in name:
            continue
        pod.behaviour = "pending"
        status = pod.obj["status"]
        for cs in status.get("containerStatuses") or []:
            cs["ready"] = False
        for cond in status["conditions"]:
            if cond["type"] in ("ContainersReady", "Ready"):
                cond["status"] = "False"
                cond["lastTransitionTime"] = since
    sim._endpoint_slices()
    return sim


def _nothing_opens(out: Any, row: dict[str, Any]) -> None:
    """Go ``requireNoRepairOpens``: no trigger, nothing opened on the row."""
    assert _events(out, "RestartTriggered") == [], GO_NEWEST
    assert (row["phase"], row.get("operation"), row["incarnation"]) == ("Ready", None, 1), GO_NEWEST
    assert _acts(out, "DeletePod") == [], GO_NEWEST


@pytest.mark.parametrize("policy", ["None", RECREATE])
def test_idle_row_unready_past_grace_is_dark_and_rebuilt_by_no_policy(policy: str) -> None:
    """Go (newest): TestDetectRestartTrigger_IdleRowUnreadyPastGraceIsDarkAndRebuiltByNoPolicy (both
    policies): a Ready, operation-free row whose pod runs but has failed readiness for two hours, past
    the grace, opens no repair under either policy (readiness is the runtime's own out-of-rotation
    signal; RecreateInstanceOnPodRestart answers a runner restart, which did not happen)."""
    sim = _unready_after_serving(policy, timedelta(hours=2))
    row, out = _one(sim)
    _nothing_opens(out, row)


@pytest.mark.parametrize("dark", ["leader", "worker"])
def test_idle_gang_member_unready_past_grace_opens_no_repair(dark: str) -> None:
    """Go (newest): TestDetectRestartTrigger_IdleGangMemberUnreadyPastGraceOpensNoRepair (leader,
    worker): a gang under RecreateInstanceOnPodRestart whose one member runs but has failed readiness
    past the grace beside a serving peer opens no repair."""
    sim = _unready_after_serving(RECREATE, timedelta(hours=2), gang=True, dark=dark)
    row, out = _one(sim)
    _nothing_opens(out, row)


@pytest.mark.parametrize("policy", ["None", RECREATE])
def test_unready_inside_grace_stays_silent(policy: str) -> None:
    """Go (newest): TestDetectRestartTrigger_UnreadyInsideGraceStaysSilent (both policies): a readiness
    failure 10 s old, inside the grace, opens no repair."""
    sim = _unready_after_serving(policy, timedelta(seconds=10))
    row, out = _one(sim)
    _nothing_opens(out, row)


LEADER0 = "llama-pool-engine-0-leader-0"
FAILED_GANG_MARK = pytest.mark.xfail(
    strict=True,
    reason=(
        "known difference: Go's lost-member trigger reads an operation-free Failed gang as committed and "
        "repairs a lost member by a Restart at the next incarnation (ops/restart.go instanceLostGangMember); "
        "ours' lost_gang_member reads it so too (since goG2), but ours' roll (planner/rollout.py) takes an "
        "operation-free Failed gang that serves nothing first and rebuilds it through Create's recycle at "
        "its incarnation (the whole set drained and recreated, no Restart)"
    ),
)


@pytest.mark.parametrize(
    ("leader", "worker", "own", "paused", "selected"),
    [
        pytest.param("alive", "alive", False, False, False, id="both leftovers alive"),
        pytest.param(
            "gone", "terminating", False, False, False, id="the leader gone and the worker terminating"
        ),
        pytest.param("gone", "alive", False, False, False, id="the leader gone and the worker still alive"),
        pytest.param("gone", "gone", False, False, False, id="both leftovers gone"),
        pytest.param(
            "gone",
            "alive",
            True,
            False,
            True,
            id="a member of the row's own set lost",
            marks=FAILED_GANG_MARK,
        ),
        pytest.param(
            "gone", "alive", False, True, True, id="paused, the cleanup withheld", marks=FAILED_GANG_MARK
        ),
    ],
)
def test_repair_yields_to_target_leaves_a_superseded_gang_set_to_its_cleanup(
    leader: str, worker: str, own: bool, paused: bool, selected: bool
) -> None:
    """Go (newest): TestRepairYieldsToTarget_LeavesASupersededGangSetToItsCleanup (each subtest): a
    Failed gang at incarnation 2 running the roll target (the roll pinned back to it), its last failure
    the leader's ErrImagePull, whose pods are a withdrawn revision's leftovers: while the cleanup's
    deletes land the lost-member reading opens no repair (the row is left to the passes that rebuild it
    at the target); a member lost from the row's own set is repaired (a Restart), and so is one under
    a pause, which withholds the cleanup."""
    sim = _ready_gang()
    assert sim.replica is not None
    row0 = sim.rows()[0]
    row0.update(
        incarnation=2,
        phase="Failed",
        lastFailure={
            "podName": LEADER0,
            "containerName": c.MAIN_CONTAINER,
            "reason": "ErrImagePull",
            "time": format_time(sim.now),
        },
    )
    row0.pop("operation", None)
    for name, state in ((LEADER0, leader), (WORKER0, worker)):
        if state == "gone":
            del sim.pods[name]
            continue
        labels = sim.pods[name].obj["metadata"]["labels"]
        labels["ome.io/instance-incarnation"] = "2"
        if not own:
            labels["ome.io/revision-hash"] = "withdrawn"
        if state == "terminating":
            sim.pods[name].obj["metadata"]["deletionTimestamp"] = format_time(sim.now)
    if paused:
        sim.update_spec(paused=True)
    sim._endpoint_slices()
    row, out = _one(sim)
    restarted = bool(_events(out, "RestartTriggered"))
    assert restarted == selected, GO_NEWEST
    if selected:
        assert (row["phase"], row["incarnation"]) == ("Restarting", 3), GO_NEWEST
        assert "gang member lost" in (row.get("operation") or {}).get("reason", ""), GO_NEWEST


@pytest.mark.parametrize(
    ("serving", "yields"),
    [
        pytest.param(
            True,
            False,
            id="a park whose set serves again is unparked under the corrected target",
            marks=pytest.mark.xfail(strict=True, reason=EPISODE_ROLL_XFAIL),
        ),
        pytest.param(False, True, id="a park whose set is down is left to the roll"),
    ],
)
def test_repair_yields_to_target_crash_loop_episode_follows_its_set(serving: bool, yields: bool) -> None:
    """Go (newest): TestRepairYieldsToTarget_CrashLoopEpisodeFollowsItsSet: a crash-loop park (Failed,
    no operation, the crash remembered, the running revision's ladder Held) under a corrected roll
    target: a park whose set serves again is not yielded, the restart pass unparks it (Ready, no
    operation); a park whose set is down is left to the roll, which rebuilds it at the target (ours too,
    an Update: ``rollout._failed_row_rolls``) and opens no Restart."""
    sim, _ = _held_crash_loop("Failed", serving=serving, ready_for=timedelta(seconds=30))
    target = _moved_target(sim)
    row, out = _one(sim)
    assert _events(out, "RestartTriggered") == [], GO_NEWEST
    if yields:
        assert ((row.get("operation") or {}).get("targetRevision"), row["incarnation"]) == (target, 1), (
            GO_NEWEST
        )
        return
    assert (row["phase"], row.get("operation")) == ("Ready", None), GO_NEWEST


PUSHED_PREVIOUS = "llama-pool-engine-previous0"
PUSHED_LADDER = RetryPolicy(3, timedelta(seconds=20), timedelta(minutes=1), 2.0)


def _pushed_crash_loop(policy: str, dark_after_crash: bool = False, replicas: int = 1) -> Sim:
    """Go ``newPushedCrashLoop`` / ``newPushedUnreadyAfterCrash``: an operation-free Ready single-pod
    row on the update revision, Ready since a minute ago, the Component's current revision still the
    one before it; its only pod (created before Ready) crashed 20 s after Ready and sits in
    CrashLoopBackOff (``dark_after_crash``: ran again after a second crash and has been unready past
    the 90 s grace, the serving gate True); the ladder 3 attempts from 20 s, capped at 1 m.
    ``replicas``: that many such Instances, each pod crashed alike."""
    from omereconcile.simulate.driver import Driver, converged

    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30),
        stuck_pod_grace_period=CRASH_WINDOW,
        update_retry=PUSHED_LADDER,
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=replicas, lifecycle={"restartPolicy": policy}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    sim.advance(3600)
    now = sim.now
    ready_since = now - timedelta(minutes=1)
    crashed_at = ready_since + timedelta(seconds=20)
    if dark_after_crash:
        sim.advance(CRASH_WINDOW.total_seconds())
    for index in range(replicas):
        _crash_pushed_pod(
            sim, f"llama-pool-engine-{index}-default-0", ready_since, crashed_at, dark_after_crash
        )
        sim.rows()[index]["readySince"] = format_time(ready_since)
    assert sim.replica is not None
    sim.replica["status"]["currentRevision"] = PUSHED_PREVIOUS
    sim._endpoint_slices()
    return sim


def _crash_pushed_pod(sim: Sim, name: str, ready_since: datetime, crashed_at: datetime, dark: bool) -> None:
    """One pod of ``_pushed_crash_loop``, crashed as its docstring says."""
    dark_after_crash = dark
    pod = sim.pods[name]
    pod.behaviour = "pending"
    obj, status = pod.obj, pod.obj["status"]
    obj["metadata"]["creationTimestamp"] = format_time(ready_since - timedelta(minutes=5))
    terminated = {
        "reason": "Error",
        "exitCode": 1,
        "startedAt": obj["metadata"]["creationTimestamp"],
        "finishedAt": format_time(crashed_at),
    }
    state: dict[str, Any] = {
        "waiting": {"reason": "CrashLoopBackOff", "message": "back-off restarting failed container"}
    }
    down_since = crashed_at
    if dark_after_crash:
        terminated["startedAt"] = format_time(ready_since + timedelta(seconds=10))
        run_again = crashed_at + timedelta(seconds=5)
        state = {"running": {"startedAt": format_time(run_again)}}
        down_since = run_again
    status["phase"] = "Running"
    status["containerStatuses"] = [
        {
            "name": c.MAIN_CONTAINER,
            "ready": False,
            "restartCount": 2 if dark_after_crash else 1,
            "state": state,
            "lastState": {"terminated": terminated},
        }
    ]
    for cond in status["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "False"
            cond["lastTransitionTime"] = format_time(down_since)


@pytest.mark.parametrize(
    ("policy", "dark"),
    [
        pytest.param("None", False, id="TestRestart_PushedSinglePodCrashLoopIsTheLaddersNextAttempt/None"),
        pytest.param(
            RECREATE, False, id="TestRestart_PushedSinglePodCrashLoopIsTheLaddersNextAttempt/Recreate"
        ),
        pytest.param(RECREATE, True, id="TestRestart_PushedSetDarkAfterItsCrashIsTheLaddersWedge/Recreate"),
        pytest.param("None", True, id="TestRestart_PushedSetDarkAfterItsCrashIsTheLaddersWedge/None"),
    ],
)
def test_pushed_crash_is_counted_on_the_ladder_at_its_first_sighting(policy: str, dark: bool) -> None:
    """Go (newest): TestRestart_PushedSinglePodCrashLoopIsTheLaddersNextAttempt (both policies) and
    TestRestart_PushedSetDarkAfterItsCrashIsTheLaddersWedge (both subtests), their first pass: the
    crash is counted once and remembered, nothing opens (Ready, no operation, incarnation 1, the crashed
    pod on ``lastFailure``), and the pushed revision's block is Backoff after one attempt."""
    sim = _pushed_crash_loop(policy, dark_after_crash=dark)
    rev = sim.rows()[0]["runningRevision"]
    row, out = _one(sim)
    assert (row["phase"], row.get("operation"), row["incarnation"]) == ("Ready", None, 1), GO_NEWEST
    assert (row.get("lastFailure") or {}).get("podName") == POD0, GO_NEWEST
    written = [a for a in out.actions if type(a).__name__ == "WriteStatus"]
    blocks = (
        {b["targetRevision"]: b for b in (written[-1].status.get("retryBlocks") or [])} if written else {}
    )
    assert (blocks.get(rev) or {}).get("state") == "Backoff", GO_NEWEST
    assert (blocks.get(rev) or {}).get("attemptsStarted") == 1, GO_NEWEST


@pytest.mark.parametrize("policy", ["None", RECREATE])
def test_pushed_crash_rebuild_is_the_ladders_attempt_once_the_backoff_is_due(policy: str) -> None:
    """Go (newest) ``countCrashOnLadder`` and ``Restart`` (``status.RetryBlockAttemptStarted``), the pass
    after the first sighting of the pushed crash above (pinned here, not counted as a Go case; Go's
    ``TestRestart_PushedSinglePodCrashLoopIsTheLaddersNextAttempt`` asserts it for both policies): once
    the ladder's 20 s backoff is due, "the pushed pod is wedged on the revision the row runs: the
    rebuild must open" — under None as under RecreateInstanceOnPodRestart, the set is rebuilt at the
    next incarnation as the ladder's attempt (the block ``RetryInProgress``, the crash not charged
    again). The pod, created six minutes ago and parked in ``CrashLoopBackOff``, is past the 90 s grace
    (Go ``evidence.CrashLoopWedgedPodOn`` / ``PodWedgedPastGrace``, measured from creation), and the
    wedge is the first trigger Go's ``DetectRestartTriggerWithPods`` reads, so the rebuild is named by
    it (``WedgeReason``; Go's test does not assert the words). Before goG this pin read the wedge from
    the waiting episode's start and expected nothing rebuilt under None, and the runner's restart as
    the name."""
    from omereconcile.simulate.driver import Driver

    sim = _pushed_crash_loop(policy)
    rev = sim.rows()[0]["runningRevision"]
    Driver(sim).one_pass()
    sim.now += timedelta(seconds=21)  # the clock alone: the seeded container statuses stay as they are
    row, out = _one(sim)
    written = [a for a in out.actions if type(a).__name__ == "WriteStatus"]
    blocks = (
        {b["targetRevision"]: b for b in (written[-1].status.get("retryBlocks") or [])} if written else {}
    )
    assert ((row.get("operation") or {}).get("type"), row["incarnation"]) == (R.OP_RESTART, 2), GO_NEWEST
    assert (blocks.get(rev) or {}).get("state") == "RetryInProgress", GO_NEWEST
    assert (blocks.get(rev) or {}).get("attemptsStarted") == 1, GO_NEWEST
    (said,) = _events(out, "RestartTriggered")
    assert "wedged in CrashLoopBackOff past the stuck-pod grace" in said, GO_NEWEST


def test_one_runner_restart_that_does_not_loop_is_rebuilt_at_once_under_a_ladder() -> None:
    """Go (newest) ``readRunnerCrash`` / ``runnerLoops``: one restart of a runner after Ready, running
    again and never parked, on a set the ladder has no failure for, is not a crash; the policy's trigger
    rebuilds it at once, whatever ladder is configured (pinned here, not counted as a Go case)."""
    sim = _pushed_crash_loop(RECREATE)
    pod = sim.pods[POD0]
    status = pod.obj["status"]
    cs = status["containerStatuses"][0]
    started = pod.obj["metadata"]["creationTimestamp"]
    crashed_at = cs["lastState"]["terminated"]["finishedAt"]
    cs.update(ready=True, state={"running": {"startedAt": crashed_at}})
    cs["lastState"]["terminated"]["startedAt"] = started
    for cond in status["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "True"
    sim._endpoint_slices()
    row, out = _one(sim)
    assert ((row.get("operation") or {}).get("type"), row["incarnation"]) == (R.OP_RESTART, 2), GO_NEWEST
    assert _events(out, "RestartTriggered"), GO_NEWEST
    written = [a for a in out.actions if type(a).__name__ == "WriteStatus"]
    assert not (written[-1].status.get("retryBlocks") if written else None), GO_NEWEST


def test_the_ladder_opens_one_crash_rebuild_per_revision_in_a_pass() -> None:
    """Go (newest) ``RestartOpensLadderAttempt`` ("the ladder authorizes one attempt at a revision at a
    time, so the pass opens one such rebuild per revision and leaves the rest for the pass after") with
    ``readCrashLadder``'s gate (``anyInFlightAttemptAt``: a Restart rebuilding the revision), pinned here,
    not counted as a Go case: two single-pod Instances whose pods crashed alike on the pushed revision
    are both counted at their first sighting (one attempt: the second sighting is inside the wave the
    block's Backoff already records); once the backoff is due one is rebuilt as the ladder's attempt and
    the other waits while that attempt is in flight."""
    from omereconcile.simulate.driver import Driver

    sim = _pushed_crash_loop(RECREATE, replicas=2)
    Driver(sim).one_pass()
    rev = sim.rows()[0]["runningRevision"]
    assert sim.replica is not None
    (block,) = [b for b in sim.replica["status"]["retryBlocks"] if b["targetRevision"] == rev]
    assert (block["state"], block["attemptsStarted"]) == ("Backoff", 1), GO_NEWEST
    sim.now += timedelta(seconds=21)  # the clock alone: the seeded container statuses stay as they are
    out = Driver(sim).one_pass()
    phases = [r["phase"] for r in sim.rows()]
    assert sorted(phases) == ["Ready", "Restarting"], GO_NEWEST
    assert len(_events(out, "RestartTriggered")) == 1, GO_NEWEST
    sim.now += timedelta(seconds=5)
    Driver(sim).one_pass()
    assert sorted(r["phase"] for r in sim.rows()) == ["Ready", "Restarting"], GO_NEWEST


def test_a_set_rebuilt_after_a_failure_counts_its_first_restart_on_the_ladder() -> None:
    """Go (newest) ``runnerLoops``' ``rebuiltAfterFailure`` (``ops/restart.go``) with
    ``RebuiltAfterFailure`` (``ops/update.go``, the newest of 3 holding it), pinned here, not counted as
    a Go case: a set the row rebuilt right after a failure (the record, naming a container, predates
    Ready; the pod was created inside the proven window after it) whose runner restarts once after
    Ready is the revision crashing on set after set: its first restart is a crash, counted on the
    ladder (Backoff, one attempt) and remembered, nothing opened while the backoff runs. The same
    restart on a set with no such record is rebuilt at once (the test above)."""
    sim = _pushed_crash_loop(RECREATE)
    pod = sim.pods[POD0]
    status = pod.obj["status"]
    cs = status["containerStatuses"][0]
    row0 = sim.rows()[0]
    ready_since = datetime.fromisoformat(row0["readySince"].replace("Z", "+00:00"))
    failed_at = ready_since - timedelta(seconds=40)
    created = format_time(failed_at + timedelta(seconds=10))
    pod.obj["metadata"]["creationTimestamp"] = created
    cs.update(ready=True, state={"running": {"startedAt": cs["lastState"]["terminated"]["finishedAt"]}})
    cs["lastState"]["terminated"]["startedAt"] = created
    for cond in status["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "True"
    row0["lastFailure"] = {
        "podName": "llama-pool-engine-0-default-0",
        "containerName": c.MAIN_CONTAINER,
        "reason": "Error",
        "exitCode": 1,
        "time": format_time(failed_at),
    }
    sim._endpoint_slices()
    rev = row0["runningRevision"]
    row, out = _one(sim)
    assert (row["phase"], row.get("operation"), row["incarnation"]) == ("Ready", None, 1), GO_NEWEST
    assert _events(out, "RestartTriggered") == [], GO_NEWEST
    written = [a for a in out.actions if type(a).__name__ == "WriteStatus"]
    blocks = (
        {b["targetRevision"]: b for b in (written[-1].status.get("retryBlocks") or [])} if written else {}
    )
    assert ((blocks.get(rev) or {}).get("state"), (blocks.get(rev) or {}).get("attemptsStarted")) == (
        "Backoff",
        1,
    ), GO_NEWEST


def test_a_held_serving_row_still_sweeps_a_stray_pod() -> None:
    """Ours (no Go case): the crash ladder deciding an operation-free single-pod row leaves the idle
    pass's stray sweep in place: under a held ladder a serving row that names its crash loop still
    retires a pod of another ordinal that belongs to no step."""
    import copy

    from omereconcile.simulate.cluster import SimPod

    sim, _ = _held_crash_loop("Ready", serving=True, ready_for=timedelta(seconds=30))
    stray = copy.deepcopy(sim.pods[POD0].obj)
    stray["metadata"]["name"] = "llama-pool-engine-0-default-1"
    stray["metadata"]["uid"] = "stray-uid"
    stray["metadata"]["labels"]["ome.io/pod-ordinal"] = "1"
    sim.pods[stray["metadata"]["name"]] = SimPod(obj=stray, created=sim.now, behaviour="pending")
    row, out = _one(sim)
    assert _names_crash_loop(row)
    # The stray carries the serving gate, so its retirement starts by taking it out of rotation.
    retired = [a for a in out.actions if "llama-pool-engine-0-default-1" in repr(a)]
    assert retired, out.actions
    assert "belongs to no step" in repr(retired[0]), out.actions


def _set_serving(sim: Sim, serving: bool) -> None:
    """The seeded pod of ``_held_crash_loop`` up and serving again, or back down in CrashLoopBackOff,
    at the sim's clock (its container statuses and conditions rewritten by hand, as Go's test does)."""
    status = sim.pods[POD0].obj["status"]
    cs = status["containerStatuses"][0]
    if serving:
        cs.update(ready=True, state={"running": {"startedAt": format_time(sim.now)}})
    else:
        cs.update(
            ready=False,
            state={
                "waiting": {"reason": "CrashLoopBackOff", "message": "back-off restarting failed container"}
            },
        )
    for cond in status["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "True" if serving else "False"
            cond["lastTransitionTime"] = format_time(sim.now)
    sim._endpoint_slices()


def test_held_ladder_warns_once_per_pod_set() -> None:
    """Go (newest) ``countCrashOnLadder`` with ``status.Announce`` ("the park lands again on every crash
    of a set that serves between them; the warning is owed once per pod set"), pinned here, not
    counted as a Go case: a held ladder parks the row Failed with one InstanceFailed, the set serving
    again unparks it (promoting nothing: the Held block stays, ``status.UnparkServing``), and its next
    crash parks it again without a second warning."""
    sim, driver = _held_crash_loop("Ready", serving=False, ready_for=timedelta(0))
    warned = _events(driver.one_pass(), "InstanceFailed")
    assert (sim.rows()[0]["phase"], len(warned)) == ("Failed", 1), GO_NEWEST
    sim.now += timedelta(seconds=5)
    _set_serving(sim, True)
    driver.one_pass()
    assert sim.rows()[0]["phase"] == "Ready", GO_NEWEST
    assert sim.replica is not None
    assert [b["state"] for b in sim.replica["status"]["retryBlocks"]] == ["Held"], GO_NEWEST
    sim.now += timedelta(seconds=5)
    _set_serving(sim, False)
    again = _events(driver.one_pass(), "InstanceFailed")
    assert (sim.rows()[0]["phase"], again) == ("Failed", []), GO_NEWEST


def _restarting_at(running: str) -> R.Row:
    """Go ``restarting``: a ``Restarting`` row at ``running`` with its Restart at the ``Drain`` step."""
    return R.Row(
        index=0,
        incarnation=2,
        phase=R.RESTARTING,
        running_revision=running,
        operation=_op(R.OP_RESTART, R.STEP_DRAIN),
    )


@pytest.mark.parametrize(
    ("row", "state", "want"),
    [
        pytest.param(_restarting_at(REV), "RetryInProgress", True, id="RetryInProgress is the attempt"),
        pytest.param(_restarting_at(REV), "Backoff", False, id="Backoff is not the attempt yet"),
        pytest.param(_restarting_at(REV), "Held", False, id="Held rebuilds nothing of the ladder's"),
        pytest.param(
            _restarting_at("llama-pool-engine-0000next"),
            "RetryInProgress",
            False,
            id="a Restart at another revision is another ladder's",
        ),
        pytest.param(_restarting_at(REV), None, False, id="no block: the policy's plain rebuild"),
    ],
)
def test_ladder_attempt_rebuilds_names_the_restart_that_is_the_attempt(
    row: R.Row, state: str | None, want: bool
) -> None:
    """Go: ome-projects/ome ``workload/ops/restart_test.go``, the newest stored version (168,703
    characters, commit not named by the index), ``TestLadderAttemptRebuilds_NamesTheRestartThatIsTheAttempt``
    (5 entries), over ``ops/restart.go`` ``LadderAttemptRebuilds`` (78,474 characters): a ``Restarting``
    row rendering the revision whose block is ``RetryInProgress`` is the ladder's attempt under way;
    one at another revision, or under a block in any other state (Backoff, Held, none), is not. One
    single-pod Instance under ``RecreateInstanceOnPodRestart``, no pods. Ours:
    ``planner/ladder_hold.py`` ``ladder_attempt_rebuilds``, whose answer names the Instance in the
    ladder hold's "the attempt rebuilds" clause (``ladder_rebuilds``)."""
    ctx = _ctx(RECREATE, workers=0)
    blocks = {}
    if state is not None:
        blocks[REV] = R.RetryBlock(
            REV, state, 1, NOW - timedelta(minutes=5), NOW - timedelta(minutes=5), None, "Error"
        )
    retry = RetryBook(blocks, "llama-demo/llama-pool", "engine")
    assert ladder_attempt_rebuilds(ctx, row, [], REV, retry) is want, GO_NEWEST
