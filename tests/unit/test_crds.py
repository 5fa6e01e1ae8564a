"""The CRDs in schemas/crds: structural as the API server demands, and strict where our users need it.

Every example and golden object validates against its kind's CRD (translated by omerender.crdschema);
malformed replicas and catalog objects are rejected with the failing field named.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli.kubeschema import kube_problems
from omerender.crdschema import to_json_schema, validate_against_crd

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "schemas" / "crds"
Obj = dict[str, Any]

MINE = {
    "ome.io_basemodels.yaml": ("BaseModel", "Namespaced", []),
    "ome.io_clusterbasemodels.yaml": ("ClusterBaseModel", "Cluster", []),
    "ome.io_servingruntimes.yaml": ("ServingRuntime", "Namespaced", []),
    "ome.io_clusterservingruntimes.yaml": ("ClusterServingRuntime", "Cluster", []),
    "ome.io_finetunedweights.yaml": ("FineTunedWeight", "Cluster", []),
    "ome.io_inferenceservices.yaml": ("InferenceService", "Namespaced", ["isvc"]),
}


def load_crds() -> dict[str, Obj]:
    out = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        out[crd["spec"]["names"]["kind"]] = crd
    return out


CRDS = load_crds()


def crd_files() -> list[Path]:
    return sorted(CRD_DIR.glob("*.yaml"))


def test_every_kind_we_read_has_a_crd() -> None:
    assert set(CRDS) >= {
        "InferenceReplica",
        "BaseModel",
        "ClusterBaseModel",
        "ServingRuntime",
        "ClusterServingRuntime",
        "FineTunedWeight",
        "InferenceService",
        "PodGroup",
    }


def validate(obj: Obj) -> list[str]:
    return [f"{p.path}: {p.message}" for p in validate_against_crd(obj, CRDS[obj["kind"]])]


def failing_paths(obj: Obj) -> list[str]:
    return [p.path for p in validate_against_crd(obj, CRDS[obj["kind"]])]


# -- structure -------------------------------------------------------------------------------------------


def walk(node: Any, path: str, root: bool = False) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if not isinstance(node, Mapping):
        return
    yield path, node
    for name, sub in (node.get("properties") or {}).items():
        if root and name == "metadata":
            continue  # the API server owns ObjectMeta
        yield from walk(sub, f"{path}.{name}")
    if isinstance(node.get("items"), Mapping):
        yield from walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from walk(node["additionalProperties"], f"{path}{{}}")
    for combinator in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(node.get(combinator) or ()):
            # Structural schemas leave types out of combinator branches except for int-or-string.
            if not node.get("x-kubernetes-int-or-string"):
                yield from walk(sub, f"{path}.{combinator}[{i}]")


def structural_problems(schema: Mapping[str, Any]) -> list[str]:
    """The structural-schema rules the API server enforces on a v1 CRD that we can check offline."""
    problems = []
    for path, node in walk(schema, "<root>", root=True):
        if ".anyOf[" in path or ".allOf[" in path or ".oneOf[" in path:
            continue
        if (
            "type" not in node
            and not node.get("x-kubernetes-int-or-string")
            and not node.get("x-kubernetes-preserve-unknown-fields")
        ):
            problems.append(f"{path}: no type")
        if "properties" in node and isinstance(node.get("additionalProperties"), Mapping | bool):
            problems.append(f"{path}: properties and additionalProperties together")
        if node.get("properties") is not None and node.get("type") != "object":
            problems.append(f"{path}: properties on a non-object")
        if node.get("x-kubernetes-list-type") == "map":
            item = node.get("items") or {}
            required = set(item.get("required") or ())
            for key in node.get("x-kubernetes-list-map-keys") or ():
                has_default = "default" in (item.get("properties") or {}).get(key, {})
                if key not in required and not has_default:
                    problems.append(f"{path}: list-map key {key} is neither required nor defaulted")
        if "default" in node:
            import jsonschema

            sub = to_json_schema(node, root=False)
            if not jsonschema.Draft202012Validator(sub).is_valid(node["default"]):
                problems.append(f"{path}: default {node['default']!r} does not validate")
    return problems


@pytest.mark.parametrize("path", crd_files(), ids=lambda p: p.name)
def test_every_crd_is_a_structural_v1_crd(path: Path) -> None:
    crd = yaml.safe_load(path.read_text())
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    spec = crd["spec"]
    names = spec["names"]
    assert crd["metadata"]["name"] == f"{names['plural']}.{spec['group']}"
    assert names["singular"] == names["kind"].lower()
    assert names["listKind"] == names["kind"] + "List"
    assert path.name == f"{spec['group']}_{names['plural']}.yaml"
    assert spec["scope"] in ("Namespaced", "Cluster")
    assert [v["name"] for v in spec["versions"] if v.get("storage")] != []
    assert sum(1 for v in spec["versions"] if v.get("storage")) == 1
    for version in spec["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        assert schema["type"] == "object"
        assert structural_problems(schema) == []
        for column in version.get("additionalPrinterColumns", ()):
            assert column["type"] in ("string", "integer", "number", "boolean", "date")
            assert column["jsonPath"].startswith(".")


@pytest.mark.parametrize("name", sorted(MINE))
def test_catalog_crds_names_scope_and_subresources(name: str) -> None:
    kind, scope, short = MINE[name]
    crd = yaml.safe_load((CRD_DIR / name).read_text())
    assert crd["spec"]["group"] == "ome.io"
    assert crd["spec"]["names"]["kind"] == kind
    assert crd["spec"]["names"].get("shortNames", []) == short
    assert crd["spec"]["scope"] == scope
    (version,) = crd["spec"]["versions"]
    assert version["name"] == "v1beta1"
    assert version["served"]
    assert version["storage"]
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"][-1] == {
        "name": "Age",
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
    }


def test_the_structural_check_catches_what_the_api_server_rejects() -> None:
    bad = {
        "type": "object",
        "properties": {
            "spec": {
                "properties": {"a": {"type": "string"}},
                "additionalProperties": {"type": "string"},
            },
            "list": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            "mode": {"type": "string", "enum": ["A"], "default": "B"},
        },
    }
    assert structural_problems(bad) == [
        "<root>.spec: no type",
        "<root>.spec: properties and additionalProperties together",
        "<root>.spec: properties on a non-object",
        "<root>.list: list-map key name is neither required nor defaulted",
        "<root>.mode: default 'B' does not validate",
    ]


# -- everything we ship or test with validates -------------------------------------------------------------


def documents(pattern: str) -> list[tuple[str, Obj]]:
    out = []
    for path in sorted(ROOT.glob(pattern)):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and doc.get("kind"):
                out.append((f"{path.relative_to(ROOT)}#{i}:{doc['kind']}", doc))
    return out


EXAMPLES = documents("examples/**/*.yaml")
# Core objects in a case (the operator's inferenceservice-config ConfigMap) have no CRD to check against.
GOLDEN = [
    (w, d) for w, d in documents("golden/cases/*.yaml") if str(d.get("apiVersion", "")).startswith("ome.io/")
]


# Golden documents OME's own schema would reject; the render tests use them on purpose or by mistake.
def test_the_examples_are_all_here() -> None:
    kinds = {doc["kind"] for _, doc in EXAMPLES}
    assert {"ClusterBaseModel", "ClusterServingRuntime", "InferenceReplica"} <= kinds


@pytest.mark.parametrize(("where", "doc"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_every_example_validates(where: str, doc: Obj) -> None:
    assert doc["kind"] in CRDS, f"{where}: no CRD for {doc['kind']} in schemas/crds"
    assert validate(doc) == []


@pytest.mark.parametrize(("where", "doc"), GOLDEN, ids=[w for w, _ in GOLDEN])
def test_every_golden_object_validates(where: str, doc: Obj) -> None:
    if doc.get("apiVersion") == "v1":  # a core object (the operator's ConfigMap): Kubernetes' own schema
        assert kube_problems(doc) == []
        return
    assert doc["kind"] in CRDS, f"{where}: no CRD for {doc['kind']} in schemas/crds"
    assert validate(doc) == []


# -- catalog shapes OME's catalog uses -------------------------------------------------------------------


def fmt(name: str, version: str) -> Obj:
    return {"name": name, "version": version}


def pd_runtime() -> Obj:
    """A prefill/decode runtime with multi-pod engine and decoder pieces, as OME's RDMA runtimes are."""
    leader_worker = {
        "annotations": {"rdma.ome.io/auto-inject": "true"},
        "leader": {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "dnsPolicy": "ClusterFirstWithHostNet",
            "hostNetwork": True,
            "runner": {
                "name": "ome-container",
                "image": "sglang:v0.4",
                "env": [{"name": "GLOO_SOCKET_IFNAME", "value": "eth0"}],
                "resources": {"limits": {"nvidia.com/gpu": 8}},
                "readinessProbe": {"httpGet": {"path": "/health", "port": 8080}},
            },
        },
        "worker": {"size": 1, "hostIPC": True, "runner": {"name": "ome-container", "image": "sglang:v0.4"}},
    }
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "srt-pd", "annotations": {"ome.io/inherit-from": "srt-base"}},
        "spec": {
            "disabled": False,
            "modelSizeRange": {"min": "650B", "max": "700B"},
            "supportedModelFormats": [
                {
                    "modelFormat": fmt("safetensors", "1.0.0"),
                    "version": "1.0.0",
                    "modelFramework": fmt("transformers", "4.46.3") | {"operator": "GreaterThanOrEqual"},
                    "modelArchitecture": "DeepseekV3ForCausalLM",
                    "quantization": "fp8",
                    "autoSelect": False,
                    "priority": 1,
                }
            ],
            "protocolVersions": ["openAI"],
            "engineConfig": leader_worker,
            "decoderConfig": copy.deepcopy(leader_worker),
            "routerConfig": {
                "runner": {"name": "router", "image": "sgl-router:dev", "ports": [{"containerPort": 8080}]},
                "config": {"policy": "power_of_two"},
                "minReplicas": 1,
            },
        },
    }


