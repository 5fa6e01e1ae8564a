"""Relocation (``autoMigrate``) on a real control plane: a pod that keeps failing on one node is recreated
off it, with the replica's audit ledger ConfigMap written first (docs/planner.md, "Relocation")."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conftest import CONFIG_NAME, OME_NAMESPACE
from helpers import apply, events, example_replica, live_pods, replica, serving
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
    cluster.raw.patch(CONFIG, {"data": {"lifecycle": json.dumps(lifecycle)}})
    cordoned: list[str] = []
    try:
        rec = reconcilers()
        apply(cluster, example_replica(namespace, replicas=1))
        first = rec.wait(
            "a serving pod", lambda: next((p for p in live_pods(cluster, namespace) if serving(p)), None)
        )
        node_a, uid0 = first["spec"]["nodeName"], first["metadata"]["uid"]
        # Every later pod of this replica on node A crash-loops; the other nodes are cordoned, so the
        # rebuild of the lost pod can only land on A (the revision has served: the row ran it).
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

        ledger_path = f"/api/v1/namespaces/{namespace}/configmaps/llama-pool-ome-migration-audit"

        def ledger() -> dict[str, Any] | None:
            try:
                return cluster.raw.get(ledger_path)
            except Exception:
                return None

        cm = rec.wait("the relocation ledger", ledger, timeout=45)
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
            e["message"] for e in events(cluster, namespace) if e["reason"] == "AutoMigrationTriggered"
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
