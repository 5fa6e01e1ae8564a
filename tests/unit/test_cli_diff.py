"""``omerender diff``: inputs (before/after, REPLICAS, two folders as kubectl writes them), outputs, exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import diff_cmd, main

NS = "demo"
Obj = dict[str, Any]


def runtime(name: str, image: str) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {"engineConfig": {"runner": {"name": "ome-container", "image": image}}},
    }


def replica(name: str, rt: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"component": "engine", "runtimeRef": {"name": rt}, **spec},
    }


def write(path: Path, *objs: Obj) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def tree(root: Path, *objs: Obj) -> str:
    """A folder with one file per object, named like kubectl diff names them (no suffix)."""
    root.mkdir(parents=True, exist_ok=True)
    for obj in objs:
        group, _, version = obj["apiVersion"].rpartition("/")
        meta = obj["metadata"]
        name = f"{group}.{version}.{obj['kind']}.{meta.get('namespace', '')}.{meta['name']}"
        (root / name).write_text(yaml.safe_dump(obj, sort_keys=False))
    return str(root)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


REPLICAS = [replica("a-1", "rt-a"), replica("a-2", "rt-a"), replica("b-1", "rt-b")]


@pytest.fixture
def bump(tmp_path: Path) -> tuple[str, str]:
    """Before/after folders where rt-a's image goes from img:1 to img:2."""
    before = write(
        tmp_path / "before" / "all.yaml", runtime("rt-a", "img:1"), runtime("rt-b", "b:1"), *REPLICAS
    )
    after = write(
        tmp_path / "after" / "all.yaml", runtime("rt-a", "img:2"), runtime("rt-b", "b:1"), *REPLICAS
    )
    return before, after


def headlines(out: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in out.splitlines() if not line.startswith(("  ", "note: ")))


HIDDEN_ONE = (
    "note: 1 replica whose verdict did not change not listed (1 unchanged); --show-unchanged lists them"
)


IMAGE_LINE = '  runner default: containers[ome-container].image: "img:1" -> "img:2"'


def test_an_image_bump_rolls_its_replicas_and_exits_1(
    capsys: pytest.CaptureFixture[str], bump: tuple[str, str]
) -> None:
    code, out, err = run(capsys, "--before", bump[0], "--after", bump[1])
    assert code == 1
    heads = headlines(out)
    # Only the replicas whose verdict changed; the rest are counted.
    assert list(heads) == [f"{NS}/a-1", f"{NS}/a-2"]
    assert heads[f"{NS}/a-1"].startswith("rolls a-1-engine-")
    assert out.splitlines()[1] == IMAGE_LINE
    assert out.count(IMAGE_LINE) == 2
    assert out.splitlines()[-1] == HIDDEN_ONE
    assert err == "diff: 3 replicas: 2 rolls, 1 unchanged\n"
    code, out, _ = run(capsys, "--before", bump[0], "--after", bump[1], "--show-unchanged")
    assert headlines(out)[f"{NS}/b-1"] == "unchanged"
    assert "note:" not in out


def test_nothing_changes_exits_0(capsys: pytest.CaptureFixture[str], bump: tuple[str, str]) -> None:
    code, out, _ = run(capsys, "--before", bump[0], "--after", bump[0])
    assert code == 0
    assert out == (
        "note: 3 replicas whose verdict did not change not listed (3 unchanged); --show-unchanged lists them\n"
    )
    code, out, _ = run(capsys, "--before", bump[0], "--after", bump[0], "--show-unchanged")
    assert set(headlines(out).values()) == {"unchanged"}


def test_a_blocked_replica_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = write(tmp_path / "b.yaml", runtime("rt-a", "img:1"), replica("a-1", "rt-a"))
    after = write(tmp_path / "a.yaml", replica("a-1", "rt-a"))
    code, out, _ = run(capsys, "--before", before, "--after", after)
    assert code == 1
    assert out.splitlines()[0] == f"{NS}/a-1: blocks RuntimeNotFound"


