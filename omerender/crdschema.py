"""Validate objects offline against a CRD's ``openAPIV3Schema``, translated to JSON Schema.

A CRD schema is OpenAPI v3.0 with Kubernetes extensions, not plain JSON Schema; validating it with
``jsonschema`` as-is accepts what the API server rejects (unknown fields) and rejects what it accepts
(``x-kubernetes-int-or-string``, ``nullable``). :func:`to_json_schema` translates one schema node tree
to draft 2020-12:

- ``x-kubernetes-int-or-string: true``  → ``type: [integer, string]``
- ``nullable: true``                    → ``null`` joins the type (and the enum)
- an object                            → ``additionalProperties: false`` (strict field validation: only
  declared fields), except a map (``additionalProperties`` given) and a node that sets
  ``x-kubernetes-preserve-unknown-fields: true`` or ``x-kubernetes-embedded-resource: true``. As in the
  API server's pruning, the exemption covers that node only: a child object is closed again. The root's
  ``metadata`` is ObjectMeta, checked for its basic shape and never closed.
- ``format: int32`` / ``int64``         → the integer bounds the API server enforces
- OpenAPI's boolean ``exclusiveMinimum``/``exclusiveMaximum`` → draft 2020-12's numeric form
- ``x-kubernetes-list-type: set``       → ``uniqueItems: true``

Enums, minimums/maximums, lengths, patterns, item counts and ``required`` carry over. Not translated:
CEL rules (``x-kubernetes-validations``) and the uniqueness of ``map`` list keys; the API server checks
them, this module does not. Defaults are not applied.

Whether an object fits is decided by :mod:`omerender.crdcheck` (pure Python, compiled from the
translation, each node translated and compiled when a value first reaches it); only an object it
refuses is walked by jsonschema, for the problems' words, and only then is the whole schema
translated and jsonschema imported.

The CRD dicts are inputs: this module never reads files. Validators are built once per CRD dict and
version and memoized; treat a CRD dict passed here as immutable.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import suppress
from typing import Any

from omerender._records import record
from omerender.crdcheck import compile_schema
from omerender.errors import FieldProblem
from omerender.jsonlike import clone
from omerender.wording import must_be_one_of, must_be_type

__all__ = ["crd_json_schema", "to_json_schema", "validate_against_crd"]

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

# Translates a subschema: wholly (_translate) or when first reached (_OpenAPI).
_Child = Callable[[Mapping[str, Any]], Any]

# Keywords copied verbatim (their meaning is the same in OpenAPI 3.0 and draft 2020-12).
_VERBATIM = (
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "required",
)

# The root ObjectMeta fields whose shape the API server checks before any CRD schema applies.
_ROOT_METADATA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "ownerReferences": {"type": "array", "items": {"type": "object"}},
    },
}


def to_json_schema(node: Mapping[str, Any], *, root: bool = True) -> dict[str, Any]:
    """Translate one ``openAPIV3Schema`` (or any node of it) to a draft 2020-12 JSON Schema.

    ``root`` marks the resource root, whose ``metadata`` gets the ObjectMeta shape the API server
    enforces (names and namespace are strings, labels and annotations map strings to strings).
    """
    return _translated(node, root=root, child=_translate)


def _translated(node: Mapping[str, Any], *, root: bool, child: _Child) -> dict[str, Any]:
    out = _translate(node, child)
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    if root:
        props = out.get("properties")
        if isinstance(props, dict) and "metadata" in props:
            meta = dict(_prepared(props["metadata"]))
            # ObjectMeta has fields the CRD never lists: never close it.
            meta.pop("type", None)
            meta.pop("additionalProperties", None)
            props["metadata"] = {"allOf": [_ROOT_METADATA, meta]} if meta else _ROOT_METADATA
    return out


class _OpenAPI:
    """An OpenAPI node not translated yet: the compiled check translates it (:func:`_prepared`) when
    a value first reaches it, so a render translates the fields its objects hold, not the whole CRD."""

    __slots__ = ("node",)

    def __init__(self, node: Mapping[str, Any]) -> None:
        self.node = node


def _prepared(schema: Any) -> Any:
    return _translate(schema.node, _OpenAPI) if isinstance(schema, _OpenAPI) else schema


def _translate(node: Mapping[str, Any], child: _Child | None = None) -> dict[str, Any]:
    """One node translated; its subschemas by ``child`` (the whole tree by default)."""
    sub = _translate if child is None else child
    out: dict[str, Any] = {}
    for key in _VERBATIM:
        if key in node:
            out[key] = node[key]

    types: list[str] = []
    if node.get("x-kubernetes-int-or-string") is True:
        types = ["integer", "string"]
    elif isinstance(node.get("type"), str):
        types = [node["type"]]

    fmt = node.get("format")
    if "integer" in types and fmt in ("int32", "int64"):
        low, high = _INT32 if fmt == "int32" else _INT64
        out["minimum"] = max(low, out.get("minimum", low))
        out["maximum"] = min(high, out.get("maximum", high))
    elif isinstance(fmt, str):
        out["format"] = fmt  # an annotation unless the caller asks jsonschema to check formats

    # OpenAPI 3.0's boolean exclusive bounds become draft 2020-12's numeric ones.
    for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = node.get(flag)
        if value is True and bound in node:
            out[flag] = node[bound]
            if out.get(bound) == node[bound]:
                del out[bound]
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[flag] = value

    if node.get("nullable") is True:
        if types:
            types.append("null")
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    if types:
        out["type"] = types[0] if len(types) == 1 else types

    props = node.get("properties")
    if isinstance(props, Mapping):
        out["properties"] = {name: sub(each) for name, each in props.items() if isinstance(each, Mapping)}

    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = sub(extra)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif (
        (isinstance(props, Mapping) or node.get("type") == "object")
        and node.get("x-kubernetes-preserve-unknown-fields") is not True
        and node.get("x-kubernetes-embedded-resource") is not True
    ):
        # The API server prunes (strict validation rejects) every field an object does not declare,
        # so an object with no properties at all admits none.
        out["additionalProperties"] = False

    items = node.get("items")
    if isinstance(items, Mapping):
        out["items"] = sub(items)
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True

    for combinator in ("allOf", "anyOf", "oneOf"):
        subs = node.get(combinator)
        if isinstance(subs, Sequence) and not isinstance(subs, str):
            # int-or-string nodes carry an anyOf that only restates the type; the type list covers it.
            if combinator == "anyOf" and node.get("x-kubernetes-int-or-string") is True:
                continue
            out[combinator] = [sub(each) for each in subs if isinstance(each, Mapping)]
    negated = node.get("not")
    if isinstance(negated, Mapping):
        out["not"] = sub(negated)
    return out


# -- validators, built once -------------------------------------------------------------------


@record
class _Compiled:
    crd: Mapping[str, Any]  # held so its id() cannot be reused while the entry lives
    group: str
    kind: str
    validators: _Validators  # served version name -> jsonschema validator
    # served version name -> the same schema compiled by :mod:`omerender.crdcheck`, when it compiles:
    # it says "valid" in microseconds where jsonschema takes a millisecond, and only an object it
    # refuses is walked again by jsonschema for the problems' words.
    fast: Mapping[str, Callable[[Any], bool]]


def _fast_check(openapi: Mapping[str, Any]) -> Callable[[Any], bool] | None:
    """The compiled check of ``openapi``'s translation, each node translated when first reached."""
    check = compile_schema(_translated(openapi, root=True, child=_OpenAPI), prepare=_prepared)
    if check is None:  # a keyword it does not decide: jsonschema alone decides then
        return None
    compiled = check

    def is_valid(obj: Any) -> bool:
        try:
            return compiled(obj)
        except Exception:  # Undecided, or where jsonschema raises too (omerender.crdcheck): ask it
            return False

    return is_valid


