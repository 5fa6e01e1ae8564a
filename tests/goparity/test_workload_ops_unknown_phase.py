"""OME's ``workload/ops/unknown_phase_test.go``: a name held by a pod whose kubelet stopped reporting.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/unknown_phase_test.go`` @ 58a57f25 (5,948
characters, the newer of two stored versions: dcfb4135 is its first 3,384, without the withdrawn-Ready
test), over ``ops/unknown_phase.go`` ``recoverUnknownPhaseTargets``. Go calls that function on one
step's target pods and reads ``holding`` (the step does not proceed this pass), the deletes issued and
the next policy boundary. Ours splits it: ``planner/holds.py`` ``node_unknown_hold`` (a pod nobody
asked to delete: force-deleted on node-death evidence, else the step waits ``NodeUnknown``) and
``planner/nodedeath.py`` ``sweep_terminating`` (a pod on its way out, swept every pass). A step here
never recreates a name whose pod still stands in the observation, so a pass that force-deletes the
pod withholds the step too. Go's Node is read through a fake client; ours from the Node watch.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.actions import ForceDeletePod
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.holds import NODE_UNKNOWN, node_unknown_hold
from omereconcile.planner.nodedeath import sweep_terminating
from omereconcile.planner.out import Out
from omereconcile.settings import ForceDeletePolicy, OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, NodeView, PodView, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/unknown_phase_test.go @ 58a57f25"
NOW = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(minutes=2), node_unreachable_threshold=timedelta(minutes=5)
)
POD = "llama-pool-engine-0-default-0"


def _node(name: str, unreachable_for: timedelta | None) -> NodeView:
    """Go's ``fdNodeUnreachable`` (Ready Unknown and the unreachable taint since ``unreachable_for``
    ago) or, with None, ``fdNodeReady``."""
    if unreachable_for is None:
        return NodeView.from_dict(
            {
                "metadata": {"name": name},
                "spec": {},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }
        )
    since = format_time(NOW - unreachable_for)
    return NodeView.from_dict(
        {
            "metadata": {"name": name},
            "spec": {
                "taints": [
                    {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since}
                ]
            },
            "status": {"conditions": [{"type": "Ready", "status": "Unknown", "lastTransitionTime": since}]},
        }
    )


def _pod(node: str, status: dict[str, Any], deleted: bool = False, gates: bool = False) -> PodView:
    meta: dict[str, Any] = {"name": POD, "namespace": "llama-demo", "uid": "pod-uid"}
    if deleted:
        meta["deletionTimestamp"] = format_time(NOW - timedelta(minutes=10))
    spec: dict[str, Any] = {"nodeName": node}
    if gates:
        spec["readinessGates"] = [{"conditionType": "ome.io/serving"}]
    return PodView.from_dict({"metadata": meta, "spec": spec, "status": status})


def _withdrawn(node: str) -> PodView:
    """Go's ``fdWithdrawnPod``: Running, ContainersReady and the serving gate True, PodReady False."""
    status = {
        "phase": "Running",
        "conditions": [
            {"type": "ContainersReady", "status": "True"},
            {"type": "ome.io/serving", "status": "True"},
            {"type": "Ready", "status": "False"},
        ],
    }
    return _pod(node, status, gates=True)


def _ctx(node: NodeView) -> Ctx:
    sim = Sim(settings=OperatorSettings(force_delete=POLICY))
    sim.apply_replica(base_replica(replicas=1))
    world = replace(sim.observe(), nodes={node.name: node}, now=NOW)
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _creating(ctx: Ctx) -> R.Row:
    op = R.Operation(
        "create-0", R.OP_CREATE, R.STEP_CREATE_PODS, ctx.target, NOW, deadline=NOW + timedelta(minutes=30)
    )
    return R.Row(index=0, phase=R.CREATING, operation=op)


def _force_deletes(out: Out) -> list[ForceDeletePod]:
    return [a for a in out.actions if isinstance(a, ForceDeletePod)]


@pytest.mark.parametrize(
    ("unreachable_for", "holding", "deletes"),
    [
        pytest.param(timedelta(minutes=10), True, 1, id="node unreachable past the threshold"),
        pytest.param(timedelta(minutes=1), True, 0, id="node unreachable inside the threshold"),
        pytest.param(None, False, 0, id="node posting Ready"),
    ],
)
def test_withdrawn_ready_follows_the_node(
    unreachable_for: timedelta | None, holding: bool, deletes: int
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/unknown_phase_test.go @ 58a57f25,
    TestRecoverUnknownPhaseTargets_WithdrawnReadyFollowsTheNode (each entry): a serving pod whose
    Ready the control plane withdrew is read like a phase-Unknown one. On a node unreachable past the
    threshold it is force-deleted (grace 0, pinned to its UID) and the pod still holds the name this
    pass; inside the threshold the step waits ``NodeUnknown`` with its clock parked; on a node posting
    Ready nothing is deleted and nothing waits."""
    ctx = _ctx(_node("node-a", unreachable_for))
    out = Out(NOW)
    row = node_unknown_hold(ctx, _creating(ctx), [_withdrawn("node-a")], out)
    fd = _force_deletes(out)
    assert len(fd) == deletes
    if deletes:
        assert (fd[0].name, fd[0].uid) == (POD, "pod-uid")
    assert row.operation is not None
    waiting = row.operation.waiting == NODE_UNKNOWN
    assert waiting == (holding and not deletes)
    assert (row.operation.deadline is None) == waiting


def test_terminating_pod_takes_the_stuck_sweep() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/unknown_phase_test.go @ 58a57f25,
    TestRecoverUnknownPhaseTargets_TerminatingPodTakesTheStuckSweep: a pod Terminating (overdue) AND
    Unknown on a dead node is freed by the stuck-Terminating sweep, one force-delete at grace 0; the
    step does not force-delete it a second time and does not proceed on that pass (the pod still
    stands)."""
    ctx = _ctx(_node("dead-node", timedelta(minutes=10)))
    pod = _pod("dead-node", {"phase": "Unknown"}, deleted=True)
    out = Out(NOW)
    row = node_unknown_hold(ctx, _creating(ctx), [pod], out)
    assert _force_deletes(out) == []
    assert row.operation is not None
    assert row.operation.waiting != NODE_UNKNOWN
    sweep_terminating(ctx, {0: [pod]}, out)
    assert [(a.name, a.uid) for a in _force_deletes(out)] == [(POD, "pod-uid")]


def test_reports_the_next_policy_boundary() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/unknown_phase_test.go @ 58a57f25,
    TestRecoverUnknownPhaseTargets_ReportsTheNextPolicyBoundary: a phase-Unknown pod on a node
    unreachable for 2 of the 5-minute threshold holds the name, and the pass asks to be woken when the
    evidence turns actionable, 3 minutes on."""
    ctx = _ctx(_node("dying-node", timedelta(minutes=2)))
    out = Out(NOW)
    row = node_unknown_hold(ctx, _creating(ctx), [_pod("dying-node", {"phase": "Unknown"})], out)
    assert row.operation is not None
    assert row.operation.waiting == NODE_UNKNOWN
    assert _force_deletes(out) == []
    assert out.requeue_after() == timedelta(minutes=3).total_seconds()
