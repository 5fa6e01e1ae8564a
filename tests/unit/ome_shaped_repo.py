"""A git repository shaped like OME's public catalog repository, for tests of the pull-request job.

The shape (issue 22): 200 ClusterServingRuntimes under ``config/runtimes/{srt,vllm}/`` and 200
ClusterBaseModels under ``config/models/<vendor>/``, of which 80% carry no ``modelFormat`` (OME reads it
from the downloaded weights); gang runtimes of a leader and eleven workers at 8 GPUs a pod (96 GPUs);
a runtime with a Jinja chat template in its args; a runtime file kept twice under one name; a
``kustomization.yaml`` listing a subset of the runtime files; ``SUPPORTED_MODELS.md`` beside the
models and a ``README.md``; kustomize patch lists (documents without ``kind``) under ``config/crd/``;
and ``replicas/``, one InferenceReplica per model (and one waiting for a model still to come).

:func:`build` writes the history, one commit per :class:`Step`: an image bump, a new model, a new
runtime that changes selection, a removed format, a docs-only change, an inserted argument in the
Jinja runtime, a gang image bump, a kustomization and CRD patch edit, a removed runtime, and a change to
every runtime. Deterministic: no randomness, no clock (commits carry fixed dates).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ARCHITECTURES", "GANG_ARCHS", "NAMESPACE", "Repo", "Step", "build", "model_name", "steps"]

Obj = dict[str, Any]
NAMESPACE = "serving"
ARCHITECTURES = (
    "LlamaForCausalLM",
    "Qwen2ForCausalLM",
    "MistralForCausalLM",
    "Gemma2ForCausalLM",
    "Phi3ForCausalLM",
    "DeepseekV3ForCausalLM",
    "MixtralForCausalLM",
    "Qwen3ForCausalLM",
    "GraniteForCausalLM",
    "CohereForCausalLM",
    "Olmo2ForCausalLM",
    "InternLM2ForCausalLM",
    "Starcoder2ForCausalLM",
    "ExaoneForCausalLM",
    "GlmForCausalLM",
    "BaichuanForCausalLM",
    "FalconForCausalLM",
    "JambaForCausalLM",
    "NemotronForCausalLM",
    "ArcticForCausalLM",
)
# Ten model sizes, twenty models each; the runtimes' tiers and their modelSizeRange.
SIZES = ("1B", "3B", "8B", "14B", "32B", "70B", "110B", "235B", "405B", "671B")
TIERS = (
    ("small", "0", "10B"),
    ("medium", "10B", "40B"),
    ("large", "40B", "120B"),
    ("xlarge", "120B", "400B"),
    ("gang", "400B", "2T"),
)
GANG_ARCHS = 3  # the first three architectures have formatted 671B models, served by gangs
GANG_WORKERS = 11  # a leader and 11 workers at 8 GPUs a pod: 96 GPUs
JINJA_ARCH = 7  # srt-<arch 7>-small carries a chat template in its args


def _slug(arch: str) -> str:
    return arch.removesuffix("ForCausalLM").lower()


def model_name(index: int) -> str:
    arch, size = ARCHITECTURES[index % 20], SIZES[index // 20]
    return f"{_slug(arch)}-{size.lower()}-{index:03d}"


def runtime_name(engine: str, arch_index: int, tier: str) -> str:
    return f"{engine}-{_slug(ARCHITECTURES[arch_index])}-{tier}"


def _formatted(index: int) -> bool:
    """40 of the 200 models carry a format: every 1B model, the 70B ones of most architectures, and
    the 671B ones the gangs serve."""
    arch, size = index % 20, index // 20
    return size == 0 or (size == 5 and arch >= GANG_ARCHS) or (size == 9 and arch < GANG_ARCHS)


def _model(name: str, arch: str, size: str, *, formatted: bool) -> Obj:
    spec: Obj = {
        "vendor": _slug(arch),
        "modelFramework": {"name": "transformers", "version": "4.46.3"},
        "modelArchitecture": arch,
        "modelParameterSize": size,
        "storage": {"storageUri": f"hf://{_slug(arch)}/{name}", "path": f"/raid/models/{name}"},
    }
    if formatted:
        spec["modelFormat"] = {"name": "safetensors", "version": "1.0.0"}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": spec,
    }


def _runner(engine: str, image: str, gpus: int, args: list[str]) -> Obj:
    launcher = ["python3", "-m", "sglang.launch_server"] if engine == "srt" else ["vllm", "serve"]
    return {
        "name": "ome-container",
        "image": image,
        "command": launcher,
        "args": args,
        "env": [{"name": "MODEL_PATH", "value": "$(MODEL_PATH)"}, {"name": "PORT", "value": "8080"}],
        "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
        "resources": {
            "requests": {"cpu": "10", "memory": "64Gi", "nvidia.com/gpu": str(gpus)},
            "limits": {"cpu": "10", "memory": "64Gi", "nvidia.com/gpu": str(gpus)},
        },
    }


def _runtime(engine: str, arch_index: int, tier: str, low: str, high: str) -> Obj:
    arch = ARCHITECTURES[arch_index]
    image = "docker.io/lmsysorg/sglang:v0.4.6" if engine == "srt" else "docker.io/vllm/vllm-openai:v0.9.0"
    gpus = {"small": 1, "medium": 2, "large": 4, "xlarge": 8, "gang": 8}[tier]
    args = ["--port=8080", "--model-path=$(MODEL_PATH)", f"--tp-size={gpus}"]
    if engine == "srt" and tier == "small" and arch_index == JINJA_ARCH:
        # OME fills a container's {{ }} placeholders with Go's html/template over the container's
        # JSON, so Jinja's own braces are written as Go raw strings (a quoted one would be escaped):
        # the container receives them as Jinja.
        args.append(
            "--chat-template={% for m in messages %}<|{{`{{`}} m.role {{`}}`}}|>{{`{{`}} m.content {{`}}`}}"
            "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
        )
    engine_config: Obj = {
        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    if tier == "gang":
        leader_args = [*args, "--dist-init-addr=$(LWS_LEADER_ADDRESS):5000", "--nnodes=$(LWS_GROUP_SIZE)"]
        engine_config["leader"] = {"runner": _runner(engine, image, gpus, leader_args)}
        engine_config["worker"] = {"size": GANG_WORKERS, "runner": _runner(engine, image, gpus, args)}
    else:
        engine_config["runner"] = _runner(engine, image, gpus, args)
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": runtime_name(engine, arch_index, tier)},
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": "4.46.3"},
                    "modelArchitecture": arch,
                    "autoSelect": True,
                    "priority": 2 if engine == "srt" else 1,
                }
            ],
            "protocolVersions": ["openAI"],
            "modelSizeRange": {"min": low, "max": high},
            "engineConfig": engine_config,
        },
    }


def _replica(name: str, model: str) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
        },
        "spec": {"component": "engine", "modelRef": {"name": model}, "replicas": 1},
    }


def _patch_list(path: str) -> list[Obj]:
    """A kustomize JSON 6902 patch list, as OME keeps them under config/crd/patches: no kind."""
    return [
        {"op": "add", "path": f"{path}/x-kubernetes-preserve-unknown-fields", "value": True},
        {"op": "remove", "path": f"{path}/properties/status/x-kubernetes-validations"},
    ]


@dataclass
class Repo:
    """The files of the repository, by path relative to its root: objects (one or several
    documents), or text (markdown, patch lists)."""

    objects: dict[str, list[Obj]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    _dumped: dict[str, str] = field(default_factory=dict, repr=False)

    def runtime(self, name: str) -> Obj:
        (obj,) = self.objects[self.runtime_path(name)]
        return obj

    def runtime_path(self, name: str) -> str:
        engine = name.split("-", 1)[0]
        return f"config/runtimes/{engine}/{name}.yaml"

    def model_path(self, index: int) -> str:
        return f"config/models/{_slug(ARCHITECTURES[index % 20])}/{model_name(index)}.yaml"

    def runtime_files(self) -> list[str]:
        return sorted(p for p in self.objects if p.startswith("config/runtimes/"))

    def files(self) -> dict[str, str]:
        out = dict(self.texts)
        for path, docs in self.objects.items():
            key = json.dumps(docs)  # YAML is dumped again only for what changed: it is the slow part
            if key not in self._dumped:
                self._dumped[key] = yaml.safe_dump_all(docs, sort_keys=False, width=200)
            out[path] = self._dumped[key]
        return out


def initial() -> Repo:
    repo = Repo()
    for a in range(20):
        for engine in ("srt", "vllm"):
            for tier, low, high in TIERS:
                obj = _runtime(engine, a, tier, low, high)
                repo.objects[repo.runtime_path(obj["metadata"]["name"])] = [obj]
    # The same runtime kept in two files, as catalogs keep a legacy copy: a duplicate name.
    legacy = runtime_name("vllm", 10, "medium")
    repo.objects[f"config/runtimes/vllm/legacy/{legacy}.yaml"] = [copy.deepcopy(repo.runtime(legacy))]
    for i in range(200):
        arch, size = ARCHITECTURES[i % 20], SIZES[i // 20]
        repo.objects[repo.model_path(i)] = [_model(model_name(i), arch, size, formatted=_formatted(i))]
        repo.objects[f"replicas/{model_name(i)}.yaml"] = [_replica(model_name(i), model_name(i))]
    # A replica waiting for a model the catalog does not hold yet.
    repo.objects["replicas/planned.yaml"] = [_replica("planned", "planned-model")]
    # 48 of the runtime files: every small one and the first medium ones (a cluster deployed with
    # kubectl apply -k holds these, a recursive read every file).
    small = [p for p in repo.runtime_files() if p.endswith("-small.yaml")]
    medium = [p for p in repo.runtime_files() if p.endswith("-medium.yaml") and "/legacy/" not in p]
    listed = [p.removeprefix("config/runtimes/") for p in [*small, *medium[: 48 - len(small)]]]
    repo.objects["config/runtimes/kustomization.yaml"] = [
        {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": listed}
    ]
    repo.objects["config/crd/kustomization.yaml"] = [
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "patches": [{"path": "patches/clusterservingruntimes.yaml"}],
        }
    ]
    repo.texts["config/crd/patches/clusterservingruntimes.yaml"] = yaml.safe_dump(
        _patch_list("/spec/versions/0/schema/openAPIV3Schema"), sort_keys=False
    )
    repo.texts["config/models/SUPPORTED_MODELS.md"] = "# Supported models\n\n" + "".join(
        f"- `{model_name(i)}`\n" for i in range(200)
    )
    repo.texts["README.md"] = (
        "# OME catalog\n\nRuntimes under `config/runtimes`, models under `config/models`.\n"
    )
    return repo


# -- the history --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    name: str
    change: Callable[[Repo], None]


def _bump(names: list[str], image: str) -> Callable[[Repo], None]:
    def change(repo: Repo) -> None:
        for name in names:
            config = repo.runtime(name)["spec"]["engineConfig"]
            for piece in ("runner", "leader", "worker"):
                if piece in config:
                    runner = config[piece] if piece == "runner" else config[piece]["runner"]
                    runner["image"] = image

    return change


def _new_models(repo: Repo) -> None:
    # The model the planned replica waits for arrives without a format; a new formatted model and a
    # new format-less one arrive with their replicas.
    repo.objects["config/models/llama/planned-model.yaml"] = [
        _model("planned-model", ARCHITECTURES[0], "8B", formatted=False)
    ]
    for name, formatted in (("llama-3b-new", True), ("qwen2-3b-new", False)):
        arch = ARCHITECTURES[0] if name.startswith("llama") else ARCHITECTURES[1]
        repo.objects[f"config/models/{_slug(arch)}/{name}.yaml"] = [
            _model(name, arch, "3B", formatted=formatted)
        ]
        repo.objects[f"replicas/{name}.yaml"] = [_replica(name, name)]
    repo.texts["config/models/SUPPORTED_MODELS.md"] += (
        "- `planned-model`\n- `llama-3b-new`\n- `qwen2-3b-new`\n"
    )


def _new_runtime(repo: Repo) -> None:
    """A newer SGLang runtime for architecture 5's small models, ranked above the one they use."""
    obj = _runtime("srt", 5, "small", "0", "10B")
    obj["metadata"]["name"] = runtime_name("srt", 5, "small") + "-v2"
    obj["spec"]["supportedModelFormats"][0]["priority"] = 3
    obj["spec"]["engineConfig"]["runner"]["image"] = "docker.io/lmsysorg/sglang:v0.5.0"
    repo.objects[repo.runtime_path(obj["metadata"]["name"])] = [obj]


