"""OME's InferenceReplica admission rules (01 §7, the seed's "What the webhook rejects"), as one function.

Check order (§7.2), every denial collected:

1. UPDATE: ``spec.parentRef`` and ``spec.component`` are immutable, for every writer.
2. UPDATE with an unchanged spec and no newly installed controller owner reference: allowed as a
   ``metadata-only update``, except a newly added migration request on a standalone replica, and a
   non-controller adding, changing or removing ``ome.io/composed-fields``.
3. Identity, then ownership: the projected rules (§7.4) or the standalone rules (§7.3, table order).
4. Shape checks for every writer (§7.5).

Form: a replica is projected when it has an InferenceService controller owner reference (group
``ome.io``, kind ``InferenceService``, any version, ``controller: true``) or, on UPDATE, ``spec.parentRef``
(immutable, so an orphaned replica stays projected). On CREATE, ``spec.parentRef`` without that owner
reference is the standalone rule that rejects it. An UPDATE is projected when either side is.

Codes: 403 for a rule denial, 400 when the object does not fit the InferenceReplica schema (OME's decoder
failure; the text is :class:`InvalidObjectError`'s), 500 when the controller identity is unreadable. The
decision's code is its first denial's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from omerender.admission.shape import go_quote, validate_autoscaler, validate_pacing, validate_runner_volumes
from omerender.admission.types import (
    CODE_ALLOWED,
    CODE_BAD_REQUEST,
    CODE_DENIED,
    CODE_IDENTITY_UNAVAILABLE,
    AdmissionDecision,
    AdmissionRequest,
)
from omerender.catalog import Catalog
from omerender.constants import (
    ANNOTATION_COMPOSED_FIELDS,
    ANNOTATION_CONTROLLER_WRITE,
    ANNOTATION_MIGRATION_REQUEST_PREFIX,
    API_GROUP,
)
from omerender.errors import InvalidObjectError
from omerender.inheritance import InheritanceError, InheritanceReason, resolve_runtime
from omerender.models import InferenceReplica, ObjectMeta, parse_object

__all__ = ["METADATA_ONLY", "review"]

METADATA_ONLY: Final = "metadata-only update"

NAME_PATTERN: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_NAME_RE = re.compile(NAME_PATTERN)
_COMPONENT_SUFFIXES = ("-engine", "-decoder", "-router")
_SCALER_CLASSES = ("HPA", "KEDA")  # only the InferenceService controller turns these into a scaler

# On a replica it does not project, the controller writes only these (01 §7.6); the controller-only
# fields are its own anyway. Everything else in the spec is a user field.
_ROLLOUT_CONTROL = ("paused", "pauseMode", "pairingProtocol")
_ROLLOUT_CONTROL_PACING = ("partition", "rollbackToRevision")
_CONTROLLER_ONLY = ("parentRef", "placementExecution", "placementReplicaLimit")

MSG_PARENT_REF: Final = (
    "spec.parentRef is set by the InferenceService controller on the replicas it projects; "
    "omit it on a standalone InferenceReplica"
)
MSG_PLACEMENT: Final = "spec.placementExecution and spec.placementReplicaLimit are written only by the InferenceService controller"
MSG_EXCLUSIVE: Final = (
    "spec.runners and spec.modelRef/spec.runtimeRef are exclusive; a replica renders from one source"
)
MSG_NO_SOURCE: Final = "spec.runners is required unless spec.modelRef or spec.runtimeRef is set"
MSG_PINNED: Final = (
    "spec.runtimeRef.autoSync=false and spec.runtimeRef.revision are not honored on an InferenceReplica; "
    "the live runtime renders"
)
MSG_LIFECYCLE_MIN_READY: Final = (
    "spec.lifecycle.minReadySeconds is not read on an InferenceReplica; set spec.minReadySeconds"
)
MSG_NAME: Final = (
    "a standalone replica's name is the prefix of its pod and Service names and must match "
    + go_quote(NAME_PATTERN)
)
MSG_MIGRATION: Final = (
    "manual migration is not available on a standalone replica; "
    "it surges through the per-revision Service only an InferenceService creates"
)
MSG_OWNER_REF: Final = (
    "only the InferenceService controller may set an InferenceService controller owner reference "
    "or change a projected replica's"
)
MSG_COMPOSED_FIELDS: Final = (
    f"the {ANNOTATION_COMPOSED_FIELDS} annotation is written by the InferenceService controller"
)
MSG_COMPOSER: Final = (
    "the InferenceService controller writes only rollout-control fields (pacing.partition, paused, "
    "pauseMode, pacing.rollbackToRevision, pairingProtocol) on a replica it does not project"
)


def _autoscaler_message(cls: str) -> str:
    return (
        f"spec.autoscaler.class {go_quote(cls)} creates no scaler on a standalone InferenceReplica; target the "
        'scale subresource with your own HorizontalPodAutoscaler or ScaledObject, or use class "External"'
    )


@dataclass(frozen=True, slots=True)
class _Ctx:
    request: AdmissionRequest
    catalog: Catalog | None
    new: InferenceReplica
    old: InferenceReplica | None
    namespace: str
    name: str

    @property
    def create(self) -> bool:
        return self.old is None

    @property
    def prefix(self) -> str:
        return f"InferenceReplica {self.namespace}/{self.name}: "

    def deny(self, message: str) -> tuple[int, str]:
        return (CODE_DENIED, self.prefix + message)


Denial = tuple[int, str]


def review(request: AdmissionRequest, catalog: Catalog | None = None) -> AdmissionDecision:
    """Admit or deny one InferenceReplica write, with OME's messages (module doc for the order).

    ``catalog`` is what the webhook's reader sees (runtimes and InferenceServices); ``None`` means the
    webhook has no reader, and the runtime and name-collision checks are skipped (01 §7.3).
    Never raises for any input.
    """
    operation = request.operation.upper()
    if operation not in ("CREATE", "UPDATE"):
        return AdmissionDecision(True, CODE_ALLOWED)  # deletion (and connect) is never gated
    if request.obj is None:
        return AdmissionDecision(False, CODE_BAD_REQUEST, (f"{operation} review carries no object",))
    try:
        new = parse_object(InferenceReplica, request.obj, kind="InferenceReplica")
        old = None
        if operation == "UPDATE":
            if request.old_obj is None:
                return AdmissionDecision(False, CODE_BAD_REQUEST, ("UPDATE review carries no old object",))
            old = parse_object(InferenceReplica, request.old_obj, kind="InferenceReplica")
    except InvalidObjectError as exc:
        return AdmissionDecision(False, CODE_BAD_REQUEST, (str(exc),))
    ctx = _Ctx(
        request,
        catalog,
        new,
        old,
        request.namespace or new.metadata.namespace or "default",
        request.name or new.metadata.name,
    )

    denials: list[Denial] = []
    if old is not None:
        denials += _immutability(ctx, old)
        if not denials and _spec_view(old) == _spec_view(new) and not _new_controller_refs(old, new):
            exceptions = _metadata_only_exceptions(ctx)
            if not exceptions:
                return AdmissionDecision(True, CODE_ALLOWED, (METADATA_ONLY,))
            return _decide(exceptions)

    if request.identity_error is not None:
        denials.append(_identity_unavailable(ctx))
    else:
        controller = _is_controller(ctx)
        if _projected(ctx):
            denials += _projected_rules(ctx, controller)
        else:
            denials += _standalone_rules(ctx, controller)
    denials += _shape_checks(ctx)
    return _decide(denials)


def _decide(denials: list[Denial]) -> AdmissionDecision:
    if not denials:
        return AdmissionDecision(True, CODE_ALLOWED)
    return AdmissionDecision(False, denials[0][0], tuple(message for _, message in denials))


# -- form, identity, diffs ----------------------------------------------------------------------------


def _group(api_version: str) -> str:
    group, _, _ = api_version.rpartition("/")
    return group


def _projected(ctx: _Ctx) -> bool:
    if ctx.old is None:
        return ctx.new.metadata.isvc_controller_ref is not None
    return any(
        r.metadata.isvc_controller_ref is not None or r.spec.parent_ref is not None
        for r in (ctx.old, ctx.new)
    )


def _controller_keys(meta: ObjectMeta) -> set[tuple[str, str, str, str]]:
    # blockOwnerDeletion is left out: the garbage collector clears it during foreground deletion.
    return {(r.api_version, r.kind, r.name, r.uid) for r in meta.owner_references if r.controller is True}


def _new_controller_refs(old: InferenceReplica, new: InferenceReplica) -> set[tuple[str, str, str, str]]:
    return _controller_keys(new.metadata) - _controller_keys(old.metadata)


def _is_controller(ctx: _Ctx) -> bool:
    identity = ctx.request.identity
    if identity is not None:
        return identity.matches(ctx.request.username, ctx.request.groups)
    # No identity configured: the literal annotation marks the controller's writes (a convention only).
    return ctx.new.metadata.annotations.get(ANNOTATION_CONTROLLER_WRITE) == "true"


def _spec_view(replica: InferenceReplica) -> dict[str, Any]:
    # Compared as decoded objects, as Go's DeepEqual on the typed spec: defaults filled in, null equals unset.
    return replica.spec.model_dump(by_alias=True, mode="json", exclude_none=True)


def _user_fields(replica: InferenceReplica) -> dict[str, Any]:
    view = {k: v for k, v in _spec_view(replica).items() if k not in _ROLLOUT_CONTROL + _CONTROLLER_ONLY}
    pacing = view.pop("pacing", None)
    if isinstance(pacing, dict):
        rest = {k: v for k, v in pacing.items() if k not in _ROLLOUT_CONTROL_PACING}
        if rest:  # a pacing block left empty collapses to none
            view["pacing"] = rest
    return view


def _composed_fields_touched(ctx: _Ctx) -> bool:
    new = ctx.new.metadata.annotations.get(ANNOTATION_COMPOSED_FIELDS)
    if ctx.old is None:
        return new is not None
    return ctx.old.metadata.annotations.get(ANNOTATION_COMPOSED_FIELDS) != new


def _new_migration_requests(ctx: _Ctx) -> list[str]:
    before = ctx.old.metadata.annotations if ctx.old is not None else {}
    return sorted(
        key
        for key in ctx.new.metadata.annotations
        if key.startswith(ANNOTATION_MIGRATION_REQUEST_PREFIX) and key not in before
    )


def _identity_unavailable(ctx: _Ctx) -> Denial:
    return (
        CODE_IDENTITY_UNAVAILABLE,
        ctx.prefix + "cannot tell whether the InferenceService controller sent this request: the "
        f"inferenceReplica.controllerIdentity setting is unreadable ({ctx.request.identity_error})",
    )


# -- steps 1 and 2 ------------------------------------------------------------------------------------


def _immutability(ctx: _Ctx, old: InferenceReplica) -> list[Denial]:
    out = []
    if old.spec.parent_ref != ctx.new.spec.parent_ref:
        out.append(ctx.deny("spec.parentRef is immutable"))
    if old.spec.component != ctx.new.spec.component:
        out.append(ctx.deny("spec.component is immutable"))
    return out


def _metadata_only_exceptions(ctx: _Ctx) -> list[Denial]:
    out = []
    standalone = not _projected(ctx)
    if standalone and _new_migration_requests(ctx):
        out.append(ctx.deny(MSG_MIGRATION))
    if _composed_fields_touched(ctx):
        if ctx.request.identity_error is not None:
            out.append(_identity_unavailable(ctx))
        elif not _is_controller(ctx):
            out.append(ctx.deny(MSG_COMPOSED_FIELDS))
    return out


# -- step 3: ownership ----------------------------------------------------------------------------------


def _projected_rules(ctx: _Ctx, controller: bool) -> list[Denial]:
    """§7.4: only the InferenceService controller writes a projected replica's spec."""
    if controller:
        return []
    out: list[Denial] = []
    old = ctx.old
    if old is None or _spec_view(old) != _spec_view(ctx.new):
        out.append((CODE_DENIED, _projected_message(ctx)))
    if old is not None:
        installed = _new_controller_refs(old, ctx.new)
        isvc_installed = any(
            kind == "InferenceService" and _group(av) == API_GROUP for av, kind, _, _ in installed
        )
        old_projected = old.metadata.isvc_controller_ref is not None or old.spec.parent_ref is not None
        if installed and (isvc_installed or old_projected):
            out.append(ctx.deny(MSG_OWNER_REF))
    if _composed_fields_touched(ctx):
        out.append(ctx.deny(MSG_COMPOSED_FIELDS))
    return out


