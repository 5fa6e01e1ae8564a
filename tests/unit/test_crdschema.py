"""CRD OpenAPI → JSON Schema: the Kubernetes extensions translate as the API server reads them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omerender import crdschema
from omerender.crdschema import crd_json_schema, to_json_schema, validate_against_crd
from omerender.errors import FieldProblem

Obj = dict[str, Any]


def make_crd(spec_schema: Obj, *, versions: tuple[str, ...] = ("v1",), served: bool = True) -> Obj:
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec_schema,
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [
                {"name": v, "served": served, "storage": i == 0, "schema": {"openAPIV3Schema": schema}}
                for i, v in enumerate(versions)
            ],
        },
    }


def widget(spec: Any, **top: Any) -> Obj:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec, **top}


def paths(problems: tuple[FieldProblem, ...]) -> list[str]:
    return [p.path for p in problems]


def check(spec_schema: Obj, spec: Any) -> list[str]:
    return paths(validate_against_crd(widget(spec), make_crd(spec_schema)))


def obj_schema(**props: Obj) -> Obj:
    return {"type": "object", "properties": props}


INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}


class TestTranslation:
    @pytest.mark.parametrize("value", [1, 0, "25%", "1"])
    def test_int_or_string_accepts_both(self, value: Any) -> None:
        assert check(obj_schema(surge=INT_OR_STRING), {"surge": value}) == []

    @pytest.mark.parametrize("value", [1.5, True, None, [1], {"a": 1}])
    def test_int_or_string_rejects_the_rest(self, value: Any) -> None:
        assert check(obj_schema(surge=INT_OR_STRING), {"surge": value}) == ["spec.surge"]

    def test_int_or_string_without_the_any_of(self) -> None:
        assert check(obj_schema(surge={"x-kubernetes-int-or-string": True}), {"surge": "1"}) == []
        assert check(obj_schema(surge={"x-kubernetes-int-or-string": True}), {"surge": 1.5}) == ["spec.surge"]

    def test_nullable(self) -> None:
        nullable = obj_schema(name={"type": "string", "nullable": True})
        assert check(nullable, {"name": None}) == []
        assert check(obj_schema(name={"type": "string"}), {"name": None}) == ["spec.name"]
        enum = obj_schema(mode={"type": "string", "enum": ["A", "B"], "nullable": True})
        assert check(enum, {"mode": None}) == []
        assert check(enum, {"mode": "C"}) == ["spec.mode"]

    def test_declared_properties_close_the_object(self) -> None:
        schema = obj_schema(known={"type": "string"})
        problems = validate_against_crd(widget({"known": "a", "typo": 1, "other": 2}), make_crd(schema))
        assert problems == (
            FieldProblem("spec.other", "is not a known field"),
            FieldProblem("spec.typo", "is not a known field"),
        )

    def test_unknown_top_level_fields(self) -> None:
        problems = validate_against_crd(widget({}, extra=1), make_crd(obj_schema()))
        assert paths(problems) == ["extra"]

    def test_preserve_unknown_fields_opens_its_node_only(self) -> None:
        schema = obj_schema(
            template={
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "properties": {"meta": {"type": "object", "properties": {"name": {"type": "string"}}}},
            }
        )
        assert check(schema, {"template": {"anything": [1, 2], "meta": {"name": "x"}}}) == []
        assert check(schema, {"template": {"meta": {"name": "x", "typo": 1}}}) == ["spec.template.meta.typo"]
        assert check(schema, {"template": {"meta": {"name": 3}}}) == ["spec.template.meta.name"]

    def test_an_opaque_node_takes_anything(self) -> None:
        schema = obj_schema(pod={"type": "object", "x-kubernetes-preserve-unknown-fields": True})
        assert check(schema, {"pod": {"containers": [{"name": "x", "whatever": {"deep": True}}]}}) == []
        assert check(schema, {"pod": []}) == ["spec.pod"]

    def test_embedded_resources_stay_open(self) -> None:
        schema = obj_schema(
            obj={
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"}},
            }
        )
        assert check(schema, {"obj": {"apiVersion": "v1", "kind": "Pod", "spec": {}}}) == []

    def test_maps(self) -> None:
        schema = obj_schema(labels={"type": "object", "additionalProperties": {"type": "string"}})
        assert check(schema, {"labels": {"a": "b"}}) == []
        assert check(schema, {"labels": {"a": 1}}) == ["spec.labels.a"]

    def test_int32_and_int64_bounds(self) -> None:
        schema = obj_schema(
            small={"type": "integer", "format": "int32", "minimum": 0},
            big={"type": "integer", "format": "int64"},
        )
        assert check(schema, {"small": 2**31 - 1, "big": 2**63 - 1}) == []
        assert check(schema, {"small": 2**31}) == ["spec.small"]
        assert check(schema, {"small": -1}) == ["spec.small"]
        assert check(schema, {"big": 2**63}) == ["spec.big"]

    def test_open_api_boolean_exclusive_bounds(self) -> None:
        schema = obj_schema(ratio={"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 1})
        assert check(schema, {"ratio": 0.5}) == []
        assert check(schema, {"ratio": 0}) == ["spec.ratio"]
        assert check(schema, {"ratio": 1}) == []
        assert check(schema, {"ratio": 1.5}) == ["spec.ratio"]

    def test_enums_lengths_patterns_and_items_carry_over(self) -> None:
        schema = obj_schema(
            mode={"type": "string", "enum": ["A", "B"]},
            token={"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
            items={"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
            tags={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        )
        good = {"mode": "A", "token": "abc", "items": [1, 2], "tags": ["a", "b"]}
        assert check(schema, good) == []
        assert check(schema, good | {"mode": "C"}) == ["spec.mode"]
        assert check(schema, good | {"token": "abcd"}) == ["spec.token"]
        assert check(schema, good | {"token": "AB"}) == ["spec.token"]
        assert check(schema, good | {"items": []}) == ["spec.items"]
        assert check(schema, good | {"items": [1, 0]}) == ["spec.items[1]"]
        assert check(schema, good | {"tags": ["a", "a"]}) == ["spec.tags"]

    def test_required_names_the_missing_field(self) -> None:
        schema = {"type": "object", "required": ["name", "size"], "properties": {"name": {"type": "string"}}}
        schema["properties"]["size"] = {"type": "integer"}
        problems = validate_against_crd(widget({"entry": []}), make_crd(obj_schema(entry=schema)))
        assert problems == (FieldProblem("spec.entry", "must be of type object, got array of 0 items"),)
        problems = validate_against_crd(widget({"entry": {}}), make_crd(obj_schema(entry=schema)))
        assert problems == (
            FieldProblem("spec.entry.name", "is required"),
            FieldProblem("spec.entry.size", "is required"),
        )

    def test_root_metadata_has_the_object_meta_shape(self) -> None:
        crd = make_crd(obj_schema())
        good = widget({}) | {"metadata": {"name": "w", "labels": {"a": "b"}, "uid": "x", "generation": 3}}
        assert validate_against_crd(good, crd) == ()
        bad = widget({}) | {"metadata": {"name": 5, "labels": {"a": 1}, "annotations": {"b": True}}}
        assert paths(validate_against_crd(bad, crd)) == [
            "metadata.annotations.b",
            "metadata.labels.a",
            "metadata.name",
        ]

    def test_combinators_translate_recursively(self) -> None:
        schema = obj_schema(
            v={"oneOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "string"}]}
        )
        assert check(schema, {"v": "x"}) == []
        assert check(schema, {"v": {"a": "x"}}) == []
        assert check(schema, {"v": 3}) == ["spec.v"]

    def test_the_input_is_not_changed(self) -> None:
        schema = make_crd(obj_schema(surge=INT_OR_STRING, name={"type": "string", "nullable": True}))
        before = copy.deepcopy(schema)
        to_json_schema(schema["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
        validate_against_crd(widget({"surge": 1.5}), schema)
        assert schema == before

    def test_the_translated_schema_is_a_copy(self) -> None:
        crd = make_crd(obj_schema(name={"type": "string"}))
        translated = crd_json_schema(crd, "v1")
        assert translated is not None
        assert translated["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert translated["properties"]["spec"]["additionalProperties"] is False
        translated["properties"]["spec"]["properties"].clear()
        assert check(obj_schema(name={"type": "string"}), {"name": 1}) == ["spec.name"]
        assert crd_json_schema(crd, "v9") is None


class TestVersionsAndKinds:
    def test_the_version_comes_from_api_version(self) -> None:
        crd = make_crd(obj_schema(size={"type": "integer"}), versions=("v1", "v2"))
        assert validate_against_crd(widget({"size": 1}), crd) == ()
        problems = validate_against_crd(widget({"size": 1}) | {"apiVersion": "example.com/v3"}, crd)
        assert problems == (
            FieldProblem(
                "apiVersion",
                "'example.com/v3' is not served by this CRD (served: example.com/v1, example.com/v2)",
            ),
        )

    def test_a_wrong_group_or_kind(self) -> None:
        crd = make_crd(obj_schema(size={"type": "integer"}))
        problems = validate_against_crd(
            widget({"size": "x"}) | {"apiVersion": "other.io/v1", "kind": "Gadget"}, crd
        )
        # With a single version the schema still applies, so the field problem is reported too.
        assert paths(problems) == ["apiVersion", "kind", "spec.size"]

    def test_a_missing_api_version(self) -> None:
        obj = widget({})
        del obj["apiVersion"]
        assert paths(validate_against_crd(obj, make_crd(obj_schema()))) == ["apiVersion"]

    def test_an_unserved_version_has_no_schema(self) -> None:
        crd = make_crd(obj_schema(), served=False)
        assert paths(validate_against_crd(widget({}), crd)) == ["apiVersion"]

    @pytest.mark.parametrize("obj", [None, [], "text", 3])
    def test_not_an_object(self, obj: Any) -> None:
        assert validate_against_crd(obj, make_crd(obj_schema())) == (
            FieldProblem("<object>", "must be a mapping (a YAML/JSON object)"),
        )


class TestCache:
    def test_validators_are_built_once_per_crd_dict(self) -> None:
        crd = make_crd(obj_schema(size={"type": "integer"}))
        first = crdschema._compiled(crd)
        assert crdschema._compiled(crd) is first
        twin = copy.deepcopy(crd)
        assert crdschema._compiled(twin) is not first

    def test_the_cache_is_bounded(self) -> None:
        crds = [make_crd(obj_schema()) for _ in range(crdschema._CACHE_SIZE + 5)]
        for crd in crds:
            validate_against_crd(widget({}), crd)
        assert len(crdschema._CACHE) <= crdschema._CACHE_SIZE
        # An evicted CRD is rebuilt, not confused with another one.
        assert validate_against_crd(widget({"x": 1}), crds[0]) == (
            FieldProblem("spec.x", "is not a known field"),
        )


class TestJSONLikeInput:
    """Tuples and read-only mappings are JSON arrays and objects (omerender.jsonlike), as a frozen model's
    dump holds them: the check reads them as JSON would carry them, and names only real problems."""

    SCHEMA = obj_schema(
        tags={"type": "array", "items": {"type": "string"}},
        limits={"type": "object", "additionalProperties": {"type": "integer"}},
    )

    def test_tuples_and_mappings_fit(self) -> None:
        from types import MappingProxyType

        spec = {"tags": ("a", "b"), "limits": MappingProxyType({"gpu": 1})}
        obj = widget(spec, metadata=MappingProxyType({"name": "w", "finalizers": ("f",)}))
        assert validate_against_crd(obj, make_crd(self.SCHEMA)) == ()

    def test_a_real_problem_beside_a_tuple_is_the_only_one_named(self) -> None:
        spec = {"tags": ("a", 1), "other": 1}
        assert check(self.SCHEMA, spec) == ["spec.other", "spec.tags[1]"]

    def test_a_value_that_contains_itself_is_read_along_the_schema(self) -> None:
        loop: list[Any] = []
        loop.append(loop)
        schema = obj_schema(
            tags={"type": "array", "items": {"type": "string"}},
            free={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        )
        assert check(schema, {"tags": ["a"], "free": {"loop": loop}}) == []
        assert check(schema, {"tags": [1], "free": {"loop": loop}}) == ["spec.tags[0]"]
