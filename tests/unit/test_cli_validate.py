"""``omerender validate``: the CRD schema and OME's webhook rules offline, their messages and exit codes.

Messages are OME's verbatim (users compare them with what ``kubectl apply`` answers); the admission
rules themselves are tested row by row in test_admission.py, this file tests what the command adds:
reading files, the catalog from --objects, CREATE vs UPDATE from --old, the schema check, the identity.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import crds as crds_module
from omerender.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "llama-pool.yaml")
CATALOG = str(ROOT / "examples" / "catalog")
NS = "prod-models"
CONTROLLER = "system:serviceaccount:ome:ome-controller-manager"

Obj = dict[str, Any]


def replica(name: str = "pool-a", **spec: Any) -> Obj:
    body: Obj = {
        "component": "engine",
        "runners": [
            {
                "name": "default",
                "size": 1,
                "template": {"spec": {"containers": [{"name": "ome-container", "image": "sgl:1.0"}]}},
            }
        ],
    }
    body.update(spec)
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS},
        "spec": {k: v for k, v in body.items() if v is not None},
    }


def refs(name: str = "pool-a", component: str = "engine", runtime: str = "runtime-a") -> Obj:
    return replica(name, component=component, runners=None, runtimeRef={"name": runtime})


def runtime(name: str = "runtime-a", pieces: tuple[str, ...] = ("engineConfig",)) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {p: {"runner": {"name": "ome-container", "image": "sgl:1.0"}} for p in pieces},
    }


def isvc(name: str) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": NS},
    }


def write(path: Path, *objs: Obj) -> str:
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["validate", *argv])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def prefixed(name: str, message: str) -> str:
    return f"InferenceReplica {NS}/{name}: {message}"


EXCLUSIVE = "spec.runners and spec.modelRef/spec.runtimeRef are exclusive; a replica renders from one source"
PINNED = (
    "spec.runtimeRef.autoSync=false and spec.runtimeRef.revision are not honored on an InferenceReplica; "
    "the live runtime renders"
)
MIN_READY = "spec.lifecycle.minReadySeconds is not read on an InferenceReplica; set spec.minReadySeconds"
HPA = (
    'spec.autoscaler.class "HPA" creates no scaler on a standalone InferenceReplica; target the scale '
    'subresource with your own HorizontalPodAutoscaler or ScaledObject, or use class "External"'
)
PARENT_REF = (
    "spec.parentRef is set by the InferenceService controller on the replicas it projects; "
    "omit it on a standalone InferenceReplica"
)
NO_DECODER = 'ClusterServingRuntime "runtime-a" has no decoder piece; a decoder replica cannot render from it'
CONTROLLER_WRITE = (
    "InferenceReplica prod-models/pool-a carries the ome.io/controller-write=true annotation, which marks a "
    "write by the InferenceService controller, and the controller creates only the replicas it projects; "
    "create a standalone replica without it"
)


def collision(candidate: str) -> str:
    return (
        f"InferenceService {NS}/{candidate} exists and the replicas it projects would share pod and Service "
        "names with this one; choose another name"
    )


# -- allowed --------------------------------------------------------------------------------------------


def test_the_seed_replica_is_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run(capsys, EXAMPLE, "--objects", CATALOG)
    assert (code, lines) == (0, ["llama-demo/llama-pool: allowed"])
    assert "1 as CREATE" in err


def test_every_replica_of_a_folder_gets_a_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "replicas"
    folder.mkdir()
    write(folder / "a.yaml", replica("pool-a"), runtime())  # other kinds in FILE are not validated
    write(folder / "b.yaml", replica("pool-b"))
    code, lines, _ = run(capsys, str(folder))
    assert (code, lines) == (0, [f"{NS}/pool-a: allowed", f"{NS}/pool-b: allowed"])


# -- the seed's rows ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"modelRef": {"name": "m"}}, EXCLUSIVE),
        ({"runners": None, "runtimeRef": {"name": "runtime-a", "autoSync": False}}, PINNED),
        ({"autoscaler": {"class": "HPA"}}, HPA),
        ({"lifecycle": {"minReadySeconds": 5}}, MIN_READY),
        ({"parentRef": {"name": "llama"}}, PARENT_REF),
    ],
    ids=["runners-and-ref", "pinned-runtime", "hpa", "lifecycle-min-ready", "parent-ref"],
)
def test_a_seed_row_is_denied_with_omes_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, spec: Obj, message: str
) -> None:
    path = write(tmp_path / "r.yaml", replica(**spec))
    code, lines, _ = run(capsys, path, "--objects", write(tmp_path / "cat.yaml", runtime()))
    assert (code, lines) == (1, [prefixed("pool-a", message)])


def test_every_denial_is_printed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    obj = replica(autoscaler={"class": "HPA"}, lifecycle={"minReadySeconds": 5}, modelRef={"name": "m"})
    code, lines, _ = run(capsys, write(tmp_path / "r.yaml", obj))
    assert code == 1
    assert lines == [prefixed("pool-a", EXCLUSIVE), prefixed("pool-a", HPA), prefixed("pool-a", MIN_READY)]


def test_allowed_and_denied_replicas_together_exit_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "r.yaml", replica("pool-a"), replica("pool-b", autoscaler={"class": "HPA"}))
    code, lines, err = run(capsys, path)
    assert code == 1
    assert lines == [f"{NS}/pool-a: allowed", prefixed("pool-b", HPA)]
    assert "1 rejected" in err


# -- rules that read --objects --------------------------------------------------------------------------


def test_name_collision_with_an_inference_service_from_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "r.yaml", replica("llama-engine"))
    assert run(capsys, path)[0] == 0  # no --objects: no InferenceService to collide with
    code, lines, _ = run(capsys, path, "--objects", write(tmp_path / "isvc.yaml", isvc("llama")))
    assert (code, lines) == (1, [prefixed("llama-engine", collision("llama"))])


def test_a_runtime_without_the_piece(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "r.yaml", refs(component="decoder"))
    code, lines, _ = run(capsys, path, "--objects", write(tmp_path / "rt.yaml", runtime()))
    assert (code, lines) == (1, [prefixed("pool-a", NO_DECODER)])
    with_piece = write(tmp_path / "rt2.yaml", runtime(pieces=("engineConfig", "decoderConfig")))
    assert run(capsys, path, "--objects", with_piece)[:2] == (0, [f"{NS}/pool-a: allowed"])


def test_without_objects_the_catalog_checks_are_skipped_and_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, lines, err = run(capsys, write(tmp_path / "r.yaml", refs(component="decoder")))
    assert (code, lines) == (0, [f"{NS}/pool-a: allowed"])
    assert "runtime and name-collision checks are skipped" in err


# -- UPDATE from --old ----------------------------------------------------------------------------------------


def test_changing_the_component_is_immutable(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", replica())
    new = write(tmp_path / "new.yaml", replica(component="decoder"))
    code, lines, err = run(capsys, new, "--old", old)
    assert code == 1
    assert lines[0] == prefixed("pool-a", "spec.component is immutable")
    assert "1 as UPDATE" in err
    # As a create the same object is fine: --old is what makes it an update.
    assert run(capsys, new)[:2] == (0, [f"{NS}/pool-a: allowed"])


def test_a_metadata_only_update_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = replica()
    new = replica()
    new["metadata"]["labels"] = {"team": "a"}
    code, lines, _ = run(
        capsys, write(tmp_path / "new.yaml", new), "--old", write(tmp_path / "old.yaml", old)
    )
    assert (code, lines) == (0, [f"{NS}/pool-a: allowed: metadata-only update"])


def test_a_replica_old_does_not_hold_is_a_create(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", replica("pool-a"))
    new = write(tmp_path / "new.yaml", replica("pool-a", component="decoder"), replica("pool-b"))
    code, lines, err = run(capsys, new, "--old", old)
    assert code == 1
    assert lines == [prefixed("pool-a", "spec.component is immutable"), f"{NS}/pool-b: allowed"]
    assert "(1 as CREATE, 1 as UPDATE from --old)" in err


def test_old_naming_a_replica_twice_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    old = write(tmp_path / "old.yaml", replica(), replica())
    code, lines, err = run(capsys, write(tmp_path / "new.yaml", replica()), "--old", old)
    assert (code, lines) == (2, [])
    assert f"InferenceReplica {NS}/pool-a appears twice" in err


# -- the CRD schema -------------------------------------------------------------------------------------------


def test_schema_violations_name_every_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    obj = refs()
    obj["spec"].update(replicas=-1, bogus=True)
    code, lines, _ = run(capsys, write(tmp_path / "r.yaml", obj))
    assert code == 1
    assert lines == [
        prefixed("pool-a", "spec.bogus: is not a known field"),
        prefixed("pool-a", "spec.replicas: -1 is less than the minimum of 0"),
    ]


def test_a_replica_the_schema_and_the_decoder_reject_is_reported_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, lines, _ = run(capsys, write(tmp_path / "r.yaml", replica(component="engin")))
    assert code == 1
    assert lines == [
        prefixed(
            "pool-a", 'spec.component: must be one of "engine", "decoder", "router", got string \'engin\''
        )
    ]


def test_schema_and_webhook_problems_together(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # An unknown field is pruned by the API server, not fatal to OME's decoder: both checks speak.
    obj = replica(autoscaler={"class": "HPA"}, bogus=True)
    code, lines, _ = run(capsys, write(tmp_path / "r.yaml", obj))
    assert code == 1
    assert lines == [prefixed("pool-a", "spec.bogus: is not a known field"), prefixed("pool-a", HPA)]


# -- identity --------------------------------------------------------------------------------------------------


def config_map(block: Any) -> Obj:
    raw = block if isinstance(block, str) else json.dumps(block)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "data": {"inferenceReplica": raw},
    }


def test_identity_comes_from_the_config_map_among_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    obj = replica()
    obj["metadata"]["annotations"] = {"ome.io/controller-write": "true"}
    path = write(tmp_path / "r.yaml", obj)
    # No identity configured: the copied annotation marks the create as the controller's.
    code, lines, _ = run(capsys, path)
    assert (code, lines) == (1, [CONTROLLER_WRITE])
    # Identity configured: the annotation means nothing, a user's create passes...
    identity = write(tmp_path / "cm.yaml", config_map({"controllerIdentity": {"usernames": [CONTROLLER]}}))
    assert run(capsys, path, "--objects", identity)[:2] == (0, [f"{NS}/pool-a: allowed"])
    # ...and the controller, named with --as, creates only the replicas it projects.
    code, lines, _ = run(capsys, path, "--objects", identity, "--as", CONTROLLER)
    assert code == 1
    assert "creates only the replicas it projects" in lines[0]


def test_as_group_matches_a_controller_group(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path / "r.yaml", replica())
    identity = write(
        tmp_path / "cm.yaml", config_map({"controllerIdentity": {"groups": ["ome-controllers"]}})
    )
    assert run(capsys, path, "--objects", identity, "--as", "someone")[0] == 0
    code, lines, _ = run(
        capsys, path, "--objects", identity, "--as", "someone", "--as-group", "ome-controllers"
    )
    assert code == 1
    assert "creates only the replicas it projects" in lines[0]


def test_an_unreadable_identity_fails_the_create_with_500s_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path / "r.yaml", replica())
    code, lines, _ = run(capsys, path, "--objects", write(tmp_path / "cm.yaml", config_map("{not json")))
    assert code == 1
    assert len(lines) == 1
    assert "load inferenceReplica config: invalid inferenceReplica config: malformed JSON object" in lines[0]


# -- bad input -------------------------------------------------------------------------------------------------


def test_no_replica_found_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, lines, err = run(capsys, write(tmp_path / "rt.yaml", runtime()))
    assert (code, lines) == (2, [])
    assert "no InferenceReplica found" in err


def test_missing_file_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope.yaml"))
    assert code == 2
    assert "nope.yaml: no such file or folder" in err


def test_broken_yaml_in_objects_is_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    broken = tmp_path / "cat.yaml"
    broken.write_text("kind: [unclosed\n")
    code, _, err = run(capsys, write(tmp_path / "r.yaml", replica()), "--objects", str(broken))
    assert code == 2
    assert "cat.yaml: not valid YAML" in err


# -- the shipped CRDs --------------------------------------------------------------------------------------------


def test_shipped_crds_are_the_repositorys() -> None:
    """omerender/data/crds is a copy of schemas/crds: refresh it with `python -m omerender.cli.crds`."""
    source = sorted(p.name for p in (ROOT / "schemas" / "crds").glob("ome.io_*.yaml"))
    shipped = sorted(p.name for p in crds_module.PACKAGE_CRD_DIR.glob("ome.io_*.yaml"))
    assert shipped == source, "run `python -m omerender.cli.crds` to refresh omerender/data/crds"
    for name in source:
        same = (ROOT / "schemas" / "crds" / name).read_bytes() == (
            crds_module.PACKAGE_CRD_DIR / name
        ).read_bytes()
        assert same, (
            f"omerender/data/crds/{name} differs from schemas/crds: run `python -m omerender.cli.crds`"
        )
    assert crds_module.crd_dir() == crds_module.PACKAGE_CRD_DIR
    assert crds_module.crd_for("InferenceReplica")["spec"]["names"]["shortNames"] == ["irep"]


def test_sync_copies_and_prunes(tmp_path: Path) -> None:
    source, target = tmp_path / "src", tmp_path / "dst"
    source.mkdir()
    target.mkdir()
    (source / "ome.io_widgets.yaml").write_text("a: 1\n")
    (source / "other.yaml").write_text("b: 2\n")
    (target / "ome.io_gone.yaml").write_text("c: 3\n")
    assert crds_module.sync(source, target) == ["ome.io_widgets.yaml"]
    assert sorted(p.name for p in target.iterdir()) == ["ome.io_widgets.yaml"]
