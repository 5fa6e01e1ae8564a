"""Strategic merge, runner-into-pod and inheritance merge (02 §3.2–§3.3, 01 §2.4)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omerender.errors import BlockReason, RenderBlocked
from omerender.merge import (
    fold_component_pod_spec,
    main_container_index,
    merge_component_spec,
    merge_containers,
    merge_inherited,
    merge_runner_into_pod,
    strategic_merge,
)
from omerender.runtime_gotypes import OMITEMPTY_ZERO_FIELDS


def _env(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"name": n, "value": v} for n, v in pairs]


# -- strategic_merge: keyed lists ----------------------------------------------------------------


def test_env_override_first_then_base_only() -> None:
    base = {"env": _env(("E1", "a"), ("E2", "b"))}
    override = {"env": _env(("E1", "a2"), ("E3", "c"))}
    assert strategic_merge(base, override)["env"] == _env(("E1", "a2"), ("E3", "c"), ("E2", "b"))


def test_volumes_new_override_item_goes_first() -> None:
    base = {"volumes": [{"name": "model", "hostPath": {"path": "/m"}}]}
    override = {"volumes": [{"name": "cache", "emptyDir": {}}]}
    merged = strategic_merge(base, override)
    assert [v["name"] for v in merged["volumes"]] == ["cache", "model"]
    assert merged["volumes"][0] == {"name": "cache", "emptyDir": {}}


def test_same_named_volumes_merge_field_by_field() -> None:
    # retainKeys acts only on a $retainKeys directive, which json.Marshal of a typed struct never writes.
    base = {"volumes": [{"name": "data", "hostPath": {"path": "/d"}}, {"name": "x", "emptyDir": {}}]}
    override = {"volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}]}
    assert strategic_merge(base, override)["volumes"] == [
        {"name": "data", "hostPath": {"path": "/d"}, "emptyDir": {"medium": "Memory"}},
        {"name": "x", "emptyDir": {}},
    ]


@pytest.mark.parametrize(
    ("base", "override", "expected"),
    [
        # an overridden item keeps its place among the base's (mergeSortedSlice)
        ("ABC", "B", "ABC"),
        ("ABC", "C", "ABC"),
        # patch items keep patch order; a base item goes before the first patch item it precedes
        ("ABC", "CA", "BCA"),
        ("ABC", "BD", "ABDC"),
        ("AB", "AC", "ACB"),
        ("AB", "C", "CAB"),
        ("", "BA", "BA"),
        ("AB", "", "AB"),
    ],
)
def test_keyed_list_order_follows_apimachinery(base: str, override: str, expected: str) -> None:
    """Orders checked against k8s.io/apimachinery's strategicpatch (tools/strategicmerge)."""
    merged = strategic_merge(
        {"env": [{"name": n, "value": "base"} for n in base]},
        {"env": [{"name": n, "value": "patch"} for n in override]},
    )
    assert "".join(e["name"] for e in merged["env"]) == expected
    assert all(e["value"] == ("patch" if e["name"] in override else "base") for e in merged["env"])


@pytest.mark.parametrize(
    ("field", "key", "base_items", "override_items", "expected"),
    [
        (
            "ports",
            "containerPort",
            [{"containerPort": 8080, "name": "http"}, {"containerPort": 9090, "name": "metrics"}],
            [{"containerPort": 8080, "protocol": "TCP"}],
            [
                {"containerPort": 8080, "name": "http", "protocol": "TCP"},
                {"containerPort": 9090, "name": "metrics"},
            ],
        ),
        (
            "volumeMounts",
            "mountPath",
            [{"mountPath": "/dev/shm", "name": "dshm"}],
            [{"mountPath": "/dev/shm", "readOnly": True}, {"mountPath": "/cache", "name": "cache"}],
            [
                {"mountPath": "/dev/shm", "name": "dshm", "readOnly": True},
                {"mountPath": "/cache", "name": "cache"},
            ],
        ),
        (
            "hostAliases",
            "ip",
            [{"ip": "10.0.0.1", "hostnames": ["a"]}, {"ip": "10.0.0.2", "hostnames": ["b"]}],
            [{"ip": "10.0.0.2", "hostnames": ["c"]}],
            [{"ip": "10.0.0.1", "hostnames": ["a"]}, {"ip": "10.0.0.2", "hostnames": ["c"]}],
        ),
        (
            "topologySpreadConstraints",
            "topologyKey",
            [{"topologyKey": "zone", "maxSkew": 1}],
            [{"topologyKey": "zone", "maxSkew": 2}, {"topologyKey": "host", "maxSkew": 1}],
            [{"topologyKey": "zone", "maxSkew": 2}, {"topologyKey": "host", "maxSkew": 1}],
        ),
        (
            "imagePullSecrets",
            "name",
            [{"name": "a"}],
            [{"name": "b"}],
            [{"name": "b"}, {"name": "a"}],
        ),
    ],
)
def test_keyed_lists_merge_by_their_key(
    field: str, key: str, base_items: list[Any], override_items: list[Any], expected: list[Any]
) -> None:
    assert strategic_merge({field: base_items}, {field: override_items})[field] == expected


