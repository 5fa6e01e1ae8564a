"""Runtime inheritance through ``ome.io/inherit-from`` (01 §2.4; OME pkg/runtimeinheritance)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omerender.catalog import Catalog
from omerender.inheritance import (
    MAX_DEPTH,
    InheritanceError,
    InheritanceReason,
    ResolvedRuntime,
    Resolver,
    resolve_runtime,
)
from omerender.models import RuntimeResource

CSR = "ClusterServingRuntime"
SR = "ServingRuntime"
NS = "llama-demo"


def _rt(
    name: str,
    parent: str | None = None,
    *,
    kind: str = CSR,
    spec: dict[str, Any] | None = None,
    profile: bool = False,
    namespace: str | None = None,
) -> dict[str, Any]:
    annotations: dict[str, str] = {}
    if parent is not None:
        annotations["ome.io/inherit-from"] = parent
    if profile:
        annotations["ome.io/runtime-profile"] = "true"
    metadata: dict[str, Any] = {"name": name, "annotations": annotations}
    if kind == SR:
        metadata["namespace"] = namespace or NS
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec or {}}


def _get(catalog: Catalog, name: str, kind: str = CSR) -> RuntimeResource:
    found = catalog.runtime(kind, "" if kind == CSR else NS, name)
    assert found is not None
    return found


def _env(runner: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in runner.get("env", [])}


def _chain(depth: int) -> list[dict[str, Any]]:
    """``n0`` (root) <- ``n1`` <- … <- ``n{depth-1}``; each adds one env var to the engine runner."""
    objects = []
    for i in range(depth):
        spec = {
            "engineConfig": {"runner": {"name": "ome-container", "env": [{"name": f"N{i}", "value": str(i)}]}}
        }
        objects.append(_rt(f"n{i}", f"n{i - 1}" if i else None, spec=spec))
    return objects


# -- resolution ----------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5])
def test_chains_up_to_max_depth_resolve_root_first(depth: int) -> None:
    catalog = Catalog.from_objects(_chain(depth))
    leaf = _get(catalog, f"n{depth - 1}")
    resolved = resolve_runtime(leaf, catalog)
    assert resolved.chain_names == tuple(f"n{i}" for i in range(depth))
    assert resolved.chain[-1] is leaf
    runner = resolved.spec["engineConfig"]["runner"]
    # Keyed env merge: the child's items first, so the leaf's own var leads, the root's ends.
    assert [e["name"] for e in runner["env"]] == [f"N{i}" for i in reversed(range(depth))]
    assert resolved.runtime.spec.engine_config == resolved.spec["engineConfig"]


def test_max_depth_is_five() -> None:
    assert MAX_DEPTH == 5


def test_sixth_runtime_is_max_depth_exceeded() -> None:
    catalog = Catalog.from_objects(_chain(6))
    leaf = _get(catalog, "n5")
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(leaf, catalog)
    err = info.value
    assert err.reason is InheritanceReason.MAX_DEPTH_EXCEEDED
    assert err.reason.value == "MaxDepthExceeded"
    assert err.message.startswith("inheritance chain exceeds max depth 5")
    assert err.message == "inheritance chain exceeds max depth 5 (chain: [n5 n4 n3 n2 n1])"
    assert err.chain == ("n5", "n4", "n3", "n2", "n1")
    assert err.parent == "n0"
    assert err.runtime is leaf


def test_depth_is_checked_before_the_missing_parent() -> None:
    objects = _chain(5)
    objects[0] = _rt("n0", "ghost")
    catalog = Catalog.from_objects(objects)
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "n4"), catalog)
    assert info.value.reason == InheritanceReason.MAX_DEPTH_EXCEEDED


def test_self_cycle() -> None:
    catalog = Catalog.from_objects([_rt("a", "a")])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "a"), catalog)
    err = info.value
    assert err.reason is InheritanceReason.INHERITANCE_CYCLE
    assert err.reason.value == "InheritanceCycle"
    assert err.message == "inheritance cycle detected: [a a]"
    assert err.chain == ("a", "a")
    assert err.parent == "a"


def test_longer_cycle_ends_with_the_repeated_name() -> None:
    catalog = Catalog.from_objects([_rt("a", "b"), _rt("b", "c"), _rt("c", "a")])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "a"), catalog)
    assert info.value.message == "inheritance cycle detected: [a b c a]"
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "b"), catalog)
    assert info.value.message == "inheritance cycle detected: [b c a b]"


def test_cycle_entered_above_the_named_runtime() -> None:
    catalog = Catalog.from_objects([_rt("leaf", "a"), _rt("a", "b"), _rt("b", "a")])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "leaf"), catalog)
    assert info.value.message == "inheritance cycle detected: [leaf a b a]"


def test_missing_parent_names_the_chain_so_far() -> None:
    catalog = Catalog.from_objects([_rt("child", "mid"), _rt("mid", "sglang-profile")])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "child"), catalog)
    err = info.value
    assert err.reason is InheritanceReason.PARENT_NOT_FOUND
    assert err.reason.value == "ParentNotFound"
    assert err.message == 'inherit-from parent "sglang-profile" not found (chain so far: [child mid])'
    assert err.parent == "sglang-profile"
    assert err.chain == ("child", "mid")


def test_missing_direct_parent_message_matches_ome_docs() -> None:
    catalog = Catalog.from_objects([_rt("sglang-llama-3-2-3b", "sglang-profile", kind=SR)])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "sglang-llama-3-2-3b", SR), catalog)
    assert str(info.value) == (
        'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
    )


def test_runtime_without_parent_resolves_to_itself() -> None:
    catalog = Catalog.from_objects(
        [_rt("solo", spec={"disabled": True, "engineConfig": {"runner": {"name": "x"}}})]
    )
    solo = _get(catalog, "solo")
    resolved = resolve_runtime(solo, catalog)
    assert resolved.runtime is solo
    assert resolved.chain == (solo,)
    assert resolved.spec == {"disabled": True, "engineConfig": {"runner": {"name": "x"}}}


def test_empty_annotation_means_no_parent() -> None:
    catalog = Catalog.from_objects([_rt("solo", "")])
    assert resolve_runtime(_get(catalog, "solo"), catalog).chain_names == ("solo",)


# -- scope of parent lookups ---------------------------------------------------------------------


def test_serving_runtime_falls_back_to_cluster_parent() -> None:
    catalog = Catalog.from_objects(
        [
            _rt("base", kind=CSR, spec={"engineConfig": {"runner": {"name": "c", "image": "cluster"}}}),
            _rt("child", "base", kind=SR, spec={"engineConfig": {"runner": {"name": "c", "args": ["--x"]}}}),
        ]
    )
    resolved = resolve_runtime(_get(catalog, "child", SR), catalog)
    assert [rt.kind for rt in resolved.chain] == [CSR, SR]
    assert resolved.spec["engineConfig"]["runner"] == {"name": "c", "image": "cluster", "args": ["--x"]}


def test_serving_runtime_prefers_parent_in_its_namespace() -> None:
    catalog = Catalog.from_objects(
        [
            _rt("base", kind=CSR, spec={"engineConfig": {"runner": {"name": "c", "image": "cluster"}}}),
            _rt("base", kind=SR, spec={"engineConfig": {"runner": {"name": "c", "image": "namespaced"}}}),
            _rt("base", kind=SR, namespace="other", spec={"engineConfig": {"runner": {"image": "other"}}}),
            _rt("child", "base", kind=SR),
        ]
    )
    resolved = resolve_runtime(_get(catalog, "child", SR), catalog)
    assert [rt.kind for rt in resolved.chain] == [SR, SR]
    assert resolved.spec["engineConfig"]["runner"]["image"] == "namespaced"


def test_serving_runtime_never_inherits_from_another_namespace() -> None:
    catalog = Catalog.from_objects([_rt("base", kind=SR, namespace="other"), _rt("child", "base", kind=SR)])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "child", SR), catalog)
    assert info.value.reason == InheritanceReason.PARENT_NOT_FOUND


def test_cluster_runtime_parents_are_cluster_runtimes_only() -> None:
    catalog = Catalog.from_objects([_rt("base", kind=SR), _rt("child", "base", kind=CSR)])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "child"), catalog)
    assert info.value.message == 'inherit-from parent "base" not found (chain so far: [child])'


def test_serving_runtime_naming_a_cluster_runtime_of_its_own_name_is_a_cycle() -> None:
    catalog = Catalog.from_objects([_rt("x", kind=CSR), _rt("x", "x", kind=SR)])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "x", SR), catalog)
    assert info.value.message == "inheritance cycle detected: [x x]"


def test_namespaced_lookup_continues_above_a_cluster_ancestor() -> None:
    # One lookup context per chain: the ServingRuntime's namespace is searched first at every link.
    catalog = Catalog.from_objects(
        [
            _rt("leaf", "mid", kind=SR),
            _rt("mid", "top", kind=CSR),
            _rt("top", kind=SR, spec={"engineConfig": {"runner": {"name": "c", "image": "ns-top"}}}),
            _rt("top", kind=CSR, spec={"engineConfig": {"runner": {"name": "c", "image": "cluster-top"}}}),
        ]
    )
    resolved = resolve_runtime(_get(catalog, "leaf", SR), catalog)
    assert [(rt.kind, rt.metadata.name) for rt in resolved.chain] == [(SR, "top"), (CSR, "mid"), (SR, "leaf")]
    assert resolved.spec["engineConfig"]["runner"]["image"] == "ns-top"
    # Resolved from the cluster runtime itself, the same name is a cluster runtime.
    assert (
        resolve_runtime(_get(catalog, "mid"), catalog).spec["engineConfig"]["runner"]["image"]
        == "cluster-top"
    )


# -- the effective spec --------------------------------------------------------------------------

PROFILE_SPEC: dict[str, Any] = {
    "disabled": True,
    "modelSizeRange": {"min": "1B", "max": "8B"},
    "protocolVersions": ["openAI"],
    "engineConfig": {
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        "runner": {
            "name": "ome-container",
            "image": "docker.io/lmsysorg/sglang:v0.5.5",
            "command": ["python3", "-m", "sglang.launch_server", "--served-model-name={{.Name}}"],
            "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
            "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
        },
    },
    "routerConfig": {"runner": {"name": "router", "image": "router:1"}, "config": {"policy": "rr"}},
}

CHILD_SPEC: dict[str, Any] = {
    "disabled": False,
    "supportedModelFormats": [
        {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, "autoSelect": False}
    ],
    "modelSizeRange": {"max": "4B"},
    "protocolVersions": [],
    "engineConfig": {
        "tolerations": [],
        "runner": {
            "name": "ome-container",
            "image": "",
            "args": ["--tp-size=1", "--mem-frac=0.9"],
            "env": [{"name": "NCCL_DEBUG", "value": "TRACE"}, {"name": "EXTRA", "value": "1"}],
            "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
        },
    },
}


def _profile_catalog(child_spec: dict[str, Any] | None = None) -> Catalog:
    return Catalog.from_objects(
        [
            _rt("sglang-profile", kind=CSR, spec=copy.deepcopy(PROFILE_SPEC), profile=True),
            _rt("sglang-llama", "sglang-profile", kind=SR, spec=copy.deepcopy(child_spec or CHILD_SPEC)),
        ]
    )


def test_profile_and_child_effective_spec() -> None:
    catalog = _profile_catalog()
    child = _get(catalog, "sglang-llama", SR)
    resolved = resolve_runtime(child, catalog)
    spec = resolved.spec
    assert resolved.chain_names == ("sglang-profile", "sglang-llama")
    assert spec["disabled"] is False
    assert spec["modelSizeRange"] == {"min": "1B", "max": "4B"}
    assert spec["protocolVersions"] == ["openAI"]  # [] in the child is unset
    assert spec["supportedModelFormats"] == CHILD_SPEC["supportedModelFormats"]
    engine = spec["engineConfig"]
    assert engine["tolerations"] == PROFILE_SPEC["engineConfig"]["tolerations"]
    assert engine["volumes"] == PROFILE_SPEC["engineConfig"]["volumes"]
    runner = engine["runner"]
    assert runner["image"] == "docker.io/lmsysorg/sglang:v0.5.5"  # "" in the child is unset
    assert runner["command"] == PROFILE_SPEC["engineConfig"]["runner"]["command"]
    assert runner["args"] == ["--tp-size=1", "--mem-frac=0.9"]
    assert _env(runner) == {"NCCL_DEBUG": "TRACE", "EXTRA": "1"}
    assert runner["ports"] == PROFILE_SPEC["engineConfig"]["runner"]["ports"]
    assert runner["volumeMounts"] == [{"name": "dshm", "mountPath": "/dev/shm"}]
    assert runner["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    # The typed runtime carries the same effective spec and keeps the child's own metadata.
    rt = resolved.runtime
    assert rt.kind == SR
    assert rt.metadata == child.metadata
    assert rt.metadata.annotations == {"ome.io/inherit-from": "sglang-profile"}
    assert rt.spec.model_size_range is not None
    assert (rt.spec.model_size_range.min, rt.spec.model_size_range.max) == ("1B", "4B")
    assert rt.spec.protocol_versions == ("openAI",)
    assert rt.spec.supported_model_formats[0].model_format is not None
    assert rt.spec.supported_model_formats[0].model_format.name == "safetensors"
    assert rt.spec.disabled is False


def test_piece_inherited_only_from_parent_is_present() -> None:
    catalog = _profile_catalog()
    child = _get(catalog, "sglang-llama", SR)
    assert child.piece("router") is None
    resolved = resolve_runtime(child, catalog)
    assert resolved.runtime.piece("router") == PROFILE_SPEC["routerConfig"]
    assert resolved.spec["routerConfig"] == PROFILE_SPEC["routerConfig"]


def test_unknown_fields_are_inherited_too() -> None:
    catalog = Catalog.from_objects(
        [
            _rt("base", spec={"acceleratorRequirements": {"acceleratorClasses": ["a100"]}, "futureField": 1}),
            _rt("child", "base", spec={"futureField": 2}),
        ],
        strict=False,  # fields newer than the CRD shipped here, as a newer cluster may hold
    )
    resolved = resolve_runtime(_get(catalog, "child"), catalog)
    assert resolved.spec == {"acceleratorRequirements": {"acceleratorClasses": ["a100"]}, "futureField": 2}
    assert resolved.runtime.spec.model_extra == {
        "acceleratorRequirements": {"acceleratorClasses": ["a100"]},
        "futureField": 2,
    }


def test_absent_fields_stay_absent() -> None:
    catalog = Catalog.from_objects(
        [_rt("base", spec={"engineConfig": {"runner": {"name": "x"}}}), _rt("c", "base")]
    )
    resolved = resolve_runtime(_get(catalog, "c"), catalog)
    assert resolved.spec == {"engineConfig": {"runner": {"name": "x"}}}
    assert "disabled" not in resolved.runtime.spec.model_fields_set


# -- disabled -------------------------------------------------------------------------------------


def test_disabled_is_inherited_by_default_as_ome_does() -> None:
    spec = copy.deepcopy(CHILD_SPEC)
    del spec["disabled"]
    catalog = _profile_catalog(spec)
    resolved = resolve_runtime(_get(catalog, "sglang-llama", SR), catalog)
    assert resolved.spec["disabled"] is True
    assert resolved.runtime.is_disabled


def test_disabled_not_inherited_when_asked() -> None:
    spec = copy.deepcopy(CHILD_SPEC)
    del spec["disabled"]
    catalog = _profile_catalog(spec)
    resolved = resolve_runtime(_get(catalog, "sglang-llama", SR), catalog, inherit_disabled=False)
    assert "disabled" not in resolved.spec
    assert not resolved.runtime.is_disabled
    # The named runtime's own value is kept either way.
    catalog = _profile_catalog()
    for inherit in (True, False):
        resolved = resolve_runtime(_get(catalog, "sglang-llama", SR), catalog, inherit_disabled=inherit)
        assert resolved.spec["disabled"] is False


def test_disabled_child_of_enabled_parent_stays_disabled() -> None:
    catalog = Catalog.from_objects(
        [_rt("base", spec={"disabled": False}), _rt("c", "base", spec={"disabled": True})]
    )
    for inherit in (True, False):
        assert resolve_runtime(_get(catalog, "c"), catalog, inherit_disabled=inherit).runtime.is_disabled


# -- profile rule ---------------------------------------------------------------------------------

PROFILE_MESSAGE = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'


@pytest.mark.parametrize("spec", [{}, {"disabled": False}])
def test_profile_without_disabled_true_is_rejected(spec: dict[str, Any]) -> None:
    catalog = Catalog.from_objects([_rt("p", spec=spec, profile=True)])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "p"), catalog)
    err = info.value
    assert err.reason is InheritanceReason.PROFILE_NOT_DISABLED
    assert err.reason.value == "ProfileNotDisabled"
    assert err.message == PROFILE_MESSAGE
    assert err.chain == ("p",)
    assert err.parent is None


def test_profile_rule_is_checked_before_the_chain() -> None:
    catalog = Catalog.from_objects([_rt("p", "ghost", profile=True)])
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "p"), catalog)
    assert info.value.reason == InheritanceReason.PROFILE_NOT_DISABLED


def test_disabled_profile_resolves() -> None:
    catalog = _profile_catalog()
    resolved = resolve_runtime(_get(catalog, "sglang-profile"), catalog)
    assert resolved.chain_names == ("sglang-profile",)


def test_profile_rule_applies_to_the_named_runtime_only() -> None:
    # A broken profile fails itself, not its children (OME's InheritanceReady has no reason for it).
    catalog = Catalog.from_objects(
        [_rt("p", spec={"image": "x"}, profile=True), _rt("c", "p", spec={"disabled": False})],
        strict=False,  # a broken profile as a cluster may hold it
    )
    assert resolve_runtime(_get(catalog, "c"), catalog).chain_names == ("p", "c")
    with pytest.raises(InheritanceError):
        resolve_runtime(_get(catalog, "p"), catalog)


def test_profile_marker_is_not_inherited() -> None:
    catalog = _profile_catalog()
    resolved = resolve_runtime(_get(catalog, "sglang-llama", SR), catalog)
    assert "ome.io/runtime-profile" not in resolved.runtime.metadata.annotations


# -- merge failures -------------------------------------------------------------------------------


def test_merge_failure_is_a_resolver_error() -> None:
    # LocalObjectReference.name is omitempty: a nameless pull secret has no merge key and the strategic
    # merge refuses it (an env var without a name would be written "name":"" and merge).
    catalog = Catalog.from_objects(
        [
            _rt("base", spec={"engineConfig": {"imagePullSecrets": [{"name": "a"}]}}),
            _rt("child", "base", spec={"engineConfig": {"imagePullSecrets": [{}]}}),
        ]
    )
    with pytest.raises(InheritanceError) as info:
        resolve_runtime(_get(catalog, "child"), catalog)
    err = info.value
    assert err.reason == InheritanceReason.RESOLVER_ERROR
    assert err.message == (
        "merge child onto effective: spec.engineConfig.imagePullSecrets[0]: "
        "list item does not contain declared merge key: name"
    )
    assert err.chain == ("child", "base")


# -- caching, purity --------------------------------------------------------------------------------


def test_resolver_caches_catalog_runtimes() -> None:
    catalog = _profile_catalog()
    resolver = Resolver(catalog)
    child = _get(catalog, "sglang-llama", SR)
    first = resolver.resolve(child)
    assert resolver.resolve(child) is first
    assert resolver.catalog is catalog
    assert isinstance(first, ResolvedRuntime)


def test_resolver_caches_failures_and_raises_them_again() -> None:
    catalog = Catalog.from_objects([_rt("a", "a")])
    resolver = Resolver(catalog)
    messages = []
    for _ in range(2):
        with pytest.raises(InheritanceError) as info:
            resolver.resolve(_get(catalog, "a"))
        messages.append(info.value.message)
    assert messages == ["inheritance cycle detected: [a a]"] * 2


def test_resolver_does_not_cache_runtimes_from_outside_the_catalog() -> None:
    catalog = _profile_catalog()
    resolver = Resolver(catalog)
    candidate = RuntimeResource.model_validate(
        _rt("sglang-llama", "sglang-profile", kind=SR, spec={"engineConfig": {"runner": {"image": "new"}}})
    )
    resolved = resolver.resolve(candidate)
    assert resolved.spec["engineConfig"]["runner"]["image"] == "new"
    catalog_child = resolver.resolve(_get(catalog, "sglang-llama", SR))
    assert catalog_child.spec["engineConfig"]["runner"]["image"] == "docker.io/lmsysorg/sglang:v0.5.5"
    assert resolver.resolve(candidate) is not resolved


def test_resolution_is_deterministic_and_leaves_the_catalog_untouched() -> None:
    catalog = _profile_catalog()
    child = _get(catalog, "sglang-llama", SR)
    parent = _get(catalog, "sglang-profile")
    before = [rt.model_dump(by_alias=True) for rt in (child, parent)]
    first = resolve_runtime(child, catalog)
    second = resolve_runtime(child, catalog)
    assert first.spec == second.spec
    assert first.runtime == second.runtime
    assert first.spec["engineConfig"]["runner"] is not first.runtime.spec.engine_config["runner"]  # type: ignore[index]
    first.spec["engineConfig"]["runner"]["env"].append({"name": "MUTATED"})
    first.spec["engineConfig"]["volumes"][0]["name"] = "mutated"
    assert [rt.model_dump(by_alias=True) for rt in (child, parent)] == before
    assert resolve_runtime(child, catalog).spec == second.spec


def test_heads_sharing_ancestors_merge_the_shared_part_once_with_the_same_answer() -> None:
    # n0 <- n1 <- n2 <- {n3, leaf-b}: each head's chain prefix n0..n2 is merged once per resolver.
    objects = [*_chain(4), _rt("leaf-b", "n2", spec={"engineConfig": {"runner": {"image": "b"}}})]
    catalog = Catalog.from_objects(objects)
    shared = Resolver(catalog)
    names = ["n3", "leaf-b", "n2", "n1"]
    remembered = [shared.resolve(_get(catalog, name)) for name in names]
    fresh = [Resolver(Catalog.from_objects(objects)).resolve(_get(catalog, name)) for name in names]
    assert [r.spec for r in remembered] == [r.spec for r in fresh]
    assert [r.runtime.spec for r in remembered] == [r.runtime.spec for r in fresh]
    # Prefixes n0..n1, n0..n2, n0..n3, n0..n2+leaf-b: one entry each.
    assert len(shared.memory.merged) == 4
    # A head from outside the catalog is merged, not remembered; its ancestors' prefixes serve it.
    candidate = RuntimeResource.model_validate(
        _rt("leaf-c", "n2", spec={"engineConfig": {"runner": {"image": "c"}}})
    )
    assert shared.resolve(candidate).spec["engineConfig"]["runner"]["image"] == "c"
    assert len(shared.memory.merged) == 4
