"""Shared model plumbing: the camelCase base class, object metadata, and error translation."""

# Annotations are evaluated as written (no `from __future__ import annotations`): pydantic would
# otherwise parse and compile each of them from a string when the class is created, at every start-up.

import json
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from omerender.errors import FieldProblem, InvalidArgumentError, InvalidObjectError
from omerender.gojson import GoJSONError
from omerender.jsonlike import json_problem
from omerender.wording import pydantic_message

__all__ = ["KubeModel", "ObjectMeta", "OwnerReference", "parse_object"]


class KubeModel(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields kept; instances immutable and
    hashable (a tool may key a dict or a set by replicas or runtimes)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=True,
        # Validators are built on first validation, for the models validated directly (a replica,
        # each catalog kind), not at import for every nested class: about 20 ms off every command.
        defer_build=True,
    )

    def __hash__(self) -> int:
        # pydantic's own hash of a frozen model hashes the field values, and pod specs, labels and
        # unknown fields are dicts: hash the canonical JSON instead. Equal models dump equal JSON.
        return hash((type(self), json.dumps(self.model_dump(mode="json"), sort_keys=True)))


class OwnerReference(KubeModel):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None

    @property
    def is_isvc_controller(self) -> bool:
        """An InferenceService controller reference: group ``ome.io``, any version (01 §7.1)."""
        group = self.api_version.rpartition("/")[0]
        return self.controller is True and self.kind == "InferenceService" and group == "ome.io"


class ObjectMeta(KubeModel):
    name: str = ""
    namespace: str | None = None
    uid: str = ""
    generation: int = 0
    resource_version: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[str, ...] = ()
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None

    @property
    def isvc_controller_ref(self) -> OwnerReference | None:
        """The InferenceService controller owner reference that makes a replica projected, if any."""
        return next((ref for ref in self.owner_references if ref.is_isvc_controller), None)


M = TypeVar("M", bound=BaseModel)


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "<object>"


def _problem(err: Any) -> FieldProblem:
    """One pydantic error as a FieldProblem; a validator's GoJSONError extends the path into the value."""
    where = _path(tuple(err["loc"]))
    cause = err.get("ctx", {}).get("error") if err.get("type") == "value_error" else None
    if isinstance(cause, GoJSONError):
        inner = cause.path_str
        joined = f"{where}{'' if not inner or inner.startswith('[') else '.'}{inner}"
        return FieldProblem(joined, cause.message)
    # pydantic puts "Value error, " before a validator's own words: drop it.
    return FieldProblem(where, str(cause) if cause is not None else pydantic_message(err))


def _identity(
    obj: Mapping[str, Any], model: type[BaseModel], kind: str | None
) -> tuple[str, str, str | None]:
    """(kind, name, namespace) to name ``obj`` in an error, whatever shapes its fields have."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, namespace, given = meta.get("name"), meta.get("namespace"), obj.get("kind")
    return (
        kind or (given if isinstance(given, str) and given else model.__name__),
        name if isinstance(name, str) else "",
        namespace if isinstance(namespace, str) else None,
    )


# The kinds each top-level model reads, checked against OME's CRDs when parsing strictly.
_KINDS: dict[str, frozenset[str]] = {
    "InferenceReplica": frozenset({"InferenceReplica"}),
    "ModelResource": frozenset({"BaseModel", "ClusterBaseModel"}),
    "RuntimeResource": frozenset({"ServingRuntime", "ClusterServingRuntime"}),
    "FineTunedWeight": frozenset({"FineTunedWeight"}),
    "InferenceService": frozenset({"InferenceService"}),
}


def _crd_problems(model: type[BaseModel], obj: Mapping[str, Any]) -> tuple[FieldProblem, ...]:
    """What ``kubectl apply`` with strict field validation refuses in ``obj`` (omerender.crds), for
    the top-level models; nothing for a model no CRD defines or an object of another kind (the
    model's own check names the kind)."""
    kinds, kind = _KINDS.get(model.__name__), obj.get("kind")
    if kinds is None or not isinstance(kind, str) or kind not in kinds:
        return ()
    from omerender.crds import object_problems

    out: list[FieldProblem] = []
    for problem in object_problems(obj):
        path, _, message = problem.partition(": ")
        out.append(FieldProblem(path, message))
    return tuple(out)


def parse_object(
    model: type[M],
    obj: Mapping[str, Any],
    *,
    kind: str | None = None,
    json_data: bool = False,
    context: Mapping[str, Any] | None = None,
    strict: bool = True,
) -> M:
    """Validate ``obj`` as ``model``; on failure raise InvalidObjectError naming the object and every
    failing field, each with its fix.

    ``strict`` (the default) checks an object of an OME kind (InferenceReplica, BaseModel,
    ClusterBaseModel, ServingRuntime, ClusterServingRuntime, FineTunedWeight, InferenceService) as
    ``kubectl apply`` with strict field validation and the command line check it: the ``apiVersion``
    the CRD serves, unknown fields (``spec.replcias``), required fields, patterns and ``metadata.name``
    a DNS-1123 subdomain (``Bad_Name``), and for a replica the names the render derives from it
    (:func:`omerender.crds.object_problems`). ``strict=False`` reads as leniently as before: unknown
    fields kept, names unchecked (objects the API server has validated already, or synthetic ones).

    ``obj`` may be anything: a value that is not a mapping of JSON-like data (a list, a cyclic or
    too deeply nested value, a non-string key) is an InvalidObjectError too, never a crash.
    ``json_data`` says the caller built ``obj`` from JSON data itself (a model's JSON dump), so that
    walk is skipped. ``context`` is pydantic's validation context, for the validators that read it
    (``MERGED_FROM_CHECKED_PIECES``).
    """
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise InvalidArgumentError("parse_object", "model", "a model class such as InferenceReplica", model)
    label = kind if isinstance(kind, str) else model.__name__
    if not isinstance(obj, Mapping):
        problem = FieldProblem(
            "<object>", f"expected a mapping (a Kubernetes object), got {type(obj).__name__}"
        )
        raise InvalidObjectError(label, "", None, (problem,))
    found = None if json_data else json_problem(obj)
    if found is not None:
        raise InvalidObjectError(*_identity(obj, model, kind), (FieldProblem(*found),))
    found_crd = _crd_problems(model, obj) if strict else ()
    try:
        parsed = model.model_validate(obj, context=context)
    except ValidationError as exc:
        said = {p.path for p in found_crd}
        problems = tuple(_problem(err) for err in exc.errors(include_url=False))
        raise InvalidObjectError(
            *_identity(obj, model, kind), found_crd + tuple(p for p in problems if p.path not in said)
        ) from None
    if found_crd:
        raise InvalidObjectError(*_identity(obj, model, kind), found_crd)
    return parsed
