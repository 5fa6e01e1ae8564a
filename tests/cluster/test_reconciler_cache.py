"""Reads from the watch caches: a settled replica's pass costs one request (the replica's GET, the
journal read fresh) and no write, and rollouts still complete from cached pods, slices and revisions."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from helpers import running_controller

from omereconcile.cluster.kube import Kube
from omereconcile.controller import Controller
from testbed.testing import Cluster, replica_settled, runners_replica, wait_for

IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"


@pytest.fixture
def controller(cluster: Cluster, namespace: str) -> Iterator[tuple[Controller, Kube]]:
    with running_controller(cluster, namespace, workers=3) as running:
        yield running


def test_a_resync_of_settled_replicas_costs_one_read_each_and_no_write(
    cluster: Cluster, namespace: str, controller: tuple[Controller, Kube]
) -> None:
    ctrl, kube = controller
    path = IREP.format(ns=namespace)
    names = [f"r{i}" for i in range(4)]
    for n in names:
        cluster.raw.post(path, runners_replica(n, namespace, "engine:v1", replicas=2))
    for n in names:
        wait_for(f"{n} settled", lambda n=n: replica_settled(cluster.raw.get(f"{path}/{n}")), timeout=90)
    # Let the passes that the last status writes triggered finish, and the counts held back by the
    # last passes reach the API (coalesce.py), then measure one resync.
    wait_for("the queue to drain", ctrl.queue.idle, timeout=30)
    time.sleep(1.5)
    wait_for("the counts published", lambda: ctrl.coalescer.pending() == 0 and ctrl.queue.idle(), timeout=30)
    writes0, reads0, passes0 = kube.writes, kube.reads, ctrl.passes
    ctrl.enqueue_all()
    wait_for("the resync", lambda: ctrl.passes - passes0 >= len(names) and ctrl.queue.idle(), timeout=30)
    assert ctrl.passes - passes0 == len(names)
    assert kube.writes - writes0 == 0
    assert kube.reads - reads0 == len(names)  # the replica's GET; pods, slices, revisions from the caches

    # A rollout driven from the caches still completes: a new image rolls every Instance.
    for n in names[:2]:
        obj = cluster.raw.get(f"{path}/{n}")
        obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
        cluster.raw.put(f"{path}/{n}", obj)

    def rolled(n: str) -> bool:
        obj = cluster.raw.get(f"{path}/{n}")
        pods = cluster.raw.get(
            f"/api/v1/namespaces/{namespace}/pods", labelSelector=f"ome.io/inferenceservice={n}"
        )["items"]
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
        return (
            replica_settled(obj)
            and len(live) == 2
            and all(p["spec"]["containers"][0]["image"] == "engine:v2" for p in live)
        )

    for n in names[:2]:
        wait_for(f"{n} rolled to engine:v2", lambda n=n: rolled(n), timeout=120)