def test_containers_merge_by_name_and_recurse_into_their_keyed_lists() -> None:
    base = {
        "containers": [
            {"name": "main", "image": "a", "env": _env(("A", "1")), "ports": [{"containerPort": 80}]},
            {"name": "side", "image": "s"},
        ],
        "initContainers": [{"name": "init", "image": "i"}],
    }
    override = {
        "containers": [{"name": "main", "env": _env(("B", "2")), "ports": [{"containerPort": 81}]}],
        "initContainers": [{"name": "init", "image": "i2"}],
    }
    merged = strategic_merge(base, override)
    assert merged["containers"] == [
        {
            "name": "main",
            "image": "a",
            "env": _env(("B", "2"), ("A", "1")),
            "ports": [{"containerPort": 81}, {"containerPort": 80}],
        },
        {"name": "side", "image": "s"},
    ]
    assert merged["initContainers"] == [{"name": "init", "image": "i2"}]


def test_duplicate_override_keys_fold_into_one_item() -> None:
    merged = strategic_merge({"env": []}, {"env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]})
    assert merged["env"] == [{"name": "A", "value": "2"}]


def test_override_item_without_merge_key_is_render_failed() -> None:
    with pytest.raises(RenderBlocked) as info:
        strategic_merge({"env": _env(("A", "1"))}, {"env": [{"value": "x"}]}, path="spec.runner")
    assert info.value.reason is BlockReason.RENDER_FAILED
    assert info.value.message == "spec.runner.env[0]: list item does not contain declared merge key: name"


# -- strategic_merge: maps, structs, atomic lists, null ------------------------------------------


def test_maps_merge_key_by_key() -> None:
    base = {
        "nodeSelector": {"a": "1", "b": "2"},
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1"}},
    }
    override = {"nodeSelector": {"b": "3", "c": "4"}, "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    merged = strategic_merge(base, override)
    assert merged["nodeSelector"] == {"a": "1", "b": "3", "c": "4"}
    assert merged["resources"] == {
        "limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"},
        "requests": {"cpu": "1"},
    }


def test_nested_affinity_merges_structs_but_replaces_unkeyed_lists() -> None:
    term = {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]}]}
    base = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term, term]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": term}],
            },
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
        }
    }
    new_term = {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]}
    override = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [new_term]}
            }
        }
    }
    merged = strategic_merge(base, override)["affinity"]
    assert merged["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [new_term]
    }
    assert merged["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {"weight": 1, "preference": term}
    ]
    assert merged["podAntiAffinity"] == {"requiredDuringSchedulingIgnoredDuringExecution": []}


def test_probe_merges_recursively() -> None:
    base = {"readinessProbe": {"httpGet": {"path": "/health", "port": 8080}, "periodSeconds": 10}}
    override = {"readinessProbe": {"httpGet": {"path": "/ready"}, "timeoutSeconds": 5}}
    assert strategic_merge(base, override)["readinessProbe"] == {
        "httpGet": {"path": "/ready", "port": 8080},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
    }


@pytest.mark.parametrize("field", ["tolerations", "args", "command", "envFrom", "readinessGates"])
def test_atomic_lists_are_replaced_whole(field: str) -> None:
    base = {field: [{"a": 1}, {"b": 2}]}
    override = {field: [{"c": 3}]}
    assert strategic_merge(base, override)[field] == [{"c": 3}]


