"""A generated catalog shaped like OME's: model families, runtime profiles and inheriting runtimes.

Used by the lint benchmark and the lint tests. Deterministic: the same arguments give the same YAML.
"""

from __future__ import annotations

from typing import Any

import yaml

FAMILIES = 20


def _model(i: int) -> dict[str, Any]:
    family = i % FAMILIES
    size = 1 + (i // FAMILIES) % 8  # 1B .. 8B: the default catalog has eight runtimes per family
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": f"family{family}-model-{i}-{size}b"},
        "spec": {
            "vendor": "meta" if family % 2 else "acme",
            "modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelFramework": {"name": "transformers", "version": f"4.{40 + family}.0"},
            "modelArchitecture": f"Family{family}ForCausalLM",
            "modelParameterSize": f"{size}B",
            "storage": {"storageUri": f"hf://org/model-{i}", "path": f"/raid/models/model-{i}"},
        },
        "status": {"state": "Ready"},
    }


def _profile(family: int) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": f"profile-{family}", "annotations": {"ome.io/runtime-profile": "true"}},
        "spec": {
            "disabled": True,
            "protocolVersions": ["openAI"],
            "engineConfig": {
                "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
                "runner": {
                    "name": "ome-container",
                    "image": f"registry.example.com/srt:v0.{family}",
                    "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
                    "command": ["python3", "-m", "sglang.launch_server", "--model-path", "$(MODEL_PATH)"],
                    "volumeMounts": [{"mountPath": "/dev/shm", "name": "dshm"}],
                    "resources": {
                        "limits": {"cpu": "10", "memory": "160Gi", "nvidia.com/gpu": "1"},
                        "requests": {"cpu": "10", "memory": "160Gi", "nvidia.com/gpu": "1"},
                    },
                    "readinessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 30},
                },
            },
            "routerConfig": {
                "runner": {
                    "name": "router",
                    "image": "registry.example.com/router:v1",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "2", "memory": "4Gi"}},
                },
                "config": {"ROUTER_POLICY": "cache_aware"},
            },
        },
    }


def _runtime(i: int) -> dict[str, Any]:
    family = i % FAMILIES
    low, high = 1 + (i // FAMILIES), 1 + (i // FAMILIES)
    # Every third runtime inherits through a mid-level runtime: chains of two and three.
    parent = f"profile-{family}" if i % 3 else f"mid-{family}"
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": f"srt-family{family}-{i}", "annotations": {"ome.io/inherit-from": parent}},
        "spec": {
            "disabled": False,
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": f"4.{40 + family}.0"},
                    "modelArchitecture": f"Family{family}ForCausalLM",
                    "autoSelect": True,
                    "priority": 1,
                }
            ],
            "modelSizeRange": {"min": f"{low - 0.5}B", "max": f"{high + 0.5}B"},
            # Auto-selection renders a runtime's own spec, without its chain (OME's render.Resolve),
            # so a runtime that may be auto-selected names its runner and image itself.
            "engineConfig": {
                "runner": {
                    "name": "ome-container",
                    "image": f"registry.example.com/srt:v0.{family}",
                    "args": [f"--tp={1 + i % 4}"],
                }
            },
        },
    }


def _mid(family: int) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": f"mid-{family}", "annotations": {"ome.io/inherit-from": f"profile-{family}"}},
        "spec": {"disabled": True, "engineConfig": {"labels": {"tier": "mid"}}},
    }


def generate(models: int = 200, runtimes: int = 200) -> list[dict[str, Any]]:
    """``models`` models and ``runtimes`` runtimes, of which 2 × FAMILIES are profiles and mid-levels."""
    support = [_profile(f) for f in range(FAMILIES)] + [_mid(f) for f in range(FAMILIES)]
    serving = [_runtime(i) for i in range(runtimes - len(support))]
    return [_model(i) for i in range(models)] + support + serving


def generate_yaml(models: int = 200, runtimes: int = 200) -> str:
    return yaml.safe_dump_all(generate(models, runtimes), sort_keys=False)


def generate_replicas(count: int, models: int = 200, namespaces: int = 10) -> list[dict[str, Any]]:
    """``count`` InferenceReplicas, each on one of the first ``models`` models of :func:`generate`
    (runtime auto-selected), spread over ``namespaces`` namespaces; one in ten names its runtime."""
    out = []
    for i in range(count):
        m = i % models
        family, size = m % FAMILIES, 1 + (m // FAMILIES) % 8
        spec: dict[str, Any] = {
            "component": "engine",
            "modelRef": {"name": f"family{family}-model-{m}-{size}b"},
            "replicas": 1 + i % 4,
        }
        if i % 10 == 0:
            spec["runtimeRef"] = {"name": f"srt-family{family}-{family + FAMILIES * (size - 1)}"}
        out.append(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceReplica",
                "metadata": {
                    "name": f"replica-{i}",
                    "namespace": f"team-{i % namespaces}",
                    "uid": f"uid-{i}",
                },
                "spec": spec,
            }
        )
    return out
