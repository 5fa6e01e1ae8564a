"""OME's ``workload/ops/force_delete_test.go``: force-deleting a pod stuck Terminating on a dead node.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/force_delete_test.go`` @ 58a57f25 (45,444
characters, the newest of its stored versions read, read whole; ae683e3f is an earlier 29,936), over
``ops/force_delete.go`` ``escalateStuckTerminatingWithDeadline``, ``escalateStuckTerminatingPods``,
``SweepStuckTerminatingPods`` and ``evidence.StuckTerminating``. Ours: ``planner/nodedeath.py``
``stuck_terminating`` (the evidence) and ``sweep_terminating`` (the replica-wide sweep every pass runs,
Instance by Instance and by name), on the Nodes of the controller's watch (Go reads each Node live).
Go's policy: ``overdueSlack`` 2 min, ``nodeUnreachableThreshold`` 5 min; the clock pinned. Go's
boundaries are one nanosecond past a deadline; ours one second (status times have whole seconds).
The cases that drive a whole pass (a roll parked at each update step, a scale-down drain) run one
planner pass in the simulated world.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.actions import DeletePod, ForceDeletePod, RecordEvent
from omereconcile.planner import plan
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.nodedeath import (
    FOREIGN_FINALIZERS,
    NODE_GONE,
    NODE_HEALTHY,
    NODE_NOT_DEAD_LONG_ENOUGH,
    NODE_NOT_READY,
    NODE_UNREACHABLE_TAINT,
    NOT_CONFIGURED,
    UNSCHEDULED,
    WITHIN_GRACE,
    stuck_terminating,
    sweep_terminating,
)
from omereconcile.planner.out import Out
from omereconcile.settings import ForceDeletePolicy, OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, NodeView, PodView, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/force_delete_test.go @ 58a57f25"
NOW = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(minutes=2), node_unreachable_threshold=timedelta(minutes=5)
)
OVERDUE = NOW - timedelta(minutes=10)  # Go overdueTS
PAST = timedelta(seconds=1)


def _node(
    name: str,
    *,
    ready: str | None = "True",
    since: timedelta = timedelta(hours=24),
    taint_for: timedelta | None = None,
    taint_time: bool = True,
) -> NodeView:
    """Go ``fdNodeReady`` / ``fdNodeNotReady`` (Ready Unknown since ``since``) / ``fdNodeUnreachable``
    (and the unreachable NoExecute taint added ``taint_for`` ago, or with no time)."""
    status: dict[str, Any] = {}
    if ready is not None:
        status["conditions"] = [
            {"type": "Ready", "status": ready, "lastTransitionTime": format_time(NOW - since)}
        ]
    spec: dict[str, Any] = {}
    if taint_for is not None:
        taint: dict[str, Any] = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
        if taint_time:
            taint["timeAdded"] = format_time(NOW - taint_for)
        spec["taints"] = [taint]
    return NodeView.from_dict({"metadata": {"name": name}, "spec": spec, "status": status})


def _unreachable(name: str, since: timedelta) -> NodeView:
    return _node(name, ready="Unknown", since=since, taint_for=since)


def _pod(
    name: str,
    node: str,
    deleted: datetime | None = OVERDUE,
    uid: str = "uid-0001",
    finalizers: Sequence[str] = (),
) -> PodView:
    """Go ``fdTerminatingPod``: Terminating since ``deleted`` (None: not being deleted)."""
    meta: dict[str, Any] = {"name": name, "namespace": "llama-demo", "uid": uid, "labels": {}}
    if deleted is not None:
        meta["deletionTimestamp"] = format_time(deleted)
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return PodView.from_dict({"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": "Running"}})


def _nodes(*nodes: NodeView) -> dict[str, NodeView | None]:
    return {n.name: n for n in nodes}


def _ctx(nodes: Mapping[str, NodeView | None] | None, policy: ForceDeletePolicy | None = POLICY) -> Ctx:
    sim = Sim(settings=OperatorSettings(force_delete=policy))
    sim.apply_replica(base_replica(replicas=1))
    world = replace(sim.observe(), nodes=nodes, now=NOW)
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _sweep(ctx: Ctx, by_index: Mapping[int, Sequence[PodView]]) -> Out:
    out = Out(NOW)
    sweep_terminating(ctx, by_index, out)
    return out


def _forced(out: Out) -> list[ForceDeletePod]:
    return [a for a in out.actions if isinstance(a, ForceDeletePod)]


def _warnings(out: Out, reason: str) -> list[RecordEvent]:
    return [e for e in out.events if e.event_reason == reason]


# -- the evidence and its boundaries ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "nodes", "policy", "want"),
    [
        pytest.param(
            _pod("within-grace", "unread-node", NOW - timedelta(minutes=1)),
            {},
            POLICY,
            NOW + timedelta(minutes=1) + PAST,
            id="pod overdue slack",
        ),
        pytest.param(
            _pod("young-unreachable", "node-a"),
            _nodes(_node("node-a", ready="Unknown", since=timedelta(minutes=2))),
            POLICY,
            NOW + timedelta(minutes=3),
            id="node unreachable threshold",
        ),
        pytest.param(
            _pod("overdue", "node-a"),
            _nodes(_node("node-a")),
            replace(POLICY, node_unreachable_threshold=timedelta(minutes=7, seconds=13)),
            NOW + timedelta(minutes=7, seconds=13),
            id="ready node recheck",
        ),
        pytest.param(
            _pod("overdue", "node-a"),
            _nodes(_node("node-a", ready=None)),
            replace(POLICY, node_unreachable_threshold=timedelta(minutes=7, seconds=13)),
            NOW + timedelta(minutes=7, seconds=13),
            id="node without unreachable evidence recheck",
        ),
    ],
)
def test_requeue_tracks_exact_policy_boundaries(
    pod: PodView, nodes: dict[str, NodeView | None], policy: ForceDeletePolicy, want: datetime
) -> None:
    """Go: TestForceDeleteRequeueTracksExactPolicyBoundaries (each subtest): the next instant the
    reading can change on its own: the pod's own deadline plus the slack (just past it), the node's
    Ready-Unknown transition plus the threshold, or a threshold from now for a node with no death
    evidence (Ready, or no condition at all). Go also counts no Node read inside the slack; ours
    reads Nodes from the watch, not per pod."""
    ev = stuck_terminating(nodes, pod, policy, NOW)
    assert not ev.actionable, GO
    assert ev.requeue_at == want, GO


def test_nil_policy_no_action() -> None:
    """Go: TestForceDelete_NilPolicy_NoNodeReadsNoAction: with no policy the predicate never evaluates
    (not-configured) and the pod is untouched (Go also counts zero Node reads; ours reads none per
    pod)."""
    pod = _pod("wedge-0", "gone-node")
    assert stuck_terminating({}, pod, None, NOW).kind == NOT_CONFIGURED, GO
    out = _sweep(_ctx({}, None), {0: [pod]})
    assert (_forced(out), out.events, out.wakes) == ([], [], []), GO


@pytest.mark.parametrize(
    "case",
    [
        "TestForceDeletePods_NilPolicy_NoNodeReadsNoAction",
        "TestSweepStuckTerminatingPods_NilPolicyReadsNothing",
    ],
)
def test_nil_policy_sweep_reads_nothing(case: str) -> None:
    """Go: TestForceDeletePods_NilPolicy_NoNodeReadsNoAction and TestSweepStuckTerminatingPods_NilPolicy-
    ReadsNothing: without a policy the sweep is not there: no delete and no boundary, whatever the
    buckets hold (a pod on a gone node included)."""
    pods = {0: [_pod("wedge-0", "gone-node")], 1: [_pod("wedge-1", "gone-node", uid="uid-0002")]}
    out = _sweep(_ctx({}, None), pods if case.startswith("TestSweep") else {0: pods[0]})
    assert (_forced(out), out.wakes) == ([], []), GO


def test_within_own_grace_node_gone_untouched() -> None:
    """Go: TestForceDelete_WithinOwnGrace_NodeGone_Untouched: a pod still inside its own grace window
    (its deletion timestamp 9 minutes ahead) is untouched even on a gone node; exactly at the
    deadline plus the slack it is still within grace (the predicate needs strictly after)."""
    pod = _pod("wedge-0", "gone-node", NOW + timedelta(minutes=9))
    assert stuck_terminating({}, pod, POLICY, NOW).kind == WITHIN_GRACE, GO
    assert _forced(_sweep(_ctx({}), {0: [pod]})) == [], GO
    boundary = _pod("wedge-1", "gone-node", NOW - POLICY.overdue_slack)
    assert stuck_terminating({}, boundary, POLICY, NOW).kind == WITHIN_GRACE, GO


def test_overdue_node_ready_untouched() -> None:
    """Go: TestForceDelete_Overdue_NodeReady_Untouched: overdue on a Ready node is the slow-kubelet
    case (a force-delete risks a double-running container): node-healthy, re-read a threshold from
    now, untouched."""
    nodes = _nodes(_node("healthy-node"))
    pod = _pod("wedge-0", "healthy-node")
    ev = stuck_terminating(nodes, pod, POLICY, NOW)
    assert (ev.kind, ev.requeue_at) == (NODE_HEALTHY, NOW + POLICY.node_unreachable_threshold), GO
    assert _forced(_sweep(_ctx(nodes), {0: [pod]})) == [], GO


def test_overdue_evidence_younger_than_threshold_untouched() -> None:
    """Go: TestForceDelete_Overdue_EvidenceYoungerThanThreshold_Untouched: NotReady for 2 of the 5
    minutes, a taint added 2 minutes ago, and a taint with no time beside a condition a minute old are
    all a blip, not a death: not dead long enough, untouched."""
    pod = _pod("wedge-0", "dying-node")
    not_ready = _nodes(_node("dying-node", ready="Unknown", since=timedelta(minutes=2)))
    assert stuck_terminating(not_ready, pod, POLICY, NOW).kind == NODE_NOT_DEAD_LONG_ENOUGH, GO
    assert _forced(_sweep(_ctx(not_ready), {0: [pod]})) == [], GO
    young_taint = _nodes(_unreachable("dying-node", timedelta(minutes=2)))
    assert stuck_terminating(young_taint, pod, POLICY, NOW).kind == NODE_NOT_DEAD_LONG_ENOUGH, GO
    no_time = _nodes(
        _node(
            "dying-node",
            ready="Unknown",
            since=timedelta(minutes=1),
            taint_for=timedelta(0),
            taint_time=False,
        )
    )
    assert stuck_terminating(no_time, pod, POLICY, NOW).kind == NODE_NOT_DEAD_LONG_ENOUGH, GO


def test_overdue_old_unreachable_taint_deleted_with_options() -> None:
    """Go: TestForceDelete_Overdue_OldUnreachableTaint_DeletedWithOptions: overdue, the unreachable
    taint ten minutes old: force-deleted (grace 0, pinned to the pod's UID: ours' ``ForceDeletePod``)."""
    nodes = _nodes(_unreachable("dead-node", timedelta(minutes=10)))
    pod = _pod("wedge-0", "dead-node")
    assert stuck_terminating(nodes, pod, POLICY, NOW).kind == NODE_UNREACHABLE_TAINT, GO
    assert [(a.name, a.uid) for a in _forced(_sweep(_ctx(nodes), {0: [pod]}))] == [("wedge-0", "uid-0001")], (
        GO
    )


def test_stale_taint_on_recovered_node_ready_true_vetoes() -> None:
    """Go: TestForceDelete_StaleTaintOnRecoveredNode_ReadyTrueVetoes: a ten-minute-old unreachable
    taint on a node posting Ready=True again (the taint never removed) is not death: node-healthy, a
    threshold's recheck, no delete; the same taint with Ready Unknown as old stays actionable."""
    pod = _pod("wedge-0", "recovered-node")
    recovered = _nodes(_node("recovered-node", taint_for=timedelta(minutes=10)))
    ev = stuck_terminating(recovered, pod, POLICY, NOW)
    assert (ev.kind, ev.requeue_at) == (NODE_HEALTHY, NOW + POLICY.node_unreachable_threshold), GO
    assert _forced(_sweep(_ctx(recovered), {0: [pod]})) == [], GO
    dead = _nodes(_unreachable("recovered-node", timedelta(minutes=10)))
    assert stuck_terminating(dead, pod, POLICY, NOW).kind == NODE_UNREACHABLE_TAINT, GO


