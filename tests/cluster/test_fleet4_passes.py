"""On a real API server: with the update filters, the follow-up passes and the pod-write expectations
in place, a surge roll still completes on its own, and no pod create is sent twice."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers import count_answers, roll_pool, running_controller, settled_surge_pool

from omereconcile.cluster.kube import Kube
from omereconcile.controller import Controller
from testbed.testing import Cluster, wait_for

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
    with running_controller(cluster, namespace, request.param) as running:
        yield running


def test_a_surge_roll_completes_without_echo_passes_and_creates_each_pod_once(
    cluster: Cluster, namespace: str, controller: tuple[Controller, Kube]
) -> None:
    ctrl, kube = controller
    answered = count_answers(kube)
    path = settled_surge_pool(cluster, ctrl, namespace, N)
    expired0 = ctrl.expectations.expired
    creates = answered[("POST", "pods", 201)]
    assert creates == N
    assert answered[("POST", "pods", 409)] == 0  # the pool's creation sent each pod once too

    # An echo of a status write that the controller recognises enqueues nothing; the pass that wrote
    # asks for the next one itself, so the roll moves on with no other event (resync is an hour away).
    roll_pool(cluster, path, timeout=240)
    wait_for(
        "old pods gone",
        lambda: len(cluster.raw.get(f"/api/v1/namespaces/{namespace}/pods")["items"]) == N,
        timeout=60,
    )
    assert answered[("POST", "pods", 201)] - creates == N  # one replacement per Instance
    assert answered[("POST", "pods", 409)] == 0  # never sent again from a cache that had not seen it
    assert ctrl.expectations.expired == expired0  # every pod write was seen in the cache, none waited out
