"""Argument checks at the library's entry points: a wrong type is an InvalidArgumentError naming the
argument, not an AttributeError from deep inside the render."""

from __future__ import annotations

from typing import Any

from omerender.catalog import Catalog
from omerender.errors import InvalidArgumentError
from omerender.models import InferenceReplica

__all__ = ["check_count", "check_replica_and_catalog"]


def check_replica_and_catalog(function: str, replica: Any, catalog: Any) -> None:
    if not isinstance(replica, InferenceReplica):
        raise InvalidArgumentError(
            function, "replica", "an InferenceReplica (parse_object(InferenceReplica, obj))", replica
        )
    if not isinstance(catalog, Catalog):
        raise InvalidArgumentError(function, "catalog", "a Catalog (Catalog.from_objects(objects))", catalog)


def check_count(function: str, argument: str, value: Any) -> None:
    """A whole number of 0 or more (``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidArgumentError(function, argument, "a whole number of 0 or more", value)
