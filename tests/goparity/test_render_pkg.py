"""OME's ``pkg/render`` unit tests, entry by entry, through ``omerender.render``.

Go: ome-projects/ome ``pkg/render/{accelerator,component,podspec,resolve,runners}_test.go`` (commits in
each test's docstring). Go calls the library's steps on hand-made specs; here each step's input is
the runtime piece a replica renders from (``engineConfig`` / ``decoderConfig`` / ``routerConfig``),
and its output is the rendered runner templates. Entries that exercise Go API misuse (nil inputs, a
component outside the CRD's enum) or InferenceService-only inputs are listed in ``docs/goparity.md``.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import BlockReason, InferenceReplica, Render, parse_object
from tests.goparity.gp_support import gp_blocked, gp_render

ACCEL = "ome-projects/ome pkg/render/accelerator_test.go @ a543351b"
COMPONENT = "ome-projects/ome pkg/render/component_test.go @ f0c4ef77"
PODSPEC = "ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77"
RESOLVE = "ome-projects/ome pkg/render/resolve_test.go @ a543351b"
RUNNERS = "ome-projects/ome pkg/render/runners_test.go @ a543351b"
MAIN = "ome-container"  # constants.MainContainerName


def replica(
    component: str = "engine",
    *,
    model: str | None = None,
    runtime: str | None = "runtime-a",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    fine_tuned: list[str] | None = None,
) -> InferenceReplica:
    spec: dict[str, Any] = {"component": component}
    if model is not None:
        spec["modelRef"] = {"name": model, **({"fineTunedWeights": fine_tuned} if fine_tuned else {})}
    if runtime is not None:
        spec["runtimeRef"] = {"name": runtime}
    metadata: dict[str, Any] = {"name": "service", "namespace": "team-a", "uid": "u"}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return parse_object(
        InferenceReplica,
        {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "metadata": metadata, "spec": spec},
    )


def runtime(name: str = "runtime-a", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": spec,
    }


def model(name: str = "model-a", **spec: Any) -> dict[str, Any]:
    body = {"modelFormat": {"name": "pytorch"}, "storage": {"path": "/models/a"}, **spec}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": body,
        "status": {"state": "Ready"},
    }


do, block = gp_render, gp_blocked


def container(result: Render, runner: str = "default", name: str = MAIN) -> dict[str, Any]:
    found = result.runner(runner)
    assert found is not None, [r.name for r in result.runners]
    return next(c for c in found.template["spec"]["containers"] if c["name"] == name)


def env(c: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in c.get("env", [])}


# -- accelerator_test.go ------------------------------------------------------------------------------

GPU_CONFIG = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
    "data": {"acceleratorResources": '["example.com/gpu"]'},
}


def _gpu_runner(gpus: str) -> dict[str, Any]:
    return {
        "name": MAIN,
        "image": "example.com/engine:v1",
        "resources": {"limits": {"example.com/gpu": gpus}},
    }


# (entry, accelerators per pod, component, piece, runner whose env is read, PARALLELISM_SIZE or None)
PARALLELISM: list[tuple[str, str, str, dict[str, Any], str, str | None]] = [
    (
        "one leader and two workers with eight accelerators",
        "8",
        "engine",
        {"leader": {"runner": _gpu_runner("8")}, "worker": {"size": 2, "runner": _gpu_runner("8")}},
        "leader",
        "24",
    ),
    (
        "no accelerators sets nothing",
        "0",
        "engine",
        {"leader": {"runner": _gpu_runner("0")}, "worker": {"size": 2, "runner": _gpu_runner("0")}},
        "leader",
        None,
    ),
]


@pytest.mark.parametrize(
    ("go_entry", "gpus", "component", "piece", "runner", "value"),
    PARALLELISM,
    ids=[c[0] for c in PARALLELISM],
)
def test_set_parallelism_env_var(
    go_entry: str, gpus: str, component: str, piece: dict[str, Any], runner: str, value: str | None
) -> None:
    """Go: ome-projects/ome pkg/render/accelerator_test.go @ a543351b, TestSetParallelismEnvVar, entry ``go_entry``: PARALLELISM_SIZE = accelerators of one
    pod x (leaders + workers); the engine counts one leader. Go's entries "no leader and no workers
    sets nothing" and "workers only with two accelerators" call the setter with counts no rendered
    runner shows: (0, 0) comes from no piece, and a decoder without a leader or a top-level runner
    renders no worker runner to read the value from (``docs/goparity.md``)."""
    key = "engineConfig" if component == "engine" else "decoderConfig"
    result = do(replica(component), runtime(**{key: piece}), GPU_CONFIG)
    got = env(container(result, runner)).get("PARALLELISM_SIZE")
    assert got == value, f"{ACCEL} {go_entry}"


# -- component_test.go --------------------------------------------------------------------------------


def _decoder_runtime(**decoder: Any) -> dict[str, Any]:
    return runtime(
        supportedModelFormats=[{"modelFormat": {"name": "pytorch"}, "autoSelect": True}],
        decoderConfig={"runner": {"name": "runner", "image": "example.com/serving:v1"}, **decoder},
    )


def _weight(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "FineTunedWeight",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_render_decoder_rejects_fine_tuned_weight_unavailable() -> None:
    """Go: ome-projects/ome pkg/render/component_test.go @ f0c4ef77, TestRenderDecoderRejectsInvalidInputs, entry "fine-tuned weight unavailable"."""
    error = block(replica("decoder", model="model-a", fine_tuned=["adapter"]), model(), _decoder_runtime())
    assert (error.reason, error.message) == (
        BlockReason.RENDER_FAILED,
        "No FineTunedWeight with the name: adapter",
    )


def test_render_decoder_rejects_fine_tuned_strategy_unavailable() -> None:
    """Go: ome-projects/ome pkg/render/component_test.go @ f0c4ef77, TestRenderDecoderRejectsInvalidInputs, entry "fine-tuned strategy unavailable"
    (configuration and hyper-parameters ``{}``)."""
    error = block(
        replica("decoder", model="model-a", fine_tuned=["adapter"]),
        model(),
        _decoder_runtime(),
        _weight("adapter", configuration={}, hyperParameters={}),
    )
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == 'hyper-parameter "strategy" not set on FineTunedWeight adapter'


def test_render_decoder_rejects_worker_template_without_container() -> None:
    """Go: ome-projects/ome pkg/render/component_test.go @ f0c4ef77, TestRenderDecoderRejectsInvalidInputs, entry "worker template has no container"."""
    error = block(replica("decoder"), _decoder_runtime(worker={}))
    assert error.reason is BlockReason.RENDER_FAILED
    assert "no containers found in worker pod spec" in error.message


@pytest.mark.parametrize("component", ["engine", "decoder", "router"])
def test_render_component_dispatches(component: str) -> None:
    """Go: ome-projects/ome pkg/render/component_test.go @ f0c4ef77, TestRenderComponentDispatches, per role: one default runner from the role's
    piece; the router's ``config`` becomes its env. (The ``service-<component>`` object name and an
    edit after rendering have no counterpart; an unknown component is refused by the CRD.)"""
    runner = {"name": "runner", "image": "example.com/serving:v1"}
    pieces = {
        "engineConfig": {"runner": dict(runner)},
        "decoderConfig": {"runner": dict(runner)},
        "routerConfig": {"runner": dict(runner), "config": {"ROUTER_BACKEND": "engine"}},
    }
    rt = runtime(**pieces)
    before = repr(rt)
    result = do(replica(component), rt)
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]
    if component == "router":
        assert env(container(result, name="runner")).get("ROUTER_BACKEND") == "engine"
    assert repr(rt) == before, "rendering leaves the caller's objects alone"


# (entry, the runtime's pieces, component, declared)
DECLARES_PIECE: list[tuple[str, dict[str, Any], str, bool]] = [
    ("engine declared", {"engineConfig": {}, "routerConfig": {}}, "engine", True),
    ("router declared", {"engineConfig": {}, "routerConfig": {}}, "router", True),
    ("decoder not declared", {"engineConfig": {}, "routerConfig": {}}, "decoder", False),
    ("decoder declared", {"decoderConfig": {}}, "decoder", True),
]


@pytest.mark.parametrize(
    ("go_entry", "pieces", "component", "declared"), DECLARES_PIECE, ids=[c[0] for c in DECLARES_PIECE]
)
def test_runtime_declares_piece(
    go_entry: str, pieces: dict[str, Any], component: str, declared: bool
) -> None:
    """Go: ome-projects/ome pkg/render/component_test.go @ f0c4ef77, TestRuntimeDeclaresPiece, entry ``go_entry``: an undeclared piece is
    ``RuntimePieceMissing``; a declared (empty) one gets past that check to the pod build, which then
    finds no container (``RenderFailed``)."""
    error = block(replica(component), runtime(**pieces))
    if declared:
        assert error.reason is BlockReason.RENDER_FAILED, f"{COMPONENT} {go_entry}: {error}"
        assert "no containers found in pod spec and no runner spec provided" in error.message
    else:
        assert error.reason is BlockReason.RUNTIME_PIECE_MISSING, f"{COMPONENT} {go_entry}"
        assert error.message == (
            f'ClusterServingRuntime "runtime-a" has no {component} piece; a {component} replica cannot render from it'
        )


# -- podspec_test.go ----------------------------------------------------------------------------------


def _engine(pod: dict[str, Any], runner: dict[str, Any] | None) -> dict[str, Any]:
    piece = dict(pod)
    if runner is not None:
        piece["runner"] = runner
    return runtime(engineConfig=piece)


def _podspec(pod: dict[str, Any], runner: dict[str, Any] | None) -> dict[str, Any]:
    result = do(replica(), _engine(pod, runner))
    template = result.runners[0].template
    spec: dict[str, Any] = template["spec"]
    return spec


BASE = {"name": MAIN, "image": "test-image:latest"}


def test_reconcile_pod_spec_basic() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "Basic pod spec reconciliation"."""
    spec = _podspec(
        {"containers": [dict(BASE)]}, {"name": MAIN, "env": [{"name": "CUSTOM_ENV", "value": "custom"}]}
    )
    assert [c["name"] for c in spec["containers"]] == [MAIN]
    assert spec["containers"][0]["image"] == "test-image:latest"
    assert env(spec["containers"][0])["CUSTOM_ENV"] == "custom"


