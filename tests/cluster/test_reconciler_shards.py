"""The testbed's kube-apiserver (1.36.3) shards lists and watches by the same FNV-1a ranges as
omereconcile.sharding, and with the ShardedListAndWatch gate off the client-side filter gives the same
partition; and `omereconcile run --shards` processes share a fleet, each replica written by the holder of
its range alone, a killed process's ranges moving only after their Leases expire (issue 31)."""

from __future__ import annotations

import itertools
import threading
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from reconciler_proc import REPO, Reconciler

from omereconcile.cluster.kube import Kube
from omereconcile.cluster.leader import RangeLeases
from omereconcile.cluster.reflector import Reflector
from omereconcile.metrics import Metrics
from omereconcile.sharding import (
    NAMESPACE_FIELD,
    ShardSelector,
    balanced_ranges,
    filter_items,
    lease_names,
    parse_cuts,
    server_sharded,
    shard_query,
)
from testbed.assets import build
from testbed.controlplane import ControlPlane
from testbed.testing import Cluster, replica_settled, runners_replica, running_cluster, wait_for

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
        # Every wanted one (want[-1] alone is not the last posted: "shard-ns-9" sorts after "-10", "-11").
        while time.monotonic() < deadline and any(r.get((ns, "reflected")) is None for ns in want):
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
    a.round()  # a new process takes nothing in its first round: others starting with it are not seen yet
    assert a.acting() == frozenset()
    t[0] += 2
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


# -- two `omereconcile run --shards` processes on a cluster with kubelets ----------------------------------

SHARDS = 4
LEASE, DEADLINE, RETRY = 6.0, 4.0, 1.0  # short, so expiry is seconds; fencing needs DEADLINE < LEASE
FLEET = [f"fleet-{i}" for i in range(8)]
IREP_PATH = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"


@pytest.fixture(scope="module", params=[True, False], ids=["gate-on", "gate-off"])
def fleet_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Cluster, Path, bool]]:
    """A control plane with kubelets (the gate on or off), deploy/'s RBAC (which names the Leases of
    --shards=12) plus a Role naming those of this test's --shards=4, a TokenRequest kubeconfig for the
    reconciler's ServiceAccount, and one replica in each FLEET namespace."""
    gate_on: bool = request.param
    gate = f"--feature-gates=ShardedListAndWatch={'true' if gate_on else 'false'}"
    with running_cluster(
        tmp_path_factory.mktemp("fleet"), nodes=2, gang_scheduler=False, apiserver_args=(gate,)
    ) as cl:
        base = REPO / "deploy" / "base"  # its RBAC holds the sharded reconciler's Leases too
        cl.kubectl(
            "apply",
            "-f",
            str(base / "namespace.yaml"),
            "-f",
            str(base / "serviceaccount.yaml"),
            "-f",
            str(base / "rbac.yaml"),
        )
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "shards-4", "namespace": "ome"},
            "rules": [
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "resourceNames": lease_names("omereconcile-shard", SHARDS),
                    "verbs": ["get", "update"],
                }
            ],
        }
        cl.raw.post("/apis/rbac.authorization.k8s.io/v1/namespaces/ome/roles", role)
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "shards-4", "namespace": "ome"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "shards-4"},
            "subjects": [{"kind": "ServiceAccount", "name": "omereconcile", "namespace": "ome"}],
        }
        cl.raw.post("/apis/rbac.authorization.k8s.io/v1/namespaces/ome/rolebindings", binding)
        kubeconfig = cl.cp.service_account_kubeconfig("ome", "omereconcile", create=False)
        for ns in FLEET:
            cl.raw.post(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            )
            cl.raw.post(IREP_PATH.format(ns=ns), runners_replica("pool", ns, "engine:v1"))
        yield cl, kubeconfig, gate_on


def _ts(rec: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(rec["ts"])).timestamp()


def _identity(rec: Reconciler) -> str:
    return rec.wait(
        "its identity",
        lambda: next((str(r["identity"]) for r in rec.lines() if r.get("msg") == "probes listening"), None),
    )


