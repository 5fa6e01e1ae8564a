"""A stored status this controller cannot read as rows (OME's ColumnarV2 encoding), on the real control
plane: the replica is left alone until the status is repaired. Go: ome-projects/ome
``pkg/controller/v1beta1/inferencereplica/status_reader.go`` @ 614ba948 ``instanceStatusDecodeError``
and ``reconciler.go`` @ ae43378d ``Reconcile`` (a manager without a ColumnarV2 bound fails closed,
``status_reader_test.go`` ``TestReconcileFailsClosedOnUndecodableColumnarV2`` "no bound configured");
the rule is pinned in ``tests/goparity/test_inferencereplica_status_reader.py``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from helpers import apply, events, example_replica, live_pods, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster

POD = "llama-pool-engine-0-default-0"


def _settled(cluster: Cluster, ns: str) -> bool:
    st = replica(cluster, ns).get("status") or {}
    rows = st.get("instanceStatuses") or []
    return len(rows) == 1 and rows[0]["phase"] == "Ready" and st.get("servingReplicas") == 1


def _patch_status(cluster: Cluster, ns: str, ops: list[dict[str, Any]]) -> None:
    cluster.kubectl(
        "patch", "inferencereplica", "llama-pool", "-n", ns, "--subresource=status", "--type=json",
        "-p", json.dumps(ops),
    )  # fmt: skip


def test_a_columnar_status_suspends_the_replica_until_it_is_repaired(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=1))
    rec.wait("Ready", lambda: _settled(cluster, namespace), timeout=60)
    revision = replica(cluster, namespace)["status"]["instanceStatuses"][0]["runningRevision"]
    columns = {
        "members": "0",
        "phases": [{"value": "Ready", "indexes": "0"}],
        "runningRevisions": [{"value": revision, "indexes": "0"}],
        "incarnations": [{"value": 1, "indexes": "0"}],
    }
    _patch_status(
        cluster,
        namespace,
        [
            {"op": "remove", "path": "/status/instanceStatuses"},
            {"op": "add", "path": "/status/instanceStatusEncoding", "value": "ColumnarV2"},
            {"op": "add", "path": "/status/instanceStatusColumns", "value": columns},
        ],
    )
    cluster.kubectl("delete", "pod", POD, "-n", namespace, "--wait=true")
    message = rec.wait(
        "the refusal said",
        lambda: next(
            (e["message"] for e in events(cluster, namespace) if e["reason"] == "InstanceStatusDecodeFailed"),
            None,
        ),
        timeout=30,
    )
    time.sleep(3)
    print("refused:", message)
    assert "per-Instance status cannot be decoded (cardinality_limit)" in message
    assert live_pods(cluster, namespace) == []  # the lost Instance is not rebuilt
    st = replica(cluster, namespace)["status"]
    assert st.get("instanceStatusEncoding") == "ColumnarV2"
    assert "instanceStatuses" not in st
    _patch_status(
        cluster,
        namespace,
        [
            {"op": "remove", "path": "/status/instanceStatusEncoding"},
            {"op": "remove", "path": "/status/instanceStatusColumns"},
        ],
    )
    rec.wait("Ready again after the repair", lambda: _settled(cluster, namespace), timeout=60)
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == [POD]
