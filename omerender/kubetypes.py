"""Typed views of the Kubernetes objects a render emits, for code checked by ``mypy --strict``.

They are ``TypedDict``\\ s: a view is the very dict the result holds (no copy, no conversion), so the
dict form stays available and the typed form costs nothing (``Preview.typed``,
``RenderedRunner.typed_template``). Only the fields omerender emits or a tool commonly reads are
declared; Kubernetes owns the full schema, and a field not declared here is still in the dict.
"""

# Annotations are evaluated as written (no ``from __future__ import annotations``): Python 3.11's
# TypedDict compiles each string annotation at import, and cannot see ``NotRequired`` inside a string,
# so ``__required_keys__`` listed the optional keys too.

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Container",
    "ContainerPort",
    "ControllerRevision",
    "ControllerRevisionData",
    "EnvVar",
    "ObjectMeta",
    "OwnerReference",
    "Pod",
    "PodGroup",
    "PodSpec",
    "PodTemplateSpec",
    "ResourceRequirements",
    "Service",
    "ServicePort",
    "ServiceSpec",
    "Toleration",
    "Volume",
    "VolumeMount",
]


class OwnerReference(TypedDict):
    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: NotRequired[bool]
    blockOwnerDeletion: NotRequired[bool]


class ObjectMeta(TypedDict, total=False):
    name: str
    namespace: str
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    creationTimestamp: str | None


class EnvVar(TypedDict):
    name: str
    value: NotRequired[str]
    valueFrom: NotRequired[dict[str, Any]]


class ContainerPort(TypedDict):
    containerPort: int
    name: NotRequired[str]
    protocol: NotRequired[str]


class VolumeMount(TypedDict):
    name: str
    mountPath: str
    readOnly: NotRequired[bool]
    subPath: NotRequired[str]


class ResourceRequirements(TypedDict, total=False):
    requests: dict[str, str | int]
    limits: dict[str, str | int]


class Container(TypedDict, total=False):
    name: str
    image: str
    command: list[str]
    args: list[str]
    env: list[EnvVar]
    ports: list[ContainerPort]
    resources: ResourceRequirements
    volumeMounts: list[VolumeMount]
    readinessProbe: dict[str, Any]
    livenessProbe: dict[str, Any]
    startupProbe: dict[str, Any]


class Volume(TypedDict, total=False):
    name: str
    emptyDir: dict[str, Any]
    hostPath: dict[str, Any]
    persistentVolumeClaim: dict[str, Any]
    configMap: dict[str, Any]
    secret: dict[str, Any]


class Toleration(TypedDict, total=False):
    key: str
    operator: str
    value: str
    effect: str
    tolerationSeconds: int


class PodSpec(TypedDict, total=False):
    containers: list[Container]
    initContainers: list[Container]
    volumes: list[Volume]
    nodeSelector: dict[str, str]
    tolerations: list[Toleration]
    affinity: dict[str, Any]
    hostname: str
    subdomain: str
    readinessGates: list[dict[str, str]]
    schedulerName: str
    serviceAccountName: str
    terminationGracePeriodSeconds: int


class PodTemplateSpec(TypedDict, total=False):
    """A runner's template (``RenderedRunner.template``)."""

    metadata: ObjectMeta
    spec: PodSpec


class Pod(TypedDict):
    apiVersion: Literal["v1"]
    kind: Literal["Pod"]
    metadata: ObjectMeta
    spec: PodSpec


class ServicePort(TypedDict, total=False):
    name: str
    port: int
    targetPort: int | str
    protocol: str


class ServiceSpec(TypedDict, total=False):
    clusterIP: str
    publishNotReadyAddresses: bool
    selector: dict[str, str]
    type: str
    ports: list[ServicePort]


class Service(TypedDict):
    apiVersion: Literal["v1"]
    kind: Literal["Service"]
    metadata: ObjectMeta
    spec: ServiceSpec


class ControllerRevisionData(TypedDict, total=False):
    podSpec: PodSpec
    podMeta: ObjectMeta


class ControllerRevision(TypedDict):
    apiVersion: Literal["apps/v1"]
    kind: Literal["ControllerRevision"]
    metadata: ObjectMeta
    data: ControllerRevisionData
    revision: int


class PodGroup(TypedDict):
    apiVersion: str
    kind: Literal["PodGroup"]
    metadata: ObjectMeta
    spec: dict[str, Any]
