"""The compiled check (:mod:`omerender.crdcheck`) answers exactly as ``jsonschema.Draft202012Validator(schema)
.is_valid(obj)`` does: on the package's CRDs (every kind, every served version) against their examples,
objects generated from the schemas, those objects perturbed, and arbitrary JSON; and on small generated
schemas over every keyword it knows. ``CRDCHECK_EXAMPLES`` raises the number of examples (CI: 300)."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omerender import crdschema
from omerender.crdcheck import Undecided, compile_schema, json_equal, json_unique
from omerender.crdschema import to_json_schema

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("CRDCHECK_EXAMPLES", "300"))
CHECKED = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
RAISED = "raised"


def verdict(check: Callable[[Any], bool], obj: Any) -> bool | str:
    try:
        return check(obj)
    except Undecided:
        return "undecided"
    except Exception:
        return RAISED


def oracle(schema: Any, obj: Any) -> bool | str:
    try:
        return bool(jsonschema.Draft202012Validator(schema).is_valid(obj))
    except Exception:
        return RAISED


def agree(check: Callable[[Any], bool], schema: Any, obj: Any, expected: bool | str | None = None) -> None:
    expected = oracle(schema, obj) if expected is None else expected
    got = verdict(check, obj)
    if expected == RAISED:
        # jsonschema has no verdict (a value past what its arithmetic takes): the compiled check must not
        # be "undecided" about a schema it compiled; raising too, or either verdict, is acceptable.
        assert got != "undecided"
        return
    assert got == expected, (expected, got, json.dumps(obj, default=repr)[:2000])


# -- the package's CRDs ---------------------------------------------------------------------------


@cache
def crd_schemas() -> tuple[tuple[str, str, dict[str, Any], dict[str, Any]], ...]:
    """(kind, version, openAPIV3Schema, translated schema) of every served version of every CRD."""
    bundle = json.loads((ROOT / "omerender" / "data" / "crds.json").read_text())
    out = []
    for crd in bundle.values():
        for version in crd["spec"]["versions"]:
            if version.get("served") is False:
                continue
            openapi = version["schema"]["openAPIV3Schema"]
            out.append((crd["spec"]["names"]["kind"], version["name"], openapi, to_json_schema(openapi)))
    return tuple(out)


@cache
def validator(index: int) -> Any:
    return jsonschema.Draft202012Validator(crd_schemas()[index][3])


@cache
def lazy_check(index: int) -> Callable[[Any], bool]:
    """The check validate_against_crd uses: nodes translated and compiled when first reached."""
    openapi = crd_schemas()[index][2]
    check = compile_schema(
        crdschema._translated(openapi, root=True, child=crdschema._OpenAPI), prepare=crdschema._prepared
    )
    assert check is not None
    return check


@cache
def eager_check(index: int) -> Callable[[Any], bool]:
    """The same over the whole translated schema, fresh (no node compiled before)."""
    check = compile_schema(crd_schemas()[index][3])
    assert check is not None
    return check


@cache
def examples_by_kind() -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    files = [
        *sorted((ROOT / "golden" / "cases").glob("*.yaml")),
        *sorted((ROOT / "examples").rglob("*.yaml")),
    ]
    for path in files:
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and isinstance(doc.get("kind"), str):
                out.setdefault(doc["kind"], []).append(doc)
    return out


def walk(schema: Any) -> Iterator[dict[str, Any]]:
    if not isinstance(schema, dict):
        return
    yield schema
    for key in ("items", "additionalProperties", "not"):
        yield from walk(schema.get(key))
    for sub in schema.get("properties", {}).values():
        yield from walk(sub)
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            yield from walk(sub)


@cache
def schema_words(index: int) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """Every property name and every interesting scalar (enum values, bounds and one past them) of a schema."""
    names: set[str] = set()
    scalars: list[Any] = []
    for node in walk(crd_schemas()[index][3]):
        names.update(node.get("properties", {}))
        scalars.extend(node.get("enum", []))
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if key in node:
                bound = node[key]
                scalars.extend([bound, bound - 1, bound + 1, float(bound)])
        for key in ("minLength", "maxLength"):
            if key in node:
                scalars.extend(["x" * max(node[key] - 1, 0), "x" * node[key], "x" * (node[key] + 1)])
    return tuple(sorted(names)), tuple(scalars)


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 1.0, 0.0, -0.0, 1.5, 2**31, 2**31 - 1, 2**63, True, False, "", "1", "0"]),
    st.text(max_size=8),
    st.text(alphabet="abc-.0Z/", max_size=70),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(alphabet="abcdekmnprstv", max_size=6), children, max_size=4),
    ),
    max_leaves=12,
)


def from_schema(schema: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that mostly fit ``schema`` (a translated CRD node), reaching deep into it."""
    if not isinstance(schema, dict) or depth > 12:
        return json_values
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "allOf" in schema:
        return from_schema(schema["allOf"][-1], depth + 1)
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds or ["any"]
    options = [_typed(schema, kind, depth) for kind in kinds]
    return st.one_of(options)


