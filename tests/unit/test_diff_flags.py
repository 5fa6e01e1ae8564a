"""``omerender diff``: kubectl-style repeatable flags, natural path order, a named runtime switch, and
``--assume-models-ready`` for catalogs kept in git."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import main
from omerender.diff import natural_key
from tests.unit.example_objects import MODEL, RUNTIME

NS = "demo"
Obj = dict[str, Any]


def runtime(name: str, image: str, command: list[str] | None = None) -> Obj:
    runner: Obj = {"name": "ome-container", "image": image}
    if command is not None:
        runner["command"] = command
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {"engineConfig": {"runner": runner}},
    }


def replica(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"component": "engine", **spec},
    }


def write(path: Path, *objs: Obj) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# -- flags --------------------------------------------------------------------------------------------------


@pytest.fixture
def split(tmp_path: Path) -> dict[str, str]:
    """A change spread over several paths per side: runtimes, the model, replicas apart."""
    return {
        "before-rt": write(tmp_path / "main" / "runtimes.yaml", runtime("rt-a", "img:1")),
        "before-extra": write(tmp_path / "main" / "extra.yaml", runtime("rt-b", "b:1")),
        "after-rt": write(tmp_path / "pr" / "runtimes.yaml", runtime("rt-a", "img:2")),
        "after-extra": write(tmp_path / "pr" / "extra.yaml", runtime("rt-b", "b:1")),
        "replicas": write(
            tmp_path / "replicas.yaml",
            replica("a-1", runtimeRef={"name": "rt-a"}),
            replica("b-1", runtimeRef={"name": "rt-b"}),
        ),
    }


def test_argument_order_does_not_change_the_meaning(
    capsys: pytest.CaptureFixture[str], split: dict[str, str]
) -> None:
    pairs = [
        ("--before", split["before-rt"]),
        ("--before", split["before-extra"]),
        ("--after", split["after-rt"]),
        ("--after", split["after-extra"]),
        ("-f", split["replicas"]),
    ]
    outputs = set()
    # Every order of the five flags: 120 runs of a small render.
    for order in itertools.permutations(pairs):
        code, out, _ = run(capsys, *itertools.chain.from_iterable(order), "--show-unchanged")
        assert code == 1
        outputs.add(out)
    assert len(outputs) == 1
    (out,) = outputs
    assert out.startswith(f"{NS}/a-1: rolls a-1-engine-")
    assert f"{NS}/b-1: unchanged" in out


def test_several_paths_after_one_flag_are_refused_not_misread(
    capsys: pytest.CaptureFixture[str], split: dict[str, str]
) -> None:
    # The old form: the second path after --after would otherwise be read as replicas.
    old, new = (split["before-rt"], split["before-extra"]), (split["after-rt"], split["after-extra"])
    code, out, err = run(capsys, "--before", *old, "--after", *new)
    assert (code, out) == (2, "")
    assert f"{split['before-extra']} {split['after-extra']}: a path without a flag" in err
    assert "repeat the flag" in err
    assert "-f PATH" in err


def test_a_path_of_replicas_where_objects_are_expected_is_an_error(
    capsys: pytest.CaptureFixture[str], split: dict[str, str]
) -> None:
    replicas = split["replicas"]
    argv = ["--before", split["before-rt"], "--after", split["after-rt"], "--after", replicas]
    code, out, err = run(capsys, *argv, "-f", replicas)
    assert (code, out) == (2, "")
    assert (
        f"omerender diff: --after {split['replicas']}: holds only InferenceReplicas, where --after "
        f"expects models and runtimes; give replicas with -f {split['replicas']}"
    ) in err


def test_without_f_replicas_may_sit_in_paths_of_their_own(
    capsys: pytest.CaptureFixture[str], split: dict[str, str]
) -> None:
    argv = ["--before", split["before-rt"], "--before", split["before-extra"], "--before", split["replicas"]]
    argv += ["--after", split["after-rt"], "--after", split["after-extra"], "--after", split["replicas"]]
    code, out, _ = run(capsys, *argv)
    assert code == 1
    assert out.startswith(f"{NS}/a-1: rolls ")


# -- natural order --------------------------------------------------------------------------------------------


def test_natural_key_reads_numbers_as_numbers() -> None:
    paths = ["command[10]", "command[1]", "command[2]", "args[0]", "command[0]", "command[1].x"]
    assert sorted(paths, key=natural_key) == [
        "args[0]",
        "command[0]",
        "command[1]",
        "command[1].x",
        "command[2]",
        "command[10]",
    ]


def test_changed_list_items_print_in_natural_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = [f"arg{i}" for i in range(12)]
    new = copy.copy(old)
    for i in (1, 2, 10):
        new[i] = f"new{i}"
    before = write(
        tmp_path / "b.yaml", runtime("rt-a", "img:1", old), replica("a-1", runtimeRef={"name": "rt-a"})
    )
    after = write(
        tmp_path / "a.yaml", runtime("rt-a", "img:1", new), replica("a-1", runtimeRef={"name": "rt-a"})
    )
    code, out, _ = run(capsys, "--before", before, "--after", after)
    assert code == 1
    assert out.splitlines()[1:] == [
        f'  runner default: containers[ome-container].command[{i}]: "arg{i}" -> "new{i}"' for i in (1, 2, 10)
    ]


# -- a runtime switch ---------------------------------------------------------------------------------------


@pytest.fixture
def switch(tmp_path: Path) -> tuple[str, str]:
    """A model-based replica whose selected runtime changes: the after catalog adds a runtime that
    scores higher (priority 2) for the same model."""
    better = copy.deepcopy(RUNTIME)
    better["metadata"]["name"] = "vllm-llama-3-2-1b-instruct-v2"
    better["spec"]["supportedModelFormats"][0]["priority"] = 2
    better["spec"]["engineConfig"]["runner"]["image"] = "docker.io/vllm/vllm-openai:v0.10.0"
    pool = replica("llama-pool", modelRef={"name": "llama-3-2-1b-instruct"})
    before = write(tmp_path / "before.yaml", MODEL, RUNTIME, pool)
    after = write(tmp_path / "after.yaml", MODEL, RUNTIME, better, pool)
    return before, after


def test_a_runtime_switch_is_named(capsys: pytest.CaptureFixture[str], switch: tuple[str, str]) -> None:
    code, out, _ = run(capsys, "--before", switch[0], "--after", switch[1])
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{NS}/llama-pool: rolls llama-pool-engine-")
    # Right under the headline: the switch explains the field changes that follow.
    assert lines[1] == (
        "  runtime changed from ClusterServingRuntime vllm-llama-3-2-1b-instruct to "
        "ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2"
    )
    assert (
        '  runner default: containers[ome-container].image: "docker.io/vllm/vllm-openai:v0.9.0.1" -> '
        '"docker.io/vllm/vllm-openai:v0.10.0"'
    ) in lines


def test_the_json_names_the_runtimes(capsys: pytest.CaptureFixture[str], switch: tuple[str, str]) -> None:
    code, out, _ = run(capsys, "--before", switch[0], "--after", switch[1], "-o", "json")
    assert code == 1
    (item,) = json.loads(out)["replicas"]
    assert item["runtimeChanged"] is True
    assert item["before"]["runtime"] == {
        "kind": "ClusterServingRuntime",
        "name": "vllm-llama-3-2-1b-instruct",
    }
    assert item["after"]["runtime"] == {
        "kind": "ClusterServingRuntime",
        "name": "vllm-llama-3-2-1b-instruct-v2",
    }


def test_the_markdown_table_names_the_switch(
    capsys: pytest.CaptureFixture[str], switch: tuple[str, str]
) -> None:
    code, out, _ = run(capsys, "--before", switch[0], "--after", switch[1], "-o", "markdown")
    assert code == 1
    assert (
        "rolls: runtime ClusterServingRuntime vllm-llama-3-2-1b-instruct -> "
        "ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2 — 1 replica"
    ) in out
    assert "- why: ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2 " in out


# -- catalogs kept in git -------------------------------------------------------------------------------------


def test_assume_models_ready_shows_the_roll_a_status_less_catalog_hides(
    capsys: pytest.CaptureFixture[str], switch: tuple[str, str], tmp_path: Path
) -> None:
    paths = []
    for side in switch:
        objects = list(yaml.safe_load_all(Path(side).read_text()))
        for obj in objects:
            obj.pop("status", None)  # as the files sit in git
        paths.append(write(tmp_path / "git" / Path(side).name, *objects))
    code, out, _ = run(capsys, "--before", paths[0], "--after", paths[1], "--show-unchanged")
    assert code == 0  # both sides block the same way: the roll stays hidden
    assert out.startswith(f"{NS}/llama-pool: still blocks ModelNotFound")

    code, out, _ = run(capsys, "--before", paths[0], "--after", paths[1], "--assume-models-ready")
    assert code == 1
    # The same note on both sides is said once.
    assert out.splitlines()[:2] == [
        "note: treating every model as Ready (--assume-models-ready): 1 of 1 model was not Ready "
        "(before and after)",
        out.splitlines()[1],
    ]
    assert out.splitlines()[1].startswith(f"{NS}/llama-pool: rolls ")

    code, out, _ = run(
        capsys, "--before", paths[0], "--after", paths[1], "--assume-models-ready", "-o", "markdown"
    )
    assert (
        "- treating every model as Ready (--assume-models-ready): 1 of 1 model was not Ready (before and"
        in out
    )
    code, out, _ = run(
        capsys, "--before", paths[0], "--after", paths[1], "--assume-models-ready", "-o", "json"
    )
    doc = json.loads(out)
    assert doc["assumeModelsReady"] is True
    assert len(doc["notes"]) == 2
    assert doc["replicas"][0]["status"] == "rolls"


def test_a_model_without_a_format_is_unknown_until_downloaded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    model = copy.deepcopy(MODEL)
    del model["status"]
    del model["spec"]["modelFormat"]  # as in git: OME reads it from the weights
    pool = replica("llama-pool", modelRef={"name": "llama-3-2-1b-instruct"})
    side = write(tmp_path / "side.yaml", model, RUNTIME, pool)
    code, out, _ = run(capsys, "--before", side, "--after", side, "--assume-models-ready")
    assert code == 0
    assert (
        "note: 1 model without a format name: the runtime is unknown until OME has downloaded the "
        "weights and read the format from them (llama-3-2-1b-instruct) (before and after)"
    ) in out.splitlines()
    # Unknown on both sides: no change of verdict, counted and not listed.
    assert out.splitlines()[-1] == (
        "note: 1 replica whose verdict did not change not listed (1 unknown until downloaded); "
        "--show-unchanged lists them"
    )
    code, out, _ = run(capsys, "--before", side, "--after", side, "--assume-models-ready", "--show-unchanged")
    assert f"{NS}/llama-pool: unknown until downloaded" in out.splitlines()
    assert (
        "  its model has no format name: the runtime is unknown until OME has downloaded the weights and read the format from them"
        in out.splitlines()
    )
    # As lint says it; --fail-on unknown fails the check on it.
    code, _, _ = run(
        capsys, "--before", side, "--after", side, "--assume-models-ready", "--fail-on", "unknown"
    )
    assert code == 1
