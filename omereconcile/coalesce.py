"""Hold back count-only status writes for a bounded while, so a roll writes its journal once per step.

The planner marks a ``WriteStatus`` ``counters_only`` when the journal it carries equals the one in
the API (``planner/journal.py``): every pod write of that plan follows from a step already journaled,
so dropping the status write loses no safety, only fresh counts. The controller then skips it, unless
the replica's counts have been behind for ``window`` seconds, and asks for a pass when the window ends.

The bound: a count the controller has observed reaches the API with the next journaled write of that
replica (an operation starting, changing step or ending, a condition changing status or reason), or at
the latest ``window`` seconds (plus one pass) after the first pass that held it back. The memory is
per process and per replica; a restarted controller starts with none and at worst writes the counts
at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import replace

from omereconcile.actions import Plan, WriteStatus

__all__ = ["DEFAULT_WINDOW", "StatusCoalescer"]

# Long enough to span a surge step on a pod that starts in a few seconds (the counts then ride on the
# step's own journal write), short enough that `kubectl get` never shows counts older than that.
DEFAULT_WINDOW = 5.0


class StatusCoalescer:
    """Per-replica memory of since when its count-only status write has been held back."""

    def __init__(
        self, window: float = DEFAULT_WINDOW, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if window < 0:
            raise ValueError(f"status coalescing window must be >= 0 seconds, got {window}")
        self.window = window
        self.clock = clock
        self._since: dict[Hashable, float] = {}
        self._lock = threading.Lock()
        self.held = 0  # count-only writes skipped, for tests and benchmarks
        self.released = 0  # count-only writes let through once their window ended

    def filter(self, key: Hashable, plan: Plan) -> Plan:
        """``plan`` without its count-only status write while the window is open, and with a requeue
        no later than the window's end; any other plan is returned as is (and resets the memory)."""
        write = next((a for a in plan.actions if isinstance(a, WriteStatus)), None)
        with self._lock:
            if write is None or not write.counters_only:
                # Nothing behind (the API holds these counts), or a journal write carries them now.
                self._since.pop(key, None)
                return plan
            now = self.clock()
            since = self._since.setdefault(key, now)
            left = since + self.window - now
            if left <= 0:
                self.released += 1
                return plan  # due: written now (the memory goes once the write lands, ``written``)
            self.held += 1
        actions = tuple(a for a in plan.actions if a is not write)
        requeue = left if plan.requeue_after is None else min(plan.requeue_after, left)
        return replace(plan, actions=actions, requeue_after=requeue)

    def written(self, key: Hashable) -> None:
        """A status write of the replica landed: the API holds every count it had observed."""
        with self._lock:
            self._since.pop(key, None)

    forget = written  # the replica is gone: nothing is held for it

    def pending(self) -> int:
        """How many replicas have counts held back right now (0: the API holds every count observed)."""
        with self._lock:
            return len(self._since)
