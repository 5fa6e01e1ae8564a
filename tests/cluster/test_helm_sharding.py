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
