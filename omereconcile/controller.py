"""The reconcile loop: watches feed a level-triggered work queue keyed by replica.

- **Reflectors** list then watch each resource with a server timeout and a client read timeout; a 410
  Gone (as a status or an ERROR event) relists from ``resourceVersion=""``, other failures back off and
  re-watch (a second failure in a row relists). Every relist is counted by reason.
- **Triggers**: a replica event enqueues that replica; a pod, Service, EndpointSlice or
  ControllerRevision event enqueues the replicas of its ``ome.io/inferenceservice``/``component``
  labels (found through an index of the replicas store on those keys); a model, runtime (any runtime
  of an inheritance chain) or fine-tuned weight event enqueues the replicas whose last render used it
  (a blocked render, or an auto-selected runtime, depends on every object of that category); a change
  of the ``inferenceservice-config`` ConfigMap enqueues everything. A periodic resync enqueues every
  replica.
- **Filters** (controller-runtime's update predicates, ``omereconcile.predicates``): an update that
  changes nothing a pass reads enqueues nothing, nor does the watch echo of the controller's own write
  to a replica: the pass that wrote the replica asks for its next pass itself, at once, as Go's
  reconcile returns ``Requeue`` after an update ran (unless it also wrote pods, whose watch events
  bring the next pass once the cache shows them). The end of a count window is a pass only if no status
  write landed since the counts were held; a re-run whose trigger the pass before took is skipped.
- **Expectations** (``omereconcile.expectations``, the ReplicaSet controller's): after a pass writes
  pods, the replica's next pass waits until the pods cache shows those writes (or 30 s pass), so a
  lagging cache cannot make it repeat a create or a gate patch.
- **The queue** (client-go semantics): a key is never processed by two workers at once; adds while it
  is processed mark it dirty and it runs again after; failures requeue with per-key exponential backoff
  (``base * 2**n`` up to ``max``), forgotten on success; ``requeue_after`` schedules the next look.
- **A pass** reads the replica fresh and what it owns from the reflectors' stores (``observe`` with
  :class:`CachedOwned`, indexed by namespace and labels as controller-runtime's informer indexers do),
  plans (``omereconcile.planner.plan``), executes, and maps the outcome to controller-runtime's results:
  success, error, requeue, requeue_after. A settled replica's pass costs one GET and no write.
  A status write that only publishes counts is held back for at most ``status_window`` seconds
  (:class:`~omereconcile.coalesce.StatusCoalescer`), so a roll writes its journal once per step.
- **Concurrency** (``--concurrency``): that many workers; the queue never hands one key to two of them,
  and a key waiting out its backoff sits in the delay heap, not in the FIFO, so it never holds up others.
"""

from __future__ import annotations

import heapq
import logging
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from omereconcile.actions import WriteStatus
from omereconcile.coalesce import DEFAULT_WINDOW, StatusCoalescer
from omereconcile.executor import Executor
from omereconcile.expectations import DEFAULT_TIMEOUT, Expectations
from omereconcile.kube import JSON, ApiError, Forbidden, Gone, Kube, NotFound, TooManyRequests
from omereconcile.logs import ReconcileLogger, for_reconcile
from omereconcile.metrics import Metrics
from omereconcile.observe import (
    CATALOG_RESOURCES,
    SERVICE_NAME_LABEL,
    Dependency,
    build_catalog,
    category_of,
    observe,
    paths,
)
from omereconcile.planner import plan
from omereconcile.predicates import plan_relevant_update, replica_update_matters
from omereconcile.settings import OperatorSettings, SettingsError, settings_from_configmap
from omereconcile.sharding import (
    NAMESPACE_FIELD,
    ShardRange,
    ShardSelector,
    filter_items,
    fnv1a_64,
    in_shard,
    server_sharded,
    shard_query,
)
from omereconcile.world import LEDGER_SUFFIX
from omerender import constants as c
from omerender.catalog import Catalog
from omerender.inheritance import Resolver

__all__ = ["CachedOwned", "Controller", "Reflector", "WorkQueue"]

log = logging.getLogger("omereconcile.controller")

Key = tuple[str, str]  # (namespace, name)
# Tags of delayed adds, and the triggers they become: a retry, the planner's wake, the count window's end.
RETRY, WAKE, WINDOW = "retry", "wake", "window"
CONFIG_NAME = "inferenceservice-config"
# The kinds watched per scope and, sharded, per range held (``Controller._replica_reflectors``).
REPLICA_RESOURCES = (
    "inferencereplicas",
    "pods",
    "services",
    "endpointslices",
    "controllerrevisions",
    "ledgers",
)
# Sharded: how soon a replica of a range held but not yet acted on (syncing, renewal late) looks again.
RANGE_WAIT = 1.0


# -- the work queue --------------------------------------------------------------------------------------


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


# -- reflectors ------------------------------------------------------------------------------------------