def legacy_runtime() -> Obj:
    """A runtime with the legacy inline pod spec and workers block that rendering ignores."""
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime",
        "metadata": {"name": "gpt-oss", "namespace": "team-a"},
        "spec": {
            "supportedModelFormats": [
                {
                    "name": "safetensors",
                    "modelFormat": fmt("safetensors", "1.0.0") | {"weight": 2},
                    "modelType": "gpt_oss",
                    "autoSelect": True,
                    "acceleratorConfig": {"h100": {"tensorParallelismOverride": {"tensorParallelSize": 8}}},
                }
            ],
            "containers": [{"name": "ome-container", "image": "x"}],
            "volumes": [{"name": "dshm", "emptyDir": {}}],
            "nodeSelector": {"pool": "gpu"},
            "hostIPC": True,
            "workers": {"size": 1, "containers": [{"name": "w", "image": "x"}]},
            "acceleratorRequirements": {"acceleratorClasses": ["h100"]},
            "engineConfig": {
                "runner": {"name": "ome-container", "image": "x"},
                "volumes": [{"name": "dshm"}],
            },
        },
    }


def base_model(kind: str = "BaseModel") -> Obj:
    meta = {"name": "qwen-image", "namespace": "team-a"} if kind == "BaseModel" else {"name": "qwen-image"}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": meta,
        "spec": {
            "vendor": "qwen",
            "disabled": False,
            "version": "1.0.0",
            "modelFormat": fmt("diffusers", "0.34.0.dev0"),
            "modelFramework": fmt("diffusers", "0.34.0.dev0"),
            "modelArchitecture": "QwenImagePipeline",
            "modelParameterSize": "20B",
            "modelCapabilities": ["TEXT_TO_IMAGE"],
            "apiCapabilities": ["OPENAI_V1_IMAGES_GENERATIONS"],
            "modelConfiguration": {"architectures": ["QwenImagePipeline"], "torch_dtype": "bfloat16"},
            "diffusionPipeline": {
                "className": "QwenImagePipeline",
                "vae": {"library": "diffusers", "type": "AutoencoderKLQwenImage"},
                "additionalComponents": {
                    "processor": {"library": "transformers", "type": "Qwen2VLProcessor"}
                },
            },
            "storage": {
                "storageUri": "hf://Qwen/Qwen-Image",
                "path": "/raid/models/qwen/qwen-image",
                "key": "hf-token",
                "downloadPolicy": "ReuseIfExists",
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
            },
            "additionalMetadata": {"license": "apache-2.0"},
            "maxTokens": 4096,
        },
        "status": {"state": "Ready", "lifecycle": "Ready", "nodesReady": ["n1"], "nodesFailed": []},
    }