def test_overdue_node_gone_deleted() -> None:
    """Go: TestForceDelete_Overdue_NodeGone_Deleted: overdue with the Node object gone: force-deleted;
    NotReady for ten minutes is the third actionable branch; an unscheduled pod has nothing to prove
    dead and is never actionable."""
    pod = _pod("wedge-0", "gone-node")
    assert stuck_terminating({}, pod, POLICY, NOW).kind == NODE_GONE, GO
    assert len(_forced(_sweep(_ctx({}), {0: [pod]}))) == 1, GO
    not_ready = _nodes(_node("notready-node", ready="Unknown", since=timedelta(minutes=10)))
    assert (
        stuck_terminating(not_ready, _pod("wedge-1", "notready-node"), POLICY, NOW).kind == NODE_NOT_READY
    ), GO
    assert stuck_terminating(not_ready, _pod("wedge-2", ""), POLICY, NOW).kind == UNSCHEDULED, GO


def test_foreign_finalizer_reports_once() -> None:
    """Go: TestForceDelete_ForeignFinalizer_ReportOnceNoSpam: an overdue pod pinned by another
    controller's finalizer is not deleted; one PodDeleteBlockedByFinalizer Warning over two passes,
    deduplicated by a finalizer-report ledger row keyed by the pod's UID (ForceDelete, Completed)."""
    pod = _pod("wedge-0", "gone-node", finalizers=["someone.else/finalizer"])
    assert stuck_terminating({}, pod, POLICY, NOW).kind == FOREIGN_FINALIZERS, GO
    ctx = _ctx({})
    first, second = _sweep(ctx, {0: [pod]}), _sweep(ctx, {0: [pod]})
    assert (_forced(first), _forced(second)) == ([], []), GO
    assert (
        len(
            _warnings(first, "PodDeleteBlockedByFinalizer") + _warnings(second, "PodDeleteBlockedByFinalizer")
        )
        == 1
    ), GO
    assert ctx.ledger is not None
    rows = ctx.ledger.after_pods
    assert len(rows) == 1, GO
    assert (rows[0]["requestUUID"], rows[0]["reason"], rows[0]["outcome"], rows[0]["phase"]) == (
        "uid-0001",
        "ForceDelete",
        "finalizer-report",
        "Completed",
    ), GO


