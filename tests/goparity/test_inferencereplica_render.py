"""OME's ``inferencereplica/render_test.go``, entry by entry, through ``omerender.render``/``preview``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/render_test.go`` @
a543351b5b64a2b3675a25e5f1517f2f46c3b34f (``renderFromRefs`` and the reconcile of a refs replica).
Go builds its catalog with ``v1beta1testing`` builders that are not in the index; the objects here
carry the fields the tests name (a PVC model, a runtime whose engine runner runs
``example.com/serving:v1`` with a node selector and an accelerator class the catalog does not hold).
What a reconcile does beyond the render (conditions, events, teardown) is the reconciler's and has no
counterpart in this tier (``docs/goparity.md``). Model readiness: the seed gates every render on
``status.state`` (DECISIONS §3.2), so every model here is Ready unless a case says otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import BlockReason, Catalog, InferenceReplica, RenderBlocked, parse_object, preview, render
from tests.goparity.gp_support import gp_blocked

GO_PATH = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b"
NS, REPLICA, MODEL, RUNTIME, IMAGE = "team-a", "pool-a", "model-a", "runtime-a", "example.com/serving:v1"


def refs_model(**spec: Any) -> dict[str, Any]:
    body = {
        "modelFormat": {"name": "safetensors"},
        "modelFramework": {"name": "Transformers"},
        "storage": {"storageUri": "pvc://models/model-a"},
        **spec,
    }
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": MODEL},
        "spec": body,
        "status": {"state": "Ready"},
    }


def refs_runtime(image: str = IMAGE, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "supportedModelFormats": [
            {
                "name": "safetensors",
                "modelFormat": {"name": "safetensors", "weight": 10},
                "modelFramework": {"name": "Transformers"},
                "autoSelect": True,
            }
        ],
        "engineConfig": {"runner": {"name": "ome-container", "image": image}},
        "nodeSelector": {"accelerator": "type-a"},
        "acceleratorRequirements": {"acceleratorClasses": ["accelerator-a"]},
        **spec,
    }
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": RUNTIME},
        "spec": body,
    }


def refs_replica(
    *,
    model: str | None = MODEL,
    runtime: str | None = RUNTIME,
    component: str = "engine",
    annotations: dict[str, str] | None = None,
) -> InferenceReplica:
    spec: dict[str, Any] = {"component": component, "replicas": 1}
    if model is not None:
        spec["modelRef"] = {"name": model}
    if runtime is not None:
        spec["runtimeRef"] = {"name": runtime}
    metadata: dict[str, Any] = {
        "name": REPLICA,
        "namespace": NS,
        "uid": f"{REPLICA}-uid",
        "generation": 1,
        "labels": {"team": "a"},
    }
    if annotations:
        metadata["annotations"] = annotations
    return parse_object(
        InferenceReplica,
        {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "metadata": metadata, "spec": spec},
    )


def blocked(replica: InferenceReplica, *objects: dict[str, Any]) -> RenderBlocked:
    error = gp_blocked(replica, *objects)
    assert error.message, "a block carries a message"
    return error


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def test_renders_the_runtime_piece_for_the_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_RendersTheRuntimePieceForTheModel."""
    replica = refs_replica()
    before = replica.model_dump(by_alias=True)
    result = render(replica, Catalog.from_objects([refs_model(), refs_runtime()]))
    assert [(r.name, r.size) for r in result.runners] == [("default", 1)]
    assert result.advisories == ()
    pod = result.runners[0].template["spec"]
    assert [c["image"] for c in pod["containers"]] == [IMAGE]
    assert _env(pod["containers"][0]).get("MODEL_PATH")
    assert pod["nodeSelector"]["accelerator"] == "type-a"
    labels = result.runners[0].template["metadata"]["labels"]
    assert labels["ome.io/inferenceservice"] == REPLICA
    assert labels["component"] == "engine"
    assert labels["team"] == "a"
    assert replica.model_dump(by_alias=True) == before, "the rendered runners never reach the replica"
    assert replica.spec.runners in (None, ())


