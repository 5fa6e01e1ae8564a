"""OME's ``workload/evidence/terminating_test.go``: the force-delete predicate and the suspect node.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/terminating_test.go`` @ 58a57f25 (the
listed version of two stored), over ``evidence/terminating.go`` @ 4dfb96b1. Go reads the Node through
a fake client; the planner reads the Nodes the controller's watch holds (``World.nodes``: a name
mapped to None is a Node the watch does not hold, i.e. gone). ``StuckTerminating`` and ``NodeDeath``
are :func:`omereconcile.planner.nodedeath.stuck_terminating` / ``node_death``, ``ReadSilentPod``'s
class is ``sweep_frees``, ``AttemptSuspectNode`` is
:func:`omereconcile.planner.relocation.attempt_suspect_node` (which takes the revision's hash, not its
name). Which tests of the file have no counterpart yet is in ``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner import nodedeath as N
from omereconcile.planner.relocation import attempt_suspect_node
from omereconcile.settings import ForceDeletePolicy
from omereconcile.world import NodeView, PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/evidence/terminating_test.go @ 58a57f25"
NOW = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(minutes=2), node_unreachable_threshold=timedelta(minutes=5)
)


def _pod(
    node: str = "",
    deleted_at: datetime | None = None,
    revision_hash: str = "",
    finalizers: list[str] | None = None,
    phase: str = "Running",
) -> PodView:
    meta: dict[str, Any] = {"name": "wedge-0", "namespace": "prod"}
    if deleted_at is not None:
        meta["deletionTimestamp"] = format_time(deleted_at)
    if revision_hash:
        meta["labels"] = {c.LABEL_REVISION_HASH: revision_hash}
    if finalizers:
        meta["finalizers"] = finalizers
    return PodView.from_dict({"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": phase}})


def _node(name: str, ready: str, age: timedelta, taint: bool) -> NodeView:
    """Go's ``tNode``: Ready at ``ready`` since ``age`` ago, and the unreachable taint added then."""
    since = format_time(NOW - age)
    spec = {"taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": since}]}
    return NodeView.from_dict(
        {
            "metadata": {"name": name},
            "spec": spec if taint else {},
            "status": {"conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since}]},
        }
    )


OLD, NEW = "oldhash", "newhash"


def _on(rev: str, node: str) -> PodView:
    return _pod(node=node, revision_hash=rev)


def _leaving(rev: str, node: str) -> PodView:
    return _pod(node=node, revision_hash=rev, deleted_at=NOW)


SUSPECT: list[tuple[str, list[PodView], str, str]] = [
    ("source and target on different nodes name the target's", [_on(OLD, "a"), _on(NEW, "b")], NEW, "b"),
    ("an unbound source does not veto the target's node", [_on(OLD, ""), _on(NEW, "b")], NEW, "b"),
    ("only the source present names nothing", [_on(OLD, "a")], NEW, ""),
    ("a lone pod carrying the target label names its node", [_on(NEW, "a")], NEW, "a"),
    ("unlabeled pods stay in scope", [_on("", "a")], NEW, "a"),
    ("unlabeled pods spanning nodes still name nothing", [_on("", "a"), _on("", "b")], NEW, ""),
    ("a drained old pod on its way out is still the attempt's", [_leaving(OLD, "a")], NEW, "a"),
    (
        "a leaving source and a target on another node span nodes",
        [_leaving(OLD, "a"), _on(NEW, "b")],
        NEW,
        "",
    ),
    ("a target gang on one node resolves", [_on(OLD, "a"), _on(NEW, "b"), _on(NEW, "b")], NEW, "b"),
    ("a target gang spanning nodes names nothing", [_on(NEW, "b"), _on(NEW, "c")], NEW, ""),
    ("no target revision leaves every pod in scope", [_on(OLD, "a"), _on(NEW, "b")], "", ""),
    ("no pods", [], NEW, ""),
]


@pytest.mark.parametrize(("name", "pods", "rev", "want"), SUSPECT, ids=[s[0] for s in SUSPECT])
def test_attempt_suspect_node(name: str, pods: list[PodView], rev: str, want: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/evidence/terminating_test.go @ 58a57f25,
    TestAttemptSuspectNode, entry ``name``: the node named only from the attempt's own pods, all on
    one bound node; a source of another revision neither names nor vetoes it."""
    assert attempt_suspect_node(pods, rev) == want


SINGLE: list[tuple[str, list[str], str]] = [
    ("no pods", [], ""),
    ("one pod on one node", ["a"], "a"),
    ("a whole gang on one node", ["a", "a", "a"], "a"),
    ("pods spanning nodes", ["a", "b"], ""),
    ("an unscheduled pod", ["a", ""], ""),
]


@pytest.mark.parametrize(("name", "nodes", "want"), SINGLE, ids=[s[0] for s in SINGLE])
def test_single_live_node(name: str, nodes: list[str], want: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/evidence/terminating_test.go @ 58a57f25,
    TestSingleLiveNode, entry ``name``: one node is named only when every pod is bound to it. Ours
    folds ``SingleLiveNode`` into ``attempt_suspect_node``, which reads pods with no revision label
    exactly as ``SingleLiveNode`` does (Go's own TestAttemptSuspectNode comment); the entry "a nil
    pod" has no counterpart."""
    assert attempt_suspect_node([_on("", n) for n in nodes], NEW) == want


OVERDUE = NOW - timedelta(minutes=10)
STUCK: list[tuple[str, PodView, ForceDeletePolicy | None, str, bool]] = [
    ("no policy: the escalation does not exist", _pod("gone-node", OVERDUE), None, N.NOT_CONFIGURED, False),
    (
        "inside the pod's own grace plus the slack",
        _pod("gone-node", NOW + timedelta(minutes=9)),
        POLICY,
        N.WITHIN_GRACE,
        False,
    ),
    (
        "exactly at the slack boundary is still within grace",
        _pod("gone-node", NOW - timedelta(minutes=2)),
        POLICY,
        N.WITHIN_GRACE,
        False,
    ),
    (
        "overdue but pinned by a foreign finalizer: report only",
        _pod("gone-node", OVERDUE, finalizers=["example.com/keep"]),
        POLICY,
        N.FOREIGN_FINALIZERS,
        False,
    ),
    ("overdue with no node object: the node is gone", _pod("gone-node", OVERDUE), POLICY, N.NODE_GONE, True),
]


@pytest.mark.parametrize(("name", "pod", "policy", "want", "actionable"), STUCK, ids=[s[0] for s in STUCK])
def test_stuck_terminating_branches(
    name: str, pod: PodView, policy: ForceDeletePolicy | None, want: str, actionable: bool
) -> None:
    """Go: same file, TestStuckTerminating_Branches, entry ``name``: no policy reads nothing, a pod
    inside its deletion window plus the slack is left alone, a finalizer-pinned one is reported, and
    an overdue pod whose Node is gone is actionable. The watch holds no Node (as Go seeds none)."""
    got = N.stuck_terminating({}, pod, policy, NOW)
    assert (got.kind, got.actionable) == (want, actionable)


DEATH: list[tuple[str, NodeView | None, str, str, bool]] = [
    ("unscheduled pod has no node whose death could be proven", None, "", N.UNSCHEDULED, False),
    (
        "Ready=True is the kubelet-slow case",
        _node("live", "True", timedelta(seconds=10), False),
        "live",
        N.NODE_HEALTHY,
        False,
    ),
    (
        "Ready=True vetoes a stale unreachable taint",
        _node("recovered", "True", timedelta(minutes=10), True),
        "recovered",
        N.NODE_HEALTHY,
        False,
    ),
    (
        "NotReady younger than the threshold is a blip",
        _node("dying", "False", timedelta(minutes=2), False),
        "dying",
        N.NODE_NOT_DEAD_LONG_ENOUGH,
        False,
    ),
    (
        "unreachable taint older than the threshold",
        _node("dead", "Unknown", timedelta(minutes=10), True),
        "dead",
        N.NODE_UNREACHABLE_TAINT,
        True,
    ),
    (
        "NotReady older than the threshold",
        _node("dead", "False", timedelta(minutes=10), False),
        "dead",
        N.NODE_NOT_READY,
        True,
    ),
]


@pytest.mark.parametrize(
    ("name", "node", "node_name", "want", "actionable"), DEATH, ids=[d[0] for d in DEATH]
)
def test_node_death_branches(
    name: str, node: NodeView | None, node_name: str, want: str, actionable: bool
) -> None:
    """Go: same file, TestNodeDeath_Branches, entry ``name``: a current Ready=True vetoes every death
    branch (a stale unreachable taint too); younger evidence is a blip; a long taint or a long
    NotReady proves no kubelet is left."""
    nodes = {node.name: node} if node is not None else {}
    got = N.node_death(nodes, _pod(node_name, OVERDUE), POLICY, NOW)
    assert (got.kind, got.actionable) == (want, actionable)


SILENT_POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(minutes=1), node_unreachable_threshold=timedelta(minutes=5)
)
SILENT: list[tuple[str, PodView, ForceDeletePolicy | None, str]] = [
    ("no policy", _pod("gone", phase="Unknown"), None, N.NOT_CONFIGURED),
    ("node gone", _pod("gone", phase="Unknown"), SILENT_POLICY, N.NODE_GONE),
    ("node live, phase Unknown", _pod("live", phase="Unknown"), SILENT_POLICY, N.NODE_HEALTHY),
    ("node live, Ready withdrawn", _pod("live"), SILENT_POLICY, N.NODE_HEALTHY),
    ("node dying, Ready withdrawn", _pod("dying"), SILENT_POLICY, N.NODE_NOT_DEAD_LONG_ENOUGH),
    ("unscheduled, Ready withdrawn", _pod(""), SILENT_POLICY, N.UNSCHEDULED),
    ("terminating, node gone, overdue", _pod("gone", OVERDUE, phase="Unknown"), SILENT_POLICY, N.NODE_GONE),
    (
        "terminating, node gone, pinned",
        _pod("gone", OVERDUE, finalizers=["example.com/keep"], phase="Unknown"),
        SILENT_POLICY,
        N.FOREIGN_FINALIZERS,
    ),
    ("terminating, node gone, within grace", _pod("gone", NOW), SILENT_POLICY, N.WITHIN_GRACE),
]


@pytest.mark.parametrize(("name", "pod", "policy", "want"), SILENT, ids=[s[0] for s in SILENT])
def test_read_silent_pod(name: str, pod: PodView, policy: ForceDeletePolicy | None, want: str) -> None:
    """Go: same file, TestReadSilentPod, entry ``name``, its class column (ours ``sweep_frees``, Go's
    ``SweepFreesUnknownPod`` reading): node death for a pod nobody asked to delete, the
    stuck-Terminating class for one on its way out. Its ``held`` column (``SilentPodHeld``) is not
    mapped: ours decides the hold in ``planner/holds.py`` from the Node as well."""
    nodes = {
        "live": _node("live", "True", timedelta(seconds=10), False),
        "dying": _node("dying", "Unknown", timedelta(minutes=1), False),
    }
    assert N.sweep_frees(nodes, pod, policy, NOW).kind == want
