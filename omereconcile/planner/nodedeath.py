"""Lost nodes: when a pod's node is proven dead, and the force-delete that frees what it holds.

Read from OME ``workload/evidence/terminating.go`` (``StuckTerminating``, ``NodeDeath``,
``SweepFreesUnknownPod``, ``UnknownPhaseTargetPods``) and ``workload/ops/force_delete.go``
(``SweepStuckTerminatingPods``, ``escalateStuckTerminatingWithDeadline``, ``forceDeleteOnNodeDeath``),
``ops/unknown_phase.go`` (``recoverUnknownPhaseTargets``):

- The escalation exists only under the operator's ``lifecycle.forceDelete`` (both ``overdueSlack`` and
  ``nodeUnreachableThreshold``); without it nothing here ever acts (``not-configured``).
- A **Terminating** pod is force-deleted once ``now`` is strictly past its ``deletionTimestamp`` (which
  already holds its own grace) plus ``overdueSlack``, it carries no finalizer (a force-delete could not
  remove it, and another controller's finalizer is never stripped), it is bound to a node, and the node
  is dead: gone, or ``node.kubernetes.io/unreachable`` added at least the threshold ago, or ``Ready``
  False/Unknown for at least the threshold. A node whose ``Ready`` is True vetoes everything (a dead
  node cannot post it). Every Terminating pod of the replica is swept on every pass, whether or not an
  operation waits on it, Instance by Instance and by name.
- A pod **not** being deleted whose kubelet stopped reporting holds a name a rebuild needs: it is
  force-deleted on the node evidence alone (no graceful window to respect), otherwise the step waits
  (``planner/holds.py`` ``node_unknown_hold``).
- The delete is grace 0 pinned to the pod's UID, and the ``PodForceDeleted`` Warning follows it in Go's
  words; the audit ledger (``planner/relocation.py``) gets a terminal ``ForceDelete`` row keyed by the
  pod's UID (``recordForceDeleteLedgerEntry``, outcome ``force-delete-unreachable``), written after the
  pod writes. An overdue pod pinned by finalizers is left alone with one ``PodDeleteBlockedByFinalizer``
  Warning per pod UID, deduplicated through a ``finalizer-report`` row of that ledger
  (``reportFinalizerBlockedPod``); with the ledger unavailable the Warning is not recorded.

Go reads the Node live on every use; here it comes from the controller's Node watch
(``World.nodes``). A node the watch does not hold is gone; when Nodes were not observed at all nothing
is evidence (Go's ``node-read-error``: not actionable this pass).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from omereconcile.actions import ForceDeletePod
from omereconcile.planner.context import Ctx
from omereconcile.planner.out import JUST_PAST, Out
from omereconcile.planner.relocation import FINALIZER_REPORT, FORCE_DELETE_UNREACHABLE
from omereconcile.settings import ForceDeletePolicy, format_go_duration
from omereconcile.world import NodeView, PodView

__all__ = [
    "Evidence",
    "force_delete_silent",
    "kubelet_silent",
    "node_death",
    "stuck_terminating",
    "sweep_frees",
    "sweep_terminating",
]

# Go TerminatingClass.String(): the evidence names events carry.
NOT_CONFIGURED = "not-configured"
WITHIN_GRACE = "within-grace"
FOREIGN_FINALIZERS = "foreign-finalizers"
UNSCHEDULED = "unscheduled"
NODE_READ_ERROR = "node-read-error"
NODE_HEALTHY = "node-healthy"
NODE_NOT_DEAD_LONG_ENOUGH = "node-not-dead-long-enough"
NODE_GONE = "node-gone"
NODE_UNREACHABLE_TAINT = "node-unreachable-taint"
NODE_NOT_READY = "node-not-ready"
_ACTIONABLE = (NODE_GONE, NODE_UNREACHABLE_TAINT, NODE_NOT_READY)


@dataclass(frozen=True, slots=True)
class Evidence:
    """Go ``TerminatingResult``: the class, the node, the next instant the reading can change on its own,
    and how far past its own deletion deadline the pod is."""

    kind: str
    node: str = ""
    requeue_at: datetime | None = None
    overdue: timedelta = timedelta(0)

    @property
    def actionable(self) -> bool:
        return self.kind in _ACTIONABLE


def _node(nodes: Mapping[str, NodeView | None] | None, name: str) -> tuple[bool, NodeView | None]:
    """(observed, node): a node the watch does not hold is gone; no watch at all observes nothing."""
    if nodes is None:
        return False, None
    return True, nodes.get(name)


def node_death(
    nodes: Mapping[str, NodeView | None] | None,
    pod: PodView,
    policy: ForceDeletePolicy,
    now: datetime,
    overdue: timedelta = timedelta(0),
) -> Evidence:
    """Go ``NodeDeath``: does the cluster prove that no kubelet is left to run the pod's containers."""
    if not pod.node_name:
        return Evidence(UNSCHEDULED, overdue=overdue)
    observed, node = _node(nodes, pod.node_name)
    if not observed:
        return Evidence(NODE_READ_ERROR, pod.node_name, overdue=overdue)
    if node is None:
        return Evidence(NODE_GONE, pod.node_name, overdue=overdue)
    threshold = policy.node_unreachable_threshold
    if node.ready == "True":
        return Evidence(NODE_HEALTHY, node.name, now + threshold, overdue)
    young = False
    nxt: datetime | None = None
    for added in node.unreachable_since:
        if added is not None:
            at = added + threshold
            if now >= at:
                return Evidence(NODE_UNREACHABLE_TAINT, node.name, overdue=overdue)
            nxt = at if nxt is None else min(nxt, at)
        young = True
    if node.ready in ("False", "Unknown"):
        # The condition's own lastTransitionTime; Go reads a missing one as the zero time, long past.
        if node.ready_since is None or now >= node.ready_since + threshold:
            return Evidence(NODE_NOT_READY, node.name, overdue=overdue)
        at = node.ready_since + threshold
        nxt = at if nxt is None else min(nxt, at)
        young = True
    if young:
        return Evidence(NODE_NOT_DEAD_LONG_ENOUGH, node.name, nxt, overdue)
    return Evidence(NODE_HEALTHY, node.name, now + threshold, overdue)