def _typed(schema: dict[str, Any], kind: str, depth: int) -> st.SearchStrategy[Any]:
    if kind == "object":
        props = schema.get("properties", {})
        required = [name for name in schema.get("required", []) if name in props]
        extra = schema.get("additionalProperties", True)
        if not props and isinstance(extra, dict):
            return st.dictionaries(
                st.text(alphabet="abc", max_size=4), from_schema(extra, depth + 1), max_size=3
            )
        return st.fixed_dictionaries(
            {name: from_schema(props[name], depth + 1) for name in required},
            optional={
                name: from_schema(sub, depth + 1) for name, sub in props.items() if name not in required
            },
        )
    if kind == "array":
        return st.lists(from_schema(schema.get("items", True), depth + 1), max_size=3)
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 20)
        return st.text(alphabet="abz019-.", min_size=low, max_size=min(high, low + 20))
    if kind == "integer":
        return st.integers(min_value=schema.get("minimum"), max_value=schema.get("maximum"))
    if kind == "number":
        return st.floats(
            min_value=schema.get("minimum"),
            max_value=schema.get("maximum"),
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    return json_values


@cache
def seeds(index: int) -> st.SearchStrategy[Any]:
    kind, version, _, schema = crd_schemas()[index]
    generated = from_schema(schema).map(
        lambda obj: {**obj, "apiVersion": f"x/{version}", "kind": kind} if isinstance(obj, dict) else obj
    )
    examples = examples_by_kind().get(kind, [])
    return st.one_of(st.sampled_from(examples), generated) if examples else generated


def containers(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict | list):
        out.append(value)
        for child in value.values() if isinstance(value, dict) else value:
            containers(child, out)
    return out


def perturb(data: st.DataObject, obj: Any, index: int) -> Any:
    """``obj`` with up to three changes: a field removed, added or retyped, a value replaced by an enum
    value, a bound or one past it, a string lengthened, an item duplicated."""
    obj = copy.deepcopy(obj)
    names, scalars = schema_words(index)
    for _ in range(data.draw(st.integers(0, 3))):
        places = containers(obj, [])
        if not places:
            break
        place = data.draw(st.sampled_from(places))
        keys = list(place) if isinstance(place, dict) else list(range(len(place)))
        op = data.draw(st.sampled_from(["remove", "add", "retype", "scalar", "lengthen", "duplicate"]))
        if op == "add" and isinstance(place, dict):
            place[data.draw(st.sampled_from(names) | st.text(max_size=5))] = data.draw(json_values)
            continue
        if op == "duplicate" and isinstance(place, list) and place:
            place.append(copy.deepcopy(data.draw(st.sampled_from(place))))
            continue
        if not keys:
            continue
        key = data.draw(st.sampled_from(keys))
        if op == "remove":
            del place[key]
        elif op == "retype":
            place[key] = data.draw(json_values)
        elif op == "scalar" and scalars:
            place[key] = data.draw(st.sampled_from(scalars))
        elif op == "lengthen" and isinstance(place[key], str):
            place[key] = place[key] + "x" * data.draw(st.sampled_from([1, 60, 250]))
    return obj


def test_every_served_version_compiles() -> None:
    assert {kind for kind, *_ in crd_schemas()} >= {"InferenceReplica", "ClusterServingRuntime", "PodGroup"}
    for index in range(len(crd_schemas())):
        assert lazy_check(index) is not None
        assert eager_check(index) is not None


def test_the_examples_are_valid_and_agree() -> None:
    seen = 0
    for index, (kind, version, _, _schema) in enumerate(crd_schemas()):
        for obj in examples_by_kind().get(kind, []):
            if obj.get("apiVersion", "").endswith("/" + version):
                assert lazy_check(index)(obj) is validator(index).is_valid(obj)
                seen += 1
    assert seen > 100


@CHECKED
@given(st.data())
def test_crds_agree_with_jsonschema_on_perturbed_objects(data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(crd_schemas()) - 1))
    obj = perturb(data, data.draw(seeds(index)), index)
    try:
        expected: bool | str = bool(validator(index).is_valid(obj))
    except Exception:
        expected = RAISED
    agree(lazy_check(index), crd_schemas()[index][3], obj, expected)
    agree(eager_check(index), crd_schemas()[index][3], obj, expected)