def test_action_records_once_no_double_ledger_on_replay() -> None:
    """Go: TestForceDelete_ActionRecordsOnce_NoDoubleLedgerOnReplay: one force-delete records one
    PodForceDeleted and one terminal ledger row (the pod's UID, the component, Instance 3, Completed,
    ForceDelete, force-delete-unreachable, the node, both times); the replay pass, where the pod is
    gone, records nothing new."""
    ctx = _ctx({})
    pod = _pod("wedge-0", "gone-node")
    out = _sweep(ctx, {3: [pod]})
    replay = _sweep(ctx, {3: []})
    assert len(_warnings(out, "PodForceDeleted")) == 1, GO
    assert (replay.actions, replay.events) == ([], []), GO
    assert ctx.ledger is not None
    [row] = ctx.ledger.after_pods
    assert (row["requestUUID"], row["component"], row["sourceInstance"]) == ("uid-0001", "engine", 3), GO
    assert (row["phase"], row["reason"], row["outcome"], row["fromNode"]) == (
        "Completed",
        "ForceDelete",
        "force-delete-unreachable",
        "gone-node",
    ), GO
    assert row["startedAt"], GO
    assert row["completedAt"], GO


def test_sweeps_only_actionable_terminating_pods() -> None:
    """Go: TestForceDeletePods_SweepsOnlyActionableTerminatingPods: over a slice, a Terminating pod on a
    long-dead node goes, one on a Ready node stays, and a pod nobody deleted is never classified."""
    nodes = _nodes(_unreachable("dead-node", timedelta(minutes=10)), _node("live-node"))
    pods = [
        _pod("wedge-0", "dead-node", uid="uid-0001"),
        _pod("slow-1", "live-node", uid="uid-0002"),
        _pod("serving-2", "dead-node", None, uid="uid-0003"),
    ]
    assert [a.name for a in _forced(_sweep(_ctx(nodes), {0: pods}))] == ["wedge-0"], GO


