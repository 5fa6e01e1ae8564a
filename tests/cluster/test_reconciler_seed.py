"""The seed's Steps 1–3 and Clean up, with ``omereconcile run`` under its own ServiceAccount and deploy/'s RBAC."""

from __future__ import annotations

from collections.abc import Callable

from helpers import (
    apply,
    example_replica,
    live_pods,
    ready_row,
    replica,
    serving_table,
    table,
    wait_ready,
)
from reconciler_proc import Reconciler

from testbed.testing import Cluster


def test_seed_steps_1_to_3_create_check_scale(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    # Step 1: create the replica and wait for Ready.
    assert apply(cluster, example_replica(namespace)) == "inferencereplica.ome.io/llama-pool created"
    assert wait_ready(cluster, namespace, rec.tail) == "inferencereplica.ome.io/llama-pool condition met"

    # Step 2: what OME runs.
    rows = rec.wait(
        "the table to read 1 1 1 1",
        lambda: (r := ready_row(cluster, namespace)) == ["llama-pool", "engine", "1", "1", "1", "1"] and r,
    )
    header = table(cluster, "get", "inferencereplicas", "-n", namespace)[0]
    assert header == ["NAME", "COMPONENT", "DESIRED", "CURRENT", "READY", "AVAILABLE", "AGE"]
    assert rows == ["llama-pool", "engine", "1", "1", "1", "1"]
    pods_table = serving_table(cluster, namespace)
    assert pods_table == [["NAME", "SERVING"], ["llama-pool-engine-0-default-0", "True"]]
    svc = table(
        cluster,
        "get",
        "services",
        "-n",
        namespace,
        "-o",
        "custom-columns=NAME:.metadata.name,TYPE:.spec.type,CLUSTER-IP:.spec.clusterIP",
    )
    assert svc == [["NAME", "TYPE", "CLUSTER-IP"], ["llama-pool-engine-headless", "ClusterIP", "None"]]
    obj = replica(cluster, namespace)
    assert "ome.io/ir-teardown" in obj["metadata"]["finalizers"]
    status = obj["status"]
    assert status["updateRevision"] == status["currentRevision"]
    assert status["labelSelector"]
    assert [r["index"] for r in status["instanceStatuses"]] == [0]

    # Step 3: scale to 2; the new Instance takes index 1.
    out = cluster.kubectl("scale", "inferencereplica", "llama-pool", "-n", namespace, "--replicas=2")
    assert out.stdout.strip() == "inferencereplica.ome.io/llama-pool scaled"
    rec.wait(
        "the table to read 2 2 2 2",
        lambda: ready_row(cluster, namespace) == ["llama-pool", "engine", "2", "2", "2", "2"],
        timeout=90,
    )
    pods_table = serving_table(cluster, namespace)
    assert pods_table == [
        ["NAME", "SERVING"],
        ["llama-pool-engine-0-default-0", "True"],
        ["llama-pool-engine-1-default-0", "True"],
    ]
    assert [p["metadata"]["labels"]["ome.io/instance-index"] for p in live_pods(cluster, namespace)] == [
        "0",
        "1",
    ]
