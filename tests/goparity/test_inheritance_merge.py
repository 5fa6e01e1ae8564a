"""OME's ``runtimeinheritance`` merge tests, one by one, through :func:`omerender.merge.merge_inherited`.

Source: sgl-project/ome ``pkg/runtimeinheritance/merge_test.go`` at commit
865bebfdb0e81f9e2d30be100ecd6bee75e631c4 (ome-projects/ome's ``merge_test.go`` is not in the index).
Each case names its Go test function. Go's ``Merge`` takes typed specs; here the same specs are JSON-like
data, and a nil spec is an absent (empty) one: omerender merges only runtimes that exist.
"""

from __future__ import annotations

import copy
from typing import Any

from omerender.merge import merge_inherited


def _containers(**container: Any) -> dict[str, Any]:
    return {"containers": [{"name": "ome-container", **container}]}


def test_merge_nil_handling() -> None:
    """merge_test.go TestMerge_NilHandling: Merge(parent, nil) is a copy of the parent, Merge(nil, child)
    the child. (Merge(nil, nil) = nil has no counterpart: omerender never merges two absent specs.)"""
    parent = {"disabled": True}
    child = {"disabled": False}
    got = merge_inherited(parent, {})
    assert got == parent
    assert got is not parent
    assert merge_inherited({}, child) == child


def test_merge_scalar_child_wins() -> None:
    """merge_test.go TestMerge_ScalarChildWins."""
    assert merge_inherited({"disabled": True}, {"disabled": False})["disabled"] is False


def test_merge_scalar_child_unset_takes_parent() -> None:
    """merge_test.go TestMerge_ScalarChildUnsetTakesParent."""
    assert merge_inherited({"disabled": True}, {})["disabled"] is True


def test_merge_named_list_per_key_merges_env_vars() -> None:
    """merge_test.go TestMerge_NamedListPerKeyMergesEnvVars."""
    parent = _containers(
        env=[{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": "FROM_PARENT", "value": "yes"}]
    )
    child = _containers(
        env=[{"name": "NCCL_DEBUG", "value": "TRACE"}, {"name": "FROM_CHILD", "value": "yes"}]
    )
    got = merge_inherited(parent, child)
    assert len(got["containers"]) == 1
    env = {e["name"]: e["value"] for e in got["containers"][0]["env"]}
    assert env == {"NCCL_DEBUG": "TRACE", "FROM_PARENT": "yes", "FROM_CHILD": "yes"}


def test_merge_plain_list_child_replaces() -> None:
    """merge_test.go TestMerge_PlainListChildReplaces."""
    got = merge_inherited(
        _containers(command=["python", "-m", "old"]), _containers(command=["python", "-m", "new"])
    )
    assert got["containers"][0]["command"] == ["python", "-m", "new"]


def test_merge_plain_list_child_unset_takes_parent() -> None:
    """merge_test.go TestMerge_PlainListChildUnsetTakesParent."""
    got = merge_inherited(_containers(command=["python", "-m", "parent"]), _containers(image="child-image"))
    assert got["containers"][0]["command"] == ["python", "-m", "parent"]
    assert got["containers"][0]["image"] == "child-image"


def test_merge_map_per_key_merge() -> None:
    """merge_test.go TestMerge_MapPerKeyMerge."""
    got = merge_inherited(
        {"nodeSelector": {"arch": "arm64", "from": "parent"}},
        {"nodeSelector": {"arch": "amd64", "from": "child"}},
    )
    assert got["nodeSelector"]["arch"] == "amd64"
    assert got["nodeSelector"]["from"] == "child"


def test_merge_nested_pod_spec_recurses() -> None:
    """merge_test.go TestMerge_NestedPodSpecRecurses."""
    parent = {"volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}
    child = _containers(image="sglang:latest")
    got = merge_inherited(parent, child)
    assert [v["name"] for v in got["volumes"]] == ["dshm"]
    assert len(got["containers"]) == 1
    assert got["containers"][0]["image"] == "sglang:latest"


def test_merge_empty_child_preserves_parent_containers() -> None:
    """merge_test.go TestMerge_EmptyChildPreservesParentContainers: the child's ``containers: null``
    (no omitempty on ServingRuntimePodSpec.Containers) is stripped, not applied."""
    parent = _containers(env=[{"name": "PRESERVED", "value": "yes"}])
    for child in ({}, {"containers": None}):
        got = merge_inherited(parent, child)
        assert len(got["containers"]) == 1
        assert [e["name"] for e in got["containers"][0]["env"]] == ["PRESERVED"]


def test_merge_does_not_mutate_inputs() -> None:
    """merge_test.go TestMerge_DoesNotMutateInputs."""
    parent = {"disabled": True}
    child = {"disabled": False}
    before = copy.deepcopy((parent, child))
    merge_inherited(parent, child)
    assert (parent, child) == before