def test_scalars_replace() -> None:
    assert strategic_merge({"image": "a", "hostIPC": False}, {"image": "b", "hostIPC": True}) == {
        "image": "b",
        "hostIPC": True,
    }


def test_null_deletes_the_key_at_any_depth() -> None:
    base = {
        "nodeSelector": {"a": "1", "b": "2"},
        "affinity": {"nodeAffinity": {"x": 1}},
        "tolerations": [{"key": "k"}],
    }
    override = {"nodeSelector": {"a": None}, "affinity": None, "tolerations": None, "missing": None}
    assert strategic_merge(base, override) == {"nodeSelector": {"b": "2"}}


def test_null_inside_a_value_taken_whole_is_dropped() -> None:
    merged = strategic_merge({}, {"securityContext": {"runAsUser": None, "privileged": True}})
    assert merged == {"securityContext": {"privileged": True}}
    # An item appended to a keyed list is taken as it is (mergeSliceWithoutSpecialElements); the typed
    # decode that follows in Go reads its null as unset.
    merged = strategic_merge({"env": []}, {"env": [{"name": "A", "value": None}]})
    assert merged["env"] == [{"name": "A", "value": None}]


def test_smp_keeps_empty_values_as_values() -> None:
    # Plain SMP: an explicit [] replaces an atomic list; "" replaces a string.
    merged = strategic_merge({"command": ["x"], "image": "a"}, {"command": [], "image": ""})
    assert merged == {"command": [], "image": ""}


def test_strategic_merge_never_mutates_inputs_or_shares_structure() -> None:
    base = {
        "containers": [{"name": "c", "env": _env(("A", "1")), "resources": {"limits": {"cpu": "1"}}}],
        "volumes": [{"name": "v", "hostPath": {"path": "/p"}}],
        "nodeSelector": {"a": "1"},
    }
    override = {
        "containers": [{"name": "c", "env": _env(("B", "2"))}, {"name": "d", "args": ["x"]}],
        "nodeSelector": {"a": None},
        "tolerations": [{"key": "t"}],
    }
    before = copy.deepcopy((base, override))
    merged = strategic_merge(base, override)
    assert (base, override) == before
    assert [c["name"] for c in merged["containers"]] == ["c", "d"]
    merged["containers"][0]["resources"]["limits"]["cpu"] = "9"
    merged["containers"][1]["args"].append("y")
    merged["tolerations"][0]["key"] = "changed"
    merged["volumes"][0]["hostPath"]["path"] = "/changed"
    assert (base, override) == before


# -- merge_runner_into_pod -----------------------------------------------------------------------


def test_container_wins_over_the_runner_and_args_are_runner_then_container() -> None:
    # resolveContainer: MergeRuntimeContainers(runner, container), the runner is the base.
    pod = {
        "containers": [
            {"name": "sidecar", "image": "s"},
            {"name": "ome-container", "image": "a", "args": ["--x"], "env": _env(("A", "1"))},
        ],
        "volumes": [{"name": "dshm", "emptyDir": {}}],
    }
    runner = {"name": "ome-container", "image": "b", "args": ["--y", "--z"], "env": _env(("B", "2"))}
    merged = merge_runner_into_pod(pod, runner)
    assert merged["containers"] == [
        {"name": "sidecar", "image": "s"},
        {
            "name": "ome-container",
            "image": "a",
            "args": ["--y", "--z", "--x"],
            "env": _env(("A", "1"), ("B", "2")),
        },
    ]
    assert merged["volumes"] == pod["volumes"]
    assert main_container_index(merged, runner) == 1


def test_runner_without_args_keeps_container_args() -> None:
    pod = {"containers": [{"name": "ome-container", "args": ["--x"]}]}
    merged = merge_runner_into_pod(pod, {"name": "ome-container", "args": []})
    assert merged["containers"][0]["args"] == ["--x"]


def test_container_empty_fields_leave_the_runner_values() -> None:
    # omitempty: Go does not write the container's "" / [] / false, so the runner's values stay.
    pod = {"containers": [{"name": "c", "image": "", "command": [], "stdin": False, "env": None}]}
    runner = {"name": "c", "image": "img", "command": ["run"], "stdin": True, "env": _env(("A", "1"))}
    assert merge_runner_into_pod(pod, runner)["containers"][0] == runner


