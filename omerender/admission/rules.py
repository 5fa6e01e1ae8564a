"""OME's InferenceReplica admission rules (01 §7, the seed's "What the webhook rejects"), as one function.

The order is Go's: ``Handle``, ``admitCreate`` and ``admitUpdate`` in OME's
``pkg/webhook/admission/inferencereplica/validator.go`` and the helpers of ``ownership.go`` beside it
(ome-projects/ome, the version with the composed-fields rules). Go stops at the first denial; this
function goes on and lists every later rule that also rejects the write, in Go's order, so the first
message is always Go's answer and the offline ``validate`` tool can show the rest.

``Handle``:

1. UPDATE: ``spec.parentRef`` immutable, then ``spec.component`` immutable, for every writer.
2. UPDATE that keeps the spec, installs no controller owner reference and leaves
   ``ome.io/composed-fields`` as it was: decided without the identity, as ``metadata-only update``, except
   a newly added migration request on a replica whose *old* object is standalone.
3. The identity (500 when unreadable), then ``admitCreate`` or ``admitUpdate``.
4. Shape checks for every writer (§7.5).

``admitCreate``: ``parentRef`` without an InferenceService controller reference; a non-controller's
``ome.io/composed-fields``; the projected form (a non-controller is told to edit the InferenceService);
a create by the controller; the placement fields; the template source, runtime pin, autoscaler class
and ``lifecycle.minReadySeconds``; the name; a migration request; the runtime's piece; a name collision.

``admitUpdate`` (the form read from the *old* object): a non-controller installing a controller owner
reference on a projected replica, or an InferenceService one; a non-controller changing
``ome.io/composed-fields``; on a projected replica, a non-controller's spec change; then on a standalone
one: a non-controller changing a controller-only field, the controller changing a user field, the
template source/pin/autoscaler/lifecycle rules, a new migration request, and the runtime's piece when the
update sets or changes ``runtimeRef``.

Codes: 403 for a rule denial, 400 when the object does not fit the InferenceReplica schema (OME's decoder
failure; the text is :class:`InvalidObjectError`'s), 500 when the controller identity is unreadable (Go's
text, ``load inferenceReplica config: <cause>``, without the replica's name) or a named runtime cannot be
resolved for a reason other than a missing parent. The decision's code is its first denial's.

Version followed: ome-projects/ome commit 58a57f25 of ``validator.go`` and ``ownership.go`` (the newest
stored: it adds the composed-fields rules and the controller's standalone-create denial to a543351b's;
sgl-project/ome 14f6fa02 is the earlier controller-only webhook).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from omerender._records import record
from omerender.admission.identity import identity_load_error
from omerender.admission.shape import go_quote, validate_autoscaler, validate_pacing, validate_runner_volumes
from omerender.admission.types import (
    CODE_ALLOWED,
    CODE_BAD_REQUEST,
    CODE_DENIED,
    CODE_IDENTITY_UNAVAILABLE,
    CODE_RUNTIME_UNRESOLVED,
    AdmissionDecision,
    AdmissionRequest,
)
from omerender.catalog import Catalog
from omerender.constants import (
    ANNOTATION_COMPOSED_FIELDS,
    ANNOTATION_CONTROLLER_WRITE,
    ANNOTATION_MIGRATION_REQUEST_PREFIX,
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
    f"the {ANNOTATION_COMPOSED_FIELDS} annotation is written by the InferenceService controller; "
    "to release the fields it names, remove the reference on the InferenceService instead"
)
MSG_COMPOSER: Final = (
    "the InferenceService controller writes only rollout-control fields (pacing.partition, paused, "
    "pauseMode, pacing.rollbackToRevision, pairingProtocol) on a replica it does not project; "
    "the replica's owner writes its other fields"
)
MSG_CONTROLLER_CREATE: Final = "the InferenceService controller creates only the replicas it projects; create a standalone replica as a user"


def _autoscaler_message(cls: str) -> str:
    return (
        f"spec.autoscaler.class {go_quote(cls)} creates no scaler on a standalone InferenceReplica; target the "
        'scale subresource with your own HorizontalPodAutoscaler or ScaledObject, or use class "External"'
    )


@record
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
        new = parse_object(InferenceReplica, request.obj, kind="InferenceReplica", strict=False)
        old = None
        if operation == "UPDATE":
            if request.old_obj is None:
                return AdmissionDecision(False, CODE_BAD_REQUEST, ("UPDATE review carries no old object",))
            old = parse_object(InferenceReplica, request.old_obj, kind="InferenceReplica", strict=False)
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
        if (
            not _spec_changed(old, new)
            and not _controller_ref_installed(old, new)
            and not _composed_fields_changed(ctx)
        ):
            # Decided without the identity, so an unreadable config never refuses a label or finalizer edit.
            if _projected_form(old) is None and _new_migration_requests(ctx):
                return _decide([ctx.deny(MSG_MIGRATION)])
            return AdmissionDecision(True, CODE_ALLOWED, (METADATA_ONLY,))

    if request.identity_error is not None:
        return _decide([*denials, _identity_unavailable(ctx)])
    controller = _is_controller(ctx)
    denials += _admit_create(ctx, controller) if old is None else _admit_update(ctx, old, controller)
    denials += _shape_checks(ctx)
    return _decide(denials)


def _decide(denials: list[Denial]) -> AdmissionDecision:
    if not denials:
        return AdmissionDecision(True, CODE_ALLOWED)
    return AdmissionDecision(False, denials[0][0], tuple(message for _, message in denials))


# -- form, identity, diffs (ownership.go) --------------------------------------------------------------


def _projected_form(replica: InferenceReplica) -> str | None:
    """The projecting InferenceService's name, or ``None`` for a standalone replica.

    Go ``projectedForm``: the InferenceService controller owner reference when present (``projectingParent``,
    matched by group and kind), else ``spec.parentRef``, which is immutable and so keeps an orphaned
    replica projected.
    """
    ref = replica.metadata.isvc_controller_ref
    if ref is not None:
        return ref.name
    if replica.spec.parent_ref is not None:
        return replica.spec.parent_ref.name
    return None


def _controller_of(meta: ObjectMeta) -> tuple[str, str, str, str] | None:
    # Go metav1.GetControllerOf, compared as sameOwner does: blockOwnerDeletion is left out, since the
    # garbage collector clears it during foreground deletion without changing the owner.
    ref = next((r for r in meta.owner_references if r.controller is True), None)
    return None if ref is None else (ref.api_version, ref.kind, ref.name, ref.uid)


def _controller_ref_installed(old: InferenceReplica, new: InferenceReplica) -> bool:
    """Go ``controllerRefInstalled``: ``new`` has a controller reference ``old`` lacks (added or replaced)."""
    ref = _controller_of(new.metadata)
    return ref is not None and ref != _controller_of(old.metadata)


def _is_controller(ctx: _Ctx) -> bool:
    """Go ``actorFor``: the configured identity when set, else the literal annotation on the new object."""
    identity = ctx.request.identity
    if identity is not None:
        return identity.matches(ctx.request.username, ctx.request.groups)
    return ctx.new.metadata.annotations.get(ANNOTATION_CONTROLLER_WRITE) == "true"


def _spec_view(replica: InferenceReplica) -> dict[str, Any]:
    # Compared as decoded objects, as Go's DeepEqual on the typed spec: defaults filled in, null equals unset.
    return replica.spec.model_dump(by_alias=True, mode="json", exclude_none=True)


def _spec_changed(old: InferenceReplica, new: InferenceReplica) -> bool:
    return _spec_view(old) != _spec_view(new)


def _user_fields(replica: InferenceReplica) -> dict[str, Any]:
    """Go ``withoutComposerFields``: the spec without rollout-control and controller-only fields."""
    view = {k: v for k, v in _spec_view(replica).items() if k not in _ROLLOUT_CONTROL + _CONTROLLER_ONLY}
    pacing = view.pop("pacing", None)
    if isinstance(pacing, dict):
        rest = {k: v for k, v in pacing.items() if k not in _ROLLOUT_CONTROL_PACING}
        if rest:  # a pacing block left empty collapses to none
            view["pacing"] = rest
    return view


def _controller_only_changed(old: InferenceReplica, new: InferenceReplica) -> bool:
    """Go ``controllerOnlyChanged``: ``parentRef``, ``placementExecution`` or ``placementReplicaLimit``."""
    a, b = old.spec, new.spec
    return (
        a.parent_ref != b.parent_ref
        or a.placement_execution != b.placement_execution
        or a.placement_replica_limit != b.placement_replica_limit
    )


def _composed_fields_changed(ctx: _Ctx) -> bool:
    """Go ``composedFieldsChanged``: the annotation added, changed or removed (any value on create)."""
    new = ctx.new.metadata.annotations.get(ANNOTATION_COMPOSED_FIELDS)
    if ctx.old is None:
        return new is not None
    return ctx.old.metadata.annotations.get(ANNOTATION_COMPOSED_FIELDS) != new


def _new_migration_requests(ctx: _Ctx) -> list[str]:
    """Go ``migrationRequested``: migration-request annotations the old object (none on create) lacked."""
    before = ctx.old.metadata.annotations if ctx.old is not None else {}
    return sorted(
        key
        for key in ctx.new.metadata.annotations
        if key.startswith(ANNOTATION_MIGRATION_REQUEST_PREFIX) and key not in before
    )


def _identity_unavailable(ctx: _Ctx) -> Denial:
    """Go ``Handle``: ``admission.Errored(500, err)`` with ``controllerIdentity``'s error, unprefixed."""
    return (CODE_IDENTITY_UNAVAILABLE, identity_load_error(str(ctx.request.identity_error)))


