"""The watch set: which reflectors the controller runs per scope (a namespace, or all) and, sharded, per
set of ranges held: the replicas and every kind a replica owns (trimmed, indexed, filtered by the
update predicates), registered copy-on-write so a pass reads the list it got without a lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Iterable

from omereconcile.cluster.kube import JSON
from omereconcile.cluster.observe import paths
from omereconcile.cluster.reflector import Reflector
from omereconcile.controller.stores import owner_index, replica_index, service_name_index
from omereconcile.controller.triggers import TriggerHandlers
from omereconcile.sharding import ShardSelector
from omerender import constants as c

__all__ = ["WatchSet"]

log = logging.getLogger("omereconcile.controller")  # the name logs have always carried


class WatchSet(TriggerHandlers):
    """Builds and registers the controller's reflectors."""

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
