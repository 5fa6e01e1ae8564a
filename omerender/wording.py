"""Schema problems in our words, not jsonschema's or pydantic's.

jsonschema says ``2147483647 is not of type 'object'`` and pydantic ``Input should be a valid
string``: Python's words (``True``, ``None``, ``'dictionary or instance of ObjectMeta'``) for a YAML
author. These say what the field must be, in the words of the API server's own message
(``must be of type object``), and what it got, as YAML names it (``got integer 2147483647``), the
value shown by ``repr`` (control and bidi characters escaped) and cut to 70 characters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["got", "must_be_one_of", "must_be_type", "pydantic_message"]

# JSON Schema's type names are the API server's words; pydantic's are mapped onto them.
_PYDANTIC_TYPES = {
    "string": "string",
    "str": "string",
    "dictionary": "object",
    "dict": "object",
    "tuple": "array",
    "list": "array",
    "set": "array",
    "frozenset": "array",
    "integer": "integer",
    "int": "integer",
    "number": "number",
    "float": "number",
    "boolean": "boolean",
    "bool": "boolean",
}


def got(value: Any) -> str:
    """``integer 5``, ``string 'x'``, ``null``, ``array of 2 items``, ``object with 1 field``: what a
    YAML author wrote, named as YAML and JSON name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        text = str(value) if abs(value) < 10**70 else f"of {len(str(abs(value)))} digits"
        return f"integer {text}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {value[:70]!r}{'…' if len(value) > 70 else ''}"
    if isinstance(value, Mapping):
        return f"object with {len(value)} field{'' if len(value) == 1 else 's'}"
    if isinstance(value, list | tuple):
        return f"array of {len(value)} item{'' if len(value) == 1 else 's'}"
    return type(value).__name__


def must_be_type(expected: str | list[str] | tuple[str, ...], value: Any) -> str:
    """jsonschema's ``type`` error: ``must be of type object, got integer 5``."""
    names = [expected] if isinstance(expected, str) else list(expected)
    return f"must be of type {' or '.join(names)}, got {got(value)}"


def must_be_one_of(allowed: Any, value: Any) -> str:
    """jsonschema's ``enum`` error: ``must be one of "engine", "decoder", "router", got string 'x'``."""
    shown = ", ".join(f'"{a}"' if isinstance(a, str) else repr(a) for a in list(allowed)[:20])
    return f"must be one of {shown}, got {got(value)}"


_TYPE_WORD = re.compile(r"Input should be a valid (\w+)")
_LITERAL = re.compile(r"Input should be (.+)$")


def pydantic_message(err: Mapping[str, Any]) -> str:
    """One pydantic error (``exc.errors()`` item) in our words; its own text where we have none."""
    kind, message, value = str(err.get("type", "")), str(err.get("msg", "")), err.get("input")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        return "is not a known field"
    if kind in ("literal_error", "enum"):
        expected = (err.get("ctx") or {}).get("expected")
        if isinstance(expected, str):
            shown = expected.replace("'", '"').replace(" or ", ", ")
            return f"must be one of {shown}, got {got(value)}"
    if kind in ("model_type", "model_attributes_type", "dataclass_type"):
        return f"must be of type object, got {got(value)}"
    words = _TYPE_WORD.match(message)
    if words is not None and words.group(1) in _PYDANTIC_TYPES:
        return f"must be of type {_PYDANTIC_TYPES[words.group(1)]}, got {got(value)}"
    literal = _LITERAL.match(message)
    if literal is not None:
        return f"must be {literal.group(1)}, got {got(value)}"
    return message
