"""Find the model, fine-tuned weights and runtime a refs replica renders from, or say why not.

Each failure is a ``RenderBlocked`` with one of the seed's reasons and a message in OME's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.inheritance import InheritanceError, Resolver
from omerender.models import FineTunedWeight, InferenceReplica, ModelResource, RuntimeResource
from omerender.render.storage import is_sharded, sharded_ready
from omerender.selection import named_runtime_advisory, select_runtime

__all__ = ["Resolved", "resolve_refs"]

ADVISORY_REASON = "RuntimeCompatibilityAdvisory"


@dataclass(frozen=True, slots=True)
class Resolved:
    runtime: RuntimeResource  # effective: inheritance already applied
    model: ModelResource | None
    fine_tuned: FineTunedWeight | None
    overlays: tuple[ModelResource, ...]
    advisory: str | None


def _model_where(kind: str, namespace: str) -> str:
    return f'in namespace "{namespace}"' if kind == "BaseModel" else "at cluster scope"


def _resolve_model(replica: InferenceReplica, catalog: Catalog) -> ModelResource:
    ref = replica.spec.model_ref
    assert ref is not None
    kind = ref.effective_kind
    model = catalog.model(kind, replica.namespace, ref.name)
    if model is None:
        raise RenderBlocked(
            BlockReason.MODEL_NOT_FOUND,
            f'{kind} "{ref.name}" not found {_model_where(kind, replica.namespace)}',
        )
    if not model.is_ready:
        state = model.status.state if model.status and model.status.state else "unknown"
        raise RenderBlocked(BlockReason.MODEL_NOT_FOUND, f'{kind} "{ref.name}" is not ready (state: {state})')
    if model.is_disabled:
        raise RenderBlocked(BlockReason.MODEL_DISABLED, f'{kind} "{ref.name}" is disabled')
    if is_sharded(model):
        # render.ResolveModel: a Sharded model waits for its Ready condition (ModelNotReadyError).
        ready, why = sharded_ready(model)
        if not ready:
            text = f"model {ref.name} is not ready" + (f": {why}" if why else "")
            raise RenderBlocked(BlockReason.MODEL_NOT_FOUND, text)
    return model


def _resolve_fine_tuned(replica: InferenceReplica, catalog: Catalog) -> FineTunedWeight | None:
    ref = replica.spec.model_ref
    names = (ref.fine_tuned_weights or ()) if ref else ()
    if not names:
        return None
    if len(names) > 1:
        raise RenderBlocked(BlockReason.RENDER_FAILED, "stacked fine-tuned serving is not supported yet")
    weight = catalog.fine_tuned_weight(names[0])
    if weight is None:
        raise RenderBlocked(BlockReason.MODEL_NOT_FOUND, f'FineTunedWeight "{names[0]}" not found')
    return weight


def _resolve_overlays(replica: InferenceReplica, catalog: Catalog) -> tuple[ModelResource, ...]:
    """Overlays that are missing, disabled, or Sharded and not Ready are left out silently
    (``ResolveOverlays`` in pkg/controller/v1beta1/inferenceservice/utils/overlay.go)."""
    ref = replica.spec.model_ref
    found: list[ModelResource] = []
    for overlay in (ref.overlays or ()) if ref else ():
        model = catalog.model(overlay.kind or "ClusterBaseModel", replica.namespace, overlay.name)
        if model is None or model.is_disabled or (is_sharded(model) and not sharded_ready(model)[0]):
            continue
        found.append(model)
    return tuple(found)


def _named_runtime(replica: InferenceReplica, catalog: Catalog, resolver: Resolver) -> RuntimeResource:
    ref = replica.spec.runtime_ref
    assert ref is not None
    runtime = catalog.named_runtime(ref.kind, replica.namespace, ref.name)
    if runtime is None:
        where = f"namespace {replica.namespace}"
        scope = "" if ref.kind == "ServingRuntime" else " or at cluster scope"
        raise RenderBlocked(BlockReason.RUNTIME_NOT_FOUND, f"runtime {ref.name} not found in {where}{scope}")
    effective = _effective(runtime, resolver)
    # `disabled` inherits like any scalar (OME's merge): a profile's child must say `disabled: false`.
    if effective.is_disabled:
        scope_word = "namespace-scoped" if runtime.kind == "ServingRuntime" else "cluster-scoped"
        raise RenderBlocked(BlockReason.RUNTIME_DISABLED, f"{scope_word} runtime {ref.name} is disabled")
    return effective


def _effective(runtime: RuntimeResource, resolver: Resolver) -> RuntimeResource:
    try:
        return resolver.resolve(runtime).runtime
    except InheritanceError as exc:
        # A missing ancestor is a missing runtime for the user: fix or create it and the replica renders.
        reason = (
            BlockReason.RUNTIME_NOT_FOUND if exc.reason == "ParentNotFound" else BlockReason.RENDER_FAILED
        )
        raise RenderBlocked(reason, f"runtime {runtime.metadata.name}: {exc.message}") from None


def resolve_refs(replica: InferenceReplica, catalog: Catalog, resolver: Resolver | None = None) -> Resolved:
    """Model (if any), fine-tuned weight, overlays and the effective runtime for a refs replica.

    ``resolver`` caches inheritance chains across renders against the same catalog (lint passes one).
    """
    resolver = resolver or Resolver(catalog)
    model = fine_tuned = None
    overlays: tuple[ModelResource, ...] = ()
    if replica.spec.model_ref is not None:
        model = _resolve_model(replica, catalog)
        fine_tuned = _resolve_fine_tuned(replica, catalog)
        overlays = _resolve_overlays(replica, catalog)
    advisory = None
    if replica.spec.runtime_ref is not None:
        runtime = _named_runtime(replica, catalog, resolver)
        if model is not None:
            advisory = named_runtime_advisory(runtime, model)
    else:
        assert model is not None
        selected = select_runtime(model, catalog, replica.namespace, replica.spec.component)
        runtime = _effective(selected, resolver)
    return Resolved(runtime, model, fine_tuned, overlays, advisory)