def test_reconcile_pod_spec_volumes_and_affinity() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "Pod spec with volumes and affinity"."""
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "node-type", "operator": "In", "values": ["gpu-node"]}]}
                ]
            }
        }
    }
    spec = _podspec(
        {
            "containers": [dict(BASE)],
            "volumes": [{"name": "test-volume", "configMap": {"name": "test-config"}}],
            "nodeSelector": {"gpu": "true"},
            "affinity": affinity,
        },
        None,
    )
    assert [v["name"] for v in spec["volumes"]] == ["test-volume"]
    assert spec["nodeSelector"]["gpu"] == "true"
    assert spec["affinity"]["nodeAffinity"]


def test_reconcile_pod_spec_tolerations_and_image_pull_secrets() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "Pod spec with tolerations and image
    pull secrets"."""
    spec = _podspec(
        {
            "containers": [dict(BASE)],
            "tolerations": [{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
            "imagePullSecrets": [{"name": "docker-secret"}],
        },
        None,
    )
    assert [t["key"] for t in spec["tolerations"]] == ["gpu"]
    assert spec["imagePullSecrets"] == [{"name": "docker-secret"}]


def test_reconcile_pod_spec_multiple_containers() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "Pod spec with multiple containers"."""
    spec = _podspec(
        {"containers": [dict(BASE), {"name": "sidecar", "image": "sidecar-image:latest"}]},
        {"name": MAIN, "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
    )
    by_name = {c["name"]: c for c in spec["containers"]}
    assert len(spec["containers"]) == 2
    assert by_name[MAIN]["image"] == "test-image:latest"
    assert by_name[MAIN]["resources"]["requests"]["cpu"] == "1"
    assert by_name["sidecar"]["image"] == "sidecar-image:latest"


def test_reconcile_pod_spec_scheduler_and_dns() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "Pod spec with scheduler and DNS settings"."""
    spec = _podspec(
        {
            "containers": [dict(BASE)],
            "schedulerName": "custom-scheduler",
            "hostNetwork": True,
            "hostIPC": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
        },
        None,
    )
    assert (spec["schedulerName"], spec["hostNetwork"], spec["hostIPC"], spec["dnsPolicy"]) == (
        "custom-scheduler",
        True,
        True,
        "ClusterFirstWithHostNet",
    )


def test_reconcile_pod_spec_runner_container_merge() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "Pod spec with runner container merge":
    command and args from the runner, both envs, resources merged key by key."""
    spec = _podspec(
        {
            "containers": [
                {
                    **BASE,
                    "env": [{"name": "RUNTIME_ENV", "value": "runtime"}],
                    "resources": {"requests": {"cpu": "500m"}},
                }
            ]
        },
        {
            "name": MAIN,
            "command": ["/bin/bash"],
            "args": ["-c", "echo hello"],
            "env": [{"name": "CUSTOM_ENV", "value": "custom"}],
            "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "4Gi"}},
        },
    )
    (main,) = spec["containers"]
    assert main["command"] == ["/bin/bash"]
    assert main["args"] == ["-c", "echo hello"]
    assert env(main)["RUNTIME_ENV"] == "runtime"
    assert env(main)["CUSTOM_ENV"] == "custom"
    assert main["resources"]["requests"] == {"cpu": "500m", "memory": "2Gi"}
    assert main["resources"]["limits"] == {"memory": "4Gi"}


def test_reconcile_pod_spec_no_containers_takes_the_runner() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "No containers in pod spec"."""
    spec = _podspec({"containers": []}, {"name": MAIN, "image": "main-image:latest"})
    assert [(c["name"], c["image"]) for c in spec["containers"]] == [(MAIN, "main-image:latest")]


def test_reconcile_pod_spec_no_containers_and_no_runner() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcilePodSpec, entry "No containers and no runner spec"."""
    error = block(replica(), _engine({"containers": []}, None))
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == (
        'engineConfig of ClusterServingRuntime "runtime-a": no containers found in pod spec and no runner spec provided'
    )


def test_reconcile_worker_pod_spec_none() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcileWorkerPodSpec, entry "No worker pod spec": no worker
    runner."""
    result = do(replica(), runtime(engineConfig={"runner": dict(BASE)}))
    assert [r.name for r in result.runners] == ["default"]


def test_reconcile_worker_pod_spec_without_leader_runner() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcileWorkerPodSpec, entry "Worker pod spec without leader
    runner spec": the worker pod as written (a leader renders beside it)."""
    result = do(
        replica(),
        runtime(
            engineConfig={
                "leader": {"runner": dict(BASE)},
                "worker": {
                    "size": 1,
                    "containers": [{"name": MAIN, "image": "worker-image:latest"}],
                    "nodeSelector": {"worker": "true"},
                },
            }
        ),
    )
    worker = result.runner("worker")
    assert worker is not None
    spec = worker.template["spec"]
    assert [c["image"] for c in spec["containers"]] == ["worker-image:latest"]
    assert spec["nodeSelector"]["worker"] == "true"


def test_reconcile_worker_pod_spec_with_leader_runner() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcileWorkerPodSpec, entry "Worker pod spec with leader
    runner spec": the worker's own runner merges into its container (Go passes the worker's runner as
    ``leaderRunnerSpec``)."""
    result = do(
        replica(),
        runtime(
            engineConfig={
                "leader": {"runner": dict(BASE)},
                "worker": {
                    "size": 1,
                    "containers": [
                        {
                            "name": MAIN,
                            "image": "worker-image:latest",
                            "env": [{"name": "RUNTIME_ENV", "value": "runtime"}],
                        }
                    ],
                    "runner": {
                        "name": MAIN,
                        "env": [{"name": "LEADER_ENV", "value": "leader"}],
                        "resources": {"requests": {"cpu": "2"}},
                    },
                },
            }
        ),
    )
    main = container(result, "worker")
    assert main["image"] == "worker-image:latest"
    assert env(main)["RUNTIME_ENV"] == "runtime"
    assert env(main)["LEADER_ENV"] == "leader"
    assert main["resources"]["requests"]["cpu"] == "2"


def test_reconcile_worker_pod_spec_without_containers() -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ReconcileWorkerPodSpec, entry "Worker pod spec with no containers"."""
    error = block(replica(), runtime(engineConfig={"leader": {"runner": dict(BASE)}, "worker": {"size": 1}}))
    assert error.reason is BlockReason.RENDER_FAILED
    assert "no containers found in worker pod spec" in error.message


IMAGES: list[tuple[str, str, str, str]] = [
    ("ISVC image set: ISVC wins", "user/pinned:v42", "runtime/default:v1", "user/pinned:v42"),
    ("ISVC image empty: CSR runner image fills in", "", "runtime/default:v1", "runtime/default:v1"),
    ("Both empty: rendered pod also has empty image", "", "", ""),
]


IMAGE_CASES = [pytest.param(*case, id=case[0]) for case in IMAGES]


@pytest.mark.parametrize(("go_entry", "pod_image", "runner_image", "expected"), IMAGE_CASES)
def test_image_precedence(go_entry: str, pod_image: str, runner_image: str, expected: str) -> None:
    """Go: ome-projects/ome pkg/render/podspec_test.go @ f0c4ef77, TestPodSpecReconciler_ImagePrecedence, entry ``go_entry``: the pod spec's container
    (Go's "ISVC" side, the piece's ``containers`` here) overrides the runner; an empty image is left
    out of the merge, so the runner's fills in."""
    spec = _podspec(
        {"containers": [{"name": MAIN, "image": pod_image}]}, {"name": MAIN, "image": runner_image}
    )
    assert len(spec["containers"]) == 1
    assert spec["containers"][0].get("image", "") == expected, f"{PODSPEC} {go_entry}"


# -- resolve_test.go ----------------------------------------------------------------------------------

RESOLVE_RUNTIME = {
    "supportedModelFormats": [{"modelFormat": {"name": "pytorch"}, "autoSelect": True}],
    "engineConfig": {
        "minReplicas": 2,
        "maxReplicas": 4,
        "runner": {"name": "runner", "image": "example.com/serving:v1"},
    },
    "routerConfig": {"runner": {"name": "runner", "image": "example.com/router:v1"}},
}


def test_resolve_named_runtime() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveNamedRuntime: the named cluster runtime, no advisory, the engine only,
    the runner from the runtime. (The service's minReplicas has no replica counterpart.)"""
    result = do(replica(model="model-a"), model(), runtime(**RESOLVE_RUNTIME))
    assert (result.runtime_name, result.runtime_kind, result.advisories) == (
        "runtime-a",
        "ClusterServingRuntime",
        (),
    )
    assert container(result, name="runner")["image"] == "example.com/serving:v1"


def test_resolve_auto_selects_runtime_for_model() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveAutoSelectsRuntimeForModel."""
    result = do(replica(model="model-a", runtime=None), model(), runtime(**RESOLVE_RUNTIME))
    assert (result.runtime_name, result.runtime_kind) == ("runtime-a", "ClusterServingRuntime")


def test_resolve_named_runtime_declared_format_mismatch() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveNamedRuntimeDeclaredFormatMismatch: advisory, and the runtime renders."""
    result = do(
        replica(model="model-a"), model(modelFormat={"name": "safetensors"}), runtime(**RESOLVE_RUNTIME)
    )
    (advisory,) = result.advisories
    assert "(runtime runtime-a does not support model safetensors: " in advisory.message
    assert container(result, name="runner")["image"] == "example.com/serving:v1"


def test_resolve_sharded_model_keeps_compatibility_check() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveShardedModelKeepsCompatibilityCheck: a Ready Sharded model whose format
    the named runtime does not declare is the compatibility error (``RuntimeSelectionFailed``)."""
    sharded = model(modelFormat={"name": "safetensors"}, distribution="Sharded")
    sharded["metadata"]["generation"] = 1
    sharded["status"]["conditions"] = [{"type": "Ready", "status": "True", "observedGeneration": 1}]
    error = block(replica(model="model-a"), sharded, runtime(**RESOLVE_RUNTIME))
    assert error.reason is BlockReason.RUNTIME_SELECTION_FAILED
    assert error.message.startswith(
        "runtime runtime-a does not support model safetensors: model format 'mt:safetensors'"
    )


@pytest.mark.parametrize(
    "with_model",
    [True, False],
    ids=["named runtime validated against the model", "named runtime without a model"],
)
def test_resolve_disabled_runtime(with_model: bool) -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveDisabledRuntime, entries for a named runtime (the "supplied runtime"
    entry has no counterpart: omerender takes no pinned runtime spec)."""
    rep = replica(model="model-a" if with_model else None)
    error = block(rep, model(), runtime(**{**RESOLVE_RUNTIME, "disabled": True}))
    assert (error.reason, error.message) == (
        BlockReason.RUNTIME_DISABLED,
        "cluster-scoped runtime runtime-a is disabled",
    )


def test_resolve_without_template_source() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveWithoutTemplateSource (``ErrNoTemplateSource``): a replica naming neither
    a model nor a runtime never reaches ``Resolve``; ``renderFromRefs`` reports ``TemplateSourceMissing``."""
    error = block(replica(runtime=None))
    assert error.reason is BlockReason.TEMPLATE_SOURCE_MISSING


@pytest.mark.parametrize("entry_point", ["ResolveModel", "Resolve"])
def test_resolve_sharded_model_not_ready(entry_point: str) -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestResolveShardedModelNotReady, subtest ``entry_point`` (both reach the same gate):
    ``ModelNotReadyError`` naming the model with its readiness message, reported as ModelNotFound. The
    seed gates on ``status.state`` first; the model here is Ready by state, so Go's Sharded gate speaks."""
    error = block(replica(model="model-a"), model(distribution="Sharded"), runtime(**RESOLVE_RUNTIME))
    assert error.reason is BlockReason.MODEL_NOT_FOUND
    assert error.message.startswith("model model-a is not ready: ")
    assert error.message != "model model-a is not ready: "


@pytest.mark.parametrize(
    ("message", "text"),
    [(None, "model model-a is not ready"), ("loading", "model model-a is not ready: loading")],
    ids=["without a message", "with a message"],
)
def test_model_not_ready_error_message(message: str | None, text: str) -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestModelNotReadyErrorMessage: the text with and without the model's message."""
    sharded = model(distribution="Sharded")
    condition: dict[str, Any] = {"type": "Ready", "status": "False", "observedGeneration": 0}
    if message:
        condition["message"] = message
    sharded["status"]["conditions"] = [condition]
    error = block(replica(model="model-a"), sharded, runtime(**RESOLVE_RUNTIME))
    assert (error.reason, error.message) == (BlockReason.MODEL_NOT_FOUND, text)


def test_prepare_role_decoder_worker_defaults_to_one() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestPrepareRole: a decoder with a leader and a worker of no size gets the
    one-worker default (OMENative); a single engine renders one pod."""
    decoder = {"leader": {"runner": dict(BASE)}, "worker": {"runner": dict(BASE)}}
    result = do(replica("decoder"), runtime(decoderConfig=decoder))
    assert [(r.name, r.size) for r in result.runners] == [("leader", 1), ("worker", 1)]
    single = do(replica(), runtime(engineConfig={"runner": dict(BASE)}))
    assert [(r.name, r.size) for r in single.runners] == [("default", 1)]


def test_prepare_engine_worker_defaults_to_one() -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestPrepare (its engine half: a leader and a worker without a size get one worker;
    the router's RawDeployment mode and the all-roles call have no replica counterpart)."""
    engine = {"leader": {"runner": dict(BASE)}, "worker": {"runner": dict(BASE)}}
    result = do(replica(), runtime(engineConfig=engine))
    assert [(r.name, r.size) for r in result.runners] == [("leader", 1), ("worker", 1)]


@pytest.mark.parametrize(
    ("go_entry", "kind"),
    [
        ("disabled namespaced runtime", "ServingRuntime"),
        ("disabled cluster runtime", "ClusterServingRuntime"),
    ],
)
def test_validate_resolved_runtime_enabled(go_entry: str, kind: str) -> None:
    """Go: ome-projects/ome pkg/render/resolve_test.go @ a543351b, TestValidateResolvedRuntimeEnabled, entry ``go_entry`` (and "enabled runtime" in
    every render above; "nil runtime spec" has no counterpart)."""
    rt = runtime("the-runtime", **{**RESOLVE_RUNTIME, "disabled": True})
    rt["kind"] = kind
    if kind == "ServingRuntime":
        rt["metadata"]["namespace"] = "team-a"
    error = block(replica(runtime="the-runtime"), rt)
    scope = "namespace-scoped" if kind == "ServingRuntime" else "cluster-scoped"
    assert (error.reason, error.message) == (
        BlockReason.RUNTIME_DISABLED,
        f"{scope} runtime the-runtime is disabled",
    )


# -- runners_test.go ----------------------------------------------------------------------------------


def test_runners_single_pod() -> None:
    """Go: ome-projects/ome pkg/render/runners_test.go @ a543351b, TestRunnersSinglePod: one default runner of size 1 whose template carries the
    rendered labels and annotations (and no name or namespace)."""
    result = do(
        replica(labels={"rendered": "yes"}, annotations={"note": "rendered"}),
        runtime(engineConfig={"runner": {"name": "main", "image": "example.com/engine:v1"}}),
    )
    ((name, size, meta),) = [(r.name, r.size, r.template["metadata"]) for r in result.runners]
    assert (name, size) == ("default", 1)
    assert meta["labels"]["rendered"] == "yes"
    assert meta["annotations"]["note"] == "rendered"
    assert not {"name", "namespace"} & set(meta)


def test_runners_leader_worker() -> None:
    """Go: ome-projects/ome pkg/render/runners_test.go @ a543351b, TestRunnersLeaderWorker: a leader of size 1 and a worker of size 3, both with the
    same metadata."""
    engine = {
        "leader": {"runner": {"name": "main", "image": "example.com/engine:v1"}},
        "worker": {"size": 3, "runner": {"name": "worker", "image": "example.com/engine:v1"}},
    }
    result = do(replica(labels={"role": "engine"}), runtime(engineConfig=engine))
    assert [(r.name, r.size) for r in result.runners] == [("leader", 1), ("worker", 3)]
    leader, worker = (r.template["metadata"] for r in result.runners)
    assert leader == worker
    assert leader["labels"]["role"] == "engine"


def test_template_object_meta_component_overrides() -> None:
    """Go: ome-projects/ome pkg/render/runners_test.go @ a543351b, TestTemplateObjectMetaComponentOverridesAndIdentityDropped: the piece's own labels
    and annotations (its ComponentExtensionSpec) override the rendered ones key by key; the rest of
    both are kept; no identity fields."""
    engine = {
        "runner": {"name": "main", "image": "example.com/engine:v1"},
        "labels": {"shared": "component", "only-component": "c"},
        "annotations": {"shared": "component", "only-component": "d"},
    }
    result = do(
        replica(
            labels={"shared": "rendered", "only-rendered": "a"},
            annotations={"shared": "rendered", "only-rendered": "b"},
        ),
        runtime(engineConfig=engine),
    )
    meta = result.runners[0].template["metadata"]
    assert {k: meta["labels"][k] for k in ("shared", "only-rendered", "only-component")} == {
        "shared": "component",
        "only-rendered": "a",
        "only-component": "c",
    }
    assert {k: meta["annotations"][k] for k in ("shared", "only-rendered", "only-component")} == {
        "shared": "component",
        "only-rendered": "b",
        "only-component": "d",
    }
    assert not {"name", "namespace", "uid", "generateName", "resourceVersion"} & set(meta)
