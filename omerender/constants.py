"""Names OME gives to labels, annotations, conditions and environment variables (01-contract §3, §6)."""

from __future__ import annotations

from typing import Final

__all__ = [name for name in dir() if name.isupper()]

API_GROUP: Final = "ome.io"
API_VERSION: Final = "ome.io/v1beta1"
REPLICA_KIND: Final = "InferenceReplica"

# Pod and object labels (§3.2)
LABEL_INFERENCESERVICE: Final = "ome.io/inferenceservice"
LABEL_COMPONENT: Final = "component"
LABEL_MANAGED_BY: Final = "ome.io/managed-by"
MANAGED_BY_VALUE: Final = "OMENative"
LABEL_INSTANCE_INDEX: Final = "ome.io/instance-index"
LABEL_INSTANCE_INCARNATION: Final = "ome.io/instance-incarnation"
LABEL_RUNNER: Final = "ome.io/runner"
LABEL_POD_ORDINAL: Final = "ome.io/pod-ordinal"
LABEL_REVISION_HASH: Final = "ome.io/revision-hash"
LABEL_PAIRING_PROTOCOL: Final = "ome.io/pairing-protocol"
LABEL_POD_GROUP: Final = "scheduling.x-k8s.io/pod-group"

# Annotations
ANNOTATION_INHERIT_FROM: Final = "ome.io/inherit-from"
ANNOTATION_RUNTIME_PROFILE: Final = "ome.io/runtime-profile"
ANNOTATION_CONTROLLER_WRITE: Final = "ome.io/controller-write"
ANNOTATION_COMPOSED_FIELDS: Final = "ome.io/composed-fields"
ANNOTATION_RESET_INSTANCES: Final = "ome.io/reset-instances"
ANNOTATION_RELEASE_HELD_REVISION: Final = "ome.io/release-held-revision"
ANNOTATION_MIGRATION_REQUEST_PREFIX: Final = "ome.io/migration-request-v1-"
ANNOTATION_TOPOLOGY_KEY: Final = "ome.io/topology-key"
ANNOTATION_IN_PLACE_IMAGE_TRANSITION: Final = "internal.ome.io/in-place-image-transition"
ANNOTATION_REVISION_EXCLUDED_KEYS: Final = "ome.io/revision-excluded-annotation-keys"

# The readiness gate OME owns: True while the pod is in rotation.
SERVING_GATE: Final = "ome.io/serving"
TEARDOWN_FINALIZER: Final = "ome.io/ir-teardown"

# Runners
RUNNER_DEFAULT: Final = "default"
RUNNER_LEADER: Final = "leader"
RUNNER_WORKER: Final = "worker"
MAIN_CONTAINER: Final = "ome-container"

# Environment (§3.3)
ENV_INFERENCESERVICE_NAME: Final = "OME_INFERENCESERVICE_NAME"
ENV_COMPONENT: Final = "OME_COMPONENT"
ENV_COMPONENT_REPLICAS: Final = "OME_COMPONENT_REPLICAS"
ENV_INSTANCE_INDEX: Final = "OME_INSTANCE_INDEX"
ENV_RUNNER: Final = "OME_RUNNER"
ENV_RUNNER_SIZE: Final = "OME_RUNNER_SIZE"
ENV_RUNNER_INDEX: Final = "OME_RUNNER_INDEX"
ENV_INSTANCE_SUBDOMAIN: Final = "OME_INSTANCE_SUBDOMAIN"
ENV_LEADER_ADDRESS: Final = "OME_LEADER_ADDRESS"
ENV_INSTANCE_POD_RANK: Final = "OME_INSTANCE_POD_RANK"
ENV_INSTANCE_POD_COUNT: Final = "OME_INSTANCE_POD_COUNT"
ENV_LWS_LEADER_ADDRESS: Final = "LWS_LEADER_ADDRESS"
ENV_LWS_GROUP_SIZE: Final = "LWS_GROUP_SIZE"
ENV_LWS_WORKER_INDEX: Final = "LWS_WORKER_INDEX"
ENV_MODEL_PATH: Final = "MODEL_PATH"

__all__ = sorted(name for name in globals() if name.isupper())
