"""A gang restart that has not rebuilt yet when the image changes, on the real control plane.

OME's Go (``workload/ops/restart.go`` ``rebuildFollowsTarget``, ``status/decision.go``
``StampRestartRevision`` @ 8263d0c7): an open Restart that has created no pod of its rebuild yet renders
the roll target the row is off, and records it as the row's running revision before the first create, so
the Instance is rebuilt once, on the new revision. The old leader is held Terminating by a finalizer of the
test's so the image change lands while the restart is still draining (the order is then certain).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers import IREP, apply, live_pods, recorded, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster, gang_replica

HOLD = "example.com/test-hold"
LEADER = "llama-pool-engine-0-leader-0"
WORKER = "llama-pool-engine-0-worker-0"


def _rows(cluster: Cluster, ns: str) -> list[dict[str, Any]]:
    return list((replica(cluster, ns).get("status") or {}).get("instanceStatuses") or [])


def _settled_on(cluster: Cluster, ns: str, image: str) -> bool:
    st = replica(cluster, ns).get("status") or {}
    rows = st.get("instanceStatuses") or []
    pods = live_pods(cluster, ns)
    return (
        st.get("currentRevision") == st.get("updateRevision")
        and len(rows) == 1
        and rows[0].get("phase") == "Ready"
        and not rows[0].get("operation")
        and len(pods) == 2
        and all(p["spec"]["containers"][0]["image"] == image for p in pods)
    )


def test_a_restart_that_has_not_rebuilt_yet_rebuilds_once_at_the_new_image(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, gang_replica("llama-pool", namespace, "engine:v1", gpus=1, replicas=1))
    rec.wait("the gang Ready", lambda: _settled_on(cluster, namespace, "engine:v1"), timeout=120)
    old_revision = replica(cluster, namespace)["status"]["updateRevision"]
    pod_path = f"/api/v1/namespaces/{namespace}/pods"
    cluster.raw.patch(f"{pod_path}/{LEADER}", {"metadata": {"finalizers": [HOLD]}})
    cluster.kubectl("delete", "pod", "-n", namespace, WORKER, "--wait=false")

    def leader_held() -> bool:
        rows = _rows(cluster, namespace)
        leader = cluster.raw.get(pod_path)["items"]
        held = [
            p for p in leader if p["metadata"]["name"] == LEADER and p["metadata"].get("deletionTimestamp")
        ]
        return bool(rows) and rows[0].get("phase") == "Restarting" and bool(held)

    rec.wait("the restart draining, its old leader held Terminating", leader_held, timeout=120)
    runners = replica(cluster, namespace)["spec"]["runners"]
    for r in runners:
        r["template"]["spec"]["containers"][0]["image"] = "engine:v2"
    cluster.raw.patch(f"{IREP.format(ns=namespace)}/llama-pool", {"spec": {"runners": runners}})
    rec.wait(
        "the new revision observed",
        lambda: (replica(cluster, namespace).get("status") or {}).get("updateRevision") != old_revision,
        timeout=60,
    )
    seen: list[tuple[str, str]] = []

    def watch_rows() -> bool:
        for row in _rows(cluster, namespace):
            op = row.get("operation") or {}
            seen.append((row.get("phase", ""), op.get("type", "")))
        return _settled_on(cluster, namespace, "engine:v2")

    cluster.raw.patch(f"{pod_path}/{LEADER}", {"metadata": {"finalizers": None}})
    rec.wait("the gang Ready on engine:v2", watch_rows, timeout=180)
    row = _rows(cluster, namespace)[0]
    new_revision = replica(cluster, namespace)["status"]["updateRevision"]
    assert (row["incarnation"], row["runningRevision"]) == (2, new_revision)
    assert all(kind != "Update" for _, kind in seen), seen  # one rebuild, no second roll
    for pod in live_pods(cluster, namespace):
        assert pod["metadata"]["labels"]["ome.io/instance-incarnation"] == "2"
    reasons = [e["reason"] for e in recorded(cluster, namespace, "RestartCompleted")]
    assert not any(r.startswith("GangSurge") for r in reasons), reasons