def fine_tuned_weight() -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "FineTunedWeight",
        "metadata": {"name": "llama-adapter"},
        "spec": {
            "baseModelRef": {"name": "llama-3-2-1b-instruct"},
            "modelType": "LoRA",
            "hyperParameters": {"strategy": "lora", "lora_r": 8},
            "configuration": {"merged_weights": False},
            "storage": {"storageUri": "oci://n/ns/b/bucket/o/adapter"},
            "displayName": "llama adapter",
        },
        "status": {"state": "Ready"},
    }


def inference_service() -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "llama", "namespace": "team-a"},
        "spec": {
            "model": {"name": "llama-3-2-1b-instruct", "fineTunedWeights": ["llama-adapter"]},
            "runtime": {"name": "vllm-llama-3-2-1b-instruct", "kind": "ClusterServingRuntime"},
            "engine": {"minReplicas": 1, "maxReplicas": 3, "runner": {"resources": {"limits": {"cpu": 4}}}},
            "router": {"minReplicas": 1, "config": {"policy": "cache_aware"}},
            "acceleratorSelector": {"policy": "BestFit"},
        },
        "status": {"url": "http://llama.team-a", "components": {"engine": {"traffic": []}}},
    }


CATALOG_SHAPES = {
    "pd-runtime": pd_runtime,
    "legacy-runtime": legacy_runtime,
    "basemodel": base_model,
    "clusterbasemodel": lambda: base_model("ClusterBaseModel"),
    "finetunedweight": fine_tuned_weight,
    "inferenceservice": inference_service,
}