def _intervals(
    recs: dict[str, Reconciler], ended: dict[str, float]
) -> dict[int, list[tuple[float, float, str]]]:
    """Per range, when each process held it: from its "range held" line to its "range dropped" line (or
    its end: the time it was killed, else never)."""
    out: dict[int, list[tuple[float, float, str]]] = {}
    for who, rec in recs.items():
        opened: dict[int, float] = {}
        for r in rec.lines():
            if r.get("msg") in ("range held: watching its replicas", "range dropped"):
                i = int(str(r["range"]).split("/")[0])
                if r["msg"] == "range dropped":
                    out.setdefault(i, []).append((opened.pop(i), _ts(r), who))
                else:
                    opened[i] = _ts(r)
        for i, start in opened.items():
            out.setdefault(i, []).append((start, ended.get(who, float("inf")), who))
    return {i: sorted(v) for i, v in out.items()}


def _applied(recs: dict[str, Reconciler], since: float = 0.0) -> list[tuple[float, str, str]]:
    """(time, process, namespace) of every write the processes logged."""
    return sorted(
        (_ts(r), who, str(r["namespace"]))
        for who, rec in recs.items()
        for r in rec.lines()
        if r.get("msg") == "applied" and r.get("namespace") in FLEET and _ts(r) >= since
    )


def _metrics(rec: Reconciler) -> dict[tuple[str, str], float]:
    """(name, first label value) -> value, scraped from the process's probe port."""
    with urllib.request.urlopen(f"http://127.0.0.1:{rec.probe_port()}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {
        (m.name, next(iter(m.labels.values()), "")): m.value
        for fam in text_string_to_metric_families(text)
        for m in fam.samples
    }


def _roll(cl: Cluster, image: str, namespaces: list[str]) -> None:
    for ns in namespaces:
        path = f"{IREP_PATH.format(ns=ns)}/pool"
        obj = cl.raw.get(path)
        obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = image
        cl.raw.put(path, obj)


def _rolled(cl: Cluster, image: str) -> bool:
    for ns in FLEET:
        obj = cl.raw.get(f"{IREP_PATH.format(ns=ns)}/pool")
        if obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] != image:
            return False
        if (
            not replica_settled(obj)
            or obj["status"].get("observedGeneration") != obj["metadata"]["generation"]
        ):
            return False
        live = [
            p
            for p in cl.raw.get(f"/api/v1/namespaces/{ns}/pods")["items"]
            if not p["metadata"].get("deletionTimestamp")
        ]
        if not live or any(p["spec"]["containers"][0]["image"] != image for p in live):
            return False
    return True


