"""The review (issue 36) on an OME-shaped catalog, through the API a tool author reads
(:func:`omerender.diff.build_review`) and the comment it writes: a router image bump over 200 runtimes
is one group under 8,000 characters naming the changed runtimes; costs count GPUs as OME does (a
runtime's pod at 2 GPUs instead of 1; a new replica's GPUs)."""

from __future__ import annotations

import copy
from typing import Any

from omerender.catalog import Catalog
from omerender.diff import Status, build_review, diff_replicas, review_to_markdown
from omerender.models import InferenceReplica, parse_object
from omerender.readiness import assume_models_ready
from tests.unit import ome_shaped_repo as shaped

Obj = dict[str, Any]
OLD_ROUTER = "ghcr.io/sgl-project/smg:v0.2.3.post1-dev"
NEW_ROUTER = "ghcr.io/sgl-project/smg:v0.2.4.post1-dev"


def _catalog(router_image: str) -> list[Obj]:
    """The OME-shaped repository's runtimes (each with a router piece) and models (all formatted)."""
    out: list[Obj] = []
    for path, docs in shaped.initial().objects.items():
        if "legacy" in path:
            continue
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") not in (
                "ClusterServingRuntime",
                "ClusterBaseModel",
            ):
                continue
            doc = copy.deepcopy(doc)
            if doc["kind"] == "ClusterBaseModel":
                doc["spec"]["modelFormat"] = {"name": "safetensors", "version": "1.0.0"}
            else:
                doc["spec"]["routerConfig"] = {
                    "runner": {
                        "name": "router",
                        "image": router_image,
                        "resources": {"requests": {"cpu": "2"}},
                    }
                }
            out.append(doc)
    return out


def _replicas(objects: list[Obj], components: tuple[str, ...]) -> dict[tuple[str, str], InferenceReplica]:
    out = {}
    for doc in objects:
        if doc["kind"] != "ClusterBaseModel":
            continue
        model = doc["metadata"]["name"]
        for component in components:
            raw = {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceReplica",
                "metadata": {
                    "name": f"{model}-{component}",
                    "namespace": shaped.NAMESPACE,
                    "uid": f"u-{model}",
                },
                "spec": {"component": component, "modelRef": {"name": model}},
            }
            replica = parse_object(InferenceReplica, raw, strict=False)
            out[(replica.namespace, replica.metadata.name)] = replica
    return out


def _ready(objects: list[Obj]) -> Catalog:
    return assume_models_ready(Catalog.from_objects(objects, strict=False)).catalog


def test_a_router_image_bump_over_200_runtimes_is_one_group_said_once() -> None:
    before, after = _catalog(OLD_ROUTER), _catalog(NEW_ROUTER)
    replicas = _replicas(before, ("engine", "router"))
    old, new = _ready(before), _ready(after)
    review = build_review(diff_replicas(replicas, replicas, old, new), old, new, replicas, replicas)
    # The typed result: one group of the 200 router replicas, the change once, its causes named.
    (group,) = review.groups
    assert group.status is Status.ROLLS
    assert group.fails
    assert len(group.replicas) == 200
    assert all(name.endswith("-router") for _, name in group.replicas)
    assert group.changes == (f'runner default: containers[router].image: "{OLD_ROUTER}" -> "{NEW_ROUTER}"',)
    (cause,) = group.causes
    assert cause.startswith("100 ClusterServingRuntimes changed: srt-")  # the 100 the replicas select
    assert (group.cost.pods, group.cost.gpus) == (0, 0)
    (change,) = review.catalog_changes
    assert (change.kind, change.change, len(change.objects)) == ("ClusterServingRuntime", "changed", 200)
    comment = review_to_markdown(review)
    assert len(comment) < 8_000
    assert comment.count(f'"{OLD_ROUTER}" -> "{NEW_ROUTER}"') == 2  # the catalog's change and the group's
    assert (
        "- **200 ClusterServingRuntimes changed: srt-arctic-gang, srt-arctic-large, srt-arctic-medium and 197 more**"
        in comment
    )
    assert "- cause: 100 ClusterServingRuntimes changed: " in comment
    assert max(map(len, comment.splitlines())) <= 500
    # The forecast's section goes after the groups, within the budget.
    forecast = "#### Forecast\n\nrolls in 3 steps"
    with_forecast = review_to_markdown(review, extra_sections=[forecast], max_chars=3_000)
    assert len(with_forecast) <= 3_000
    assert forecast in with_forecast
    assert with_forecast.index("#### Forecast") > with_forecast.index("#### Why replicas change")


