"""Helpers for JSON-like data (dicts, lists, scalars) shared by every layer of omerender."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date
from typing import Any, Final

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_NODES", "JsonLimitError", "clone", "json_problem", "loads_bounded"]

# Kubernetes objects nest a few dozen levels at most (a CRD's schema of a PodSpec is the deepest
# thing users write); the recursive code downstream (merges, encoders, YAML dumps) stays far from
# Python's recursion limit at this depth. A cyclic value hits the limit too, which is how it is caught.
MAX_DEPTH: Final = 100
# Far above any real object; bounds the cost of a value that shares sub-values many times over (what a
# YAML alias bomb becomes once loaded), since every copy and merge walks each shared value again.
MAX_NODES: Final = 500_000

# The longest integer a JSON value read from a user may hold: Kubernetes integers have at most 19 digits,
# and a longer one only costs (Python's int() is quadratic in the digits and refuses past 4,300).
MAX_DIGITS: Final = 400

# date covers datetime: a YAML loader turns unquoted timestamps into them, and the Go encoder reads them.
_SCALARS: Final = (str, int, float, bool, date, type(None))


def clone(value: Any) -> Any:
    """A deep copy of JSON-like data (any mapping a dict, a tuple a list, as in JSON); several times
    faster than ``copy.deepcopy`` for this shape."""
    # Exact types first: isinstance against a union costs more than the copy of a scalar itself.
    cls = type(value)
    if cls is dict:
        return {k: clone(v) for k, v in value.items()}
    if cls is list:
        return [clone(v) for v in value]
    if cls is str or cls is int or cls is bool or cls is float or value is None:
        return value
    if isinstance(value, Mapping):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clone(v) for v in value]
    return value


def _where(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "<object>"


def _plainly_json(value: Any) -> bool:
    """Whether ``value`` is JSON-like, within the limits, made only of plain dicts, lists and scalars:
    :func:`json_problem`'s walk without the paths it names a problem by, for the usual case."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    nodes = 0
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            return False
        kind = type(item)
        if kind is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return False
                push((child, depth + 1))
        elif kind is list:
            for child in item:
                push((child, depth + 1))
        elif kind not in _PLAIN_SCALARS:
            return False
    return True


_PLAIN_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def json_problem(value: Any) -> tuple[str, str] | None:
    """``(path, what is wrong)`` for the first part of ``value`` that is not JSON-like, else None.

    JSON-like: mappings with string keys, lists and tuples, and scalars (strings, numbers, booleans,
    null, dates); at most :data:`MAX_DEPTH` levels deep (so not cyclic) and :data:`MAX_NODES` values
    counting shared ones each time they are reached. Iterative, so it is safe on any input.
    """
    if _plainly_json(value):
        return None  # what a YAML or JSON file gives; anything else takes the walk that names the part
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    nodes = 0
    while stack:
        item, path = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return (
                "<object>",
                f"holds more than {MAX_NODES} values (shared values counted each time); split it",
            )
        if len(path) > MAX_DEPTH:
            return (
                _where(path[:8]) + "…",
                f"nested deeper than {MAX_DEPTH} levels, or contains itself; flatten it",
            )
        if isinstance(item, Mapping):
            for key, child in item.items():
                if not isinstance(key, str):
                    return (
                        _where(path),
                        f"key {key!r} is not a string; Kubernetes objects have string keys (quote it)",
                    )
                stack.append((child, (*path, key)))
        elif isinstance(item, list | tuple):
            stack.extend((child, (*path, i)) for i, child in enumerate(item))
        elif not isinstance(item, _SCALARS):
            return _where(
                path
            ), f"a {type(item).__name__} is not JSON data; use a string, number, list or map"
    return None


class JsonLimitError(ValueError):
    """A JSON text breaks :data:`MAX_DEPTH` or :data:`MAX_DIGITS`; the message names the limit."""


_STRING_OR_BRACKET: Final = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def _depth(text: str) -> int:
    """The deepest bracket nesting of a JSON text, strings skipped; one flat pass, any depth."""
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        char = match.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise JsonLimitError(
            f"an integer of {digits} digits is out of range (Kubernetes integers have at most 19)"
        )
    return int(text)


def loads_bounded(text: str | bytes, **options: Any) -> Any:
    """``json.loads`` for text a user wrote (a ConfigMap value): nesting past :data:`MAX_DEPTH` and
    integers past :data:`MAX_DIGITS` digits raise :class:`JsonLimitError` naming the limit, before
    Python's recursion limit or its integer-length limit is reached with their own words. Go's
    ``encoding/json`` bounds nesting too (at 10,000: ``exceeded max depth``); no configuration nests
    past a handful of levels. Other errors are ``json.loads``'s ValueError."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if _depth(text) > MAX_DEPTH:
        raise JsonLimitError(f"nested deeper than {MAX_DEPTH} levels (the limit); flatten the value")
    options.setdefault("parse_int", _bounded_int)
    return json.loads(text, **options)