def strip_managed_fields(obj: JSON) -> JSON:
    """``obj`` without ``metadata.managedFields`` (in place; the object was just decoded for us), as
    controller-runtime's ``cache.TransformStripManagedFields`` trims a cache: no decision reads them,
    and they are a large share of a pod's bytes (one entry per writer: the creator, the kubelet's
    status, each gate patch), so the stores of a large fleet hold much less without them."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def _key_of(obj: JSON) -> Key:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


class Reflector:
    """List then watch one path; keep a store of the objects; call ``on_event(type, obj)``.

    ``on_event`` gets ``ADDED``/``MODIFIED``/``DELETED``; a relist replays the differences (objects that
    disappeared while the watch was down come back as ``DELETED``). With ``index``, the store is also kept
    grouped by ``index(obj)`` (None leaves an object out of the index), so a pass finds a replica's objects
    without scanning every pod of the cluster. With ``trim``, objects are stored (and handed on) without
    ``metadata.managedFields`` (``strip_managed_fields``). With ``relevant(old, new)``, an update for
    which it returns False still replaces the stored object but calls no ``on_event`` (counted in
    ``filtered``), as controller-runtime's update predicates do. Stored objects are shared: callers must
    not mutate them. With ``shard`` (issue 31), the list and watch carry it as ``shardSelector``; when the
    API server does not echo it in the list's ``shardInfo`` (gate ``ShardedListAndWatch`` off, older
    server), the reflector keeps only the objects in the shard itself (``server_sharded`` False),
    logging that once per process: same store, no saving on traffic.
    """

    def __init__(
        self,
        kube: Kube,
        path: str,
        name: str,
        on_event: Callable[[str, JSON], None],
        *,
        stop: threading.Event,
        metrics: Metrics | None = None,
        timeout_seconds: int = 60,
        index: Callable[[JSON], Hashable | None] | None = None,
        trim: bool = False,
        relevant: Callable[[JSON, JSON], bool] | None = None,
        shard: ShardSelector | None = None,
        **query: str,
    ) -> None:
        self.kube = kube
        self.shard = shard
        self.server_sharded: bool | None = None  # known after the first list
        self.trim = trim
        self.relevant = relevant
        self.filtered = 0
        self.path = path
        self.name = name
        self.on_event = on_event
        self.stop_event = stop
        self.metrics = metrics
        self.timeout_seconds = timeout_seconds
        self.query: dict[str, Any] = {**query, **shard_query(shard)}
        self.store: dict[Key, JSON] = {}
        self.index_fn = index
        self._index: dict[Hashable, dict[Key, JSON]] = {}
        self.lock = threading.Lock()
        self.synced = threading.Event()
        self.last_activity = time.monotonic()
        self._resp: Any = None
        self._thread = threading.Thread(target=self._run, name=f"reflector-{name}", daemon=True)
        self.relists: dict[str, int] = {}

    def start(self) -> Reflector:
        self._thread.start()
        return self

    def items(self) -> list[JSON]:
        with self.lock:
            return list(self.store.values())

    def get(self, key: Key) -> JSON | None:
        with self.lock:
            return self.store.get(key)

    def by_index(self, value: Hashable) -> list[JSON]:
        with self.lock:
            return list((self._index.get(value) or {}).values())

    def _put_locked(self, k: Key, obj: JSON) -> None:
        self._drop_locked(k)
        self.store[k] = obj
        if self.index_fn is not None:
            iv = self.index_fn(obj)
            if iv is not None:
                self._index.setdefault(iv, {})[k] = obj

    def _drop_locked(self, k: Key) -> None:
        old = self.store.pop(k, None)
        if old is not None and self.index_fn is not None:
            iv = self.index_fn(old)
            bucket = self._index.get(iv) if iv is not None else None
            if bucket is not None:
                bucket.pop(k, None)
                if not bucket:
                    del self._index[iv]

    def close(self) -> None:
        resp = self._resp
        if resp is not None:
            for meth in ("shutdown", "close"):
                fn = getattr(resp, meth, None)
                if fn is not None:
                    try:
                        fn()
                    except Exception:  # best effort: the read timeout ends it anyway
                        log.debug("closing watch", exc_info=True)
                    break

    def _relist(self, reason: str) -> str:
        self.relists[reason] = self.relists.get(reason, 0) + 1
        if self.metrics is not None:
            self.metrics.watch_relists.labels(self.name, reason).inc()
        if reason != "initial":
            log.info("relisting", extra={"resource": self.name, "reason": reason})
        out = self.kube.list(self.path, **self.query)
        items = out["items"]
        if self.shard is not None:
            self.server_sharded = server_sharded(out, self.shard)
            if not self.server_sharded:
                _say_client_side_filter_once(self.shard, self.name)
                items = filter_items(items, self.shard)
        fresh = {_key_of(o): strip_managed_fields(o) if self.trim else o for o in items}
        with self.lock:
            old = self.store
            self.store = {}
            self._index = {}
            for k, obj in fresh.items():
                self._put_locked(k, obj)
        for k, obj in fresh.items():
            prev = old.get(k)
            if prev is None:
                self.on_event("ADDED", obj)
            elif (prev.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get(
                "resourceVersion"
            ):
                self._modified(prev, obj)
        for k, obj in old.items():
            if k not in fresh:
                self.on_event("DELETED", obj)
        self.synced.set()
        return str((out.get("metadata") or {}).get("resourceVersion") or "")

    def _run(self) -> None:
        rv: str | None = None
        reason = "initial"
        failures = 0
        while not self.stop_event.is_set():
            try:
                if rv is None:
                    rv = self._relist(reason)
                    failures = 0
                for ev in self.kube.watch(
                    self.path,
                    resource_version=rv,
                    timeout_seconds=self.timeout_seconds,
                    on_open=self._set_resp,
                    **self.query,
                ):
                    self.last_activity = time.monotonic()
                    obj = strip_managed_fields(ev.object) if self.trim else ev.object
                    new_rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                    if ev.type == "BOOKMARK" or (
                        self.server_sharded is False and not in_shard(obj, self.shard)
                    ):
                        rv = new_rv
                        continue
                    k = _key_of(obj)
                    with self.lock:
                        prev = self.store.get(k)
                        if ev.type == "DELETED":
                            self._drop_locked(k)
                        else:
                            self._put_locked(k, obj)
                    rv = new_rv
                    if ev.type == "MODIFIED" and prev is not None:
                        self._modified(prev, obj)
                    else:
                        self.on_event(ev.type, obj)
                    if self.stop_event.is_set():
                        break
                failures = 0
                self.last_activity = time.monotonic()
            except Gone:
                rv, reason = None, "gone"
            except ApiError as exc:
                if self.stop_event.is_set():
                    break
                failures += 1
                if failures >= 2:
                    rv, reason = None, "error"
                delay = min(0.2 * 2**failures, 10.0) * (0.5 + random.random() / 2)
                log.warning(
                    "watch failed", extra={"resource": self.name, "error": str(exc), "retry_in": delay}
                )
                self.stop_event.wait(delay)
            except Exception:  # a bug in a handler must not kill the watch silently
                log.exception("reflector crashed; relisting", extra={"resource": self.name})
                rv, reason = None, "error"
                self.stop_event.wait(1.0)
            finally:
                self._resp = None

    def _set_resp(self, resp: Any) -> None:
        self._resp = resp

    def _modified(self, old: JSON, new: JSON) -> None:
        if self.relevant is not None and not self.relevant(old, new):
            self.filtered += 1
            return
        self.on_event("MODIFIED", new)


_client_filter_said: set[str] = set()
_client_filter_lock = threading.Lock()


def _say_client_side_filter_once(shard: ShardSelector, resource: str) -> None:
    """Once per resource and process: the server did not shard this kind's list. Seen on the 1.36.3
    testbed with the gate on for custom resources (InferenceReplicas: no ``shardInfo``), while built-in
    kinds (pods, ConfigMaps, ControllerRevisions) are sharded."""
    with _client_filter_lock:
        if resource in _client_filter_said:
            return
        _client_filter_said.add(resource)
    log.warning(
        f"the API server does not shard {resource} (no shardInfo echoed): filtering on this side by the "
        f"same hash, so this process receives every {resource} object. Built-in kinds are sharded once "
        "kube-apiserver (1.36+) runs with --feature-gates=ShardedListAndWatch=true; custom resources are "
        "not, in 1.36",
        extra={"shard_selector": shard.to_string(), "resource": resource},
    )


def _merged(ranges: Iterable[ShardRange]) -> tuple[ShardRange, ...]:
    """Sorted ranges with adjacent ones joined: a shorter selector, the same objects."""
    out: list[ShardRange] = []
    for r in sorted(ranges):
        if out and out[-1].end == r.start:
            out[-1] = ShardRange(out[-1].start, r.end)
        else:
            out.append(r)
    return tuple(out)


def _labels_of(obj: JSON) -> dict[str, Any]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def owner_index(obj: JSON) -> Hashable | None:
    """(namespace, ``ome.io/inferenceservice``, ``component`` labels): how a pass selects pods and
    ControllerRevisions (``observe.selector``)."""
    labels = _labels_of(obj)
    prefix, component = labels.get(c.LABEL_INFERENCESERVICE), labels.get(c.LABEL_COMPONENT)
    if prefix is None or component is None:
        return None
    return (_key_of(obj)[0], str(prefix), str(component))


def replica_index(obj: JSON) -> Hashable | None:
    """(namespace, name prefix, component) of a replica: the ``ome.io/inferenceservice`` and
    ``component`` labels its owned objects carry (``observe.observe`` selects them the same way)."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    prefix = (spec.get("parentRef") or {}).get("name") or meta.get("name")
    return (str(meta.get("namespace") or ""), str(prefix or ""), str(spec.get("component") or ""))