def test_container_without_a_required_field_writes_its_zero() -> None:
    # VolumeMount.name has no omitempty: a mount the container names by path only clears the name.
    pod = {"containers": [{"name": "c", "volumeMounts": [{"mountPath": "/m"}]}]}
    runner = {"name": "c", "volumeMounts": [{"mountPath": "/m", "name": "model"}]}
    merged = merge_runner_into_pod(pod, runner)["containers"][0]
    assert merged["volumeMounts"] == [{"mountPath": "/m", "name": ""}]


def test_runner_empty_or_null_fields_do_not_wipe_the_container() -> None:
    pod = {"containers": [{"name": "c", "image": "a", "command": ["run"], "livenessProbe": {"exec": {}}}]}
    merged = merge_runner_into_pod(pod, {"name": "c", "image": "", "command": [], "livenessProbe": None})
    assert merged["containers"][0] == {
        "name": "c",
        "image": "a",
        "command": ["run"],
        "livenessProbe": {"exec": {}},
    }


def test_runner_without_matching_container_is_appended() -> None:
    pod = {"containers": [{"name": "sidecar", "image": "s"}]}
    runner = {"name": "ome-container", "image": "b", "args": ["--y"], "env": [{"name": "A", "value": None}]}
    merged = merge_runner_into_pod(pod, runner)
    assert merged["containers"] == [
        {"name": "sidecar", "image": "s"},
        {"name": "ome-container", "image": "b", "args": ["--y"], "env": [{"name": "A"}]},
    ]
    assert main_container_index(merged, runner) == 1


def test_runner_into_pod_without_containers_makes_the_runner_the_container() -> None:
    merged = merge_runner_into_pod({"nodeSelector": {"a": "1"}}, {"name": "ome-container", "image": "b"})
    assert merged == {"nodeSelector": {"a": "1"}, "containers": [{"name": "ome-container", "image": "b"}]}


def test_nameless_runner_is_appended_next_to_named_containers_as_ome_container() -> None:
    # resolveContainer compares names exactly: "" finds no named container, so the runner is appended.
    pod = {"containers": [{"name": "main", "image": "a", "args": ["1"]}, {"name": "other"}]}
    merged = merge_runner_into_pod(pod, {"name": "", "image": "b", "args": ["2"]})
    assert merged["containers"][:2] == pod["containers"]
    assert merged["containers"][2] == {"name": "ome-container", "image": "b", "args": ["2"]}
    assert main_container_index(merged, {"name": ""}) == 2


def test_nameless_runner_merges_into_a_nameless_container() -> None:
    pod = {"containers": [{"name": "side"}, {"image": "a", "args": ["1"]}]}
    merged = merge_runner_into_pod(pod, {"image": "b", "args": ["2"]})
    assert merged["containers"] == [
        {"name": "side"},
        {"name": "ome-container", "image": "a", "args": ["2", "1"]},
    ]


@pytest.mark.parametrize(
    ("runtime_name", "predictor_name", "expected"),
    [("rt-name", "user-name", "user-name"), ("rt-name", "", "rt-name"), ("", "", "ome-container")],
)
def test_merged_container_name_precedence(runtime_name: str, predictor_name: str, expected: str) -> None:
    """ome-projects/ome merging_test.go TestMergeRuntimeContainers_NamePrecedence (a), (b), (c)."""
    merged = merge_containers(
        {"name": runtime_name, "image": "rt:v1"}, {"name": predictor_name, "image": "user:v1"}
    )
    assert (merged["name"], merged["image"]) == (expected, "user:v1")


def test_nameless_runner_and_no_containers_becomes_the_container() -> None:
    merged = merge_runner_into_pod({}, {"image": "b"})
    assert merged == {"containers": [{"name": "ome-container", "image": "b"}]}


def test_no_runner_returns_the_pod_unchanged() -> None:
    pod = {"containers": [{"name": "a", "args": ["x"]}, {"name": "b"}]}
    merged = merge_runner_into_pod(pod, None)
    assert merged == pod
    assert merged is not pod
    assert main_container_index(merged, None) == 0


