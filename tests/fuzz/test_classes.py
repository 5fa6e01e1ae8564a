"""One test per class of hostile input the fuzz tier found (issue 35): each a minimal reproducer, run
through the layer that was fixed and, where a user meets it, through the command line."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from omereconcile.server.webhook import ClusterReader, parse_review
from omereconcile.settings import SettingsError, parse_go_duration, settings_from_configmap
from omerender import (
    Catalog,
    InferenceReplica,
    InvalidArgumentError,
    InvalidObjectError,
    parse_object,
    preview,
    render,
)
from omerender.accelerators import parse_accelerator_resources
from omerender.admission.identity import IdentityConfigError, parse_identity_config
from omerender.cli import main
from omerender.deploy import DeployConfigError, parse_deploy_config
from omerender.gotemplate import GoTemplateError, GoTemplateUnsupported, GoValue, execute, parse
from omerender.gotemplate.execute import MAX_RANGE_STEPS
from omerender.gotemplate.parse import MAX_NESTING
from omerender.jsonlike import MAX_DEPTH, JsonLimitError, loads_bounded
from omerender.preview import MAX_INSTANCES, revision_of
from tests.fuzz.harness import _Kube

ROOT = Path(__file__).resolve().parents[2]
REPLICA = (ROOT / "examples" / "llama-pool.yaml").read_text()
CATALOG = ROOT / "examples" / "catalog"
DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000
HUGE = "9" * 5000


def _configmap(key: str, value: str) -> str:
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: inferenceservice-config, namespace: ome}\n"
        f"data:\n  {key}: {json.dumps(value)}\n"
    )


# -- ConfigMap values: JSON nested thousands deep, integers of thousands of digits ---------------------


@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT, '{"a": ' + DEEP + "}"])
def test_json_nested_past_the_limit_is_refused_naming_it(text: str) -> None:
    with pytest.raises(JsonLimitError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads_bounded(text)


def test_json_brackets_inside_strings_do_not_count() -> None:
    assert loads_bounded(json.dumps(["[" * 500, '\\"{' * 500])) == ["[" * 500, '\\"{' * 500]


def test_json_integers_past_the_limit_are_refused_in_our_words() -> None:
    with pytest.raises(JsonLimitError, match="an integer of 5000 digits is out of range"):
        loads_bounded(HUGE)
    assert loads_bounded("[-9223372036854775808, 18446744073709551615]") == [-(2**63), 2**64 - 1]


@pytest.mark.parametrize("value", [DEEP, DEEP_OBJECT, '{"controllerIdentity": {"usernames": ' + DEEP + "}}"])
def test_every_configmap_reader_bounds_nesting(value: str) -> None:
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        parse_accelerator_resources(value)
    with pytest.raises(DeployConfigError, match="unable to parse deploy config json: nested deeper than 100"):
        parse_deploy_config(value)
    with pytest.raises(IdentityConfigError, match="nested deeper than 100 levels"):
        parse_identity_config(value)
    # lifecycle: OME ignores a key whose JSON does not parse; the manager starts on the defaults.
    assert settings_from_configmap({"lifecycle": value}).revision_history_limit is None


def test_configmap_integers_of_thousands_of_digits() -> None:
    with pytest.raises(DeployConfigError, match="an integer of 5000 digits is out of range"):
        parse_deploy_config('{"terminationGracePeriodSeconds": ' + HUGE + "}")
    with pytest.raises(IdentityConfigError, match="an integer of 5000 digits"):
        parse_identity_config('{"controllerIdentity": ' + HUGE + "}")


@pytest.mark.parametrize("text", ["9999999999999999999h", "2562048h", "-9999999999999999999s"])
def test_durations_past_go_int64_nanoseconds_are_go_s_invalid_duration(text: str) -> None:
    with pytest.raises(SettingsError, match="time: invalid duration"):
        parse_go_duration(text)
    with pytest.raises(SettingsError, match="time: invalid duration"):
        settings_from_configmap({"lifecycle": json.dumps({"instanceReadyTimeout": text})})
    assert parse_go_duration("2562047h").total_seconds() == 2562047 * 3600


@pytest.mark.parametrize(
    ("key", "value", "exit_code", "expected"),
    [
        ("acceleratorResources", DEEP, 2, "nested deeper than 100 levels"),
        # An unusable deploy block blocks the render (RenderFailed), as OME's renderFromRefs does.
        ("deploy", DEEP_OBJECT, 1, "load deploy config: unable to parse deploy config json: nested deeper"),
        ("deploy", '{"minReadySeconds": ' + HUGE + "}", 1, "an integer of 5000 digits is out of range"),
    ],
)
def test_render_with_a_hostile_configmap_names_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: str, exit_code: int, expected: str
) -> None:
    replica = tmp_path / "replica.yaml"
    replica.write_text(REPLICA)
    config = tmp_path / "config.yaml"
    config.write_text(_configmap(key, value))
    code = main(["render", str(replica), "--objects", str(CATALOG), str(config)])
    err = capsys.readouterr().err
    assert code == exit_code, err
    assert expected in err
    assert "internal error" not in err


# -- Go templates: numbers past float range, deep nesting, a range over a huge integer -----------------


@pytest.mark.parametrize(
    ("number", "message"),
    [
        ("1e309", 'illegal number syntax: "1e309"'),
        ("-1e309", 'illegal number syntax: "-1e309"'),
        ("0x1p2000", 'illegal number syntax: "0x1p2000"'),
        ("9" * 5000, "illegal number syntax"),
        ("0x" + "f" * 40, "illegal number syntax"),  # ParseFloat needs a p exponent for hexadecimal
        ("99999999999999999999999999", 'integer overflow: "99999999999999999999999999"'),
    ],
)
def test_template_numbers_past_range_are_go_s_parse_errors(number: str, message: str) -> None:
    with pytest.raises(GoTemplateError, match=f"^template: x:1: {message}"):
        parse("x", "{{ " + number + " }}")


@pytest.mark.parametrize(
    "text",
    [
        "{{" + "(" * 5000 + "1" + ")" * 5000 + "}}",
        "{{ if 1 }}" * 3000 + "{{ end }}" * 3000,
        "{{ range 3 }}" * 200 + "{{ end }}" * 200,
    ],
)
def test_template_nesting_past_the_limit_is_unsupported_naming_it(text: str) -> None:
    with pytest.raises(GoTemplateUnsupported, match=f"nested deeper than {MAX_NESTING} levels"):
        parse("x", text)


def test_template_nesting_within_the_limit_runs() -> None:
    text = "{{" + "(" * 50 + "1" + ")" * 50 + "}}" + "{{ if 1 }}" * 40 + "y" + "{{ end }}" * 40
    assert execute(parse("x", text), GoValue("string", "a")) == "1y"


@pytest.mark.parametrize("body", ["", "x"])
def test_a_range_over_a_huge_integer_stops_at_the_limit_without_building_it(body: str) -> None:
    tree = parse("x", "{{ range 100000000000000 }}" + body + "{{ end }}")
    with pytest.raises(GoTemplateUnsupported, match=f"more than {MAX_RANGE_STEPS:,} iterations"):
        execute(tree, GoValue("string", "a"))


def test_a_range_whose_output_passes_the_api_server_limit_stops() -> None:
    tree = parse("x", "{{ range 2000 }}" + "a" * 5000 + "{{ end }}")
    with pytest.raises(GoTemplateUnsupported, match="output past 3 MiB"):
        execute(tree, GoValue("string", "a"))


def test_a_small_range_over_an_integer_still_runs() -> None:
    assert execute(parse("x", "{{ range 3 }}{{ . }}{{ end }}"), GoValue("string", "a")) == "012"
    assert execute(parse("x", "{{ range 0 }}a{{ else }}b{{ end }}"), GoValue("string", "a")) == "b"


def test_render_with_a_hostile_placeholder_blocks_with_a_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = yaml.safe_load((CATALOG / "vllm-llama-3-2-1b-instruct.yaml").read_text())
    runtime["spec"]["engineConfig"]["runner"]["args"] = ["{{ range 100000000000000 }}x{{ end }}"]
    (tmp_path / "runtime.yaml").write_text(yaml.safe_dump(runtime))
    (tmp_path / "model.yaml").write_text((CATALOG / "llama-3-2-1b-instruct.yaml").read_text())
    replica = tmp_path / "replica.yaml"
    replica.write_text(REPLICA)
    code = main(
        ["render", str(replica), "--objects", str(tmp_path / "runtime.yaml"), str(tmp_path / "model.yaml")]
    )
    err = capsys.readouterr().err
    assert code == 1, err
    assert "cannot preview the placeholders in the container: ranges of more than 100,000 iterations" in err


# -- the library with values the CLI never passes ------------------------------------------------------


def _example() -> tuple[InferenceReplica, Catalog]:
    docs = [yaml.safe_load(p.read_text()) for p in sorted(CATALOG.glob("*.yaml"))]
    return parse_object(InferenceReplica, yaml.safe_load(REPLICA)), Catalog.from_objects(docs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"instances": 1_000_000}, "instances must be a whole number from 0 to 1,000"),
        ({"instances": 10**30}, "instances must be a whole number from 0 to 1,000"),
        ({"instance_ready_timeout_seconds": math.nan}, "must be a finite number of seconds or None"),
        ({"instance_ready_timeout_seconds": math.inf}, "must be a finite number of seconds or None"),
        ({"instance_ready_timeout_seconds": "60"}, "must be a finite number of seconds or None"),
        ({"uid": "\ud800"}, "uid must be a str of valid Unicode (no lone surrogates)"),
    ],
)
def test_preview_refuses_values_past_its_bounds_with_a_typed_error(
    kwargs: dict[str, Any], message: str
) -> None:
    replica, catalog = _example()
    with pytest.raises(InvalidArgumentError, match=re.escape(message)):
        preview(replica, catalog, **kwargs)


def test_preview_takes_the_cap_and_finite_timeouts() -> None:
    replica, catalog = _example()
    assert len(preview(replica, catalog, instances=MAX_INSTANCES).pods) == MAX_INSTANCES
    assert preview(replica, catalog, instance_ready_timeout_seconds=1e308, uid="é-✓").revision.name
    with pytest.raises(InvalidArgumentError, match="revision_of"):
        revision_of(render(replica, catalog), uid="\udfff")


# -- wrong-typed members in a runtime's legacy top-level pod fields (spec.containers, …) ---------------

LEGACY_RUNTIME = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterServingRuntime",
    "metadata": {"name": "srt-legacyres"},
    "spec": {
        "containers": [
            {"name": "other", "image": "x:1"},
            {"name": "ome-container", "image": "legacy:1", "resources": {"limits": {"cpu": "16"}}},
        ],
        "engineConfig": {"runner": {"name": "ome-container", "image": "sglang:1"}},
    },
}


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            ["containers", 1, "resources"],
            "2",
            "spec.containers[1].resources: cannot decode string into Go value of type core/v1.ResourceRequirements",
        ),
        (
            ["containers", 1, "resources", "requests"],
            {"memory": "--x={{ break }}"},
            "spec.containers[1].resources.requests.memory: quantities must match the regular expression",
        ),
        (["volumes"], [{"name": []}], "spec.volumes[0].name"),
    ],
)
def test_a_legacy_pod_field_go_cannot_decode_is_refused_naming_it(
    path: list[Any], value: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = json.loads(json.dumps(LEGACY_RUNTIME))
    holder = runtime["spec"]
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    with pytest.raises(InvalidObjectError, match=re.escape(message)):
        Catalog.from_objects([runtime])
    (tmp_path / "runtime.yaml").write_text(json.dumps(runtime))
    replica = tmp_path / "replica.yaml"
    replica.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceReplica\nmetadata: {name: legacyres, namespace: demo}\n"
        "spec: {component: engine, runtimeRef: {name: srt-legacyres}}\n"
    )
    code = main(["render", str(replica), "--objects", str(tmp_path / "runtime.yaml")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{tmp_path / 'runtime.yaml'}: ClusterServingRuntime srt-legacyres is invalid: {message}" in err


def test_a_legacy_runtime_go_decodes_still_renders() -> None:
    replica = parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "legacyres", "namespace": "demo"},
            "spec": {"component": "engine", "runtimeRef": {"name": "srt-legacyres"}},
        },
    )
    pods = preview(replica, Catalog.from_objects([LEGACY_RUNTIME]), instances=1).pods
    assert pods[0]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "16"}


# -- messages in our words: what the field must be and what it got, not jsonschema's or pydantic's ------


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"spec": {"component": "engine", "modelRef": 2147483647}},
            "spec.modelRef: must be of type object, got integer 2147483647",
        ),
        ({"spec": {"component": ["engine"]}}, "spec.component: must be of type string, got array of 1 item"),
        (
            {"spec": {"component": "engin"}},
            'spec.component: must be one of "engine", "decoder", "router", got string \'engin\'',
        ),
        (
            {"metadata": {"name": "a", "namespace": "d", "uid": 5}},
            "metadata.uid: must be of type string, got integer 5",
        ),
        ({"metadata": [None]}, "metadata: must be of type object, got array of 1 item"),
        (
            {"spec": {"component": "engine", "topologySpread": "q"}},
            'spec.topologySpread: must be one of "Preferred", "Required", got string \'q\'',
        ),
    ],
)
def test_schema_problems_say_what_the_field_must_be_in_our_words(
    change: dict[str, Any], message: str
) -> None:
    obj = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "a", "namespace": "d"},
        "spec": {"component": "engine"},
    } | change
    with pytest.raises(InvalidObjectError) as caught:
        parse_object(InferenceReplica, obj)
    text = str(caught.value)
    assert message in text
    for leak in ("is not of type", "Input should be", "is not one of", "None", "True"):
        assert leak not in text


# -- a ConfigMap whose data values are not strings (a caller's dict; the API server holds strings) -------


@pytest.mark.parametrize("value", [4.9e-325, ["a"], True, {"controllerIdentity": {}}])
def test_configmap_values_that_are_not_strings_are_a_settings_error(value: Any) -> None:
    for key in ("lifecycle", "inferenceReplica"):
        with pytest.raises(SettingsError, match=f"{key}: a ConfigMap's data values are strings"):
            settings_from_configmap({key: value})
    with pytest.raises(IdentityConfigError, match="the value must be a string"):
        parse_identity_config(value)


def test_the_webhook_answers_a_review_when_the_configmap_holds_a_float() -> None:
    configmap = yaml.safe_load(_configmap("inferenceReplica", "{}"))
    configmap["data"]["inferenceReplica"] = 4.9e-325
    reader = ClusterReader(_Kube([configmap]), ome_namespace="ome")  # type: ignore[arg-type]
    replica = yaml.safe_load(REPLICA)
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u1", "operation": "CREATE", "userInfo": {"username": "alice"}, "object": replica},
    }
    response = reader.handle(parse_review(json.dumps(body).encode()))["response"]
    assert response["uid"] == "u1"
    assert isinstance(response["allowed"], bool)