def stuck_terminating(
    nodes: Mapping[str, NodeView | None] | None, pod: PodView, policy: ForceDeletePolicy | None, now: datetime
) -> Evidence:
    """Go ``StuckTerminating``: the force-delete predicate of one Terminating pod."""
    if policy is None:
        return Evidence(NOT_CONFIGURED)
    if pod.deletion_timestamp is None:
        return Evidence(WITHIN_GRACE)
    overdue_at = pod.deletion_timestamp + policy.overdue_slack
    if not now > overdue_at:
        return Evidence(WITHIN_GRACE, requeue_at=overdue_at + JUST_PAST)
    overdue = now - pod.deletion_timestamp
    if pod.finalizers:
        return Evidence(FOREIGN_FINALIZERS, pod.node_name or "", overdue=overdue)
    return node_death(nodes, pod, policy, now, overdue)


def kubelet_silent(
    nodes: Mapping[str, NodeView | None] | None, pod: PodView, policy: ForceDeletePolicy | None
) -> bool:
    """Whether the pod's kubelet stopped reporting it, Go ``evidence.SilentKubeletTargetPods``
    (ome-projects/ome ``evidence/terminating.go`` @ 58a57f25, called with the operator's
    ``ForceDelete`` policy by ``holds/nodeunknown.go`` ``reportNodeUnknown``): phase ``Unknown``
    (Go's ``PodPhaseUnknown``) always; a pod whose ``Ready`` the control plane withdrew only under
    ``lifecycle.forceDelete`` — without a policy no Node is read, so that shape is no evidence
    (``holds/nodeunknown_test.go`` @ 58a57f25, "a withdrawn Ready is not read without a policy").

    Under a policy ours reads the withdrawn Ready off the Node the watch holds (``Ready`` not True,
    the unreachable taint, or the Node gone), as Go's ``ReadSilentPod`` then does before
    ``SilentPodHeld`` keeps the pod: no Kubernetes 1.36 component sets phase ``Unknown`` for a silent
    node (the node controller marks the Node and the pods' ``Ready``). Before issue 37 (goY) ours read
    the Node with or without a policy, so with no ``lifecycle.forceDelete`` a pod on a silent node
    parked its step on ``NodeUnknown`` (and held a gang's missing members) where Go runs the step's
    deadline."""
    if pod.phase == "Unknown":
        return True
    if policy is None or not pod.node_name:
        return False
    observed, node = _node(nodes, pod.node_name)
    return observed and (node is None or node.silent)


def sweep_frees(
    nodes: Mapping[str, NodeView | None] | None, pod: PodView, policy: ForceDeletePolicy | None, now: datetime
) -> Evidence:
    """Go ``SweepFreesUnknownPod``: the sweep's own reading of a pod holding a name — node death for one
    nobody asked to delete, the stuck-Terminating class for one on its way out."""
    if policy is None:
        return Evidence(NOT_CONFIGURED)
    if pod.deletion_timestamp is None:
        return node_death(nodes, pod, policy, now)
    return stuck_terminating(nodes, pod, policy, now)


