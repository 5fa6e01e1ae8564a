"""Assemble runner pod templates from an effective runtime piece (02 §3.1 pipeline).

Follows OME's ``pkg/render``: ``RenderEngine`` / ``RenderDecoder`` / ``RenderRouter`` (engine.go,
decoder.go, router.go) for the pods, ``Runners`` / ``TemplateObjectMeta`` (runners.go) for the runners.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omerender.accelerators import set_parallelism
from omerender.errors import BlockReason, RenderBlocked
from omerender.merge import (
    fill_scheduler_name,
    main_container_index,
    merge_component_spec,
    merge_runner_into_pod,
)
from omerender.models import InferenceReplica, RuntimeResource
from omerender.render.inject import ModelContext, edit_pod, edit_runner, empty_model_dir_required
from omerender.render.legacy import merge_legacy_node_selector, merge_legacy_resources
from omerender.render.metadata import component_annotations, template_annotations, template_labels
from omerender.render.pieces import PIECE_KEYS, PieceShape, RunnerPod, split_piece
from omerender.render.placeholders import has_delimiter, replace_placeholders, replica_meta
from omerender.render.result import RenderedRunner

__all__ = ["build_runners", "check_volume_mounts", "template_metadata"]


def check_volume_mounts(runner_name: str, spec: dict[str, Any], piece_key: str) -> None:
    """A mount naming a volume the pod does not declare can never start: block the render."""
    declared = {v.get("name") for v in spec.get("volumes") or ()}
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or ():
            for mount in container.get("volumeMounts") or ():
                if mount.get("name") not in declared:
                    raise RenderBlocked(
                        BlockReason.RENDER_FAILED,
                        f'runner "{runner_name}" container "{container.get("name", "")}": volumeMount '
                        f'"{mount.get("name")}" has no matching volume in the pod (for a multi-node runtime '
                        f"declare it under {piece_key}.leader.volumes / {piece_key}.worker.volumes)",
                    )


def _parallelism_leaders(component: str, piece: dict[str, Any]) -> int:
    """``engineParallelismLeaders`` is always 1; ``decoderParallelismLeaders`` is 1 only when the decoder
    piece has a ``leader`` block or a top-level ``runner``."""
    if component != "decoder":
        return 1
    return 1 if piece.get("leader") is not None or piece.get("runner") is not None else 0


def _no_containers(part: RunnerPod) -> str:
    # PodSpecReconciler's own words: resolveContainer (primary) and ReconcileWorkerPodSpec (worker).
    if part.name == "worker":
        return "no containers found in worker pod spec"
    return "no containers found in pod spec and no runner spec provided"


def _pod_for(
    part: RunnerPod,
    replica: InferenceReplica,
    ctx: ModelContext | None,
    runtime: RuntimeResource,
    shape: PieceShape,
    piece: dict[str, Any],
    accelerator_names: Sequence[str],
    placeholders: bool,
    annotations: Mapping[str, str],
) -> dict[str, Any]:
    """One pod, as ``EnginePodSpec`` / ``EngineWorkerPodSpec`` (and the decoder/router twins) build it.
    ``annotations`` are the component's (``ReconcileComponentObjectMeta``), which the model injection
    reads."""
    component = replica.spec.component
    workload = component in ("engine", "decoder")
    runner = part.runner
    if runner is not None:
        router_config = piece.get("config") if component == "router" else None
        edit_runner(
            runner,
            component=component,
            ctx=ctx,
            router_config=router_config if isinstance(router_config, dict) else None,
            annotations=annotations,
        )
        if workload:
            merge_legacy_resources(runner, runtime)
            set_parallelism(
                runner, accelerator_names, _parallelism_leaders(component, piece), shape.worker_size
            )
    elif not (part.pod.get("containers") or []):
        key = PIECE_KEYS[component]
        raise RenderBlocked(
            BlockReason.RENDER_FAILED,
            f'{key} of {runtime.kind} "{runtime.metadata.name}": {_no_containers(part)}',
        )
    pod = merge_runner_into_pod(part.pod, runner)
    containers = pod["containers"]
    position = main_container_index(pod, runner)
    main = containers[position]
    if placeholders and has_delimiter(main):  # the Go template's ObjectMeta only when it is used
        containers[position] = main = replace_placeholders(
            main, replica_meta(replica), worker=part.name == "worker"
        )
    if ctx is not None or empty_model_dir_required(annotations):
        edit_pod(
            pod,
            component=component,
            ctx=ctx,
            runtime=runtime,
            namespace=replica.namespace,
            annotations=annotations,
        )
    # UpdatePodSpecNodeSelector: a merged fine-tuned weight needs nothing from the node, not even this.
    if workload and not (ctx is not None and ctx.merged):
        merge_legacy_node_selector(pod, runtime)
    return pod


def template_metadata(
    replica: InferenceReplica,
    runtime: RuntimeResource,
    piece: dict[str, Any],
    ctx: ModelContext | None,
    component: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The metadata every runner's template carries (``TemplateObjectMeta``), the worker's too: the
    only part of a refs render that reads the replica's name, labels and annotations (besides
    placeholders in the containers)."""
    model = ctx.model if ctx else None
    fine_tuned = ctx.fine_tuned if ctx else None
    labels = template_labels(replica, piece, runtime.metadata.name, model, fine_tuned)
    annotations = template_annotations(
        replica, piece, runtime.metadata.name, model, fine_tuned, dict(component) if component else None
    )
    metadata: dict[str, Any] = {}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return metadata


