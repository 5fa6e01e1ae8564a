"""The review names a roll's cause: a change to an inherited base runtime is named with the children
it reaches (``via vllm-base <- vllm-llama-small``), in the typed result and in the comment."""

from __future__ import annotations

from typing import Any

from omerender.catalog import Catalog
from omerender.diff import Cost, build_review, diff_replicas, review_to_markdown
from omerender.models import InferenceReplica, parse_object
from tests.unit.test_diff import base_objects, catalog, model, replica, runtime

CHILDREN = ("vllm-llama-small", "vllm-qwen2-small")


def _objects(base_image: str) -> list[dict[str, Any]]:
    children = [runtime(name, None, parent="vllm-base", args=[f"--{name}"]) for name in CHILDREN]
    return [runtime("vllm-base", base_image), *children, runtime("vllm-other", "other:1"), model("m")]


def _replicas() -> dict[tuple[str, str], InferenceReplica]:
    out = {}
    for name in (*CHILDREN, "vllm-other"):
        raw = {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": f"on-{name}", "namespace": "ns", "uid": f"uid-{name}"},
            "spec": {"component": "engine", "modelRef": {"name": "m"}, "runtimeRef": {"name": name}},
        }
        replica = parse_object(InferenceReplica, raw, strict=False)
        out[("ns", replica.metadata.name)] = replica
    return out


def test_an_inherited_base_change_names_the_base_and_the_children_it_reaches() -> None:
    before = Catalog.from_objects(_objects("base:1"), strict=False)
    after = Catalog.from_objects(_objects("base:2"), strict=False)
    replicas = _replicas()
    review = build_review(diff_replicas(replicas, replicas, before, after), before, after, replicas, replicas)
    (group,) = review.groups  # the replica on vllm-other does not roll
    assert group.replicas == (("ns", "on-vllm-llama-small"), ("ns", "on-vllm-qwen2-small"))
    assert group.changes == ('runner default: containers[ome-container].image: "base:1" -> "base:2"',)
    assert group.causes == (
        "ClusterServingRuntime vllm-base changed, inherited by 2 runtimes: "
        "via vllm-base <- vllm-llama-small, vllm-base <- vllm-qwen2-small",
    )
    assert group.cause_keys == (("ClusterServingRuntime", "", "vllm-base"),)
    assert review.defects == ()
    (change,) = review.catalog_changes
    assert change.label() == "ClusterServingRuntime vllm-base changed"
    comment = review_to_markdown(review)
    assert f"- cause: {group.causes[0]}" in comment
    assert '  image: "base:1" -> "base:2"' not in comment  # the catalog's change reads engineConfig...
    assert 'engineConfig.runner.image: "base:1" -> "base:2"' in comment


def test_a_cost_says_the_new_replicas_share_once() -> None:
    """The lasting cost names the new and unblocked replicas' share without repeating the total."""
    assert Cost(0, 2, 0, 16).text() == "+2 pods, +16 GPUs"
    assert Cost(0, 1, 0, 1, new_gpus=1).text() == "+1 pod, +1 GPU (new and unblocked replicas)"
    assert Cost(4, 6, 8, 24, new_gpus=8).text() == "+2 pods, +16 GPUs (new and unblocked replicas: 8 GPUs)"
    assert Cost(0, 2, 0, 2, new_gpus=1).text() == "+2 pods, +2 GPUs (new and unblocked replicas: 1 GPU)"


def test_each_catalog_change_names_the_group_it_reaches_and_idle_ones_are_folded() -> None:
    """A reader sees which group each catalog change causes; a change no replica reads (a runtime no
    replica selects) goes last, folded, with the count still in the heading."""

    def catalog_of(base: str, other: str, unused: str) -> Catalog:
        children = [runtime(name, None, parent="vllm-base", args=[f"--{name}"]) for name in CHILDREN]
        objects = [runtime("vllm-base", base), *children, runtime("vllm-other", other)]
        return Catalog.from_objects([*objects, runtime("vllm-unused", unused), model("m")], strict=False)

    before, after = catalog_of("base:1", "other:1", "unused:1"), catalog_of("base:2", "other:2", "unused:2")
    replicas = _replicas()
    review = build_review(diff_replicas(replicas, replicas, before, after), before, after, replicas, replicas)
    assert [g.replicas for g in review.groups] == [
        (("ns", "on-vllm-llama-small"), ("ns", "on-vllm-qwen2-small")),
        (("ns", "on-vllm-other"),),
    ]
    comment = review_to_markdown(review)
    assert "#### What changed in the catalog (3)" in comment
    assert "- **ClusterServingRuntime vllm-base changed** → group 1\n" in comment
    assert "- **ClusterServingRuntime vllm-other changed** → group 2\n" in comment
    folded = comment.index("<details><summary>1 more catalog change that changes no replica</summary>")
    assert comment.index("- **ClusterServingRuntime vllm-unused changed**\n") > folded
    assert folded < comment.index("#### Why replicas change")


def test_a_gang_changed_alike_in_leader_and_worker_says_its_runners_once() -> None:
    """A gang's image bump changes the same field in both runners: the heading names the runners once
    (``rolls (leader, worker): ...image``); a change in one runner only keeps the runner on the field."""

    def gang(leader_image: str, worker_image: str) -> InferenceReplica:
        def template(image: str) -> dict[str, Any]:
            return {"spec": {"containers": [{"name": "c", "image": image}]}}

        return replica(
            "mn",
            runners=[
                {"name": "leader", "size": 1, "template": template(leader_image)},
                {"name": "worker", "size": 2, "template": template(worker_image)},
            ],
        )

    objs = catalog(*base_objects())
    for after, label in (
        (gang("x:2", "x:2"), "rolls (leader, worker): containers[c].image"),
        (gang("x:2", "x:1"), "rolls: runner leader: containers[c].image"),
    ):
        before = gang("x:1", "x:1")
        key = ("demo", "mn")
        review = build_review(
            diff_replicas({key: before}, {key: after}, objs, objs), objs, objs, {key: before}, {key: after}
        )
        assert [g.label for g in review.groups] == [label]