@pytest.mark.parametrize("pod", [{}, {"containers": []}, {"containers": None}])
def test_no_runner_and_no_containers_is_render_failed(pod: dict[str, Any]) -> None:
    with pytest.raises(RenderBlocked) as info:
        merge_runner_into_pod(pod, None)
    assert info.value.reason is BlockReason.RENDER_FAILED
    assert "no containers" in info.value.message


def test_runner_merge_never_mutates_inputs() -> None:
    pod = {"containers": [{"name": "c", "args": ["a"], "env": _env(("A", "1"))}]}
    runner = {"name": "c", "args": ["b"], "env": _env(("B", "2")), "resources": {"limits": {"cpu": "1"}}}
    before = copy.deepcopy((pod, runner))
    merged = merge_runner_into_pod(pod, runner)
    merged["containers"][0]["args"].append("z")
    merged["containers"][0]["env"][1]["value"] = "changed"
    merged["containers"][0]["resources"]["limits"]["cpu"] = "9"
    assert (pod, runner) == before


# -- merge_inherited ---------------------------------------------------------------------------


def test_inherited_empty_values_count_as_unset() -> None:
    parent = {
        "supportedModelFormats": [{"name": "safetensors"}],
        "modelSizeRange": {"min": "1B", "max": "8B"},
        "engineConfig": {
            "nodeSelector": {"a": "1"},
            "tolerations": [{"key": "gpu"}],
            "runner": {"name": "ome-container", "image": "img", "command": ["python"]},
        },
    }
    child: dict[str, Any] = {
        "supportedModelFormats": [],
        "modelSizeRange": {"min": ""},
        "engineConfig": {
            "nodeSelector": {},
            "tolerations": [],
            "runner": {"image": "", "command": [], "env": []},
        },
        "protocolVersions": None,
    }
    # Container.name has no omitempty: the child's nameless runner writes "name":"" and clears it.
    expected = copy.deepcopy(parent)
    expected["engineConfig"]["runner"]["name"] = ""
    assert merge_inherited(parent, child) == expected


def test_inherited_omitempty_zero_scalars_do_not_override_but_pointers_do() -> None:
    # Go marshals the typed child: omitempty bool/int/string zeros are not written, pointers are.
    parent = {
        "disabled": True,
        "hostNetwork": True,
        "engineConfig": {
            "hostNetwork": True,
            "hostIPC": True,
            "hostPID": True,
            "maxReplicas": 4,
            "minReplicas": 2,
            "schedulerName": "gang",
            "terminationGracePeriodSeconds": 60,
            "worker": {"size": 2, "hostNetwork": True},
            "runner": {"name": "ome-container", "stdin": True},
        },
    }
    child = {
        "disabled": False,
        "hostNetwork": False,
        "engineConfig": {
            "hostNetwork": False,
            "hostIPC": False,
            "hostPID": False,
            "maxReplicas": 0,
            "minReplicas": 0,
            "schedulerName": "",
            "terminationGracePeriodSeconds": 0,
            "worker": {"size": 0, "hostNetwork": False},
            "runner": {"stdin": False},
        },
    }
    merged = merge_inherited(parent, child)
    engine = merged["engineConfig"]
    assert (merged["disabled"], merged["hostNetwork"]) == (False, True)
    assert (engine["hostNetwork"], engine["hostIPC"], engine["hostPID"]) == (True, True, True)
    assert (engine["maxReplicas"], engine["schedulerName"], engine["runner"]["stdin"]) == (4, "gang", True)
    assert (engine["minReplicas"], engine["terminationGracePeriodSeconds"]) == (0, 0)
    assert engine["worker"] == {"size": 0, "hostNetwork": True}


def test_inherited_non_omitempty_empty_string_overrides() -> None:
    # corev1.Container.name has no omitempty: Go writes "name":"" and the merge takes it.
    parent = {"engineConfig": {"runner": {"name": "ome-container", "image": "img"}}}
    child = {"engineConfig": {"runner": {"name": ""}}}
    assert merge_inherited(parent, child)["engineConfig"]["runner"] == {"name": "", "image": "img"}


