"""Refs renders memoized by their inputs, in the catalog they read (:meth:`Catalog.memoized`).

A fleet of thousands of replicas over a few hundred runtimes renders a few hundred distinct things:
what a refs render computes from the catalog depends on the replica only through

- the **key**: namespace, component, ``spec.modelRef`` and ``spec.runtimeRef`` (whole, as JSON), the
  ``ome.io/accelerator-class`` annotation runtime matching reads and the five annotations the model
  injection reads (:data:`~omerender.render.inject.INJECTION_ANNOTATIONS`: merged weights, adapter,
  strategy, vendor, format): all that model lookup, runtime selection and inheritance, fine-tuned
  weights, overlays, ``PrepareRole`` and the pod build read (``omerender.render.resolve``,
  ``omerender.render.build``);
- the template **metadata** (name prefix, labels, annotations): recomputed for every replica by
  :func:`~omerender.render.build.template_metadata`, the same function a full build calls;
- **placeholders** (``{{.Name}}`` …) in the containers, which read the replica's name prefix,
  namespace, UID, generation, labels and annotations. Where the runtime, model, fine-tuned weight or
  an overlay holds ``{{`` anywhere (a superset of what reaches a container), the pods are built for
  every replica; only the resolution is shared.

So an entry holds the outcome of resolution (or the block it raised), and, when no placeholder can
apply, the built pod specs (or the block the build raised).

The **build** (pod specs, or its block) is shared across namespaces by a key of its own
(:func:`build_key`): the resolved runtime, model, fine-tuned weight and overlays (the objects
themselves, by identity, held by the entry so no id is reused), the component, and the namespace only
where the build reads it. Without placeholders the build reads the namespace in one place:
``edit_pod``'s model-ready node selector of a namespaced ``BaseModel`` (``base_model_label``); its
block messages name runtimes and runners, never the namespace. Resolution stays per namespace
(ServingRuntimes, BaseModels and its messages are namespaced), so a model served in ten namespaces is
resolved ten times and built once. A hit hands out fresh copies, made when
first read (:class:`~omerender.render.result.SharedRunner`): a Render's templates belong to its caller. Everything else in a :class:`Render` comes from the entry or from the
replica itself.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Hashable, Sequence
from dataclasses import field
from typing import Any, Final

from omerender._records import record
from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import InferenceReplica, RuntimeResource
from omerender.models.base import KubeModel
from omerender.render.build import build_runners, template_metadata
from omerender.render.inject import INJECTION_ANNOTATIONS, ModelContext
from omerender.render.resolve import Resolved
from omerender.render.result import RenderedRunner, SharedRunner
from omerender.selection import required_accelerator_classes

__all__ = [
    "Shape",
    "build_key",
    "holds_placeholders",
    "may_hold_placeholders",
    "memo_key",
    "runners_for",
    "shape_of",
]

_PROTOCOL: Final = 5


@record
class Shape:
    """What every replica with one key renders alike: resolution, and the pods when they are shared."""

    blocked: tuple[BlockReason, str] | None = None
    resolved: Resolved | None = None
    runtime: RuntimeResource | None = None  # the resolved runtime after PrepareRole
    ctx: ModelContext | None = None
    # (runner name, size, pickled pod spec) per runner; None where placeholders make pods per-replica.
    # Pickled: immutable, and unpickling is the quickest exact copy of JSON-like data there is.
    pods: tuple[tuple[str, int, bytes], ...] | None = None
    # The revision's Go encoding of pod specs, by their pickled bytes (omerender.revision): every
    # replica of this entry hashes the same specs. One dict per catalog (see shape_of): entries of one
    # model in many namespaces build the same specs, and equal bytes are equal specs.
    encodings: dict[bytes, str] = field(default_factory=dict)


def memo_key(replica: InferenceReplica) -> Hashable:
    """Every replica field a refs render reads, besides the metadata recomputed per replica."""
    spec = replica.spec
    return (
        "refs",
        replica.namespace,
        spec.component,
        spec.model_ref.model_dump_json() if spec.model_ref is not None else None,
        spec.runtime_ref.model_dump_json() if spec.runtime_ref is not None else None,
        required_accelerator_classes(replica.metadata.annotations),
        _injection_annotations(replica),
    )


def _injection_annotations(replica: InferenceReplica) -> tuple[tuple[str, str], ...]:
    """The replica's values of the annotations the pod build reads (``UpdateVolumeMounts``,
    ``UpdateEnvVariables``, ``UpdatePodSpecVolumes`` read them off the component's annotations)."""
    notes = replica.metadata.annotations
    return tuple((k, notes[k]) for k in INJECTION_ANNOTATIONS if k in notes)


def build_key(
    replica: InferenceReplica, resolved: Resolved, ctx: ModelContext | None
) -> tuple[Hashable, tuple[Any, ...]]:
    """The key of a placeholder-free build and the objects whose ids it holds (kept alive with it).

    The runtime is the resolved one before ``PrepareRole``: the prepared runtime is a function of it,
    the component and the catalog's deploy defaults, and a new object on each call.
    """
    objects: tuple[Any, ...] = (resolved.runtime,)
    namespace = None
    if ctx is not None:
        objects += (ctx.model, ctx.fine_tuned, *ctx.overlays)
        if ctx.model.kind != "ClusterBaseModel":
            namespace = replica.namespace  # edit_pod: base_model_label(model namespace or this one)
    key = ("build", replica.spec.component, namespace, _injection_annotations(replica), *map(id, objects))
    return key, objects


