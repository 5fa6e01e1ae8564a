"""The gang scheduler in the testbed: scheduler-plugins' Coscheduling binds a PodGroup's pods all together
or not at all, on the fake GPU nodes (8 GPUs each)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from testbed.assets import build_coscheduler
from testbed.controlplane import COSCHEDULER_NAME
from testbed.testing import Cluster, wait_for

REPO_CRD = Path(__file__).resolve().parents[2] / "schemas" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
HOSTNAME = "kubernetes.io/hostname"


def _pod(name: str, nodes: list[str], *, group: str | None = None) -> dict[str, Any]:
    """A pod asking for a whole 8-GPU node, confined to `nodes` so the test owns its capacity."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "engine",
                "image": "registry.invalid/fake-engine:1",
                "resources": {"limits": {"nvidia.com/gpu": "8"}},
            }
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": nodes}]}
                    ]
                }
            }
        },
        "terminationGracePeriodSeconds": 0,
    }
    labels: dict[str, str] = {}
    if group:
        spec["schedulerName"] = COSCHEDULER_NAME
        labels[GROUP_LABEL] = group
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels}, "spec": spec}


def _bound(cluster: Cluster, namespace: str, names: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for n in names:
        node = cluster.raw.get(f"/api/v1/namespaces/{namespace}/pods/{n}")["spec"].get("nodeName")
        if node:
            out[n] = node
    return out


def _wait_nodes_idle(cluster: Cluster, nodes: list[str]) -> None:
    """Pods of earlier tests may still be leaving these nodes; the capacity below must be ours alone."""

    def idle() -> bool:
        for node in nodes:
            pods = cluster.raw.get("/api/v1/pods", fieldSelector=f"spec.nodeName={node}")["items"]
            if any((p.get("status") or {}).get("phase") not in ("Succeeded", "Failed") for p in pods):
                return False
        return True

    wait_for(f"{nodes} free of other tests' pods", idle, timeout=60)


def test_pod_group_binds_as_a_whole_or_not_at_all(cluster: Cluster, namespace: str) -> None:
    raw = cluster.raw
    nodes = cluster.kubelet.node_names[-2:]
    _wait_nodes_idle(cluster, nodes)
    pods_path = f"/api/v1/namespaces/{namespace}/pods"

    # One of the two nodes is taken by an ordinary 8-GPU pod: one node is free, the gang needs two.
    raw.post(pods_path, _pod("filler", [nodes[1]]))
    wait_for("filler bound", lambda: _bound(cluster, namespace, ["filler"]).get("filler"))

    raw.post(
        f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups",
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "gang"},
            "spec": {"minMember": 2},
        },
    )
    members = ["gang-leader", "gang-worker"]
    for name in members:
        raw.post(pods_path, _pod(name, nodes, group="gang"))

    # Longer than the plugin's permit wait (10 s): a member that fit would have been bound by now if
    # Coscheduling let a partial gang through.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert _bound(cluster, namespace, members) == {}, "a partial gang was bound"
        time.sleep(0.5)
    for name in members:
        pod = raw.get(f"{pods_path}/{name}")
        assert pod["status"]["phase"] == "Pending"

    # Free the second node: the whole gang binds, one member per node.
    raw.delete(f"{pods_path}/filler")

    def whole_gang() -> dict[str, str] | None:
        b = _bound(cluster, namespace, members)
        return b if len(b) == 2 else None

    bound = wait_for("both gang members bound", whole_gang, timeout=90)
    assert sorted(bound.values()) == sorted(nodes)
    group = raw.get(f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups/gang")
    assert group["spec"]["minMember"] == 2


def test_repo_podgroup_crd_is_the_release_file() -> None:
    """schemas/crds validates rendered PodGroups offline; it must be the scheduler-plugins release's own
    CRD (the one the gang scheduler serves), byte for byte, never a hand-edited copy."""
    release = build_coscheduler() / "crd.yaml"
    assert REPO_CRD.read_bytes() == release.read_bytes(), f"copy {release} over {REPO_CRD}"
