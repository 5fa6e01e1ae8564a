"""The controller's stores as a pass reads them: the indexes the reflectors keep (by owner labels, by
replica, by Service name, as controller-runtime's informer indexers do) and :class:`CachedOwned`, the
``observe.OwnedReader`` over them (no request at all).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from omereconcile.cluster.kube import JSON
from omereconcile.cluster.observe import SERVICE_NAME_LABEL
from omereconcile.cluster.reflector import Key, Reflector, key_of
from omerender import constants as c

__all__ = ["CachedOwned", "owner_index", "replica_index", "service_name_index", "store_keys"]


def _labels_of(obj: JSON) -> dict[str, Any]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def owner_index(obj: JSON) -> Hashable | None:
    """(namespace, ``ome.io/inferenceservice``, ``component`` labels): how a pass selects pods and
    ControllerRevisions (``observe.selector``)."""
    labels = _labels_of(obj)
    prefix, component = labels.get(c.LABEL_INFERENCESERVICE), labels.get(c.LABEL_COMPONENT)
    if prefix is None or component is None:
        return None
    return (key_of(obj)[0], str(prefix), str(component))


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
    return None if svc is None else (key_of(obj)[0], str(svc))


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


def store_keys(r: Reflector) -> list[Key]:
    """The keys of a reflector's store, under its lock."""
    with r.lock:
        return list(r.store.keys())