def _immutability(ctx: _Ctx, old: InferenceReplica) -> list[Denial]:
    """Go ``Handle``: ``spec.parentRef``, then ``spec.component``, immutable for every writer."""
    out = []
    if old.spec.parent_ref != ctx.new.spec.parent_ref:
        out.append(ctx.deny("spec.parentRef is immutable"))
    if old.spec.component != ctx.new.spec.component:
        out.append(ctx.deny("spec.component is immutable"))
    return out


# -- admitCreate / admitUpdate (validator.go) ----------------------------------------------------------


def _admit_create(ctx: _Ctx, controller: bool) -> list[Denial]:
    """Go ``admitCreate``, in its order (module doc)."""
    spec = ctx.new.spec
    out: list[Denial] = []
    # The projector writes parentRef together with the owner reference, so parentRef alone is refused for
    # every writer; such a create is then judged as the standalone replica it is.
    parent_ref_alone = spec.parent_ref is not None and ctx.new.metadata.isvc_controller_ref is None
    if parent_ref_alone:
        out.append(ctx.deny(MSG_PARENT_REF))
    if not controller and _composed_fields_changed(ctx):
        out.append(ctx.deny(MSG_COMPOSED_FIELDS))
    parent = _projected_form(ctx.new)
    if parent is not None and not parent_ref_alone:
        if not controller:
            out.append((CODE_DENIED, _projected_message(ctx, parent)))
        return out
    if controller:
        out.append(_controller_create_denial(ctx))
    elif spec.placement_execution is not None or spec.placement_replica_limit is not None:
        out.append(ctx.deny(MSG_PLACEMENT))
    out += [ctx.deny(m) for m in _standalone_spec_errors(ctx.new)]
    if not _NAME_RE.fullmatch(ctx.name):
        out.append(ctx.deny(MSG_NAME))
    if _new_migration_requests(ctx):
        out.append(ctx.deny(MSG_MIGRATION))
    out += _runtime_piece(ctx)
    out += [ctx.deny(m) for m in _collisions(ctx)]
    return out