def _projected_message(ctx: _Ctx) -> str:
    parent = _parent_name(ctx)
    head = f"InferenceReplica {ctx.namespace}/{ctx.name} is projected by InferenceService {ctx.namespace}/{parent}"
    if ctx.request.identity is not None:
        return (
            f"{head}, whose controller alone writes its spec; edit the InferenceService instead "
            f"(request from {go_quote(ctx.request.username)})"
        )
    operation = "CREATE" if ctx.create else "UPDATE"
    return (
        f"{head} and rejects a direct {operation} without the {ANNOTATION_CONTROLLER_WRITE}=true annotation; "
        "edit the InferenceService instead"
    )


def _parent_name(ctx: _Ctx) -> str:
    for replica in (ctx.new, ctx.old):
        if replica is not None and replica.spec.parent_ref is not None:
            return replica.spec.parent_ref.name
    for replica in (ctx.new, ctx.old):
        ref = replica.metadata.isvc_controller_ref if replica is not None else None
        if ref is not None:
            return ref.name
    return ""


def _standalone_rules(ctx: _Ctx, controller: bool) -> list[Denial]:
    """§7.3, in the table's order."""
    spec, old = ctx.new.spec, ctx.old
    out: list[Denial] = []
    if ctx.create and spec.parent_ref is not None:
        out.append(ctx.deny(MSG_PARENT_REF))
    if not controller and _placement_written(ctx):
        out.append(ctx.deny(MSG_PLACEMENT))
    has_ref = spec.model_ref is not None or spec.runtime_ref is not None
    if spec.runners and has_ref:
        out.append(ctx.deny(MSG_EXCLUSIVE))
    elif not spec.runners and not has_ref:
        out.append(ctx.deny(MSG_NO_SOURCE))
    ref = spec.runtime_ref
    if ref is not None and (ref.auto_sync is False or ref.revision):
        out.append(ctx.deny(MSG_PINNED))
    cls = spec.autoscaler.class_ if spec.autoscaler is not None else None
    if cls in _SCALER_CLASSES:
        out.append(ctx.deny(_autoscaler_message(str(cls))))
    if spec.lifecycle is not None and spec.lifecycle.min_ready_seconds is not None:
        out.append(ctx.deny(MSG_LIFECYCLE_MIN_READY))
    if ctx.create and not _NAME_RE.fullmatch(ctx.name):
        out.append(ctx.deny(MSG_NAME))
    if _new_migration_requests(ctx):
        out.append(ctx.deny(MSG_MIGRATION))
    out += [ctx.deny(m) for m in _runtime_problems(ctx)]
    if ctx.create:
        out += [ctx.deny(m) for m in _collisions(ctx)]
    if not controller and _composed_fields_touched(ctx):
        out.append(ctx.deny(MSG_COMPOSED_FIELDS))
    if controller and ctx.create:
        out.append(ctx.deny(_controller_create_message(ctx)))
    if controller and old is not None and _user_fields(old) != _user_fields(ctx.new):
        out.append(ctx.deny(MSG_COMPOSER))
    return out


