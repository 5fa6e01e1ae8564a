"""omerender.gojson: Go encoding/json of Kubernetes types, checked against values Go produced.

Every expected string below was printed by Go (tools/gotypes/cmd/canonical, k8s.io/api and
apimachinery v0.36.3); tests/differential compares the two implementations on many more inputs.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import FunctionType
from typing import Any, cast

import pytest
import yaml

from omerender import gojson
from omerender.gojson import (
    GoJSONError,
    GoTypeError,
    InvalidQuantityError,
    InvalidTimeError,
    canonical_quantity,
    encode,
    encode_pod_spec,
    encode_string,
)

# ---------------------------------------------------------------------------------------------
# Quantities
# ---------------------------------------------------------------------------------------------

# Every suffix: a unit, a multiple that moves up a suffix, a fraction, a half and a negative.
EVERY_SUFFIX = [
    ("1", "1"),
    ("1000", "1k"),
    ("1.5", "1500m"),
    ("0.5", "500m"),
    ("-2", "-2"),
    ("1n", "1n"),
    ("1000n", "1u"),
    ("1.5n", "2n"),
    ("0.5n", "1n"),
    ("-2n", "-2n"),
    ("1u", "1u"),
    ("1000u", "1m"),
    ("1.5u", "1500n"),
    ("0.5u", "500n"),
    ("-2u", "-2u"),
    ("1m", "1m"),
    ("1000m", "1"),
    ("1.5m", "1500u"),
    ("0.5m", "500u"),
    ("-2m", "-2m"),
    ("1k", "1k"),
    ("1000k", "1M"),
    ("1.5k", "1500"),
    ("0.5k", "500"),
    ("-2k", "-2k"),
    ("1M", "1M"),
    ("1000M", "1G"),
    ("1.5M", "1500k"),
    ("0.5M", "500k"),
    ("-2M", "-2M"),
    ("1G", "1G"),
    ("1000G", "1T"),
    ("1.5G", "1500M"),
    ("0.5G", "500M"),
    ("-2G", "-2G"),
    ("1T", "1T"),
    ("1000T", "1P"),
    ("1.5T", "1500G"),
    ("0.5T", "500G"),
    ("-2T", "-2T"),
    ("1P", "1P"),
    ("1000P", "1E"),
    ("1.5P", "1500T"),
    ("0.5P", "500T"),
    ("-2P", "-2P"),
    ("1E", "1E"),
    ("1000E", "1"),
    ("1.5E", "1500P"),
    ("0.5E", "500P"),
    ("-2E", "-2E"),
    ("1Ki", "1Ki"),
    ("1000Ki", "1000Ki"),
    ("1.5Ki", "1536"),
    ("0.5Ki", "512"),
    ("-2Ki", "-2Ki"),
    ("1Mi", "1Mi"),
    ("1000Mi", "1000Mi"),
    ("1.5Mi", "1536Ki"),
    ("0.5Mi", "512Ki"),
    ("-2Mi", "-2Mi"),
    ("1Gi", "1Gi"),
    ("1000Gi", "1000Gi"),
    ("1.5Gi", "1536Mi"),
    ("0.5Gi", "512Mi"),
    ("-2Gi", "-2Gi"),
    ("1Ti", "1Ti"),
    ("1000Ti", "1000Ti"),
    ("1.5Ti", "1536Gi"),
    ("0.5Ti", "512Gi"),
    ("-2Ti", "-2Ti"),
    ("1Pi", "1Pi"),
    ("1000Pi", "1000Pi"),
    ("1.5Pi", "1536Ti"),
    ("0.5Pi", "512Ti"),
    ("-2Pi", "-2Pi"),
    ("1Ei", "1Ei"),
    ("1000Ei", "9223372036854775807"),
    ("1.5Ei", "1536Pi"),
    ("0.5Ei", "512Pi"),
    ("-2Ei", "-2Ei"),
]

EXPONENT_FORMS = [
    ("1e3", "1e3"),  # already canonical: kept verbatim, not rewritten as 1k
    ("1E3", "1E3"),
    ("1e-3", "1e-3"),
    ("1e+3", "1e+3"),
    ("1e0", "1e0"),
    ("1.5e3", "1500"),
    ("1000e3", "1e6"),
    ("12e-2", "120e-3"),
    ("1e-9", "1e-9"),
    ("1e-10", "1e-9"),  # rounded up to nano units
    ("1.5e-20", "1e-9"),
    ("1e18", "1e18"),
    ("1e21", "1e21"),
    ("1e2147483647", "10e2147483646"),
    ("1E", "1E"),  # E alone is exa, not an exponent
]

SURPRISES = [
    ("2000m", "2"),
    ("1024Mi", "1Gi"),
    ("1536Ki", "1536Ki"),
    ("1024Ki", "1Mi"),
    ("0.1Ki", "102400m"),  # BinarySI below 1024 prints as DecimalSI
    ("1.", "1."),  # canonical inputs are kept verbatim, dot, sign and leading zeros included
    ("+100m", "+100m"),
    ("0100", "0100"),
    ("+1Ki", "+1Ki"),
    ("01Ki", "01Ki"),
    ("100000E", "100"),  # no DecimalSI suffix above E: the exponent is silently lost (as in Go)
    ("16Ei", "9223372036854775807"),  # BinarySI is capped at the int64 maximum
    ("1000Ei", "9223372036854775807"),
    ("99999999999999999999", "99999999999999999999"),  # DecimalSI is not capped
    ("12345678901234567890000", "12345678901234567890k"),
    ("1.2345678901n", "2n"),
    ("-0", "0"),
    ("0", "0"),
    ("0m", "0"),
    ("0Ki", "0"),
    (".", "0"),  # no digits at all reads as zero, with or without a suffix
    ("+", "0"),
    ("-", "0"),
    ("e3", "0"),
    (" 1 ", "1"),
    ("\u00a02\u00a0", "2"),  # Go trims Unicode spaces that JSON leaves unescaped
]

NUMBERS = [(2, "2"), (0, "0"), (-1, "-1"), (1.0, "1"), (0.1, "100m"), (1e22, "10e21"), (10**19, "10E")]

INVALID = [
    "",
    " ",
    "abc",
    "1ki",
    "1m5",
    "1.5.5",
    "1e",
    "1e+",
    "e-20",
    "1Mi5",
    "1 Mi",
    "0x10",
    "\t1",
    "1\u2028",
    "1e99999999999999999999",
    "١",
]


@pytest.mark.parametrize(("given", "expected"), EVERY_SUFFIX + EXPONENT_FORMS + SURPRISES)
def test_quantity_canonical_form(given: str, expected: str) -> None:
    assert canonical_quantity(given) == expected
    assert encode("quantity", given) == json.dumps(expected).encode()


@pytest.mark.parametrize(("given", "expected"), NUMBERS)
def test_quantity_from_json_numbers(given: float, expected: str) -> None:
    assert canonical_quantity(given) == expected


def test_quantities_beyond_pythons_digit_limit() -> None:
    # Python refuses int/str conversions past 4300 digits; Kubernetes parses such quantities.
    assert canonical_quantity("1" * 5000) == "1" * 5000
    assert canonical_quantity("1e" + "0" * 5000 + "3") == "1e" + "0" * 5000 + "3"  # kept verbatim
    assert canonical_quantity("0." + "0" * 5000 + "1") == "1n"
    assert canonical_quantity("1" * 5000 + "Ki") == "9223372036854775807"
    assert canonical_quantity(10**5000) == "100"  # 100e4998 has no DecimalSI suffix: Go drops it
    with pytest.raises(GoTypeError, match="overflows"):
        encode("int32", 10**5000)


def test_quantity_null_is_zero() -> None:
    assert encode("quantity", None) == b'"0"'


@pytest.mark.parametrize("given", INVALID)
def test_invalid_quantity_raises_typed_error(given: str) -> None:
    with pytest.raises(InvalidQuantityError) as info:
        canonical_quantity(given)
    assert isinstance(info.value, ValueError)
    assert info.value.value == given


@pytest.mark.parametrize("given", [True, float("nan"), float("inf"), [], {}])
def test_non_quantity_types_raise(given: Any) -> None:
    with pytest.raises(InvalidQuantityError):
        encode("quantity", given)


def test_invalid_quantity_carries_path() -> None:
    spec = {"containers": [{"name": "c"}, {"name": "d", "resources": {"limits": {"cpu": "lots"}}}]}
    with pytest.raises(InvalidQuantityError) as info:
        encode_pod_spec(spec)
    assert info.value.path == ("containers", 1, "resources", "limits", "cpu")
    assert info.value.value == "lots"
    assert str(info.value).startswith("containers[1].resources.limits.cpu: ")


# ---------------------------------------------------------------------------------------------
# Field order, omitempty, zero values, unknown fields
# ---------------------------------------------------------------------------------------------


def test_struct_fields_follow_go_order_not_input_order() -> None:
    container = {
        "resources": {"limits": {"memory": "4Gi", "cpu": "2"}},
        "env": [{"value": "/models/base", "name": "MODEL_PATH"}],
        "ports": [{"protocol": "TCP", "containerPort": 8080, "name": "http"}],
        "image": "registry.example.com/serving:v1",
        "name": "ome-container",
    }
    assert encode("core/v1.Container", container) == (
        b'{"name":"ome-container","image":"registry.example.com/serving:v1",'
        b'"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"}],'
        b'"env":[{"name":"MODEL_PATH","value":"/models/base"}],'
        b'"resources":{"limits":{"cpu":"2","memory":"4Gi"}}}'
    )


def test_zero_values_and_always_written_structs() -> None:
    # name is not omitempty; resources is a struct, which omitempty never drops.
    assert encode("core/v1.Container", {}) == b'{"name":"","resources":{}}'
    assert encode("core/v1.Container", None) == b'{"name":"","resources":{}}'
    assert encode_pod_spec({}) == b'{"containers":null}'
    assert encode_pod_spec(None) == b'{"containers":null}'
    assert encode_pod_spec({"containers": []}) == b'{"containers":[]}'
    assert encode_pod_spec({"containers": [None]}) == b'{"containers":[{"name":"","resources":{}}]}'


def test_omitempty_drops_empty_values_but_not_set_pointers() -> None:
    spec = {
        "containers": [],
        "volumes": [],
        "nodeSelector": {},
        "hostNetwork": False,
        "serviceAccountName": "",
        "priority": 0,  # *int32: set to zero is written
        "enableServiceLinks": False,  # *bool
        "terminationGracePeriodSeconds": None,  # *int64 nil: dropped
        "affinity": {},  # *Affinity non-nil: written as {}
    }
    assert encode_pod_spec(spec) == b'{"containers":[],"affinity":{},"priority":0,"enableServiceLinks":false}'


def test_never_empty_fields_are_written_with_their_zero_value() -> None:
    env = {"name": "A", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}
    assert encode("core/v1.EnvVar", env) == (
        b'{"name":"A","valueFrom":{"resourceFieldRef":{"resource":"limits.cpu","divisor":"0"}}}'
    )
    probe = {"httpGet": {"path": "/health"}}
    assert encode("core/v1.Probe", probe) == b'{"httpGet":{"path":"/health","port":0}}'


def test_embedded_structs_are_flattened() -> None:
    volume = {"configMap": {"name": "cm", "optional": True}, "name": "v"}
    assert encode("core/v1.Volume", volume) == b'{"name":"v","configMap":{"name":"cm","optional":true}}'
    probe = {"periodSeconds": 5, "exec": {"command": ["true"]}}
    assert encode("core/v1.Probe", probe) == b'{"exec":{"command":["true"]},"periodSeconds":5}'
    ephemeral = {"targetContainerName": "c", "name": "dbg"}
    assert encode("core/v1.EphemeralContainer", ephemeral) == (
        b'{"name":"dbg","resources":{},"targetContainerName":"c"}'
    )


def test_unknown_and_wrong_case_fields_are_dropped() -> None:
    container = {"Name": "x", "name": "y", "IMAGE": "z", "bogus": {"deep": [1, 2]}, "": 1, 7: "seven"}
    assert encode("core/v1.Container", container) == b'{"name":"y","resources":{}}'


def test_maps_are_sorted_by_byte_order() -> None:
    labels = {"z": "1", "a": "2", "M": "3", "é": "4", "": "5", "😀": None}
    assert encode("map[string]string", labels) == '{"":"5","M":"3","a":"2","z":"1","é":"4","😀":""}'.encode()


def test_object_meta_creation_timestamp_is_omitzero() -> None:
    # apimachinery v0.35+ tags ObjectMeta.creationTimestamp omitzero.
    assert encode("meta/v1.ObjectMeta", {"labels": {"a": "b"}}) == b'{"labels":{"a":"b"}}'
    assert encode("meta/v1.ObjectMeta", {"creationTimestamp": "0001-01-01T00:00:00Z"}) == b"{}"
    assert encode("meta/v1.ObjectMeta", {"creationTimestamp": "2024-01-01T01:00:00+01:00"}) == (
        b'{"creationTimestamp":"2024-01-01T00:00:00Z"}'
    )


# ---------------------------------------------------------------------------------------------
# Strings
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("plain", '"plain"'),
        ("<a href>&", '"\\u003ca href\\u003e\\u0026"'),
        ('quote " backslash \\', '"quote \\" backslash \\\\"'),
        ("\n\r\t\b\f", '"\\n\\r\\t\\b\\f"'),
        ("\x00\x01\x1f", '"\\u0000\\u0001\\u001f"'),
        ("\x7f", '"\x7f"'),
        ("é 😀 \ufeff", '"é 😀 \ufeff"'),
        ("\u2028\u2029", '"\\u2028\\u2029"'),
        ("lone \ud800", '"lone \ufffd"'),
        ("pair \ud83d\ude00", '"pair 😀"'),
    ],
)
def test_go_string_escaping(given: str, expected: str) -> None:
    assert encode_string(given) == expected
    assert encode("string", given) == expected.encode()


def test_html_escaping_applies_to_keys_and_raw_json() -> None:
    assert encode("map[string]string", {"<k>": "&"}) == b'{"\\u003ck\\u003e":"\\u0026"}'
    entry = {"fieldsV1": {"f:<x>": {}, "n": 1.5}}
    assert encode("meta/v1.ManagedFieldsEntry", entry) == b'{"fieldsV1":{"f:\\u003cx\\u003e":{},"n":1.5}}'


# ---------------------------------------------------------------------------------------------
# Numbers, booleans, IntOrString, Time
# ---------------------------------------------------------------------------------------------


def test_integers_range_checked() -> None:
    assert encode("int32", 2**31 - 1) == b"2147483647"
    assert encode("int64", -(2**63)) == b"-9223372036854775808"
    with pytest.raises(GoTypeError):
        encode("int32", 2**31)
    with pytest.raises(GoTypeError):
        encode("int64", 2**63)


@pytest.mark.parametrize("given", [1.0, 8080.0, 1.5, "80", True, [], {}])
def test_integers_refuse_floats_strings_and_bools(given: Any) -> None:
    # Go's decoder refuses the JSON number 1.0 for an int32 field; so do we (documented).
    with pytest.raises(GoTypeError):
        encode("int32", given)


def test_bools() -> None:
    assert encode("bool", True) == b"true"
    assert encode("bool", None) == b"false"
    with pytest.raises(GoTypeError):
        encode("bool", "true")
    with pytest.raises(GoTypeError):
        encode("bool", 1)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (8080, b"8080"),
        ("http", b'"http"'),
        ("", b'""'),
        (None, b"0"),
        ("8080", b'"8080"'),
        ("<", b'"\\u003c"'),
    ],
)
def test_int_or_string(given: Any, expected: bytes) -> None:
    assert encode("intorstring", given) == expected


@pytest.mark.parametrize("given", [2**31, 1.0, True, [], {}])
def test_int_or_string_refuses(given: Any) -> None:
    with pytest.raises(GoTypeError):
        encode("intorstring", given)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, b"null"),
        ("2024-01-01T00:00:00Z", b'"2024-01-01T00:00:00Z"'),
        ("2024-01-01T00:00:00.999999999-05:30", b'"2024-01-01T05:30:00Z"'),
        ("0001-01-01T00:00:00Z", b"null"),  # the zero time
        ("0001-01-01T00:00:00.5Z", b'"0001-01-01T00:00:00Z"'),
        ("0001-01-01T00:00:00+01:00", b'"0000-12-31T23:00:00Z"'),
        ("9999-12-31T23:00:00-02:00", b'"10000-01-01T01:00:00Z"'),
        ("2024-01-01T1:00:00,5+24:00", b'"2023-12-31T01:00:00Z"'),  # Go's lenient general parser
        (datetime(2024, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))), b'"2024-01-01T00:00:00Z"'),
        (datetime(2024, 1, 1), b'"2024-01-01T00:00:00Z"'),
        (datetime(1, 1, 1, tzinfo=UTC), b"null"),
    ],
)
def test_time(given: Any, expected: bytes) -> None:
    assert encode("time", given) == expected


@pytest.mark.parametrize(
    "given",
    [
        "",
        "2024-01-01",
        "2024-01-01T00:00:00",
        "2024-02-30T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T00:00:00z",
        "2024-01-01 00:00:00Z",
        "2024-01-01T00:00:00+25:00",
        1,
        True,
    ],
)
def test_invalid_time(given: Any) -> None:
    with pytest.raises(InvalidTimeError):
        encode("time", given)


# ---------------------------------------------------------------------------------------------
# Shapes and errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("type_name", "given", "path"),
    [
        ("core/v1.PodSpec", {"containers": {"name": "x"}}, ("containers",)),
        ("core/v1.PodSpec", {"containers": ["x"]}, ("containers", 0)),
        (
            "core/v1.PodSpec",
            {"containers": [{"ports": [{"containerPort": "80"}]}]},
            ("containers", 0, "ports", 0, "containerPort"),
        ),
        ("core/v1.PodSpec", {"nodeSelector": {"a": 1}}, ("nodeSelector", "a")),
        ("core/v1.PodSpec", {"nodeSelector": {1: "a"}}, ("nodeSelector",)),
        ("core/v1.PodSpec", {"containers": [{"args": ["a", 2]}]}, ("containers", 0, "args", 1)),
        ("core/v1.PodSpec", "spec", ()),
    ],
)
def test_wrong_shapes_raise_with_paths(type_name: str, given: Any, path: tuple[Any, ...]) -> None:
    with pytest.raises(GoJSONError) as info:
        encode(type_name, given)
    assert info.value.path == path
    assert isinstance(info.value, ValueError)


def test_tuples_are_lists_and_str_is_not_a_list() -> None:
    assert encode("[]string", ("a", "b")) == b'["a","b"]'
    with pytest.raises(GoTypeError):
        encode("[]string", "ab")


def test_unknown_type_name() -> None:
    with pytest.raises(KeyError):
        gojson.fragment_encoder("core/v1.NoSuchType")


def test_encoding_does_not_mutate_input() -> None:
    spec = {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2000m"}}, "x": 1}]}
    before = json.dumps(spec)
    encode_pod_spec(spec)
    assert json.dumps(spec) == before


def test_versions_exported() -> None:
    assert gojson.K8S_API_VERSION == "v0.36.3"
    assert gojson.KUBERNETES_VERSION.startswith("1.36.")


# ---------------------------------------------------------------------------------------------
# Lazy building: a struct's encoder is compiled on first use, its fields' when first met
# ---------------------------------------------------------------------------------------------


def test_struct_zero_from_the_table_equals_what_the_encoder_writes() -> None:
    # The zero value of a struct is worked out from the field table without compiling it; it
    # must be exactly what the compiled encoder writes for {} and for null, for every struct.
    compiler = gojson._Compiler(gojson.STRUCTS)
    for typ in gojson.STRUCTS:
        zero = compiler.zero(typ)
        assert compiler.encoder(typ)({}) == zero, typ
        assert compiler.encoder(typ)(None) == zero, typ


def test_fields_are_built_on_first_use_and_then_patched_in_place() -> None:
    compiler = gojson._Compiler(gojson.STRUCTS)
    pod_spec = compiler.encoder("core/v1.PodSpec")
    assert "core/v1.Volume" not in compiler._encoders  # nothing below PodSpec is built yet
    spec = {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}],
        "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}],
    }
    first = pod_spec(spec)
    assert first == pod_spec(spec) == gojson.encode("core/v1.PodSpec", spec).decode()
    assert "core/v1.EmptyDirVolumeSource" in compiler._encoders
    assert "core/v1.NFSVolumeSource" not in compiler._encoders  # a source no value named
    # Once built, the stand-in is gone from the plans and generated code that held it.
    assert not compiler._pending.get("[]core/v1.Volume")
    assert isinstance(pod_spec, gojson._Tiered)
    assert pod_spec.plan.by_name["volumes"][2] is compiler._encoders["[]core/v1.Volume"]
    dense = pod_spec._compile()
    generated = cast(FunctionType, dense).__globals__
    assert generated["plan"].by_name["volumes"][2] is compiler._encoders["[]core/v1.Volume"]
    assert dense(spec) == first


ROOT = Path(__file__).resolve().parents[2]


def _pod_specs() -> list[Any]:
    """Every pod spec of the golden snapshots, and a few of awkward shapes."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            spec = node.get("spec")
            if isinstance(spec, dict) and "containers" in spec:
                found.append(spec)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((ROOT / "golden" / "snapshots").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            walk(doc)
    return [
        *found,
        {},
        {"containers": None, "volumes": [{"name": "v"}], "hostNetwork": False, "priority": 0},
        {"containers": [{"name": "c", "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]},
    ]


def test_the_sparse_loop_and_the_generated_encoder_write_the_same_bytes() -> None:
    # A struct's first encodings take the sparse loop, later ones the generated code: one output.
    specs = _pod_specs()
    assert len(specs) > 20
    generated = gojson._Compiler(gojson.STRUCTS)
    for spec in specs:
        for _ in range(gojson._COMPILE_AFTER + 1):  # past the loop's share: every struct it meets compiles
            generated.encoder("core/v1.PodSpec")(spec)
    structs = [enc for typ, enc in generated._encoders.items() if typ in gojson.STRUCTS]
    assert len(structs) > 10
    assert all(isinstance(enc, FunctionType) for enc in structs)
    for spec in specs:
        fresh = gojson._Compiler(gojson.STRUCTS)  # nothing generated: the loop encodes every struct
        assert fresh.encoder("core/v1.PodSpec")(spec) == generated.encoder("core/v1.PodSpec")(spec)
        assert all(
            isinstance(enc, gojson._Tiered) for typ, enc in fresh._encoders.items() if typ in gojson.STRUCTS
        )


def test_a_struct_compiles_after_its_first_encodings_and_is_patched_where_it_is_held() -> None:
    compiler = gojson._Compiler(gojson.STRUCTS)
    spec = {"containers": [{"name": "c", "image": "i"}]}
    pod_spec = compiler.encoder("core/v1.PodSpec")
    expected = pod_spec(spec)
    container = compiler._encoders["core/v1.Container"]
    assert isinstance(container, gojson._Tiered)
    assert container.dense is None
    for _ in range(gojson._COMPILE_AFTER):
        assert pod_spec(spec) == expected
    assert isinstance(compiler._encoders["core/v1.PodSpec"], FunctionType)
    assert isinstance(compiler._encoders["core/v1.Container"], FunctionType)
    # The list of containers' encoder (a closure over Container's) still calls the tiered one, which
    # hands over to the generated code.
    assert container.dense is compiler._encoders["core/v1.Container"]
    assert pod_spec(spec) == expected


def test_an_error_in_the_sparse_loop_is_reported_as_the_generated_encoder_reports_it() -> None:
    # Two bad fields, the later one in Go's order first in the dict: the first encoding (the loop)
    # reports what the generated encoder reports, for a value with few fields (which it hands to the
    # loop) as for one with many (which it walks in Go's order).
    few = {"nodeSelector": {"a": 1}, "containers": ["x"]}
    many = {
        "nodeSelector": {"a": 1},
        **dict.fromkeys(("volumes", "initContainers", "ephemeralContainers", "restartPolicy")),
        **dict.fromkeys(("activeDeadlineSeconds", "dnsPolicy", "serviceAccountName", "hostname")),
        **dict.fromkeys(("subdomain", "affinity", "schedulerName", "tolerations", "hostAliases")),
        "containers": ["x"],
    }
    for value in (few, many):
        compiled = gojson._Compiler(gojson.STRUCTS)
        pod_spec = compiled.encoder("core/v1.PodSpec")
        assert isinstance(pod_spec, gojson._Tiered)
        with pytest.raises(GoJSONError) as generated:
            pod_spec._compile()(value)
        with pytest.raises(GoJSONError) as first:
            gojson._Compiler(gojson.STRUCTS).encoder("core/v1.PodSpec")(value)
        assert first.value.path == generated.value.path
    assert generated.value.path == ("containers", 0)


def test_threads_building_one_compiler_at_once_agree() -> None:
    spec = {
        "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}],
        "volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "configMap": {"name": "cm"}}],
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}
        },
    }
    expected = gojson.encode("core/v1.PodSpec", spec).decode()
    for _ in range(5):
        encoder = gojson._Compiler(gojson.STRUCTS).encoder
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda _, build=encoder: build("core/v1.PodSpec")(spec), range(32)))
        assert set(results) == {expected}