@pytest.mark.parametrize("make", list(CATALOG_SHAPES.values()), ids=list(CATALOG_SHAPES))
def test_catalog_shapes_validate(make: Any) -> None:
    assert validate(make()) == []


def broken(make: Any, change: Any) -> Obj:
    obj = make()
    change(obj)
    return obj


MALFORMED_CATALOG = [
    (
        "operator-not-in-enum",
        broken(
            pd_runtime,
            lambda o: o["spec"]["supportedModelFormats"][0]["modelFramework"].update(operator="Gt"),
        ),
        "spec.supportedModelFormats[0].modelFramework.operator",
    ),
    (
        "format-entry-without-model-format",
        broken(pd_runtime, lambda o: o["spec"]["supportedModelFormats"][0].pop("modelFormat")),
        "spec.supportedModelFormats[0].modelFormat",
    ),
    (
        "format-without-name",
        broken(pd_runtime, lambda o: o["spec"]["supportedModelFormats"][0]["modelFormat"].pop("name")),
        "spec.supportedModelFormats[0].modelFormat.name",
    ),
    (
        "priority-zero",
        broken(pd_runtime, lambda o: o["spec"]["supportedModelFormats"][0].update(priority=0)),
        "spec.supportedModelFormats[0].priority",
    ),
    (
        "protocol-not-in-enum",
        broken(pd_runtime, lambda o: o["spec"].update(protocolVersions=["grpc"])),
        "spec.protocolVersions[0]",
    ),
    (
        "size-range-typo",
        broken(pd_runtime, lambda o: o["spec"]["modelSizeRange"].update(maximum="7B")),
        "spec.modelSizeRange.maximum",
    ),
    (
        "disabled-as-string",
        broken(pd_runtime, lambda o: o["spec"].update(disabled="false")),
        "spec.disabled",
    ),
    (
        "runtime-spec-typo",
        broken(pd_runtime, lambda o: o["spec"].update(engineConfigs={})),
        "spec.engineConfigs",
    ),
    (
        "router-config-not-strings",
        broken(pd_runtime, lambda o: o["spec"]["routerConfig"]["config"].update(port=8080)),
        "spec.routerConfig.config.port",
    ),
    (
        "model-state-not-in-enum",
        broken(base_model, lambda o: o["status"].update(state="Loading")),
        "status.state",
    ),
    (
        "model-version-as-number",
        broken(base_model, lambda o: o["spec"]["modelFormat"].update(version=1.0)),
        "spec.modelFormat.version",
    ),
    (
        "download-policy-not-in-enum",
        broken(base_model, lambda o: o["spec"]["storage"].update(downloadPolicy="Never")),
        "spec.storage.downloadPolicy",
    ),
    (
        "isvc-model-without-name",
        broken(inference_service, lambda o: o["spec"]["model"].pop("name")),
        "spec.model.name",
    ),
    (
        "ftw-spec-typo",
        broken(fine_tuned_weight, lambda o: o["spec"].update(baseModel={"name": "x"})),
        "spec.baseModel",
    ),
]


