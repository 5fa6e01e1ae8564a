"""Say "valid?" for the JSON Schemas :func:`omerender.crdschema.to_json_schema` builds, in pure Python,
as ``jsonschema.Draft202012Validator(schema).is_valid(obj)`` says it.

:func:`compile_schema` turns a schema into nested closures, each subschema once, when a value first
reaches it (a render's three objects reach about a fifth of their CRDs' nodes); each call then runs
only the checks that apply to the value's type. It knows exactly the keywords the translation emits — ``type`` (a name
or a list of names), ``properties``, ``additionalProperties``, ``items``, ``required``, ``enum``,
``minimum``/``maximum``, numeric ``exclusiveMinimum``/``exclusiveMaximum``, ``minLength``/``maxLength``,
``pattern``, ``minItems``/``maxItems``, ``uniqueItems``, ``minProperties``/``maxProperties``,
``multipleOf``, ``allOf``/``anyOf``/``oneOf``/``not`` — plus ``format`` and the draft 2020-12
``$schema``, which are annotations (jsonschema checks formats only when given a format checker). Any
other keyword, or a keyword whose value is not of the shape the meta-schema requires, makes it refuse
(at the root, :func:`compile_schema` returns None; deeper, the check raises :class:`Undecided` when a
value reaches that subschema): the caller then asks jsonschema, never a silent "valid".

The rules are jsonschema's (4.22 and later: ``jsonschema/_types.py``, ``_keywords.py``, ``_utils.py``),
restated:

- types: ``object`` is a ``dict``, ``array`` a ``list``, ``string`` a ``str``, ``null`` is ``None``;
  ``number`` is a :class:`numbers.Number` that is not a ``bool``; ``integer`` an ``int`` that is not a
  ``bool``, or a ``float`` with no fraction (``1.0``). A keyword for one type ignores other values.
- ``enum`` and ``uniqueItems`` compare with jsonschema's ``equal``: ``True`` equals neither ``1`` nor
  ``1.0``, ``1`` equals ``1.0``, a value equals itself (the one NaN object PyYAML makes for ``.nan``),
  sequences and mappings compare element by element; ``uniqueItems``
  follows ``uniq`` (sort and compare neighbours, or compare every pair when the items do not sort).
- ``pattern`` is :func:`re.search` (not anchored); lengths count code points (``len``).
- ``multipleOf`` divides as jsonschema does (a float divisor by float division, falling back to
  fractions on overflow; an integer divisor by ``%``).

Where jsonschema itself raises (``multipleOf`` of NaN or infinity, of an integer too large for a float
divided by a float) it has no answer to match: such a value is not a multiple here. A value no JSON or
YAML parser makes (a complex number, a ``Decimal`` NaN) may make the check raise; callers treat any
exception as "ask jsonschema".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from numbers import Number
from typing import Any

__all__ = ["Check", "Prepare", "Undecided", "compile_schema", "json_equal", "json_unique"]

Check = Callable[[Any], bool]
Prepare = Callable[[Any], Any]

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
_NUMERIC = (int, float)
_TYPE_NAMES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_OBJECT_KEYS = ("properties", "additionalProperties", "required", "minProperties", "maxProperties")
_ARRAY_KEYS = ("items", "minItems", "maxItems", "uniqueItems")
_STRING_KEYS = ("minLength", "maxLength", "pattern")
_NUMBER_KEYS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
_OTHER_KEYS = ("type", "enum", "allOf", "anyOf", "oneOf", "not", "format", "$schema")
_KNOWN = frozenset((*_OBJECT_KEYS, *_ARRAY_KEYS, *_STRING_KEYS, *_NUMBER_KEYS, *_OTHER_KEYS))


class Undecided(Exception):
    """A schema (or a subschema a value reached) holds a keyword, or a keyword value, this module does
    not decide exactly: ask jsonschema."""


def compile_schema(schema: Any, *, prepare: Prepare | None = None) -> Check | None:
    """A function saying whether a value is valid against ``schema`` (a draft 2020-12 JSON Schema),
    or None when the schema's root uses a keyword (or a keyword value) this module does not decide.

    Subschemas are compiled when a value first reaches them, so a check of a few fields of a large
    schema compiles those fields only; a subschema that cannot be decided makes the check raise
    :class:`Undecided` when a value reaches it (never a silent "valid": a value that never reaches
    it is not checked against it by jsonschema either). ``prepare``, when given, maps each subschema
    to the JSON Schema to compile, once, when it is first reached (``omerender.crdschema`` translates
    a CRD's OpenAPI nodes one at a time with it); the root is compiled as given.
    """
    try:
        return _node(schema, prepare)
    except (Undecided, RecursionError):
        return None


# -- jsonschema's equality (jsonschema/_utils.py: equal, unbool, uniq) ------------------------------

_TRUE = object()
_FALSE = object()


def _unbool(value: Any) -> Any:
    # True and False stand for themselves only: neither equals 1 or 0 (nor sorts beside them).
    if value is True:
        return _TRUE
    if value is False:
        return _FALSE
    return value


def json_equal(one: Any, two: Any) -> bool:
    """Equality as JSON Schema's ``enum``/``const``/``uniqueItems`` read it (jsonschema's ``equal``)."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=False))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and json_equal(value, two[key]) for key, value in one.items()
        )
    return bool(_unbool(one) == _unbool(two))


