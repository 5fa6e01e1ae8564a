"""After a pass writes pods, the replica's next pass waits until the pods cache shows those writes."""

from __future__ import annotations

import threading
import time
from typing import Any

from omereconcile.actions import CreatePod, DeletePod, EnsureService, SetServingGate
from omereconcile.cluster.expectations import Expectations
from omereconcile.controller import Controller, PassResult

KEY = ("ns", "pool")


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _pod(name: str, uid: str, rv: str = "1", terminating: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid, "resourceVersion": rv}
    if terminating:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def _setup(timeout: float = 30.0) -> tuple[Expectations, dict[str, dict[str, Any]], Clock]:
    cache: dict[str, dict[str, Any]] = {}
    clock = Clock()
    exp = Expectations(lambda ns, name: cache.get(name), timeout, clock=clock)
    return exp, cache, clock


def _create(name: str) -> CreatePod:
    return CreatePod(name, {"metadata": {"name": name}}, "replacement")


def test_a_create_is_waited_for_until_the_cache_holds_the_new_pod() -> None:
    exp, cache, clock = _setup()
    exp.expect(KEY, [_create("p1")], planned_from={})
    assert exp.wait(KEY) == 30.0
    clock.t += 1
    assert exp.wait(KEY) == 29.0  # still not seen: the pass would plan the create again
    cache["p1"] = _pod("p1", "new")
    assert exp.wait(KEY) is None
    assert exp.pending() == 0
    assert exp.expired == 0


def test_a_recreate_under_the_same_name_waits_for_the_new_uid() -> None:
    exp, cache, _ = _setup()
    cache["p1"] = _pod("p1", "old", terminating=True)
    exp.expect(KEY, [_create("p1")], planned_from={"p1": "old"})
    assert exp.wait(KEY) is not None
    cache["p1"] = _pod("p1", "new")
    assert exp.wait(KEY) is None


def test_a_delete_is_seen_once_the_pod_is_terminating_gone_or_replaced() -> None:
    for seen in (_pod("p1", "u1", "2", terminating=True), None, _pod("p1", "u2")):
        exp, cache, _ = _setup()
        cache["p1"] = _pod("p1", "u1")
        exp.expect(KEY, [DeletePod("p1", "u1", "1", "drained")], planned_from={"p1": "u1"})
        assert exp.wait(KEY) is not None
        if seen is None:
            del cache["p1"]
        else:
            cache["p1"] = seen
        assert exp.wait(KEY) is None


def test_a_gate_patch_is_seen_once_the_cache_moves_past_the_version_it_was_pinned_to() -> None:
    exp, cache, _ = _setup()
    cache["p1"] = _pod("p1", "u1", "5")
    exp.expect(KEY, [SetServingGate("p1", "u1", "5", True, "serve")], planned_from={"p1": "u1"})
    assert exp.wait(KEY) is not None
    cache["p1"] = _pod("p1", "u1", "6")
    assert exp.wait(KEY) is None


def test_every_write_of_the_pass_must_be_seen_and_the_seen_ones_are_not_checked_again() -> None:
    exp, cache, _ = _setup()
    cache["src"] = _pod("src", "u1", "5")
    exp.expect(
        KEY,
        [_create("p2"), SetServingGate("src", "u1", "5", False, "hold")],
        planned_from={"src": "u1"},
    )
    cache["p2"] = _pod("p2", "u2")
    assert exp.wait(KEY) is not None  # the patch is not in the cache yet
    del cache["p2"]  # the create, once seen, stays seen
    cache["src"] = _pod("src", "u1", "6")
    assert exp.wait(KEY) is None


def test_a_wait_ends_at_the_timeout_and_is_counted() -> None:
    exp, _, clock = _setup(timeout=30.0)
    exp.expect(KEY, [_create("p1")], planned_from={})
    clock.t += 30.0
    assert exp.wait(KEY) is None
    assert exp.expired == 1
    assert exp.pending() == 0


def test_a_pass_without_pod_writes_leaves_nothing_to_wait_for() -> None:
    exp, _, _ = _setup()
    exp.expect(KEY, [EnsureService({"metadata": {"name": "s"}}, "headless")], planned_from={})
    assert exp.wait(KEY) is None
    assert exp.pending() == 0
    exp.expect(KEY, [_create("p1")], planned_from={})
    exp.forget(KEY)  # the replica is gone
    assert exp.wait(KEY) is None


class NoKube:
    """Sends nothing: any request would raise AttributeError."""

    on_request: Any = None


def test_a_waiting_pass_reads_and_writes_nothing() -> None:
    ctrl = Controller(NoKube(), namespaces=["ns"])  # type: ignore[arg-type]
    ctrl.expectations.expect(KEY, [_create("p1")], planned_from={})
    ctrl._trigger[KEY] = ["endpointslices"]
    res = ctrl.reconcile(KEY)
    assert res.result == "success"
    assert res.requeue_after is None  # the event that shows the pod enqueues the next pass
    assert not res.follow_up
    assert ctrl.waits == 1
    assert ctrl.passes == 0


class Recorder(Controller):
    """Passes that ask for a follow-up the first time and record what triggered each one."""

    def __init__(self) -> None:
        super().__init__(NoKube(), namespaces=["ns"])  # type: ignore[arg-type]
        self.calls: list[str] = []

    def reconcile(self, key: tuple[str, str]) -> PassResult:
        with self._stats_lock:
            self.calls.append((self._trigger.pop(key, []) or ["none"])[0])
        return PassResult("success", follow_up=len(self.calls) == 1)


def test_a_pass_that_asks_for_a_follow_up_runs_again_at_once_without_an_event() -> None:
    ctrl = Recorder()
    t = threading.Thread(target=ctrl._worker, daemon=True)
    t.start()
    try:
        ctrl._enqueue(KEY, "replica")
        deadline = time.monotonic() + 10
        while len(ctrl.calls) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
    finally:
        ctrl.stop_event.set()
        ctrl.queue.shutdown()
        t.join(5)
    assert ctrl.calls == ["replica", "follow-up"]
    assert ctrl.queue.failures(KEY) == 0  # not a retry: no backoff builds up
