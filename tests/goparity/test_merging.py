"""OME's ``inferenceservice/utils`` merging tests, table by table, through :mod:`omerender.merge`.

Source: ome-projects/ome ``pkg/controller/v1beta1/inferenceservice/utils/merging_test.go`` at commit
9177c1b002e2be4765737cb759209facb7779025 (the newest standalone-era version in the index; the
sgl-project/ome versions predate the fold and the name fallback). Each case names its Go test function
and table entry. The ``MergeArgs`` / ``OverrideArgParam`` / ``OverrideCommandParam`` /
``overrideKeyValueInSlice`` tables and ``TestRestoreRunnerName_FallbackPrecedence`` have no
counterpart in omerender (the functions' bodies and their callers are not in the index); they are
counted in ``docs/goparity.md`` ("The merges").
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender.merge import (
    fill_scheduler_name,
    fold_component_pod_spec,
    merge_component_spec,
    merge_containers,
)


def _empty_dir(name: str) -> dict[str, Any]:
    return {"name": name, "emptyDir": {}}


def _names(volumes: list[dict[str, Any]] | None) -> list[str]:
    return [v["name"] for v in volumes or []]


def _find(volumes: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(v for v in volumes if v["name"] == name)


# -- TestMergeEngineSpecPreservesRuntimeServicePortAppProtocols ----------------------------------


def test_merge_engine_spec_preserves_runtime_service_port_app_protocols() -> None:
    """merging_test.go TestMergeEngineSpecPreservesRuntimeServicePortAppProtocols (single case)."""
    runtime = {"servicePortAppProtocols": {"http": "kubernetes.io/h2c"}}
    merged = merge_component_spec(runtime, {}, "engine")
    assert merged is not None
    assert merged["servicePortAppProtocols"] == {"http": "kubernetes.io/h2c"}


# -- TestMergeRuntimeContainers_NamePrecedence -----------------------------------------------------


@pytest.mark.parametrize(
    ("runtime_name", "predictor_name", "expected"),
    [
        pytest.param("rt-name", "user-name", "user-name", id="(a) predictor wins"),
        pytest.param("rt-name", "", "rt-name", id="(b) predictor empty falls back to runtime"),
        pytest.param("", "", "ome-container", id="(c) both empty falls back to ome-container"),
    ],
)
def test_merge_runtime_containers_name_precedence(
    runtime_name: str, predictor_name: str, expected: str
) -> None:
    """merging_test.go TestMergeRuntimeContainers_NamePrecedence, subtests (a), (b), (c)."""
    merged = merge_containers(
        {"name": runtime_name, "image": "rt:v1"}, {"name": predictor_name, "image": "user:v1"}
    )
    assert merged["name"] == expected


# -- TestMergeEngineSpec_FoldComponentPodSpec ------------------------------------------------------

TOL_COMPONENT = {"key": "component", "operator": "Exists"}
TOL_LEADER = {"key": "leader", "operator": "Exists"}
AFFINITY_COMPONENT: dict[str, Any] = {"nodeAffinity": {}}
DSHM_RUNNER = {"name": "ome-container", "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}


def _inherits_component(level: dict[str, Any], gpu: str, secret: str) -> None:
    assert "dshm" in _names(level.get("volumes"))
    assert level["nodeSelector"]["gpu"] == gpu
    assert TOL_COMPONENT in level["tolerations"]
    assert level["affinity"] == AFFINITY_COMPONENT
    assert level["imagePullSecrets"] == [{"name": secret}]


@pytest.mark.parametrize("component", ["engine", "decoder"])
def test_fold_leader_and_worker_inherit_component_level_pod_fields(component: str) -> None:
    """merging_test.go TestMergeEngineSpec_FoldComponentPodSpec / TestMergeDecoderSpec_FoldComponentPodSpec,
    subtest "leader and worker inherit component-level pod fields" (gpu a100 / h100)."""
    gpu = "a100" if component == "engine" else "h100"
    runtime = {
        "volumes": [_empty_dir("dshm")],
        "nodeSelector": {"gpu": gpu},
        "tolerations": [TOL_COMPONENT],
        "affinity": AFFINITY_COMPONENT,
        "imagePullSecrets": [{"name": "regcred"}],
        "leader": {"runner": DSHM_RUNNER},
        "worker": {"size": 2, "runner": DSHM_RUNNER},
    }
    merged = merge_component_spec(runtime, {}, component)
    assert merged is not None
    assert merged["leader"] is not None
    assert merged["worker"] is not None
    _inherits_component(merged["leader"], gpu, "regcred")
    _inherits_component(merged["worker"], gpu, "regcred")


def test_fold_leader_worker_level_fields_override_component_on_conflict() -> None:
    """merging_test.go TestMergeEngineSpec_FoldComponentPodSpec, subtest
    "leader/worker-level fields override component on conflict"."""
    runtime = {
        "volumes": [_empty_dir("dshm")],
        "nodeSelector": {"gpu": "a100"},
        "tolerations": [TOL_COMPONENT],
        "imagePullSecrets": [{"name": "component-cred"}],
        "leader": {
            "volumes": [{"name": "scratch", "hostPath": {"path": "/scratch"}}],
            "nodeSelector": {"gpu": "h100"},
            "tolerations": [TOL_LEADER],
            "imagePullSecrets": [{"name": "leader-cred"}],
            "runner": {"name": "ome-container"},
        },
        "worker": {"size": 1, "runner": {"name": "ome-container"}},
    }
    merged = merge_component_spec(runtime, {}, "engine")
    assert merged is not None
    leader = merged["leader"]
    assert sorted(_names(leader["volumes"])) == ["dshm", "scratch"]
    assert _find(leader["volumes"], "dshm")["emptyDir"] is not None
    assert _find(leader["volumes"], "scratch")["hostPath"]["path"] == "/scratch"
    assert sorted(s["name"] for s in leader["imagePullSecrets"]) == ["component-cred", "leader-cred"]
    assert leader["nodeSelector"]["gpu"] == "h100"
    assert leader["tolerations"] == [TOL_LEADER]


@pytest.mark.parametrize("component", ["engine", "decoder"])
def test_fold_single_pod_path_unchanged(component: str) -> None:
    """merging_test.go TestMergeEngineSpec_FoldComponentPodSpec / TestMergeDecoderSpec_FoldComponentPodSpec,
    subtest "single-pod path unchanged"."""
    runtime: dict[str, Any] = {"volumes": [_empty_dir("dshm")], "runner": {"name": "ome-container"}}
    if component == "engine":
        runtime |= {"nodeSelector": {"gpu": "a100"}, "tolerations": [TOL_COMPONENT]}
    merged = merge_component_spec(runtime, {}, component)
    assert merged is not None
    assert merged.get("leader") is None
    assert merged.get("worker") is None
    assert _names(merged["volumes"]) == ["dshm"]
    if component == "engine":
        assert merged["nodeSelector"]["gpu"] == "a100"
        assert merged["tolerations"] == [TOL_COMPONENT]


def test_fold_runtime_nil_isvc_only_path_also_folds() -> None:
    """merging_test.go TestMergeEngineSpec_FoldComponentPodSpec, subtest "runtime-nil ISVC-only path also folds"."""
    service = {
        "volumes": [_empty_dir("dshm")],
        "leader": {"runner": DSHM_RUNNER},
        "worker": {"size": 1},
    }
    merged = merge_component_spec(None, service, "engine")
    assert merged is not None
    assert "dshm" in _names(merged["leader"]["volumes"])
    assert "dshm" in _names(merged["worker"]["volumes"])


def test_decoder_fold_leader_level_field_wins_on_conflict() -> None:
    """merging_test.go TestMergeDecoderSpec_FoldComponentPodSpec, subtest "leader-level field wins on conflict"."""
    runtime = {
        "nodeSelector": {"tier": "component"},
        "leader": {"nodeSelector": {"tier": "leader"}, "runner": {"name": "ome-container"}},
        "worker": {"size": 1},
    }
    merged = merge_component_spec(runtime, {}, "decoder")
    assert merged is not None
    assert merged["leader"]["nodeSelector"]["tier"] == "leader"


# -- TestFoldComponentPodSpecIntoLeaderWorker_NilSafety --------------------------------------------


def test_fold_nil_component_is_a_no_op() -> None:
    """merging_test.go TestFoldComponentPodSpecIntoLeaderWorker_NilSafety, subtest "nil component is a no-op"
    (a piece without component-level pod fields)."""
    piece = {"leader": {"volumes": [_empty_dir("keep")]}}
    assert _names(fold_component_pod_spec(piece)["leader"]["volumes"]) == ["keep"]


def test_fold_nil_leader_and_worker_do_not_panic() -> None:
    """merging_test.go TestFoldComponentPodSpecIntoLeaderWorker_NilSafety, subtest
    "nil leader and worker do not panic"."""
    piece = {"volumes": [_empty_dir("dshm")]}
    assert fold_component_pod_spec(piece) == piece


# -- TestMergeSchedulerName ------------------------------------------------------------------------


def test_merge_scheduler_name_fills_every_empty_pod_spec_level() -> None:
    """merging_test.go TestMergeSchedulerName, subtest "fills every empty pod-spec level"."""
    for piece in ({"leader": {}, "worker": {"size": 2}}, {"leader": {}, "worker": {"size": 1}}, {}):
        filled = fill_scheduler_name(piece, "custom-scheduler")
        assert filled["schedulerName"] == "custom-scheduler"
        for level in ("leader", "worker"):
            if level in piece:
                assert filled[level]["schedulerName"] == "custom-scheduler"


def test_merge_scheduler_name_set_levels_always_win() -> None:
    """merging_test.go TestMergeSchedulerName, subtest "set levels always win"."""
    piece = {
        "schedulerName": "component-scheduler",
        "leader": {"schedulerName": "leader-scheduler"},
        "worker": {"size": 2},
    }
    filled = fill_scheduler_name(piece, "custom-scheduler")
    assert filled["schedulerName"] == "component-scheduler"
    assert filled["leader"]["schedulerName"] == "leader-scheduler"
    assert filled["worker"]["schedulerName"] == "custom-scheduler"


def test_merge_scheduler_name_empty_top_level_name_is_a_no_op() -> None:
    """merging_test.go TestMergeSchedulerName, subtest "empty top-level name is a no-op"."""
    filled = fill_scheduler_name({"leader": {}}, "")
    assert not filled.get("schedulerName")
    assert not filled["leader"].get("schedulerName")


def test_merge_scheduler_name_nil_runtime_does_not_panic() -> None:
    """merging_test.go TestMergeSchedulerName, subtest "nil runtime and nil components do not panic"
    (the nil runtime: no top-level name; omerender merges one piece, never a nil one)."""
    assert fill_scheduler_name({}, None) == {}