def _admit_update(ctx: _Ctx, old: InferenceReplica, controller: bool) -> list[Denial]:
    """Go ``admitUpdate``, the form read from the old object (module doc)."""
    new = ctx.new
    out: list[Denial] = []
    parent = _projected_form(old)
    if (
        not controller
        and _controller_ref_installed(old, new)
        and (parent is not None or new.metadata.isvc_controller_ref is not None)
    ):
        out.append(ctx.deny(MSG_OWNER_REF))
    if not controller and _composed_fields_changed(ctx):
        out.append(ctx.deny(MSG_COMPOSED_FIELDS))
    if parent is not None:
        if not controller and _spec_changed(old, new):
            out.append((CODE_DENIED, _projected_message(ctx, parent)))
        return out
    if not controller and _controller_only_changed(old, new):
        out.append(ctx.deny(MSG_PLACEMENT))
    if controller and _user_fields(old) != _user_fields(new):
        out.append(ctx.deny(MSG_COMPOSER))
    out += [ctx.deny(m) for m in _standalone_spec_errors(new)]
    if _new_migration_requests(ctx):
        out.append(ctx.deny(MSG_MIGRATION))
    if new.spec.runtime_ref is not None and old.spec.runtime_ref != new.spec.runtime_ref:
        out += _runtime_piece(ctx)  # Go runtimeRefChanged: a scale or pause never waits on the runtime
    return out


