"""The work queue: one worker per key, dirty re-runs, per-key exponential backoff, delayed adds."""

from __future__ import annotations

from omereconcile.controller import WorkQueue
from omereconcile.metrics import Metrics

K = ("ns", "a")


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_key_is_queued_once_and_re_runs_if_added_while_processing() -> None:
    q = WorkQueue()
    q.add(K)
    q.add(K)
    assert len(q) == 1
    assert q.get(timeout=0) == K
    q.add(K)  # while processing: marked dirty, not handed to another worker
    assert q.get(timeout=0) is None
    q.done(K)
    assert q.get(timeout=0) == K


def test_backoff_doubles_per_failure_and_forget_resets_it() -> None:
    q = WorkQueue(base_delay=0.01, max_delay=1.0)
    delays = [q.add_rate_limited(K) for _ in range(9)]
    assert delays[:4] == [0.01, 0.02, 0.04, 0.08]
    assert delays[-1] == 1.0
    q.forget(K)
    assert q.add_rate_limited(K) == 0.01
    assert q.add_rate_limited(K, retry_after=5.0) == 5.0  # Retry-After wins when longer


def test_add_after_releases_at_the_deadline() -> None:
    clock = Clock()
    q = WorkQueue(clock=clock)
    q.add_after(K, 2.0)
    assert q.get(timeout=0) is None
    clock.t = 2.0
    assert q.get(timeout=0) == K


def test_metrics_follow_the_queue() -> None:
    m = Metrics()
    q = WorkQueue(metrics=m)
    q.add(K)
    q.add(("ns", "b"))
    text = m.exposition().decode()
    assert 'workqueue_depth{controller="inferencereplica",name="inferencereplica"} 2.0' in text
    assert 'workqueue_adds_total{controller="inferencereplica",name="inferencereplica"} 2.0' in text


def test_workers_never_share_a_key_and_every_add_is_served() -> None:
    """--concurrency N: N workers pull from one queue while keys are re-added mid-pass; no key is ever
    in two passes at once, and an add during a pass is served by a later pass."""
    import threading
    import time

    q = WorkQueue()
    keys = [("ns", f"r{i}") for i in range(6)]
    running: set[tuple[str, str]] = set()
    lock = threading.Lock()
    overlaps: list[tuple[str, str]] = []
    passes: dict[tuple[str, str], int] = dict.fromkeys(keys, 0)

    def worker() -> None:
        while (key := q.get(timeout=0.5)) is not None:
            with lock:
                if key in running:
                    overlaps.append(key)
                running.add(key)
            time.sleep(0.002)
            with lock:
                running.discard(key)
                passes[key] += 1
            q.done(key)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for _ in range(50):
        for k in keys:
            q.add(k)
        time.sleep(0.001)
    deadline = time.monotonic() + 5
    while not q.idle() and time.monotonic() < deadline:
        time.sleep(0.01)
    q.shutdown()
    for t in threads:
        t.join(5)
    assert overlaps == []
    assert q.idle()
    assert all(n >= 1 for n in passes.values())


def test_a_key_in_backoff_never_delays_the_others() -> None:
    clock = Clock()
    q = WorkQueue(base_delay=1.0, max_delay=300.0, clock=clock)
    stuck = ("ns", "stuck")
    for _ in range(8):
        q.add_rate_limited(stuck)  # waiting out up to 128 s
    q.add(K)
    assert q.get(timeout=0) == K  # served at once, ahead of the stuck key
    q.done(K)
    assert q.get(timeout=0) is None
    clock.t = 1.0
    assert q.get(timeout=0) == stuck  # its first retry is due; the later adds collapse into it


def test_get_serves_keys_first_in_first_out_from_a_deque() -> None:
    """Ready keys leave in the order they became ready (a key re-added while processing goes to the
    back once done, a due delayed add after the keys already waiting), and the FIFO is a deque, so
    ``get`` costs O(1) however deep the queue (a list's ``pop(0)`` moved every waiting key)."""
    from collections import deque

    clock = Clock()
    q = WorkQueue(clock=clock)
    assert isinstance(q._queue, deque)
    keys = [("ns", f"r{i}") for i in range(2000)]
    for key in keys:
        q.add(key)
    q.add_after(("ns", "late"), 1.0)
    first = q.get(timeout=0)
    assert first == keys[0]
    q.add(first)  # dirty while processing: queued again only when done, behind the others
    q.done(first)
    clock.t = 1.0
    served = [q.get(timeout=0) for _ in range(len(keys) + 1)]
    assert served == [*keys[1:], first, ("ns", "late")]
    assert q.get(timeout=0) is None
