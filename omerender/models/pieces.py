"""The Go types of a serving runtime's pieces, checked where a runtime is parsed.

OME's controller reads a runtime through a Go client, which decodes ``engineConfig`` and
``decoderConfig`` into ``EngineSpec``/``DecoderSpec`` (``PodSpec`` + ``ComponentExtensionSpec`` +
``runner``, ``leader``, ``worker``) and ``routerConfig`` into ``RouterSpec`` (``PodSpec`` +
``ComponentExtensionSpec`` + ``runner`` + ``config``): sgl-project/ome
``pkg/apis/ome/v1beta1/servingruntime_types.go``, ``component.go`` (``ComponentExtensionSpec``) and
``podspec.go``. A value that decoding refuses (a string where ``env`` belongs, an unparsable quantity,
a string port) means OME cannot read the runtime at all, so the parse refuses it, naming the field,
instead of letting the render meet a shape it was never meant to handle.

The Kubernetes fields come from :mod:`omerender._gofields` (generated from k8s.io/api); the OME-only
fields below are copied from ``component.go``. Fields of OME-only structs this module does not know
(``deploymentStrategy``, ``kedaConfig``, ``acceleratorOverride``) are left to the render. Keys Go does
not know are dropped by Go and ignored here.

One rule is stricter than Go: a null item in a list of structs (``env: [null]``). Go decodes it as the
zero struct (an ``EnvVar`` without a name, a ``Volume`` without a name, a port 0), which the API server
then refuses in every pod OME creates from the runtime, so it is refused here, naming the item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from omerender._gofields import STRUCTS
from omerender.gojson import GoJSONError, fragment_encoder
from omerender.runtime_gotypes import RUNTIME_SPEC
from omerender.runtime_gotypes import STRUCTS as RUNTIME_STRUCTS

__all__ = ["check_legacy_pod_fields", "check_piece"]

_POD_SPEC: Final = {name: typ for name, _, _, typ in STRUCTS["core/v1.PodSpec"]}
# ComponentExtensionSpec (component.go); Go's ``int`` is 64 bits on OME's platforms.
_EXTENSION: Final = {
    "minReplicas": "*int64",
    "maxReplicas": "int64",
    "scaleTarget": "*int64",
    "scaleMetric": "*string",
    "containerConcurrency": "*int64",
    "timeoutSeconds": "*int64",
    "canaryTrafficPercent": "*int64",
    "labels": "map[string]string",
    "annotations": "map[string]string",
    "minAvailable": "*intorstring",
    "maxUnavailable": "*intorstring",
}
_RUNNER: Final = "*core/v1.Container"  # RunnerSpec inlines a core Container
_LEADER: Final = {**_POD_SPEC, "runner": _RUNNER}
_WORKER: Final = {**_POD_SPEC, "size": "*int64", "runner": _RUNNER}
_NESTED: Final = {"leader": _LEADER, "worker": _WORKER}
_ENGINE: Final = {**_POD_SPEC, **_EXTENSION, "runner": _RUNNER}
_ROUTER: Final = {**_POD_SPEC, **_EXTENSION, "runner": _RUNNER, "config": "map[string]string"}


def _struct_of(typ: str) -> str | None:
    """The struct a type is or points to (``*core/v1.Container`` → ``core/v1.Container``), if any."""
    bare = typ.lstrip("*")
    return bare if bare in STRUCTS else None


def _no_null_items(value: Any, typ: str) -> None:
    """Raise where a list of structs inside ``value`` (of Go type ``typ``) holds a null item."""
    if typ.startswith("[]"):
        elem = typ[2:]
        struct = _struct_of(elem)
        if isinstance(value, list):
            for index, item in enumerate(value):
                if item is None and struct is not None:
                    short = struct.rpartition(".")[2]
                    raise GoJSONError(
                        f"null item: Go decodes it as an empty {short}, which the API server refuses in "
                        "every pod; remove the item or fill it in",
                        path=[index],
                    )
                try:
                    _no_null_items(item, elem)
                except GoJSONError as exc:
                    raise exc.prepend(index) from None
        return
    if typ.startswith("map[string]"):
        if isinstance(value, Mapping):
            for key, item in value.items():
                try:
                    _no_null_items(item, typ[11:])
                except GoJSONError as exc:
                    raise exc.prepend(key) from None
        return
    struct = _struct_of(typ)
    if struct is None or not isinstance(value, Mapping):
        return
    for name, _, _, ftype in STRUCTS[struct]:
        if name in value:
            try:
                _no_null_items(value[name], ftype)
            except GoJSONError as exc:
                raise exc.prepend(name) from None


def _check_fields(value: Any, fields: Mapping[str, str | Mapping[str, str]], type_name: str) -> None:
    if value is None:
        return  # a nil pointer
    if not isinstance(value, Mapping):
        raise GoJSONError(
            f"cannot decode {type(value).__name__} into Go value of type {type_name}", value=value
        )
    for key, child in value.items():
        typ = fields.get(key)
        try:
            if isinstance(typ, Mapping):
                _check_fields(child, typ, f"v1beta1.{key.capitalize()}Spec")
            elif typ is not None:
                fragment_encoder(typ)(child)
                _no_null_items(child, typ)
        except GoJSONError as exc:
            raise exc.prepend(key) from None


def check_piece(piece: Any, field: str) -> None:
    """Raise :class:`GoJSONError` (with the path inside the piece) where Go could not decode it."""
    if field == "routerConfig":
        _check_fields(piece, _ROUTER, "v1beta1.RouterSpec")
    else:
        _check_fields(piece, {**_ENGINE, **_NESTED}, "v1beta1.EngineSpec")


# ServingRuntimePodSpec, inlined in ServingRuntimeSpec (servingruntime_types.go): the legacy top-level
# pod fields (``spec.containers``, ``spec.volumes``, …), decoded with the rest of the runtime. The CRD
# keeps their unknown fields (x-kubernetes-preserve-unknown-fields), so the API server takes a value
# there that Go's decoder then refuses.
_LEGACY: Final = {
    name: typ
    for name, _, typ in RUNTIME_STRUCTS[RUNTIME_SPEC]
    if name in _POD_SPEC or name in ("labels", "annotations")
}


def check_legacy_pod_fields(spec: Mapping[str, Any]) -> None:
    """Raise :class:`GoJSONError` (path from the runtime's ``spec``) where Go could not decode one of
    the runtime's legacy top-level pod fields (an unparsable quantity in ``spec.containers``)."""
    for key, typ in _LEGACY.items():
        if key not in spec:
            continue
        try:
            fragment_encoder(typ)(spec[key])
            _no_null_items(spec[key], typ)
        except GoJSONError as exc:
            raise exc.prepend(key) from None