def _inheriting(base_image: str) -> list[Obj]:
    """A base runtime holding the pods' tolerations, and two children (Llama and Qwen2, small) inheriting
    them (a toleration named for ``base_image``'s tag)."""
    base = shaped._runtime("vllm", 0, "small", "0", "10B")
    base["metadata"]["name"] = "vllm-base"
    tag = base_image.rsplit(":", 1)[1]
    base["spec"]["engineConfig"]["tolerations"] = [{"key": f"pool-{tag}", "operator": "Exists"}]
    del base["spec"]["supportedModelFormats"]
    children = []
    for arch in (0, 1):
        child = shaped._runtime("vllm", arch, "small", "0", "10B")
        child["metadata"]["annotations"] = {"ome.io/inherit-from": "vllm-base"}
        del child["spec"]["engineConfig"]["tolerations"]
        children.append(child)
    models = [
        shaped._model(shaped.model_name(i), shaped.ARCHITECTURES[i % 20], "1B", formatted=True)
        for i in (0, 1)
    ]
    return [base, *children, *models]


def test_costs_count_gpus_as_ome_does_and_new_replicas_gpus() -> None:
    objects = _inheriting("vllm/vllm-openai:v0.9.0")
    bigger = copy.deepcopy(objects)
    runner = bigger[1]["spec"]["engineConfig"]["runner"]  # the Llama child: 1 GPU -> 2
    for section in ("requests", "limits"):
        runner["resources"][section]["nvidia.com/gpu"] = "2"
    replicas = _replicas(objects, ("engine",))
    added = dict(replicas)
    extra = copy.deepcopy(replicas[(shaped.NAMESPACE, f"{shaped.model_name(1)}-engine")])
    object.__setattr__(extra.metadata, "name", "qwen-extra")
    added[(shaped.NAMESPACE, "qwen-extra")] = extra
    old, new = _ready(objects), _ready(bigger)
    review = build_review(diff_replicas(replicas, added, old, new), old, new, replicas, added)
    by_status = {g.status: g for g in review.groups}
    assert (by_status[Status.ROLLS].cost.pods, by_status[Status.ROLLS].cost.gpus) == (0, 1)
    assert by_status[Status.NEW].cost.new_gpus == 1
    assert (review.cost.pods, review.cost.gpus, review.cost.new_gpus) == (1, 2, 1)


def test_groups_told_apart_only_by_a_value_lead_their_headings_with_it() -> None:
    """Half the runtimes' routers at one tag, half at another, all bumped to a third: two groups whose
    fields are the same; each heading (and the forecast's row cut from it) leads with its own tag."""
    third = "ghcr.io/sgl-project/smg:v0.3.0"
    before = _catalog(OLD_ROUTER)
    for i, doc in enumerate(before):
        if doc["kind"] == "ClusterServingRuntime" and i % 2:
            doc["spec"]["routerConfig"]["runner"]["image"] = NEW_ROUTER
    after = _catalog(third)
    replicas = _replicas(before, ("router",))
    old, new = _ready(before), _ready(after)
    review = build_review(diff_replicas(replicas, replicas, old, new), old, new, replicas, replicas)
    labels = sorted(g.label for g in review.groups)
    assert labels == [
        "rolls: image smg:v0.2.3.post1-dev -> v0.3.0",
        "rolls: image smg:v0.2.4.post1-dev -> v0.3.0",
    ]
    assert sum(len(g.replicas) for g in review.groups) == 200
    # One group alone keeps the field's name: nothing to tell it apart from.
    same = _ready(_catalog(OLD_ROUTER))
    lone = build_review(diff_replicas(replicas, replicas, same, new), same, new, replicas, replicas)
    assert [g.label for g in lone.groups] == ["rolls: containers[router].image"]