def _projected_message(ctx: _Ctx, parent: str) -> str:
    """Go ``denyProjectedWrite``: the wording depends on whether an identity is configured."""
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


def _controller_create_denial(ctx: _Ctx) -> Denial:
    """Go ``denyControllerStandaloneCreate``; without an identity the message names the annotation to drop."""
    if ctx.request.identity is not None:
        return ctx.deny(MSG_CONTROLLER_CREATE)
    return (
        CODE_DENIED,
        f"InferenceReplica {ctx.namespace}/{ctx.name} carries the {ANNOTATION_CONTROLLER_WRITE}=true "
        "annotation, which marks a write by the InferenceService controller, and the controller creates "
        "only the replicas it projects; create a standalone replica without it",
    )


def _standalone_spec_errors(replica: InferenceReplica) -> list[str]:
    """Go ``standaloneSpecError``: the template source or pin, the scaler class, ``lifecycle.minReadySeconds``.

    The source and the pin are one check in Go (``validation.ValidateInferenceReplicaTemplateSource``, a
    switch), so a pin is reported only for a spec with exactly one source.
    """
    spec = replica.spec
    out = []
    has_ref = spec.model_ref is not None or spec.runtime_ref is not None
    ref = spec.runtime_ref
    if spec.runners and has_ref:
        out.append(MSG_EXCLUSIVE)
    elif not spec.runners and not has_ref:
        out.append(MSG_NO_SOURCE)
    elif ref is not None and (ref.auto_sync is False or ref.revision):
        out.append(MSG_PINNED)
    cls = spec.autoscaler.class_ if spec.autoscaler is not None else None
    if cls in _SCALER_CLASSES:
        out.append(_autoscaler_message(str(cls)))
    if spec.lifecycle is not None and spec.lifecycle.min_ready_seconds is not None:
        out.append(MSG_LIFECYCLE_MIN_READY)
    return out


def _runtime_piece(ctx: _Ctx) -> list[Denial]:
    """Go ``admitRuntimePiece`` / ``runtimePieceMissing``: a named runtime that exists must resolve and
    have the component's piece (after inheritance).

    A runtime that does not exist is admitted (the controller reports ``RuntimeNotFound`` and renders
    once it appears). A missing inherit-from parent is a 403 naming the referenced runtime; any other
    resolution failure (a cycle, an over-deep chain) is Go's 500 ``check runtime "<name>": <error>``.
    """
    ref, catalog = ctx.new.spec.runtime_ref, ctx.catalog
    if ref is None or catalog is None:
        return []
    runtime = catalog.named_runtime(ref.kind, ctx.namespace, ref.name)
    if runtime is None:
        return []
    try:
        resolved = resolve_runtime(runtime, catalog)
    except InheritanceError as err:
        if err.reason == InheritanceReason.PARENT_NOT_FOUND:
            return [
                ctx.deny(
                    f"runtime {go_quote(ref.name)} inherits from {go_quote(err.parent or '')}, which does not "
                    "exist, so the runtime cannot be resolved"
                )
            ]
        return [(CODE_RUNTIME_UNRESOLVED, f"check runtime {go_quote(ref.name)}: {err.message}")]
    component = ctx.new.spec.component
    if resolved.runtime.piece(component) is None:
        return [
            ctx.deny(
                f"{runtime.kind} {go_quote(ref.name)} has no {component} piece; "
                f"a {component} replica cannot render from it"
            )
        ]
    return []


def _collisions(ctx: _Ctx) -> list[str]:
    """Go ``collidingInferenceServiceNames``: the name, and the name less a component suffix, must not
    name an existing InferenceService."""
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
    """Go ``Handle``'s last step: ``validateIRAutoscaler``, ``validateIRPacing``, ``validateIRRunnerVolumes``."""
    raw_spec = ctx.request.obj.get("spec") if isinstance(ctx.request.obj, Mapping) else None
    autoscaler = raw_spec.get("autoscaler") if isinstance(raw_spec, Mapping) else None
    problems = [
        *validate_autoscaler(autoscaler, ctx.new.spec.replicas),
        *validate_pacing(ctx.new),
        *validate_runner_volumes(ctx.new),
    ]
    return [ctx.deny(p) for p in problems]
