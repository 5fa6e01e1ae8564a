"""Everything OME would create for a replica, computed without a cluster: the render preview.

``preview()`` renders the replica, computes its revision exactly as OME's controller does, and
materialises the headless Service and, on request, the pods (and PodGroups) of the first Instances.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from omerender import constants as c
from omerender import kubetypes as kt
from omerender.arguments import check_count, check_replica_and_catalog
from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.gojson import GoJSONError
from omerender.models import InferenceReplica
from omerender.render import Render, RenderedRunner, render
from omerender.render.result import SharedRunner
from omerender.revision import controller_revision, revision_hash, revision_name, revision_payload
from omerender.stamps import headless_service, instance_pods, owner_reference, pod_group

__all__ = ["Preview", "RevisionInfo", "TypedPreview", "preview", "revision_of", "scope_uid"]


@dataclass(frozen=True, slots=True)
class RevisionInfo:
    """The revision a render hashes to: canonical payload bytes, 8-hex hash and object name."""

    payload: bytes
    hash: str
    name: str
    collision_count: int
    scope_uid: str


@dataclass(frozen=True, slots=True)
class Preview:
    render: Render
    revision: RevisionInfo
    service: dict[str, Any]
    controller_revision: dict[str, Any]
    pod_groups: tuple[dict[str, Any], ...]
    pods: tuple[dict[str, Any], ...]

    @property
    def typed(self) -> TypedPreview:
        """The same objects as typed views (:mod:`omerender.kubetypes`): the very dicts, no copy."""
        return TypedPreview(
            service=cast(kt.Service, self.service),
            controller_revision=cast(kt.ControllerRevision, self.controller_revision),
            pod_groups=cast(tuple[kt.PodGroup, ...], self.pod_groups),
            pods=cast(tuple[kt.Pod, ...], self.pods),
            templates={r.name: r.typed_template for r in self.render.runners},
        )


@dataclass(frozen=True, slots=True)
class TypedPreview:
    """:attr:`Preview.typed`: the objects of a preview typed for ``mypy --strict``, by runner name for
    the pod templates."""

    service: kt.Service
    controller_revision: kt.ControllerRevision
    pod_groups: tuple[kt.PodGroup, ...]
    pods: tuple[kt.Pod, ...]
    templates: Mapping[str, kt.PodTemplateSpec]


def scope_uid(replica: InferenceReplica) -> str:
    """Projected: the parent InferenceService's UID (its controller owner ref); standalone: its own."""
    owner = replica.metadata.isvc_controller_ref
    return owner.uid if owner is not None else replica.metadata.uid


def _excluded_keys(result: Render) -> frozenset[str]:
    replica = result.replica
    projected = replica.spec.parent_ref is not None or replica.metadata.isvc_controller_ref is not None
    listed = replica.metadata.annotations.get(c.ANNOTATION_REVISION_EXCLUDED_KEYS, "") if projected else ""
    return result.excluded_annotation_keys | {k.strip() for k in listed.split(",") if k.strip()}


def _hashed_view(runner: RenderedRunner) -> tuple[Mapping[str, Any], bytes | None]:
    """(template, None), or for a memoized runner whose template nobody has read yet, (its metadata
    alone, its pickled pod spec): the revision then neither copies the spec nor pickles the copy."""
    pristine = runner.pristine() if isinstance(runner, SharedRunner) else None
    if pristine is None:
        return runner.template, None
    metadata, spec = pristine
    return {"metadata": metadata}, spec


def revision_of(result: Render, *, collision_count: int | None = None) -> RevisionInfo:
    """The revision of a render; ``collision_count`` defaults to the replica's ``status.collisionCount``.

    Raises RenderBlocked (``RenderFailed``) when a template holds a value Kubernetes' Go types refuse.
    """
    replica = result.replica
    if collision_count is None:
        status = replica.status
        collision_count = (status.collision_count if status else None) or 0
    worker = result.runner(c.RUNNER_WORKER)
    pod_template, pod_spec = _hashed_view(result.anchor)
    worker_template, worker_spec = _hashed_view(worker) if worker else (None, None)
    try:
        payload = revision_payload(
            pod_template=pod_template,
            worker_template=worker_template,
            topology_key=replica.spec.topology_key if worker else None,
            pairing_protocol=replica.spec.pairing_protocol,
            excluded_annotation_keys=_excluded_keys(result),
            encodings=result.encodings,
            pod_spec_pickle=pod_spec,
            worker_spec_pickle=worker_spec,
        )
    except GoJSONError as exc:
        # The API server would refuse these pods too: say which field, as a render failure.
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f"the rendered pod template does not decode as Kubernetes types: {exc}"
        ) from None
    uid = scope_uid(replica)
    digest = revision_hash(payload, collision_count=collision_count, scope_uid=uid)
    return RevisionInfo(
        payload=payload,
        hash=digest,
        name=revision_name(replica.name_prefix, replica.spec.component, digest),
        collision_count=collision_count,
        scope_uid=uid,
    )


def preview(
    replica: InferenceReplica,
    catalog: Catalog,
    *,
    instances: int = 0,
    instance_ready_timeout_seconds: float | None = None,
) -> Preview:
    """Render ``replica`` and build what OME would create; pods for Instances ``0..instances-1``.

    Raises RenderBlocked (and nothing else on purpose) when the replica cannot render, and
    InvalidArgumentError for arguments of the wrong type.
    """
    check_replica_and_catalog("preview", replica, catalog)
    check_count("preview", "instances", instances)
    result = render(replica, catalog)
    revision = revision_of(result)
    planned = max(replica.spec.effective_replicas, instances)
    groups: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for index in range(instances):
        if result.pods_per_instance > 1:
            groups.append(
                pod_group(
                    replica,
                    index,
                    result.pods_per_instance,
                    instance_ready_timeout_seconds=instance_ready_timeout_seconds,
                )
            )
        pods.extend(
            instance_pods(
                replica, result.runners, index, revision_hash=revision.hash, planned_replicas=planned
            )
        )
    revision_object = controller_revision(
        name=revision.name,
        namespace=replica.namespace,
        prefix=replica.name_prefix,
        component=replica.spec.component,
        owner=owner_reference(replica),
        payload=revision.payload,
        revision=1,
        pairing_protocol=replica.spec.pairing_protocol,
    )
    return Preview(
        render=result,
        revision=revision,
        service=headless_service(replica),
        controller_revision=revision_object,
        pod_groups=tuple(groups),
        pods=tuple(pods),
    )