def _overdue_text(overdue: timedelta) -> str:
    return format_go_duration(timedelta(seconds=round(overdue.total_seconds())))


def sweep_terminating(ctx: Ctx, by_index: Mapping[int, Sequence[PodView]], out: Out) -> None:
    """Go ``SweepStuckTerminatingPods``: every Terminating pod of the replica, by Instance index and pod
    name; an actionable one is force-deleted, and the earliest boundary of the others is a wake-up."""
    policy = ctx.world.settings.force_delete
    if policy is None:
        return
    for index in sorted(by_index):
        for pod in sorted(by_index[index], key=lambda p: p.name):
            if not pod.terminating:
                continue
            ev = stuck_terminating(ctx.world.nodes, pod, policy, ctx.now)
            if ev.kind == FOREIGN_FINALIZERS:
                _report_finalizers(ctx, index, pod, ev, out)
                continue
            if not ev.actionable:
                out.wake(ev.requeue_at)
                continue
            out.actions.append(
                ForceDeletePod(pod.name, pod.uid, f"stuck Terminating on dead node {ev.node} ({ev.kind})")
            )
            out.event(
                "Warning",
                "PodForceDeleted",
                f"OMENative {ctx.instance_key(index)}: force-deleted stuck-Terminating pod {pod.name} on node "
                f"{pod.node_name} (evidence={ev.kind}, {_overdue_text(ev.overdue)} past the pod's own "
                "deletion deadline)",
            )
            _record(ctx, index, pod, FORCE_DELETE_UNREACHABLE)


def _record(ctx: Ctx, index: int, pod: PodView, outcome: str) -> None:
    if ctx.ledger is not None:
        ctx.ledger.record_force_delete(
            component=ctx.component, index=index, pod=pod, outcome=outcome, now=ctx.now
        )


def _report_finalizers(ctx: Ctx, index: int, pod: PodView, ev: Evidence, out: Out) -> None:
    """Go ``reportFinalizerBlockedPod``: once per pod UID (the ledger's ``finalizer-report`` row is the
    marker), a Warning that the overdue pod is pinned by finalizers OME never strips."""
    if ctx.ledger is None or not ctx.ledger.available or ctx.ledger.finalizer_reported(pod.uid):
        return
    out.event(
        "Warning",
        "PodDeleteBlockedByFinalizer",
        f"OMENative {ctx.instance_key(index)}: pod {pod.name} is {_overdue_text(ev.overdue)} past its own "
        f"deletion deadline but pinned by finalizers [{' '.join(pod.finalizers)}]; OME never strips another "
        "controller's finalizer — the finalizer owner must resolve it",
    )
    _record(ctx, index, pod, FINALIZER_REPORT)


def force_delete_silent(ctx: Ctx, index: int, pod: PodView, out: Out) -> Evidence:
    """Go ``forceDeleteOnNodeDeath`` for a pod nobody has asked to delete whose kubelet stopped
    reporting it: on node-death evidence it is force-deleted (the name is free once the delete lands);
    otherwise the evidence's next boundary is a wake-up. A Terminating pod belongs to the sweep.

    The Warning is in Go's words (ome-projects/ome ``workload/ops/force_delete.go``, the newest stored
    version, 10,589 characters, the only one holding ``forceDeleteOnNodeDeath``): "force-deleted pod
    <p> held in phase Unknown on node <n> (evidence=<class>)", whatever phase the pod reports (Go's
    ``SilentKubeletTargetPods`` also admits a Running pod whose Ready was withdrawn). Before issue 37's
    fourth round ours said "…, which its kubelet stopped reporting"."""
    policy = ctx.world.settings.force_delete
    if policy is None or pod.terminating:
        return Evidence(NOT_CONFIGURED)
    ev = node_death(ctx.world.nodes, pod, policy, ctx.now)
    if not ev.actionable:
        out.wake(ev.requeue_at)
        return ev
    out.actions.append(ForceDeletePod(pod.name, pod.uid, f"its node {ev.node} stopped reporting ({ev.kind})"))
    out.event(
        "Warning",
        "PodForceDeleted",
        f"OMENative {ctx.instance_key(index)}: force-deleted pod {pod.name} held in phase Unknown on node "
        f"{pod.node_name} (evidence={ev.kind})",
    )
    _record(ctx, index, pod, FORCE_DELETE_UNREACHABLE)
    return ev