@record
class _Built:
    """A shared build's outcome: the pods (None: not plain data, built per replica) or its block."""

    keep: tuple[Any, ...]  # the objects build_key took ids of
    pods: tuple[tuple[str, int, bytes], ...] | None = None
    blocked: tuple[BlockReason, str] | None = None


def may_hold_placeholders(runtime: RuntimeResource, ctx: ModelContext | None) -> bool:
    """Whether ``{{`` occurs anywhere in what a container is assembled from. JSON never escapes a
    brace, so the dumps hold ``{{`` exactly when a key or string does."""
    return _braces(runtime) or (ctx is not None and any(map(_braces, _context_sources(ctx))))


def _braces(source: KubeModel) -> bool:
    return "{{" in source.model_dump_json()


def _context_sources(ctx: ModelContext) -> tuple[KubeModel, ...]:
    return (ctx.model, *ctx.overlays, *((ctx.fine_tuned,) if ctx.fine_tuned else ()))


def _remembered_braces(catalog: Catalog, owner: Any, tag: Hashable, source: KubeModel) -> bool:
    """:func:`_braces` of ``source``, remembered in ``catalog`` under ``owner``'s identity and ``tag``.
    The entry holds ``owner``, so its id cannot be reused by another object while the answer lives."""
    entry = catalog.memoized(("holds-braces", id(owner), tag), lambda: (owner, _braces(source)))
    return entry[1]


def holds_placeholders(
    catalog: Catalog, resolved: Resolved, runtime: RuntimeResource, ctx: ModelContext | None, component: str
) -> bool:
    """:func:`may_hold_placeholders` of ``runtime`` and ``ctx``, each source dumped once per catalog
    instead of once per memo miss (lint's renders are all misses).

    ``runtime`` is ``prepare_role(resolved.runtime, component, catalog.deploy)``: a new object on each
    call, but a function of the resolved runtime, the component and the catalog's deploy defaults, so
    its answer is kept under the first two (the third is fixed by the catalog that holds the answer),
    or under the resolved runtime alone where ``prepare_role`` returned it unchanged.
    The model, fine-tuned weight and overlays are the catalog's objects, each kept by identity.
    """
    owner = resolved.runtime
    # PrepareRole hands the resolved runtime back when the defaults fill nothing: then one answer per
    # runtime object serves every component (and the model-less and model renders alike).
    tag: Hashable = "own" if runtime is owner else ("prepared", component)
    if _remembered_braces(catalog, owner, tag, runtime):
        return True
    return ctx is not None and any(_remembered_braces(catalog, s, "own", s) for s in _context_sources(ctx))


def shape_of(
    replica: InferenceReplica,
    catalog: Catalog,
    resolve: Callable[[], tuple[Resolved, RuntimeResource]],
    accelerator_names: Sequence[str],
) -> tuple[Shape, tuple[RenderedRunner, ...] | None]:
    """The entry for ``replica``'s key, computed on a miss from ``resolve`` and this replica; with the
    runners built for this replica on that miss (else None: :func:`runners_for` makes them)."""
    built_now: list[tuple[RenderedRunner, ...]] = []
    encodings: dict[bytes, str] = catalog.memoized(("pod-spec-encodings",), dict)

    def compute() -> Shape:
        try:
            resolved, runtime = resolve()
        except RenderBlocked as blocked:
            return Shape(blocked=(blocked.reason, blocked.message))
        ctx = ModelContext(resolved.model, resolved.fine_tuned, resolved.overlays) if resolved.model else None
        if holds_placeholders(catalog, resolved, runtime, ctx, replica.spec.component):
            return Shape(resolved=resolved, runtime=runtime, ctx=ctx)
        key, keep = build_key(replica, resolved, ctx)

        def build() -> _Built:
            try:
                built = build_runners(replica, runtime, ctx, accelerator_names, placeholders=False)
            except RenderBlocked as blocked:
                return _Built(keep, blocked=(blocked.reason, blocked.message))
            try:
                pods = tuple((r.name, r.size, pickle.dumps(r.template["spec"], _PROTOCOL)) for r in built)
            except Exception:  # not plain data after all: build every replica's pods instead
                return _Built(keep)
            built_now.append(built)
            return _Built(keep, pods=pods)

        outcome = catalog.memoized(key, build)
        if outcome.blocked is not None:
            return Shape(blocked=outcome.blocked)
        if outcome.pods is None:
            return Shape(resolved=resolved, runtime=runtime, ctx=ctx)
        return Shape(resolved=resolved, runtime=runtime, ctx=ctx, pods=outcome.pods, encodings=encodings)

    shape = catalog.memoized(memo_key(replica), compute)
    return shape, (built_now[0] if built_now else None)


def runners_for(
    replica: InferenceReplica, shape: Shape, accelerator_names: Sequence[str]
) -> tuple[RenderedRunner, ...]:
    """``replica``'s runners from its entry: shared pods with its own metadata, or a full build."""
    if shape.blocked is not None:
        raise RenderBlocked(*shape.blocked)
    assert shape.runtime is not None
    if shape.pods is None:
        return build_runners(replica, shape.runtime, shape.ctx, accelerator_names)
    piece = shape.runtime.piece(replica.spec.component)
    assert piece is not None  # the build that made the pods had it
    metadata = template_metadata(replica, shape.runtime, piece, shape.ctx)
    # The templates are made from these when first read (SharedRunner): a revision needs neither.
    return tuple(SharedRunner(name, size, metadata=metadata, spec=spec) for name, size, spec in shape.pods)
