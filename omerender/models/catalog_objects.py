"""Models, runtimes, fine-tuned weights and InferenceServices: the objects a render reads.

Only the fields selection and rendering read are typed. Runtime pieces (``engineConfig``,
``decoderConfig``, ``routerConfig``) stay raw dicts: they are pod specs and merge as data.
"""

# Annotations are evaluated as written (no `from __future__ import annotations`): pydantic would
# otherwise parse and compile each of them from a string when the class is created, at every start-up.

from typing import Any, Final, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from omerender.models.base import KubeModel, ObjectMeta
from omerender.models.pieces import check_legacy_pod_fields, check_piece

__all__ = [
    "MERGED_FROM_CHECKED_PIECES",
    "FineTunedWeight",
    "InferenceService",
    "ModelFormat",
    "ModelResource",
    "ModelSizeRange",
    "ModelSpec",
    "ModelStatus",
    "RuntimeResource",
    "RuntimeSpec",
    "Storage",
    "SupportedModelFormat",
]

# Validation context flag (``parse_object(..., context={MERGED_FROM_CHECKED_PIECES: True})``): the
# runtime's pieces are an inheritance merge of pieces that each passed ``check_piece``, which proves
# the merge passes it too (``omerender.inheritance``), so the check is not run again.
MERGED_FROM_CHECKED_PIECES: Final = "merged_from_checked_pieces"

VersionOperator = Literal["Equal", "GreaterThan", "GreaterThanOrEqual"]


class ModelFormat(KubeModel):
    """``modelFormat`` / ``modelFramework``: name, optional version and comparison operator."""

    name: str = ""
    version: str | None = None
    operator: VersionOperator | None = None
    weight: int | None = None


class Storage(KubeModel):
    path: str | None = None
    key: str | None = None
    storage_uri: str | None = None
    node_selector: dict[str, str] | None = None


class ModelSpec(KubeModel):
    model_format: ModelFormat = Field(default_factory=ModelFormat)
    model_framework: ModelFormat | None = None
    model_architecture: str | None = None
    quantization: str | None = None
    model_parameter_size: str | None = None
    model_type: str | None = None
    diffusion_pipeline: dict[str, Any] | None = None
    display_name: str | None = None
    version: str | None = None
    disabled: bool | None = None
    vendor: str | None = None
    storage: Storage | None = None
    distribution: str | None = None  # "PerNode" (OME's default) or "Sharded"


class ModelStatus(KubeModel):
    state: str | None = None
    lifecycle: str | None = None
    conditions: tuple[dict[str, Any], ...] = ()


class ModelResource(KubeModel):
    """A BaseModel (namespaced) or ClusterBaseModel (cluster-scoped)."""

    api_version: str = "ome.io/v1beta1"
    kind: Literal["BaseModel", "ClusterBaseModel"]
    metadata: ObjectMeta
    spec: ModelSpec = Field(default_factory=ModelSpec)
    status: ModelStatus | None = None

    @property
    def is_ready(self) -> bool:
        """Whether ``status.state`` is ``Ready``."""
        return self.status is not None and self.status.state == "Ready"

    @property
    def is_disabled(self) -> bool:
        """Whether ``spec.disabled`` is true."""
        return bool(self.spec.disabled)


class SupportedModelFormat(KubeModel):
    name: str | None = None
    model_format: ModelFormat | None = None
    model_framework: ModelFormat | None = None
    model_architecture: str | None = None
    quantization: str | None = None
    diffusion_pipeline: dict[str, Any] | None = None
    auto_select: bool | None = None
    priority: int | None = None


class ModelSizeRange(KubeModel):
    min: str | None = None
    max: str | None = None


class RuntimeSpec(KubeModel):
    supported_model_formats: tuple[SupportedModelFormat, ...] = ()
    model_size_range: ModelSizeRange | None = None
    disabled: bool | None = None
    protocol_versions: tuple[str, ...] = ()
    engine_config: dict[str, Any] | None = None
    decoder_config: dict[str, Any] | None = None
    router_config: dict[str, Any] | None = None
    node_selector: dict[str, str] | None = None

    @field_validator("engine_config", "decoder_config", "router_config")
    @classmethod
    def _go_decodable(cls, piece: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        if info.context and info.context.get(MERGED_FROM_CHECKED_PIECES):
            return piece
        # GoJSONError is a ValueError: pydantic reports it against the piece, with the path inside it.
        check_piece(
            piece,
            {"engine_config": "engineConfig", "decoder_config": "decoderConfig"}.get(
                info.field_name or "", "routerConfig"
            ),
        )
        return piece

    @model_validator(mode="after")
    def _go_decodable_legacy(self, info: ValidationInfo) -> "RuntimeSpec":
        # spec.containers, spec.volumes, …: kept as unknown fields, decoded by Go all the same.
        if not (info.context and info.context.get(MERGED_FROM_CHECKED_PIECES)):
            check_legacy_pod_fields(self.model_extra or {})
        return self


class RuntimeResource(KubeModel):
    """A ServingRuntime (namespaced) or ClusterServingRuntime (cluster-scoped)."""

    api_version: str = "ome.io/v1beta1"
    kind: Literal["ServingRuntime", "ClusterServingRuntime"]
    metadata: ObjectMeta
    spec: RuntimeSpec = Field(default_factory=RuntimeSpec)

    @property
    def is_disabled(self) -> bool:
        """Whether ``spec.disabled`` is true."""
        return bool(self.spec.disabled)

    def piece(self, component: str) -> dict[str, Any] | None:
        """The runtime's piece for ``component`` (``engineConfig`` for an engine), or None."""
        return {
            "engine": self.spec.engine_config,
            "decoder": self.spec.decoder_config,
            "router": self.spec.router_config,
        }.get(component)


class FineTunedWeight(KubeModel):
    """A cluster-scoped FineTunedWeight; ``configuration.merged_weights`` marks merged weights."""

    api_version: str = "ome.io/v1beta1"
    kind: Literal["FineTunedWeight"] = "FineTunedWeight"
    metadata: ObjectMeta
    spec: dict[str, Any] = Field(default_factory=dict)
    status: ModelStatus | None = None


class InferenceService(KubeModel):
    """Enough of an InferenceService for the webhook's name-collision check."""

    api_version: str = "ome.io/v1beta1"
    kind: Literal["InferenceService"] = "InferenceService"
    metadata: ObjectMeta
    spec: dict[str, Any] = Field(default_factory=dict)