class _Validators(Mapping[str, Any]):
    """Served version -> jsonschema validator, each built when first asked for: where the compiled
    check says "valid", jsonschema is never imported (a tenth of a second of a command's start-up),
    nor is the whole schema translated."""

    def __init__(self, openapi: Mapping[str, Mapping[str, Any]]) -> None:
        self._openapi = openapi
        self._schemas: dict[str, dict[str, Any]] = {}
        self._built: dict[str, Any] = {}

    def __getitem__(self, version: str) -> Any:
        validator = self._built.get(version)
        if validator is None:
            schema = self.schema(version)
            if schema is None:
                raise KeyError(version)
            import jsonschema

            validator = jsonschema.Draft202012Validator(schema)
            self._built[version] = validator
        return validator

    def schema(self, version: str) -> dict[str, Any] | None:
        """The translated schema of ``version`` (translated when first asked for), None when not served."""
        schema = self._schemas.get(version)
        if schema is None and version in self._openapi:
            schema = self._schemas[version] = to_json_schema(self._openapi[version])
        return schema

    def __contains__(self, version: object) -> bool:
        return version in self._openapi

    def __iter__(self) -> Iterator[str]:
        return iter(self._openapi)

    def __len__(self) -> int:
        return len(self._openapi)


_CACHE: OrderedDict[int, _Compiled] = OrderedDict()
_CACHE_SIZE = 64


