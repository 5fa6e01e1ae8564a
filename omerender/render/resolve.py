"""Find the model, runtime and fine-tuned weight a refs replica renders from, or say why not.

Follows OME's ``renderFromRefs`` (``pkg/controller/v1beta1/inferencereplica/render.go``): first
``render.Resolve`` (``pkg/render/resolve.go``: the model, then the runtime, named or auto-selected,
then the disabled check on the resolved spec), then ``render.RuntimeDeclaresPiece``, then the
fine-tuned weights that ``RenderEngine``/``RenderDecoder`` load (``ReconcileFineTunedWeights`` in
``pkg/render/piece.go``; ``RenderRouter`` loads none). Each failure is a ``RenderBlocked`` with the
reason ``classifyResolveError``/``classifyRenderError`` give it and Go's error text.
"""

from __future__ import annotations

from typing import Any

from omerender._records import record
from omerender.catalog import Catalog
from omerender.constants import ANNOTATION_INHERIT_FROM
from omerender.errors import BlockReason, RenderBlocked
from omerender.inheritance import InheritanceError, Resolver, catalog_resolver
from omerender.models import FineTunedWeight, InferenceReplica, ModelResource, RuntimeResource
from omerender.render.storage import is_sharded, sharded_ready
from omerender.selection import (
    evaluate_runtimes,
    named_runtime_advisory,
    piece_advisory,
    require_format_name,
    required_accelerator_classes,
)

__all__ = ["Resolved", "resolve_refs"]

ADVISORY_REASON = "RuntimeCompatibilityAdvisory"


@record
class Resolved:
    runtime: RuntimeResource  # what renders: a named runtime's effective spec, a selected one's own
    model: ModelResource | None
    fine_tuned: FineTunedWeight | None
    overlays: tuple[ModelResource, ...]
    advisory: str | None


def _resolve_model(replica: InferenceReplica, catalog: Catalog) -> ModelResource:
    """``ReconcileBaseModelWithStatus`` (``inferenceservice/utils/reconciliation.go``): the model of the
    reference's kind (no fallback across scopes), then its ``disabled`` flag; then our readiness check.

    A missing ClusterBaseModel is Go's ``No BaseModel or ClusterBaseModel with the name: <name>``; a
    missing BaseModel is the API server's NotFound text, which Go passes through. A model that is not
    Ready is ``ModelNotFound`` (the seed's rule; Go holds back only Sharded models).
    """
    ref = replica.spec.model_ref
    assert ref is not None
    problem = _unsupported_reference(ref.kind, ref.api_group, "Model")
    if problem:
        # ModelReferenceKind (ome-projects/ome inferenceservice/utils/reconciliation.go @ 485b7933),
        # before any lookup; classifyResolveError reports it as RenderFailed.
        raise RenderBlocked(BlockReason.RENDER_FAILED, problem)
    kind = ref.effective_kind
    model = catalog.model(kind, replica.namespace, ref.name)
    if model is None:
        message = (
            f'basemodels.ome.io "{ref.name}" not found'
            if kind == "BaseModel"
            else f"No BaseModel or ClusterBaseModel with the name: {ref.name}"
        )
        raise RenderBlocked(BlockReason.MODEL_NOT_FOUND, message)
    if model.is_disabled:
        raise RenderBlocked(BlockReason.MODEL_DISABLED, f"specified base model {ref.name} is disabled")
    if not model.is_ready:
        state = model.status.state if model.status and model.status.state else "unknown"
        raise RenderBlocked(BlockReason.MODEL_NOT_FOUND, f'{kind} "{ref.name}" is not ready (state: {state})')
    if is_sharded(model):
        # render.ResolveModel: a Sharded model waits for its Ready condition (ModelNotReadyError).
        ready, why = sharded_ready(model)
        if not ready:
            text = f"model {ref.name} is not ready" + (f": {why}" if why else "")
            raise RenderBlocked(BlockReason.MODEL_NOT_FOUND, text)
    return model