def json_unique(items: Sequence[Any]) -> bool:
    """Whether no two items are :func:`json_equal`, decided as jsonschema's ``uniq`` decides it:
    sorted neighbours when the items sort, every pair otherwise (the two can differ on NaN)."""
    try:
        ordered = sorted(_unbool(item) for item in items)
        for one, two in zip(ordered, itertools.islice(ordered, 1, None), strict=False):
            if json_equal(one, two):
                return False
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in items:
            item = _unbool(item)
            if any(json_equal(other, item) for other in seen):
                return False
            seen.append(item)
    return True


# -- types (jsonschema/_types.py, draft 2020-12's type checker) ----------------------------------


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_array(value: Any) -> bool:
    return isinstance(value, list)


def _is_string(value: Any) -> bool:
    return isinstance(value, str)


def _is_boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _is_null(value: Any) -> bool:
    return value is None


def _is_number(value: Any) -> bool:
    kind = type(value)
    if kind is int or kind is float:
        return True
    return kind is not bool and isinstance(value, Number)


def _is_integer(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return True
    if kind is bool:
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPES: dict[str, Check] = {
    "object": _is_object,
    "array": _is_array,
    "string": _is_string,
    "boolean": _is_boolean,
    "null": _is_null,
    "number": _is_number,
    "integer": _is_integer,
}


def _type_check(value: Any) -> Check:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n in _TYPE_NAMES for n in names):
        raise Undecided(f"type: {value!r}")
    checks = tuple(dict.fromkeys(_TYPES[name] for name in names))
    if not checks:
        return _never
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) or second(v)
    return lambda v: any(check(v) for check in checks)


# -- compiling ----------------------------------------------------------------------------------


def _number(schema: Mapping[str, Any], key: str) -> Any:
    value = schema.get(key)
    if value is not None and (type(value) is bool or not isinstance(value, _NUMERIC)):
        raise Undecided(f"{key}: {value!r}")
    return value


def _lazy(raw: Any, prepare: Prepare | None, into: Any, key: Any) -> Check:
    """A stand-in for the check of subschema ``raw``: on its first call it compiles the check, puts it
    in ``into[key]`` (where its parent looks it up) and runs it, so later calls pay nothing for it."""

    def first(value: Any) -> bool:
        check = _node(raw if prepare is None else prepare(raw), prepare)
        into[key] = check
        return check(value)

    return first


def _boxed(raw: Any, prepare: Prepare | None) -> list[Check]:
    box: list[Check] = []
    box.append(_lazy(raw, prepare, box, 0))
    return box


