"""Range Lease ownership: processes share the ranges fairly, hand them over on join and leave, and no
range ever has two actors — including when a holder pauses past its Lease (the fencing case), which a
run with the fence removed shows this test catches."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from omereconcile.sharding import (
    RangeLease,
    fair_share,
    free_member_slot,
    lease_names,
    member_lease_name,
    plan_ranges,
    range_lease_name,
    validate_timing,
)

LEASE, DEADLINE, RANGES = 15.0, 10.0, 8


@dataclass
class Record:
    holder: str = ""
    version: int = 0


@dataclass
class Proc:
    name: str
    deadline: float = DEADLINE
    seen: dict[int, tuple[str, int, float]] = field(default_factory=dict)
    renewed_at: dict[int, float] = field(default_factory=dict)
    acting: frozenset[int] = frozenset()
    paused: bool = False
    stopped: bool = False

    def leases(self) -> dict[int, RangeLease]:
        return {i: RangeLease(i, h, at, LEASE) for i, (h, _, at) in self.seen.items()}

    def step(self, now: float, store: dict[int, Record], members: list[str]) -> None:
        if self.stopped:
            self.acting = frozenset()
            return
        if self.paused:
            # No read, no write; it would still act on what it last knew, checking only its own clock.
            self.acting = plan_ranges(
                self.name, RANGES, members, self.leases(), self.renewed_at, now, self.deadline
            ).acting
            return
        for i, rec in store.items():
            old = self.seen.get(i)
            if old is None or (old[0], old[1]) != (rec.holder, rec.version):
                self.seen[i] = (rec.holder, rec.version, now)
        plan = plan_ranges(self.name, RANGES, members, self.leases(), self.renewed_at, now, self.deadline)
        self.acting = plan.acting
        for i in plan.release:  # already out of `acting`
            if store[i].holder == self.name:
                store[i] = Record("", store[i].version + 1)
            self.renewed_at.pop(i, None)
        for i in plan.renew:
            if store[i].holder == self.name:
                store[i] = Record(self.name, store[i].version + 1)
                self.renewed_at[i] = now
            else:
                self.renewed_at.pop(i, None)
        for i in plan.take:
            seen = self.seen.get(i)
            if store[i].version == (seen[1] if seen else 0):  # compare-and-swap on resourceVersion
                store[i] = Record(self.name, store[i].version + 1)
                self.renewed_at[i] = now


class Cluster:
    def __init__(self, *procs: Proc) -> None:
        self.store = {i: Record() for i in range(RANGES)}
        self.procs = list(procs)
        self.now = 0.0
        self.overlaps: list[tuple[float, int]] = []
        self.first_acting: dict[tuple[str, int], float] = {}

    def run(self, seconds: float) -> None:
        end = self.now + seconds
        while self.now < end:
            # Members are the processes whose member Lease is fresh: a paused one stops renewing it.
            members = [p.name for p in self.procs if not p.stopped and not p.paused]
            for p in self.procs:
                p.step(self.now, self.store, members)
            for i in range(RANGES):
                actors = [p.name for p in self.procs if i in p.acting]
                if len(actors) > 1:
                    self.overlaps.append((self.now, i))
                for a in actors:
                    self.first_acting.setdefault((a, i), self.now)
            self.now += 1.0

    def held(self, name: str) -> set[int]:
        return {i for i, r in self.store.items() if r.holder == name}


def test_fair_share_counts() -> None:
    assert fair_share(["b", "a", "c"], 8) == {"a": 3, "b": 3, "c": 2}
    assert fair_share(["a"], 8) == {"a": 8}
    assert fair_share([], 8) == {}
    assert fair_share(["a", "b"], 1) == {"a": 1, "b": 0}


def test_lease_name_carries_the_range_count() -> None:
    assert range_lease_name("omereconcile-shard", 3, 16) == "omereconcile-shard-16-3"


def test_timing_without_fence_is_refused() -> None:
    validate_timing(15, 10, 2)
    with pytest.raises(ValueError, match="renew deadline below the lease duration"):
        validate_timing(10, 15, 2)


def test_one_process_takes_every_range() -> None:
    c = Cluster(Proc("a"))
    c.run(3)
    assert c.held("a") == set(range(RANGES))
    assert c.procs[0].acting == frozenset(range(RANGES))


def test_join_hands_over_half_without_a_double_actor() -> None:
    a, b = Proc("a"), Proc("b", stopped=True)
    c = Cluster(a, b)
    c.run(5)
    b.stopped = False
    c.run(10)
    assert c.held("a") == {0, 1, 2, 3}
    assert c.held("b") == {4, 5, 6, 7}
    assert a.acting == frozenset({0, 1, 2, 3})
    assert b.acting == frozenset({4, 5, 6, 7})
    assert c.overlaps == []


def test_leave_moves_ranges_only_after_the_lease_expires() -> None:
    a, b = Proc("a"), Proc("b")
    c = Cluster(a, b)
    c.run(10)
    a_ranges = c.held("a")
    assert a_ranges == {0, 1, 2, 3}
    killed_at = c.now
    a.stopped = True  # SIGKILL: no release, the Leases stay with "a"
    c.run(30)
    assert c.held("b") == set(range(RANGES))
    for i in a_ranges:
        # "a" last renewed at killed_at - 1; "b" saw that change then and waits a full lease duration.
        assert c.first_acting[("b", i)] >= killed_at - 1 + LEASE
    assert c.overlaps == []


@pytest.mark.parametrize(("deadline", "expect_overlap"), [(DEADLINE, False), (float("inf"), True)])
def test_paused_holder_is_fenced(deadline: float, expect_overlap: bool) -> None:
    # "a" pauses (GC, partition) past its Lease; "b" takes its ranges on expiry. With the fence, "a"
    # has stopped acting by then; with the fence removed (deadline = infinity) both act: the
    # invariant this suite checks catches it.
    a, b = Proc("a", deadline=deadline), Proc("b")
    c = Cluster(a, b)
    c.run(10)
    a.paused = True
    c.run(40)
    assert c.held("b") == set(range(RANGES))
    assert bool(c.overlaps) is expect_overlap
    if not expect_overlap:
        a.paused = False
        c.run(20)  # "a" comes back: shares rebalance, still no double actor
        assert c.overlaps == []
        assert len(c.held("a")) == len(c.held("b")) == RANGES // 2


def test_every_lease_a_sharded_process_writes_has_a_name_known_before_it_starts() -> None:
    # The chart's and deploy/'s RBAC list these names (resourceNames): ranges, member slots, the cuts.
    assert lease_names("omereconcile-shard", 3) == [
        "omereconcile-shard-3-0",
        "omereconcile-shard-3-1",
        "omereconcile-shard-3-2",
        "omereconcile-shard-3-m-0",
        "omereconcile-shard-3-m-1",
        "omereconcile-shard-3-m-2",
        "omereconcile-shard-3-cuts",
    ]
    assert member_lease_name("p", 2, 12) == "p-12-m-2"


def test_a_process_takes_the_lowest_member_slot_not_held_by_a_live_process() -> None:
    held = {0: RangeLease(0, "a", 100.0, LEASE), 1: RangeLease(1, "b", 100.0, LEASE)}
    assert free_member_slot(3, held, now=101.0) == 2  # slot 2 never created
    assert free_member_slot(3, {**held, 1: RangeLease(1, "", 100.0, LEASE)}, now=101.0) == 1  # released
    assert free_member_slot(3, held, now=100.0 + LEASE) == 0  # a's expired in this process's view
    full = {**held, 2: RangeLease(2, "c", 100.0, LEASE)}
    assert free_member_slot(3, full, now=101.0) is None  # more processes than slots: none
