"""Which watch updates can change a plan: the controller's event filters, as controller-runtime's
``predicate.Funcs.UpdateFunc`` filters an informer's updates before they reach the work queue.

A pass sees a replica's owned objects only through the planner's views (``omereconcile.world``:
``PodView``, ``Endpoints``, ``ServiceView``, ``RevisionView``) and the fields ``observe`` reads
beside them (the controller owner reference that ``_owned_by`` checks, the labels the stores are
indexed by). An update that leaves all of that equal, apart from the resourceVersion, cannot change
what a pass plans, so it enqueues nothing: its object still replaces the cached one, and the
resourceVersion every pinned write carries is read from the cache at the next pass, whatever triggers
it. Typical such updates: the kubelet's ``podIP``/``hostIP``/``startTime``/``qosClass`` fields, a
``managedFields`` timestamp (the stores drop them), an EndpointSlice's address list order.

For pods, as Go's ``podReconcileRelevantChanged`` (``inferencereplica/watches.go``), a container's
restart count, its per-container ``ready`` and its start and finish times are not compared, nor are
labels no rule reads: a restart is seen through what comes with it (the terminated record, the
ContainersReady condition), and the periodic resync bounds any miss.

Adds and deletes always pass; an update of an object kind these functions do not know passes too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from omereconcile.world import ContainerView, Endpoints, NodeView, PodView, RevisionView, ServiceView
from omerender import constants as c

__all__ = ["UPDATE_PREDICATES", "plan_relevant_update", "replica_update_matters"]

JSON = Mapping[str, Any]
_NO_NOTES: Mapping[str, str] = MappingProxyType({})


def _meta(obj: JSON) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _controller_uid(obj: JSON) -> str | None:
    refs = _meta(obj).get("ownerReferences") or []
    return next((str(r.get("uid")) for r in refs if r.get("controller")), None)


def _labels(obj: JSON) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), str(v)) for k, v in (_meta(obj).get("labels") or {}).items()))


# Go ``routingLabelKeys`` (the labels its pod predicate diffs), and the identity labels a pass reads of
# a pod besides (incarnation, runner, ordinal, the gang's PodGroup, the in-place roll's pairing protocol).
_READ_LABELS = (
    c.LABEL_MANAGED_BY,
    c.LABEL_INFERENCESERVICE,
    c.LABEL_COMPONENT,
    c.LABEL_INSTANCE_INDEX,
    c.LABEL_REVISION_HASH,
    c.LABEL_INSTANCE_INCARNATION,
    c.LABEL_RUNNER,
    c.LABEL_POD_ORDINAL,
    c.LABEL_POD_GROUP,
    c.LABEL_PAIRING_PROTOCOL,
)


def _container(ct: ContainerView) -> ContainerView:
    """Go ``containerStatusesRelevantChanged``: the kubelet's heartbeat churn is not compared (the
    restart count, the per-container ``ready``, the running and terminated states' start and finish
    times); the image, the waiting reason and message and both terminated records are."""
    return replace(
        ct, restart_count=0, ready=False, started_at=None, finished_at=None, state_finished_at=None
    )


def _pod(obj: JSON) -> object:
    """The pod as a pass reads it, less what Go ``podReconcileRelevantChanged`` (ome-projects/ome
    ``inferencereplica/watches.go`` @ dcfb4135) deliberately leaves out: container heartbeat churn
    (``_container``) and labels no rule reads (Go compares its routing labels only)."""
    view = PodView.from_dict(obj)
    # Of the annotations only the in-place transition marker moves a step by itself; the others are
    # read from the cache when an in-place patch is planned, whatever triggered that pass.
    marker = view.annotations.get(c.ANNOTATION_IN_PLACE_IMAGE_TRANSITION)
    view = replace(
        view,
        resource_version="",
        annotations=_NO_NOTES,
        labels={k: view.labels[k] for k in _READ_LABELS if k in view.labels},
        containers=tuple(_container(ct) for ct in view.containers),
        init_containers=tuple(_container(ct) for ct in view.init_containers),
    )
    return (view, marker, _controller_uid(obj))


def _slice(obj: JSON) -> object:
    return (Endpoints.from_slices([obj]), _labels(obj))


def _service(obj: JSON) -> object:
    view = ServiceView.from_dict(obj)
    # ServiceView holds its spec as a mapping proxy (not hashable, but comparable).
    return (view.uid, dict(view.spec), dict(view.labels), view.terminating)


def _revision(obj: JSON) -> object:
    return (RevisionView.from_dict(obj), _labels(obj))


UPDATE_PREDICATES: dict[str, Callable[[JSON], object]] = {
    "pods": _pod,
    "endpointslices": _slice,
    "services": _service,
    "controllerrevisions": _revision,
    # The lost-node rules read a Node's Ready condition and unreachable taints, not its heartbeats.
    "nodes": NodeView.from_dict,
}


def plan_relevant_update(resource: str, old: JSON, new: JSON) -> bool:
    """True when the update of an owned object from ``old`` to ``new`` may change a pass's plan."""
    view = UPDATE_PREDICATES.get(resource)
    if view is None:
        return True
    try:
        return bool(view(old) != view(new))
    except (TypeError, ValueError, KeyError, AttributeError):
        return True  # a malformed object: let the pass look at it


_VOLATILE = ("resourceVersion", "managedFields")


def _without_volatile(obj: JSON) -> dict[str, Any]:
    out = dict(obj)
    out["metadata"] = {k: v for k, v in _meta(obj).items() if k not in _VOLATILE}
    return out


def replica_update_matters(old: JSON, new: JSON, own_version: str | None) -> bool:
    """True when a replica update may change its plan: not the echo of the controller's own last
    write to it (``own_version``, the resourceVersion that write returned: the pass that wrote it
    asks for its follow-up pass itself), and not an update of nothing but the resourceVersion or
    ``managedFields``. The planner reads everything else of a replica (spec, status journal,
    annotations, finalizers, deletionTimestamp)."""
    rv = _meta(new).get("resourceVersion")
    if own_version is not None and rv == own_version:
        return False
    return _without_volatile(old) != _without_volatile(new)