def _subschemas(schema: Mapping[str, Any], key: str, prepare: Prepare | None) -> list[Check]:
    value = schema[key]
    if not isinstance(value, list):
        raise Undecided(f"{key}: {value!r}")
    checks: list[Check] = []
    for index, sub in enumerate(value):
        checks.append(_lazy(sub, prepare, checks, index))
    return checks


def _node(schema: Any, prepare: Prepare | None) -> Check:
    if type(schema) is not dict:
        if schema is True:
            return _always
        if schema is False:
            return _never
        raise Undecided(f"a schema must be an object or a boolean, not {schema!r}")
    keys = schema.keys()
    if len(keys) == 1 and "type" in keys and type(schema["type"]) is str:
        # Most nodes of a CRD are a field's type and nothing else.
        only = _TYPES.get(schema["type"])
        if only is not None:
            return only
    unknown = keys - _KNOWN
    if unknown:
        raise Undecided(f"keywords {sorted(unknown)}")
    if schema.get("$schema", _DRAFT_2020_12) != _DRAFT_2020_12:
        raise Undecided(f"$schema: {schema['$schema']!r}")

    checks: list[Check] = []
    type_check = _type_check(schema["type"]) if "type" in keys else None
    # A keyword group for one type, fused with a type of that one alone: ``type: object`` plus its
    # properties is one test, not a type test and then a guard that repeats it.
    for group, guard, build in _GROUPS:
        if keys.isdisjoint(group):
            continue
        body = build(schema, prepare)
        if type_check is guard or (guard is _is_number and type_check is _is_integer):
            checks.append(_both(type_check, body))
            type_check = None
        else:
            checks.append(_when(guard, body))
    if type_check is not None:
        checks.insert(0, type_check)
    if "enum" in keys:
        checks.append(_enum_check(schema["enum"]))
    if "allOf" in keys:
        checks.append(_all_of(_subschemas(schema, "allOf", prepare)))
    if "anyOf" in keys:
        checks.append(_any_of(_subschemas(schema, "anyOf", prepare)))
    if "oneOf" in keys:
        checks.append(_one_of(_subschemas(schema, "oneOf", prepare)))
    if "not" in keys:
        negated = _boxed(schema["not"], prepare)
        checks.append(lambda v: not negated[0](v))
    return _all(checks)


