"""The sharded controller's fence (issue 31): which replicas a process may act on, and the executor
stopping a pass before a write once the range is no longer held. No API server: stores filled by hand."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.cluster.executor import Executor
from omereconcile.cluster.reflector import Reflector
from omereconcile.controller import Controller
from omereconcile.sharding import (
    HASH_SPACE,
    SelectorError,
    balanced_ranges,
    cuts_text,
    fnv1a_64,
    parse_cuts,
)

NAMESPACES = [f"ns-{i}" for i in range(30)]


class NoKube:
    on_request: Any = None


def test_cuts_round_trip_through_their_stored_text() -> None:
    ranges = balanced_ranges(NAMESPACES, 3)
    text = cuts_text(ranges)
    assert text.count(",") == 1
    assert text.startswith("0x")
    assert parse_cuts(text, 3) == ranges
    assert parse_cuts("", 1)[0].end == HASH_SPACE


def test_cuts_for_another_range_count_are_refused_with_the_fix() -> None:
    with pytest.raises(SelectorError, match="2 are needed"):
        parse_cuts(cuts_text(balanced_ranges(NAMESPACES, 4)), 3)
    a, b = cuts_text(balanced_ranges(NAMESPACES, 3)).split(",")
    with pytest.raises(SelectorError):  # decreasing cuts make an empty range
        parse_cuts(f"{b},{a}", 3)


def _sharded(fence: set[int]) -> Controller:
    return Controller(
        NoKube(),  # type: ignore[arg-type]
        namespaces=None,
        shard_ranges=balanced_ranges(NAMESPACES, 3),
        fence=lambda: frozenset(fence),
    )


def test_each_namespace_falls_in_exactly_one_range() -> None:
    ctrl = _sharded(set())
    ranges = ctrl.shard_ranges
    assert ranges is not None
    for ns in NAMESPACES:
        i = ctrl.range_of(ns)
        assert i is not None
        assert ranges[i].start <= fnv1a_64(ns) < ranges[i].end
    assert sorted(ctrl.range_of(ns) for ns in NAMESPACES) == [0] * 10 + [1] * 10 + [2] * 10


@pytest.fixture(autouse=True)
def _no_watch_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    # No API server here: the range's reflectors are built but their threads never started.
    monkeypatch.setattr(Reflector, "start", lambda self: self)


def _wait(fn: Any, timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if out := fn():
            return out
        time.sleep(0.01)
    raise AssertionError("timed out")


def test_a_process_acts_only_on_held_synced_and_fenced_ranges() -> None:
    fence: set[int] = set()
    ctrl = _sharded(fence)
    try:
        ns = next(n for n in NAMESPACES if ctrl.range_of(n) == 1)
        assert not ctrl.may_act(ns)  # not held
        ctrl.hold_ranges([1, 2])
        pending = _wait(lambda: list(ctrl._pending))
        # One set of watches for both ranges (adjacent: one range in the selector), not one per range.
        assert sorted(r.name for r in pending) == sorted(
            ["inferencereplicas", "pods", "services", "endpointslices", "controllerrevisions", "ledgers"]
        )
        assert all(r.shard is not None and len(r.shard.ranges) == 1 and r.shard.matches(ns) for r in pending)
        assert ctrl.held_ranges() == {1, 2}
        assert not ctrl.may_act(ns)  # watches not synced yet
        assert ctrl.reflectors.get("pods", []) == []  # nor in use
        for r in pending:
            r.synced.set()
        _wait(lambda: ctrl.active_ranges() == {1, 2})
        assert list(ctrl.reflectors["pods"]) == [r for r in pending if r.name == "pods"]
        assert not ctrl.may_act(ns)  # Lease not renewed within the deadline: fence closed
        fence.add(1)
        assert ctrl.may_act(ns)
        other = next(n for n in NAMESPACES if ctrl.range_of(n) == 0)
        assert not ctrl.may_act(other)
        ctrl.drop_ranges([1], wait=0.1)
        assert not ctrl.may_act(ns)  # at once, before the watches are rebuilt
        assert ctrl.held_ranges() == {2}
        rebuilt = _wait(lambda: list(ctrl._pending))  # for range 2 alone
        assert all(r.shard is not None and not r.shard.matches(ns) for r in rebuilt)
    finally:
        ctrl.stop(timeout=1.0)


def test_an_unsharded_controller_acts_on_everything() -> None:
    ctrl = Controller(NoKube(), namespaces=["ns"])  # type: ignore[arg-type]
    assert ctrl.may_act("anything")
    assert ctrl.range_of("anything") is None


class RecordingKube:
    def __init__(self) -> None:
        self.writes: list[str] = []

    def patch(self, path: str, body: Any, content_type: str = "", **q: Any) -> dict[str, Any]:
        self.writes.append(path)
        return {"metadata": {"name": "r", "namespace": "ns-1", "resourceVersion": "2"}}

    def put(self, path: str, body: Any, **q: Any) -> dict[str, Any]:
        return self.patch(path, body)

    def post(self, path: str, body: Any, **q: Any) -> dict[str, Any]:
        return self.patch(path, body)


def test_the_executor_stops_before_the_first_write_after_the_fence_closes() -> None:
    kube = RecordingKube()
    open_ = [True, False]  # open for the first action, closed from the second
    calls: list[bool] = []

    def guard(replica: Any) -> bool:
        calls.append(True)
        return open_[min(len(calls) - 1, 1)]

    ex = Executor(
        kube,  # type: ignore[arg-type]
        reporting_instance="t",
        clock=lambda: datetime(2025, 1, 1, tzinfo=UTC),
        guard=guard,
    )
    replica = {"metadata": {"name": "r", "namespace": "ns-1", "resourceVersion": "1"}, "spec": {}}
    res = ex.execute(A.Plan((A.AddFinalizer("ome.io/x", "r"), A.AddFinalizer("ome.io/y", "r"))), replica)
    assert res.fenced
    assert res.ok
    assert len(res.applied) == 1
    assert len(kube.writes) == 1


def test_a_pass_of_a_held_range_not_yet_synced_waits_and_one_of_another_range_is_left_alone() -> None:
    ctrl = _sharded({0, 1})
    held_ns = next(n for n in NAMESPACES if ctrl.range_of(n) == 1)
    other_ns = next(n for n in NAMESPACES if ctrl.range_of(n) == 2)
    ctrl.hold_ranges([1])
    for ns in (held_ns, other_ns):
        ctrl._enqueue((ns, "r"), "replica")
    # NoKube has no get: a pass that read the replica would raise here.
    held = ctrl.reconcile((held_ns, "r"))  # held, its watches not synced
    assert (held.result, held.requeue_after) == ("requeue_after", 1.0)  # looks again once synced
    assert ctrl.reconcile((other_ns, "r")).result == "success"  # its holder acts, not this process
    assert ctrl.fenced_skips == 2
    ctrl.stop(timeout=1.0)
