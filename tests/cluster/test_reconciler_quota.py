"""A ResourceQuota on ``nvidia.com/gpu`` refuses a scale-up: the Instance waits as ``QuotaExceeded``
with its clock parked, announced once; raising the quota releases it (01 §4.6, lessons row 13)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from helpers import apply, events, example_replica, live_pods, replica, serving
from reconciler_proc import Reconciler

from testbed.testing import Cluster

QUOTA = "gpu"


def _quota(cluster: Cluster, ns: str, gpus: int) -> None:
    apply(
        cluster,
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": QUOTA, "namespace": ns},
            "spec": {"hard": {"requests.nvidia.com/gpu": str(gpus)}},
        },
    )


def _quota_enforced(cluster: Cluster, ns: str, gpus: int) -> bool:
    """The quota controller has published the limit (admission refuses every pod until it has)."""
    quota = cluster.raw.get(f"/api/v1/namespaces/{ns}/resourcequotas/{QUOTA}")
    return bool((quota.get("status") or {}).get("hard", {}).get("requests.nvidia.com/gpu") == str(gpus))


def _row(cluster: Cluster, ns: str, index: int) -> dict[str, Any]:
    rows = replica(cluster, ns).get("status", {}).get("instanceStatuses") or []
    return next((r for r in rows if r.get("index") == index), {})


def _waiting_on_quota(rec: Reconciler, cluster: Cluster, ns: str, index: int) -> dict[str, Any]:
    """Wait until Instance ``index``'s operation waits on ``QuotaExceeded``; return the operation."""
    op: dict[str, Any] = rec.wait(
        f"instance {index} waiting on quota",
        lambda: (
            (o := _row(cluster, ns, index).get("operation") or {}).get("waiting") == "QuotaExceeded" and o
        ),
        timeout=90,
    )
    return op


def _blocked(cluster: Cluster, ns: str) -> list[dict[str, Any]]:
    return [e for e in events(cluster, ns) if e.get("reason") == "InstanceQuotaBlocked"]


def test_a_gpu_quota_blocks_the_scale_up_then_releases_it_when_raised(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _quota(cluster, namespace, 1)
    rec = reconcilers()
    rec.wait("the quota enforced", lambda: _quota_enforced(cluster, namespace, 1), timeout=60)
    # A short readiness deadline: the wait must outlast it without failing the Instance.
    spec_lifecycle = {"instanceReadyTimeout": "15s"}
    apply(cluster, example_replica(namespace, replicas=1, lifecycle=spec_lifecycle))
    rec.wait("one serving pod", lambda: [p for p in live_pods(cluster, namespace) if serving(p)], timeout=90)
    first = live_pods(cluster, namespace)[0]["metadata"]["uid"]

    apply(cluster, example_replica(namespace, replicas=2, lifecycle=spec_lifecycle))
    op = _waiting_on_quota(rec, cluster, namespace, 1)
    assert "deadline" not in op  # the clock is parked
    assert op["capacityRefusedAt"]
    # Well past the 15 s deadline: still waiting, never failed, announced once, the first pod untouched.
    time.sleep(25)
    row = _row(cluster, namespace, 1)
    assert row["phase"] == "Creating"
    assert row["operation"]["waiting"] == "QuotaExceeded"
    assert "lastFailure" not in row
    (blocked,) = _blocked(cluster, namespace)
    assert blocked["type"] == "Normal"
    assert blocked["message"].startswith("OMENative component=engine instance=1 waiting on capacity: ")
    assert "exceeded quota: gpu" in blocked["message"]
    reasons = {e.get("reason") for e in events(cluster, namespace)}
    assert "InstanceFailed" not in reasons
    pods = live_pods(cluster, namespace)
    assert [p["metadata"]["name"] for p in pods] == ["llama-pool-engine-0-default-0"]
    assert pods[0]["metadata"]["uid"] == first
    assert serving(pods[0])

    _quota(cluster, namespace, 2)
    rec.wait("the raised quota enforced", lambda: _quota_enforced(cluster, namespace, 2), timeout=60)
    rec.wait(
        "two serving pods once the quota is raised",
        lambda: len([p for p in live_pods(cluster, namespace) if serving(p)]) == 2,
        timeout=150,
    )
    rec.wait("instance 1 Ready", lambda: _row(cluster, namespace, 1).get("phase") == "Ready", timeout=60)
    assert "operation" not in _row(cluster, namespace, 1)
    assert len(_blocked(cluster, namespace)) == 1
    assert live_pods(cluster, namespace)[0]["metadata"]["uid"] == first
