"""Everything OME would create for a replica, computed without a cluster: the render preview.

``preview()`` renders the replica, computes its revision exactly as OME's controller does, and
materialises the headless Service and, on request, the pods (and PodGroups) of the first Instances.

The revision name depends on a uid the API server assigns: OME hashes the scope uid into it (01 §9.2;
the replica's own ``metadata.uid`` when standalone, its InferenceService's when projected). A replica
read from a file has none, so its name is for an empty uid; ``uid=`` supplies the replica's uid, and
``RevisionInfo.uid_notice`` says when a name is still for an empty one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, cast

from omerender import constants as c
from omerender import kubetypes as kt
from omerender._records import record
from omerender.arguments import check_count, check_replica_and_catalog
from omerender.catalog import Catalog
from omerender.errors import BlockReason, InvalidArgumentError, RenderBlocked
from omerender.gojson import GoJSONError
from omerender.models import InferenceReplica
from omerender.render import Render, RenderedRunner, render
from omerender.render.result import SharedRunner
from omerender.revision import controller_revision, revision_hash, revision_name, revision_payload
from omerender.stamps import headless_service, instance_pods, owner_reference, pod_group

__all__ = [
    "MAX_INSTANCES",
    "Preview",
    "RevisionInfo",
    "TypedPreview",
    "preview",
    "revision_of",
    "scope_uid",
    "with_uid",
]

# Pods are built for Instances 0..instances-1 in memory: a million of them take minutes and gigabytes.
# The CLI caps --instances at the same number (omerender.cli.render_cmd.MAX_INSTANCES).
MAX_INSTANCES: Final = 1000


@record
class RevisionInfo:
    """The revision a render hashes to: canonical payload bytes, 8-hex hash and object name.

    ``scope_uid`` is the uid hashed into the name. ``uid_notice`` is None when it is a real one, and
    otherwise says that the name is for an empty uid and that the cluster's will differ (a replica
    from a file has no ``metadata.uid``: pass ``uid=`` to :func:`preview` or :func:`revision_of`).
    """

    payload: bytes
    hash: str
    name: str
    collision_count: int
    scope_uid: str
    uid_notice: str | None = None


@record
class Preview:
    """What :func:`preview` builds: the render, its revision, and the objects OME would create from it.

    ``service`` is the headless Service, ``controller_revision`` the ControllerRevision, ``pod_groups``
    and ``pods`` those of the Instances asked for; each is a Kubernetes object as a plain dict.
    """

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


@record
class TypedPreview:
    """:attr:`Preview.typed`: the objects of a preview typed for ``mypy --strict``, by runner name for
    the pod templates."""

    service: kt.Service
    controller_revision: kt.ControllerRevision
    pod_groups: tuple[kt.PodGroup, ...]
    pods: tuple[kt.Pod, ...]
    templates: Mapping[str, kt.PodTemplateSpec]


def scope_uid(replica: InferenceReplica, uid: str | None = None) -> str:
    """Projected: the parent InferenceService's UID (its controller owner ref); standalone: its own,
    or ``uid`` in place of ``metadata.uid`` when given."""
    owner = replica.metadata.isvc_controller_ref
    if owner is not None:
        return owner.uid
    return replica.metadata.uid if uid is None else uid


def _uid_notice(replica: InferenceReplica, name: str, scope: str) -> str | None:
    """Why ``name`` will not be the cluster's, or None when it is scoped by a uid."""
    if scope:
        return None
    if replica.metadata.isvc_controller_ref is not None:
        missing = "its InferenceService owner reference has no uid"
    else:
        missing = "the replica has no metadata.uid"
    return (
        f"the revision name {name} is for an empty uid: {missing}, and OME hashes the uid the API "
        "server assigns into the name, so the cluster's revision name will differ"
    )


def _checked_uid(function: str, uid: object) -> str | None:
    if uid is not None and not isinstance(uid, str):
        raise InvalidArgumentError(function, "uid", "a str (the replica's metadata.uid) or None", uid)
    if uid is not None and not uid.isascii():
        try:
            uid.encode("utf-8")  # hashed into the revision name as UTF-8, as Go's string bytes
        except UnicodeEncodeError:
            raise InvalidArgumentError(
                function,
                "uid",
                "a str of valid Unicode (no lone surrogates), the replica's metadata.uid",
                uid,
            ) from None
    return uid


