"""The catalog: an immutable snapshot with lookups by kind and scope (DECISIONS §3.1)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from omerender.catalog import Catalog
from omerender.errors import InvalidObjectError
from omerender.models import InferenceReplica, parse_object


def obj(kind: str, name: str, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def rt(name: str, namespace: str | None = None, image: str = "i") -> dict[str, Any]:
    kind = "ServingRuntime" if namespace else "ClusterServingRuntime"
    return obj(kind, name, namespace, engineConfig={"runner": {"name": "ome-container", "image": image}})


def image(runtime: Any) -> str:
    return str(runtime.spec.engine_config["runner"]["image"])


# -- models --------------------------------------------------------------------------------------


def test_models_by_kind_without_fallback_between_kinds() -> None:
    catalog = Catalog.from_objects([obj("ClusterBaseModel", "m"), obj("BaseModel", "b", "team-a")])
    assert catalog.model("ClusterBaseModel", "anything", "m") is not None
    assert catalog.model("BaseModel", "team-a", "m") is None
    assert catalog.model("BaseModel", "team-a", "b") is not None
    assert catalog.model("BaseModel", "team-b", "b") is None
    assert catalog.model("ClusterBaseModel", "team-a", "b") is None


def test_cluster_scoped_objects_ignore_a_stray_namespace() -> None:
    catalog = Catalog.from_objects(
        [obj("ClusterBaseModel", "m", "oops"), obj("ClusterServingRuntime", "r", "oops")]
    )
    assert catalog.model("ClusterBaseModel", "", "m") is not None
    assert catalog.runtime("ClusterServingRuntime", "other", "r") is not None


def test_namespaced_objects_without_a_namespace_live_in_default() -> None:
    catalog = Catalog.from_objects([obj("BaseModel", "b"), obj("ServingRuntime", "r")])
    assert catalog.model("BaseModel", "default", "b") is not None
    assert catalog.runtime("ServingRuntime", "default", "r") is not None


def test_model_for_follows_the_replica_ref() -> None:
    catalog = Catalog.from_objects([obj("ClusterBaseModel", "m"), obj("BaseModel", "m", "ns")])

    def replica(model_ref: dict[str, Any] | None) -> InferenceReplica:
        spec: dict[str, Any] = {"component": "engine"}
        if model_ref:
            spec["modelRef"] = model_ref
        return parse_object(InferenceReplica, {"metadata": {"name": "r", "namespace": "ns"}, "spec": spec})

    found = catalog.model_for(replica({"name": "m"}))
    assert found is not None
    assert found.kind == "ClusterBaseModel"
    found = catalog.model_for(replica({"name": "m", "kind": "BaseModel"}))
    assert found is not None
    assert found.kind == "BaseModel"
    assert catalog.model_for(replica(None)) is None


# -- runtimes ------------------------------------------------------------------------------------


def test_default_runtime_kind_prefers_cluster_then_falls_back_to_the_namespace() -> None:
    catalog = Catalog.from_objects(
        [rt("both", image="cluster"), rt("both", "ns", image="ns"), rt("local", "ns")]
    )
    for kind in (None, "", "ClusterServingRuntime"):
        both = catalog.named_runtime(kind, "ns", "both")
        assert both is not None
        assert image(both) == "cluster"
        local = catalog.named_runtime(kind, "ns", "local")
        assert local is not None
        assert local.kind == "ServingRuntime"
        assert catalog.named_runtime(kind, "other-ns", "local") is None


def test_servingruntime_kind_is_namespaced_only() -> None:
    catalog = Catalog.from_objects(
        [rt("cluster-only"), rt("both", image="cluster"), rt("both", "ns", image="ns")]
    )
    assert catalog.named_runtime("ServingRuntime", "ns", "cluster-only") is None
    both = catalog.named_runtime("ServingRuntime", "ns", "both")
    assert both is not None
    assert image(both) == "ns"


def test_runtime_indexes_are_sorted_by_name_and_scoped() -> None:
    catalog = Catalog.from_objects(
        [rt("zeta"), rt("alpha"), rt("b", "ns"), rt("a", "ns"), rt("c", "other"), rt("mid")]
    )
    assert [r.metadata.name for r in catalog.cluster_runtimes()] == ["alpha", "mid", "zeta"]
    assert [r.metadata.name for r in catalog.runtimes_in("ns")] == ["a", "b"]
    assert [r.metadata.name for r in catalog.runtimes_in("other")] == ["c"]
    assert catalog.runtimes_in("empty") == ()


# -- others --------------------------------------------------------------------------------------


def test_fine_tuned_weights_and_inference_services() -> None:
    catalog = Catalog.from_objects(
        [
            {"kind": "FineTunedWeight", "metadata": {"name": "ft"}, "spec": {}},
            {"kind": "InferenceService", "metadata": {"name": "svc", "namespace": "ns"}, "spec": {}},
        ],
        strict=False,  # minimal objects, without the apiVersion the CRD check asks for
    )
    assert catalog.fine_tuned_weight("ft") is not None
    assert catalog.fine_tuned_weight("other") is None
    assert catalog.inference_service("ns", "svc") is not None
    assert catalog.inference_service("other", "svc") is None


def test_kinds_a_render_never_reads_are_ignored() -> None:
    catalog = Catalog.from_objects(
        [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"x": 1}},
            {"kind": "AcceleratorClass", "metadata": {"name": "a100"}, "spec": "anything"},
            {"metadata": {"name": "no-kind"}},
            obj("ClusterBaseModel", "m"),
        ]
    )
    assert list(catalog.models) == [("ClusterBaseModel", "", "m")]
    assert not catalog.runtimes


@pytest.mark.parametrize(
    ("objects", "kind", "where"),
    [
        ([obj("ClusterBaseModel", "m"), obj("ClusterBaseModel", "m")], "ClusterBaseModel", "m"),
        ([rt("r", "ns"), rt("r", "ns")], "ServingRuntime", "ns/r"),
        ([rt("r"), rt("r")], "ClusterServingRuntime", "r"),
        ([{"kind": "FineTunedWeight", "metadata": {"name": "f"}}] * 2, "FineTunedWeight", "f"),
    ],
)
def test_duplicate_objects_are_an_error_naming_the_object(
    objects: list[dict[str, Any]], kind: str, where: str
) -> None:
    with pytest.raises(InvalidObjectError) as info:
        Catalog.from_objects(objects, strict=False)  # the duplicate rule alone
    assert (
        str(info.value)
        == f"{kind} {where} is invalid: metadata.name: appears twice in the objects given; keep one"
    )


def test_same_name_in_other_scopes_is_not_a_duplicate() -> None:
    catalog = Catalog.from_objects([rt("r"), rt("r", "a"), rt("r", "b"), obj("BaseModel", "r", "a")])
    assert len(catalog.runtimes) == 3
    assert len(catalog.models) == 1


def test_an_invalid_object_fails_naming_it_and_its_field() -> None:
    bad = obj("ClusterServingRuntime", "rt", supportedModelFormats=[{"priority": "high"}])
    with pytest.raises(InvalidObjectError) as info:
        Catalog.from_objects([bad], strict=False)  # Go's decoding alone (the CRD check says it too)
    assert info.value.kind == "ClusterServingRuntime"
    assert info.value.name == "rt"
    assert [p.path for p in info.value.problems] == ["spec.supportedModelFormats[0].priority"]


def test_the_catalog_is_immutable() -> None:
    catalog = Catalog.from_objects([obj("ClusterBaseModel", "m"), rt("r")])
    with pytest.raises(dataclasses.FrozenInstanceError):
        catalog.models = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        catalog.models[("ClusterBaseModel", "", "x")] = catalog.models[("ClusterBaseModel", "", "m")]  # type: ignore[index]
    with pytest.raises(TypeError):
        del catalog.runtimes[("ClusterServingRuntime", "", "r")]  # type: ignore[attr-defined]


def test_the_catalog_does_not_alias_the_objects_it_was_built_from() -> None:
    source = rt("r", image="before")
    catalog = Catalog.from_objects([source])
    source["spec"]["engineConfig"]["runner"]["image"] = "after"
    found = catalog.runtime("ClusterServingRuntime", "", "r")
    assert found is not None
    assert image(found) == "before"
