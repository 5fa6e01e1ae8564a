"""The event correlator of client-go's recorder, which OME's Go controller records through.

Read from client-go ``tools/record/events_cache.go`` (``EventCorrelator.EventCorrelate``,
``EventAggregator.EventAggregate``, ``eventLogger.eventObserve``, ``EventSourceObjectSpamFilter``) and
``tools/record/event.go`` (``recordEvent``), with its defaults (``NewEventCorrelator``):

- **Count.** An event equal to one already recorded (source, involved object, type, reason, message:
  ``getEventKey``) is not created again: the existing Event gets ``count + 1``, a new
  ``lastTimestamp`` and the message, by a strategic-merge patch; a 404 on that patch creates it anew.
- **Aggregate.** Once 10 events that differ only by message (same source, object, type, reason:
  ``EventAggregatorByReasonFunc``) were seen within 10 minutes of each other, the next ones become one
  Event, ``(combined from similar events): <latest message>``, created once and then counted.
- **Spam filter.** A token bucket per source and involved object (``getSpamKey``): a burst of 25, one
  more every 5 minutes; an event without a token is dropped (after the count above was taken, as
  client-go does).

Caches are LRUs of 4,096 entries, per process. The state after a write is refreshed from the server's
answer under the key the event was correlated by.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from omereconcile.world import format_time

__all__ = ["AGGREGATE_PREFIX", "Correlated", "EventCorrelator"]

AGGREGATE_PREFIX = "(combined from similar events): "
LRU_ENTRIES = 4096
AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = timedelta(seconds=600)
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0

JSON = dict[str, Any]
V = TypeVar("V")


class _Lru(Generic[V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._d: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        v = self._d.get(key)
        if v is not None:
            self._d.move_to_end(key)
        return v

    def put(self, key: Hashable, value: V) -> None:
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.size:
            self._d.popitem(last=False)


@dataclass
class _Bucket:
    """``flowcontrol.NewTokenBucketRateLimiter``: starts full."""

    tokens: float
    at: datetime

    def try_accept(self, now: datetime, burst: int, qps: float) -> bool:
        elapsed = max((now - self.at).total_seconds(), 0.0)
        self.tokens = min(float(burst), self.tokens + elapsed * qps)
        self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass
class _Aggregate:
    local_keys: set[str] = field(default_factory=set)
    last: datetime | None = None


@dataclass(frozen=True)
class _Logged:
    count: int
    first_timestamp: str
    name: str
    resource_version: str


@dataclass(frozen=True)
class Correlated:
    """What to send: ``patch`` set means patch the existing Event ``event['metadata']['name']``."""

    event: JSON
    key: Hashable
    patch: JSON | None = None


def _source(ev: Mapping[str, Any]) -> tuple[str, str]:
    src = ev.get("source") or {}
    return str(src.get("component", "")), str(src.get("host", ""))


def _object(ev: Mapping[str, Any], *, field_path: bool) -> tuple[str, ...]:
    io = ev.get("involvedObject") or {}
    parts = [io.get("kind", ""), io.get("namespace", ""), io.get("name", "")]
    if field_path:
        parts.append(io.get("fieldPath", ""))
    parts += [io.get("uid", ""), io.get("apiVersion", "")]
    return tuple(str(p) for p in parts)


def event_key(ev: Mapping[str, Any]) -> tuple[str, ...]:
    """client-go ``getEventKey``."""
    return (
        *_source(ev),
        *_object(ev, field_path=True),
        str(ev.get("type", "")),
        str(ev.get("reason", "")),
        str(ev.get("message", "")),
    )


def spam_key(ev: Mapping[str, Any]) -> tuple[str, ...]:
    """client-go ``getSpamKey``."""
    return (*_source(ev), *_object(ev, field_path=False))


def aggregate_key(ev: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
    """client-go ``EventAggregatorByReasonFunc``: (the group, the event within it)."""
    group = (
        *_source(ev),
        *_object(ev, field_path=False),
        str(ev.get("type", "")),
        str(ev.get("reason", "")),
        str(ev.get("reportingComponent", "")),
        str(ev.get("reportingInstance", "")),
    )
    return group, str(ev.get("message", ""))


class EventCorrelator:
    """Thread-safe; one per process, as the recorder's broadcaster holds one."""

    def __init__(
        self,
        clock: Callable[[], datetime],
        *,
        lru_entries: int = LRU_ENTRIES,
        burst: int = SPAM_BURST,
        qps: float = SPAM_QPS,
        max_events: int = AGGREGATE_MAX_EVENTS,
        max_interval: timedelta = AGGREGATE_INTERVAL,
    ) -> None:
        self.clock = clock
        self.burst = burst
        self.qps = qps
        self.max_events = max_events
        self.max_interval = max_interval
        self._lock = threading.Lock()
        self._spam: _Lru[_Bucket] = _Lru(lru_entries)
        self._aggregates: _Lru[_Aggregate] = _Lru(lru_entries)
        self._log: _Lru[_Logged] = _Lru(lru_entries)

    def correlate(self, event: Mapping[str, Any]) -> Correlated | None:
        """``EventCorrelate``: the event to create or the patch to send, or None when the spam filter
        drops it."""
        now = self.clock()
        with self._lock:
            ev, key = self._aggregate(event, now)
            ev, patch = self._observe(ev, key)
            bucket_key = spam_key(ev)
            bucket = self._spam.get(bucket_key) or _Bucket(float(self.burst), now)
            accepted = bucket.try_accept(now, self.burst, self.qps)
            self._spam.put(bucket_key, bucket)
        if not accepted:
            return None
        return Correlated(ev, key, patch)

    def _aggregate(self, event: Mapping[str, Any], now: datetime) -> tuple[JSON, Hashable]:
        group, local = aggregate_key(event)
        rec = self._aggregates.get(group)
        if rec is None or rec.last is None or now - rec.last > self.max_interval:
            rec = _Aggregate()
        rec.local_keys.add(local)
        rec.last = now
        self._aggregates.put(group, rec)
        if len(rec.local_keys) < self.max_events:
            return dict(event), event_key(event)
        rec.local_keys.pop()  # the set never grows past the threshold
        meta = event.get("metadata") or {}
        io = dict(event.get("involvedObject") or {})
        stamp = format_time(now)
        combined: JSON = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{io.get('name', '')}.{int(now.timestamp() * 1e9):x}",
                "namespace": meta.get("namespace", io.get("namespace", "")),
            },
            "involvedObject": io,
            "reason": event.get("reason", ""),
            "message": AGGREGATE_PREFIX + str(event.get("message", "")),
            "type": event.get("type", ""),
            "source": dict(event.get("source") or {}),
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        return combined, ("aggregate", group)

    def _observe(self, ev: JSON, key: Hashable) -> tuple[JSON, JSON | None]:
        last = self._log.get(key)
        patch: JSON | None = None
        if last is not None and last.count > 0:
            meta = {**(ev.get("metadata") or {}), "name": last.name}
            if last.resource_version:
                meta["resourceVersion"] = last.resource_version
            ev = {**ev, "metadata": meta, "firstTimestamp": last.first_timestamp, "count": last.count + 1}
            patch = {
                "count": ev["count"],
                "lastTimestamp": ev.get("lastTimestamp"),
                "message": ev.get("message"),
            }
        self._log.put(key, _logged(ev))
        return ev, patch

    def update_state(self, key: Hashable, stored: Mapping[str, Any]) -> None:
        """After a write: the server's name, resourceVersion, count and firstTimestamp."""
        if not stored.get("metadata"):
            return
        with self._lock:
            self._log.put(key, _logged(stored))


def _logged(ev: Mapping[str, Any]) -> _Logged:
    meta = ev.get("metadata") or {}
    return _Logged(
        count=int(ev.get("count") or 0),
        first_timestamp=str(ev.get("firstTimestamp") or ""),
        name=str(meta.get("name", "")),
        resource_version=str(meta.get("resourceVersion", "")),
    )
