"""The chart's install default (issue 31): more than one pod runs sharded (``--shards``) with RBAC naming
exactly the Leases the processes write; one pod, or ``sharding.enabled=false``, runs behind the leader
Lease as before. ``helm template`` only: no cluster."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from test_helm import CHART, helm_binary, run_helm

from omereconcile.sharding import lease_names


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()


def _render(helm: str, *values: str) -> dict[tuple[str, str], dict[str, Any]]:
    proc = run_helm(helm, None, "template", "rel", str(CHART), "-n", "ome", *values)
    assert proc.returncode == 0, proc.stderr
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(proc.stdout) if d}


def _args(docs: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    args: list[str] = docs["Deployment", "rel-omereconcile"]["spec"]["template"]["spec"]["containers"][0][
        "args"
    ]
    return args


@pytest.mark.parametrize(
    ("values", "shards"),
    [
        ((), 12),  # the default: 2 pods, sharded
        (("--set", "replicaCount=3"), 12),
        (("--set", "replicaCount=4", "--set", "sharding.shards=8"), 8),
    ],
    ids=["default", "three-pods", "eight-ranges"],
)
def test_more_than_one_pod_runs_sharded_and_may_update_only_its_named_leases(
    helm: str, values: tuple[str, ...], shards: int
) -> None:
    docs = _render(helm, *values)
    assert f"--shards={shards}" in _args(docs)
    role = docs["Role", "rel-omereconcile-shards"]
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": lease_names("omereconcile-shard", shards),
            "verbs": ["get", "update"],
        },
    ]
    binding = docs["RoleBinding", "rel-omereconcile-shards"]
    assert binding["roleRef"]["name"] == "rel-omereconcile-shards"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "rel-omereconcile", "namespace": "ome"}]


@pytest.mark.parametrize(
    "values",
    [
        ("--set", "replicaCount=1"),
        ("--set", "sharding.enabled=false"),
        ("--set", "replicaCount=3", "--set", "sharding.enabled=false"),
    ],
    ids=["one-pod", "disabled", "disabled-three-pods"],
)
def test_one_pod_or_sharding_off_runs_behind_the_leader_lease_with_no_shard_rbac(
    helm: str, values: tuple[str, ...]
) -> None:
    docs = _render(helm, *values)
    args = _args(docs)
    assert "--leader-elect" in args
    assert not [a for a in args if a.startswith("--shards")]
    assert ("Role", "rel-omereconcile-shards") not in docs
    assert ("RoleBinding", "rel-omereconcile-shards") not in docs


def test_one_pod_and_three_pods_render_the_same_bytes_twice_and_differ_only_by_sharding(helm: str) -> None:
    """GitOps tools render on every sync: each pod count gives the same bytes twice. Going from one pod to
    three changes only what sharding and a second pod need: the Deployment's replicas and --shards, the
    shard Role and RoleBinding, and the PodDisruptionBudget (never rendered for one pod)."""
    texts: dict[int, str] = {}
    for pods in (1, 3):
        args = ("template", "rel", str(CHART), "-n", "ome", "--set", f"replicaCount={pods}")
        first, second = run_helm(helm, None, *args), run_helm(helm, None, *args)
        assert first.returncode == 0, first.stderr
        assert first.stdout == second.stdout, f"replicaCount={pods}: two renders differ"
        texts[pods] = first.stdout
    one, three = (
        {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(texts[n]) if d} for n in (1, 3)
    )
    assert set(three) - set(one) == {
        ("PodDisruptionBudget", "rel-omereconcile"),
        ("Role", "rel-omereconcile-shards"),
        ("RoleBinding", "rel-omereconcile-shards"),
    }
    assert set(one) <= set(three)
    changed = sorted(key for key in one if one[key] != three[key])
    assert changed == [("Deployment", "rel-omereconcile")]
    deploy_one, deploy_three = one[changed[0]], three[changed[0]]
    assert (deploy_one["spec"]["replicas"], deploy_three["spec"]["replicas"]) == (1, 3)
    args_one, args_three = _args(one), _args(three)
    assert [a for a in args_three if a not in args_one] == ["--shards=12"]
    assert [a for a in args_one if a not in args_three] == []
    deploy_three["spec"]["replicas"] = 1
    deploy_three["spec"]["template"]["spec"]["containers"][0]["args"] = args_one
    assert deploy_one == deploy_three