@pytest.mark.parametrize(
    ("case", "obj", "field"), MALFORMED_CATALOG, ids=[c for c, _, _ in MALFORMED_CATALOG]
)
def test_malformed_catalog_objects_name_the_field(case: str, obj: Obj, field: str) -> None:
    assert failing_paths(obj) == [field]


# -- malformed InferenceReplicas (the other CRD owner's schema, read here) -------------------------------


def replica(**spec: Any) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "llama-pool", "namespace": "llama-demo"},
        "spec": {"component": "engine", "modelRef": {"name": "llama-3-2-1b-instruct"}, "replicas": 1, **spec},
    }


def without(obj: Obj, field: str) -> Obj:
    obj = copy.deepcopy(obj)
    del obj["spec"][field]
    return obj


def runners(**runner: Any) -> list[Obj]:
    return [{"name": "default", "size": 1, "template": {"spec": {"containers": []}}} | runner]


MALFORMED_REPLICAS = [
    ("component-not-a-role", replica(component="prefill"), "spec.component"),
    ("component-missing", without(replica(), "component"), "spec.component"),
    ("negative-replicas", replica(replicas=-1), "spec.replicas"),
    ("replicas-as-string", replica(replicas="2"), "spec.replicas"),
    ("replicas-past-int32", replica(replicas=2**31), "spec.replicas"),
    ("runner-name", replica(runners=runners(name="main")), "spec.runners[0].name"),
    ("runner-size-zero", replica(runners=runners(size=0)), "spec.runners[0].size"),
    (
        "runtime-ref-without-name",
        replica(runtimeRef={"kind": "ClusterServingRuntime"}),
        "spec.runtimeRef.name",
    ),
    (
        "overlay-without-name",
        replica(modelRef={"name": "m", "overlays": [{"kind": "BaseModel"}]}),
        "spec.modelRef.overlays[0].name",
    ),
    ("pairing-protocol-characters", replica(pairingProtocol="nixl v2"), "spec.pairingProtocol"),
    ("pairing-protocol-length", replica(pairingProtocol="p" * 64), "spec.pairingProtocol"),
    ("topology-spread", replica(topologySpread="Sometimes"), "spec.topologySpread"),
    ("pause-mode", replica(pauseMode="Stop"), "spec.pauseMode"),
    (
        "update-strategy",
        replica(lifecycle={"updateStrategy": {"type": "Rolling"}}),
        "spec.lifecycle.updateStrategy.type",
    ),
    (
        "max-surge-float",
        replica(lifecycle={"updateStrategy": {"rollingUpdate": {"maxSurge": 1.5}}}),
        "spec.lifecycle.updateStrategy.rollingUpdate.maxSurge",
    ),
    ("negative-partition", replica(pacing={"partition": -1}), "spec.pacing.partition"),
    ("autoscaler-class", replica(autoscaler={"class": "knative"}), "spec.autoscaler.class"),
    ("revision-history-zero", replica(revisionHistoryLimit=0), "spec.revisionHistoryLimit"),
    ("empty-parent-name", replica(parentRef={"name": ""}), "spec.parentRef.name"),
    ("placement-limit-zero", replica(placementReplicaLimit=0), "spec.placementReplicaLimit"),
    ("spec-typo", replica(minReadySecond=5), "spec.minReadySecond"),
    ("restart-policy", replica(lifecycle={"restartPolicy": "Always"}), "spec.lifecycle.restartPolicy"),
]


