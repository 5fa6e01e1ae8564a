"""Shared model plumbing: the camelCase base class, object metadata, and error translation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from omerender.errors import FieldProblem, InvalidObjectError

__all__ = ["KubeModel", "ObjectMeta", "OwnerReference", "parse_object"]


class KubeModel(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields kept; instances immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="allow",
        frozen=True,
    )


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


def parse_object(model: type[M], obj: Mapping[str, Any], *, kind: str | None = None) -> M:
    """Validate ``obj`` as ``model``; on failure raise InvalidObjectError naming object and fields."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        meta = obj.get("metadata") if isinstance(obj, Mapping) else None
        raw_name = meta.get("name") if isinstance(meta, Mapping) else None
        name = raw_name if isinstance(raw_name, str) else ""  # a non-string name is a field problem below
        namespace = meta.get("namespace") if isinstance(meta, Mapping) else None
        problems = tuple(
            FieldProblem(_path(tuple(err["loc"])), err["msg"]) for err in exc.errors(include_url=False)
        )
        raise InvalidObjectError(
            kind or str(obj.get("kind", model.__name__)) if isinstance(obj, Mapping) else model.__name__,
            name,
            namespace if isinstance(namespace, str) else None,
            problems,
        ) from None
