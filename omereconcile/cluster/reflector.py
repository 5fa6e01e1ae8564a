"""The watch cache: a reflector lists then watches one path and keeps a store of the objects (client-go's
``Reflector`` + ``Store``, with controller-runtime's indexers, managed-fields trimming and update
predicates), sharded by a ``shardSelector`` when the process holds shard ranges (issue 31). The
controller watches through it, and so does ``kubectl ome get --watch`` (``omereconcile.kubectl.live``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from omereconcile.cluster.kube import JSON, ApiError, Gone, Kube
from omereconcile.metrics import Metrics
from omereconcile.sharding import ShardSelector, filter_items, in_shard, server_sharded, shard_query

Key = tuple[str, str]  # (namespace, name)

__all__ = ["Key", "Reflector", "key_of", "strip_managed_fields"]

log = logging.getLogger("omereconcile.controller")  # the name logs have always carried


def strip_managed_fields(obj: JSON) -> JSON:
    """``obj`` without ``metadata.managedFields`` (in place; the object was just decoded for us), as
    controller-runtime's ``cache.TransformStripManagedFields`` trims a cache: no decision reads them,
    and they are a large share of a pod's bytes (one entry per writer: the creator, the kubelet's
    status, each gate patch), so the stores of a large fleet hold much less without them."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def key_of(obj: JSON) -> Key:
    """(namespace, name) of an object: the key of the stores."""
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
        fresh = {key_of(o): strip_managed_fields(o) if self.trim else o for o in items}
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
                    k = key_of(obj)
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
