"""On a real API server: with the update filters, the follow-up passes and the pod-write expectations
in place, a surge roll still completes on its own, and no pod create is sent twice."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import delete_replicas

from omereconcile.controller import Controller
from omereconcile.kube import Kube
from testbed.testing import Cluster, replica_settled, runners_replica, wait_for

IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"
N = 4


class NoStatusEchoes(Controller):
    """Every replica update that leaves the spec alone enqueues nothing, as if each status write's echo
    were recognised (in a live run some echoes beat the write's response and still enqueue a pass)."""

    def _replica_relevant(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        generation = lambda o: (o.get("metadata") or {}).get("generation")  # noqa: E731
        return bool(generation(old) != generation(new))


@pytest.fixture(params=[Controller, NoStatusEchoes], ids=["controller", "no-status-echoes"])
def controller(
    cluster: Cluster, namespace: str, request: pytest.FixtureRequest
) -> Iterator[tuple[Controller, Kube]]:
    kube = Kube.from_kubeconfig(cluster.cp.kubeconfig)
    cls = request.param
    ctrl = cls(kube, namespaces=[namespace], resync_period=3600, workers=2, watch_timeout=20)
    ctrl.start()
    try:
        yield ctrl, kube
    finally:
        delete_replicas(cluster, namespace)  # while the controller runs, so the finalizers are lifted
        ctrl.stop()


def test_a_surge_roll_completes_without_echo_passes_and_creates_each_pod_once(
    cluster: Cluster, namespace: str, controller: tuple[Controller, Kube]
) -> None:
    ctrl, kube = controller
    answered: Counter[tuple[str, str, int]] = Counter()
    count_request = kube.on_request

    def on_request(verb: str, resource: str, status: int) -> None:
        answered[(verb, resource, status)] += 1
        if count_request is not None:
            count_request(verb, resource, status)

    kube.on_request = on_request
    path = IREP.format(ns=namespace)
    lc = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}
    cluster.raw.post(path, runners_replica("pool", namespace, "engine:v1", replicas=N, lifecycle=lc))
    wait_for("the pool settled", lambda: replica_settled(cluster.raw.get(f"{path}/pool")), timeout=120)
    wait_for("the queue to drain", ctrl.queue.idle, timeout=30)
    expired0 = ctrl.expectations.expired
    creates = answered[("POST", "pods", 201)]
    assert creates == N
    assert answered[("POST", "pods", 409)] == 0  # the pool's creation sent each pod once too

    obj = cluster.raw.get(f"{path}/pool")
    obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
    cluster.raw.put(f"{path}/pool", obj)
    # An echo of a status write that the controller recognises enqueues nothing; the pass that wrote
    # asks for the next one itself, so the roll moves on with no other event (resync is an hour away).
    wait_for(
        "the pool rolled",
        lambda: (
            replica_settled(o := cluster.raw.get(f"{path}/pool"))
            and o["status"]["currentRevision"] != obj["status"]["currentRevision"]
        ),
        timeout=240,
    )
    wait_for(
        "old pods gone",
        lambda: len(cluster.raw.get(f"/api/v1/namespaces/{namespace}/pods")["items"]) == N,
        timeout=60,
    )
    assert answered[("POST", "pods", 201)] - creates == N  # one replacement per Instance
    assert answered[("POST", "pods", 409)] == 0  # never sent again from a cache that had not seen it
    assert ctrl.expectations.expired == expired0  # every pod write was seen in the cache, none waited out
