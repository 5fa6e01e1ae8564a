"""What enqueues a replica: its own events (filtered by the update predicates), the events of what it
owns (found through the replicas' index), a ledger, a Node's condition, a catalog object it rendered
with, the ``inferenceservice-config`` ConfigMap, and the periodic resync; and the catalog a pass renders
with, rebuilt from the watched objects when one of them changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable

from omereconcile.cluster.kube import JSON, Forbidden
from omereconcile.cluster.observe import CATALOG_RESOURCES, build_catalog, category_of, paths
from omereconcile.cluster.reflector import key_of
from omereconcile.controller.predicates import plan_relevant_update, replica_update_matters
from omereconcile.controller.queue import WINDOW, Key
from omereconcile.controller.state import ControllerState
from omereconcile.controller.stores import owner_index, store_keys
from omereconcile.settings import OperatorSettings, SettingsError, settings_from_configmap
from omereconcile.world import LEDGER_SUFFIX
from omerender import constants as c
from omerender.catalog import Catalog
from omerender.inheritance import Resolver

__all__ = ["TriggerHandlers"]

log = logging.getLogger("omereconcile.controller")  # the name logs have always carried


class TriggerHandlers(ControllerState):
    """The watch handlers and the resync: each turns an event into the replica keys it concerns."""

    def replica_keys(self) -> list[Key]:
        return [k for r in self.reflectors.get("inferencereplicas", []) for k in store_keys(r)]

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
        key = key_of(new)
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
        key = key_of(obj)
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
                self._enqueue(key_of(rep), trigger)

    def _ledgers_watched(self, namespace: str) -> bool:
        """Whether a ledger watch covers ``namespace`` (all namespaces, or this one)."""
        return any(
            r.path in (paths.configmaps(None), paths.configmaps(namespace))
            for r in self.reflectors.get("ledgers", [])
        )

    def _on_ledger(self, etype: str, obj: JSON) -> None:
        """A relocation ledger changed (our own write showing in the cache, which the replica's next
        pass waits for): its replica looks again."""
        ns, name = key_of(obj)
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
