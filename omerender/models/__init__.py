"""Typed views of the objects a render reads (pydantic v2, camelCase aliases).

Pod specs, runtime pieces and templates stay plain JSON-like data: they are merged and stamped as data,
and Kubernetes owns their schema. Unknown fields are tolerated everywhere (catalogs are newer than us).
"""

from omerender.models.base import ObjectMeta, OwnerReference, parse_object
from omerender.models.catalog_objects import (
    MERGED_FROM_CHECKED_PIECES,
    FineTunedWeight,
    InferenceService,
    ModelFormat,
    ModelResource,
    ModelSizeRange,
    ModelSpec,
    ModelStatus,
    RuntimeResource,
    RuntimeSpec,
    Storage,
    SupportedModelFormat,
)
from omerender.models.replica import (
    Autoscaler,
    InferenceReplica,
    InferenceReplicaSpec,
    InferenceReplicaStatus,
    LifecycleSpec,
    ModelOverlayRef,
    ModelRef,
    Pacing,
    ParentRef,
    RollingUpdate,
    Runner,
    ServingRuntimeRef,
    UpdateStrategy,
)

__all__ = [
    "MERGED_FROM_CHECKED_PIECES",
    "Autoscaler",
    "FineTunedWeight",
    "InferenceReplica",
    "InferenceReplicaSpec",
    "InferenceReplicaStatus",
    "InferenceService",
    "LifecycleSpec",
    "ModelFormat",
    "ModelOverlayRef",
    "ModelRef",
    "ModelResource",
    "ModelSizeRange",
    "ModelSpec",
    "ModelStatus",
    "ObjectMeta",
    "OwnerReference",
    "Pacing",
    "ParentRef",
    "RollingUpdate",
    "Runner",
    "RuntimeResource",
    "RuntimeSpec",
    "ServingRuntimeRef",
    "Storage",
    "SupportedModelFormat",
    "UpdateStrategy",
    "parse_object",
]
