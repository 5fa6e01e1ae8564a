"""``render --validate`` checks custom resources against the CRDs shipped from ``schemas/crds``: the
PodGroup of a multi-pod Instance (scheduler-plugins) passes, a broken one names its field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from omerender.cli import crds, main
from omerender.cli.kubeschema import kube_problems

CONTAINER = {
    "name": "main",
    "image": "vllm/vllm-openai:v0.9.1",
    "resources": {"limits": {"nvidia.com/gpu": "1"}},
}
GANG = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "InferenceReplica",
    "metadata": {"name": "gang", "namespace": "inference"},
    "spec": {
        "component": "engine",
        "runners": [
            {"name": "leader", "size": 1, "template": {"spec": {"containers": [CONTAINER]}}},
            {"name": "worker", "size": 2, "template": {"spec": {"containers": [CONTAINER]}}},
        ],
    },
}


def test_the_podgroup_crd_ships_with_the_package() -> None:
    crd = crds.crd_for_api("PodGroup", "scheduling.x-k8s.io/v1alpha1")
    assert crd is not None
    assert (crds.crd_dir() / "scheduling.x-k8s.io_podgroups.yaml").read_bytes() == (
        Path(__file__).resolve().parents[2] / "schemas" / "crds" / "scheduling.x-k8s.io_podgroups.yaml"
    ).read_bytes()
    assert crds.crd_for_api("InferenceReplica", "ome.io/v1beta1") is crds.crd_for("InferenceReplica")
    assert crds.crd_for_api("PodGroup", "example.com/v1") is None


def test_render_validate_passes_a_multi_pod_replica_with_its_podgroups(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "gang.yaml").write_text(yaml.safe_dump(GANG))
    code = main(["render", str(tmp_path / "gang.yaml"), "--instances", "2", "--validate"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.count("kind: PodGroup") == 2


def test_a_broken_podgroup_names_its_field() -> None:
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g"},
        "spec": {"minMember": "two", "surprise": 1},
    }
    problems = kube_problems(group)
    assert any(p.startswith("PodGroup g: spec.minMember") for p in problems), problems
    assert any("surprise" in p for p in problems), problems
    unknown = kube_problems({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}})
    assert unknown == ["Thing t: no Kubernetes 1.36 schema or CRD for example.com/v1/Thing"]
