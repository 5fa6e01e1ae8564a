"""``RangeLeases`` against an in-memory Lease store with compare-and-swap (the API server's
resourceVersion check): processes starting together each get a member slot in their first round, and a
process paused past its Leases forgets the ranges others took, so it neither watches nor reports them."""

from __future__ import annotations

import copy
from typing import Any

from omereconcile.cluster.kube import AlreadyExists, Conflict
from omereconcile.cluster.leader import RangeLeases

NS = "ome"
COLLECTION = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"


class LeaseStore:
    """list, post and put of Leases; a put with a stale resourceVersion is a 409, as on the server."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.version = 0

    def list(self, path: str, **_: Any) -> dict[str, Any]:
        assert path == COLLECTION
        return {"items": [copy.deepcopy(o) for o in self.objects.values()]}

    def post(self, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        name = body["metadata"]["name"]
        if name in self.objects:
            raise AlreadyExists(409, "AlreadyExists", name)
        self.version += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.version)
        self.objects[name] = body
        return body

    def put(self, path: str, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        name = path.rsplit("/", 1)[1]
        if self.objects[name]["metadata"].get("resourceVersion") != body["metadata"].get("resourceVersion"):
            raise Conflict(409, "Conflict", name)
        self.version += 1
        body = copy.deepcopy(body)
        body["metadata"]["resourceVersion"] = str(self.version)
        self.objects[name] = body
        return body


def _holders(store: LeaseStore, count: int) -> list[str]:
    return [
        (store.objects.get(f"omereconcile-shard-{count}-{i}") or {}).get("spec", {}).get("holderIdentity", "")
        for i in range(count)
    ]


def test_processes_observing_together_each_take_a_member_slot_in_their_first_round() -> None:
    store, t = LeaseStore(), [100.0]
    procs = [RangeLeases(store, NS, 6, identity=f"p{k}", clock=lambda: t[0]) for k in range(3)]  # type: ignore[arg-type]
    observed = [p._observe() for p in procs]  # all three see no slot taken yet, then race for slot 0
    assert observed == [{}, {}, {}]
    for p in procs:
        p._hold_member_slot()
    assert sorted(p.member_lease or "" for p in procs) == [f"omereconcile-shard-6-m-{k}" for k in range(3)]
    for p in procs:  # the second round: every process counts all three, and takes only its share
        p.round()
    assert sorted(_holders(store, 6)) == sorted(["p0", "p0", "p1", "p1", "p2", "p2"])


def test_a_process_paused_past_its_leases_forgets_the_ranges_taken_from_it() -> None:
    store, t = LeaseStore(), [100.0]
    a = RangeLeases(
        store, NS, 4, identity="a", clock=lambda: t[0], lease_duration=6, renew_deadline=4, retry_period=1
    )  # type: ignore[arg-type]
    b = RangeLeases(
        store, NS, 4, identity="b", clock=lambda: t[0], lease_duration=6, renew_deadline=4, retry_period=1
    )  # type: ignore[arg-type]
    for _ in range(3):
        a.round()
        b.round()
        t[0] += 1
    assert sorted(_holders(store, 4)) == ["a", "a", "b", "b"]
    mine = set(a.renewed_at)
    assert len(mine) == 2
    for _ in range(10):  # a pauses: b sees its Leases expire and takes them
        b.round()
        t[0] += 1
    assert _holders(store, 4) == ["b"] * 4
    assert a.acting() == frozenset()  # the fence closed long before
    a.round()  # a resumes: its renewals would fail (the Leases are b's); it must forget them
    assert set(a.renewed_at) == set()
    assert a.acting() == frozenset()
