"""Template labels and annotations, in OME's order: later layers win (02 §3.6)."""

from __future__ import annotations

from typing import Any

from omerender.constants import LABEL_COMPONENT, LABEL_INFERENCESERVICE
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import FineTunedWeight, InferenceReplica, ModelResource

__all__ = ["template_annotations", "template_labels"]

# Annotations of the replica itself that never reach a pod, as OME drops them from the ISVC shell.
_DROPPED_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        "autoscaling.knative.dev/minScale",
        "autoscaling.knative.dev/maxScale",
        "internal.serving.kserve.io/storage-initializer-sourceuri",
    }
)
WORKER_DROPPED_ANNOTATIONS = frozenset({"prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path"})


def _strategy(weight: FineTunedWeight) -> str:
    """``hyperParameters.strategy``; ``resolve_refs`` has already refused a weight without a string one."""
    params = weight.spec.get("hyperParameters")
    value = params.get("strategy") if isinstance(params, dict) else None
    return value if isinstance(value, str) else ""


def _merged(weight: FineTunedWeight | None) -> bool:
    config = weight.spec.get("configuration") if weight else None
    return isinstance(config, dict) and config.get("merged_weights") is True


def _string_map(piece: dict[str, Any], key: str) -> dict[str, str]:
    value = piece.get(key) or {}
    if not isinstance(value, dict):
        raise RenderBlocked(
            BlockReason.RENDER_FAILED,
            f"the runtime piece's {key} must be a map of strings, not {type(value).__name__}",
        )
    return {str(k): str(v) for k, v in value.items()}


def template_labels(
    replica: InferenceReplica,
    piece: dict[str, Any],
    runtime_name: str,
    model: ModelResource | None,
    fine_tuned: FineTunedWeight | None,
) -> dict[str, str]:
    labels: dict[str, str] = dict(replica.metadata.labels)
    labels.update(_string_map(piece, "labels"))
    labels[LABEL_INFERENCESERVICE] = replica.name_prefix
    labels[LABEL_COMPONENT] = replica.spec.component
    labels["serving-runtime"] = runtime_name
    labels["fine-tuned-serving"] = "true" if fine_tuned is not None else "false"
    if model is not None:
        labels["base-model-name"] = model.metadata.name
        labels["base-model-size"] = model.metadata.annotations.get("models.ome.io/category", "SMALL")
        labels["base-model-type"] = "Serving"
        if model.spec.vendor:
            labels["base-model-vendor"] = model.spec.vendor
    if fine_tuned is not None:
        # ProcessBaseLabels (pkg/render/metadata.go).
        labels["fine-tuned-weight-ft-strategy"] = _strategy(fine_tuned)
        labels["fine-tuned-serving-with-merged-weights"] = "true" if _merged(fine_tuned) else "false"
    return labels


def template_annotations(
    replica: InferenceReplica,
    piece: dict[str, Any],
    runtime_name: str,
    model: ModelResource | None,
    fine_tuned: FineTunedWeight | None,
) -> dict[str, str]:
    notes = {k: v for k, v in replica.metadata.annotations.items() if k not in _DROPPED_ANNOTATIONS}
    notes.update(_string_map(piece, "annotations"))
    if model is not None:
        notes["ome.io/base-model-name"] = model.metadata.name
        if model.spec.vendor:
            notes["ome.io/base-model-vendor"] = model.spec.vendor
        if model.spec.model_format.name:
            notes["ome.io/base-model-format"] = model.spec.model_format.name
        if model.spec.model_format.version:
            notes["ome.io/base-model-format-version"] = model.spec.model_format.version
    notes["ome.io/serving-runtime"] = runtime_name
    if fine_tuned is not None:
        # ProcessBaseAnnotations (pkg/render/metadata.go) writes these three and nothing else.
        notes["ome.io/inject-fine-tuned-adapter"] = fine_tuned.metadata.name
        notes["ome.io/fine-tuned-weight-ft-strategy"] = _strategy(fine_tuned)
        if _merged(fine_tuned):
            notes["ome.io/fine-tuned-serving-with-merged-weights"] = "true"
    return notes
