"""Lease leader election (coordination.k8s.io/v1), controller-runtime's defaults: 15 s lease, 10 s renew
deadline, 2 s retry, identity ``hostname_uuid``.

As client-go does, expiry is judged by when *this process* last saw the lease record change, never by
comparing clocks with the holder. ``run`` blocks: it acquires, calls ``on_started``, renews, and
returns ``False`` when the lease is lost (the caller exits: a stale leader must not keep acting) or
``True`` after a requested stop, in which case the lease is released so a standby takes over at once.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from omereconcile.cluster.kube import JSON, AlreadyExists, ApiError, Conflict, Kube, NotFound
from omereconcile.metrics import Metrics
from omereconcile.sharding import (
    CUTS_ANNOTATION,
    RangeLease,
    RangePlan,
    ShardRange,
    balanced_ranges,
    cuts_lease_name,
    cuts_text,
    free_member_slot,
    member_lease_name,
    parse_cuts,
    plan_ranges,
    range_lease_name,
    validate_timing,
)

__all__ = ["CUTS_ANNOTATION", "LeaderElector", "RangeLeases", "default_identity"]


log = logging.getLogger("omereconcile.leader")


def default_identity() -> str:
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _micro(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _record(spec: JSON) -> tuple[Any, ...]:
    """What every write of a Lease's holder changes (client-go's observed record): expiry counts from
    when this process last saw it change."""
    return (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"))


class LeaderElector:
    def __init__(
        self,
        kube: Kube,
        namespace: str,
        name: str,
        *,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        metrics: Metrics | None = None,
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.name = name
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.metrics = metrics
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self.is_leader = False

    @property
    def path(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases/{self.name}"

    def _set_leader(self, value: bool) -> None:
        self.is_leader = value
        if self.metrics is not None:
            self.metrics.leader.labels(self.name).set(1 if value else 0)

    def _spec(self, acquire: datetime | None, transitions: int) -> JSON:
        now = datetime.now(UTC)
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "acquireTime": _micro(acquire or now),
            "renewTime": _micro(now),
            "leaseTransitions": transitions,
        }

    def try_acquire_or_renew(self) -> bool:
        """One attempt (client-go ``tryAcquireOrRenew``)."""
        try:
            lease = self.kube.get(self.path)
        except NotFound:
            body: JSON = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(None, 0),
            }
            try:
                self.kube.post(self.path.rsplit("/", 1)[0], body)
            except AlreadyExists:
                return False
            self._observe(body["spec"])
            return True
        spec = lease.get("spec") or {}
        self._observe(spec)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        mine = holder == self.identity
        if holder and not mine and time.monotonic() < self._observed_at + duration:
            return False  # someone else holds an unexpired lease
        transitions = int(spec.get("leaseTransitions") or 0)
        acquire = None
        if mine:
            acquire_raw = spec.get("acquireTime")
            try:
                acquire = (
                    datetime.fromisoformat(str(acquire_raw).replace("Z", "+00:00")) if acquire_raw else None
                )
            except ValueError:
                acquire = None
        else:
            transitions += 1
        lease["spec"] = self._spec(acquire, transitions)
        try:
            self.kube.put(self.path, lease)
        except Conflict:
            return False
        self._observe(lease["spec"])
        return True

    def _observe(self, spec: JSON) -> None:
        record = _record(spec)
        if record != self._observed:
            self._observed = record
            self._observed_at = time.monotonic()

    def run(
        self,
        stop: threading.Event,
        on_started: Callable[[], None],
        before_release: Callable[[], None] | None = None,
    ) -> bool:
        """Block until lost (False) or ``stop`` is set (True, after releasing the lease).

        ``before_release`` runs before a requested release (stop the work first, so no standby acts
        while this process still does)."""
        log.info(
            "waiting for the lease",
            extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity},
        )
        while not stop.is_set():
            try:
                if self.try_acquire_or_renew():
                    break
            except ApiError as exc:
                log.warning("lease attempt failed", extra={"error": str(exc)})
            stop.wait(self.retry_period)
        if stop.is_set():
            return True
        self._set_leader(True)
        log.info("became leader", extra={"lease": f"{self.namespace}/{self.name}", "identity": self.identity})
        on_started()
        last_renew = time.monotonic()
        while not stop.wait(self.retry_period):
            ok = False
            try:
                ok = self.try_acquire_or_renew()
            except ApiError as exc:
                log.warning("lease renew failed", extra={"error": str(exc)})
            if ok:
                last_renew = time.monotonic()
            elif time.monotonic() - last_renew > self.renew_deadline or not self._still_mine():
                self._set_leader(False)
                log.error("leader election lost", extra={"lease": f"{self.namespace}/{self.name}"})
                return False
        if before_release is not None:
            before_release()
        self.release()
        return True

    def _still_mine(self) -> bool:
        return self._observed is None or self._observed[0] == self.identity

    def release(self) -> None:
        """Give the lease up (holder cleared, a standby acquires on its next retry)."""
        self._set_leader(False)
        try:
            lease = self.kube.get(self.path)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            spec["holderIdentity"] = ""
            spec["leaseDurationSeconds"] = 1
            spec["renewTime"] = _micro(datetime.now(UTC))
            lease["spec"] = spec
            self.kube.put(self.path, lease)
            log.info("lease released", extra={"lease": f"{self.namespace}/{self.name}"})
        except ApiError as exc:
            log.warning("lease release failed", extra={"error": str(exc)})


class RangeLeases:
    """The range Leases of a sharded reconciler (issue 31), one per hash range, written as the leader
    Lease is: ``PREFIX-COUNT-INDEX`` in ``namespace``, compare-and-swap on ``resourceVersion``, expiry
    judged by when this process saw a record change (:class:`omereconcile.sharding.RangeLease`).

    ``round(members)`` observes every range Lease with one LIST, asks the pure
    :func:`omereconcile.sharding.plan_ranges` what to do, and performs it: releases (after the caller
    has stopped acting: the plan's ``acting`` already excludes them), renewals and takes. ``acting()``
    is the fence: the ranges renewed by this process within ``renew_deadline``, to be checked before
    every write to a replica. ``omereconcile run --shards N`` (N > 1) runs one.
    """

    def __init__(
        self,
        kube: Kube,
        namespace: str,
        count: int,
        *,
        prefix: str = "omereconcile-shard",
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        metrics: Metrics | None = None,
    ) -> None:
        validate_timing(lease_duration, renew_deadline, retry_period)
        self.metrics = metrics
        self.kube = kube
        self.namespace = namespace
        self.count = count
        self.prefix = prefix
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.clock = clock
        self._seen: dict[int, tuple[tuple[Any, ...], float]] = {}
        self._objects: dict[int, JSON] = {}
        self.renewed_at: dict[int, float] = {}
        # Member slots PREFIX-COUNT-m-0 .. COUNT-1 (names known before start, so RBAC can name them):
        # a process holds the one it took; None until then.
        self._member_names = {member_lease_name(prefix, k, count): k for k in range(count)}
        self.member_lease: str | None = None
        self._member_seen: dict[str, tuple[tuple[Any, ...], float]] = {}
        self._member_slots: dict[int, RangeLease] = {}
        self._member_objects: dict[str, JSON] = {}
        self._members: dict[str, str] = {}
        self._my_member: JSON | None = None
        self._said_no_slot = False
        self._rounds = 0
        self._new_member = False

    @property
    def collection(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"

    def _observe(self) -> dict[int, RangeLease]:
        now = self.clock()
        names = {range_lease_name(self.prefix, i, self.count): i for i in range(self.count)}
        self._objects = {}
        out: dict[int, RangeLease] = {}
        self._members = {}
        self._my_member = None
        self._member_slots = {}
        self._member_objects = {}
        self.member_lease = None
        for item in self.kube.list(self.collection)["items"]:
            name = item["metadata"]["name"]
            spec = item.get("spec") or {}
            if name in self._member_names:
                slot = self._seen_lease(self._member_seen, name, self._member_names[name], spec, now)
                self._member_slots[slot.index] = slot
                self._member_objects[name] = item
                if slot.holder and not slot.expired(now):
                    self._members[slot.holder] = name
                if slot.holder == self.identity:
                    self.member_lease, self._my_member = name, item
                continue
            i = names.get(name)
            if i is None:
                continue
            self._objects[i] = item
            out[i] = self._seen_lease(self._seen, i, i, spec, now)
        return out

    def _seen_lease(
        self, seen: dict[Any, tuple[tuple[Any, ...], float]], key: Any, index: int, spec: JSON, now: float
    ) -> RangeLease:
        """A range or member Lease as this process sees it: ``observed_at`` is when ``seen[key]`` last
        recorded a change of its record (updated here)."""
        record = _record(spec)
        old = seen.get(key)
        if old is None or old[0] != record:
            seen[key] = old = (record, now)
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        return RangeLease(index, str(spec.get("holderIdentity") or ""), old[1], duration)

    def _write(self, i: int, holder: str) -> bool:
        return self._write_lease(range_lease_name(self.prefix, i, self.count), self._objects.get(i), holder)

    def _write_lease(self, name: str, item: JSON | None, holder: str) -> bool:
        now = datetime.now(UTC)
        if item is None:
            body: JSON = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": name, "namespace": self.namespace},
                "spec": {
                    "holderIdentity": holder,
                    "leaseDurationSeconds": int(self.lease_duration),
                    "acquireTime": _micro(now),
                    "renewTime": _micro(now),
                    "leaseTransitions": 0,
                },
            }
            try:
                self.kube.post(self.collection, body)
            except AlreadyExists:
                return False
            return True
        spec = dict(item.get("spec") or {})
        if spec.get("holderIdentity") != holder:
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            spec["acquireTime"] = _micro(now)
        spec["holderIdentity"] = holder
        spec["leaseDurationSeconds"] = int(self.lease_duration)
        spec["renewTime"] = _micro(now)
        try:  # the object carries the resourceVersion we observed: a concurrent writer makes this 409
            self.kube.put(f"{self.collection}/{item['metadata']['name']}", {**item, "spec": spec})
        except (Conflict, NotFound):
            return False
        return True

    def _hold_member_slot(self) -> None:
        """Renew this process's member slot, or take the lowest free one (compare-and-swap: of processes
        racing for a slot one wins, and the others try the next free slots in the same round)."""
        self._new_member = False
        if self.member_lease is not None:
            self._write_lease(self.member_lease, self._my_member, self.identity)
            return
        now, slots = self.clock(), dict(self._member_slots)
        slot = free_member_slot(self.count, slots, now)
        while slot is not None:
            name = member_lease_name(self.prefix, slot, self.count)
            if self._write_lease(name, self._member_objects.get(name), self.identity):
                self.member_lease = name
                self._new_member = True
                return
            # Another process took it first (processes starting together race for slot 0): try the
            # next free one in this same round, so every starter is a member before anyone takes.
            slots[slot] = RangeLease(slot, "?", now, self.lease_duration)
            slot = free_member_slot(self.count, slots, now)
        if not self._said_no_slot:
            self._said_no_slot = True
            log.warning(
                "every member slot is held: this process takes no range (more processes than ranges; "
                "raise --shards or run fewer processes)",
                extra={"shards": self.count},
            )

    def members(self) -> list[str]:
        """The live processes as last observed: holders of unexpired member Leases, this one included."""
        return sorted({*self._members, self.identity})

    def round(
        self,
        members: list[str] | None = None,
        before_release: Callable[[tuple[int, ...]], None] | None = None,
    ) -> RangePlan:
        """One observe-plan-write round; returns the plan (its ``acting`` is before this round's writes).

        Members are the observed member Leases unless given; each round renews this process's own.
        ``before_release(indices)`` runs before ranges over the fair share are released: the caller
        stops acting on them there (and waits for its passes in them to end)."""
        observed = self._observe()
        self._hold_member_slot()
        plan = plan_ranges(
            self.identity,
            self.count,
            self.members() if members is None else members,
            observed,
            self.renewed_at,
            self.clock(),
            self.renew_deadline,
        )
        self._rounds += 1
        if members is None and (self._new_member or self.member_lease is None):
            # A process just started (or just took a slot): its member Lease is new, and processes
            # starting beside it have not seen each other yet. Taking nothing this round lets the first
            # take see them all, instead of one taking every range, watching them, then handing most
            # back. A process holding no member slot is not counted by the others: it takes nothing.
            plan = replace(plan, take=())
        for i in [*plan.release, *(i for i in self.renewed_at if i not in plan.renew)]:
            # Released, or no longer ours (taken by another after this process's Lease expired in its
            # view, e.g. after a pause): forget the renewal, so the range is neither watched nor
            # reported as held (the fence had already closed it: its renewal is older than the deadline).
            self.renewed_at.pop(i, None)
        if plan.release and before_release is not None:
            before_release(plan.release)
        for i in plan.release:
            self._write(i, "")
        for i in (*plan.renew, *plan.take):
            started = self.clock()
            if self._write(i, self.identity):
                self.renewed_at[i] = started
            elif i in plan.renew:
                self.renewed_at.pop(i, None)
        if self.metrics is not None:
            acting = self.acting()
            for i in range(self.count):
                self.metrics.shard_ranges.labels(f"{i}/{self.count}").set(1 if i in acting else 0)
        return plan

    def release_all(self) -> None:
        """On a requested stop (the caller has stopped acting): give every held range and the member
        Lease up, so the others take the ranges at their next round instead of after expiry."""
        held = sorted(self.renewed_at)
        self.renewed_at.clear()
        try:
            self._observe()
            for i in held:
                if (self._objects.get(i) or {}).get("spec", {}).get("holderIdentity") == self.identity:
                    self._write(i, "")
            if self._my_member is not None and self.member_lease is not None:
                self._write_lease(self.member_lease, self._my_member, "")
        except ApiError as exc:
            log.warning("range Lease release failed", extra={"error": str(exc)})
        if self.metrics is not None:
            for i in range(self.count):
                self.metrics.shard_ranges.labels(f"{i}/{self.count}").set(0)
        log.info("range Leases released", extra={"ranges": held})

    def agreed_ranges(self, namespaces: Callable[[], list[str]]) -> tuple[ShardRange, ...]:
        """The range cuts every process uses, stored once in the Lease ``PREFIX-COUNT-cuts`` (annotation
        ``omereconcile.ome.io/shard-cuts``): the first process cuts them from ``namespaces()`` (the
        fleet's namespaces: ``balanced_ranges``) and creates the Lease; every other process reads it.
        Processes computing cuts each from its own view could disagree (a namespace created between two
        starts) and then two would act on one replica; one stored answer cannot. The cuts stay until
        the Lease is deleted (with every process stopped)."""
        name = cuts_lease_name(self.prefix, self.count)
        path = f"{self.collection}/{name}"
        try:
            stored = self.kube.get(path)
        except NotFound:
            ranges = balanced_ranges(namespaces(), self.count)
            body: JSON = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": name,
                    "namespace": self.namespace,
                    "annotations": {CUTS_ANNOTATION: cuts_text(ranges)},
                },
                "spec": {},
            }
            try:
                self.kube.post(self.collection, body)
                log.info("shard range cuts stored", extra={"lease": name, "cuts": cuts_text(ranges)})
                return ranges
            except AlreadyExists:
                stored = self.kube.get(path)
        text = ((stored.get("metadata") or {}).get("annotations") or {}).get(CUTS_ANNOTATION, "")
        try:
            return parse_cuts(str(text), self.count)
        except ValueError as exc:
            raise ValueError(
                f"Lease {self.namespace}/{name}, annotation {CUTS_ANNOTATION}: {exc}; delete the Lease "
                "with every process stopped and it is cut again"
            ) from None

    def acting(self) -> frozenset[int]:
        """The fence: ranges this process may act on now."""
        now = self.clock()
        return frozenset(i for i, at in self.renewed_at.items() if now < at + self.renew_deadline)