def _compiled(crd: Mapping[str, Any]) -> _Compiled:
    hit = _CACHE.get(id(crd))
    if hit is not None and hit.crd is crd:
        _CACHE.move_to_end(id(crd))
        return hit
    spec = _mapping(crd.get("spec"))
    names = _mapping(spec.get("names"))
    schemas: dict[str, Mapping[str, Any]] = {}
    fast: dict[str, Callable[[Any], bool]] = {}
    for version in spec.get("versions") or ():
        if not isinstance(version, Mapping) or version.get("served") is False:
            continue
        schema = version.get("schema")
        openapi = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        name = str(version.get("name", ""))
        schemas[name] = openapi if isinstance(openapi, Mapping) else {}
        check = _fast_check(schemas[name])
        if check is not None:
            fast[name] = check
    validators = _Validators(schemas)
    compiled = _Compiled(crd, str(spec.get("group", "")), str(names.get("kind", "")), validators, fast)
    _CACHE[id(crd)] = compiled
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return compiled


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def crd_json_schema(crd: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    """The translated JSON Schema of ``version`` of ``crd``, or None when it is not served."""
    schema = _compiled(crd).validators.schema(version)
    return copy.deepcopy(dict(schema)) if schema is not None else None


def validate_against_crd(obj: Any, crd: Mapping[str, Any]) -> tuple[FieldProblem, ...]:
    """Every way ``obj`` fails ``crd``: each problem names its dotted field path (``spec.component``).

    The version comes from ``obj.apiVersion``, which must name the CRD's group and a served version;
    ``kind`` must be the CRD's kind. An empty tuple means the object fits.
    """
    if not isinstance(obj, Mapping):
        return (FieldProblem("<object>", "must be a mapping (a YAML/JSON object)"),)
    compiled = _compiled(crd)
    problems: list[FieldProblem] = []
    api_version = obj.get("apiVersion")
    group, _, version = str(api_version).rpartition("/") if isinstance(api_version, str) else ("", "", "")
    if not isinstance(api_version, str):
        problems.append(FieldProblem("apiVersion", "is required"))
    elif group != compiled.group or version not in compiled.validators:
        served = ", ".join(f"{compiled.group}/{v}" for v in compiled.validators) or "none"
        problems.append(
            FieldProblem("apiVersion", f"{api_version!r} is not served by this CRD (served: {served})")
        )
    if obj.get("kind") != compiled.kind:
        problems.append(FieldProblem("kind", f"must be {compiled.kind!r}, got {obj.get('kind')!r}"))
    check = compiled.fast.get(version)
    if not problems and check is not None and check(obj):
        return ()
    # JSON-like data (omerender.jsonlike) holds tuples and other mappings where JSON Schema knows only
    # lists and dicts (a frozen model's dump has tuples): refused as given, the object is read again
    # as JSON would carry it, and jsonschema names the problems of that reading.
    with suppress(RecursionError):  # a value that contains itself: read as given, along the schema
        obj = clone(obj)
    if not problems and check is not None and check(obj):
        return ()
    validator = compiled.validators.get(version)
    if validator is None:
        # Without a version there is no schema; check against the only one if there is just one.
        if len(compiled.validators) != 1:
            return tuple(problems)
        validator = next(iter(compiled.validators.values()))
    found: set[FieldProblem] = set()
    for error in validator.iter_errors(obj):
        for problem in _problems(error):
            if problem not in found:
                found.add(problem)
                problems.append(problem)
    # A value of the wrong type is not also said to be outside the field's allowed values.
    typed = {p.path for p in problems if p.message.startswith("must be of type ")}
    problems = [p for p in problems if p.path not in typed or not p.message.startswith("must be one of ")]
    head = [p for p in problems if p.path in ("apiVersion", "kind")]
    rest = sorted(
        (p for p in problems if p.path not in ("apiVersion", "kind")), key=lambda p: (p.path, p.message)
    )
    return (*head, *rest)


def _dotted(parts: Sequence[Any]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _problems(error: Any) -> list[FieldProblem]:
    """Turn one jsonschema error into problems that name the field itself, not just its parent."""
    parts = list(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, Mapping):
        missing = [name for name in error.validator_value if name not in instance]
        return [FieldProblem(_dotted([*parts, name]), "is required") for name in missing]
    if error.validator == "additionalProperties" and isinstance(instance, Mapping):
        known = error.schema.get("properties", {})
        unknown = sorted(str(name) for name in instance if name not in known)
        if unknown and error.validator_value is False:
            return [FieldProblem(_dotted([*parts, name]), "is not a known field") for name in unknown]
    if error.validator in ("anyOf", "oneOf") and error.context:
        # Report the branch that got furthest, which names the deepest field.
        deepest = max(error.context, key=lambda sub: len(list(sub.absolute_path)))
        if len(list(deepest.absolute_path)) > len(parts):
            return _problems(deepest)
    where = _dotted(parts) or "<object>"
    if error.validator == "type":
        return [FieldProblem(where, must_be_type(error.validator_value, instance))]
    if error.validator == "enum":
        return [FieldProblem(where, must_be_one_of(error.validator_value, instance))]
    return [FieldProblem(where, _short(error.message))]


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 1] + "…"
