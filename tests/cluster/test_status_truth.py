"""Status while pods go wrong, on the real control plane: a node whose kubelet stops, a pod deleted on
it that stays Terminating, a create whose pod sits on a silent node (NodeUnknown), then the operator's
force-delete escalation and the replacements on other nodes. Every status the API server shows through
a watch is checked, not only the settled one."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import CONFIG_NAME, OME_NAMESPACE
from helpers import StatusWatch, apply, events, example_replica, pods, replica
from reconciler_proc import Reconciler

from omereconcile.simulate.status_truth import status_claims
from testbed.testing import Cluster

POD = "llama-pool-engine-{}-default-0"
CONFIG = f"/api/v1/namespaces/{OME_NAMESPACE}/configmaps/{CONFIG_NAME}"


def _row(status: dict[str, Any], index: int) -> tuple[Any, ...]:
    row = next(r for r in status.get("instanceStatuses") or [] if r["index"] == index)
    # no readyPodCount: OME never persists it (irstatus.ClearPodDerivedObservations); readyReplicas says it
    assert "readyPodCount" not in row
    return row["phase"], row.get("podCount"), row.get("servingPodCount")


def _ready(status: dict[str, Any]) -> tuple[str, str, str]:
    cond = next(c for c in status.get("conditions") or [] if c["type"] == "Ready")
    return cond["status"], cond["reason"], cond["message"]


def _truthful(statuses: list[dict[str, Any]], replicas: int) -> None:
    for st in statuses:
        wrong = status_claims(st, None, dict.fromkeys(range(replicas), 1))
        assert not wrong, f"{wrong} in {json.dumps(st)[:2000]}"


def _node(cluster: Cluster, ns: str, name: str) -> str:
    return str(cluster.raw.get(f"/api/v1/namespaces/{ns}/pods/{name}")["spec"].get("nodeName") or "")


@pytest.fixture
def silenced(cluster: Cluster) -> Iterator[list[str]]:
    """The nodes a test silences, revived afterwards (the control plane is shared); the operator
    ConfigMap restored too."""
    nodes: list[str] = []
    before = cluster.raw.get(CONFIG)["data"]
    yield nodes
    cluster.raw.patch(CONFIG, {"data": before})
    for n in nodes:
        cluster.kubelet.revive_node(n)
    cluster.kubectl("uncordon", *cluster.kubelet.node_names)
    cluster.kubelet.clear_behaviors()


def _one_more_elsewhere(cluster: Cluster, rec: Reconciler, ns: str, n: int, avoid: list[str]) -> str:
    """Scale to ``n`` with the nodes in ``avoid`` cordoned, so the new pod lands on a node of its own."""
    if avoid:
        cluster.kubectl("cordon", *avoid)
    cluster.kubectl("scale", "inferencereplica", "llama-pool", "-n", ns, f"--replicas={n}")
    name = POD.format(n - 1)

    def bound() -> str | None:
        return next(
            (p["spec"].get("nodeName") for p in pods(cluster, ns) if p["metadata"]["name"] == name), None
        )

    node = rec.wait(f"{name} bound", bound)
    if avoid:
        cluster.kubectl("uncordon", *avoid)
    return node


def test_a_silent_node_a_stuck_deletion_and_node_unknown_until_force_delete(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, silenced: list[str]
) -> None:
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=1))

    def settled(n: int) -> bool:
        st = replica(cluster, namespace).get("status") or {}
        rows = st.get("instanceStatuses") or []
        return (
            len(rows) == n
            and all(r["phase"] == "Ready" and not r.get("operation") for r in rows)
            and (st.get("servingReplicas") == n)
        )

    rec.wait("Instance 0 Ready", lambda: settled(1), timeout=60)
    node_a = _node(cluster, namespace, POD.format(0))
    node_c = _one_more_elsewhere(cluster, rec, namespace, 2, [node_a])
    rec.wait("2 Instances Ready", lambda: settled(2), timeout=60)
    with StatusWatch(cluster, namespace) as watch:
        # 1. Instance 0's node stops reporting: Go keeps the row Ready and the Instance counted ready
        # (ContainersReady stays), drops it from serving, and Ready stays AllInstancesReady.
        silenced.append(node_a)
        start = watch.count()
        cluster.kubelet.silence_node(node_a)
        rec.wait("the serving count drops", lambda: any(_row(s, 0)[2] == 0 for s in watch.since(start)))
        for st in watch.since(start):
            assert _row(st, 0) in (("Ready", 1, 1), ("Ready", 1, 0))
            assert st["readyReplicas"] == 2
            assert _ready(st) == ("True", "AllInstancesReady", "2/2 Instances Ready")
        assert watch.since(start)[-1]["servingReplicas"] == 1

        # 2. The user deletes that pod: it stays Terminating (no kubelet finishes it), and its row stays
        # Ready with the pod's counts: a Terminating pod still counts as live.
        start = watch.count()
        cluster.kubectl("delete", "pod", POD.format(0), "-n", namespace, "--grace-period=1", "--wait=false")
        rec.wait(
            "pod 0 Terminating",
            lambda: any(
                p["metadata"]["name"] == POD.format(0) and p["metadata"].get("deletionTimestamp")
                for p in pods(cluster, namespace)
            ),
        )
        # 3. A new Instance whose pod lands on a node that then goes silent: under a force-delete policy
        # whose threshold is not yet reached the create waits NodeUnknown (Go's
        # evidence.SilentKubeletTargetPods reads a withdrawn Ready only under a policy).
        data = dict(cluster.raw.get(CONFIG)["data"])
        lifecycle = json.loads(data["lifecycle"])
        lifecycle["forceDelete"] = {"overdueSlack": "1h", "nodeUnreachableThreshold": "1h"}
        cluster.raw.patch(CONFIG, {"data": {"lifecycle": json.dumps(lifecycle)}})
        cluster.kubelet.never_ready(POD.format(2), namespace)
        node_b = _one_more_elsewhere(cluster, rec, namespace, 3, [node_c])
        silenced.append(node_b)
        cluster.kubelet.silence_node(node_b)
        cluster.kubelet.heal(POD.format(2), namespace)  # its successor comes up normally

        def waiting(st: dict[str, Any]) -> bool:
            row = next((r for r in st.get("instanceStatuses") or [] if r["index"] == 2), {})
            return (row.get("operation") or {}).get("waiting") == "NodeUnknown"

        rec.wait("Instance 2 waits NodeUnknown", lambda: any(waiting(s) for s in watch.since(start)))
        for st in watch.since(start):
            assert _row(st, 0) == ("Ready", 1, 0)
            assert st["readyReplicas"] >= 1  # the Terminating pod still counts ready
        row2 = next(r for r in watch.since(start)[-1]["instanceStatuses"] if r["index"] == 2)
        assert row2["phase"] == "Creating"
        assert "deadline" not in row2["operation"]
        assert row2["lastFailure"]["reason"] == "NodeUnknown"
        # The node's Ready=Unknown and its unreachable taints are two writes (the node lifecycle controller
        # marks the status first and taints on a later pass), so the hold may have been seen before the taint.
        assert re.fullmatch(
            f"NodeUnknown: pod {re.escape(POD.format(2))} is on node {re.escape(node_b)} "
            r"\(Ready=Unknown(, unreachable taint)?\); its kubelet has stopped reporting, so the name is held "
            r"rather than recycled",
            row2["lastFailure"]["message"],
        ), row2["lastFailure"]["message"]

        # 4. The operator turns force-delete on: both pods go (grace 0), with Go's Warnings, and their
        # Instances come back on the nodes still reporting.
        start = watch.count()
        data = dict(cluster.raw.get(CONFIG)["data"])
        lifecycle = json.loads(data["lifecycle"])
        lifecycle["forceDelete"] = {"overdueSlack": "1s", "nodeUnreachableThreshold": "2s"}
        cluster.raw.patch(CONFIG, {"data": {"lifecycle": json.dumps(lifecycle)}})
        rec.wait("3 Instances Ready", lambda: settled(3), timeout=90)
        for i in range(3):
            assert _node(cluster, namespace, POD.format(i)) not in (node_a, node_b)
        forced = sorted(
            e["message"]
            for e in events(cluster, namespace)
            if e["reason"] == "PodForceDeleted" and e["type"] == "Warning"
        )
        assert len(forced) == 2, forced
        assert forced[0].startswith(
            f"OMENative component=engine instance=0: force-deleted stuck-Terminating pod {POD.format(0)} on "
            f"node {node_a} (evidence=node-unreachable-taint, "
        )
        assert forced[-1] == (
            f"OMENative component=engine instance=2: force-deleted pod {POD.format(2)} held in phase "
            f"Unknown on node {node_b} (evidence=node-unreachable-taint)"
        )
        phases = [_row(s, 0)[0] for s in watch.since(start)]
        firsts = [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p]
        # Instance 0's row once its pod is force-deleted: rebuilt in the pass that finds the pod gone, as
        # Go's unpaused Create pass does (no Pending pass first; workload/plan_decision.go Plan).
        assert firsts[-3:] == ["Ready", "Creating", "Ready"], firsts
        _truthful(watch.since(0), 3)
