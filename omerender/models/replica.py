"""The InferenceReplica (``ome.io/v1beta1``): spec and status, as in OME v1.3's newest types."""

# Annotations are evaluated as written (no `from __future__ import annotations`): pydantic would
# otherwise parse and compile each of them from a string when the class is created, at every start-up.

from typing import Any, Literal

from pydantic import Field

from omerender.models.base import KubeModel, ObjectMeta

__all__ = [
    "Autoscaler",
    "InferenceReplica",
    "InferenceReplicaSpec",
    "InferenceReplicaStatus",
    "LifecycleSpec",
    "ModelOverlayRef",
    "ModelRef",
    "Pacing",
    "ParentRef",
    "RollingUpdate",
    "Runner",
    "ServingRuntimeRef",
    "UpdateStrategy",
]

Component = Literal["engine", "decoder", "router"]
RunnerName = Literal["default", "leader", "worker"]
IntOrString = int | str


class ModelOverlayRef(KubeModel):
    name: str
    kind: str | None = None
    api_group: str | None = None


class ModelRef(KubeModel):
    name: str
    kind: str | None = None
    api_group: str | None = None
    fine_tuned_weights: tuple[str, ...] | None = None
    overlays: tuple[ModelOverlayRef, ...] | None = None

    @property
    def effective_kind(self) -> str:
        return self.kind or "ClusterBaseModel"


class ServingRuntimeRef(KubeModel):
    name: str
    kind: str | None = None
    api_group: str | None = None
    auto_sync: bool | None = None
    revision: str | None = None

    @property
    def effective_kind(self) -> str:
        return self.kind or "ClusterServingRuntime"


class Runner(KubeModel):
    """One role of an Instance: its pod template and how many pods it runs."""

    name: RunnerName
    size: int = Field(default=1, ge=1)
    template: dict[str, Any] = Field(default_factory=dict)


class RollingUpdate(KubeModel):
    partition: int | None = Field(default=None, ge=0)
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class UpdateStrategy(KubeModel):
    type: Literal["SurgeThenDrain", "RecreatePod", "InPlaceIfPossible", "InPlaceOnly"] | None = None
    rolling_update: RollingUpdate | None = None
    in_place_update_strategy: dict[str, Any] | None = None


class LifecycleSpec(KubeModel):
    restart_policy: Literal["None", "RecreateInstanceOnPodRestart"] | None = None
    update_strategy: UpdateStrategy | None = None
    ready_policy: Literal["AllPodReady", "None"] | None = None
    instance_ready_timeout: str | None = None
    min_ready_seconds: int | None = None
    migration_policy: dict[str, Any] | None = None


class Pacing(KubeModel):
    partition: int | None = Field(default=None, ge=0)
    max_unavailable: IntOrString | None = None
    rollback_to_revision: str | None = None


class Autoscaler(KubeModel):
    class_: str | None = Field(default=None, alias="class")


class ParentRef(KubeModel):
    name: str = Field(min_length=1)


class InferenceReplicaSpec(KubeModel):
    component: Component
    parent_ref: ParentRef | None = None
    placement_execution: dict[str, Any] | None = None
    placement_replica_limit: int | None = Field(default=None, ge=1)
    model_ref: ModelRef | None = None
    runtime_ref: ServingRuntimeRef | None = None
    runners: tuple[Runner, ...] | None = None
    replicas: int | None = Field(default=None, ge=0)
    min_ready_seconds: int = Field(default=0, ge=0)
    topology_key: str | None = None
    topology_spread: Literal["Preferred", "Required"] | None = None
    topology_spread_key: str | None = None
    pairing_protocol: str | None = Field(
        default=None, max_length=63, pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
    )
    lifecycle: LifecycleSpec | None = None
    pacing: Pacing | None = None
    autoscaler: Autoscaler | None = None
    paused: bool = False
    pause_mode: Literal["Recover", "Freeze", ""] | None = None
    revision_history_limit: int | None = Field(default=None, ge=1)

    @property
    def effective_replicas(self) -> int:
        """Desired Instances: unset or 0 runs one (a standalone replica never scales to zero)."""
        return self.replicas or 1


class InferenceReplicaStatus(KubeModel):
    observed_generation: int | None = None
    replicas: int | None = None
    ready_replicas: int | None = None
    serving_replicas: int | None = None
    available_replicas: int | None = None
    updated_replicas: int | None = None
    updated_ready_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    label_selector: str | None = None
    instance_statuses: tuple[dict[str, Any], ...] | None = None
    conditions: tuple[dict[str, Any], ...] | None = None
    rollout_hold: dict[str, Any] | None = None


class InferenceReplica(KubeModel):
    """An ``ome.io/v1beta1`` InferenceReplica (metadata, spec, status), as :func:`parse_object` reads it."""

    api_version: str = "ome.io/v1beta1"
    kind: Literal["InferenceReplica"] = "InferenceReplica"
    metadata: ObjectMeta
    spec: InferenceReplicaSpec
    status: InferenceReplicaStatus | None = None

    @property
    def name_prefix(self) -> str:
        """Every derived name starts here: the parent's name when projected, else the replica's own."""
        if self.spec.parent_ref is not None:
            return self.spec.parent_ref.name
        return self.metadata.name

    @property
    def namespace(self) -> str:
        """``metadata.namespace``, or ``default`` when unset."""
        return self.metadata.namespace or "default"