def test_sweep_visits_every_bucket_in_order_and_wakes_on_the_earliest_boundary() -> None:
    """Go: TestSweepStuckTerminatingPods_VisitsEveryBucketInOrderAndWakesOnTheEarliestBoundary: every
    Instance's Terminating pods, by index then name (wedge-a before wedge-b), each recorded under its
    own index (2); a pod on a Ready node and one inside the slack stay, and the pass wakes on the
    earliest of their boundaries (the fresh pod's deadline plus the slack, just past)."""
    nodes = _nodes(_unreachable("dead-node", timedelta(minutes=10)), _node("live-node"))
    by_index = {
        2: [_pod("wedge-b", "dead-node", uid="uid-1"), _pod("wedge-a", "dead-node", uid="uid-2")],
        0: [_pod("slow", "live-node", uid="uid-3"), _pod("live", "dead-node", None, uid="uid-5")],
        1: [_pod("fresh", "dead-node", NOW - timedelta(minutes=1), uid="uid-4")],
    }
    out = _sweep(_ctx(nodes), by_index)
    assert [a.name for a in _forced(out)] == ["wedge-a", "wedge-b"], GO
    events = _warnings(out, "PodForceDeleted")
    assert len(events) == 2, GO
    assert all("instance=2" in e.message for e in events), GO
    assert min(out.wakes) == NOW - timedelta(minutes=1) + POLICY.overdue_slack + PAST, GO


# -- whole passes --------------------------------------------------------------------------------------