@CHECKED
@given(st.data(), json_values)
def test_crds_agree_with_jsonschema_on_arbitrary_json(data: st.DataObject, junk: Any) -> None:
    index = data.draw(st.integers(0, len(crd_schemas()) - 1))
    kind, version, _, schema = crd_schemas()[index]
    wrapped = data.draw(st.booleans())
    obj = (
        {"apiVersion": f"x/{version}", "kind": kind, "metadata": {"name": "a"}, "spec": junk}
        if wrapped
        else junk
    )
    agree(lazy_check(index), schema, obj)


# -- small generated schemas ----------------------------------------------------------------------

NAMES = ("a", "b", "c")
TYPES = ("integer", "number", "string", "array", "object", "boolean", "null")
# search, not match: "b$" finds "ab"; "^a$" finds "a\n".
PATTERNS = ("b$", "^a$", "[0-9]+", "^$", "é", "a|b", "^[a-z]([-a-z0-9]*[a-z0-9])?$", ".", "^a")
NAN = float("nan")  # one object: jsonschema's uniq finds it twice by identity in some orders only
small_numbers = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, 1.5, -0.5, 2.0, 1e300, 2**63, 2**64, -(2**63)])
)
small_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.sampled_from([0.0, 1.0, -1.0, 0.5, 2.5, 0.3, 2**63, 2**70, 1e308, NAN, float("inf")]),
        st.text(alphabet="ab0é👍\n", max_size=5),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.sampled_from(NAMES), children, max_size=3)
    ),
    max_leaves=8,
)
KEYWORDS: dict[str, st.SearchStrategy[Any]] = {
    # A name four times as often as a list of names (an empty list, which nothing fits, is in CASES).
    "type": st.one_of(
        *[st.sampled_from(TYPES)] * 4, st.lists(st.sampled_from(TYPES), min_size=1, max_size=3)
    ),
    "enum": st.lists(
        st.sampled_from([1, 0, 1.0, True, False, None, "a", [1], {"a": 0}]) | small_values, max_size=4
    ),
    "minimum": small_numbers,
    "maximum": small_numbers,
    "exclusiveMinimum": small_numbers,
    "exclusiveMaximum": small_numbers,
    "multipleOf": st.sampled_from([0.1, 2, 0.5, 1, 3, 1.5, 0.25]),
    "minLength": st.integers(0, 4),
    "maxLength": st.integers(0, 4),
    "pattern": st.sampled_from(PATTERNS),
    "minItems": st.integers(0, 3),
    "maxItems": st.integers(0, 3),
    "uniqueItems": st.booleans(),
    "minProperties": st.integers(0, 3),
    "maxProperties": st.integers(0, 3),
    "required": st.lists(st.sampled_from(NAMES), max_size=3, unique=True),
    "format": st.sampled_from(["date-time", "int32", "email", "byte"]),
}
# Few keywords per node, so that a value fails for one reason more often than for several; a type in
# about half of them.
leaf_keywords = st.tuples(
    st.sampled_from([{}, {"type": "x"}]),
    st.lists(st.sampled_from(sorted(set(KEYWORDS) - {"type"})), max_size=2, unique=True),
).flatmap(lambda pair: st.fixed_dictionaries({name: KEYWORDS[name] for name in (*pair[0], *pair[1])}))


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.booleans(),
        st.tuples(
            leaf_keywords,
            st.fixed_dictionaries(
                {},
                optional={
                    "properties": st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
                    "additionalProperties": children,
                    "items": children,
                    "allOf": st.lists(children, max_size=3),
                    "anyOf": st.lists(children, max_size=3),
                    "oneOf": st.lists(children, max_size=3),
                    "not": children,
                },
            ),
        ).map(lambda pair: {**pair[0], **pair[1]}),
    )


small_schemas = st.recursive(leaf_keywords, _extend, max_leaves=8)


SCALAR_EDGES: tuple[Any, ...] = (
    True,
    False,
    None,
    0,
    1,
    -1,
    1.0,
    0.5,
    2**63,
    "",
    "a",
    "b",
    "ab",
    "0",
    "é",
    NAN,
)
SHAPES: tuple[Any, ...] = (
    {},
    [],
    {"a": 1, "b": "b", "c": None},
    [1, 2, 3, 4],
    [1, True],
    [1, 1.0],
    [[1], [True]],
)


