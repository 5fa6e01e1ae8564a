"""The Go field table of OME's ServingRuntimeSpec and the role specs in it, for the merges.

OME's ``runtimeinheritance.Merge`` (sgl-project/ome ``pkg/runtimeinheritance/merge.go``) marshals the
child runtime's *typed* ``v1beta1.ServingRuntimeSpec``, strips JSON nulls and lays the result over the
parent with a strategic merge patch. So a child value counts only when Go's encoder writes it: an
``omitempty`` field holding its zero value (``hostNetwork: false``, ``maxReplicas: 0``,
``schedulerName: ""``, an empty list or map) is not written and cannot override the parent, while a
pointer field (``disabled: false``, ``minReplicas: 0``) and a field without ``omitempty`` (a
container's ``name: ""``) are written and do.

The field table is not typed by hand where Go's types are Kubernetes': every Kubernetes struct comes
from :mod:`omerender._gofields`, generated from ``k8s.io/api``. Above them sits OME's own layer,
transcribed from ome-projects/ome ``pkg/apis/ome/v1beta1`` (``servingruntime_types.go``,
``inference_service.go``, ``component.go``, ``podspec.go``) and kept to the structure: OME's
``v1beta1.PodSpec`` is a copy of ``corev1.PodSpec`` whose ``containers`` is ``omitempty``
(``podspec.go``), so its fields are read from ``core/v1.PodSpec``; ``ServingRuntimePodSpec`` is a
subset of it plus ``labels``/``annotations``. OME structs whose fields are all pointers, or that the
render never merges into (``scalingPolicy``, ``acceleratorRequirements``, ``lifecycle``,
``autoscaler``, ``deploymentStrategy``, …), are ``opaque``: in them, and under any key the table does
not know, ``""`` and ``[]`` count as unset and everything else as set, as before this table existed.
:mod:`omerender.gomarshal` reads these tables to give what Go's encoder writes of a spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from omerender._gofields import STRUCTS as K8S_STRUCTS

__all__ = ["OMITEMPTY_ZERO_FIELDS", "RUNTIME_SPEC", "STRUCTS"]

# (json name, omitempty, type) per struct; types in _gofields' notation plus "opaque".
Field = tuple[str, bool, str]

_OPAQUE: Final = "opaque"
RUNTIME_SPEC: Final = "ome/v1beta1.ServingRuntimeSpec"


def _k8s(struct: str, *, omitempty: Mapping[str, bool] | None = None) -> tuple[Field, ...]:
    changes = omitempty or {}
    return tuple((n, changes.get(n, oe), t) for n, oe, _, t in K8S_STRUCTS[struct])


# OME's v1beta1.PodSpec: corev1.PodSpec with `containers` optional (podspec.go).
_OME_POD_SPEC: Final = _k8s("core/v1.PodSpec", omitempty={"containers": True})
_SERVING_RUNTIME_POD_SPEC_FIELDS: Final = (
    "containers",
    "volumes",
    "nodeSelector",
    "affinity",
    "tolerations",
    "imagePullSecrets",
    "schedulerName",
    "hostIPC",
    "dnsPolicy",
    "hostNetwork",
)
_CORE_POD_SPEC: Final = {f[0]: f for f in _k8s("core/v1.PodSpec")}
_LABELS_AND_ANNOTATIONS: Final = (
    ("labels", True, "map[string]string"),
    ("annotations", True, "map[string]string"),
)
# ServingRuntimePodSpec (servingruntime_types.go): `containers` keeps its corev1 tag (no omitempty).
_SERVING_RUNTIME_POD_SPEC: Final = (
    *(_CORE_POD_SPEC[n] for n in _SERVING_RUNTIME_POD_SPEC_FIELDS),
    *_LABELS_AND_ANNOTATIONS,
)
# ComponentExtensionSpec (component.go): `maxReplicas` is a plain int with omitempty.
_COMPONENT_EXTENSION: Final = (
    ("minReplicas", True, "*int64"),
    ("maxReplicas", True, "int64"),
    ("timeoutSeconds", True, "*int64"),
    *_LABELS_AND_ANNOTATIONS,
    ("servicePortAppProtocols", True, "map[string]string"),
    ("minAvailable", True, "*intorstring"),
    ("maxUnavailable", True, "*intorstring"),
    ("deploymentStrategy", True, _OPAQUE),
    ("lifecycle", True, _OPAQUE),
    ("autoscaler", True, _OPAQUE),
    ("autoscalerPolicyRef", True, _OPAQUE),
)
# RunnerSpec inlines corev1.Container; LeaderSpec and WorkerSpec inline v1beta1.PodSpec.
_RUNNER: Final = ("runner", True, "*core/v1.Container")
_TOPOLOGY_AND_ACCELERATOR: Final = (
    ("topologyKey", True, "*string"),
    ("topologySpread", True, "*string"),
    ("topologySpreadKey", True, "*string"),
    ("acceleratorOverride", True, "*ome/v1beta1.AcceleratorSelector"),
)
_ENGINE_OR_DECODER: Final = (
    *_OME_POD_SPEC,
    *_COMPONENT_EXTENSION,
    _RUNNER,
    ("leader", True, "*ome/v1beta1.LeaderSpec"),
    ("worker", True, "*ome/v1beta1.WorkerSpec"),
    *_TOPOLOGY_AND_ACCELERATOR,
)

STRUCTS: Final[Mapping[str, tuple[Field, ...]]] = {
    RUNTIME_SPEC: (
        ("supportedModelFormats", True, _OPAQUE),  # atomic: replaced whole, never merged into
        ("modelSizeRange", True, _OPAQUE),
        ("disabled", True, "*bool"),
        ("routerConfig", True, "*ome/v1beta1.RouterSpec"),
        ("engineConfig", True, "*ome/v1beta1.EngineSpec"),
        ("decoderConfig", True, "*ome/v1beta1.DecoderSpec"),
        ("protocolVersions", True, "[]string"),
        *_SERVING_RUNTIME_POD_SPEC,
        ("scalingPolicy", True, _OPAQUE),
        ("acceleratorRequirements", True, _OPAQUE),
    ),
    "ome/v1beta1.EngineSpec": _ENGINE_OR_DECODER,
    "ome/v1beta1.DecoderSpec": _ENGINE_OR_DECODER,
    "ome/v1beta1.RouterSpec": (
        *_OME_POD_SPEC,
        *_COMPONENT_EXTENSION,
        _RUNNER,
        ("config", True, "map[string]string"),
    ),
    "ome/v1beta1.LeaderSpec": (*_OME_POD_SPEC, _RUNNER),
    "ome/v1beta1.WorkerSpec": (*_OME_POD_SPEC, ("size", True, "*int64"), _RUNNER),
    "ome/v1beta1.AcceleratorSelector": (
        ("acceleratorClass", True, "*string"),
        ("constraints", True, _OPAQUE),
        ("policy", True, "string"),
    ),
}

_INT_TYPES: Final = frozenset({"int32", "int64"})


_FIELD_CACHE: dict[str, Mapping[str, tuple[bool, str]] | None] = {}


def _fields_of(struct: str) -> Mapping[str, tuple[bool, str]] | None:
    """``name -> (omitempty, type)`` of an OME or Kubernetes struct; None for any other type."""
    if struct not in _FIELD_CACHE:
        fields = STRUCTS.get(struct) or (_k8s(struct) if struct in K8S_STRUCTS else ())
        _FIELD_CACHE[struct] = {n: (oe, t) for n, oe, t in fields} if fields else None
    return _FIELD_CACHE[struct]


def _zero_fields() -> frozenset[str]:
    """``struct.field`` for every non-pointer ``omitempty`` scalar reachable from the runtime spec."""
    found: set[str] = set()
    seen: set[str] = set()
    todo = [RUNTIME_SPEC]
    while todo:
        struct = todo.pop()
        if struct in seen:
            continue
        seen.add(struct)
        for name, (omitempty, typ) in (_fields_of(struct) or {}).items():
            if omitempty and typ in ("bool", "string", *_INT_TYPES):
                found.add(f"{struct}.{name}")
            inner = typ.lstrip("*[]").removeprefix("map[string]")
            if _fields_of(inner) is not None:
                todo.append(inner)
    return frozenset(found)


# Generated from the tables above: the fields whose zero value in a child never overrides a parent.
OMITEMPTY_ZERO_FIELDS: Final = _zero_fields()
