"""A catalog object defined twice: the later one in path order wins with a warning naming both files,
as ``kubectl apply -R`` leaves the cluster; ``--strict`` makes every duplicate an error, listed at once.
One flag, the same on every command that reads catalog objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omerender import Catalog
from omerender.cli import main
from omerender.errors import InvalidObjectError
from tests.unit.test_cli_diff import replica, runtime, write

NS = "demo"
Obj = dict[str, Any]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    """rt-a in a.yaml (img:1) and again in b.yaml (img:2); rt-b twice in c.yaml; rt-c once."""
    folder = tmp_path / "catalog"
    write(folder / "a.yaml", runtime("rt-a", "img:1"), runtime("rt-c", "c:1"))
    write(folder / "b.yaml", runtime("rt-a", "img:2"))
    write(folder / "c.yaml", runtime("rt-b", "b:1"), runtime("rt-b", "b:2"))
    return folder


def test_render_uses_the_later_object_and_warns_once_per_duplicate_naming_both_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Path
) -> None:
    code, out, err = run(
        capsys, "render", write(tmp_path / "r.yaml", replica("r", "rt-a")), "--objects", str(catalog)
    )
    assert code == 0
    assert "image: img:2" in out
    assert "img:1" not in out
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 2
    assert (
        f"ClusterServingRuntime rt-a is defined in {catalog / 'a.yaml'} and again in {catalog / 'b.yaml'}"
        in (warnings[0])
    )
    assert f"ClusterServingRuntime rt-b is defined twice in {catalog / 'c.yaml'}" in warnings[1]
    assert "--strict" in warnings[0]


def test_path_order_is_the_order_given_then_the_folder_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Path
) -> None:
    # b.yaml first, then the folder (whose a.yaml repeats rt-a after it): the folder's last rt-a wins.
    r = write(tmp_path / "r.yaml", replica("r", "rt-a"))
    code, out, _ = run(capsys, "render", r, "--objects", str(catalog / "b.yaml"), str(catalog / "a.yaml"))
    assert code == 0
    assert "image: img:1" in out


@pytest.mark.parametrize("command", ["render", "lint", "validate", "diff"])
def test_strict_lists_every_duplicate_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Path, command: str
) -> None:
    r = write(tmp_path / "r.yaml", replica("r", "rt-a"))
    argv = {
        "render": ["render", r, "--objects", str(catalog), "--strict"],
        "lint": ["lint", "--objects", str(catalog), "--strict"],
        "validate": ["validate", r, "--objects", str(catalog), "--strict"],
        "diff": [
            "diff",
            "--before",
            str(catalog),
            "--before",
            r,
            "--after",
            str(catalog),
            "--after",
            r,
            "--strict",
        ],
    }[command]
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert "2 duplicate catalog objects (--strict)" in err
    assert (
        f"ClusterServingRuntime rt-a is defined in {catalog / 'a.yaml'} and again in {catalog / 'b.yaml'}"
        in err
    )
    assert f"ClusterServingRuntime rt-b is defined twice in {catalog / 'c.yaml'}" in err
    assert "warning" not in err


def test_lint_sees_the_winner_only(capsys: pytest.CaptureFixture[str], catalog: Path) -> None:
    code, out, err = run(capsys, "lint", "--objects", str(catalog), "--no-schema")
    assert code == 0, out
    assert "appears twice" not in out
    assert "lint: 3 renders, 0 problems" in err


def test_diff_compares_the_winners_on_each_side(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    r = write(tmp_path / "r.yaml", replica("r", "rt-a"))
    before = write(tmp_path / "before.yaml", runtime("rt-a", "img:0"), runtime("rt-a", "img:1"))
    after = write(tmp_path / "after.yaml", runtime("rt-a", "img:1"))
    code, out, err = run(
        capsys, "diff", "--before", before, "--before", r, "--after", after, "--after", r, "--show-unchanged"
    )
    assert code == 0, out
    assert "r: unchanged" in out.replace(f"{NS}/", "")
    assert err.count("warning") == 1


def test_namespaced_objects_of_one_name_in_two_namespaces_are_not_duplicates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def namespaced(ns: str) -> Obj:
        return {
            **runtime("rt", "img:1"),
            "kind": "ServingRuntime",
            "metadata": {"name": "rt", "namespace": ns},
        }

    objects = write(tmp_path / "c.yaml", namespaced("a"), namespaced("b"), namespaced("default"))
    bare = {**namespaced("default"), "metadata": {"name": "rt"}}  # no namespace: "default"
    again = write(tmp_path / "d.yaml", bare)
    code, _, err = run(capsys, "lint", "--objects", objects, again, "--strict", "--no-schema")
    assert code == 2
    assert "1 duplicate catalog object (--strict)" in err
    assert "ServingRuntime default/rt is defined in" in err


def test_the_library_keeps_refusing_duplicates() -> None:
    # The duplicate policy is the command line's (it knows the files); the library's contract stays.
    with pytest.raises(InvalidObjectError, match="appears twice"):
        Catalog.from_objects([runtime("rt-a", "img:1"), runtime("rt-a", "img:2")])