def edges(schema: Any, depth: int = 0) -> list[Any]:
    """Values at the edges of ``schema``: its enum members, its bounds and their neighbours, strings
    one code point either side of its lengths (with characters of several bytes), and the edges of
    each subschema placed where it applies (a property, an item, another property, a branch)."""
    out: list[Any] = [*SCALAR_EDGES, *SHAPES]
    if not isinstance(schema, dict):
        return out
    for member in schema.get("enum", []):
        # Each member, and what equals it in Python but not in JSON Schema (or the reverse).
        out.extend([member, [member], {"a": member}])
        if type(member) is int or (type(member) is float and math.isfinite(member)):
            out.extend([float(member), int(member), member == 1, member == 0])
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        if key in schema:
            bound = schema[key]
            out.extend([bound, bound - 1, bound + 1, bound - 0.5, bound + 0.5, float(bound), bound * 3])
    for key in ("minLength", "maxLength"):
        for size in (schema[key] - 1, schema[key], schema[key] + 1) if key in schema else ():
            out.extend(char * max(size, 0) for char in ("a", "é", "👍"))
    for key in ("minItems", "maxItems", "minProperties", "maxProperties"):
        for size in (schema[key] - 1, schema[key], schema[key] + 1) if key in schema else ():
            out.extend([list(range(max(size, 0))), dict.fromkeys(NAMES[: max(size, 0)], 1)])
    if depth >= 3:
        return out
    for name, sub in schema.get("properties", {}).items():
        for value in edges(sub, depth + 1):
            out.extend([{name: value}, {**dict.fromkeys(NAMES, 1), name: value}])
    if "additionalProperties" in schema:
        out.extend({"z": value} for value in edges(schema["additionalProperties"], depth + 1))
    if "items" in schema:
        for value in edges(schema["items"], depth + 1):
            out.extend([[value], [value, 1, value]])
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            out.extend(edges(sub, depth + 1))
    if "not" in schema:
        out.extend(edges(schema["not"], depth + 1))
    return out


@CHECKED
@given(small_schemas, st.booleans(), st.lists(small_values, max_size=4))
def test_generated_schemas_agree_with_jsonschema(schema: Any, dialect: bool, more: list[Any]) -> None:
    if dialect and isinstance(schema, dict):
        schema = {**schema, "$schema": "https://json-schema.org/draft/2020-12/schema"}
    check = compile_schema(schema)
    assert check is not None
    reference = jsonschema.Draft202012Validator(schema)
    for value in [*edges(schema)[:3000], *more]:
        try:
            expected: bool | str = bool(reference.is_valid(value))
        except Exception:
            expected = RAISED
        agree(check, schema, value, expected)


# -- the rules one by one -------------------------------------------------------------------------

CASES: list[tuple[Any, Any]] = [
    ({"type": "integer"}, True),
    ({"type": "integer"}, 1.0),
    ({"type": "integer"}, 1.5),
    ({"type": "integer"}, 2**80),
    ({"type": "number"}, False),
    ({"type": "number"}, float("nan")),
    ({"type": ["string", "null"]}, None),
    ({"type": []}, None),
    ({"type": "array"}, (1, 2)),
    ({"type": "object"}, [("a", 1)]),
    ({"type": "string"}, b"bytes"),
    ({"enum": [1]}, True),
    ({"enum": [1]}, 1.0),
    ({"enum": [True]}, 1),
    ({"enum": [[1, {"a": 0}]]}, [1.0, {"a": False}]),
    ({"enum": [[1, {"a": 0}]]}, [1.0, {"a": 0.0}]),
    ({"enum": ["a", None]}, None),
    ({"enum": []}, "a"),
    ({"uniqueItems": True}, [1, True]),
    ({"uniqueItems": True}, [1, 1.0]),
    ({"uniqueItems": True}, [0, False, []]),
    ({"uniqueItems": True}, [[1], [True]]),
    ({"uniqueItems": True}, [{"a": 1}, {"a": 1.0}]),
    ({"uniqueItems": True}, [float("nan"), float("nan")]),
    ({"uniqueItems": True}, [NAN, NAN]),
    ({"uniqueItems": True}, [NAN, 1, NAN]),
    ({"maxLength": 1}, "é"),
    ({"maxLength": 1}, "👍"),
    ({"minLength": 2}, "👍"),
    ({"pattern": "b"}, "abc"),
    ({"pattern": "^b"}, "abc"),
    ({"pattern": "^a$"}, "a\n"),
    ({"minimum": 1, "exclusiveMaximum": 2}, 2),
    ({"exclusiveMinimum": 1}, 1.0),
    ({"maximum": 2**63 - 1}, 2**63),
    ({"maximum": 2**63 - 1}, float(2**63)),
    ({"multipleOf": 0.1}, 0.3),
    ({"multipleOf": 0.5}, 2**70),
    ({"multipleOf": 2}, 4.0),
    ({"multipleOf": 0.1}, 0.5),
    ({"multipleOf": 0.1}, 0.3),
    ({"multipleOf": 0.5}, 1e308),
    ({"maxItems": 1}, [1, 2]),
    ({"minItems": 2}, [1]),
    ({"minProperties": 2}, {"a": 1}),
    ({"maxProperties": 0}, {"a": 1}),
    ({"multipleOf": 2}, True),
    ({"minimum": 0}, "text"),
    ({"required": ["a"]}, []),
    ({"additionalProperties": False}, {}),
    ({"additionalProperties": False, "properties": {"a": True}}, {"a": 1, "b": 2}),
    ({"additionalProperties": {"type": "string"}, "properties": {"a": True}}, {"a": 1, "b": "x"}),
    ({"properties": {"1": {"type": "string"}}}, {1: 5}),
    ({"items": {"type": "integer"}}, [1, 2.0, True]),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1),
    ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1),
    ({"oneOf": []}, 1),
    ({"anyOf": []}, 1),
    ({"allOf": []}, 1),
    ({"not": {"type": "null"}}, None),
    (False, 1),
    (True, {"x": 1}),
    ({"format": "date-time"}, "not a date"),
]