def _go_type_name(value: Any) -> str:
    """Go's ``%T`` of a value ``encoding/json`` decoded into ``interface{}``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "float64"
    if isinstance(value, list):
        return "[]interface {}"
    return "map[string]interface {}"


def _go_map_decode_error(value: Any) -> str | None:
    """Go's error from ``json.Unmarshal`` of ``value``'s JSON into a ``map[string]interface{}``."""
    if value is None or isinstance(value, dict):
        return None
    kind = {bool: "bool", str: "string", list: "array"}.get(type(value), "number")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def _check_configuration(weight: FineTunedWeight) -> None:
    """``isvcutils.IsMergedFineTunedWeight``: ``spec.configuration`` must decode as a JSON object.

    An absent or null configuration is empty raw bytes (``RawExtension`` keeps no bytes for
    ``null``), which ``json.Unmarshal`` refuses; the condition carries Go's bare error text.
    """
    config = weight.spec.get("configuration")
    if config is None:
        raise RenderBlocked(BlockReason.RENDER_FAILED, "unexpected end of JSON input")
    problem = _go_map_decode_error(config)
    if problem:
        raise RenderBlocked(BlockReason.RENDER_FAILED, problem)


def _check_strategy(weight: FineTunedWeight) -> None:
    """``ProcessBaseAnnotations``: ``hyperParameters.strategy`` must be a string."""
    name = weight.metadata.name
    params = weight.spec.get("hyperParameters")
    problem = _go_map_decode_error(params)
    if problem:
        raise RenderBlocked(BlockReason.RENDER_FAILED, problem)
    strategy = params.get("strategy") if isinstance(params, dict) else None
    if strategy is None:
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f'hyper-parameter "strategy" not set on FineTunedWeight {name}'
        )
    if not isinstance(strategy, str):
        raise RenderBlocked(
            BlockReason.RENDER_FAILED,
            f'hyper-parameter "strategy" on FineTunedWeight {name} must be a string, '
            f"got {_go_type_name(strategy)}",
        )


def _resolve_fine_tuned(replica: InferenceReplica, catalog: Catalog) -> FineTunedWeight | None:
    """``ReconcileFineTunedWeights`` (``pkg/render/piece.go``) plus the strategy check of
    ``ProcessBaseAnnotations`` (``pkg/render/metadata.go``), all ``RenderFailed`` through
    ``classifyRenderError``. The router never loads weights (``RenderRouter``)."""
    ref = replica.spec.model_ref
    names = (ref.fine_tuned_weights or ()) if ref else ()
    if not names or replica.spec.component == "router":
        return None
    if len(names) > 1:
        raise RenderBlocked(BlockReason.RENDER_FAILED, "stacked fine-tuned serving is not supported yet")
    weight = catalog.fine_tuned_weight(names[0])
    if weight is None:
        # isvcutils.GetFineTunedWeight turns the API's NotFound into this plain error.
        raise RenderBlocked(BlockReason.RENDER_FAILED, f"No FineTunedWeight with the name: {names[0]}")
    _check_configuration(weight)
    _check_strategy(weight)
    return weight


def _unsupported_reference(kind: str | None, api_group: str | None, noun: str) -> str | None:
    """Go's refusal of a model reference in another API group or of another kind, or None.

    ``ModelReferenceKind`` (the primary model, ``noun`` "Model") and ``GetReferencedModel`` (an overlay,
    ``noun`` "model"), ome-projects/ome ``pkg/controller/v1beta1/inferenceservice/utils``
    ``reconciliation.go`` @ 485b7933 and ``overlay.go`` @ 6f229145: the group is checked first, then
    the kind; an empty group or kind is the default (``ome.io``, ``ClusterBaseModel``: the seed's rule
    for an empty kind, where Go's legacy lookup tries the namespace first). The other stored version of
    ``reconciliation.go`` (a543351b) reads neither field; the one that checks them is followed, which is
    also the seed's rule that no field the CRD accepts is silently ignored (DECISIONS §2). Without this a
    reference to another group was served from ``ome.io`` and an overlay of an unknown kind was left out
    silently."""
    if api_group and api_group != "ome.io":
        return f"unsupported {noun} API group {_quote(api_group)}"
    if kind and kind not in ("BaseModel", "ClusterBaseModel"):
        return f"unsupported {noun} kind {_quote(kind)}"
    return None


def _quote(text: str) -> str:
    """Go's ``%q``; imported here so a render that needs no quoting never loads the template package."""
    from omerender.gotemplate.lex import go_quote

    return go_quote(text)


def _resolve_overlays(replica: InferenceReplica, catalog: Catalog) -> tuple[ModelResource, ...]:
    """Overlays that are missing, disabled, or Sharded and not Ready are left out silently
    (``ResolveOverlays`` in pkg/controller/v1beta1/inferenceservice/utils/overlay.go)."""
    ref = replica.spec.model_ref
    found: list[ModelResource] = []
    for overlay in (ref.overlays or ()) if ref else ():
        problem = _unsupported_reference(overlay.kind, overlay.api_group, "model")
        if problem:
            # GetReferencedModel's error is not a NotFound: ResolveOverlays returns it and the pass
            # fails (RenderFailed through classifyRenderError) instead of skipping the overlay.
            raise RenderBlocked(
                BlockReason.RENDER_FAILED, f"resolve overlay {_quote(overlay.name)}: {problem}"
            )
        model = catalog.model(overlay.kind or "ClusterBaseModel", replica.namespace, overlay.name)
        if model is None or model.is_disabled or (is_sharded(model) and not sharded_ready(model)[0]):
            continue
        found.append(model)
    return tuple(found)


def _runtime_not_found(name: str, namespace: str, kind: str | None) -> RenderBlocked:
    """``runtimeselector.RuntimeNotFoundError``: its text depends on the reference's kind."""
    if kind == "ServingRuntime":
        message = f"ServingRuntime {name} not found in namespace {namespace}"
    else:
        message = f"runtime {name} not found in namespace {namespace} or at cluster scope"
    return RenderBlocked(BlockReason.RUNTIME_NOT_FOUND, message)


def _check_enabled(runtime: RuntimeResource, name: str) -> None:
    """``RuntimeDisabledError``, on the spec that renders (``validateResolvedRuntimeEnabled``)."""
    if runtime.is_disabled:
        scope_word = "namespace-scoped" if runtime.kind == "ServingRuntime" else "cluster-scoped"
        raise RenderBlocked(BlockReason.RUNTIME_DISABLED, f"{scope_word} runtime {name} is disabled")


def _named_runtime(replica: InferenceReplica, catalog: Catalog, resolver: Resolver) -> RuntimeResource:
    """``GetRuntime`` (``runtimeselector/fetcher.go``): the head by kind, then its inheritance chain.

    ``disabled`` inherits like any scalar (OME's merge): a profile's child must say ``disabled: false``.
    """
    ref = replica.spec.runtime_ref
    assert ref is not None
    runtime = catalog.named_runtime(ref.kind, replica.namespace, ref.name)
    if runtime is None:
        raise _runtime_not_found(ref.name, replica.namespace, ref.kind)
    effective = _effective(runtime, resolver)
    _check_enabled(effective, ref.name)
    return effective


def _effective(runtime: RuntimeResource, resolver: Resolver) -> RuntimeResource:
    """The chain resolved. Go's ``runtimeinheritance`` errors (a missing parent included) match none
    of ``classifyResolveError``'s cases and fall through to ``RenderFailed`` with their own text."""
    try:
        return resolver.resolve(runtime).runtime
    except InheritanceError as exc:
        raise RenderBlocked(BlockReason.RENDER_FAILED, exc.message) from None


def _inherited_piece_hint(runtime: RuntimeResource, component: str, resolver: Resolver) -> str | None:
    """When an automatically selected runtime lacks the piece its inheritance chain has: say so.

    OME renders the selected runtime's own spec (``render.Resolve`` takes ``SelectRuntime``'s spec,
    which ``FetchRuntimes`` lists without inheritance: ome-projects/ome ``pkg/render/resolve.go`` @
    f0c4ef77, ``pkg/runtimeselector/fetcher.go`` @ a543351b; sgl-project/ome ``selector.go`` @
    078c923f), so a base runtime's piece never reaches the pods of a child it picks; only a runtime
    the replica names is resolved (``GetRuntime``). Go's block says no more; this hint is ours."""
    if runtime.piece(component) is not None or not runtime.metadata.annotations.get(ANNOTATION_INHERIT_FROM):
        return None
    try:
        resolved = resolver.resolve(runtime)
    except InheritanceError:
        return None
    owner = next((r for r in reversed(resolved.chain[:-1]) if r.piece(component) is not None), None)
    if owner is None:
        return None
    named = f"{runtime.kind} {runtime.metadata.name}"
    fix = f"name {named} in spec.runtimeRef to render it with its inheritance"
    if resolved.runtime.is_disabled:
        # disabled inherits too: named, the child of a disabled profile is refused unless it says so.
        fix = f"set disabled: false on {named} and " + fix
    return (
        f"its {component} piece is inherited from {owner.kind} {owner.metadata.name}, and automatic "
        f"selection renders the selected runtime's own spec without inheritance; {fix}"
    )


def _join_hints(*hints: str | None) -> str | None:
    given = [h for h in hints if h]
    return "; ".join(given) if given else None


def _check_piece(runtime: RuntimeResource, component: str, advisory: str | None) -> None:
    """``render.RuntimeDeclaresPiece`` and the ``RuntimePieceMissing`` block of ``renderFromRefs``."""
    if runtime.piece(component) is not None:
        return
    message = (
        f'{runtime.kind} "{runtime.metadata.name}" has no {component} piece; '
        f"a {component} replica cannot render from it"
    )
    if advisory:
        message += f" ({advisory})"
    raise RenderBlocked(BlockReason.RUNTIME_PIECE_MISSING, message)


def resolve_refs(replica: InferenceReplica, catalog: Catalog, resolver: Resolver | None = None) -> Resolved:
    """Model (if any), overlays, the runtime that renders, and the fine-tuned weight, in Go's order.

    ``resolver`` caches inheritance chains across renders; by default the catalog's own.
    """
    resolver = resolver or catalog_resolver(catalog)
    component = replica.spec.component
    model = None
    overlays: tuple[ModelResource, ...] = ()
    if replica.spec.model_ref is not None:
        model = _resolve_model(replica, catalog)
        overlays = _resolve_overlays(replica, catalog)
    advisory = piece_hint = None
    # The shell renderFromRefs hands the selector carries the replica's annotations: its
    # ome.io/accelerator-class requires a class of every runtime (matcher.go acceleratorClassMismatch).
    classes = required_accelerator_classes(replica.metadata.annotations)
    if replica.spec.runtime_ref is not None:
        if model is not None:
            # ValidateRuntime checks the model before it looks the runtime up.
            require_format_name(model)
        runtime = _named_runtime(replica, catalog, resolver)
        if model is not None:
            advisory = named_runtime_advisory(runtime, model, classes)
    else:
        assert model is not None
        # render.Resolve renders the selected runtime's own spec: no inheritance.
        report = evaluate_runtimes(model, catalog, replica.namespace, component, classes)
        if report.selected is None:
            raise RenderBlocked(BlockReason.RUNTIME_SELECTION_FAILED, report.no_runtime_message())
        runtime = report.selected
        _check_enabled(runtime, runtime.metadata.name)
        piece_hint = _join_hints(_inherited_piece_hint(runtime, component, resolver), piece_advisory(report))
    _check_piece(runtime, component, piece_hint)
    fine_tuned = _resolve_fine_tuned(replica, catalog)
    return Resolved(runtime, model, fine_tuned, overlays, advisory)