def test_selects_the_runtime_for_the_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_SelectsTheRuntimeForTheModel."""
    result = render(refs_replica(runtime=None), Catalog.from_objects([refs_model(), refs_runtime()]))
    assert result.runners[0].template["spec"]["containers"][0]["image"] == IMAGE
    assert result.runtime_name == RUNTIME


def test_renders_a_runtime_without_a_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_RendersARuntimeWithoutAModel."""
    result = render(refs_replica(model=None), Catalog.from_objects([refs_runtime()]))
    container = result.runners[0].template["spec"]["containers"][0]
    assert container["image"] == IMAGE
    assert "MODEL_PATH" not in _env(container)


def test_reports_the_runtime_piece_missing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsTheRuntimePieceMissing."""
    error = blocked(refs_replica(component="decoder"), refs_model(), refs_runtime())
    assert error.reason is BlockReason.RUNTIME_PIECE_MISSING
    assert 'ClusterServingRuntime "runtime-a" has no decoder piece' in error.message


def test_reports_the_runtime_not_found() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsTheRuntimeNotFound."""
    error = blocked(refs_replica(runtime="runtime-b"), refs_model(), refs_runtime())
    assert error.reason is BlockReason.RUNTIME_NOT_FOUND
    assert error.message == "runtime runtime-b not found in namespace team-a or at cluster scope"


def test_reports_the_model_not_found() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsTheModelNotFound."""
    error = blocked(refs_replica(model="model-b"), refs_model(), refs_runtime())
    assert error.reason is BlockReason.MODEL_NOT_FOUND
    assert error.message == "No BaseModel or ClusterBaseModel with the name: model-b"


def test_reports_a_loading_sharded_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsALoadingShardedModel: a Sharded model without a Ready
    condition is ``ModelNotFound`` saying "not ready" (the model's ``status.state`` is Ready here, so
    the seed's gate passes and Go's Sharded gate is the one that speaks)."""
    error = blocked(refs_replica(), refs_model(distribution="Sharded"), refs_runtime())
    assert error.reason is BlockReason.MODEL_NOT_FOUND
    assert "not ready" in error.message


def test_reports_a_disabled_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsADisabledModel."""
    error = blocked(refs_replica(), refs_model(disabled=True), refs_runtime())
    assert error.reason is BlockReason.MODEL_DISABLED


@pytest.mark.parametrize("with_model", [True, False], ids=["named with a model", "named without a model"])
def test_reports_a_disabled_runtime(with_model: bool) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsADisabledRuntime, entry per ``with_model``."""
    replica = refs_replica(model=MODEL if with_model else None)
    error = blocked(replica, refs_model(), refs_runtime(disabled=True))
    assert error.reason is BlockReason.RUNTIME_DISABLED
    assert error.message == "cluster-scoped runtime runtime-a is disabled"


def test_reports_no_runtime_for_the_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsNoRuntimeForTheModel (the runtime declares no formats)."""
    error = blocked(refs_replica(runtime=None), refs_model(), refs_runtime(supportedModelFormats=[]))
    assert error.reason is BlockReason.RUNTIME_SELECTION_FAILED
    assert error.message.startswith(
        "no runtime found to support model safetensors with format safetensors in namespace team-a. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: runtime-a (model format "
        "'mt:safetensors:Transformers' not in supported formats: no supported formats defined)"
    )


def test_warns_when_the_named_runtime_does_not_declare_the_model() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_WarnsWhenTheNamedRuntimeDoesNotDeclareTheModel: the runners
    render, with one ``RuntimeCompatibilityAdvisory`` in ``renderFromRefs``' words."""
    other = [{"name": "other", "modelFormat": {"name": "other"}, "autoSelect": True}]
    result = render(
        refs_replica(), Catalog.from_objects([refs_model(), refs_runtime(supportedModelFormats=other)])
    )
    assert len(result.runners) == 1
    (advisory,) = result.advisories
    assert advisory.reason == "RuntimeCompatibilityAdvisory"
    assert advisory.message.startswith(
        "Runtime runtime-a does not declare support for model model-a (runtime runtime-a "
    )
    assert advisory.message.endswith("); proceeding because the runtime was named explicitly")


