"""Apply one plan's actions in order; stop at the first failure (docs/planner.md, "The contract").

- ``CreatePod`` / ``CreatePodGroup`` / ``EnsureService`` / ``CreateRevision``: AlreadyExists means an
  earlier pass did it. ``DeletePodGroup`` is pinned to the PodGroup's UID; NotFound means it is gone.
  ``UpdatePodGroup`` is a merge patch pinned to UID and resourceVersion; NotFound means it is gone.
  A ``CreatePod`` refused by a ResourceQuota (403 "exceeded quota") is recorded on the Instance's
  operation (``capacityRefusedAt``, a status PUT) and announced once per episode
  (``InstanceQuotaBlocked``) before the pass ends on it (``planner/quota.py``). A create or in-place
  patch refused because the API server could not call an admission webhook is recorded the same way
  (``operation.waiting: AdmissionUnavailable``, ``InstanceAdmissionUnavailable``;
  ``planner/admission_hold.py``). A create the API server refuses for good (422 Invalid:
  ``InvalidPodSpec``; the namespace terminating: ``NamespaceTerminating``) is recorded on the row as an
  in-place patch's 422 is, for the next pass to fail the attempt (``planner/rejection.py``).
- ``DeletePod`` / ``DeleteService``: sent with UID (and, for pods, resourceVersion) preconditions;
  NotFound means it is already gone.
- ``ForceDeletePod``: grace 0 with a UID precondition (``force_delete_pod``); NotFound and a UID
  mismatch are both success.
- ``PatchPodInPlace``: a strategic-merge patch of the pod's container images (merge key ``name``),
  annotations and labels, pinned to its UID and resourceVersion (``patch_pod_in_place``). One the API
  server refuses as Invalid (422, other than the UID precondition) is recorded on the Instance's row
  (``operation.waiting: InvalidPodSpec``, a status PUT) for the next pass to fail the attempt and hold
  the revision, as Go disposes it (``planner/rejection.py``).
- ``SetServingGate``: a strategic-merge patch of the pod's ``status.conditions`` (merge key ``type``)
  through ``pods/status`` carrying only the ``ome.io/serving`` condition the planner computed (status,
  reason, message, lastTransitionTime), pinned to the pod's UID and resourceVersion. An in-place drain
  refused because an admission webhook could not be called is recorded as the admission wait.
- ``WriteStatus``: a PUT of the replica as read, with the new status, through the status subresource
  (the resourceVersion and UID in the body are the preconditions). One the API server refuses as too
  large (413, or etcd's ``request is too large`` as a 500) records a ``StatusSizeExceeded`` Warning
  with the status's size before the pass ends on it (Go ``warnStatusSizeExceeded``).
- ``AddFinalizer`` / ``RemoveFinalizer``: a merge patch of ``metadata.finalizers`` pinned to the
  replica's resourceVersion.
- ``RemoveAnnotation``: a merge patch ``{"metadata":{"annotations":{key:null}}}`` pinned to the
  replica's resourceVersion; nothing is sent when the annotation is already gone.
- ``WriteLedger``: the migration audit ledger ConfigMap (``write_ledger``): a create, or a merge
  patch pinned to the resourceVersion it was read at (a ``chained`` one: the version the plan's
  previous ledger write left); AlreadyExists and NotFound are conflicts.
- ``RecordEvent``: a core/v1 Event on the replica, through client-go's correlator
  (``omereconcile/cluster/events.py``): a repeat is a patch of ``count`` and ``lastTimestamp`` on the existing
  Event, ten variants of one reason become one combined Event, a burst past 25 per replica is dropped.
  Event and revision-pruning failures are logged and never fail the pass. A once-only Warning
  (``MaybeNoGangScheduler``, ``RepairRevisionGone``) is said once by the planner, which records it on
  the row's ``announced`` record (``planner/status.py`` ``settle_announcements``); the executor keeps
  no memory of its own.

A 409 (stale resourceVersion, UID precondition) or a 422 on a pinned pod write ends the pass with
``conflict``: the next pass replans from fresh reads.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from omereconcile import actions as A
from omereconcile.cluster.events import EventCorrelator
from omereconcile.cluster.kube import (
    JSON,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    AlreadyExists,
    ApiError,
    Conflict,
    Forbidden,
    Invalid,
    Kube,
    NotFound,
)
from omereconcile.cluster.observe import paths
from omereconcile.planner.admission_hold import (
    admission_unavailable_message,
    is_admission_unavailable,
    record_admission_wait,
)
from omereconcile.planner.quota import is_quota_refusal, quota_blocked_message, record_capacity_refusal
from omereconcile.planner.rejection import (
    create_rejection_reason,
    is_permanent_rejection,
    record_rejection,
)
from omereconcile.world import LEDGER_KEY, format_time
from omerender import constants as c

__all__ = [
    "COMPONENT",
    "STATUS_SIZE_EXCEEDED",
    "ExecResult",
    "Executor",
    "patch_pod_in_place",
    "status_size_message",
    "status_too_large",
    "write_ledger",
]

COMPONENT = "omereconcile"
log = logging.getLogger("omereconcile.executor")
# Go ``EventReasonStatusSizeExceeded`` and ``tooLargeInternalErrorMarker`` (status_writer.go).
STATUS_SIZE_EXCEEDED = "StatusSizeExceeded"
_TOO_LARGE_MARKER = "request is too large"


def status_too_large(exc: ApiError) -> bool:
    """Go ``isStatusTooLarge`` (status_writer.go): an explicit 413, or the storage backend's
    oversized-request failure surfaced as a 500 InternalError (the API server does not turn etcd's
    ``request is too large`` into a 413)."""
    if exc.status == 413:
        return True
    return exc.status == 500 and exc.reason == "InternalError" and _TOO_LARGE_MARKER in str(exc)


def status_size_message(replica: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    """Go's ``StatusSizeExceeded`` words. The size is that of the status as sent (compact JSON,
    UTF-8), Go's ``json.Marshal(&ir.Status)`` length but for Go's escaping of ``<``, ``>``, ``&``."""
    meta = replica["metadata"]
    size = len(json.dumps(_plain(status), separators=(",", ":"), ensure_ascii=False).encode())
    return (
        f"InferenceReplica {meta['namespace']}/{meta['name']} status write of {size} bytes (DenseV1) "
        "was rejected by the API server as too large; no lifecycle transition can be persisted "
        "until the status shrinks"
    )


@dataclass
class ExecResult:
    applied: list[A.Action] = field(default_factory=list)
    failed: A.Action | None = None
    error: ApiError | None = None
    conflict: bool = False  # the failure was a precondition/staleness one: replan
    gone: bool = False  # the replica disappeared mid-pass
    # The resourceVersion the pass's last write to the replica returned (its watch echo is ours).
    replica_version: str | None = None
    fenced: bool = False  # the guard refused the next write: the pass stopped there, not failed

    @property
    def ok(self) -> bool:
        return self.failed is None


class Executor:
    """Stateless apart from the client and the event correlator's caches: one ``execute`` call per plan."""

    def __init__(
        self,
        kube: Kube,
        *,
        reporting_instance: str = "",
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        guard: Callable[[JSON], bool] | None = None,
    ) -> None:
        self.kube = kube
        # The fence of a sharded reconciler (issue 31): checked before every write; False stops the pass
        # unwritten (this process no longer holds the replica's range).
        self.guard = guard
        self.instance = reporting_instance or os.uname().nodename
        self.clock = clock
        self.events = EventCorrelator(clock)

    def execute(
        self, plan: A.Plan, replica: JSON, *, logger: logging.LoggerAdapter[Any] | None = None
    ) -> ExecResult:
        lg: logging.Logger | logging.LoggerAdapter[Any] = logger or log
        res = ExecResult()
        current = replica
        ledger_version: str | None = None  # what this plan's last WriteLedger left
        for act in plan.actions:
            if self.guard is not None and not self.guard(current):
                res.fenced = True
                lg.info("range no longer held; pass stops", extra={"action": type(act).__name__})
                return res
            if isinstance(act, A.WriteLedger) and act.chained and ledger_version is not None:
                act = dataclasses.replace(act, resource_version=ledger_version)
            try:
                if isinstance(act, A.WriteLedger):
                    ledger_version = write_ledger(self.kube, str(current["metadata"]["namespace"]), act)
                    updated = None
                else:
                    updated = self._apply(act, current)
            except ApiError as exc:
                if isinstance(act, A.DeleteRevision | A.RecordEvent):
                    lg.warning(
                        "action failed (not fatal)",
                        extra={"action": type(act).__name__, "target": target_of(act), "error": str(exc)},
                    )
                    continue
                if isinstance(act, A.WriteStatus) and status_too_large(exc):
                    self._warn_status_size_exceeded(current, act, lg)
                res.failed, res.error = act, exc
                res.conflict = isinstance(exc, Conflict) or (
                    isinstance(exc, Invalid | NotFound)
                    and isinstance(act, A.SetServingGate | A.PatchPodInPlace)
                )
                res.gone = isinstance(exc, NotFound) and isinstance(
                    act, A.WriteStatus | A.AddFinalizer | A.RemoveFinalizer | A.RemoveAnnotation
                )
                lg.info(
                    "action failed; pass stops",
                    extra={
                        "action": type(act).__name__,
                        "target": target_of(act),
                        "error": str(exc),
                        "conflict": res.conflict,
                    },
                )
                return res
            if updated is not None:
                current = updated
                res.replica_version = (
                    str((updated.get("metadata") or {}).get("resourceVersion") or "") or None
                )
            res.applied.append(act)
            lg.info(
                "applied",
                extra={"action": type(act).__name__, "target": target_of(act), "why": act.reason},
            )
        return res

    # -- one action -----------------------------------------------------------------------------------
    def _apply(self, act: A.Action, replica: JSON) -> JSON | None:
        meta = replica["metadata"]
        ns, name = str(meta["namespace"]), str(meta["name"])
        kube = self.kube
        if isinstance(act, A.CreatePod):
            try:
                kube.post(paths.pods(ns), dict(act.pod))
            except AlreadyExists:  # an earlier pass created it
                pass
            except Forbidden as exc:
                # Go ClassifyAPIError reads the namespace-terminating cause before the quota words.
                if not self._record_create_rejection(act, replica, exc) and is_quota_refusal(
                    exc.status, exc.message
                ):
                    self._record_quota_refusal(act, replica, exc.message)
                raise
            except ApiError as exc:
                if is_admission_unavailable(exc.status, exc.message):
                    labels = (act.pod.get("metadata") or {}).get("labels") or {}
                    self._record_admission_wait(_index_of(labels), act.name, replica, exc.message)
                else:
                    self._record_create_rejection(act, replica, exc)
                raise
            return None
        if isinstance(act, A.DeletePod):
            body = _delete_options(act.uid, act.resource_version)
            if act.grace_period_seconds is not None:
                body["gracePeriodSeconds"] = act.grace_period_seconds
            with contextlib.suppress(NotFound):
                kube.delete(f"{paths.pods(ns)}/{act.name}", body)
            return None
        if isinstance(act, A.ForceDeletePod):
            force_delete_pod(kube, ns, act)
            return None
        if isinstance(act, A.CreatePodGroup):
            with contextlib.suppress(AlreadyExists):  # an earlier pass created it
                kube.post(paths.pod_groups(ns), dict(act.pod_group))
            return None
        if isinstance(act, A.DeletePodGroup):
            with contextlib.suppress(NotFound):
                kube.delete(f"{paths.pod_groups(ns)}/{act.name}", _delete_options(act.uid, None))
            return None
        if isinstance(act, A.UpdatePodGroup):
            body = dict(act.patch)
            meta = dict(body.get("metadata") or {})
            meta.update({"uid": act.uid, "resourceVersion": act.resource_version})
            body["metadata"] = meta
            with contextlib.suppress(NotFound):  # gone since the read: the next pass creates it
                kube.patch(f"{paths.pod_groups(ns)}/{act.name}", body, content_type=MERGE_PATCH)
            return None
        if isinstance(act, A.SetServingGate):
            patch = {
                "metadata": {"uid": act.uid, "resourceVersion": act.resource_version},
                "status": {
                    "conditions": [
                        {
                            "type": c.SERVING_GATE,
                            "status": "True" if act.status else "False",
                            "lastTransitionTime": act.last_transition_time or format_time(self.clock()),
                            "reason": act.condition_reason or ("Serving" if act.status else "NotReady"),
                            # Always sent, even empty: strategic merge would otherwise keep a stale
                            # hold list (Go podreadiness.patchCondition).
                            "message": act.message,
                        }
                    ]
                },
            }
            try:
                kube.patch(f"{paths.pods(ns)}/{act.name}/status", patch, content_type=STRATEGIC_MERGE_PATCH)
            except ApiError as exc:
                if act.admission_wait_index is not None and is_admission_unavailable(exc.status, exc.message):
                    self._record_admission_wait(act.admission_wait_index, act.name, replica, exc.message)
                raise
            return None
        if isinstance(act, A.PatchPodInPlace):
            try:
                patch_pod_in_place(kube, ns, act)
            except ApiError as exc:
                if is_admission_unavailable(exc.status, exc.message):
                    self._record_admission_wait(act.index, act.name, replica, exc.message)
                elif act.index is not None and is_permanent_rejection(exc.status, exc.body):
                    # Go inPlaceUpdate's ``rejected``: the attempt ends (planner/rejection.py).
                    status = record_rejection(
                        replica.get("status") or {}, act.index, exc.message, self.clock()
                    )
                    self._record_on_row(replica, status, False, "", "", act.name)
                raise
            return None
        if isinstance(act, A.EnsureService):
            with contextlib.suppress(AlreadyExists):
                kube.post(paths.services(ns), dict(act.service))
            return None
        if isinstance(act, A.PatchService):
            kube.patch(f"{paths.services(ns)}/{act.name}", dict(act.patch))
            return None
        if isinstance(act, A.DeleteService):
            with contextlib.suppress(NotFound):
                kube.delete(f"{paths.services(ns)}/{act.name}", _delete_options(act.uid or None, None))
            return None
        if isinstance(act, A.CreateRevision):
            # AlreadyExists: the next pass compares the stored bytes (collisions are the planner's).
            with contextlib.suppress(AlreadyExists):
                kube.post(paths.revisions(ns), dict(act.revision))
            return None
        if isinstance(act, A.DeleteRevision):
            with contextlib.suppress(NotFound):
                kube.delete(f"{paths.revisions(ns)}/{act.name}")
            return None
        if isinstance(act, A.WriteStatus):
            body = copy.deepcopy(replica)
            body["status"] = _plain(act.status)
            return kube.put(f"{paths.replica(ns, name)}/status", body)
        if isinstance(act, A.AddFinalizer | A.RemoveFinalizer):
            fins = list(meta.get("finalizers") or [])
            if isinstance(act, A.AddFinalizer):
                if act.finalizer in fins:
                    return None
                fins.append(act.finalizer)
            else:
                if act.finalizer not in fins:
                    return None
                fins = [f for f in fins if f != act.finalizer]
            patch = {"metadata": {"finalizers": fins, "resourceVersion": meta["resourceVersion"]}}
            return kube.patch(paths.replica(ns, name), patch)
        if isinstance(act, A.RemoveAnnotation):
            if act.key not in (meta.get("annotations") or {}):
                return None  # already answered and removed
            patch = {"metadata": {"annotations": {act.key: None}, "resourceVersion": meta["resourceVersion"]}}
            return kube.patch(paths.replica(ns, name), patch)
        if isinstance(act, A.RecordEvent):
            self.record_event(replica, act.type, act.event_reason, act.message)
            return None
        raise TypeError(f"unknown action {act!r}")

    def _record_quota_refusal(self, act: A.CreatePod, replica: JSON, message: str) -> None:
        """Record a ResourceQuota refusal on the Instance's operation for the next pass's planner
        (``planner/quota.py``) and announce it once per episode. The pass still ends on the refusal.
        A failed record is logged: the next pass's create is refused again and records it then."""
        index = _index_of((act.pod.get("metadata") or {}).get("labels") or {})
        if index is None:
            return
        status, announce = record_capacity_refusal(replica.get("status") or {}, index, self.clock())
        component = str((replica.get("spec") or {}).get("component") or "")
        text = quota_blocked_message(component, index, message)
        self._record_on_row(replica, status, announce, "InstanceQuotaBlocked", text, act.name)

    def _record_create_rejection(self, act: A.CreatePod, replica: JSON, exc: ApiError) -> bool:
        """Record a pod create the API server refused for good (Go ``createMissingPods`` on
        ``ClassifyAPIError``'s permanent classes: ``InvalidPodSpec``, ``NamespaceTerminating``) on the
        Instance's row for the next pass to fail the attempt (``planner/rejection.py``); the pass
        still ends on the refusal. Whether the refusal was one of those classes."""
        reason = create_rejection_reason(exc.status, exc.body)
        if reason is None:
            return False
        index = _index_of((act.pod.get("metadata") or {}).get("labels") or {})
        if index is not None:
            status = record_rejection(replica.get("status") or {}, index, exc.message, self.clock(), reason)
            self._record_on_row(replica, status, False, "", "", act.name)
        return True

    def _record_admission_wait(self, index: int | None, pod: str, replica: JSON, message: str) -> None:
        """Record an unreachable admission webhook on the Instance's row for the next pass
        (``planner/admission_hold.py``) and announce it once per episode; the pass still ends on the
        refusal. A failed record is logged: the next refused pass records it then."""
        if index is None:
            return
        status, announce = record_admission_wait(
            replica.get("status") or {}, index, pod, message, self.clock()
        )
        component = str((replica.get("spec") or {}).get("component") or "")
        text = admission_unavailable_message(component, index, message)
        self._record_on_row(replica, status, announce, "InstanceAdmissionUnavailable", text, pod)

    def _record_on_row(
        self, replica: JSON, status: JSON | None, announce: bool, reason: str, text: str, pod: str
    ) -> None:
        """PUT ``status`` (a refusal recorded on a row; None: nothing to record) pinned to the replica
        as read, then record the Normal event ``reason`` when the refusal newly holds the row."""
        if status is None:
            return
        meta = replica["metadata"]
        body = copy.deepcopy(replica)
        body["status"] = status
        try:
            self.kube.put(f"{paths.replica(str(meta['namespace']), str(meta['name']))}/status", body)
            if announce:
                self.record_event(replica, "Normal", reason, text)
        except ApiError as exc:
            log.warning("refusal not recorded", extra={"pod": pod, "reason": reason, "error": str(exc)})

    def _warn_status_size_exceeded(
        self, replica: JSON, act: A.WriteStatus, lg: logging.Logger | logging.LoggerAdapter[Any]
    ) -> None:
        """Go ``statusWriter.warnStatusSizeExceeded`` (ome-projects/ome
        ``pkg/controller/v1beta1/inferencereplica/status_writer.go``, the version stored beside
        ``status_writer_test.go`` @ 4dfb96b1): a status write the API server refused as too large
        is said once, as a Warning naming the encoded size, never the payload. Go puts it on the
        parent InferenceService when one resolves; a standalone replica has no ``parentRef``, so it
        goes on the replica, as Go does when no parent resolves. The pass still ends on the error."""
        try:
            self.record_event(
                replica, "Warning", STATUS_SIZE_EXCEEDED, status_size_message(replica, act.status)
            )
        except ApiError as exc:
            lg.warning(
                "action failed (not fatal)",
                extra={"action": "RecordEvent", "target": STATUS_SIZE_EXCEEDED, "error": str(exc)},
            )

    def record_event(self, replica: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        meta = replica["metadata"]
        now = self.clock()
        stamp = format_time(now)
        ns = str(meta["namespace"])
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{meta['name']}.{int(now.timestamp() * 1e9):x}", "namespace": ns},
            "involvedObject": {
                "apiVersion": c.API_VERSION,
                "kind": c.REPLICA_KIND,
                "name": meta["name"],
                "namespace": ns,
                "uid": meta.get("uid", ""),
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": reason,
            "message": message[:1024],
            "type": type_,
            "source": {"component": COMPONENT, "host": self.instance},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        found = self.events.correlate(event)
        if found is None:
            log.debug("event dropped by the spam filter", extra={"reason": reason})
            return
        stored: JSON | None = None
        if found.patch is not None:
            name = found.event["metadata"]["name"]
            with contextlib.suppress(NotFound):  # expired or deleted: record it anew (client-go recordEvent)
                stored = self.kube.patch(
                    f"{paths.events(ns)}/{name}", found.patch, content_type=STRATEGIC_MERGE_PATCH
                )
        if stored is None:
            body = copy.deepcopy(found.event)
            body["metadata"].pop("resourceVersion", None)
            stored = self.kube.post(paths.events(ns), body)
        self.events.update_state(found.key, stored or {})


def force_delete_pod(kube: Kube, namespace: str, act: A.ForceDeletePod) -> None:
    """Go ``ops/force_delete.go`` ``escalateStuckTerminatingWithDeadline`` / ``forceDeleteOnNodeDeath``:
    grace 0 with a UID precondition, since OME reuses stable pod names and a same-name successor must be
    out of reach. NotFound (the object is already gone) and Conflict (the precondition missed: a
    successor holds the name) are both success."""
    body = _delete_options(act.uid, None)
    body["gracePeriodSeconds"] = 0
    with contextlib.suppress(NotFound, Conflict):
        kube.delete(f"{paths.pods(namespace)}/{act.name}", body)


def write_ledger(kube: Kube, namespace: str, act: A.WriteLedger) -> str:
    """Go ``audit.PersistLedgerForOwner``: a create when the ledger did not exist (AlreadyExists, a
    concurrent create, is a conflict), else a JSON merge patch pinned to the resourceVersion it was
    read at (409 on a concurrent write; NotFound, a ledger deleted since, is a conflict too). Either
    conflict replans from a fresh read. Returns the version written (a chained write pins to it)."""
    path = paths.configmap(namespace, act.name)
    if act.resource_version is None:
        meta: JSON = {"name": act.name, "namespace": namespace, "labels": dict(act.labels)}
        if act.owner_references is not None:
            meta["ownerReferences"] = [dict(r) for r in act.owner_references]
        body: JSON = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {LEDGER_KEY: act.data},
        }
        try:
            return _version_of(kube.post(path.rsplit("/", 1)[0], body))
        except AlreadyExists:
            _label_foreign_ledger(kube, path, act)
            raise
    patch_meta: JSON = {"resourceVersion": act.resource_version}
    if act.owner_references is not None:
        patch_meta["ownerReferences"] = [dict(r) for r in act.owner_references]
    try:
        written = kube.patch(path, {"metadata": patch_meta, "data": {LEDGER_KEY: act.data}})
    except NotFound as exc:
        raise Conflict(409, "Conflict", f"audit configmap {act.name} deleted since ledger load") from exc
    return _version_of(written)


def _label_foreign_ledger(kube: Kube, path: str, act: A.WriteLedger) -> None:
    """A ConfigMap of the ledger's name that the label-selected watch cannot see (made without the
    ``ome.io/managed-by`` label) would turn every create into a conflict. Go reads it by name and claims
    it; here it gets the label (pinned to its version), so the watch shows it and the next pass reads
    its entries and claims it with its write."""
    cm = kube.get_or_none(path)
    labels = ((cm or {}).get("metadata") or {}).get("labels") or {}
    if cm is None or all(labels.get(k) == v for k, v in act.labels.items()):
        return
    rv = (cm.get("metadata") or {}).get("resourceVersion")
    with contextlib.suppress(Conflict, NotFound):
        kube.patch(path, {"metadata": {"resourceVersion": rv, "labels": dict(act.labels)}})


def _version_of(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def patch_pod_in_place(kube: Kube, namespace: str, act: A.PatchPodInPlace) -> None:
    """The in-place update's pod write (Go ``patchPodImages``, ``patchPodAnnotations``,
    ``patchPodRevisionLabels`` and the transition marker's patch): one strategic-merge patch of the pod
    carrying its UID and resourceVersion as preconditions. Containers merge by name, so only the
    named containers' images change; an annotation set to None is removed."""
    meta: JSON = {"uid": act.uid, "resourceVersion": act.resource_version}
    if act.annotations:
        meta["annotations"] = dict(act.annotations)
    if act.labels:
        meta["labels"] = dict(act.labels)
    patch: JSON = {"metadata": meta}
    if act.images:
        patch["spec"] = {"containers": [{"name": n, "image": i} for n, i in sorted(act.images.items())]}
    kube.patch(f"{paths.pods(namespace)}/{act.name}", patch, content_type=STRATEGIC_MERGE_PATCH)


def _index_of(labels: Mapping[str, Any]) -> int | None:
    try:
        return int(labels[c.LABEL_INSTANCE_INDEX])
    except (KeyError, TypeError, ValueError):
        return None


def _delete_options(uid: str | None, resource_version: str | None) -> JSON:
    pre: JSON = {}
    if uid:
        pre["uid"] = uid
    if resource_version:
        pre["resourceVersion"] = resource_version
    body: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
    if pre:
        body["preconditions"] = pre
    return body


def _plain(value: Any) -> Any:
    """Mappings/tuples from the planner as JSON-ready dicts/lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def target_of(act: A.Action) -> str:
    return str(
        getattr(act, "name", "")
        or getattr(act, "event_reason", "")
        or getattr(act, "finalizer", "")
        or getattr(act, "key", "")
    )
