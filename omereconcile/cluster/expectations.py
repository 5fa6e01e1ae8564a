"""Pod writes a replica's next pass must see in the cache first, as the ReplicaSet controller's
``ControllerExpectations`` (``k8s.io/kubernetes/pkg/controller/controller_utils.go``) hold a
ReplicaSet's next sync until its informer has observed the creates and deletes of the last one.

A pass plans from the watch caches, which lag the API. Without this, a pass that runs after a pod
create but before the pods cache has seen it (another watch event of the same replica, or the
follow-up of a status write) plans the create again: a second POST, answered ``AlreadyExists``; after
a gate patch it re-sends the patch with the old resourceVersion, answered 409. So each applied pod
write is remembered until the cache shows it, and until then the replica's passes wait (they read
nothing and write nothing); the watch event that shows it enqueues the replica as before.

Unlike Go's counters (``add``/``del`` lowered by each informer event), an expectation here is a level
check of the cache, which a relist cannot skip past:

- ``CreatePod``: the cache holds a pod of that name other than the one it held when the create was sent;
- ``DeletePod``: the cache holds no pod of that name and UID, or holds it terminating;
- ``ForceDeletePod``: the cache holds no pod of that name and UID;
- ``SetServingGate`` and ``PatchPodInPlace``: the cache holds no pod of that name and UID at the resourceVersion the patch was
  pinned to (the patch bumped it; a later version includes it);
- ``WriteLedger``: the relocation ledger cache holds the ConfigMap at a version other than the one the write
  was pinned to (a create: holds it at all), so the rebuild that follows renders the new exclusions.

Go's ``ExpectationsTimeout`` (5 minutes) bounds a wait whose event never comes; here a pass waits at
most ``timeout`` seconds (30 by default), after which it plans from the cache as it is: a missed
observation can then cost a repeated create (``AlreadyExists``) or a 409, never a wrong write.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from omereconcile.actions import (
    Action,
    CreatePod,
    DeletePod,
    ForceDeletePod,
    PatchPodInPlace,
    SetServingGate,
    WriteLedger,
)

__all__ = ["DEFAULT_TIMEOUT", "Expectations", "PodLookup"]

DEFAULT_TIMEOUT = 30.0

# (namespace, pod name) -> the cached pod, or None
PodLookup = Callable[[str, str], Mapping[str, Any] | None]


@dataclass(frozen=True, slots=True)
class _Expect:
    kind: str  # create | delete | gone | patch | ledger
    name: str
    uid: str | None  # create: the UID cached when it was sent (None: no pod of that name)
    resource_version: str = ""


def _meta(pod: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (pod or {}).get("metadata") or {}


def _observed(e: _Expect, pod: Mapping[str, Any] | None) -> bool:
    meta = _meta(pod)
    if e.kind == "ledger":  # ``pod`` is the ledger ConfigMap here
        return pod is not None and str(meta.get("resourceVersion") or "") != e.resource_version
    if e.kind == "create":
        return pod is not None and meta.get("uid") != e.uid
    if pod is None or meta.get("uid") != e.uid:
        return True  # gone, or replaced by another incarnation of the name
    if e.kind == "delete":
        return meta.get("deletionTimestamp") is not None
    if e.kind == "gone":
        return False  # a force-delete is seen once the name holds no pod of that UID
    return str(meta.get("resourceVersion") or "") != e.resource_version


class Expectations:
    """Per replica key: the pod writes of its last pass not yet seen in the cache, and until when to
    wait for them."""

    def __init__(
        self,
        lookup: PodLookup,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        clock: Callable[[], float] = time.monotonic,
        ledgers: PodLookup | None = None,
    ) -> None:
        if timeout < 0:
            raise ValueError(f"expectations timeout must be >= 0 seconds, got {timeout}")
        self.lookup = lookup
        self.ledgers = ledgers  # (namespace, ConfigMap name) -> the cached ledger; None: not awaited
        self.timeout = timeout
        self.clock = clock
        self._pending: dict[tuple[str, str], tuple[float, tuple[_Expect, ...]]] = {}
        self._lock = threading.Lock()
        self.expired = 0  # waits that ran out before the cache showed the writes

    def expect(
        self, key: tuple[str, str], applied: Iterable[Action], planned_from: Mapping[str, str]
    ) -> None:
        """Remember the pod writes a pass of ``key`` applied (other actions are not cached pods).
        ``planned_from`` maps the pod names the pass read to their UIDs: a create expects a pod other
        than that one (taken from the pass's reads, not the cache now, which may already show it)."""
        items: list[_Expect] = []
        for act in applied:
            if isinstance(act, CreatePod):
                items.append(_Expect("create", act.name, planned_from.get(act.name)))
            elif isinstance(act, DeletePod):
                items.append(_Expect("delete", act.name, act.uid))
            elif isinstance(act, ForceDeletePod):
                items.append(_Expect("gone", act.name, act.uid))
            elif isinstance(act, SetServingGate | PatchPodInPlace):
                items.append(_Expect("patch", act.name, act.uid, act.resource_version))
            elif isinstance(act, WriteLedger) and self.ledgers is not None:
                items.append(_Expect("ledger", act.name, None, act.resource_version or ""))
        with self._lock:
            if items:
                self._pending[key] = (self.clock() + self.timeout, tuple(items))
            else:
                self._pending.pop(key, None)

    def wait(self, key: tuple[str, str]) -> float | None:
        """Seconds ``key``'s pass should still wait for the cache, or None when it may plan now
        (every write seen, none pending, or the wait ran out; the memory then goes)."""
        with self._lock:
            entry = self._pending.get(key)
        if entry is None:
            return None
        deadline, items = entry
        left = deadline - self.clock()
        unseen = [e for e in items if not _observed(e, self._cached(key[0], e))]
        with self._lock:
            if not unseen or left <= 0:
                if self._pending.get(key) is entry:
                    del self._pending[key]
                if unseen:
                    self.expired += 1
                return None
            self._pending[key] = (deadline, tuple(unseen))
        return left

    def _cached(self, namespace: str, e: _Expect) -> Mapping[str, Any] | None:
        if e.kind == "ledger" and self.ledgers is not None:
            return self.ledgers(namespace, e.name)
        return self.lookup(namespace, e.name)

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._pending.pop(key, None)

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)