def test_sharded_model_keeps_the_named_runtime_check() -> None:
    """Go: ome-projects/ome pkg/render/resolve.go @ f0c4ef77 ``Resolve`` (the rule the advisory test
    above stops short of): a Sharded model does not get the advisory; the compatibility error blocks,
    ``RuntimeSelectionFailed`` with its text (``classifyResolveError``)."""
    ready = {"type": "Ready", "status": "True", "observedGeneration": 0}
    model = refs_model(distribution="Sharded")
    model["status"]["conditions"] = [ready]
    other = [{"name": "other", "modelFormat": {"name": "other"}, "autoSelect": True}]
    error = blocked(refs_replica(), model, refs_runtime(supportedModelFormats=other))
    assert error.reason is BlockReason.RUNTIME_SELECTION_FAILED
    assert error.message == (
        "runtime runtime-a does not support model safetensors: model format 'mt:safetensors:Transformers' not in "
        "supported formats. Runtime supports: [mt:other]. Mismatches: format name mismatch (model=safetensors, "
        "runtime=other), model has framework Transformers but runtime has no framework requirement"
    )
    # The same Sharded model with a runtime that declares it renders.
    assert render(refs_replica(), Catalog.from_objects([model, refs_runtime()])).advisories == ()


def test_reports_a_missing_template_source() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_ReportsAMissingTemplateSource, and
    TestReconcile_NoTemplateSourcePublishesReadyFalse (its render half)."""
    error = blocked(refs_replica(model=None, runtime=None))
    assert error.reason is BlockReason.TEMPLATE_SOURCE_MISSING
    assert (
        error.message
        == "spec sets neither runners nor modelRef or runtimeRef; one template source is required"
    )


def test_leaves_a_runners_replica_alone() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestRenderFromRefs_LeavesARunnersReplicaAlone: a runners replica renders its own
    runners, reading no catalog."""
    template = {"spec": {"containers": [{"name": "c", "image": "img:1"}]}}
    replica = parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "llama-engine", "namespace": "prod", "uid": "u"},
            "spec": {
                "component": "engine",
                "runners": [{"name": "default", "size": 1, "template": template}],
            },
        },
    )
    result = render(replica, Catalog())
    assert result.source == "runners"
    assert result.runtime_name is None


def test_refs_replica_runs_the_rendered_templates() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestReconcile_RefsReplicaRunsTheRenderedTemplates (what the reconcile creates: one
    pod running the runtime's image with the replica's service label, and one revision)."""
    result = preview(refs_replica(), Catalog.from_objects([refs_model(), refs_runtime()]), instances=1)
    assert [p["spec"]["containers"][0]["image"] for p in result.pods] == [IMAGE]
    assert result.pods[0]["metadata"]["labels"]["ome.io/inferenceservice"] == REPLICA
    assert result.revision.name.startswith(f"{REPLICA}-engine-")
    assert result.controller_revision["metadata"]["name"] == result.revision.name


def test_blocked_render_clears_once_the_runtime_exists() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestReconcile_BlockedRenderPublishesReadyFalse (its render half: RuntimeNotFound,
    then a render once the runtime exists; the condition and event are the reconciler's)."""
    error = blocked(refs_replica(), refs_model())
    assert error.reason is BlockReason.RUNTIME_NOT_FOUND
    assert preview(refs_replica(), Catalog.from_objects([refs_model(), refs_runtime()]), instances=1).pods