def test_replicas_given_render_on_both_sides(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = write(tmp_path / "before.yaml", runtime("rt-a", "img:1"), runtime("rt-b", "b:1"))
    after = write(tmp_path / "after.yaml", runtime("rt-a", "img:2"), runtime("rt-b", "b:1"))
    replicas = write(tmp_path / "replicas" / "r.yaml", *REPLICAS)
    # -f anywhere: every flag takes one path, so the order of the arguments does not matter.
    for argv in (
        ["-f", replicas, "--before", before, "--after", after],
        ["--before", before, "--after", after, "--filename", replicas],
    ):
        code, out, _ = run(capsys, *argv, "--show-unchanged")
        assert code == 1
        heads = headlines(out)
        assert heads[f"{NS}/b-1"] == "unchanged"
        assert heads[f"{NS}/a-1"].startswith("rolls ")


def test_replicas_given_win_over_replicas_among_the_objects(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    objs = write(tmp_path / "objs.yaml", runtime("rt-a", "img:1"), replica("other", "rt-a"))
    replicas = write(tmp_path / "r.yaml", replica("a-1", "rt-a"))
    code, out, err = run(capsys, "-f", replicas, "--before", objs, "--after", objs, "--show-unchanged")
    assert (code, out) == (0, f"{NS}/a-1: unchanged\n")
    assert f"ignoring the InferenceReplicas among --before/--after ({NS}/other)" in err


def test_replicas_that_appear_and_go(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rt = runtime("rt-a", "img:1")
    before = write(tmp_path / "b.yaml", rt, replica("a-1", "rt-a"), replica("gone", "rt-a"))
    after = write(tmp_path / "a.yaml", rt, replica("a-1", "rt-a"), replica("fresh", "rt-a"))
    code, out, _ = run(capsys, "--before", before, "--after", after, "--fail-on", "new,removed")
    assert code == 1
    heads = headlines(out)
    assert f"{NS}/a-1" not in heads
    assert heads[f"{NS}/fresh"].startswith("new -> fresh-engine-")
    assert heads[f"{NS}/gone"].startswith("removed (was gone-engine-")


# -- two folders -----------------------------------------------------------------------------------------------


def test_two_folders_as_kubectl_external_diff_writes_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    live = tree(tmp_path / "LIVE", runtime("rt-a", "img:1"), replica("a-1", "rt-a"))
    merged = tree(tmp_path / "MERGED", runtime("rt-a", "img:2"), replica("a-1", "rt-a"))
    (tmp_path / "MERGED" / ".hidden").write_text("not: [yaml\n")  # dotfiles are not objects
    code, out, _ = run(capsys, live, merged)
    assert code == 1
    assert out.splitlines()[0].startswith(f"{NS}/a-1: rolls a-1-engine-")
    assert out.splitlines()[1] == IMAGE_LINE
    # The order is kubectl's: live first, merged second.
    code, out, _ = run(capsys, merged, merged)
    assert (code, out) == (0, f"{HIDDEN_ONE}\n")


def test_a_separate_entry_point_takes_the_folders_first(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    live = tree(tmp_path / "LIVE", runtime("rt-a", "img:1"), replica("a-1", "rt-a"))
    merged = tree(tmp_path / "MERGED", runtime("rt-a", "img:2"), replica("a-1", "rt-a"))
    # kubectl appends the words after the program name to the two folders.
    assert diff_cmd.main([live, merged, "--output=json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["replicas"][0]["status"] == "rolls"


@pytest.mark.parametrize("count", [1, 3])
def test_positional_folders_without_before_after_must_be_two(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, count: int
) -> None:
    folders = [tree(tmp_path / f"d{i}", runtime("rt-a", "img:1")) for i in range(count)]
    code, out, err = run(capsys, *folders)
    assert (code, out) == (2, "")
    assert "exactly two folders" in err


def test_two_files_are_not_the_two_folder_form(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", replica("a-1", "rt-a"))
    code, _, err = run(capsys, a, a)
    assert code == 2
    assert "give --before PATH and --after PATH" in err


# -- outputs -----------------------------------------------------------------------------------------------------


def test_json_output(capsys: pytest.CaptureFixture[str], bump: tuple[str, str]) -> None:
    code, out, _ = run(capsys, "--before", bump[0], "--after", bump[1], "--output", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["changed"] is True
    assert doc["summary"]["rolls"] == 2
    assert [(r["name"], r["status"]) for r in doc["replicas"]] == [
        ("a-1", "rolls"),
        ("a-2", "rolls"),
        ("b-1", "unchanged"),
    ]
    assert doc["replicas"][0]["changes"][0]["path"] == "containers[ome-container].image"


def test_markdown_output(capsys: pytest.CaptureFixture[str], bump: tuple[str, str]) -> None:
    code, out, _ = run(capsys, "--before", bump[0], "--after", bump[1], "-o", "markdown")
    assert code == 1
    assert out.startswith("### omerender diff: 3 replicas: 2 rolls, 1 unchanged\n")
    # The two rolling replicas change alike: one group, its change shown once, its cause named.
    assert "**Fails the check:** 2 rolls." in out
    assert "#### 1. rolls: containers[ome-container].image — 2 replicas — fails the check" in out
    assert out.count('containers[ome-container].image: "') == 1
    assert "- cause: ClusterServingRuntime rt-a changed" in out
    assert "Replicas: `demo/a-1`, `demo/a-2`" in out
    assert "1 replica whose verdict did not change: counted above, not listed" in out


# -- bad input ---------------------------------------------------------------------------------------------------


def test_one_side_missing(capsys: pytest.CaptureFixture[str], bump: tuple[str, str]) -> None:
    code, out, err = run(capsys, "--before", bump[0])
    assert (code, out) == (2, "")
    assert "--after is missing" in err


def test_no_replica_anywhere(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    objs = write(tmp_path / "o.yaml", runtime("rt-a", "img:1"))
    code, _, err = run(capsys, "--before", objs, "--after", objs)
    assert code == 2
    assert "no InferenceReplica among the objects on either side" in err


def test_a_replica_twice_on_one_side(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    objs = write(tmp_path / "o.yaml", replica("a-1", "rt-a"), replica("a-1", "rt-a"))
    code, _, err = run(capsys, "--before", objs, "--after", objs)
    assert code == 2
    assert f"InferenceReplica {NS}/a-1 appears twice" in err


def test_an_invalid_replica_names_the_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    objs = write(tmp_path / "o.yaml", replica("a-1", "rt-a", replicas="many"))
    code, _, err = run(capsys, "--before", objs, "--after", objs)
    assert code == 2
    assert "spec.replicas" in err


def test_a_template_go_cannot_decode_blocks_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def runners_replica(port: object) -> dict[str, Any]:
        bad = replica("a-1", "rt-a")
        container = {"name": "c", "image": "x", "ports": [{"containerPort": port}]}
        bad["spec"] = {
            "component": "engine",
            "runners": [{"name": "default", "size": 1, "template": {"spec": {"containers": [container]}}}],
        }
        return bad

    before = write(tmp_path / "before.yaml", runners_replica(80))
    after = write(tmp_path / "after.yaml", runners_replica("eighty"))
    code, out, _ = run(capsys, "--before", before, "--after", after)
    assert code == 1
    assert f"{NS}/a-1: blocks RenderFailed" in out
    assert "podTemplate.spec.containers[0].ports[0].containerPort: cannot decode string" in out


def test_an_unknown_output_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], bump: tuple[str, str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["diff", "--before", bump[0], "--after", bump[1], "--output", "yaml"])
    assert exit_info.value.code == 2
