"""Relocation (``autoMigrate``) on a real control plane: a pod that runs but never becomes ready on one
node is recreated off it, with the replica's audit ledger ConfigMap written first (docs/planner.md,
"Relocation"). A readiness limbo, not a crash loop: OME's newest ``escalation/disposition.go``
(``attemptCrashLooping``) relocates no crash loop, which takes the retry ladder instead."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conftest import CONFIG_NAME, OME_NAMESPACE
from helpers import apply, events, example_replica, live_pods, recorded, replica, serving
from reconciler_proc import Reconciler

from testbed.testing import Cluster

POD = "llama-pool-engine-0-default-0"
CONFIG = f"/api/v1/namespaces/{OME_NAMESPACE}/configmaps/{CONFIG_NAME}"


def _not_in(pod: dict[str, Any]) -> list[str]:
    na = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    return [
        v
        for t in na.get("nodeSelectorTerms") or []
        for e in t.get("matchExpressions") or []
        if e.get("key") == "kubernetes.io/hostname" and e.get("operator") == "NotIn"
        for v in e.get("values") or []
    ]


def test_a_pod_failing_on_one_node_is_recreated_off_it_with_the_ledger_written(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    original = cluster.raw.get(CONFIG)["data"]["lifecycle"]
    lifecycle = json.loads(original)
    lifecycle["autoMigrate"] = {"maxAttempts": 2}
    # The deadline that ends an attempt whose pod never becomes ready (no kubelet reason fires).
    lifecycle["instanceReadyTimeout"] = "15s"
    cluster.raw.patch(CONFIG, {"data": {"lifecycle": json.dumps(lifecycle)}})
    cordoned: list[str] = []
    try:
        rec = reconcilers()
        apply(cluster, example_replica(namespace, replicas=1))
        first = rec.wait(
            "a serving pod", lambda: next((p for p in live_pods(cluster, namespace) if serving(p)), None)
        )
        node_a, uid0 = first["spec"]["nodeName"], first["metadata"]["uid"]
        # Every later pod of this replica on node A runs but never becomes ready; the other nodes are
        # cordoned, so the rebuild of the lost pod can only land on A (the revision has served: the row
        # ran it).
        cluster.kubelet.never_ready(
            lambda p: (
                p["metadata"].get("namespace") == namespace
                and p["spec"].get("nodeName") == node_a
                and p["metadata"].get("uid") != uid0
            )
        )
        cordoned = [n for n in cluster.kubelet.node_names if n != node_a]
        for name in cordoned:
            cluster.kubectl("cordon", name)
        cluster.raw.delete(f"/api/v1/namespaces/{namespace}/pods/{POD}")

        ledger_path = f"/api/v1/namespaces/{namespace}/configmaps/llama-pool-ome-migration-audit"

        def ledger() -> dict[str, Any] | None:
            try:
                return cluster.raw.get(ledger_path)
            except Exception:
                return None

        cm = rec.wait("the relocation ledger", ledger, timeout=60)
        for name in cordoned:
            cluster.kubectl("uncordon", name)
        cordoned = []
        (entry,) = json.loads(cm["data"]["history.json"])["entries"]
        rep = replica(cluster, namespace)
        assert entry["fromNode"] == node_a
        assert entry["reason"] == "AutoRecover"
        assert entry["revision"] == rep["status"]["instanceStatuses"][0]["runningRevision"]
        assert cm["metadata"]["labels"] == {"ome.io/managed-by": "OMENative"}
        (owner,) = cm["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"], owner["controller"]) == (
            "InferenceReplica",
            rep["metadata"]["uid"],
            True,
        )
        triggered = [
            e["message"]
            for e in recorded(cluster, namespace, "AutoMigrationTriggered")
            if e["reason"] == "AutoMigrationTriggered"
        ]
        assert triggered == [
            "OMENative component=engine instance=0 relocation directive recorded: attempt 1/2, rebuild steered "
            f"off node {node_a} (uuid={entry['requestUUID']})"
        ]

        moved = rec.wait(
            "the rebuilt pod serving off the failing node",
            lambda: next(
                (p for p in live_pods(cluster, namespace) if serving(p) and p["spec"]["nodeName"] != node_a),
                None,
            ),
            timeout=45,
        )
        assert _not_in(moved) == [node_a]
        records = replica(cluster, namespace)["status"]["migrations"]
        assert [(m["trigger"], m["phase"], m["fromNode"], m["requestUUID"]) for m in records] == [
            ("Auto", "Relocated", node_a, entry["requestUUID"])
        ]
        # Ready again with no operation: the placement is proven, the directive is pruned.
        rec.wait(
            "the ledger pruned",
            lambda: (c := ledger()) is not None and not json.loads(c["data"]["history.json"]).get("entries"),
            timeout=30,
        )
    finally:
        for name in cordoned:
            cluster.kubectl("uncordon", name)
        cluster.kubelet.clear_behaviors()
        cluster.raw.patch(CONFIG, {"data": {"lifecycle": original}})


def test_a_crash_loop_on_one_node_takes_the_retry_ladder_and_is_not_relocated(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """OME's newest ``disposition.go`` (``attemptCrashLooping``): a container that keeps exiting does so
    on any node, so the crash loop is counted on the revision's retry ladder; no ledger, no
    ``AutoMigrationTriggered``, no relocation record, even with a relocation budget and a served
    revision."""
    original = cluster.raw.get(CONFIG)["data"]["lifecycle"]
    lifecycle = json.loads(original)
    lifecycle["autoMigrate"] = {"maxAttempts": 2}
    cluster.raw.patch(CONFIG, {"data": {"lifecycle": json.dumps(lifecycle)}})
    cordoned: list[str] = []
    try:
        rec = reconcilers()
        apply(cluster, example_replica(namespace, replicas=1))
        first = rec.wait(
            "a serving pod", lambda: next((p for p in live_pods(cluster, namespace) if serving(p)), None)
        )
        node_a, uid0 = first["spec"]["nodeName"], first["metadata"]["uid"]
        cluster.kubelet.crash_loop(
            lambda p: (
                p["metadata"].get("namespace") == namespace
                and p["spec"].get("nodeName") == node_a
                and p["metadata"].get("uid") != uid0
            )
        )
        cordoned = [n for n in cluster.kubelet.node_names if n != node_a]
        for name in cordoned:
            cluster.kubectl("cordon", name)
        cluster.raw.delete(f"/api/v1/namespaces/{namespace}/pods/{POD}")

        blocks = rec.wait(
            "the crash counted on the retry ladder",
            lambda: replica(cluster, namespace).get("status", {}).get("retryBlocks"),
            timeout=60,
        )
        rep = replica(cluster, namespace)
        (block,) = blocks
        assert block["targetRevision"] == rep["status"]["instanceStatuses"][0]["runningRevision"]
        assert block["reason"] == "CrashLoopBackOff"
        ledger_path = f"/api/v1/namespaces/{namespace}/configmaps/llama-pool-ome-migration-audit"
        try:
            cm: dict[str, Any] | None = cluster.raw.get(ledger_path)
        except Exception:
            cm = None
        assert cm is None or not json.loads(cm["data"]["history.json"]).get("entries")
        assert not rep["status"].get("migrations")
        assert not [e for e in events(cluster, namespace) if e["reason"] == "AutoMigrationTriggered"]
    finally:
        for name in cordoned:
            cluster.kubectl("uncordon", name)
        cluster.kubelet.clear_behaviors()
        cluster.raw.patch(CONFIG, {"data": {"lifecycle": original}})