def test_omitempty_zero_field_list_is_generated_from_the_go_tables() -> None:
    for field in (
        "ome/v1beta1.EngineSpec.hostNetwork",
        "ome/v1beta1.EngineSpec.hostIPC",
        "ome/v1beta1.EngineSpec.hostPID",
        "ome/v1beta1.EngineSpec.maxReplicas",
        "ome/v1beta1.ServingRuntimeSpec.hostNetwork",
        "ome/v1beta1.WorkerSpec.schedulerName",
        "core/v1.Container.stdin",
        "core/v1.Container.workingDir",
    ):
        assert field in OMITEMPTY_ZERO_FIELDS
    for pointer_or_plain in (
        "ome/v1beta1.EngineSpec.minReplicas",
        "ome/v1beta1.EngineSpec.terminationGracePeriodSeconds",
        "ome/v1beta1.ServingRuntimeSpec.disabled",
        "core/v1.Container.name",
    ):
        assert pointer_or_plain not in OMITEMPTY_ZERO_FIELDS


def test_inherited_child_wins_field_by_field() -> None:
    parent = {
        "disabled": True,
        "modelSizeRange": {"min": "1B", "max": "8B"},
        "supportedModelFormats": [{"name": "a"}, {"name": "b"}],
        "engineConfig": {
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
            "runner": {
                "name": "ome-container",
                "image": "img",
                "command": ["python", "-m", "srv"],
                "args": ["--p"],
                "env": _env(("NCCL", "INFO"), ("KEEP", "1")),
                "resources": {"limits": {"cpu": "4", "memory": "8Gi"}},
                "ports": [{"containerPort": 8080, "name": "http1"}],
                "volumeMounts": [{"mountPath": "/dev/shm", "name": "dshm"}],
            },
        },
    }
    child = {
        "disabled": False,
        "modelSizeRange": {"max": "16B"},
        "supportedModelFormats": [{"name": "c"}],
        "engineConfig": {
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "runner": {
                "args": ["--c"],
                "env": _env(("NCCL", "TRACE"), ("NEW", "2")),
                "resources": {"limits": {"nvidia.com/gpu": "1"}},
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "volumeMounts": [{"mountPath": "/cache", "name": "cache"}],
            },
        },
    }
    merged = merge_inherited(parent, child)
    assert merged["disabled"] is False
    assert merged["modelSizeRange"] == {"min": "1B", "max": "16B"}
    assert merged["supportedModelFormats"] == [{"name": "c"}]
    engine = merged["engineConfig"]
    assert engine["volumes"] == [
        {"name": "cache", "emptyDir": {}},
        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
    ]
    runner = engine["runner"]
    assert runner["name"] == ""  # the child's runner has no name: Go writes "name":""
    assert runner["image"] == "img"
    assert runner["command"] == ["python", "-m", "srv"]
    assert runner["args"] == ["--c"]
    assert runner["env"] == _env(("NCCL", "TRACE"), ("NEW", "2"), ("KEEP", "1"))
    assert runner["resources"] == {"limits": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "1"}}
    assert runner["ports"] == [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}]
    assert runner["volumeMounts"] == [
        {"mountPath": "/cache", "name": "cache"},
        {"mountPath": "/dev/shm", "name": "dshm"},
    ]


def test_inherited_same_named_volume_merges_field_by_field() -> None:
    # OME's runtime-inheritance page: switching a volume's source in a child leaves both sources.
    parent = {"engineConfig": {"volumes": [{"name": "m", "hostPath": {"path": "/m"}}]}}
    child = {"engineConfig": {"volumes": [{"name": "m", "emptyDir": {}}]}}
    assert merge_inherited(parent, child)["engineConfig"]["volumes"] == [
        {"name": "m", "hostPath": {"path": "/m"}, "emptyDir": {}}
    ]


def test_inherited_new_piece_and_new_empty_dir_are_kept() -> None:
    merged = merge_inherited(
        {"engineConfig": {"runner": {"name": "a"}}}, {"routerConfig": {"runner": {"name": "r"}}}
    )
    assert merged == {"engineConfig": {"runner": {"name": "a"}}, "routerConfig": {"runner": {"name": "r"}}}


def test_inherited_env_keeps_the_parent_order() -> None:
    # The order reaches the pod and its revision hash: the child's override of C stays third.
    parent = {"engineConfig": {"runner": {"name": "r", "env": _env(("A", "1"), ("B", "1"), ("C", "1"))}}}
    child = {"engineConfig": {"runner": {"env": _env(("C", "2"))}}}
    merged = merge_inherited(parent, child)["engineConfig"]["runner"]["env"]
    assert merged == _env(("A", "1"), ("B", "1"), ("C", "2"))


