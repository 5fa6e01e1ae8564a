"""Leadership by shard (issue 31): the hash ranges over the namespace this process holds (their Leases,
``omereconcile.cluster.leader.RangeLeases``), the watches rebuilt for the ranges held, and the gate a
pass and every write go through: a replica is acted on only while its range is held, its watches have
synced, and the range's Lease was renewed within the renew deadline (the fence).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from omereconcile.cluster.kube import JSON
from omereconcile.cluster.reflector import Reflector
from omereconcile.controller.watches import WatchSet
from omereconcile.sharding import NAMESPACE_FIELD, ShardRange, ShardSelector, range_index

__all__ = ["RANGE_WAIT", "ShardGate"]

log = logging.getLogger("omereconcile.controller")  # the name logs have always carried


# Sharded: how soon a replica of a range held but not yet acted on (syncing, renewal late) looks again.
RANGE_WAIT = 1.0


def _merged(ranges: Iterable[ShardRange]) -> tuple[ShardRange, ...]:
    """Sorted ranges with adjacent ones joined: a shorter selector, the same objects."""
    out: list[ShardRange] = []
    for r in sorted(ranges):
        if out and out[-1].end == r.start:
            out[-1] = ShardRange(out[-1].start, r.end)
        else:
            out.append(r)
    return tuple(out)


class ShardGate(WatchSet):
    """The ranges held, the watches that cover them, and ``may_act``."""

    def range_of(self, namespace: str) -> int | None:
        """The index of the range ``namespace`` hashes into (None when not sharded)."""
        return None if self.shard_ranges is None else range_index(self.shard_ranges, namespace)

    def held_ranges(self) -> frozenset[int]:
        """The ranges this process holds (their Leases), whether or not their watches have synced."""
        with self._held_lock:
            return frozenset(self._wanted)

    def active_ranges(self) -> frozenset[int]:
        """The ranges held whose watches have synced: the ones a pass may act on (within the fence)."""
        with self._held_lock:
            return self._active

    def may_act(self, namespace: str) -> bool:
        """Whether this process may write to a replica of ``namespace`` now: always when not sharded;
        sharded, only while it holds the namespace's range, its watches cover the range and have synced,
        and the range's Lease was renewed within the renew deadline (the fence)."""
        i = self.range_of(namespace)
        if i is None:
            return self.shard_ranges is None
        if i not in self.active_ranges():
            return False
        return self.fence is None or i in self.fence()

    def _may_act_on(self, replica: JSON) -> bool:
        ok = self.may_act(str((replica.get("metadata") or {}).get("namespace") or ""))
        if not ok:
            with self._stats_lock:
                self.fenced_skips += 1
        return ok

    def hold_ranges(self, indices: Iterable[int]) -> None:
        """Hold these ranges (add to those held). Returns at once: the watches are rebuilt for every
        range held in the background, and a range is acted on once they have synced."""
        if self.shard_ranges is None or self.stop_event.is_set():
            return
        with self._held_lock:
            new = set(indices) - self._wanted
            if not new:
                return
            self._wanted |= new
            if self._swapper is None:
                self._swapper = threading.Thread(target=self._swap_loop, name="shard-watches", daemon=True)
                self._swapper.start()
        self._rewatch.set()

    def drop_ranges(self, indices: Iterable[int], wait: float = 5.0) -> None:
        """Stop acting on these ranges, wait (up to ``wait`` seconds) for the passes running in them to
        end. After this returns, the ranges' Leases may be released. Their objects leave the caches
        when the watches are next rebuilt (at once, in the background)."""
        with self._held_lock:
            idx = set(indices) & self._wanted
            if not idx:
                return
            self._wanted -= idx
            self._active = self._active - idx
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            with self._stats_lock:
                if not any(self._inflight[i] for i in idx):
                    break
            time.sleep(0.02)
        for i in sorted(idx):
            log.info("range dropped", extra={"range": f"{i}/{len(self.shard_ranges or ())}"})
        self._rewatch.set()

    def _swap_loop(self) -> None:
        """One set of watches for all the ranges held (a selector of several ranges), rebuilt when they
        change: a kind the server does not shard (custom resources; every kind with the gate off) is
        then received once, not once per range. The new watches list and sync beside the old ones, and
        replace them kind by kind, so a pass never sees a kind uncached or cached twice."""
        assert self.shard_ranges is not None
        built: frozenset[int] = frozenset()
        current: tuple[threading.Event, list[Reflector]] | None = None
        while not self.stop_event.is_set():
            if not self._rewatch.wait(0.5):
                continue
            self._rewatch.clear()
            target = self.held_ranges()
            if target == built:
                continue
            stop = threading.Event()
            rs: list[Reflector] = []
            if target:
                shard = ShardSelector(NAMESPACE_FIELD, _merged(self.shard_ranges[i] for i in sorted(target)))
                rs = [r for ns in self._scopes() for r in self._replica_reflectors(ns, shard, stop)]
                self._pending = rs
                for r in rs:
                    r.start()
                while not self.stop_event.is_set() and not all(r.synced.wait(0.2) for r in rs):
                    pass
                if self.stop_event.is_set():
                    stop.set()
                    break
            old = current[1] if current is not None else []
            gone = {id(r) for r in old}
            with self._held_lock:
                for name in {r.name for r in (*old, *rs)}:
                    self.reflectors[name] = [
                        *(r for r in self.reflectors.get(name, []) if id(r) not in gone),
                        *(r for r in rs if r.name == name),
                    ]
                active = target & self._wanted
                for i in sorted(active - self._active):
                    # Said before anything of the range can be acted on (the tests bound acting by it).
                    log.info(
                        "range held: watching its replicas",
                        extra={"range": f"{i}/{len(self.shard_ranges)}", "ranges_watched": len(target)},
                    )
                self._active = frozenset(active)
            if current is not None:
                current[0].set()
                for r in old:
                    r.close()
            current, built, self._pending = (stop, rs), target, []
        if current is not None:
            current[0].set()
            for r in current[1]:
                r.close()
