"""Template labels and annotations, layered as OME's ``pkg/render/metadata.go`` and ``runners.go`` do.

``ReconcileComponentObjectMeta`` starts from the replica's own labels and annotations (annotations less
the disallowed keys) joined with the piece's, then writes OME's base labels and annotations over them
(``ProcessBaseLabels`` / ``ProcessBaseAnnotations``). ``TemplateObjectMeta`` then lays the piece's
``labels`` / ``annotations`` over that result, so the piece wins over OME's base values. Every runner, the
worker included, carries this one metadata (``Runners``).
"""

from __future__ import annotations

from typing import Any

from omerender.constants import ANNOTATION_IN_PLACE_IMAGE_TRANSITION, LABEL_COMPONENT, LABEL_INFERENCESERVICE
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import FineTunedWeight, InferenceReplica, ModelResource

__all__ = ["DISALLOWED_ANNOTATIONS", "component_annotations", "template_annotations", "template_labels"]

# constants.ServiceAnnotationDisallowedList: the replica's annotations that never reach its pods.
DISALLOWED_ANNOTATIONS = frozenset(
    {
        "internal.ome.io/storage-initializer-sourceuri",
        "kubectl.kubernetes.io/last-applied-configuration",
        "ome.io/rollout-promote",
        "ome.io/rollout-rollback",
    }
)


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
    # A null value decodes to "" in Go's map[string]string (what the merged piece holds too).
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def template_labels(
    replica: InferenceReplica,
    piece: dict[str, Any],
    runtime_name: str,
    model: ModelResource | None,
    fine_tuned: FineTunedWeight | None,
) -> dict[str, str]:
    piece_labels = _string_map(piece, "labels")
    labels: dict[str, str] = {**replica.metadata.labels, **piece_labels}
    labels[LABEL_INFERENCESERVICE] = replica.name_prefix
    labels[LABEL_COMPONENT] = replica.spec.component
    labels["serving-runtime"] = runtime_name
    labels["fine-tuned-serving"] = "true" if fine_tuned is not None else "false"
    if model is not None:
        labels["base-model-name"] = model.metadata.name
        labels["base-model-size"] = model.metadata.annotations.get("models.ome.io/category", "SMALL")
        labels["base-model-type"] = "Serving"
        if model.spec.vendor is not None:
            labels["base-model-vendor"] = model.spec.vendor
    if fine_tuned is not None:
        # ProcessBaseLabels (pkg/render/metadata.go).
        labels["fine-tuned-weight-ft-strategy"] = _strategy(fine_tuned)
        labels["fine-tuned-serving-with-merged-weights"] = "true" if _merged(fine_tuned) else "false"
    labels.update(piece_labels)  # TemplateObjectMeta
    return labels


def component_annotations(
    replica: InferenceReplica,
    piece: dict[str, Any],
    runtime_name: str,
    model: ModelResource | None,
    fine_tuned: FineTunedWeight | None,
) -> dict[str, str]:
    """The component's ``ObjectMeta.Annotations`` as ``ReconcileComponentObjectMeta`` builds them
    (``ProcessComponentAnnotations`` then ``ProcessBaseAnnotations``, ome-projects/ome
    ``pkg/render/metadata.go`` @ f0c4ef77), before ``TemplateObjectMeta``: what the pod build's
    annotation checks read (``UpdateVolumeMounts``, ``UpdateEnvVariables``, ``UpdatePodSpecVolumes``)."""
    notes = {k: v for k, v in replica.metadata.annotations.items() if k not in DISALLOWED_ANNOTATIONS}
    notes.update(_string_map(piece, "annotations"))
    notes.pop(ANNOTATION_IN_PLACE_IMAGE_TRANSITION, None)  # ProcessComponentAnnotations
    if fine_tuned is not None:
        # ProcessBaseAnnotations writes these three and nothing else.
        notes["ome.io/inject-fine-tuned-adapter"] = fine_tuned.metadata.name
        notes["ome.io/fine-tuned-weight-ft-strategy"] = _strategy(fine_tuned)
        if _merged(fine_tuned):
            notes["ome.io/fine-tuned-serving-with-merged-weights"] = "true"
    if model is not None:
        notes["ome.io/base-model-name"] = model.metadata.name
        if model.spec.vendor is not None:  # a pointer in Go: an empty vendor is written too
            notes["ome.io/base-model-vendor"] = model.spec.vendor
        notes["ome.io/base-model-format"] = model.spec.model_format.name or ""  # a string: always written
        if model.spec.model_format.version is not None:
            notes["ome.io/base-model-format-version"] = model.spec.model_format.version
    notes["ome.io/serving-runtime"] = runtime_name
    return notes


def template_annotations(
    replica: InferenceReplica,
    piece: dict[str, Any],
    runtime_name: str,
    model: ModelResource | None,
    fine_tuned: FineTunedWeight | None,
    component: dict[str, str] | None = None,
) -> dict[str, str]:
    """The template's annotations: :func:`component_annotations` (``component`` when the caller has
    them) with the piece's ``annotations`` laid over them (``TemplateObjectMeta``)."""
    notes = dict(component or component_annotations(replica, piece, runtime_name, model, fine_tuned))
    notes.update(_string_map(piece, "annotations"))  # TemplateObjectMeta
    return notes
