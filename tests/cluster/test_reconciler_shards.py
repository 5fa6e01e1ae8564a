"""The testbed's kube-apiserver (1.36.3) shards lists and watches by the same FNV-1a ranges as
omereconcile.sharding, and with the ShardedListAndWatch gate off the client-side filter gives the same
partition: the basis of the sharded reconciler (issue 31; the processes themselves are not wired yet)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from omereconcile.controller import Reflector
from omereconcile.kube import Kube
from omereconcile.leader import RangeLeases
from omereconcile.metrics import Metrics
from omereconcile.sharding import (
    NAMESPACE_FIELD,
    ShardSelector,
    balanced_ranges,
    filter_items,
    server_sharded,
    shard_query,
)
from testbed.assets import build
from testbed.controlplane import ControlPlane

NAMESPACES = [f"shard-ns-{i}" for i in range(12)]
LABEL = "omereconcile-test=shards"


@pytest.fixture(scope="module", params=[True, False], ids=["gate-on", "gate-off"])
def apiserver(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    gate_on: bool = request.param
    cp = ControlPlane(
        assets_dir=build(),
        run_dir=tmp_path_factory.mktemp("shards"),
        crd_dirs=(),
        watch_cache=True,
        scheduler=False,
        controller_manager=False,
        cluster_egress=False,
        extra_apiserver_args=(f"--feature-gates=ShardedListAndWatch={'true' if gate_on else 'false'}",),
    )
    cp.start()
    raw = cp.raw()
    for ns in NAMESPACES:
        raw.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        raw.post(
            f"/api/v1/namespaces/{ns}/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "cm", "labels": {"omereconcile-test": "shards"}},
            },
        )
    try:
        yield cp
    finally:
        cp.stop()


def test_sharded_lists_partition_by_namespace(apiserver: ControlPlane) -> None:
    gate_on = "ShardedListAndWatch=true" in " ".join(apiserver.extra_apiserver_args)
    raw = apiserver.raw()
    everything = raw.get("/api/v1/configmaps", labelSelector=LABEL)["items"]
    assert sorted(o["metadata"]["namespace"] for o in everything) == sorted(NAMESPACES)
    seen: list[str] = []
    for r in balanced_ranges(NAMESPACES, 3):
        sel = ShardSelector(NAMESPACE_FIELD, (r,))
        listed = raw.get("/api/v1/configmaps", labelSelector=LABEL, **shard_query(sel))
        assert server_sharded(listed, sel) is gate_on
        mine = listed["items"] if gate_on else filter_items(listed["items"], sel)
        names = sorted(o["metadata"]["namespace"] for o in mine)
        # the server's filter and ours agree object for object
        assert names == sorted(o["metadata"]["namespace"] for o in filter_items(everything, sel))
        assert len(names) == len(NAMESPACES) // 3
        seen += names
    assert sorted(seen) == sorted(NAMESPACES)  # each namespace in exactly one range


def test_sharded_watch_sends_only_the_range(apiserver: ControlPlane) -> None:
    gate_on = "ShardedListAndWatch=true" in " ".join(apiserver.extra_apiserver_args)
    raw = apiserver.raw()
    sel = ShardSelector(NAMESPACE_FIELD, balanced_ranges(NAMESPACES, 3)[:1])
    rv = raw.get("/api/v1/configmaps", labelSelector=LABEL, **shard_query(sel))["metadata"]["resourceVersion"]
    for ns in NAMESPACES:
        raw.post(
            f"/api/v1/namespaces/{ns}/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "watched", "labels": {"omereconcile-test": "shards"}},
            },
        )
    events = [
        e
        for e in raw.watch(
            "/api/v1/configmaps",
            resource_version=rv,
            timeout_seconds=3,
            labelSelector=LABEL,
            **shard_query(sel),
        )
        if e.get("type") == "ADDED"
    ]
    got = sorted(e["object"]["metadata"]["namespace"] for e in events)
    want = sorted(ns for ns in NAMESPACES if sel.matches(ns))
    assert len(want) == len(NAMESPACES) // 3
    if gate_on:
        assert got == want  # the server sent only this range
    else:
        assert got == sorted(NAMESPACES)  # the server ignored the selector ...
        kept = filter_items([e["object"] for e in events], sel)
        assert (
            sorted(o["metadata"]["namespace"] for o in kept) == want
        )  # ... the client-side filter: same result


def test_range_leases_hand_over_on_join_and_after_expiry(apiserver: ControlPlane) -> None:
    # Real Leases on the API server, a shared fake clock so expiry needs no 15 s wait.
    ns = "shard-leases"
    apiserver.raw().post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    kube = Kube.from_kubeconfig(apiserver.kubeconfig)
    t = [1000.0]
    a = RangeLeases(kube, ns, 4, identity="a", clock=lambda: t[0])
    b = RangeLeases(kube, ns, 4, identity="b", clock=lambda: t[0])

    def holders() -> list[str]:
        items = kube.list(f"/apis/coordination.k8s.io/v1/namespaces/{ns}/leases")["items"]
        by_name = {o["metadata"]["name"]: o["spec"].get("holderIdentity") or "" for o in items}
        return [by_name.get(f"omereconcile-shard-4-{i}", "") for i in range(4)]

    a.round(["a"])
    assert holders() == ["a"] * 4
    assert a.acting() == {0, 1, 2, 3}

    t[0] += 2
    b.round(["a", "b"])  # b joins: a's Leases are live, so b takes nothing yet
    assert holders() == ["a"] * 4
    assert b.acting() == frozenset()
    plan = a.round(["a", "b"])  # a is over its share: stops acting on 2, 3, then releases them
    assert plan.release == (2, 3)
    assert a.acting() == {0, 1}
    t[0] += 2
    b.round(["a", "b"])
    assert holders() == ["a", "a", "b", "b"]
    assert b.acting() == {2, 3}

    # a is killed (no more rounds, no release). b may not take 0, 1 before their Leases expire ...
    t[0] += 2
    b.round(["b"])
    assert holders() == ["a", "a", "b", "b"]
    # ... and a's own fence has closed before they do (renew deadline 10 s < lease duration 15 s).
    t[0] += 9
    assert a.acting() == frozenset()
    b.round(["b"])
    assert holders() == ["a", "a", "b", "b"]  # 11 s since b saw a's last renewal: not expired yet
    t[0] += 7  # 18 s since: expired
    b.round(["b"])
    assert holders() == ["b"] * 4
    assert b.acting() == {0, 1, 2, 3}


def test_reflector_keeps_only_its_shard(apiserver: ControlPlane) -> None:
    # The controller's Reflector with a shard: the same store whether the server filters or not.
    gate_on = "ShardedListAndWatch=true" in " ".join(apiserver.extra_apiserver_args)
    sel = ShardSelector(NAMESPACE_FIELD, balanced_ranges(NAMESPACES, 3)[1:2])
    stop = threading.Event()
    events: list[str] = []
    r = Reflector(
        Kube.from_kubeconfig(apiserver.kubeconfig),
        "/api/v1/configmaps",
        "configmaps",
        lambda _t, o: events.append(o["metadata"]["namespace"]),
        stop=stop,
        timeout_seconds=5,
        shard=sel,
        labelSelector=LABEL,
    ).start()
    try:
        assert r.synced.wait(30)
        assert r.server_sharded is gate_on
        raw = apiserver.raw()
        for ns in NAMESPACES:
            raw.post(
                f"/api/v1/namespaces/{ns}/configmaps",
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "reflected", "labels": {"omereconcile-test": "shards"}},
                },
            )
        want = sorted(ns for ns in NAMESPACES if sel.matches(ns))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and r.get((want[-1], "reflected")) is None:
            time.sleep(0.1)
        time.sleep(0.5)  # let any out-of-shard event that would arrive arrive
        assert sorted({o["metadata"]["namespace"] for o in r.items()}) == want
        assert sorted(set(events)) == want
    finally:
        stop.set()
        r.close()


def test_member_leases_find_the_live_processes(apiserver: ControlPlane) -> None:
    ns = "shard-members"
    apiserver.raw().post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    )
    kube = Kube.from_kubeconfig(apiserver.kubeconfig)
    t = [1000.0]
    metrics = Metrics()
    a = RangeLeases(kube, ns, 4, identity="host-a_1234", clock=lambda: t[0], metrics=metrics)
    b = RangeLeases(kube, ns, 4, identity="host-b_5678", clock=lambda: t[0])
    a.round()
    assert a.acting() == {0, 1, 2, 3}
    t[0] += 2
    b.round()  # sees a's member Lease
    assert b.members() == ["host-a_1234", "host-b_5678"]
    a.round()  # sees b's: releases its upper half
    assert a.members() == ["host-a_1234", "host-b_5678"]
    t[0] += 2
    b.round()
    assert a.acting() == {0, 1}
    assert b.acting() == {2, 3}
    held = {
        i: metrics.registry.get_sample_value("omereconcile_shard_ranges", {"range": f"{i}/4"})
        for i in range(4)
    }
    assert held == {0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0}
    # a stops; once its member Lease and range Leases expire in b's view, b holds everything
    for _ in range(3):
        t[0] += 8
        b.round()
    assert b.members() == ["host-b_5678"]
    b.round()
    assert b.acting() == {0, 1, 2, 3}
