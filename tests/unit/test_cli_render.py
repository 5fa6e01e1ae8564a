"""``omerender render``: the README's main job, its exit codes and its error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from omerender.cli import main

ROOT = Path(__file__).resolve().parents[2]
REPLICA = str(ROOT / "examples" / "llama-pool.yaml")
CATALOG = str(ROOT / "examples" / "catalog")


def _docs(text: str) -> list[dict[str, object]]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_main_job_prints_the_seed_pods(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", REPLICA, "--objects", CATALOG, "--instances", "2"]) == 0
    out = capsys.readouterr().out
    docs = _docs(out)
    pods = [d["metadata"]["name"] for d in docs if d["kind"] == "Pod"]  # type: ignore[index]
    assert pods == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"]
    kinds = [d["kind"] for d in docs]
    assert kinds[:3] == ["PodTemplate", "Service", "ControllerRevision"]
    service = next(d for d in docs if d["kind"] == "Service")
    assert service["metadata"]["name"] == "llama-pool-engine-headless"  # type: ignore[index]
    revision = next(d for d in docs if d["kind"] == "ControllerRevision")
    name = revision["metadata"]["name"]  # type: ignore[index]
    assert name.startswith("llama-pool-engine-")
    assert len(name) == len("llama-pool-engine-") + 8
    # Every document is announced by a provenance comment.
    assert out.count("# Source: ") == len(docs)
    assert "null" not in out


def test_pods_carry_the_serving_gate_and_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", REPLICA, "--objects", CATALOG, "--instances", "1"]) == 0
    pod = next(d for d in _docs(capsys.readouterr().out) if d["kind"] == "Pod")
    spec = pod["spec"]  # type: ignore[index]
    assert {"conditionType": "ome.io/serving"} in spec["readinessGates"]
    env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
    assert env["MODEL_PATH"] == "/raid/models/meta/llama-3-2-1b-instruct"
    assert env["OME_INFERENCESERVICE_NAME"] == "llama-pool"
    assert spec["nodeSelector"] == {"models.ome.io/clusterbasemodel.llama-3-2-1b-instruct": "Ready"}


def test_blocked_render_exits_1_with_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["render", REPLICA, "--objects", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ModelNotFound: ")
    assert "llama-3-2-1b-instruct" in err


def test_bad_replica_exits_2_naming_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceReplica\nmetadata: {name: x}\nspec: {component: gpu}\n"
    )
    assert main(["render", str(bad), "--objects", CATALOG]) == 2
    err = capsys.readouterr().err
    assert "spec.component" in err
    assert "InferenceReplica default/x" in err
    assert "bad.yaml" in err


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["render", str(tmp_path / "nope.yaml"), "--objects", CATALOG]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_file_without_replica_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(Path(CATALOG) / "llama-3-2-1b-instruct.yaml"), "--objects", CATALOG]) == 2
    assert "expected exactly one InferenceReplica, found 0" in capsys.readouterr().err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["render"])
    assert exit_info.value.code == 2


def test_runners_replica_uses_its_own_uid_and_collision_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def revision_name(uid: str, collisions: int) -> str:
        doc = {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "pool", "namespace": "ns", "uid": uid},
            "spec": {
                "component": "engine",
                "runners": [
                    {
                        "name": "default",
                        "size": 1,
                        "template": {"spec": {"containers": [{"name": "c", "image": "img:1"}]}},
                    }
                ],
            },
            "status": {"collisionCount": collisions},
        }
        path = tmp_path / f"{uid}-{collisions}.yaml"
        path.write_text(yaml.safe_dump(doc))
        assert main(["render", str(path)]) == 0
        docs = _docs(capsys.readouterr().out)
        return str(next(d for d in docs if d["kind"] == "ControllerRevision")["metadata"]["name"])  # type: ignore[index]

    base = revision_name("u-1", 0)
    assert revision_name("u-1", 0) == base
    assert revision_name("u-2", 0) != base
    assert revision_name("u-1", 1) != base


def test_operator_configmap_among_objects_applies_its_deploy_defaults(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = tmp_path / "inferenceservice-config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
                "data": {
                    "deploy": '{"defaultDeploymentMode": "RawDeployment", "terminationGracePeriodSeconds": 900}'
                },
            }
        )
    )
    assert main(["render", REPLICA, "--objects", CATALOG]) == 0
    plain = _docs(capsys.readouterr().out)
    assert main(["render", REPLICA, "--objects", CATALOG, str(config)]) == 0
    defaulted = _docs(capsys.readouterr().out)
    template = next(d for d in defaulted if d["kind"] == "PodTemplate")
    assert template["template"]["spec"]["terminationGracePeriodSeconds"] == 900  # type: ignore[index]
    names = [
        next(d for d in docs if d["kind"] == "ControllerRevision")["metadata"]["name"]
        for docs in (plain, defaulted)
    ]  # type: ignore[index]
    assert names[0] != names[1]
    config.write_text(config.read_text().replace("900", "-1"))
    assert main(["render", REPLICA, "--objects", CATALOG, str(config)]) == 1
    assert capsys.readouterr().err.startswith(
        "RenderFailed: load deploy config: invalid deploy config, terminationGracePeriodSeconds must be > 0, got -1"
    )


def test_output_json_is_one_list_of_the_same_objects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", REPLICA, "--objects", CATALOG, "--instances", "2"]) == 0
    stream = _docs(capsys.readouterr().out)
    assert main(["render", REPLICA, "--objects", CATALOG, "--instances", "2", "-o", "json"]) == 0
    captured = capsys.readouterr()
    listing = json.loads(captured.out)  # no comments: the notes are on standard error
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    assert listing["items"] == stream
    assert "is for an empty uid" in captured.err


def test_a_replica_that_needs_a_catalog_and_got_none_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["render", REPLICA]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"omerender render: {REPLICA} reads a model and a serving runtime, and no catalog")
    assert "--objects PATH" in err
    assert "ModelNotFound" in err  # what the render said, kept