def _all(checks: Sequence[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        return _both(*checks)
    return _all_of(list(checks))


def _both(first: Check, second: Check) -> Check:
    return lambda v: first(v) and second(v)


def _when(guard: Check, body: Check) -> Check:
    return lambda v: not guard(v) or body(v)


# ``subs`` is read on each call: its stand-ins replace themselves in it. Plain loops: all() or any()
# over a generator costs a frame per call on the hot path.


def _all_of(subs: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for sub in subs:  # noqa: SIM110
            if not sub(value):
                return False
        return True

    return check


def _any_of(subs: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for sub in subs:  # noqa: SIM110
            if sub(value):
                return True
        return False

    return check


def _one_of(subs: list[Check]) -> Check:
    def check(value: Any) -> bool:
        valid = 0
        for sub in subs:
            if sub(value):
                valid += 1
                if valid > 1:
                    return False
        return valid == 1

    return check


def _enum_check(enum: Any) -> Check:
    if not isinstance(enum, list):
        raise Undecided(f"enum: {enum!r}")
    values = tuple(enum)
    strings = frozenset(e for e in values if type(e) is str)
    others = tuple(e for e in values if type(e) is not str)

    def check(value: Any) -> bool:
        if type(value) is str:
            # An exact str equals only a str of the same text: a set lookup is jsonschema's loop.
            return value in strings or any(json_equal(e, value) for e in others)
        return any(json_equal(e, value) for e in values)

    return check


def _object_body(schema: Mapping[str, Any], prepare: Prepare | None) -> Check:
    raw_props = schema.get("properties", {})
    if type(raw_props) is not dict:
        raise Undecided(f"properties: {raw_props!r}")
    props: dict[Any, Check] = {}
    for name, sub in raw_props.items():
        props[name] = _lazy(sub, prepare, props, name)
    extra = _boxed(schema["additionalProperties"], prepare) if "additionalProperties" in schema else None
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        raise Undecided(f"required: {required!r}")
    names = tuple(required)
    low = _number(schema, "minProperties")
    high = _number(schema, "maxProperties")
    lookup = props.get
    walk = bool(props) or extra is not None

    def check(value: dict[Any, Any]) -> bool:
        if walk:
            for key, item in value.items():
                sub = lookup(key)
                if sub is None:
                    if extra is not None and not extra[0](item):
                        return False
                elif not sub(item):
                    return False
        for name in names:
            if name not in value:
                return False
        if low is not None and len(value) < low:
            return False
        return not (high is not None and len(value) > high)

    return check


def _array_body(schema: Mapping[str, Any], prepare: Prepare | None) -> Check:
    items = _boxed(schema["items"], prepare) if "items" in schema else None
    unique = schema.get("uniqueItems", False)
    if not isinstance(unique, bool):
        raise Undecided(f"uniqueItems: {unique!r}")
    low = _number(schema, "minItems")
    high = _number(schema, "maxItems")

    def check(value: list[Any]) -> bool:
        if low is not None and len(value) < low:
            return False
        if high is not None and len(value) > high:
            return False
        if items is not None:
            each = items[0]
            for item in value:
                if not each(item):
                    return False
                each = items[0]  # the first call may have replaced the stand-in
        return not unique or json_unique(value)

    return check


def _string_body(schema: Mapping[str, Any], prepare: Prepare | None) -> Check:
    low = _number(schema, "minLength")
    high = _number(schema, "maxLength")
    pattern = schema.get("pattern")
    if pattern is not None and not isinstance(pattern, str):
        raise Undecided(f"pattern: {pattern!r}")
    search: list[Callable[[str], Any]] = []

    def check(value: str) -> bool:
        if low is not None and len(value) < low:
            return False
        if high is not None and len(value) > high:
            return False
        if pattern is None:
            return True
        if not search:
            # Compiled when a string first meets it (the standard library's regex compiler is Python).
            try:
                search.append(re.compile(pattern).search)
            except re.error as exc:  # jsonschema raises here too
                raise Undecided(f"pattern: {pattern!r}: {exc}") from exc
        return search[0](value) is not None

    return check


def _number_body(schema: Mapping[str, Any], prepare: Prepare | None) -> Check:
    low = _number(schema, "minimum")
    high = _number(schema, "maximum")
    above = _number(schema, "exclusiveMinimum")
    below = _number(schema, "exclusiveMaximum")
    step = _number(schema, "multipleOf")

    def check(value: Any) -> bool:
        if low is not None and value < low:
            return False
        if high is not None and value > high:
            return False
        if above is not None and value <= above:
            return False
        if below is not None and value >= below:
            return False
        return step is None or _multiple(value, step)

    return check


def _multiple(value: Any, step: int | float) -> bool:
    # jsonschema's multipleOf: a float divisor by float division (exact fractions when the quotient
    # overflows), an integer one by the remainder. Where its arithmetic raises (NaN, infinity, an
    # integer too large for a float divided by a float) jsonschema has no answer, or reaches it only
    # when an earlier keyword has not already failed; here such a value is not a multiple.
    try:
        if isinstance(step, float):
            quotient = value / step
            try:
                return bool(int(quotient) == quotient)
            except OverflowError:
                from fractions import Fraction

                return (Fraction(value) / Fraction(step)).denominator == 1
        return not (value % step)
    except (ArithmeticError, ValueError):
        return False


_GROUPS: tuple[tuple[frozenset[str], Check, Callable[[Mapping[str, Any], Prepare | None], Check]], ...] = (
    (frozenset(_OBJECT_KEYS), _is_object, _object_body),
    (frozenset(_ARRAY_KEYS), _is_array, _array_body),
    (frozenset(_STRING_KEYS), _is_string, _string_body),
    (frozenset(_NUMBER_KEYS), _is_number, _number_body),
)
