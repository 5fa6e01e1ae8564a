"""The controller's work queue: client-go's rate-limited, delaying queue with its dirty/processing
semantics (a key is never handed to two workers at once; an add while it is processed runs it again
after; failures back off per key, ``base * 2**n`` up to ``max``).
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable

from omereconcile.metrics import Metrics

__all__ = ["RETRY", "WAKE", "WINDOW", "Key", "WorkQueue"]


Key = tuple[str, str]  # (namespace, name)
# Tags of delayed adds, and the triggers they become: a retry, the planner's wake, the count window's end.
RETRY, WAKE, WINDOW = "retry", "wake", "window"


class WorkQueue:
    """A rate-limited, delaying work queue with client-go's dirty/processing semantics."""

    def __init__(
        self,
        *,
        base_delay: float = 0.01,
        max_delay: float = 60.0,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_due: Callable[[Key, str], None] | None = None,
    ) -> None:
        self._cond = threading.Condition()
        # Called (under the queue's lock) when a delayed add made with a tag comes due.
        self.on_due = on_due
        self._queue: deque[Key] = deque()  # FIFO of ready keys: get pops from the left in O(1)
        self._dirty: set[Key] = set()
        self._processing: set[Key] = set()
        self._added_at: dict[Key, float] = {}
        self._waiting: list[tuple[float, int, Key, str]] = []  # heap of (ready time, seq, key, tag)
        self._seq = 0
        self._failures: dict[Key, int] = {}
        self._shutdown = False
        self.base_delay = base_delay
        self.max_delay = max_delay
        self.metrics = metrics
        self.clock = clock

    def _labels(self) -> tuple[str, str]:
        name = self.metrics.controller if self.metrics else ""
        return name, name

    def _gauge(self) -> None:
        if self.metrics is not None:
            self.metrics.depth.labels(*self._labels()).set(len(self._queue))

    def add(self, key: Key) -> None:
        with self._cond:
            self._add_locked(key)

    def _add_locked(self, key: Key) -> None:
        if self._shutdown or key in self._dirty:
            return
        if self.metrics is not None:
            self.metrics.adds.labels(*self._labels()).inc()
        self._dirty.add(key)
        self._added_at.setdefault(key, self.clock())
        if key in self._processing:
            return
        self._queue.append(key)
        self._gauge()
        self._cond.notify()

    def add_after(self, key: Key, delay: float, tag: str = "") -> None:
        """Add ``key`` in ``delay`` seconds; a ``tag`` is handed to ``on_due`` when it comes due."""
        with self._cond:
            if self._shutdown:
                return
            if delay <= 0:
                self._due_locked(key, tag)
                return
            self._seq += 1
            heapq.heappush(self._waiting, (self.clock() + delay, self._seq, key, tag))
            self._cond.notify_all()

    def _due_locked(self, key: Key, tag: str) -> None:
        if tag and self.on_due is not None:
            self.on_due(key, tag)
        self._add_locked(key)

    def add_rate_limited(self, key: Key, retry_after: float | None = None) -> float:
        with self._cond:
            n = self._failures.get(key, 0)
            self._failures[key] = n + 1
        delay = float(min(self.base_delay * (2**n), self.max_delay))
        if retry_after:
            delay = max(delay, retry_after)
        if self.metrics is not None:
            self.metrics.retries.labels(*self._labels()).inc()
        self.add_after(key, delay, RETRY)
        return delay

    def forget(self, key: Key) -> None:
        with self._cond:
            self._failures.pop(key, None)

    def failures(self, key: Key) -> int:
        with self._cond:
            return self._failures.get(key, 0)

    def get(self, timeout: float | None = None) -> Key | None:
        """The next key (marked processing), or None on shutdown / timeout."""
        deadline = None if timeout is None else self.clock() + timeout
        with self._cond:
            while True:
                self._promote_locked()
                if self._queue:
                    key = self._queue.popleft()
                    self._dirty.discard(key)
                    self._processing.add(key)
                    added = self._added_at.pop(key, None)
                    if self.metrics is not None and added is not None:
                        self.metrics.queue_duration.labels(*self._labels()).observe(self.clock() - added)
                    self._gauge()
                    return key
                if self._shutdown:
                    return None
                wait = 1.0
                if self._waiting:
                    wait = min(wait, max(self._waiting[0][0] - self.clock(), 0.0))
                if deadline is not None:
                    left = deadline - self.clock()
                    if left <= 0:
                        return None
                    wait = min(wait, left)
                self._cond.wait(wait)

    def _promote_locked(self) -> None:
        now = self.clock()
        while self._waiting and self._waiting[0][0] <= now:
            _, _, key, tag = heapq.heappop(self._waiting)
            self._due_locked(key, tag)

    def done(self, key: Key) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._queue.append(key)
                self._gauge()
                self._cond.notify()

    def __len__(self) -> int:
        with self._cond:
            return len(self._queue)

    def idle(self) -> bool:
        with self._cond:
            return not self._queue and not self._processing

    def shutdown(self) -> None:
        with self._cond:
            self._shutdown = True
            self._cond.notify_all()