def _remove_format(repo: Repo) -> None:
    (model,) = repo.objects[repo.model_path(6)]
    del model["spec"]["modelFormat"]


def _docs(repo: Repo) -> None:
    repo.texts["README.md"] += "\nSee `config/models/SUPPORTED_MODELS.md` for the models served.\n"
    repo.texts["config/models/SUPPORTED_MODELS.md"] = repo.texts["config/models/SUPPORTED_MODELS.md"].replace(
        "# Supported models", "# Supported models (updated)"
    )


def _jinja_argument(repo: Repo) -> None:
    runner = repo.runtime(runtime_name("srt", JINJA_ARCH, "small"))["spec"]["engineConfig"]["runner"]
    runner["args"].insert(2, "--enable-metrics")


def _layout_only(repo: Repo) -> None:
    (kustomization,) = repo.objects["config/runtimes/kustomization.yaml"]
    kustomization["resources"].append(
        repo.runtime_path(runtime_name("srt", 0, "gang")).removeprefix("config/runtimes/")
    )
    repo.texts["config/crd/patches/clusterservingruntimes.yaml"] = yaml.safe_dump(
        _patch_list("/spec/versions/1/schema/openAPIV3Schema"), sort_keys=False
    )


def _remove_runtimes(repo: Repo) -> None:
    """Architecture 8's small runtimes go: its 1B model has no runtime left."""
    for engine in ("srt", "vllm"):
        del repo.objects[repo.runtime_path(runtime_name(engine, 8, "small"))]
    (kustomization,) = repo.objects["config/runtimes/kustomization.yaml"]
    kustomization["resources"] = [
        r
        for r in kustomization["resources"]
        if runtime_name("srt", 8, "small") not in r and runtime_name("vllm", 8, "small") not in r
    ]