def service_name_index(obj: JSON) -> Hashable | None:
    """(namespace, ``kubernetes.io/service-name``): how a pass selects the headless Service's slices."""
    svc = _labels_of(obj).get(SERVICE_NAME_LABEL)
    return None if svc is None else (_key_of(obj)[0], str(svc))


class CachedOwned:
    """``observe.OwnedReader`` over the controller's reflectors: no request at all."""

    def __init__(self, reflectors: Callable[[str], list[Reflector]]) -> None:
        self._reflectors = reflectors

    def _indexed(self, resource: str, value: Hashable) -> list[JSON]:
        out = [o for r in self._reflectors(resource) for o in r.by_index(value)]
        return sorted(out, key=lambda o: str((o.get("metadata") or {}).get("name") or ""))

    def pods(self, namespace: str, prefix: str, component: str) -> list[JSON]:
        return self._indexed("pods", (namespace, prefix, component))

    def revisions(self, namespace: str, prefix: str, component: str) -> list[JSON]:
        return self._indexed("controllerrevisions", (namespace, prefix, component))

    def _named(self, resource: str, namespace: str, name: str) -> JSON | None:
        for r in self._reflectors(resource):
            obj = r.get((namespace, name))
            if obj is not None:
                return obj
        return None

    def service(self, namespace: str, name: str) -> JSON | None:
        return self._named("services", namespace, name)

    def slices(self, namespace: str, service_name: str) -> list[JSON]:
        return self._indexed("endpointslices", (namespace, service_name))

    def pod(self, namespace: str, name: str) -> JSON | None:
        return self._named("pods", namespace, name)

    def ledger(self, namespace: str, name: str) -> JSON | None:
        return self._named("ledgers", namespace, name)


