"""Typed models: camelCase on the wire, unknown fields tolerated, wrong types rejected with an error
that names the object and every failing field path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from omerender.errors import FieldProblem, InvalidObjectError, OmeRenderError
from omerender.models import (
    FineTunedWeight,
    InferenceReplica,
    ModelResource,
    RuntimeResource,
    parse_object,
)


def replica_obj(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": "demo"},
        "spec": {"component": "engine", **spec},
    }


def problems(model: type[Any], obj: Any) -> InvalidObjectError:
    with pytest.raises(InvalidObjectError) as info:
        parse_object(model, obj, strict=False)  # the models' own (Go decoding) checks
    assert isinstance(info.value, OmeRenderError)
    return info.value


# -- wrong types ---------------------------------------------------------------------------------


def test_wrong_types_name_the_object_and_every_field_path() -> None:
    error = problems(
        InferenceReplica, replica_obj(replicas="three", runners=[{"name": "default", "size": 0}])
    )
    assert (error.kind, error.namespace, error.name) == ("InferenceReplica", "demo", "pool")
    assert {p.path for p in error.problems} == {"spec.replicas", "spec.runners[0].size"}
    text = str(error)
    assert text.startswith("InferenceReplica demo/pool is invalid: ")
    assert "spec.replicas: " in text
    assert "spec.runners[0].size: " in text


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"component": "worker"}, "spec.component"),
        ({"runners": [{"name": "sidecar"}]}, "spec.runners[0].name"),
        ({"modelRef": {"kind": "ClusterBaseModel"}}, "spec.modelRef.name"),
        ({"modelRef": {"name": "m", "fineTunedWeights": "ft"}}, "spec.modelRef.fineTunedWeights"),
        ({"runtimeRef": {"name": "rt", "autoSync": "maybe"}}, "spec.runtimeRef.autoSync"),
        ({"pairingProtocol": "-bad-"}, "spec.pairingProtocol"),
        ({"topologySpread": "Sometimes"}, "spec.topologySpread"),
        ({"parentRef": {"name": ""}}, "spec.parentRef.name"),
        ({"minReadySeconds": -1}, "spec.minReadySeconds"),
    ],
)
def test_replica_field_paths(spec: dict[str, Any], path: str) -> None:
    error = problems(InferenceReplica, replica_obj(**spec))
    assert path in {p.path for p in error.problems}


def test_missing_spec_and_component() -> None:
    obj = replica_obj()
    del obj["spec"]["component"]
    assert [p.path for p in problems(InferenceReplica, obj).problems] == ["spec.component"]
    del obj["spec"]
    assert [p.path for p in problems(InferenceReplica, obj).problems] == ["spec"]


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"modelFormat": {"name": "safetensors", "version": 1.0}}, "spec.modelFormat.version"),
        ({"modelFormat": {"name": "x", "operator": "LessThan"}}, "spec.modelFormat.operator"),
        ({"modelParameterSize": 7}, "spec.modelParameterSize"),
        ({"storage": {"path": ["/a"]}}, "spec.storage.path"),
        ({"disabled": "nope"}, "spec.disabled"),
    ],
)
def test_model_field_paths(spec: dict[str, Any], path: str) -> None:
    obj = {"kind": "ClusterBaseModel", "metadata": {"name": "m"}, "spec": spec}
    error = problems(ModelResource, obj)
    assert (error.kind, error.name, error.namespace) == ("ClusterBaseModel", "m", None)
    assert [p.path for p in error.problems] == [path]
    assert str(error).startswith(f"ClusterBaseModel m is invalid: {path}: ")


@pytest.mark.parametrize(
    ("spec", "path"),
    [
        ({"supportedModelFormats": {"modelFormat": {}}}, "spec.supportedModelFormats"),
        (
            {"supportedModelFormats": [{"autoSelect": "yes please"}]},
            "spec.supportedModelFormats[0].autoSelect",
        ),
        ({"supportedModelFormats": [{"priority": "high"}]}, "spec.supportedModelFormats[0].priority"),
        ({"modelSizeRange": {"min": 1}}, "spec.modelSizeRange.min"),
        ({"engineConfig": ["runner"]}, "spec.engineConfig"),
        ({"nodeSelector": {"pool": 3}}, "spec.nodeSelector.pool"),
    ],
)
def test_runtime_field_paths(spec: dict[str, Any], path: str) -> None:
    obj = {"kind": "ServingRuntime", "metadata": {"name": "rt", "namespace": "team"}, "spec": spec}
    error = problems(RuntimeResource, obj)
    assert (error.kind, error.name, error.namespace) == ("ServingRuntime", "rt", "team")
    assert [p.path for p in error.problems] == [path]


def test_wrong_kind_is_named() -> None:
    error = problems(ModelResource, {"kind": "ServingRuntime", "metadata": {"name": "x"}})
    assert [p.path for p in error.problems] == ["kind"]
    assert str(error).startswith("ServingRuntime x is invalid: kind: ")


def test_not_an_object_at_all() -> None:
    error = problems(FineTunedWeight, ["not", "a", "mapping"])
    assert error.name == ""
    assert str(error).startswith("FineTunedWeight <unnamed> is invalid: <object>: ")


def test_field_problem_text() -> None:
    assert str(FieldProblem("spec.replicas", "must be an integer")) == "spec.replicas: must be an integer"


# -- unknown fields ------------------------------------------------------------------------------


def test_unknown_fields_are_tolerated_and_kept_without_strict() -> None:
    model = parse_object(
        ModelResource,
        {
            "apiVersion": "ome.io/v1beta2",
            "kind": "ClusterBaseModel",
            "metadata": {"name": "m", "managedFields": [{"manager": "x"}]},
            "spec": {
                "modelFormat": {"name": "safetensors", "futureFlag": True},
                "storage": {"path": "/m", "checksum": "sha256:…"},
                "modelCapabilities": ["text-to-text", "not-in-any-enum"],
                "brandNewField": {"nested": [1, 2]},
            },
            "status": {"state": "Ready", "nodesReady": ["gpu-0"]},
        },
        strict=False,
    )
    assert model.is_ready
    dumped = model.model_dump(by_alias=True)
    assert dumped["spec"]["brandNewField"] == {"nested": [1, 2]}
    assert dumped["spec"]["modelFormat"]["futureFlag"] is True
    assert dumped["spec"]["storage"]["checksum"] == "sha256:…"
    assert dumped["metadata"]["managedFields"] == [{"manager": "x"}]
    assert dumped["status"]["nodesReady"] == ["gpu-0"]


def test_unknown_runtime_and_replica_fields_are_tolerated_without_strict() -> None:
    runtime = parse_object(
        RuntimeResource,
        {
            "kind": "ClusterServingRuntime",
            "metadata": {"name": "rt"},
            "spec": {
                "supportedModelFormats": [{"modelFormat": {"name": "x"}, "acceleratorConfig": {"a100": {}}}],
                "acceleratorRequirements": {"acceleratorClasses": ["a100"]},
                "workers": {"size": 2},
                "engineConfig": {"runner": {"name": "c"}, "somethingNew": 1},
            },
        },
        strict=False,
    )
    assert runtime.piece("engine") == {"runner": {"name": "c"}, "somethingNew": 1}
    replica = parse_object(
        InferenceReplica, replica_obj(futureKnob={"on": True}, lifecycle={"newPolicy": "x"}), strict=False
    )
    assert replica.spec.model_extra == {"futureKnob": {"on": True}}


# -- shape and helpers ---------------------------------------------------------------------------


def test_camel_case_aliases_and_snake_case_names() -> None:
    replica = parse_object(
        InferenceReplica,
        replica_obj(
            modelRef={"name": "m", "fineTunedWeights": ["ft"]}, runtimeRef={"name": "rt", "autoSync": True}
        ),
    )
    assert replica.spec.model_ref is not None
    assert replica.spec.model_ref.fine_tuned_weights == ("ft",)
    assert replica.spec.runtime_ref is not None
    assert replica.spec.runtime_ref.auto_sync is True
    again = InferenceReplica.model_validate(replica.model_dump())  # snake_case input works too
    assert again == replica


def test_models_are_immutable() -> None:
    replica = parse_object(InferenceReplica, replica_obj())
    with pytest.raises(ValidationError):
        replica.spec.replicas = 3  # type: ignore[misc]


@pytest.mark.parametrize(("replicas", "effective"), [(None, 1), (0, 1), (1, 1), (5, 5)])
def test_unset_or_zero_replicas_run_one_instance(replicas: int | None, effective: int) -> None:
    spec = {} if replicas is None else {"replicas": replicas}
    assert parse_object(InferenceReplica, replica_obj(**spec)).spec.effective_replicas == effective


def test_name_prefix_and_namespace() -> None:
    standalone = parse_object(InferenceReplica, replica_obj())
    assert standalone.name_prefix == "pool"
    projected = parse_object(InferenceReplica, replica_obj(parentRef={"name": "chat"}))
    assert projected.name_prefix == "chat"
    obj = replica_obj()
    del obj["metadata"]["namespace"]
    assert parse_object(InferenceReplica, obj).namespace == "default"


def test_ref_kinds_default() -> None:
    replica = parse_object(InferenceReplica, replica_obj(modelRef={"name": "m"}, runtimeRef={"name": "rt"}))
    assert replica.spec.model_ref is not None
    assert replica.spec.model_ref.effective_kind == "ClusterBaseModel"
    assert replica.spec.runtime_ref is not None
    assert replica.spec.runtime_ref.effective_kind == "ClusterServingRuntime"


def test_model_and_runtime_helpers() -> None:
    model = parse_object(
        ModelResource,
        {"kind": "BaseModel", "metadata": {"name": "m"}, "spec": {"disabled": True}},
        strict=False,
    )
    assert model.is_disabled
    assert not model.is_ready
    runtime = parse_object(
        RuntimeResource,
        {"kind": "ServingRuntime", "metadata": {"name": "r"}, "spec": {"decoderConfig": {"runner": {}}}},
        strict=False,
    )
    assert runtime.piece("decoder") == {"runner": {}}
    assert runtime.piece("engine") is None
    assert runtime.piece("sidecar") is None
    assert not runtime.is_disabled


# -- strictness: the CLI's checks, in the library --------------------------------------------------


def _seed_replica() -> dict[str, Any]:
    import yaml

    root = Path(__file__).resolve().parents[2]
    loaded: dict[str, Any] = yaml.safe_load((root / "examples" / "llama-pool.yaml").read_text())
    return loaded


def test_strict_parse_refuses_what_the_api_server_refuses_listing_every_problem() -> None:
    obj = _seed_replica()
    obj["metadata"]["name"] = "Bad_Name"
    obj["spec"]["replcias"] = 2
    error = problems_strict(InferenceReplica, obj)
    assert str(error) == (
        "InferenceReplica llama-demo/Bad_Name is invalid: metadata.name: 'Bad_Name' is not a DNS-1123 "
        "subdomain; use lowercase letters, digits, '-' and '.', starting and ending with a letter or "
        "digit; spec.replcias: is not a known field; remove it or check its spelling against the CRD"
    )
    assert [p.path for p in error.problems] == ["metadata.name", "spec.replcias"]
    lenient = parse_object(InferenceReplica, obj, strict=False)
    assert lenient.metadata.name == "Bad_Name"


def problems_strict(model: type[Any], obj: Any) -> InvalidObjectError:
    with pytest.raises(InvalidObjectError) as info:
        parse_object(model, obj)
    return info.value


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda o: o.__setitem__("apiVersion", "ome.io/v1alpha9"),
            "apiVersion: 'ome.io/v1alpha9' is not served",
        ),
        (lambda o: o["spec"].pop("component"), "spec.component: is required"),
        (lambda o: o["metadata"].__setitem__("name", "x" * 64), "ome.io/inferenceservice label"),
        (lambda o: o["metadata"].__setitem__("namespace", "Team_A"), "metadata.namespace: 'Team_A'"),
    ],
)
def test_strict_parse_checks_version_required_fields_and_derived_names(edit: Any, expected: str) -> None:
    obj = _seed_replica()
    edit(obj)
    assert expected in str(problems_strict(InferenceReplica, obj))


def test_strict_parse_of_catalog_kinds_and_status_left_to_the_controller() -> None:
    model = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": "m"},
        "spec": {"modelFormat": {"name": "safetensors"}, "modelFromat": {}},
        # status is the controller's: the API server drops it from a create, so it is not checked
        "status": {"state": "SomethingNew"},
    }
    error = problems_strict(ModelResource, model)
    assert [p.path for p in error.problems] == ["spec.modelFromat"]
    del model["spec"]["modelFromat"]
    assert parse_object(ModelResource, model).status is not None