def _checked_instances(function: str, instances: object) -> int:
    check_count(function, "instances", instances)
    assert isinstance(instances, int)
    if instances > MAX_INSTANCES:
        raise InvalidArgumentError(
            function,
            "instances",
            f"a whole number from 0 to {MAX_INSTANCES:,} (the CLI's --instances cap)",
            instances,
        )
    return instances


def _checked_seconds(function: str, argument: str, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidArgumentError(function, argument, "a finite number of seconds or None", value)
    return value


def with_uid(replica: InferenceReplica, uid: str) -> InferenceReplica:
    """A copy of ``replica`` whose ``metadata.uid`` is ``uid`` (the original is left as it is)."""
    return replica.model_copy(update={"metadata": replica.metadata.model_copy(update={"uid": uid})})


def _excluded_keys(result: Render) -> frozenset[str]:
    """``parseExcludedAnnotationKeys`` (ome-projects/ome inferencereplica reconciler.go): the keys the
    replica's ``ome.io/revision-excluded-annotation-keys`` lists, read from any replica (standalone
    too), split on "," with empty entries dropped and nothing trimmed, as Go's ``strings.Split``."""
    listed = result.replica.metadata.annotations.get(c.ANNOTATION_REVISION_EXCLUDED_KEYS, "")
    return result.excluded_annotation_keys | {k for k in listed.split(",") if k}


def _hashed_view(runner: RenderedRunner) -> tuple[Mapping[str, Any], bytes | None]:
    """(template, None), or for a memoized runner whose template nobody has read yet, (its metadata
    alone, its pickled pod spec): the revision then neither copies the spec nor pickles the copy."""
    pristine = runner.pristine() if isinstance(runner, SharedRunner) else None
    if pristine is None:
        return runner.template, None
    metadata, spec = pristine
    return {"metadata": metadata}, spec


def revision_of(
    result: Render, *, collision_count: int | None = None, uid: str | None = None
) -> RevisionInfo:
    """The revision of a render; ``collision_count`` defaults to the replica's ``status.collisionCount``.

    ``uid`` stands in for the replica's ``metadata.uid`` (the one the cluster gave it), which a
    standalone replica's revision is scoped by; a projected replica's is scoped by its
    InferenceService's uid, from its owner reference, which ``uid`` does not change. When the scope
    uid is empty, ``uid_notice`` of the result says so.

    Raises RenderBlocked (``RenderFailed``) when a template holds a value Kubernetes' Go types refuse.
    """
    uid = _checked_uid("revision_of", uid)
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
    scope = scope_uid(replica, uid)
    digest = revision_hash(payload, collision_count=collision_count, scope_uid=scope)
    name = revision_name(replica.name_prefix, replica.spec.component, digest)
    return RevisionInfo(
        payload=payload,
        hash=digest,
        name=name,
        collision_count=collision_count,
        scope_uid=scope,
        uid_notice=_uid_notice(replica, name, scope),
    )


def preview(
    replica: InferenceReplica,
    catalog: Catalog,
    *,
    instances: int = 0,
    instance_ready_timeout_seconds: float | None = None,
    uid: str | None = None,
) -> Preview:
    """Render ``replica`` and build what OME would create; pods for Instances ``0..instances-1``.

    ``uid`` is the replica's ``metadata.uid`` as the cluster has it, in place of the one in
    ``replica`` (a replica from a file has none): it scopes a standalone replica's revision and is
    the uid in every owner reference. Without one, ``revision.uid_notice`` says that the revision
    name is for an empty uid and that the cluster's will differ.

    Raises RenderBlocked (and nothing else on purpose) when the replica cannot render, and
    InvalidArgumentError for arguments of the wrong type or out of bounds: ``instances`` past
    :data:`MAX_INSTANCES` (the CLI's ``--instances`` cap), a NaN or infinite
    ``instance_ready_timeout_seconds``, a ``uid`` with lone surrogates (it has no UTF-8 bytes to hash).
    """
    check_replica_and_catalog("preview", replica, catalog)
    _checked_instances("preview", instances)
    _checked_seconds("preview", "instance_ready_timeout_seconds", instance_ready_timeout_seconds)
    uid = _checked_uid("preview", uid)
    if uid is not None:
        replica = with_uid(replica, uid)
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
