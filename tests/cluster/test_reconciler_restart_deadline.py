"""A gang Restart that runs out of its deadline, on the real control plane: the Failed row keeps it.

OME's Go (``workload/escalation/escalation.go`` ``Run``, the deadline backstop of an attempt
``disposableAttempt`` refuses; ``status/decision.go`` ``StampFailedKeepingOperation`` @ 8263d0c7): a
Restart past ``instanceReadyTimeout`` is stamped ``Failed`` with its operation left in place, so whoever
reads the row sees what was in flight; one ``InstanceFailed`` Warning says so. Before issue 37's goY ours
cleared the operation and rebuilt the Instance through a fresh ``Create``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers import apply, events, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster, gang_replica

WORKER = "llama-pool-engine-0-worker-0"


def _row(cluster: Cluster, ns: str) -> dict[str, Any]:
    rows = (replica(cluster, ns).get("status") or {}).get("instanceStatuses") or []
    return dict(rows[0]) if rows else {}


def test_a_restart_past_its_deadline_is_failed_with_its_operation_kept(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(
        cluster,
        gang_replica(
            "llama-pool",
            namespace,
            "engine:v1",
            gpus=1,
            replicas=1,
            lifecycle={"instanceReadyTimeout": "15s"},
        ),
    )
    rec.wait(
        "the gang Ready",
        lambda: (
            _row(cluster, namespace).get("phase") == "Ready" and not _row(cluster, namespace).get("operation")
        ),
        timeout=120,
    )
    cluster.kubelet.never_ready(WORKER, namespace)  # the rebuilt worker never becomes ready
    try:
        cluster.kubectl("delete", "pod", "-n", namespace, WORKER, "--wait=false")
        rec.wait(
            "the Restart opened", lambda: _row(cluster, namespace).get("phase") == "Restarting", timeout=60
        )
        row = rec.wait(
            "the Restart failed past its deadline",
            lambda: (r := _row(cluster, namespace)).get("phase") == "Failed" and r,
            timeout=120,
        )
        print("the Failed row:", row)
        assert (row.get("operation") or {}).get("type") == "Restart", row
        assert row["lastFailure"], row
        failed = rec.wait(
            "the InstanceFailed Warning",
            lambda: [e["message"] for e in events(cluster, namespace) if e["reason"] == "InstanceFailed"],
            timeout=30,
        )
        print("InstanceFailed:", failed)
        assert "DeadlineExceeded: Restart/CreatePods exceeded InstanceReadyTimeout" in failed[0], failed
    finally:
        cluster.kubelet.heal(WORKER, namespace)
