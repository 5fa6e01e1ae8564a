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
