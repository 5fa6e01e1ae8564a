"""Clean up (drain first, finalizer lifted, then the namespace) and a render block that heals on its own."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import yaml
from helpers import (
    GATE,
    REPO,
    apply,
    condition,
    events,
    example_replica,
    live_pods,
    replica,
    serving,
)
from reconciler_proc import Reconciler

from testbed.testing import Cluster


def _watch_pods(cluster: Cluster, ns: str, seen: list[dict[str, Any]], stop: threading.Event) -> None:
    rv = cluster.raw.get(f"/api/v1/namespaces/{ns}/pods")["metadata"]["resourceVersion"]
    while not stop.is_set():
        for ev in cluster.raw.watch(f"/api/v1/namespaces/{ns}/pods", resource_version=rv, timeout_seconds=2):
            if ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                seen.append(ev)
                rv = ev["object"]["metadata"]["resourceVersion"]


def test_delete_drains_each_pod_before_deleting_it_and_lifts_the_finalizer(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    demo = f"llama-demo-{uuid.uuid4().hex[:6]}"
    assert cluster.kubectl("create", "namespace", demo).stdout.strip() == f"namespace/{demo} created"
    rec = reconcilers("--namespace", demo)
    apply(cluster, example_replica(demo, replicas=2))
    rec.wait(
        "two serving pods", lambda: len([p for p in live_pods(cluster, demo) if serving(p)]) == 2, timeout=60
    )

    seen: list[dict[str, Any]] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_pods, args=(cluster, demo, seen, stop), daemon=True)
    watcher.start()
    try:
        out = cluster.kubectl(
            "delete", "inferencereplica", "llama-pool", "-n", demo, "--timeout=50s", check=False
        )
        assert out.returncode == 0, f"{out.stderr}\n{rec.tail()}"
        assert out.stdout.strip() == f'inferencereplica.ome.io "llama-pool" deleted from {demo} namespace'
    finally:
        stop.set()
        watcher.join(10)
    assert live_pods(cluster, demo) == []
    svcs = cluster.raw.get(f"/api/v1/namespaces/{demo}/services")["items"]
    assert [s["metadata"]["name"] for s in svcs] == []
    # Every pod left rotation (gate False) before it was deleted.
    first_deleting: dict[str, dict[str, Any]] = {}
    for ev in seen:
        pod = ev["object"]
        if pod["metadata"].get("deletionTimestamp") or ev["type"] == "DELETED":
            first_deleting.setdefault(pod["metadata"]["name"], pod)
    assert sorted(first_deleting) == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"]
    for name, pod in first_deleting.items():
        assert condition(pod, GATE).get("status") == "False", f"{name} deleted while still in rotation"
    reasons = [e["reason"] for e in events(cluster, demo)]
    assert "TeardownBlocked" in reasons

    out = cluster.kubectl("delete", "namespace", demo, "--timeout=50s", check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f'namespace "{demo}" deleted'


def test_missing_model_blocks_with_model_not_found_then_renders_once_it_exists(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    model_name = "llama-late"
    apply(cluster, example_replica(namespace, modelRef={"name": model_name, "kind": "BaseModel"}))

    def blocked() -> dict[str, Any] | None:
        cond = condition(replica(cluster, namespace), "Ready")
        return cond if cond.get("reason") == "ModelNotFound" else None

    cond = rec.wait("Ready=False ModelNotFound", blocked, timeout=30)
    assert cond["status"] == "False"
    assert model_name in cond["message"]
    warning = rec.wait(
        "a ModelNotFound Warning event",
        lambda: [e for e in events(cluster, namespace) if e["reason"] == "ModelNotFound"],
    )
    assert warning[0]["type"] == "Warning"
    assert warning[0]["message"] == cond["message"]
    assert live_pods(cluster, namespace) == []

    # Create the model (the agent marks it Ready through the status subresource): no touch on the replica.
    cluster_model = yaml.safe_load((REPO / "examples" / "catalog" / "llama-3-2-1b-instruct.yaml").read_text())
    model = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "BaseModel",
        "metadata": {"name": model_name, "namespace": namespace},
        "spec": cluster_model["spec"],
    }
    apply(cluster, model)
    cluster.raw.patch(
        f"/apis/ome.io/v1beta1/namespaces/{namespace}/basemodels/{model_name}/status",
        {"status": cluster_model["status"]},
    )
    pod = rec.wait("the pod to be created", lambda: (p := live_pods(cluster, namespace)) and p[0], timeout=30)
    # The model agent labels the nodes that hold the weights; the pod selects on that label.
    for key, value in (pod["spec"].get("nodeSelector") or {}).items():
        cluster.kubectl("label", "nodes", "--all", "--overwrite", f"{key}={value}")
    rec.wait(
        "Ready=True after the model appeared",
        lambda: condition(replica(cluster, namespace), "Ready").get("status") == "True",
        timeout=60,
    )
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == ["llama-pool-engine-0-default-0"]
