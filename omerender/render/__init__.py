"""Render a replica into runner pod templates: from a model, a runtime, or the user's own runners."""

from __future__ import annotations

from omerender.accelerators import accelerator_resource_names
from omerender.arguments import check_replica_and_catalog
from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.inheritance import Resolver
from omerender.models import InferenceReplica, Runner, RuntimeResource
from omerender.render.data import clone
from omerender.render.memo import runners_for, shape_of
from omerender.render.prepare import prepare_role
from omerender.render.resolve import ADVISORY_REASON, Resolved, resolve_refs
from omerender.render.result import Advisory, Render, RenderedRunner, TemplateSource

__all__ = ["Advisory", "Render", "RenderedRunner", "TemplateSource", "render"]

TEMPLATE_SOURCE_MISSING = (
    "spec sets neither runners nor modelRef or runtimeRef; one template source is required"
)


def _stored_runners(replica: InferenceReplica) -> tuple[RenderedRunner, ...]:
    """``spec.runners`` as given: one ``default`` of size 1, or a ``leader`` of size 1 and a ``worker``."""
    by_name: dict[str, Runner] = {r.name: r for r in replica.spec.runners or ()}
    shape = sorted(by_name)
    sizes_ok = all(r.size == 1 for r in by_name.values() if r.name != "worker")
    if (
        len(by_name) != len(replica.spec.runners or ())
        or shape not in (["default"], ["leader", "worker"])
        or not sizes_ok
    ):
        given = ", ".join(f"{r.name} (size {r.size})" for r in replica.spec.runners or ())
        raise RenderBlocked(
            BlockReason.RENDER_FAILED,
            "spec.runners must be one default runner of size 1, or a leader of size 1 and a worker; "
            f"got {given}",
        )
    order = ("default",) if "default" in by_name else ("leader", "worker")
    return tuple(RenderedRunner(n, by_name[n].size, clone(by_name[n].template)) for n in order)


def render(replica: InferenceReplica, catalog: Catalog, *, resolver: Resolver | None = None) -> Render:
    """The replica's pod templates for this pass, rendered from the live model and runtime.

    Raises RenderBlocked with one of the seed's eight reasons when there is nothing it can run.
    Pure: reads only its arguments, mutates neither, and returns fresh data. Refs renders are
    memoized in ``catalog`` by every replica field that reaches them (``omerender.render.memo``), so
    many replicas on few runtimes cost little more than one render per runtime. ``resolver`` (an
    inheritance cache for ``catalog``) is used where a render is computed.
    """
    check_replica_and_catalog("render", replica, catalog)
    spec = replica.spec
    if spec.model_ref is None and spec.runtime_ref is None:
        if not spec.runners:
            raise RenderBlocked(BlockReason.TEMPLATE_SOURCE_MISSING, TEMPLATE_SOURCE_MISSING)
        return Render(replica=replica, source="runners", runners=_stored_runners(replica))

    if catalog.deploy_error is not None:
        # renderFromRefs loads the deploy config before it resolves anything.
        raise RenderBlocked(BlockReason.RENDER_FAILED, f"load deploy config: {catalog.deploy_error}")
    accelerators = accelerator_resource_names(catalog.accelerator_resources)

    def resolve() -> tuple[Resolved, RuntimeResource]:
        resolved = resolve_refs(replica, catalog, resolver)
        return resolved, prepare_role(resolved.runtime, spec.component, catalog.deploy)

    # Memoized in the catalog by every replica field that reaches the result (omerender.render.memo).
    shape, built = shape_of(replica, catalog, resolve, accelerators)
    runners = built if built is not None else runners_for(replica, shape, accelerators)
    resolved = shape.resolved
    assert resolved is not None  # runners_for raised the block otherwise
    source: TemplateSource = "modelRef" if spec.model_ref is not None else "runtimeRef"
    advisories = (Advisory(ADVISORY_REASON, resolved.advisory),) if resolved.advisory else ()
    return Render(
        replica=replica,
        source=source,
        runners=runners,
        runtime_kind=resolved.runtime.kind,
        runtime_name=resolved.runtime.metadata.name,
        model_name=resolved.model.metadata.name if resolved.model else None,
        advisories=advisories,
        excluded_annotation_keys=frozenset(replica.metadata.annotations),
        encodings=shape.encodings if shape.pods is not None else None,
    )