def _everything(repo: Repo) -> None:
    """A new base image and thirty tuning variables for every runtime: every rendered replica rolls."""
    tuning = [{"name": f"SGL_TUNING_{k:02d}", "value": str(k)} for k in range(30)]
    for path in repo.runtime_files():
        for obj in repo.objects[path]:
            if obj.get("kind") != "ClusterServingRuntime":
                continue
            config = obj["spec"]["engineConfig"]
            for piece in ("runner", "leader", "worker"):
                if piece in config:
                    runner = config[piece] if piece == "runner" else config[piece]["runner"]
                    runner["image"] = runner["image"].rsplit(":", 1)[0] + ":v1.0.0"
                    runner["env"] = [*runner["env"], *copy.deepcopy(tuning)]


def steps() -> list[Step]:
    """The history after the first commit, in order."""
    return [
        Step(
            "image bump",
            _bump([runtime_name("srt", a, "small") for a in range(5)], "docker.io/lmsysorg/sglang:v0.4.7"),
        ),
        Step("new model", _new_models),
        Step("new runtime that changes selection", _new_runtime),
        Step("removed format", _remove_format),
        Step("docs only", _docs),
        Step("inserted argument in the Jinja runtime", _jinja_argument),
        Step(
            "gang image bump",
            _bump(
                [runtime_name("srt", a, "gang") for a in range(GANG_ARCHS)],
                "docker.io/lmsysorg/sglang:v0.4.7",
            ),
        ),
        Step("kustomization and CRD patch lists", _layout_only),
        Step("removed runtimes", _remove_runtimes),
        Step("every runtime", _everything),
    ]


def _git(root: Path, *argv: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "CI",
        "GIT_AUTHOR_EMAIL": "ci@example.com",
        "GIT_COMMITTER_NAME": "CI",
        "GIT_COMMITTER_EMAIL": "ci@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        # No user or system configuration (a signing hook, another default branch) reaches the history.
        "HOME": str(root),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *argv], cwd=root, env=env, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def _write(root: Path, old: dict[str, str], new: dict[str, str]) -> None:
    for path in old.keys() - new.keys():
        (root / path).unlink()
    for path, text in new.items():
        if old.get(path) != text:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)


def build(root: Path) -> list[tuple[str, str]]:
    """Write the repository at ``root`` (created) and its history; (commit, step name) per commit,
    the first one ``catalog``."""
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    repo = initial()
    files: dict[str, str] = {}
    out: list[tuple[str, str]] = []
    for name, change in [("catalog", None), *((s.name, s.change) for s in steps())]:
        if change is not None:
            change(repo)
        new = repo.files()
        _write(root, files, new)
        files = new
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", name)
        out.append((_git(root, "rev-parse", "HEAD").strip(), name))
    return out
