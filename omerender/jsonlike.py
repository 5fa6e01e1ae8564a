"""Helpers for JSON-like data (dicts, lists, scalars) shared by every layer of omerender."""

from __future__ import annotations

from typing import Any

__all__ = ["clone"]


def clone(value: Any) -> Any:
    """A deep copy of JSON-like data; several times faster than ``copy.deepcopy`` for this shape."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clone(v) for v in value]
    return value
