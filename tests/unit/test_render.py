"""The render, rule by rule (02 §10, 01 §2, seed "One template source"): sources, lookups and block
reasons, pieces and runners, model injection, fine-tuned weights, overlays, metadata, placeholders."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omerender.catalog import Catalog
from omerender.errors import BlockReason, InvalidObjectError, RenderBlocked
from omerender.models import InferenceReplica, parse_object
from omerender.render import Render, render

NS = "demo"
GPU = "nvidia.com/gpu"
MODEL_PATH = "/raid/models/m"
SELECTOR_KEY = "models.ome.io/clusterbasemodel.m"

# -- builders ------------------------------------------------------------------------------------


def replica(
    spec: dict[str, Any],
    *,
    name: str = "r",
    namespace: str = NS,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> InferenceReplica:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": "uid-r"}
    if labels:
        metadata["labels"] = labels
    if annotations:
        metadata["annotations"] = annotations
    return parse_object(
        InferenceReplica,
        {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "metadata": metadata, "spec": spec},
    )


def model(
    name: str = "m",
    *,
    kind: str = "ClusterBaseModel",
    namespace: str | None = None,
    path: str | None = MODEL_PATH,
    state: str | None = "Ready",
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if kind == "BaseModel":
        metadata["namespace"] = namespace or NS
    if "annotations" in spec:
        metadata["annotations"] = spec.pop("annotations")
    body: dict[str, Any] = {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, **spec}
    if path is not None:
        body["storage"] = {"path": path}
    obj: dict[str, Any] = {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": body}
    if state is not None:
        obj["status"] = {"state": state}
    return obj


def runner(name: str = "ome-container", image: str = "img:1", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **fields}


def runtime(
    name: str = "rt",
    *,
    kind: str = "ClusterServingRuntime",
    namespace: str = NS,
    engine: dict[str, Any] | None = None,
    decoder: dict[str, Any] | None = None,
    router: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if kind == "ServingRuntime":
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {
        "supportedModelFormats": [
            {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, "autoSelect": True}
        ],
        **spec,
    }
    if engine is None and decoder is None and router is None:
        engine = {"runner": runner()}
    for key, piece in (("engineConfig", engine), ("decoderConfig", decoder), ("routerConfig", router)):
        if piece is not None:
            body[key] = piece
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": body}


def ftw(name: str = "ft", *, merged: bool = False, strategy: str | None = "lora") -> dict[str, Any]:
    spec: dict[str, Any] = {"baseModelRef": {"name": "m"}, "configuration": {"merged_weights": merged}}
    if strategy:
        spec["hyperParameters"] = {"strategy": strategy}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "FineTunedWeight",
        "metadata": {"name": name},
        "spec": spec,
    }


def refs(
    component: str = "engine", *, model_ref: Any = "m", runtime_ref: Any = None, **extra: Any
) -> dict[str, Any]:
    spec: dict[str, Any] = {"component": component, **extra}
    if model_ref is not None:
        spec["modelRef"] = {"name": model_ref} if isinstance(model_ref, str) else model_ref
    if runtime_ref is not None:
        spec["runtimeRef"] = {"name": runtime_ref} if isinstance(runtime_ref, str) else runtime_ref
    return spec


def do_render(spec: dict[str, Any], *objects: dict[str, Any], **meta: Any) -> Render:
    # Minimal objects, and shapes the CRD refuses but Go decodes: the render's own rules.
    return render(replica(spec, **meta), Catalog.from_objects(objects, strict=False))


def blocked(spec: dict[str, Any], *objects: dict[str, Any], **meta: Any) -> RenderBlocked:
    with pytest.raises(RenderBlocked) as info:
        do_render(spec, *objects, **meta)
    return info.value


def template(result: Render, name: str = "default") -> dict[str, Any]:
    found = result.runner(name)
    assert found is not None, f"no {name} runner in {[r.name for r in result.runners]}"
    return found.template


def pod(result: Render, name: str = "default") -> dict[str, Any]:
    return template(result, name)["spec"]  # type: ignore[no-any-return]


def container(result: Render, name: str = "ome-container", runner_name: str = "default") -> dict[str, Any]:
    return next(c for c in pod(result, runner_name)["containers"] if c.get("name") == name)


def env(c: dict[str, Any]) -> dict[str, Any]:
    return {var["name"]: var.get("value") for var in c.get("env") or ()}


# -- one template source -------------------------------------------------------------------------


def test_no_source_is_template_source_missing() -> None:
    error = blocked({"component": "engine"})
    assert error.reason is BlockReason.TEMPLATE_SOURCE_MISSING
    assert (
        error.message
        == "spec sets neither runners nor modelRef or runtimeRef; one template source is required"
    )


def test_empty_runners_list_is_template_source_missing() -> None:
    assert blocked({"component": "engine", "runners": []}).reason is BlockReason.TEMPLATE_SOURCE_MISSING


def test_runners_render_verbatim_and_unaliased() -> None:
    tpl = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i", "args": ["{{.Name}}"]}]},
    }
    spec = {"component": "engine", "runners": [{"name": "default", "size": 1, "template": tpl}]}
    rep = replica(spec)
    result = render(rep, Catalog())
    assert result.source == "runners"
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]
    # Opaque: not even placeholders are replaced, and nothing is mounted or labelled.
    assert result.runners[0].template == tpl
    assert result.advisories == ()
    assert result.excluded_annotation_keys == frozenset()
    result.runners[0].template["spec"]["containers"][0]["image"] = "changed"
    assert rep.spec.runners is not None
    assert rep.spec.runners[0].template["spec"]["containers"][0]["image"] == "i"


def test_runners_leader_and_worker_keep_their_sizes() -> None:
    tpl = {"spec": {"containers": [{"name": "c", "image": "i"}]}}
    spec = {
        "component": "decoder",
        "runners": [
            {"name": "leader", "size": 1, "template": tpl},
            {"name": "worker", "size": 4, "template": tpl},
        ],
    }
    result = do_render(spec)
    assert [(r.name, r.size) for r in result.runners] == [("leader", 1), ("worker", 4)]
    assert result.multi_pod
    assert result.pods_per_instance == 5


def test_sources_are_reported() -> None:
    assert do_render(refs(), model(), runtime()).source == "modelRef"
    assert do_render(refs(model_ref=None, runtime_ref="rt"), runtime()).source == "runtimeRef"


# -- model lookup and state ----------------------------------------------------------------------


def test_model_missing_at_cluster_scope() -> None:
    error = blocked(refs(), model(kind="BaseModel"), runtime())
    assert error.reason is BlockReason.MODEL_NOT_FOUND
    assert error.message == "No BaseModel or ClusterBaseModel with the name: m"


def test_basemodel_is_looked_up_in_the_replica_namespace_only() -> None:
    spec = refs(model_ref={"name": "m", "kind": "BaseModel"})
    error = blocked(spec, model(kind="BaseModel", namespace="other"), model(), runtime())
    assert error.reason is BlockReason.MODEL_NOT_FOUND
    assert error.message == 'basemodels.ome.io "m" not found'
    result = do_render(spec, model(kind="BaseModel", namespace=NS), runtime())
    assert result.model_name == "m"


@pytest.mark.parametrize("state", [None, "Creating", "In_Transit", "Failed", "ready"])
def test_model_not_ready_is_model_not_found(state: str | None) -> None:
    error = blocked(refs(), model(state=state), runtime())
    assert error.reason is BlockReason.MODEL_NOT_FOUND
    assert "is not ready" in error.message


def test_disabled_model() -> None:
    error = blocked(refs(), model(disabled=True), runtime())
    assert error.reason is BlockReason.MODEL_DISABLED
    assert error.message == "specified base model m is disabled"


def test_disabled_is_checked_before_readiness() -> None:
    # ReconcileBaseModelWithStatus refuses a disabled model before anything looks at its state.
    assert (
        blocked(refs(), model(disabled=True, state="Failed"), runtime()).reason is BlockReason.MODEL_DISABLED
    )


def test_disabled_false_renders() -> None:
    assert do_render(refs(), model(disabled=False), runtime()).model_name == "m"


# -- runtime lookup ------------------------------------------------------------------------------


def test_named_runtime_not_found() -> None:
    error = blocked(refs(runtime_ref="nope"), model(), runtime())
    assert error.reason is BlockReason.RUNTIME_NOT_FOUND
    assert error.message == "runtime nope not found in namespace demo or at cluster scope"


def test_servingruntime_kind_is_namespaced_only() -> None:
    spec = refs(model_ref=None, runtime_ref={"name": "rt", "kind": "ServingRuntime"})
    error = blocked(spec, runtime())
    assert error.reason is BlockReason.RUNTIME_NOT_FOUND
    assert error.message == "ServingRuntime rt not found in namespace demo"
    result = do_render(spec, runtime(kind="ServingRuntime"))
    assert (result.runtime_kind, result.runtime_name) == ("ServingRuntime", "rt")


def test_default_runtime_kind_prefers_cluster_then_falls_back_to_namespace() -> None:
    spec = refs(model_ref=None, runtime_ref="rt")
    both = do_render(
        spec,
        runtime(engine={"runner": runner(image="cluster:1")}),
        runtime(kind="ServingRuntime", engine={"runner": runner(image="ns:1")}),
    )
    assert both.runtime_kind == "ClusterServingRuntime"
    only_ns = do_render(spec, runtime(kind="ServingRuntime", engine={"runner": runner(image="ns:1")}))
    assert only_ns.runtime_kind == "ServingRuntime"
    assert container(only_ns)["image"] == "ns:1"


@pytest.mark.parametrize(
    ("kind", "word"), [("ClusterServingRuntime", "cluster-scoped"), ("ServingRuntime", "namespace-scoped")]
)
def test_disabled_named_runtime(kind: str, word: str) -> None:
    spec = refs(runtime_ref={"name": "rt", "kind": kind})
    error = blocked(spec, model(), runtime(kind=kind, disabled=True))
    assert error.reason is BlockReason.RUNTIME_DISABLED
    assert error.message == f"{word} runtime rt is disabled"


def test_disabled_is_inherited_from_a_profile_unless_the_child_enables_itself() -> None:
    parent = runtime("base", disabled=True, annotations={"ome.io/runtime-profile": "true"})
    child = runtime("child", annotations={"ome.io/inherit-from": "base"})
    spec = refs(model_ref=None, runtime_ref="child")
    assert blocked(spec, parent, child).reason is BlockReason.RUNTIME_DISABLED
    enabled = runtime("child", annotations={"ome.io/inherit-from": "base"}, disabled=False)
    assert do_render(spec, parent, enabled).runtime_name == "child"


@pytest.mark.parametrize(
    ("kind", "component"), [("ClusterServingRuntime", "decoder"), ("ServingRuntime", "router")]
)
def test_runtime_without_the_piece(kind: str, component: str) -> None:
    spec = refs(component, model_ref=None, runtime_ref={"name": "rt", "kind": kind})
    error = blocked(spec, runtime(kind=kind))
    assert error.reason is BlockReason.RUNTIME_PIECE_MISSING
    assert error.message == (
        f'{kind} "rt" has no {component} piece; a {component} replica cannot render from it'
    )


def test_inherited_piece_satisfies_the_piece_check() -> None:
    parent = runtime("base", decoder={"runner": runner(image="dec:1")})
    child = runtime("child", annotations={"ome.io/inherit-from": "base"})
    result = do_render(refs("decoder", model_ref=None, runtime_ref="child"), parent, child)
    assert container(result)["image"] == "dec:1"


def test_missing_inheritance_parent_is_render_failed_with_go_text() -> None:
    child = runtime("child", annotations={"ome.io/inherit-from": "gone"})
    error = blocked(refs(model_ref=None, runtime_ref="child"), child)
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == 'inherit-from parent "gone" not found (chain so far: [child])'


def test_auto_selected_runtime_renders_its_own_spec_without_inheritance() -> None:
    parent = runtime(
        "base", disabled=True, engine={"runner": runner(image="parent:1", env=[{"name": "P", "value": "1"}])}
    )
    child = runtime(
        "child", annotations={"ome.io/inherit-from": "base"}, engine={"runner": runner(image="child:1")}
    )
    result = do_render(refs(), model(), parent, child)
    assert result.runtime_name == "child"
    assert container(result)["image"] == "child:1"
    assert "P" not in env(container(result))


def test_auto_selected_child_gets_no_engine_piece_from_its_base_as_in_go() -> None:
    """The lead's question (issue 33): a base runtime's engineConfig does not reach the pods of a child
    that automatic selection picks. Go does the same (``render.Resolve`` renders ``SelectRuntime``'s spec,
    which ``FetchRuntimes`` lists without inheritance), so the child is refused for the missing piece;
    the block says where the piece is and how to get it (ours)."""
    base = runtime("base", engine={"runner": runner(image="base:1")})
    base["spec"]["supportedModelFormats"] = []  # the base is no candidate itself
    child = runtime("child", annotations={"ome.io/inherit-from": "base"})
    del child["spec"]["engineConfig"]
    error = blocked(refs(), model(), base, child)
    assert error.reason is BlockReason.RUNTIME_PIECE_MISSING
    assert error.message == (
        'ClusterServingRuntime "child" has no engine piece; a engine replica cannot render from it '
        "(its engine piece is inherited from ClusterServingRuntime base, and automatic selection renders "
        "the selected runtime's own spec without inheritance; name ClusterServingRuntime child in "
        "spec.runtimeRef to render it with its inheritance)"
    )
    # The fix works: named, the child renders its base's engine piece.
    named = do_render(refs(runtime_ref="child"), model(), base, child)
    assert container(named)["image"] == "base:1"
    # A disabled base leaves the child disabled when named: the hint says to enable it.
    base["spec"]["disabled"] = True
    assert (
        "set disabled: false on ClusterServingRuntime child and name"
        in blocked(refs(), model(), base, child).message
    )


def test_auto_selected_runtime_with_a_missing_parent_still_renders() -> None:
    child = runtime("child", annotations={"ome.io/inherit-from": "gone"})
    assert do_render(refs(), model(), child).runtime_name == "child"


def test_inheritance_cycle_is_render_failed() -> None:
    a = runtime("a", annotations={"ome.io/inherit-from": "b"})
    b = runtime("b", annotations={"ome.io/inherit-from": "a"})
    error = blocked(refs(model_ref=None, runtime_ref="a"), a, b)
    assert error.reason is BlockReason.RENDER_FAILED
    assert "inheritance cycle detected: [a b a]" in error.message


# -- selection and the advisory ------------------------------------------------------------------


def test_auto_selection_picks_the_namespace_runtime() -> None:
    result = do_render(refs(), model(), runtime("cluster-rt"), runtime("ns-rt", kind="ServingRuntime"))
    assert (result.runtime_kind, result.runtime_name) == ("ServingRuntime", "ns-rt")


def test_router_auto_selection_does_not_filter_by_piece() -> None:
    engine_only = runtime("aaa", engine={"runner": runner()})
    with_router = runtime("zzz", engine={"runner": runner()}, router={"runner": runner("router")})
    error = blocked(refs("router"), model(), engine_only, with_router)
    assert error.reason is BlockReason.RUNTIME_PIECE_MISSING
    assert error.message.startswith('ClusterServingRuntime "aaa" has no router piece;')
    assert "ClusterServingRuntime zzz ranks lower and has a router piece" in error.message
    alone = blocked(refs("router"), model(), engine_only)
    assert (
        alone.message
        == 'ClusterServingRuntime "aaa" has no router piece; a router replica cannot render from it'
    )


def test_model_without_format_name_is_checked_before_the_named_runtime_is_looked_up() -> None:
    nameless = model()
    nameless["spec"]["modelFormat"] = {"version": "1"}
    error = blocked(refs(runtime_ref="gone"), nameless)
    assert error.reason is BlockReason.RUNTIME_SELECTION_FAILED
    assert error.message == "invalid model specification: modelFormat.name: model format name is required"


def test_no_runtime_is_selection_failed_listing_exclusions() -> None:
    error = blocked(refs(), model(), runtime("off", disabled=True))
    assert error.reason is BlockReason.RUNTIME_SELECTION_FAILED
    # NoRuntimeFoundError names the model by its format (Go's getModelName); the object follows as a hint.
    assert error.message == (
        "no runtime found to support model safetensors with format safetensors in namespace demo. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: "
        "off (runtime is disabled) [model: ClusterBaseModel m]"
    )


def test_named_runtime_that_does_not_declare_the_model_renders_with_an_advisory() -> None:
    other = runtime(supportedModelFormats=[{"modelFormat": {"name": "pytorch"}}])
    result = do_render(refs(runtime_ref="rt"), model(), other)
    assert len(result.advisories) == 1
    advisory = result.advisories[0]
    assert advisory.reason == "RuntimeCompatibilityAdvisory"
    assert advisory.message.startswith("Runtime rt does not declare support for model m (")
    assert advisory.message.endswith("); proceeding because the runtime was named explicitly")
    assert env(container(result))["MODEL_PATH"] == MODEL_PATH


def test_named_runtime_that_supports_the_model_has_no_advisory() -> None:
    assert do_render(refs(runtime_ref="rt"), model(), runtime()).advisories == ()


def test_named_runtime_ignores_auto_select() -> None:
    rt = runtime(
        supportedModelFormats=[
            {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, "autoSelect": False}
        ]
    )
    assert do_render(refs(runtime_ref="rt"), model(), rt).advisories == ()


def test_model_without_format_name_cannot_be_served_even_by_a_named_runtime() -> None:
    nameless = model()
    nameless["spec"]["modelFormat"] = {}
    error = blocked(refs(runtime_ref="rt"), nameless, runtime())
    assert error.reason is BlockReason.RUNTIME_SELECTION_FAILED
    assert "model format name is required" in error.message


# -- pieces and runners --------------------------------------------------------------------------


def test_piece_becomes_a_default_runner_without_extension_fields() -> None:
    piece = {
        "minReplicas": 1,
        "maxReplicas": 3,
        "scaleTarget": 80,
        "labels": {"l": "1"},
        "annotations": {"a": "1"},
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
        "runner": runner(),
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]
    spec = pod(result)
    assert set(spec) == {"tolerations", "containers"}
    assert template(result)["metadata"]["labels"]["l"] == "1"
    assert template(result)["metadata"]["annotations"]["a"] == "1"


def test_each_component_reads_its_own_piece() -> None:
    rt = runtime(
        engine={"runner": runner(image="e:1")},
        decoder={"runner": runner(image="d:1")},
        router={"runner": runner("router", image="r:1")},
    )
    for component, name, image in (
        ("engine", "ome-container", "e:1"),
        ("decoder", "ome-container", "d:1"),
        ("router", "router", "r:1"),
    ):
        result = do_render(refs(component, model_ref=None, runtime_ref="rt"), rt)
        assert container(result, name)["image"] == image


def test_leader_and_worker_blocks_make_two_runners() -> None:
    piece = {
        "runner": runner(image="piece:1"),
        "leader": {"hostIPC": True, "runner": runner(image="leader:1")},
        "worker": {"size": 3, "hostIPC": True, "runner": runner(image="worker:1")},
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert [(r.name, r.size) for r in result.runners] == [("leader", 1), ("worker", 3)]
    assert container(result, runner_name="leader")["image"] == "leader:1"
    assert container(result, runner_name="worker")["image"] == "worker:1"
    assert pod(result, "worker")["hostIPC"] is True
    assert "size" not in pod(result, "worker")


def test_worker_without_size_is_sized_one_by_the_operator_defaults() -> None:
    # specdefaults (PrepareRole) runs before render.Runners and sizes an unsized leader+worker pair at 1;
    # EngineWorkerSize would read a nil size as 0 workers, which OME's own CRD refuses.
    piece = {"leader": {"runner": runner()}, "worker": {"runner": runner()}}
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert [(r.name, r.size) for r in result.runners] == [("leader", 1), ("worker", 1)]


def test_worker_without_leader_is_one_default_runner_from_the_top_level() -> None:
    gpus = {"limits": {GPU: "2"}}
    piece = {
        "volumes": [{"name": "dshm", "emptyDir": {}}],
        "runner": runner(
            image="piece:1", resources=gpus, volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}]
        ),
        "worker": {"size": 2, "runner": runner(image="worker:1")},
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]
    assert container(result)["image"] == "piece:1"
    assert pod(result)["volumes"] == [{"name": "dshm", "emptyDir": {}}]
    # The two workers still count: 2 GPUs x (1 leader + 2 workers).
    assert env(container(result))["PARALLELISM_SIZE"] == "6"


def test_leader_without_worker_is_one_default_runner_from_the_leader_block() -> None:
    piece = {
        "runner": runner(image="piece:1"),
        "leader": {"hostIPC": True, "runner": runner(image="leader:1")},
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]
    assert container(result)["image"] == "leader:1"
    assert pod(result)["hostIPC"] is True


def test_leader_block_without_runner_never_borrows_the_top_level_runner() -> None:
    # EnginePodSpec takes Leader.Runner only; with no runner the leader pod's first container is the main one.
    piece = {
        "runner": runner(image="piece:1"),
        "leader": {"containers": [{"name": "c", "image": "own:1"}]},
        "worker": {"size": 1, "runner": runner()},
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert pod(result, "leader")["containers"] == [{"name": "c", "image": "own:1"}]


@pytest.mark.parametrize("worker", [False, True])
def test_leader_or_worker_with_neither_runner_nor_containers_is_render_failed(worker: bool) -> None:
    piece: dict[str, Any] = {"leader": {"runner": runner()}, "worker": {"size": 1, "runner": runner()}}
    del piece["worker" if worker else "leader"]["runner"]
    error = blocked(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert error.reason is BlockReason.RENDER_FAILED
    expected = (
        "no containers found in worker pod spec"
        if worker
        else "no containers found in pod spec and no runner spec provided"
    )
    assert error.message == f'engineConfig of ClusterServingRuntime "rt": {expected}'


@pytest.mark.parametrize("size", [-1])
def test_worker_size_below_one_is_render_failed(size: Any) -> None:
    piece = {"leader": {"runner": runner()}, "worker": {"size": size, "runner": runner()}}
    error = blocked(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == f"engineConfig.worker.size must be a whole number, got {size!r}"


@pytest.mark.parametrize("size", ["2", True, 1.5])
def test_worker_size_go_cannot_decode_makes_the_runtime_invalid(size: Any) -> None:
    # WorkerSpec.Size is a *int: OME's client cannot read a runtime holding anything else.
    piece = {"leader": {"runner": runner()}, "worker": {"size": size, "runner": runner()}}
    with pytest.raises(InvalidObjectError) as info:
        Catalog.from_objects([runtime(engine=piece)], strict=False)  # Go's decoding alone
    assert [p.path for p in info.value.problems] == ["spec.engineConfig.worker.size"]
    assert "into Go value of type int64" in info.value.problems[0].message


def test_router_piece_with_leader_and_worker_still_renders_one_default_runner() -> None:
    # 02 §10 rule 15: every router yields a single default runner.
    piece = {"runner": runner("router"), "leader": {"runner": runner("router")}, "worker": {"size": 2}}
    result = do_render(refs("router", model_ref=None, runtime_ref="rt"), runtime(router=piece))
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]


def test_same_named_container_wins_over_the_runner_with_args_concatenated() -> None:
    # resolveContainer (ome-projects/ome pkg/render/podspec.go): MergeRuntimeContainers(runner,
    # container), the runner is the base and the piece's container the override.
    piece = {
        "containers": [
            {
                "name": "ome-container",
                "image": "base:1",
                "args": ["--a"],
                "env": [{"name": "X", "value": "base"}],
            },
            {"name": "sidecar", "image": "side:1"},
        ],
        "runner": runner(image="runner:1", args=["--b"], env=[{"name": "X", "value": "runner"}]),
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    names = [c["name"] for c in pod(result)["containers"]]
    assert names == ["ome-container", "sidecar"]
    main = container(result)
    assert main["image"] == "base:1"
    assert main["args"] == ["--b", "--a"]
    assert env(main) == {"X": "base"}


def test_runner_without_a_matching_container_is_appended() -> None:
    piece = {"containers": [{"name": "sidecar", "image": "side:1"}], "runner": runner()}
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert [c["name"] for c in pod(result)["containers"]] == ["sidecar", "ome-container"]


def test_no_runner_makes_the_first_container_main() -> None:
    piece = {
        "containers": [
            {"name": "first", "image": "i", "args": ["{{.Name}}"]},
            {"name": "second", "image": "i", "args": ["{{.Name}}"]},
        ]
    }
    result = do_render(refs(model_ref="m"), model(), runtime(engine=piece))
    assert container(result, "first")["args"] == ["r"]
    assert container(result, "second")["args"] == ["{{.Name}}"]


def test_no_runner_and_no_containers_is_render_failed() -> None:
    error = blocked(refs(model_ref=None, runtime_ref="rt"), runtime(engine={"tolerations": []}))
    assert error.reason is BlockReason.RENDER_FAILED


# -- placeholders --------------------------------------------------------------------------------


def test_placeholders_in_the_main_container_only() -> None:
    piece = {
        "containers": [{"name": "sidecar", "image": "s", "args": ["{{.Name}}", "{{ .Foo }}"]}],
        "runner": runner(
            args=["{{.Name}}", "{{ .Namespace }}", "{{  .Name  }}-{{.Namespace}}", "{{.Labels.missing}}"],
            env=[{"name": "URL", "value": "http://{{.Name}}.{{.Namespace}}"}],
        ),
    }
    result = do_render(
        refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece), name="chat", namespace="prod"
    )
    main = container(result)
    assert main["args"] == ["chat", "prod", "chat-prod", ""]
    assert env(main)["URL"] == "http://chat.prod"
    assert container(result, "sidecar")["args"] == ["{{.Name}}", "{{ .Foo }}"]


@pytest.mark.parametrize(
    ("arg", "go_error"),
    [
        ("{{ .Foo }}", "at <.Foo>: can't evaluate field Foo in type v1.ObjectMeta"),
        ("{{ .Name.X }}", "at <.Name.X>: can't evaluate field X in type string"),
        ("{% x %}{{ y }}", 'template: container-tmpl:1: function "y" not defined'),
        ("{{ .Name", "template: container-tmpl:1: bad character U+0022 '\"'"),
    ],
)
def test_placeholders_go_cannot_run_fail_the_render(arg: str, go_error: str) -> None:
    piece = {"runner": runner(args=[arg])}
    with pytest.raises(RenderBlocked) as blocked:
        do_render(
            refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece), name="chat", namespace="prod"
        )
    assert blocked.value.reason == BlockReason.RENDER_FAILED
    assert blocked.value.message.startswith("failed to replace placeholders in container: ")
    assert go_error in blocked.value.message


def test_placeholders_use_the_parent_name_on_a_projected_replica() -> None:
    spec = refs(model_ref=None, runtime_ref="rt", parentRef={"name": "chat"})
    result = do_render(spec, runtime(engine={"runner": runner(args=["{{.Name}}"])}), name="chat-engine")
    assert container(result)["args"] == ["chat"]
    assert template(result)["metadata"]["labels"]["ome.io/inferenceservice"] == "chat"


# -- model injection -----------------------------------------------------------------------------


def test_model_mount_volume_model_path_and_node_selector() -> None:
    result = do_render(refs(), model(), runtime())
    main = container(result)
    assert {"name": "m", "mountPath": MODEL_PATH, "readOnly": True} in main["volumeMounts"]
    assert env(main)["MODEL_PATH"] == MODEL_PATH
    spec = pod(result)
    assert {"name": "m", "hostPath": {"path": MODEL_PATH}} in spec["volumes"]
    assert spec["nodeSelector"] == {SELECTOR_KEY: "Ready"}


def test_model_mount_is_appended_after_the_runner_mounts() -> None:
    piece = {
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        "runner": runner(volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}]),
    }
    result = do_render(refs(), model(), runtime(engine=piece))
    assert [m["name"] for m in container(result)["volumeMounts"]] == ["dshm", "m"]
    assert [v["name"] for v in pod(result)["volumes"]] == ["dshm", "m"]


def test_runner_model_path_is_kept() -> None:
    piece = {"runner": runner(env=[{"name": "MODEL_PATH", "value": "/custom"}])}
    result = do_render(refs(), model(), runtime(engine=piece))
    assert [v for v in container(result)["env"] if v["name"] == "MODEL_PATH"] == [
        {"name": "MODEL_PATH", "value": "/custom"}
    ]


def test_model_without_storage_path_mounts_nothing_but_keeps_the_selector() -> None:
    result = do_render(refs(), model(path=None), runtime())
    main = container(result)
    assert "volumeMounts" not in main
    assert "MODEL_PATH" not in env(main)
    assert "volumes" not in pod(result)
    assert pod(result)["nodeSelector"] == {SELECTOR_KEY: "Ready"}


def test_basemodel_selector_key() -> None:
    spec = refs(model_ref={"name": "m", "kind": "BaseModel"})
    result = do_render(spec, model(kind="BaseModel"), runtime())
    assert pod(result)["nodeSelector"] == {"models.ome.io/demo.basemodel.m": "Ready"}


def test_model_key_already_in_the_piece_selector_is_kept() -> None:
    piece = {"nodeSelector": {SELECTOR_KEY: "Updating", "pool": "a"}, "runner": runner()}
    result = do_render(refs(), model(), runtime(engine=piece))
    assert pod(result)["nodeSelector"] == {SELECTOR_KEY: "Updating", "pool": "a"}


def test_runtime_legacy_node_selector_overlays_the_model_key() -> None:
    rt = runtime(nodeSelector={"pool": "h100", SELECTOR_KEY: "Overridden"})
    result = do_render(refs(), model(), rt)
    assert pod(result)["nodeSelector"] == {SELECTOR_KEY: "Overridden", "pool": "h100"}


def test_runtime_ref_alone_mounts_nothing() -> None:
    rt = runtime(
        nodeSelector={"pool": "h100"},
        engine={"runner": runner(resources={"limits": {GPU: "4"}})},
    )
    result = do_render(refs(model_ref=None, runtime_ref="rt"), model(), rt)
    main = container(result)
    # No model: no MODEL_PATH and no mounts; PARALLELISM_SIZE and the legacy selector still apply.
    assert main["env"] == [{"name": "PARALLELISM_SIZE", "value": "4"}]
    assert "volumeMounts" not in main
    assert "volumes" not in pod(result)
    assert pod(result)["nodeSelector"] == {"pool": "h100"}
    labels = template(result)["metadata"]["labels"]
    assert not any(key.startswith("base-model") for key in labels)
    assert result.model_name is None


def test_router_gets_the_model_volume_but_no_mount_path_or_selector() -> None:
    rt = runtime(
        engine={"runner": runner()}, router={"runner": runner("router", resources={"limits": {GPU: "1"}})}
    )
    result = do_render(refs("router"), model(), rt)
    main = container(result, "router")
    assert "volumeMounts" not in main
    assert "MODEL_PATH" not in env(main)
    assert "PARALLELISM_SIZE" not in env(main)
    assert pod(result)["volumes"] == [{"name": "m", "hostPath": {"path": MODEL_PATH}}]
    assert "nodeSelector" not in pod(result)


def test_router_config_becomes_env_sorted_by_key() -> None:
    piece = {
        "config": {"ZETA": "z", "ALPHA": "a", "MID": "m"},
        "runner": runner("router", env=[{"name": "FIRST", "value": "1"}, {"name": "MID", "value": "old"}]),
    }
    rt = runtime(engine={"runner": runner()}, router=piece)
    result = do_render(refs("router", model_ref=None, runtime_ref="rt"), rt)
    main = container(result, "router")
    # OME appends the config (a same-named variable is not replaced; the kubelet uses the last one).
    assert [v["name"] for v in main["env"]] == ["FIRST", "MID", "ALPHA", "MID", "ZETA"]
    assert [v["value"] for v in main["env"]] == ["1", "old", "a", "m", "z"]
    assert "config" not in pod(result)


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({"limits": {GPU: "2"}}, "2"),
        ({"requests": {GPU: "3"}}, "3"),
        ({"limits": {GPU: "2"}, "requests": {GPU: "8"}}, "2"),
        ({"limits": {"cpu": "4"}}, None),
    ],
)
def test_parallelism_size_for_a_default_runner(resources: dict[str, Any], expected: str | None) -> None:
    result = do_render(refs(), model(), runtime(engine={"runner": runner(resources=resources)}))
    assert env(container(result)).get("PARALLELISM_SIZE") == expected


def test_parallelism_size_counts_leader_and_workers() -> None:
    gpus = {"limits": {GPU: "8"}}
    piece = {
        "leader": {"runner": runner(resources=gpus)},
        "worker": {"size": 3, "runner": runner(resources=gpus)},
    }
    result = do_render(refs(), model(), runtime(engine=piece))
    assert env(container(result, runner_name="leader"))["PARALLELISM_SIZE"] == "32"
    assert env(container(result, runner_name="worker"))["PARALLELISM_SIZE"] == "32"


def test_parallelism_size_replaces_a_runtime_value() -> None:
    piece = {
        "runner": runner(resources={"limits": {GPU: "2"}}, env=[{"name": "PARALLELISM_SIZE", "value": "99"}])
    }
    result = do_render(refs(), model(), runtime(engine=piece))
    assert [v for v in container(result)["env"] if v["name"] == "PARALLELISM_SIZE"] == [
        {"name": "PARALLELISM_SIZE", "value": "2"}
    ]


def test_decoder_leader_counts_only_with_a_leader_or_runner() -> None:
    gpus = {"limits": {GPU: "4"}}
    # No leader block and no top-level runner: the leader does not count (decoderParallelismLeaders).
    without = {
        "containers": [{"name": "ome-container", "image": "i", "resources": gpus}],
        "worker": {"size": 2, "runner": runner(resources=gpus)},
    }
    result = do_render(refs("decoder"), model(), runtime(decoder=without))
    assert [r.name for r in result.runners] == ["default"]
    # The default pod has no runner, so nothing writes PARALLELISM_SIZE into it at all.
    assert "env" not in container(result)
    with_runner = {"runner": runner(resources=gpus), "worker": {"size": 2, "runner": runner(resources=gpus)}}
    result = do_render(refs("decoder"), model(), runtime(decoder=with_runner))
    assert env(container(result))["PARALLELISM_SIZE"] == "12"
    with_leader = {
        "leader": {"runner": runner(resources=gpus)},
        "worker": {"size": 2, "runner": runner(resources=gpus)},
    }
    result = do_render(refs("decoder"), model(), runtime(decoder=with_leader))
    assert env(container(result, runner_name="worker"))["PARALLELISM_SIZE"] == "12"


def test_model_injection_runs_on_leader_and_worker() -> None:
    piece = {"leader": {"runner": runner()}, "worker": {"size": 1, "runner": runner()}}
    result = do_render(refs(), model(), runtime(engine=piece))
    for name in ("leader", "worker"):
        assert env(container(result, runner_name=name))["MODEL_PATH"] == MODEL_PATH
        assert pod(result, name)["nodeSelector"] == {SELECTOR_KEY: "Ready"}
        assert {"name": "m", "hostPath": {"path": MODEL_PATH}} in pod(result, name)["volumes"]


# -- fine-tuned weights and overlays -------------------------------------------------------------


def test_two_fine_tuned_weights_are_render_failed() -> None:
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["a", "b"]})
    error = blocked(spec, model(), runtime(), ftw("a"), ftw("b"))
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == "stacked fine-tuned serving is not supported yet"


def test_missing_fine_tuned_weight_is_render_failed() -> None:
    error = blocked(refs(model_ref={"name": "m", "fineTunedWeights": ["gone"]}), model(), runtime())
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == "No FineTunedWeight with the name: gone"


def test_a_missing_runtime_is_reported_before_a_missing_fine_tuned_weight() -> None:
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["gone"]}, runtime_ref="nope")
    assert blocked(spec, model()).reason is BlockReason.RUNTIME_NOT_FOUND


@pytest.mark.parametrize(
    ("configuration", "message"),
    [
        (None, "unexpected end of JSON input"),
        ("null", "unexpected end of JSON input"),
        ("yes", "json: cannot unmarshal string into Go value of type map[string]interface {}"),
        ([1], "json: cannot unmarshal array into Go value of type map[string]interface {}"),
    ],
)
def test_fine_tuned_weight_configuration_must_be_an_object(configuration: Any, message: str) -> None:
    weight = ftw()
    if configuration is None:
        del weight["spec"]["configuration"]
    elif configuration == "null":
        weight["spec"]["configuration"] = None
    else:
        weight["spec"]["configuration"] = configuration
    error = blocked(refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]}), model(), runtime(), weight)
    assert (error.reason, error.message) == (BlockReason.RENDER_FAILED, message)


def test_router_loads_no_fine_tuned_weights() -> None:
    piece = {"runner": runner("router")}
    spec = refs("router", model_ref={"name": "m", "fineTunedWeights": ["gone"]})
    result = do_render(spec, model(), runtime(router=piece))
    meta = template(result)["metadata"]
    assert meta["labels"]["fine-tuned-serving"] == "false"
    assert not [k for k in meta["labels"] if k.startswith("fine-tuned-") and k != "fine-tuned-serving"]
    assert not [k for k in meta["annotations"] if "fine-tuned" in k]


def test_merged_weights_drop_mount_model_path_and_selectors() -> None:
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]})
    result = do_render(spec, model(), runtime(nodeSelector={"pool": "a"}), ftw(merged=True))
    main = container(result)
    assert main["volumeMounts"] == [{"name": "model-empty-dir", "mountPath": "/opt/ml/model"}]
    assert "MODEL_PATH" not in env(main)
    spec_ = pod(result)
    assert "nodeSelector" not in spec_
    assert spec_["volumes"] == [
        {"name": "m", "hostPath": {"path": MODEL_PATH}},
        {"name": "model-empty-dir", "emptyDir": {"medium": "Memory"}},
    ]
    meta = template(result)["metadata"]
    assert meta["labels"]["fine-tuned-serving"] == "true"
    assert meta["labels"]["fine-tuned-serving-with-merged-weights"] == "true"
    assert meta["labels"]["fine-tuned-weight-ft-strategy"] == "lora"
    assert meta["annotations"]["ome.io/fine-tuned-serving-with-merged-weights"] == "true"
    assert "ome.io/inject-model-init" not in meta["annotations"]
    assert meta["annotations"]["ome.io/inject-fine-tuned-adapter"] == "ft"


def test_adapter_keeps_the_base_model_but_not_its_model_path() -> None:
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]})
    result = do_render(spec, model(vendor="acme"), runtime(), ftw())
    main = container(result)
    assert {"name": "m", "mountPath": MODEL_PATH, "readOnly": True} in main["volumeMounts"]
    assert {"name": "model-empty-dir", "mountPath": "/opt/ml/model"} in main["volumeMounts"]
    assert "MODEL_PATH" not in env(main)
    assert "SERVED_MODEL_NAME" not in env(main)
    assert pod(result)["nodeSelector"] == {SELECTOR_KEY: "Ready"}
    assert template(result)["metadata"]["labels"]["fine-tuned-serving-with-merged-weights"] == "false"


def test_meta_vendor_fine_tuned_env() -> None:
    piece = {"runner": runner(env=[{"name": "SERVED_MODEL_NAME", "value": "old"}])}
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]})
    result = do_render(spec, model(vendor="meta"), runtime(engine=piece), ftw())
    values = env(container(result))
    assert values["SERVED_MODEL_NAME"] == "/data/ft"
    assert values["MODEL_PATH"] == "/opt/ml/model"


@pytest.mark.parametrize("vendor", ["Meta", "META"])
def test_meta_vendor_check_is_exact(vendor: str) -> None:
    piece = {"runner": runner(env=[{"name": "SERVED_MODEL_NAME", "value": "old"}])}
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]})
    result = do_render(spec, model(vendor=vendor), runtime(engine=piece), ftw())
    assert env(container(result))["SERVED_MODEL_NAME"] == "old"


def test_fine_tuned_mount_keys_on_the_volume_name_not_the_path() -> None:
    """AppendVolumeMountIfNotExist (isvcutils, used by UpdateVolumeMounts) compares names: a runner
    mount of another volume at /opt/ml/model does not stop model-empty-dir, one named model-empty-dir
    elsewhere does."""
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]})
    other = {
        "volumes": [{"name": "mine", "emptyDir": {}}],
        "runner": runner(volumeMounts=[{"name": "mine", "mountPath": "/opt/ml/model"}]),
    }
    result = do_render(spec, model(), runtime(engine=other), ftw())
    mounts = [m for m in container(result)["volumeMounts"] if m["mountPath"] == "/opt/ml/model"]
    assert mounts == [
        {"name": "mine", "mountPath": "/opt/ml/model"},
        {"name": "model-empty-dir", "mountPath": "/opt/ml/model"},
    ]
    same_name = {"runner": runner(volumeMounts=[{"name": "model-empty-dir", "mountPath": "/scratch"}])}
    result = do_render(spec, model(), runtime(engine=same_name), ftw())
    names = [m["name"] for m in container(result)["volumeMounts"]]
    assert names.count("model-empty-dir") == 1


def test_fine_tuned_weight_without_strategy_is_render_failed() -> None:
    spec = refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]})
    error = blocked(spec, model(), runtime(), ftw(strategy=None))
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == 'hyper-parameter "strategy" not set on FineTunedWeight ft'


def test_fine_tuned_strategy_must_be_a_string() -> None:
    weight = ftw()
    weight["spec"]["hyperParameters"] = {"strategy": True}
    error = blocked(refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]}), model(), runtime(), weight)
    assert error.message == 'hyper-parameter "strategy" on FineTunedWeight ft must be a string, got bool'


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"apiGroup": "models.example.com"}, 'unsupported Model API group "models.example.com"'),
        ({"kind": "Model"}, 'unsupported Model kind "Model"'),
        ({"apiGroup": "x.io", "kind": "Model"}, 'unsupported Model API group "x.io"'),
    ],
)
def test_a_model_reference_of_another_group_or_kind_is_render_failed(
    ref: dict[str, str], message: str
) -> None:
    """``ModelReferenceKind`` (inferenceservice/utils/reconciliation.go @ 485b7933): the group, then the
    kind, before any lookup (it was served from ome.io, or reported as a missing ClusterBaseModel)."""
    error = blocked(refs(model_ref={"name": "m", **ref}), model(), runtime())
    assert (error.reason, error.message) == (BlockReason.RENDER_FAILED, message)
    assert do_render(
        refs(model_ref={"name": "m", "apiGroup": "ome.io", "kind": "ClusterBaseModel"}), model(), runtime()
    )


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"apiGroup": "x.io"}, 'resolve overlay "ov": unsupported model API group "x.io"'),
        ({"kind": "Model"}, 'resolve overlay "ov": unsupported model kind "Model"'),
    ],
)
def test_an_overlay_of_another_group_or_kind_fails_the_render(ref: dict[str, str], message: str) -> None:
    """``ResolveOverlays`` (inferenceservice/utils/overlay.go @ 6f229145) skips only a missing, disabled
    or unready overlay; ``GetReferencedModel``'s refusal of the group or kind fails the pass (it was
    mounted from ome.io, or left out silently)."""
    spec = refs(model_ref={"name": "m", "overlays": [{"name": "ov", **ref}]})
    error = blocked(spec, model(), runtime(), model("ov", path="/ov"))
    assert (error.reason, error.message) == (BlockReason.RENDER_FAILED, message)
    ok = refs(
        model_ref={
            "name": "m",
            "overlays": [{"name": "ov", "apiGroup": "ome.io", "kind": "ClusterBaseModel"}],
        }
    )
    assert env(container(do_render(ok, model(), runtime(), model("ov", path="/ov"))))["OVERLAY_OV_MODEL_PATH"]


def test_overlays_mount_all_but_missing_disabled_and_sharded_not_ready() -> None:
    """ResolveOverlays skips only a missing, a disabled and a Sharded-not-Ready overlay; a PerNode
    overlay whose status is not Ready is still mounted."""
    overlays = [{"name": n} for n in ("good", "gone", "off", "loading", "shard")]
    spec = refs(model_ref={"name": "m", "overlays": overlays})
    result = do_render(
        spec,
        model(),
        runtime(),
        model("good", path="/ov/good"),
        model("off", path="/ov/off", disabled=True),
        model("loading", path="/ov/loading", state="Importing"),
        model("shard", path=None, distribution="Sharded", storage={"storageUri": "oci://n/x/b/y/o/z"}),
    )
    main = container(result)
    assert env(main)["OVERLAY_GOOD_MODEL_PATH"] == "/opt/ml/model-overlays/good"
    assert env(main)["OVERLAY_LOADING_MODEL_PATH"] == "/opt/ml/model-overlays/loading"
    mount = {"name": "model-overlay-good", "mountPath": "/opt/ml/model-overlays/good", "readOnly": True}
    assert mount in main["volumeMounts"]
    assert {"name": "model-overlay-good", "hostPath": {"path": "/ov/good"}} in pod(result)["volumes"]
    text = repr(pod(result))
    for omitted in ("gone", "/ov/off", "shard"):
        assert omitted not in text


def test_overlay_without_storage_is_omitted_and_one_without_a_volume_still_gets_its_path() -> None:
    """overlayEffectivePath needs only a storage block; the volume needs a PVC URI or a path."""
    spec = refs(model_ref={"name": "m", "overlays": [{"name": "ov"}, {"name": "hf"}]})
    result = do_render(
        spec,
        model(),
        runtime(),
        model("ov", path=None),
        model("hf", path=None, storage={"storageUri": "hf://x/y"}),
    )
    main = container(result)
    assert [m["name"] for m in main["volumeMounts"]] == ["m"]
    assert "OVERLAY_OV_MODEL_PATH" not in env(main)
    assert env(main)["OVERLAY_HF_MODEL_PATH"] == "/opt/ml/model-overlays/hf"


def test_pvc_model_mounts_its_claim_read_only_with_the_sub_path() -> None:
    spec = refs(model_ref={"name": "m", "overlays": [{"name": "ov"}]})
    result = do_render(
        spec,
        model(path=None, storage={"storageUri": "pvc://models/llama/v3"}),
        runtime(),
        model("ov", path=None, storage={"storageUri": "pvc://team-a:adapters/lora"}),
    )
    main, spec_ = container(result), pod(result)
    assert env(main)["MODEL_PATH"] == "/opt/ml/model"
    assert {"name": "m", "mountPath": "/opt/ml/model", "readOnly": True, "subPath": "llama/v3"} in main[
        "volumeMounts"
    ]
    overlay_mount = {
        "name": "model-overlay-ov",
        "mountPath": "/opt/ml/model-overlays/ov",
        "readOnly": True,
        "subPath": "lora",
    }
    assert overlay_mount in main["volumeMounts"]
    assert {"name": "m", "persistentVolumeClaim": {"claimName": "models", "readOnly": True}} in spec_[
        "volumes"
    ]
    assert {
        "name": "model-overlay-ov",
        "persistentVolumeClaim": {"claimName": "adapters", "readOnly": True},
    } in spec_["volumes"]
    assert "nodeSelector" not in spec_


@pytest.mark.parametrize("uri", ["pvc://", "pvc://claim", "pvc://claim/", "pvc://a/../b", "pvc://Bad_NS:c/p"])
def test_malformed_pvc_uri_has_no_volume_but_is_still_a_pvc_model(uri: str) -> None:
    """isPVCBaseModel reads the prefix only: MODEL_PATH and the missing selector follow it, while
    parsePVCComponents gives no volume for a URI it cannot parse."""
    result = do_render(refs(), model(path=None, storage={"storageUri": uri}), runtime())
    assert env(container(result))["MODEL_PATH"] == "/opt/ml/model"
    assert "volumes" not in pod(result)
    assert "nodeSelector" not in pod(result)


def test_sharded_model_has_no_volume_and_its_uri_as_model_path() -> None:
    ready = {"type": "Ready", "status": "True", "observedGeneration": 2}
    storage = {"storageUri": "oci://n/ns/b/bkt/o/llama", "path": "/ignored"}
    shard = model(path=None, distribution="Sharded", storage=storage)
    shard["metadata"]["generation"] = 2
    shard["status"]["conditions"] = [ready]
    result = do_render(refs(), shard, runtime())
    assert env(container(result))["MODEL_PATH"] == "oci://n/ns/b/bkt/o/llama"
    assert "volumeMounts" not in container(result)
    assert "volumes" not in pod(result)
    assert "nodeSelector" not in pod(result)


def test_pvc_and_sharded_models_skip_only_the_model_ready_selector() -> None:
    """``UpdatePodSpecNodeSelector`` (pkg/render/accelerator.go @ a543351b): a PVC-backed or a Sharded
    model gets no model-ready node key, but the runtime's node selector still applies
    (``applyMergedNodeSelector`` runs on both branches); only merged fine-tuned weights skip it too."""
    rt = runtime(nodeSelector={"pool": "gpu"})
    pvc = model(path=None, storage={"storageUri": "pvc://models/llama/v3"})
    assert pod(do_render(refs(), pvc, rt))["nodeSelector"] == {"pool": "gpu"}
    shard = model(path=None, distribution="Sharded", storage={"storageUri": "oci://n/ns/b/bkt/o/llama"})
    shard["metadata"]["generation"] = 2
    shard["status"]["conditions"] = [{"type": "Ready", "status": "True", "observedGeneration": 2}]
    assert pod(do_render(refs(), shard, rt))["nodeSelector"] == {"pool": "gpu"}


def test_a_sharded_overlay_without_a_storage_uri_gets_no_path() -> None:
    """``overlayEffectivePath``: a Sharded overlay's path is its storage URI; with none (or an empty
    one) it gets no variable, and never a volume or mount."""
    ready = [{"type": "Ready", "status": "True", "observedGeneration": 1}]
    overlays = []
    for name, storage in (("a", {"storageUri": ""}), ("b", {"path": "/ignored"})):
        ov = model(name, path=None, distribution="Sharded", storage=storage)
        ov["metadata"]["generation"] = 1
        ov["status"]["conditions"] = ready
        overlays.append(ov)
    spec = refs(model_ref={"name": "m", "overlays": [{"name": "a"}, {"name": "b"}]})
    result = do_render(spec, model(), runtime(), *overlays)
    assert not [k for k in env(container(result)) if k.startswith("OVERLAY_")]
    assert [v["name"] for v in pod(result)["volumes"]] == ["m"]


@pytest.mark.parametrize(
    ("conditions", "generation", "message"),
    [
        (None, 1, "model m is not ready: model Ready condition is not available"),
        (
            [{"type": "Ready", "status": "False", "observedGeneration": 1, "message": "3/8 shards"}],
            1,
            "model m is not ready: 3/8 shards",
        ),
        ([{"type": "Ready", "status": "False", "observedGeneration": 1}], 1, "model m is not ready"),
        (
            [{"type": "Ready", "status": "True", "observedGeneration": 1}],
            2,
            "model m is not ready: model Ready condition has not observed the latest generation",
        ),
    ],
)
def test_sharded_model_not_ready_is_model_not_found(
    conditions: list[dict[str, Any]] | None, generation: int, message: str
) -> None:
    shard = model(distribution="Sharded", storage={"storageUri": "oci://n/ns/b/bkt/o/llama"})
    shard["metadata"]["generation"] = generation
    if conditions is not None:
        shard["status"]["conditions"] = conditions
    with pytest.raises(RenderBlocked) as blocked:
        do_render(refs(), shard, runtime())
    assert blocked.value.reason == BlockReason.MODEL_NOT_FOUND
    assert blocked.value.message == message


def test_overlay_env_name_is_upper_cased_with_underscores() -> None:
    spec = refs(model_ref={"name": "m", "overlays": [{"name": "vision-adapter-v2"}]})
    result = do_render(spec, model(), runtime(), model("vision-adapter-v2", path="/ov"))
    assert "OVERLAY_VISION_ADAPTER_V2_MODEL_PATH" in env(container(result))


# -- labels and annotations ----------------------------------------------------------------------


def test_label_layers_in_order() -> None:
    piece = {"labels": {"team": "piece", "component": "piece", "extra": "x"}, "runner": runner()}
    result = do_render(
        refs(),
        model(vendor="meta", annotations={"models.ome.io/category": "LARGE"}),
        runtime(engine=piece),
        labels={"team": "replica", "only-replica": "y"},
    )
    assert template(result)["metadata"]["labels"] == {
        "only-replica": "y",
        "team": "piece",
        "extra": "x",
        "ome.io/inferenceservice": "r",
        # TemplateObjectMeta lays the piece's labels over OME's base labels: the piece wins.
        "component": "piece",
        "serving-runtime": "rt",
        "fine-tuned-serving": "false",
        "base-model-name": "m",
        "base-model-size": "LARGE",
        "base-model-type": "Serving",
        "base-model-vendor": "meta",
    }


def test_base_model_size_defaults_to_small_and_vendor_is_optional() -> None:
    labels = template(do_render(refs(), model(), runtime()))["metadata"]["labels"]
    assert labels["base-model-size"] == "SMALL"
    assert "base-model-vendor" not in labels


def test_annotations_in_order_and_replica_annotations_excluded_from_the_hash() -> None:
    piece = {
        "annotations": {"prometheus.io/scrape": "true", "ome.io/serving-runtime": "piece"},
        "runner": runner(),
    }
    annotations = {
        "example.com/contact": "me",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "internal.ome.io/storage-initializer-sourceuri": "s3://x",
        "ome.io/rollout-promote": "abc",
        "ome.io/rollout-rollback": "true",
        "internal.ome.io/in-place-image-transition": "x",
        # Not on OME's disallow list: these ride along.
        "autoscaling.knative.dev/minScale": "1",
    }
    result = do_render(refs(), model(vendor="meta"), runtime(engine=piece), annotations=annotations)
    assert template(result)["metadata"]["annotations"] == {
        "example.com/contact": "me",
        "autoscaling.knative.dev/minScale": "1",
        "prometheus.io/scrape": "true",
        "ome.io/serving-runtime": "piece",
        "ome.io/base-model-name": "m",
        "ome.io/base-model-vendor": "meta",
        "ome.io/base-model-format": "safetensors",
        "ome.io/base-model-format-version": "1.0.0",
    }
    assert result.excluded_annotation_keys == frozenset(annotations)


def test_worker_template_carries_the_leader_metadata() -> None:
    # Runners stamps one TemplateObjectMeta on every runner; nothing is dropped from the worker's.
    piece = {
        "labels": {"tier": "gpu"},
        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8080", "keep": "1"},
        "leader": {"runner": runner()},
        "worker": {"size": 1, "runner": runner()},
    }
    result = do_render(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert template(result, "worker")["metadata"] == template(result, "leader")["metadata"]
    assert template(result, "worker")["metadata"]["annotations"]["prometheus.io/port"] == "8080"


# -- volume references ---------------------------------------------------------------------------


def test_mount_of_an_undeclared_volume_is_render_failed() -> None:
    piece = {"runner": runner(volumeMounts=[{"name": "cache", "mountPath": "/cache"}])}
    error = blocked(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert error.reason is BlockReason.RENDER_FAILED
    assert error.message == (
        'runner "default" container "ome-container": volumeMount "cache" has no matching volume in the pod '
        "(for a multi-node runtime declare it under engineConfig.leader.volumes / engineConfig.worker.volumes)"
    )


def test_init_container_mounts_are_checked_too() -> None:
    piece = {
        "initContainers": [
            {"name": "warm", "image": "i", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}
        ],
        "runner": runner(),
    }
    error = blocked(refs("decoder", model_ref=None, runtime_ref="rt"), runtime(decoder=piece))
    assert error.message.startswith('runner "default" container "warm": volumeMount "x"')
    assert "decoderConfig.leader.volumes / decoderConfig.worker.volumes" in error.message


def test_leader_mounting_a_worker_only_volume_is_render_failed() -> None:
    mounts = [{"name": "dshm", "mountPath": "/dev/shm"}]
    piece = {
        "leader": {"runner": runner(volumeMounts=mounts)},
        "worker": {
            "size": 1,
            "volumes": [{"name": "dshm", "emptyDir": {}}],
            "runner": runner(volumeMounts=mounts),
        },
    }
    error = blocked(refs(model_ref=None, runtime_ref="rt"), runtime(engine=piece))
    assert error.message.startswith('runner "leader" container "ome-container": volumeMount "dshm"')


# -- purity --------------------------------------------------------------------------------------


def test_render_leaves_its_inputs_alone_and_shares_nothing_with_them() -> None:
    piece = {
        "volumes": [{"name": "dshm", "emptyDir": {}}],
        "runner": runner(
            env=[{"name": "A", "value": "1"}], volumeMounts=[{"name": "dshm", "mountPath": "/d"}]
        ),
    }
    objects = [model(), runtime(engine=piece), ftw()]
    originals = copy.deepcopy(objects)
    catalog = Catalog.from_objects(objects)
    rep = replica(refs(model_ref={"name": "m", "fineTunedWeights": ["ft"]}), labels={"a": "b"})
    rep_dump = rep.model_dump(by_alias=True)
    catalog_dump = {key: value.model_dump(by_alias=True) for key, value in catalog.runtimes.items()}

    first = render(rep, catalog)
    first.runners[0].template["spec"]["containers"][0]["env"].append({"name": "MUTATED", "value": "x"})
    second = render(rep, catalog)

    assert objects == originals
    assert rep.model_dump(by_alias=True) == rep_dump
    assert {key: value.model_dump(by_alias=True) for key, value in catalog.runtimes.items()} == catalog_dump
    assert "MUTATED" not in env(container(second))


def test_piece_label_with_a_null_value_is_empty_on_every_render() -> None:
    # Go decodes a null in a map[string]string as "": the merged piece and the memoized render agree.
    piece = {"labels": {"tier": None}, "runner": runner()}
    # The CRD refuses the null (strict reading); Go's decoder reads it, so the render is asked leniently.
    catalog = Catalog.from_objects([runtime(engine=piece)], strict=False)
    rep = replica(refs(model_ref=None, runtime_ref="rt"))
    first = render(rep, catalog)
    again = render(replica(refs(model_ref=None, runtime_ref="rt"), name="other"), catalog)
    for result in (first, again):
        assert template(result)["metadata"]["labels"]["tier"] == ""
