"""Assemble runner pod templates from an effective runtime piece (02 §3.1 pipeline)."""

from __future__ import annotations

from typing import Any

from omerender.errors import BlockReason, RenderBlocked
from omerender.merge import merge_runner_into_pod
from omerender.models import InferenceReplica, RuntimeResource
from omerender.render.inject import ModelContext, edit_pod, edit_runner
from omerender.render.metadata import WORKER_DROPPED_ANNOTATIONS, template_annotations, template_labels
from omerender.render.pieces import PIECE_KEYS, RunnerPod, split_piece
from omerender.render.placeholders import replace_placeholders, replica_meta
from omerender.render.result import RenderedRunner

__all__ = ["build_runners", "check_volume_mounts"]


def _main_container(pod: dict[str, Any], runner: dict[str, Any] | None) -> dict[str, Any] | None:
    containers = pod.get("containers") or []
    if runner is not None:
        name = runner.get("name")
        for container in containers:
            if container.get("name") == name:
                return container  # type: ignore[no-any-return]
    return containers[0] if containers else None


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


def _pod_for(
    part: RunnerPod,
    replica: InferenceReplica,
    ctx: ModelContext | None,
    runtime: RuntimeResource,
    *,
    worker_size: int,
    leader_counts: bool,
    router_config: dict[str, Any] | None,
) -> dict[str, Any]:
    component = replica.spec.component
    runner = part.runner
    if runner is not None:
        edit_runner(
            runner,
            component=component,
            ctx=ctx,
            worker_size=worker_size,
            leader_counts=leader_counts,
            router_config=router_config,
        )
    pod = merge_runner_into_pod(part.pod, runner)
    containers = pod.get("containers") or []
    main = _main_container(pod, runner)
    if main is not None:
        position = next(i for i, c in enumerate(containers) if c is main)
        containers[position] = main = replace_placeholders(
            main, replica_meta(replica), worker=part.name == "worker"
        )
    if ctx is not None:
        edit_pod(pod, main, component=component, ctx=ctx, runtime=runtime, namespace=replica.namespace)
    return pod


def build_runners(
    replica: InferenceReplica, runtime: RuntimeResource, ctx: ModelContext | None
) -> tuple[RenderedRunner, ...]:
    component = replica.spec.component
    piece = runtime.piece(component)
    if piece is None:
        raise RenderBlocked(
            BlockReason.RUNTIME_PIECE_MISSING,
            f'{runtime.kind} "{runtime.metadata.name}" has no {component} piece; '
            f"a {component} replica cannot render from it",
        )
    parts = split_piece(piece, component)
    worker_size = next((p.size for p in parts if p.name == "worker"), 0)
    # The decoder's leader counts toward PARALLELISM_SIZE only when it has a runner (02 §3.5).
    leader_counts = (
        component != "decoder" or piece.get("leader") is not None or piece.get("runner") is not None
    )
    router_config = piece.get("config") if component == "router" else None
    model = ctx.model if ctx else None
    fine_tuned = ctx.fine_tuned if ctx else None
    labels = template_labels(replica, piece, runtime.metadata.name, model, fine_tuned)
    annotations = template_annotations(replica, piece, runtime.metadata.name, model, fine_tuned)
    rendered = []
    for part in parts:
        spec = _pod_for(
            part,
            replica,
            ctx,
            runtime,
            worker_size=worker_size,
            leader_counts=leader_counts,
            router_config=router_config if isinstance(router_config, dict) else None,
        )
        if not spec.get("containers"):
            raise RenderBlocked(
                BlockReason.RENDER_FAILED,
                f'{PIECE_KEYS[component]} of {runtime.kind} "{runtime.metadata.name}" renders a '
                f"{part.name} pod with no containers and no runner",
            )
        check_volume_mounts(part.name, spec, PIECE_KEYS[component])
        notes = annotations
        if part.name == "worker":
            notes = {k: v for k, v in annotations.items() if k not in WORKER_DROPPED_ANNOTATIONS}
        metadata: dict[str, Any] = {}
        if labels:
            metadata["labels"] = dict(labels)
        if notes:
            metadata["annotations"] = dict(notes)
        rendered.append(RenderedRunner(part.name, part.size, {"metadata": metadata, "spec": spec}))
    return tuple(rendered)