def test_inherited_never_mutates_inputs() -> None:
    parent = {"engineConfig": {"runner": {"name": "a", "env": _env(("A", "1"))}, "volumes": [{"name": "v"}]}}
    child = {"engineConfig": {"runner": {"env": _env(("B", "2"))}, "tolerations": [{"key": "t"}]}}
    before = copy.deepcopy((parent, child))
    merged = merge_inherited(parent, child)
    merged["engineConfig"]["runner"]["env"][1]["value"] = "changed"
    merged["engineConfig"]["volumes"][0]["name"] = "changed"
    merged["engineConfig"]["tolerations"][0]["key"] = "changed"
    assert (parent, child) == before


# -- merge_component_spec and the leader/worker fold ------------------------------------------------


def test_standalone_piece_is_the_runtime_piece_read_as_go_reads_it() -> None:
    # serviceShell's role spec is empty: MergeEngineSpec carries the piece, minus the fields it drops.
    piece = {
        "runner": {"name": "ome-container", "image": "i", "args": []},
        "hostIPC": False,
        "minReplicas": 1,
        "topologyKey": "rack",
        "acceleratorOverride": {"acceleratorClass": "a100"},
    }
    assert merge_component_spec(piece, {}, "engine") == {
        "runner": {"name": "ome-container", "image": "i"},
        "minReplicas": 1,
    }
    assert merge_component_spec(piece, None, "engine") is None


def test_service_spec_wins_over_the_runtime_piece() -> None:
    runtime = {"nodeSelector": {"a": "1"}, "runner": {"name": "c", "image": "rt", "env": _env(("A", "1"))}}
    service = {"nodeSelector": {"b": "2"}, "runner": {"name": "c", "image": "user"}}
    merged = merge_component_spec(runtime, service, "router")
    assert merged == {
        "nodeSelector": {"a": "1", "b": "2"},
        "runner": {"name": "c", "image": "user", "env": _env(("A", "1"))},
    }


def test_fold_gives_leader_and_worker_the_component_pod_fields() -> None:
    """ome-projects/ome merging_test.go TestMergeEngineSpec_FoldComponentPodSpec."""
    tol_component = {"key": "component", "operator": "Exists"}
    tol_leader = {"key": "leader", "operator": "Exists"}
    piece = {
        "volumes": [{"name": "dshm", "emptyDir": {}}],
        "nodeSelector": {"gpu": "a100"},
        "tolerations": [tol_component],
        "imagePullSecrets": [{"name": "component-cred"}],
        "leader": {
            "volumes": [{"name": "scratch", "hostPath": {"path": "/scratch"}}],
            "nodeSelector": {"gpu": "h100"},
            "tolerations": [tol_leader],
            "imagePullSecrets": [{"name": "leader-cred"}],
            "runner": {"name": "ome-container"},
        },
        "worker": {"size": 2, "runner": {"name": "ome-container"}},
    }
    merged = merge_component_spec(piece, {}, "engine")
    assert merged is not None
    leader, worker = merged["leader"], merged["worker"]
    assert leader["volumes"] == [
        {"name": "scratch", "hostPath": {"path": "/scratch"}},
        {"name": "dshm", "emptyDir": {}},
    ]
    assert leader["imagePullSecrets"] == [{"name": "leader-cred"}, {"name": "component-cred"}]
    assert (leader["nodeSelector"], leader["tolerations"]) == ({"gpu": "h100"}, [tol_leader])
    assert worker == {
        "volumes": [{"name": "dshm", "emptyDir": {}}],
        "nodeSelector": {"gpu": "a100"},
        "tolerations": [tol_component],
        "imagePullSecrets": [{"name": "component-cred"}],
        "size": 2,
        "runner": {"name": "ome-container"},
    }
    # the component level stays where the single-pod render reads it
    assert merged["volumes"] == piece["volumes"]


def test_fold_without_leader_or_worker_changes_nothing() -> None:
    piece = {"volumes": [{"name": "dshm", "emptyDir": {}}], "runner": {"name": "ome-container"}}
    assert fold_component_pod_spec(piece) == piece
    assert merge_component_spec(piece, {}, "decoder") == piece