# -- the controller --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PassResult:
    result: str  # success | error | requeue | requeue_after
    requeue_after: float | None = None
    error: str | None = None
    actions: int = 0
    summary: str = ""
    # Run the next pass at once (the pass wrote the replica; its echo enqueues nothing).
    follow_up: bool = False
    # Counts were held back (``StatusCoalescer``): look again when their window ends, unless a status
    # write of the replica lands before.
    window_after: float | None = None


class Controller:
    def __init__(
        self,
        kube: Kube,
        *,
        namespaces: Iterable[str] | None = None,
        ome_namespace: str = "ome",
        config_name: str = CONFIG_NAME,
        workers: int = 2,
        resync_period: float = 300.0,
        watch_timeout: int = 60,
        metrics: Metrics | None = None,
        identity: str = "",
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        status_window: float = DEFAULT_WINDOW,
        expectations_timeout: float = DEFAULT_TIMEOUT,
        shard_ranges: Sequence[ShardRange] | None = None,
        fence: Callable[[], frozenset[int]] | None = None,
    ) -> None:
        self.kube = kube
        # Sharded (issue 31): the agreed hash ranges over the namespace; the replicas and what they own
        # are watched only for the ranges held (``hold_ranges``), and a replica is acted on only while
        # ``fence()`` (the range Leases renewed within the renew deadline) holds its range.
        self.shard_ranges = tuple(shard_ranges) if shard_ranges is not None else None
        self.fence = fence
        self._held_lock = threading.Lock()
        self._wanted: set[int] = set()  # the ranges held (their Leases)
        self._active: frozenset[int] = frozenset()  # held, and covered by synced watches
        self._rewatch = threading.Event()
        self._swapper: threading.Thread | None = None
        self._pending: list[Reflector] = []  # watches being built (listing, syncing)
        self._inflight: Counter[int] = Counter()  # passes running, by range
        self.fenced_skips = 0  # passes skipped or stopped because the range was not held
        self._ledgers_readable: dict[str | None, bool] = {}
        self.namespaces = sorted(set(namespaces)) if namespaces else None
        self.ome_namespace = ome_namespace
        self.config_name = config_name
        self.workers = workers
        self.resync_period = resync_period
        self.watch_timeout = watch_timeout
        self.metrics = metrics or Metrics()
        self.clock = clock
        self.stop_event = threading.Event()
        self.queue = WorkQueue(metrics=self.metrics, on_due=self._on_due)
        self.executor = Executor(
            kube,
            reporting_instance=identity,
            guard=None if shard_ranges is None else self._may_act_on,
        )
        self.coalescer = StatusCoalescer(status_window)
        self._catalog_lock = threading.Lock()
        self._catalog: tuple[Catalog, Resolver] | None = None
        self._settings = OperatorSettings()
        self._settings_error: str | None = None
        # The ConfigMap's data as last seen: renders read its `deploy` defaults (a bad one blocks them).
        self._config_data: JSON = {}
        self._deps: dict[Key, frozenset[Dependency]] = {}
        self._deps_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self.reflectors: dict[str, list[Reflector]] = {}
        self.owned = CachedOwned(lambda resource: self.reflectors.get(resource, []))
        self.expectations = Expectations(self.owned.pod, expectations_timeout, ledgers=self.owned.ledger)
        self.last_progress = time.monotonic()
        self.passes = 0
        # What enqueued each pass (the first trigger since the key's last pass), for benchmarks; the
        # updates the filters dropped, by resource; the passes that waited on expectations.
        self._stats_lock = threading.Lock()
        self._trigger: dict[Key, list[str]] = {}
        self.pass_triggers: Counter[str] = Counter()
        self.filtered: Counter[str] = Counter()
        self.waits = 0
        self.stale_windows = 0  # count-window ends skipped: a status write had landed since the hold
        self.repeats = 0  # re-runs skipped: the last pass had taken their triggers
        # When a status write of each replica last landed (monotonic): a window end scheduled before it
        # has nothing left to publish.
        self._status_written: dict[Key, float] = {}
        # When counts of each replica were last held back (monotonic), ending in a count window.
        self._window_held: dict[Key, float] = {}
        # The resourceVersion of the controller's last write to each replica: its echo is filtered.
        self._own_version: dict[Key, str] = {}
        kube.on_request = self._count_request
        self.metrics.received_bytes.set_function(lambda: float(getattr(kube, "received_bytes", 0)))

    def _count_request(self, verb: str, resource: str, status: int) -> None:
        self.metrics.api_requests.labels(verb, resource, str(status)).inc()

    # -- wiring ----------------------------------------------------------------------------------------
    def _scopes(self) -> list[str | None]:
        return list(self.namespaces) if self.namespaces else [None]

    def _reflect(
        self,
        name: str,
        path: str,
        on_event: Callable[[str, JSON], None],
        *,
        index: Callable[[JSON], Hashable | None] | None = None,
        trim: bool = False,
        relevant: Callable[[JSON, JSON], bool] | None = None,
        shard: ShardSelector | None = None,
        stop: threading.Event | None = None,
        register: bool = True,
        **query: str,
    ) -> Reflector:
        r = Reflector(
            self.kube,
            path,
            name,
            on_event,
            stop=stop or self.stop_event,
            metrics=self.metrics,
            timeout_seconds=self.watch_timeout,
            index=index,
            trim=trim,
            relevant=relevant,
            shard=shard,
            **query,
        )
        if register:
            self.reflectors.setdefault(name, []).append(r)
        return r

    def _replica_reflectors(
        self, ns: str | None, shard: ShardSelector | None, stop: threading.Event | None
    ) -> list[Reflector]:
        """The watches of one scope (a namespace or all) and, sharded, one range: the replicas and every
        kind a replica owns, all of which live in the replica's namespace (not registered yet)."""
        managed = f"{c.LABEL_MANAGED_BY}={c.MANAGED_BY_VALUE}"
        out: list[Reflector] = []
        # The fleet-sized stores are trimmed; the catalog and the ConfigMap are kept whole.
        out.append(
            self._reflect(
                "inferencereplicas",
                paths.replicas(ns),
                self._on_replica,
                index=replica_index,
                trim=True,
                relevant=self._replica_relevant,
                shard=shard,
                stop=stop,
                register=False,
            )
        )
        for resource, path, index in (
            ("pods", paths.pods(ns), owner_index),
            ("services", paths.services(ns), None),
            ("endpointslices", paths.slices(ns), service_name_index),
            ("controllerrevisions", paths.revisions(ns), owner_index),
        ):
            out.append(
                self._reflect(
                    resource,
                    path,
                    self._owned_handler(resource),
                    index=index,
                    trim=True,
                    relevant=self._owned_relevant(resource),
                    shard=shard,
                    stop=stop,
                    register=False,
                    labelSelector=managed,
                )
            )
        if self._ledgers_readable.get(ns, True):
            out.append(
                self._reflect(
                    "ledgers",
                    paths.configmaps(ns),
                    self._on_ledger,
                    trim=True,
                    shard=shard,
                    stop=stop,
                    register=False,
                    labelSelector=managed,
                )
            )
        return out

    def _watched_count(self, resource: str) -> Callable[[], float]:
        return lambda: float(sum(len(r.store) for r in self.reflectors.get(resource, [])))

    def _register(self, reflectors: Iterable[Reflector]) -> None:
        # Copy on write: readers iterate the list they got without a lock.
        for r in reflectors:
            self.reflectors[r.name] = [*self.reflectors.get(r.name, []), r]

    def _unregister(self, reflectors: Iterable[Reflector]) -> None:
        gone = {id(r) for r in reflectors}
        for name, rs in list(self.reflectors.items()):
            self.reflectors[name] = [r for r in rs if id(r) not in gone]

    # -- shards ----------------------------------------------------------------------------------------
    def range_of(self, namespace: str) -> int | None:
        """The index of the range ``namespace`` hashes into (None when not sharded)."""
        if self.shard_ranges is None:
            return None
        h = fnv1a_64(namespace)
        for i, r in enumerate(self.shard_ranges):
            if r.start <= h < r.end:
                return i
        return None

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

    def start(self, *, sync_timeout: float = 60.0) -> None:
        managed = f"{c.LABEL_MANAGED_BY}={c.MANAGED_BY_VALUE}"
        # The relocation ledgers (planner/relocation.py): ConfigMaps labelled as ours, as Go stamps the
        # audit ConfigMap; a change enqueues the replica the ledger is named for. Without the RBAC to
        # read them (an older manifest) relocation is unavailable; the start says so.
        self._ledgers_readable = {
            ns: self._may_list(
                paths.configmaps(ns),
                "relocation (autoMigrate) and the force-delete audit rows are unavailable",
                "get/list/watch/create/patch on configmaps",
                labelSelector=managed,
            )
            for ns in self._scopes()
        }
        if self.shard_ranges is None:
            for ns in self._scopes():
                self._register(self._replica_reflectors(ns, None, None))
        # Nodes, for the lost-node rules (planner/nodedeath.py): only a change of a Node's Ready
        # condition or unreachable taints is a trigger, for the replicas with a pod on it. Without the
        # RBAC to read Nodes (an older manifest) the rules see no Node and never act; the start says so.
        if self._may_list(
            paths.nodes(),
            "the NodeUnknown hold and force-delete escalation read no Node",
            "get/list/watch on nodes",
        ):
            self._reflect(
                "nodes", paths.nodes(), self._on_node, trim=True, relevant=self._owned_relevant("nodes")
            )
        for kind, plural, namespaced in CATALOG_RESOURCES:
            scopes = self._scopes() if namespaced else [None]
            for ns in scopes:
                self._reflect(plural, paths.catalog(plural, namespaced, ns), self._catalog_event(kind))
        self._reflect(
            "configmaps",
            f"/api/v1/namespaces/{self.ome_namespace}/configmaps",
            self._on_config,
            fieldSelector=f"metadata.name={self.config_name}",
        )
        for resource in sorted({*self.reflectors, *REPLICA_RESOURCES}):
            # Read at scrape time; sharded, the ranges held come and go with their reflectors.
            self.metrics.watched_objects.labels(resource).set_function(self._watched_count(resource))
        for rs in self.reflectors.values():
            for r in rs:
                r.start()
        deadline = time.monotonic() + sync_timeout
        for rs in self.reflectors.values():
            for r in rs:
                if not r.synced.wait(max(deadline - time.monotonic(), 0.1)):
                    raise TimeoutError(f"cache for {r.name} did not sync in {sync_timeout}s")
        for i in range(self.workers):
            t = threading.Thread(target=self._worker, name=f"worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._resync_loop, name="resync", daemon=True)
        t.start()
        self._threads.append(t)
        self.metrics.max_workers.labels(self.metrics.controller).set(self.workers)
        log.info(
            "controller started", extra={"namespaces": self.namespaces or "all", "workers": self.workers}
        )

    def synced(self) -> bool:
        return all(r.synced.is_set() for rs in self.reflectors.values() for r in rs)

    def healthy(self, stale_after: float = 300.0) -> bool:
        """Every reflector thread alive and the watches active within ``stale_after`` seconds."""
        now = time.monotonic()
        for rs in self.reflectors.values():
            for r in rs:
                if not r._thread.is_alive() and not self.stop_event.is_set():
                    return False
                if now - r.last_activity > max(stale_after, 3.0 * self.watch_timeout):
                    return False
        return all(t.is_alive() for t in self._threads) or self.stop_event.is_set()

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        self._rewatch.set()
        self.queue.shutdown()
        for rs in self.reflectors.values():
            for r in rs:
                r.close()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(deadline - time.monotonic(), 0.1))

    # -- triggers --------------------------------------------------------------------------------------
    def replica_keys(self) -> list[Key]:
        return [k for r in self.reflectors.get("inferencereplicas", []) for k in _keys(r)]

    def enqueue_all(self, trigger: str = "resync") -> None:
        for k in self.replica_keys():
            self._enqueue(k, trigger)

    def _enqueue(self, key: Key, trigger: str) -> None:
        with self._stats_lock:
            self._trigger.setdefault(key, []).append(trigger)
        self.queue.add(key)

    def _on_due(self, key: Key, tag: str) -> None:
        with self._stats_lock:
            self._trigger.setdefault(key, []).append(tag)

    def _stale_window_only(self, key: Key, triggers: list[str]) -> bool:
        """Whether every trigger of this pass is the end of a count window, and a status write of the
        replica landed after the last hold: that write carried every count held (the last hold is the
        latest of them), so the pass has nothing to do that its other triggers (none) would bring."""
        if not triggers or any(t != WINDOW for t in triggers):
            return False
        written, held = self._status_written.get(key), self._window_held.get(key)
        return written is not None and held is not None and held < written

    def _replica_relevant(self, old: JSON, new: JSON) -> bool:
        key = _key_of(new)
        with self._stats_lock:
            own = self._own_version.get(key)
        if replica_update_matters(old, new, own):
            return True
        with self._stats_lock:
            self.filtered["inferencereplicas"] += 1
        return False

    def _owned_relevant(self, resource: str) -> Callable[[JSON, JSON], bool]:
        def relevant(old: JSON, new: JSON) -> bool:
            if plan_relevant_update(resource, old, new):
                return True
            with self._stats_lock:
                self.filtered[resource] += 1
            return False

        return relevant

    def _on_replica(self, etype: str, obj: JSON) -> None:
        key = _key_of(obj)
        if etype == "DELETED":
            with self._deps_lock:
                self._deps.pop(key, None)
            with self._stats_lock:
                self._own_version.pop(key, None)
                self._status_written.pop(key, None)
                self._window_held.pop(key, None)
            self.expectations.forget(key)
        self._enqueue(key, "replica")

    def _owned_handler(self, resource: str) -> Callable[[str, JSON], None]:
        return lambda etype, obj: self._on_owned(etype, obj, resource)

    def _on_owned(self, etype: str, obj: JSON, trigger: str = "owned") -> None:
        meta = obj.get("metadata") or {}
        labels = meta.get("labels") or {}
        prefix = labels.get(c.LABEL_INFERENCESERVICE)
        if not prefix:
            return
        value = (str(meta.get("namespace") or ""), str(prefix), str(labels.get(c.LABEL_COMPONENT) or ""))
        for r in self.reflectors.get("inferencereplicas", []):
            for rep in r.by_index(value):
                self._enqueue(_key_of(rep), trigger)

    def _ledgers_watched(self, namespace: str) -> bool:
        """Whether a ledger watch covers ``namespace`` (all namespaces, or this one)."""
        return any(
            r.path in (paths.configmaps(None), paths.configmaps(namespace))
            for r in self.reflectors.get("ledgers", [])
        )

    def _on_ledger(self, etype: str, obj: JSON) -> None:
        """A relocation ledger changed (our own write showing in the cache, which the replica's next
        pass waits for): its replica looks again."""
        ns, name = _key_of(obj)
        if name.endswith(LEDGER_SUFFIX):
            self._enqueue((ns, name[: -len(LEDGER_SUFFIX)]), "ledger")

    def _may_list(self, path: str, unavailable: str, grant: str, **params: str) -> bool:
        """Whether the RBAC lets this controller list ``path`` (one item asked for). Without it (an
        older manifest) the rules that read it are off, and the start says which and how to grant it."""
        try:
            self.kube.list(path, limit="1", **params)
        except Forbidden as exc:
            log.warning(
                f"cannot list {path.rsplit('/', 1)[-1]}: {unavailable} (grant {grant}, as "
                "deploy/base/rbac.yaml does)",
                extra={"error": str(exc), "path": path},
            )
            return False
        return True

    def _on_node(self, etype: str, obj: JSON) -> None:
        """A Node went quiet, came back or was deleted: every replica with a pod on it looks again."""
        name = str((obj.get("metadata") or {}).get("name") or "")
        seen: set[Hashable] = set()
        for r in self.reflectors.get("pods", []):
            with r.lock:
                on_node = [p for p in r.store.values() if (p.get("spec") or {}).get("nodeName") == name]
            for pod in on_node:
                value = owner_index(pod)
                if value is not None and value not in seen:
                    seen.add(value)
                    self._on_owned(etype, pod, "node")

    def node(self, name: str) -> JSON | None:
        """The Node ``name`` as the watch holds it (None: no such Node)."""
        for r in self.reflectors.get("nodes", []):
            return r.get(("", name))
        return None

    def _catalog_event(self, kind: str) -> Callable[[str, JSON], None]:
        category = category_of(kind)

        def handler(etype: str, obj: JSON) -> None:
            with self._catalog_lock:
                self._catalog = None
            name = str((obj.get("metadata") or {}).get("name") or "")
            with self._deps_lock:
                deps = dict(self._deps)
            for key in self.replica_keys():
                d = deps.get(key)
                if d is None or (category, name) in d or (category, "*") in d:
                    self._enqueue(key, "catalog")

        return handler

    def _on_config(self, etype: str, obj: JSON) -> None:
        data = None if etype == "DELETED" else (obj.get("data") or {})
        with self._catalog_lock:
            if (data or {}) != self._config_data:
                self._config_data = dict(data or {})
                self._catalog = None
        try:
            settings = settings_from_configmap(data)
            self._settings_error = None
        except SettingsError as exc:
            # OME's manager refuses to start on this; a running process keeps its last good settings.
            log.error(
                "inferenceservice-config unusable; keeping the last good settings", extra={"error": str(exc)}
            )
            self._settings_error = str(exc)
            return
        if settings.update_retry_invalid:
            # OME treats an invalid updateRetry as unconfigured: the first workload-caused failure holds.
            log.warning("lifecycle.updateRetry ignored", extra={"error": settings.update_retry_invalid})
        if why := settings.retry_block_history_limit_invalid:  # OME: invalid means unconfigured (no cap)
            log.warning("lifecycle.retryBlockHistoryLimit ignored", extra={"error": why})
        with self._catalog_lock:
            self._settings = settings
            self._catalog = None
        self.enqueue_all("config")

    def _resync_loop(self) -> None:
        while not self.stop_event.wait(self.resync_period):
            self.enqueue_all()

    # -- state -----------------------------------------------------------------------------------------
    def catalog(self) -> tuple[Catalog, Resolver, OperatorSettings]:
        with self._catalog_lock:
            if self._catalog is None:
                objs: list[JSON] = []
                for kind, plural, _ in CATALOG_RESOURCES:
                    for r in self.reflectors.get(plural, []):
                        for o in r.items():
                            o.setdefault("kind", kind)
                            o.setdefault("apiVersion", c.API_VERSION)
                            objs.append(o)
                cat = build_catalog(
                    objs,
                    self._settings.controller_identity,
                    self._settings.accelerator_resources,
                    self._config_data,
                )
                self._catalog = (cat, Resolver(cat))
            return self._catalog[0], self._catalog[1], self._settings

    # -- workers ---------------------------------------------------------------------------------------
    def _worker(self) -> None:
        m = self.metrics
        name = m.controller
        while not self.stop_event.is_set():
            key = self.queue.get(timeout=1.0)
            if key is None:
                continue
            m.active_workers.labels(name).inc()
            t0 = time.monotonic()
            try:
                res = self.reconcile(key)
            except Exception as exc:  # a bug: count it, back off, keep the worker alive
                log.exception("reconcile crashed", extra={"namespace": key[0], "replica": key[1]})
                res = PassResult("error", error=repr(exc))
            finally:
                dt = time.monotonic() - t0
                m.active_workers.labels(name).dec()
                m.reconcile_time.labels(name).observe(dt)
                m.work_duration.labels(name, name).observe(dt)
            m.reconcile_total.labels(name, res.result).inc()
            if res.result == "error":
                m.reconcile_errors.labels(name).inc()
                self.queue.add_rate_limited(key, res.requeue_after)
            elif res.result == "requeue":
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
                if res.follow_up:
                    self._enqueue(key, "follow-up")
                else:
                    if res.result == "requeue_after" and res.requeue_after is not None:
                        self.queue.add_after(key, res.requeue_after, WAKE)
                    if res.window_after is not None:
                        with self._stats_lock:
                            self._window_held[key] = time.monotonic()
                        self.queue.add_after(key, res.window_after, WINDOW)
            self.queue.done(key)
            self.last_progress = time.monotonic()

    def reconcile(self, key: Key) -> PassResult:
        ns, name = key
        lg = for_reconcile(ns, name)
        with self._stats_lock:
            triggers = self._trigger.pop(key, [])
            if self._stale_window_only(key, triggers):
                self.stale_windows += 1
                return PassResult("success")
            if not triggers:
                # Every add records its trigger first, and a pass takes them before it reads: a key
                # with none was added again while its last pass ran, by a trigger that pass had already
                # taken (and read the change of). Nothing is left for this one.
                self.repeats += 1
                return PassResult("success")
        trigger = triggers[0]
        if self.shard_ranges is not None:
            i = self.range_of(ns)
            if not self.may_act(ns) or i is None:
                with self._stats_lock:
                    self.fenced_skips += 1
                if i in self.held_ranges():
                    # Held, but its watches are still syncing or the Lease's renewal is late: look again.
                    return PassResult("requeue_after", RANGE_WAIT)
                return PassResult("success")  # not this process's replica (now): its holder acts
            with self._stats_lock:
                self._inflight[i] += 1
            try:
                return self._pass(key, trigger, lg)
            finally:
                with self._stats_lock:
                    self._inflight[i] -= 1
        return self._pass(key, trigger, lg)

    def _pass(self, key: Key, trigger: str, lg: ReconcileLogger) -> PassResult:
        ns, name = key
        if self.expectations.wait(key) is not None:
            # The last pass's pod writes are not in the cache yet: the watch events that show them
            # enqueue the replica. This pass reads and writes nothing and, as the ReplicaSet controller's
            # sync while its expectations are unmet, schedules nothing: a wait that never ends in an
            # event ends at the next trigger after the timeout, the resync at the latest.
            with self._stats_lock:
                self.waits += 1
            return PassResult("success")
        with self._stats_lock:
            self.pass_triggers[trigger] += 1
        catalog, resolver, settings = self.catalog()
        try:
            obs = observe(
                self.kube,
                ns,
                name,
                catalog=catalog,
                settings=settings,
                now=self.clock(),
                resolver=resolver,
                owned=self.owned,
                nodes=self.node if "nodes" in self.reflectors else None,
                ledgers=self._ledgers_watched(ns),
            )
        except TooManyRequests as exc:
            return PassResult("error", requeue_after=exc.retry_after, error=str(exc))
        except ApiError as exc:
            lg.warning("observe failed", extra={"error": str(exc)})
            return PassResult("error", error=str(exc))
        self.passes += 1
        if obs is None:
            self.coalescer.forget(key)
            self.expectations.forget(key)
            with self._deps_lock:
                self._deps.pop(key, None)
            lg.debug("replica gone")
            return PassResult("success")
        with self._deps_lock:
            self._deps[key] = obs.deps
        raw = plan(obs.world)
        p = self.coalescer.filter(key, raw)
        if p.actions:
            lg.info(
                "plan",
                extra={
                    "summary": p.summary,
                    "actions": [
                        f"{type(a).__name__} {getattr(a, 'name', '') or getattr(a, 'event_reason', '')}".strip()
                        for a in p.actions
                    ],
                    "requeue_after": p.requeue_after,
                    "update_revision": getattr(obs.world.render, "name", None),
                },
            )
        res = self.executor.execute(p, obs.replica, logger=lg)
        if any(isinstance(a, WriteStatus) for a in res.applied):
            self.coalescer.written(key)
            with self._stats_lock:
                self._status_written[key] = time.monotonic()
        self.expectations.expect(key, res.applied, {pod.name: pod.uid for pod in obs.world.pods})
        if res.replica_version is not None:
            with self._stats_lock:
                self._own_version[key] = res.replica_version
        # The echo of a replica write enqueues nothing, so the pass asks for the next one itself, unless
        # pod writes are pending: their watch events bring it once the cache shows them.
        follow_up = res.replica_version is not None and self.expectations.wait(key) is None
        if res.fenced:
            # Still held: the Lease's renewal was late (a loaded process), not lost; look again, as a pass
            # that finds the fence closed before it starts does. Not held: the range's holder acts.
            if self.range_of(ns) in self.held_ranges():
                return PassResult("requeue_after", RANGE_WAIT, actions=len(res.applied))
            return PassResult("success", actions=len(res.applied))
        if not res.ok:
            if res.gone and isinstance(res.error, NotFound):
                return PassResult("success", actions=len(res.applied))
            if res.conflict:
                return PassResult("requeue", error=str(res.error), actions=len(res.applied))
            retry = res.error.retry_after if isinstance(res.error, TooManyRequests) else None
            lg.warning("pass failed", extra={"error": str(res.error), "result": "error"})
            return PassResult("error", requeue_after=retry, error=str(res.error), actions=len(res.applied))
        n = len(res.applied)
        wake = raw.requeue_after
        if wake is not None and wake <= 0:
            return PassResult("requeue", actions=n, summary=p.summary)
        # The coalescer moved the requeue earlier: that is the count window's end, scheduled on its own
        # so that a status write landing before it can cancel it; the planner's wake stays as it was.
        window = p.requeue_after if p.requeue_after is not None and p.requeue_after != wake else None
        if wake is not None or window is not None:
            return PassResult(
                "requeue_after",
                wake,
                actions=n,
                summary=p.summary,
                follow_up=follow_up,
                window_after=window,
            )
        return PassResult("success", actions=n, summary=p.summary, follow_up=follow_up)


def _keys(r: Reflector) -> list[Key]:
    with r.lock:
        return list(r.store.keys())