@pytest.mark.parametrize(("schema", "value"), CASES)
def test_each_rule_as_jsonschema_reads_it(schema: Any, value: Any) -> None:
    check = compile_schema(schema)
    assert check is not None
    expected = oracle(schema, value)
    assert expected != RAISED
    assert check(value) is expected


def test_jsonschema_equality_and_uniqueness() -> None:
    assert json_equal(1, 1.0)
    assert not json_equal(1, True)
    assert not json_equal(0, False)
    assert json_equal({"a": [1]}, {"a": [1.0]})
    assert not json_equal({"a": [1]}, {"a": [True]})
    assert not json_equal("1", 1)
    assert json_unique([1, True])
    assert not json_unique([1, 1.0])
    assert json_unique([[1], [True]])


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "description": "an unknown keyword"},
        {"$ref": "#/$defs/x"},
        {"type": "strng"},
        {"properties": []},
        {"minLength": "2"},
        {"enum": "a"},
        {"$schema": "http://json-schema.org/draft-07/schema#"},
        "a string",
    ],
)
def test_a_schema_it_cannot_decide_is_refused(schema: Any) -> None:
    assert compile_schema(schema) is None


def test_an_undecidable_subschema_raises_when_a_value_reaches_it() -> None:
    check = compile_schema({"type": "object", "properties": {"a": {"type": "string", "title": "x"}}})
    assert check is not None
    assert check({"b": 1}) is True  # jsonschema reads no keyword of "a" here either
    with pytest.raises(Undecided):
        check({"a": "x"})
    bad_pattern = compile_schema({"pattern": "(?<name>x)"})  # ECMA syntax Python's re lacks
    assert bad_pattern is not None
    assert bad_pattern(5) is True
    with pytest.raises(Undecided):
        bad_pattern("x")


def test_a_render_imports_neither_jsonschema_nor_jsonschema_rs() -> None:
    code = (
        "import sys, yaml\n"
        "from omerender.cli.crds import crd_for\n"
        "from omerender.crdschema import validate_against_crd\n"
        "for path in sys.argv[1:]:\n"
        "    for doc in yaml.safe_load_all(open(path)):\n"
        "        assert validate_against_crd(doc, crd_for(doc['kind'])) == (), doc\n"
        "print(sorted(m for m in sys.modules if m.startswith('jsonschema')))\n"
    )
    files = [
        str(ROOT / "examples" / "llama-pool.yaml"),
        *map(str, sorted((ROOT / "examples" / "catalog").glob("*.yaml"))),
    ]
    out = subprocess.run(
        [sys.executable, "-c", code, *files], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "[]"


def test_each_subschema_is_prepared_once_and_only_when_a_value_reaches_it() -> None:
    prepared: list[Any] = []

    def prepare(schema: Any) -> Any:
        prepared.append(schema)
        return schema

    item = {"type": "integer"}
    unused = {"type": "string"}
    check = compile_schema(
        {"type": "object", "properties": {"a": {"type": "array", "items": item}, "b": unused}},
        prepare=prepare,
    )
    assert check is not None
    assert prepared == []
    assert check({"a": [1, 2, 3]}) is True
    assert check({"a": [4, 5]}) is True
    assert check({"a": [6, "x"]}) is False
    assert prepared == [{"type": "array", "items": item}, item]