def test_refs_replica_follows_a_runtime_edit() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestReconcile_RefsReplicaFollowsARuntimeEdit: a new runner image is a new revision
    at the same generation."""
    first = preview(refs_replica(), Catalog.from_objects([refs_model(), refs_runtime()]), instances=0)
    second = preview(
        refs_replica(),
        Catalog.from_objects([refs_model(), refs_runtime("example.com/serving:v2")]),
        instances=0,
    )
    assert first.revision.name != second.revision.name


def test_refs_replica_annotation_edit_keeps_its_revision() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestReconcile_RefsReplicaAnnotationEditKeepsItsRevision: a refs replica's own
    annotations are inherited pod metadata excluded from the hash; a runtime image edit still rolls."""
    catalog = Catalog.from_objects([refs_model(), refs_runtime()])
    initial = preview(refs_replica(annotations={"example.com/owner": "team-a"}), catalog, instances=0)
    edited = refs_replica(annotations={"example.com/owner": "team-b", "example.com/tier": "gold"})
    assert preview(edited, catalog, instances=0).revision.name == initial.revision.name
    image = Catalog.from_objects([refs_model(), refs_runtime("example.com/serving:v2")])
    assert preview(edited, image, instances=0).revision.name != initial.revision.name


def test_inline_and_refs_rendering_agree() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/render_test.go @ a543351b, TestInlineAndRefsRenderingAgree, as far as omerender reaches: omerender has no
    InferenceService controller, so the projected replica is the refs render's runners stored on a
    replica owned by an InferenceService with the projector's stamp (``ome.io/revision-excluded-
    annotation-keys: example.com/owner``). Under one scope UID (the service's UID, which is also the
    standalone replica's own here) both derive one revision: the owner's annotation is excluded on both,
    by the stamp on one and by the refs rule on the other."""
    scope = "scope-uid"
    gpus = {"example.com/gpu": "2"}
    runtime = refs_runtime(
        supportedModelFormats=[
            {
                "name": "safetensors",
                "modelFormat": {"name": "safetensors", "weight": 10},
                "modelFramework": {"name": "Transformers"},
                "modelArchitecture": "LlamaForCausalLM",
                "autoSelect": True,
            }
        ],
        engineConfig={
            "runner": {
                "name": "ome-container",
                "image": IMAGE,
                "ports": [{"name": "http", "containerPort": 8080}],
                "resources": {"requests": gpus, "limits": gpus},
            }
        },
        nodeSelector={"pool": "runtime", "tier": "x"},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "accelerator-zone", "operator": "In", "values": ["zone-a"]}
                            ]
                        }
                    ]
                }
            }
        },
    )
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "data": {"acceleratorResources": '["example.com/gpu"]'},
    }
    model = refs_model(modelType="llama", modelArchitecture="LlamaForCausalLM")
    catalog = Catalog.from_objects([model, runtime, config])
    annotations = {"example.com/owner": "team-a"}
    standalone = refs_replica(annotations=annotations)
    standalone = standalone.model_copy(
        update={"metadata": standalone.metadata.model_copy(update={"uid": scope})}
    )
    refs = preview(standalone, catalog, instances=0)
    runners = [{"name": r.name, "size": r.size, "template": r.template} for r in refs.render.runners]
    template_meta = runners[0]["template"]["metadata"]
    assert template_meta["labels"]["ome.io/inferenceservice"] == REPLICA
    assert template_meta["annotations"]["example.com/owner"] == "team-a"
    projected = parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {
                "name": REPLICA,
                "namespace": NS,
                "uid": f"{REPLICA}-projected-uid",
                "labels": {"team": "a"},
                "annotations": {
                    **annotations,
                    "ome.io/revision-excluded-annotation-keys": "example.com/owner",
                },
                "ownerReferences": [
                    {
                        "apiVersion": "ome.io/v1beta1",
                        "kind": "InferenceService",
                        "name": REPLICA,
                        "uid": scope,
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "component": "engine",
                "replicas": 1,
                "parentRef": {"name": REPLICA},
                "runners": runners,
            },
        },
    )
    inline = preview(projected, Catalog(), instances=0)
    assert inline.revision.name == refs.revision.name
    assert "ome.io/revision-excluded-annotation-keys" not in standalone.metadata.annotations