def test_processes_share_the_fleet_a_killed_ones_ranges_move_after_expiry_and_a_joiner_gets_its_share(
    fleet_cluster: tuple[Cluster, Path, bool], tmp_path: Path
) -> None:
    cl, kubeconfig, gate_on = fleet_cluster
    args = [
        "--shards", str(SHARDS), "--ome-namespace", "ome", "--watch-timeout", "20",
        "--lease-duration", str(LEASE), "--renew-deadline", str(DEADLINE), "--retry-period", str(RETRY),
    ]  # fmt: skip
    a = Reconciler(kubeconfig, tmp_path / "a.log", args).start()
    b = Reconciler(kubeconfig, tmp_path / "b.log", args).start()
    recs: dict[str, Reconciler] = {"a": a, "b": b}
    ended: dict[str, float] = {}
    try:
        ids = {_identity(a): "a", _identity(b): "b"}

        def holders() -> dict[int, str]:
            items = cl.raw.get("/apis/coordination.k8s.io/v1/namespaces/ome/leases")["items"]
            by_name = {o["metadata"]["name"]: o["spec"].get("holderIdentity") or "" for o in items}
            return {
                i: ids.get(by_name.get(f"omereconcile-shard-{SHARDS}-{i}", ""), "") for i in range(SHARDS)
            }

        a.wait(
            "the ranges split two and two",
            lambda: sorted(holders().values()) == ["a", "a", "b", "b"],
            timeout=60,
        )
        a.wait("every replica settled", lambda: _rolled(cl, "engine:v1"), timeout=120)
        for rec in recs.values():
            said = [str(r["resource"]) for r in rec.lines() if "(no shardInfo echoed)" in str(r.get("msg"))]
            assert len(said) == len(set(said))  # once per kind
            # Custom resources are not sharded by the 1.36.3 API server even with the gate on; built-in
            # kinds are, and are filtered on this side only with the gate off.
            owned = {"pods", "services", "endpointslices", "controllerrevisions", "ledgers"}
            assert set(said) == ({"inferencereplicas"} if gate_on else {"inferencereplicas", *owned})

        # A catalog-wide change: every replica rolls, each written by the holder of its range alone.
        cuts = cl.raw.get(
            f"/apis/coordination.k8s.io/v1/namespaces/ome/leases/omereconcile-shard-{SHARDS}-cuts"
        )
        ranges = parse_cuts(cuts["metadata"]["annotations"]["omereconcile.ome.io/shard-cuts"], SHARDS)
        range_of = {ns: next(i for i, r in enumerate(ranges) if r.contains(ns)) for ns in FLEET}
        assert len(set(range_of.values())) == SHARDS  # cut from the fleet: no range is empty
        held = holders()
        t1 = time.time()
        _roll(cl, "engine:v2", FLEET)
        a.wait("every replica rolled to v2", lambda: _rolled(cl, "engine:v2"), timeout=120)
        writers: dict[str, set[str]] = {}
        for _, who, ns in _applied(recs, t1):
            writers.setdefault(ns, set()).add(who)
        assert writers == {ns: {held[range_of[ns]]} for ns in FLEET}
        # Each process caches only its ranges' replicas (server- or client-side) and says which it holds.
        for who, rec in recs.items():
            samples = _metrics(rec)
            mine = {i for i, h in held.items() if h == who}
            assert samples[("omereconcile_watched_objects", "inferencereplicas")] == sum(
                1 for ns in FLEET if range_of[ns] in mine
            )
            assert {
                i for i in range(SHARDS) if samples[("omereconcile_shard_ranges", f"{i}/{SHARDS}")]
            } == mine

        # SIGKILL b: no release. a takes b's ranges only once their Leases expired in its view.
        b_ranges = {i for i, who in held.items() if who == "b"}
        b.kill()
        ended["b"] = killed = time.time()
        _roll(cl, "engine:v3", FLEET)
        a.wait("every replica rolled to v3", lambda: _rolled(cl, "engine:v3"), timeout=120)
        assert set(holders().values()) == {"a"}
        spans = _intervals(recs, ended)
        for i in b_ranges:
            took = max(start for start, _, who in spans[i] if who == "a")
            # b renewed at most RETRY before it died; a saw that renewal and waited LEASE after it.
            assert took >= killed + LEASE - RETRY - 0.5, (i, took - killed)

        # A third process joins a running fleet: a hands half its ranges over (stops acting, then
        # releases), c takes them, and the next roll is again written by each range's holder alone.
        c = Reconciler(kubeconfig, tmp_path / "c.log", args).start()
        recs["c"] = c
        ids[_identity(c)] = "c"
        c.wait(
            "a and c to split the ranges",
            lambda: sorted(holders().values()) == ["a", "a", "c", "c"],
            timeout=60,
        )
        held = holders()
        t4 = time.time()
        _roll(cl, "engine:v4", FLEET)
        c.wait("every replica rolled to v4", lambda: _rolled(cl, "engine:v4"), timeout=120)
        writers = {}
        for _, who, ns in _applied(recs, t4):
            writers.setdefault(ns, set()).add(who)
        assert writers == {ns: {held[range_of[ns]]} for ns in FLEET}
        spans = _intervals(recs, ended)
        # Never two holders at once, and every write inside its writer's holding of the range.
        for i, sp in spans.items():
            for (_, end, _), (start, _, _) in itertools.pairwise(sp):
                assert start >= end, (i, sp)
        for t, who, ns in _applied(recs):
            assert any(w == who and s <= t <= e for s, e, w in spans[range_of[ns]]), (t, who, ns, spans)
    finally:
        if a.alive():
            for ns in FLEET:
                cl.raw.delete(f"{IREP_PATH.format(ns=ns)}/pool")
            wait_for(
                "the replicas deleted",
                lambda: not any(cl.raw.get(IREP_PATH.format(ns=ns))["items"] for ns in FLEET),
                timeout=60,
            )
        for rec in recs.values():
            rec.stop()