@pytest.mark.parametrize(
    ("case", "obj", "field"), MALFORMED_REPLICAS, ids=[c for c, _, _ in MALFORMED_REPLICAS]
)
def test_malformed_replicas_name_the_field(case: str, obj: Obj, field: str) -> None:
    assert failing_paths(obj) == [field]


def test_a_replica_with_many_faults_names_each() -> None:
    obj = replica(component="x", replicas=-2, pauseMode="Stop")
    obj["metadata"]["labels"] = {"team": 7}
    obj["apiVersion"] = "ome.io/v1alpha1"
    assert failing_paths(obj) == [
        "apiVersion",
        "metadata.labels.team",
        "spec.component",
        "spec.pauseMode",
        "spec.replicas",
    ]


def test_well_formed_replicas_of_every_source_validate() -> None:
    pod = {
        "metadata": {"labels": {"team": "a"}},
        "spec": {
            "containers": [{"name": "ome-container", "image": "x", "resources": {"limits": {"cpu": "2"}}}]
        },
    }
    objs = [
        replica(),
        without(replica(runtimeRef={"name": "vllm", "autoSync": True}), "modelRef"),
        without(
            replica(
                runners=[
                    {"name": "leader", "size": 1, "template": pod},
                    {"name": "worker", "size": 3, "template": pod},
                ],
                topologyKey="cloud.example.com/rack",
            ),
            "modelRef",
        ),
        replica(
            minReadySeconds=30,
            paused=True,
            pauseMode="Freeze",
            pacing={
                "partition": 1,
                "maxUnavailable": "25%",
                "rollbackToRevision": "llama-pool-engine-0f3a0f3a",
            },
            lifecycle={
                "updateStrategy": {
                    "type": "SurgeThenDrain",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "10%"},
                },
                "instanceReadyTimeout": "30m",
                "restartPolicy": "None",
            },
            autoscaler={"class": "External"},
            pairingProtocol="nixl-v2",
            revisionHistoryLimit=5,
        ),
    ]
    for obj in objs:
        assert validate(obj) == []


def test_kubernetes_schema_problems_are_in_our_words_not_jsonschemas() -> None:
    """lint's and render --validate's Kubernetes schema check says type errors as the API server and
    the CRD check do (found by the fuzz tier's wording rule, which runs lint without the schema)."""
    from omerender.cli.kubeschema import kube_problems

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": 5}]},
    }
    assert kube_problems(pod) == [
        "Pod p: spec.containers.0.image: must be of type null or string, got integer 5"
    ]