def _dead_node_sim(workers: int = 0) -> tuple[Sim, Driver]:
    settings = OperatorSettings(instance_ready_timeout=timedelta(hours=2), force_delete=POLICY)
    sim = Sim(settings=settings, workers=workers)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _wedge(sim: Sim, name: str) -> None:
    """The pod Terminating ten minutes past its own deadline, on a node unreachable for ten minutes."""
    node = sim.node_of(name)
    sim.silence_node(node)
    sim.advance(600)
    sim.pods[name].obj["metadata"]["deletionTimestamp"] = format_time(sim.now - timedelta(minutes=10))


SOURCE = "llama-pool-engine-0-default-0"


@pytest.mark.parametrize("step", ["Surge", "SurgeDrain", "SurgeDrainSettle", "InPlace", "Drain"])
def test_update_force_deletes_stuck_terminating_source(step: str) -> None:
    """Go: TestUpdateWithPods_ForceDeletesStuckTerminatingSource (each step): a roll parked at any
    step whose source pod is Terminating past its grace on a dead node: the pass force-deletes it
    (one PodForceDeleted), so the wait for it to go away ends. Ours: Instance 0 Ready, the image
    edited, the row stamped at the step, one planner pass (the sweep runs whatever the step)."""
    sim, _ = _dead_node_sim()
    sim.image = "vllm:v2"
    world = sim.observe()
    assert isinstance(world.render, DesiredRevision)
    row = sim.rows()[0]
    row["phase"] = "Updating"
    row["operation"] = {
        "id": "update-0-1",
        "type": "Update",
        "step": step,
        "targetRevision": world.render.name,
        "startedAt": format_time(sim.now),
        "lastProgressAt": format_time(sim.now),
    }
    _wedge(sim, SOURCE)
    out = plan(sim.observe())
    assert [a.name for a in out.actions if isinstance(a, ForceDeletePod)] == [SOURCE], GO
    assert (
        len([a for a in out.actions if isinstance(a, RecordEvent) and a.event_reason == "PodForceDeleted"])
        == 1
    )


@pytest.mark.parametrize(
    "terminating",
    [
        pytest.param(True, id="terminating pod on the dead node"),
        pytest.param(False, id="live pod on the dead node"),
    ],
)
def test_delete_node_death_acts_only_through_a_terminating_pod(terminating: bool) -> None:
    """Go: TestDeleteBatch_NodeDeathActsOnlyThroughATerminatingPod (both subtests): a scale-down
    drain's pod on a node dead for ten minutes is force-deleted only when it is already Terminating;
    a pod nobody has deleted yet is the ordinary drain's business (a graceful delete, not a force)."""
    sim, _ = _dead_node_sim()
    row = sim.rows()[0]
    row["phase"] = "Deleting"
    row["operation"] = {
        "id": "delete-0-1",
        "type": "Delete",
        "step": "Drain",
        "targetRevision": row["runningRevision"],
        "startedAt": format_time(sim.now),
        "lastProgressAt": format_time(sim.now),
    }
    if terminating:
        _wedge(sim, SOURCE)
    else:
        sim.silence_node(sim.node_of(SOURCE))
        sim.advance(600)
        for cond in sim.pods[SOURCE].obj["status"]["conditions"]:
            if cond["type"] == "ome.io/serving":
                cond["status"] = "False"
    out = plan(sim.observe())
    forced = [a.name for a in out.actions if isinstance(a, ForceDeletePod)]
    graceful = [a.name for a in out.actions if isinstance(a, DeletePod)]
    assert forced == ([SOURCE] if terminating else []), GO
    if not terminating:
        assert graceful == [SOURCE], GO


def test_delete_operator_config_changes_do_not_change_what_the_drain_decides() -> None:
    """Go: TestDeleteBatch_OperatorConfigChangesDoNotChangeWhatTheDrainDecides "retry block history":
    a drain waiting on a Terminating pod whose node is NotReady for 2 of the 5 minutes decides the
    same (no delete, the same wake-up) with stale RetryBlocks in status. Its other three edits are Go
    settings ours does not have (see ``docs/goparity.md``)."""
    ctx = _ctx(_nodes(_node("node-a", ready="Unknown", since=timedelta(minutes=2))))
    pod = _pod("wedge-0", "node-a")
    base = _sweep(ctx, {0: [pod]})
    status = dict(ctx.world.replica.status)
    status["retryBlocks"] = [
        {"targetRevision": "llama-pool-engine-stale001", "state": "Held", "attemptsStarted": 1}
    ]
    world = replace(ctx.world, replica=replace(ctx.world.replica, status=status))
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    edited = _sweep(build_context(world, desired, desired.name, None), {0: [pod]})
    assert (_forced(base), _forced(edited)) == ([], []), GO
    assert edited.wakes == base.wakes == [NOW + timedelta(minutes=3)], GO