def build_runners(
    replica: InferenceReplica,
    runtime: RuntimeResource,
    ctx: ModelContext | None,
    accelerator_names: Sequence[str],
    *,
    placeholders: bool = True,
) -> tuple[RenderedRunner, ...]:
    """The runners OME's ``renderFromRefs`` stores for a refs replica (``Rendered.Runners``).

    ``accelerator_names`` are the resource names that count as accelerators for ``PARALLELISM_SIZE``.
    ``placeholders=False`` skips the placeholder pass, for a caller that found no ``{{`` in anything
    the containers are made from (``omerender.render.memo``): the pass would return them unchanged.
    """
    component = replica.spec.component
    piece = runtime.piece(component)
    if piece is None:
        raise RenderBlocked(
            BlockReason.RUNTIME_PIECE_MISSING,
            f'{runtime.kind} "{runtime.metadata.name}" has no {component} piece; '
            f"a {component} replica cannot render from it",
        )
    # MergeRuntimeSpecs: the piece under serviceShell's empty role spec (MergeEngineSpec & co., which
    # fold the piece's pod fields into its leader and worker), then MergeSchedulerName.
    # Both return data of this render's own, so neither it nor the split copies it again: the runners
    # are edited in place, and the piece is read afterwards only for which blocks it has.
    piece = merge_component_spec(piece, {}, component) or {}
    piece = fill_scheduler_name(piece, (runtime.spec.model_extra or {}).get("schedulerName"), copy=False)
    notes = component_annotations(
        replica, piece, runtime.metadata.name, ctx.model if ctx else None, ctx.fine_tuned if ctx else None
    )
    metadata = template_metadata(replica, runtime, piece, ctx, notes)
    shape = split_piece(piece, component, copy=False)
    # The worker pod is rendered even when it is dropped (a worker without a leader): Go renders it first.
    parts = [shape.primary, *([shape.worker] if shape.worker else [])]
    specs = {
        id(p): _pod_for(p, replica, ctx, runtime, shape, piece, accelerator_names, placeholders, notes)
        for p in parts
    }
    rendered = []
    for part in shape.runners:
        spec = specs[id(part)]
        check_volume_mounts(part.name, spec, PIECE_KEYS[component])
        template = {"metadata": {k: dict(v) for k, v in metadata.items()}, "spec": spec}
        rendered.append(RenderedRunner(part.name, part.size, template))
    return tuple(rendered)