def _placement_written(ctx: _Ctx) -> bool:
    spec = ctx.new.spec
    if ctx.old is None:
        return spec.placement_execution is not None or spec.placement_replica_limit is not None
    before = ctx.old.spec
    return (
        before.placement_execution != spec.placement_execution
        or before.placement_replica_limit != spec.placement_replica_limit
    )


def _controller_create_message(ctx: _Ctx) -> str:
    head = "the InferenceService controller creates only the replicas it projects"
    if ctx.request.identity is not None:
        return f"{head} (request from {go_quote(ctx.request.username)})"
    return (
        f"{head}; the {ANNOTATION_CONTROLLER_WRITE}=true annotation marks this create as the controller's, "
        "so drop a copied one"
    )


def _runtime_problems(ctx: _Ctx) -> list[str]:
    """A named runtime that exists must resolve and have the component's piece (after inheritance).

    Read only on CREATE or when the update sets or changes ``runtimeRef``, so scaling and pausing never
    wait on the runtime. A runtime that does not exist is admitted (the controller reports
    ``RuntimeNotFound`` and renders once it appears).
    """
    ref, catalog = ctx.new.spec.runtime_ref, ctx.catalog
    if ref is None or catalog is None:
        return []
    if ctx.old is not None and ctx.old.spec.runtime_ref == ref:
        return []
    runtime = catalog.named_runtime(ref.kind, ctx.namespace, ref.name)
    if runtime is None:
        return []
    try:
        resolved = resolve_runtime(runtime, catalog)
    except InheritanceError as err:
        if err.reason == InheritanceReason.PARENT_NOT_FOUND:
            child = err.chain[-1] if err.chain else runtime.metadata.name
            return [
                f"runtime {go_quote(child)} inherits from {go_quote(err.parent or '')}, which does not exist, "
                "so the runtime cannot be resolved"
            ]
        # A cycle, an over-deep chain or a profile that is not disabled never renders either.
        return [f"runtime {go_quote(runtime.metadata.name)} cannot be resolved: {err.message}"]
    component = ctx.new.spec.component
    if resolved.runtime.piece(component) is None:
        return [
            f"{runtime.kind} {go_quote(runtime.metadata.name)} has no {component} piece; "
            f"a {component} replica cannot render from it"
        ]
    return []


def _collisions(ctx: _Ctx) -> list[str]:
    """The name of an existing InferenceService, or one plus a component suffix, is taken."""
    if ctx.catalog is None:
        return []
    candidates = [ctx.name]
    for suffix in _COMPONENT_SUFFIXES:
        if ctx.name.endswith(suffix) and len(ctx.name) > len(suffix):
            candidates.append(ctx.name[: -len(suffix)])
    return [
        f"InferenceService {ctx.namespace}/{candidate} exists and the replicas it projects would share pod and "
        "Service names with this one; choose another name"
        for candidate in candidates
        if ctx.catalog.inference_service(ctx.namespace, candidate) is not None
    ]


# -- step 4: shape -------------------------------------------------------------------------------------


def _shape_checks(ctx: _Ctx) -> list[Denial]:
    raw_spec = ctx.request.obj.get("spec") if isinstance(ctx.request.obj, Mapping) else None
    autoscaler = raw_spec.get("autoscaler") if isinstance(raw_spec, Mapping) else None
    problems = [
        *validate_autoscaler(autoscaler, ctx.new.spec.replicas),
        *validate_pacing(ctx.new),
        *validate_runner_volumes(ctx.new),
    ]
    return [ctx.deny(p) for p in problems]
