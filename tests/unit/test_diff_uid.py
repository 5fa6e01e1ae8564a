"""Revision identity in ``omerender diff`` and ``omereconcile forecast``: files from git carry no
``metadata.uid``, so the names the outputs print are for an empty uid unless ``--uid`` gives it
(``UID`` for a single replica, ``NAMESPACE/NAME=UID`` repeatable); the outputs say so once, and the
verdicts do not depend on it. ``kubectl ome diff`` reads the live uids and says nothing."""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from omereconcile.cli import main as omereconcile_main
from omerender import Catalog, InferenceReplica, parse_object, render, revision_of
from omerender.cli import diff_cmd, main
from omerender.cli.io import load_objects
from omerender.diff import Status, diff_replicas, to_json, to_markdown, to_text, uid_note

ROOT = Path(__file__).resolve().parents[2]
NS = "llama-demo"
UID = "0f3b2c9e-5d1a-4c7e-9b8a-2f6d4e1c3a57"
OTHER = "6a1e9d2c-3b4f-4a8e-8c7d-1e2f3a4b5c6d"
NEW_IMAGE = "docker.io/vllm/vllm-openai:v0.9.1"
NOTE = "revision names are for an empty uid"
Key = tuple[str, str]


def _catalogs(bump: bool = True) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    before = load_objects([ROOT / "examples" / "catalog"])
    after = copy.deepcopy(before)
    for obj in after:
        if bump and obj["kind"] == "ClusterServingRuntime":
            obj["spec"]["engineConfig"]["runner"]["image"] = NEW_IMAGE
    return before, after


def _raw(name: str = "llama-pool", **metadata: Any) -> dict[str, Any]:
    raw = load_objects([ROOT / "examples" / "llama-pool.yaml"])[0]
    raw["metadata"].update(name=name, **metadata)
    return raw


def _replicas(*raws: dict[str, Any]) -> dict[Key, InferenceReplica]:
    out = {}
    for raw in raws:
        replica = parse_object(InferenceReplica, raw)
        out[(replica.namespace, replica.metadata.name)] = replica
    return out


def _name(raw: dict[str, Any], objects: list[dict[str, Any]], uid: str | None) -> str:
    """The revision name computed apart from the diff: render, then revision_of with ``uid``."""
    result = render(parse_object(InferenceReplica, raw), Catalog.from_objects(objects))
    return revision_of(result, uid=uid).name


# -- the library -----------------------------------------------------------------------------------


@pytest.mark.parametrize("bump", [True, False])
def test_the_verdict_does_not_depend_on_the_uid_and_the_names_do(bump: bool) -> None:
    before_objs, after_objs = _catalogs(bump)
    replicas = _replicas(_raw("a"), _raw("b"))
    cats = Catalog.from_objects(before_objs), Catalog.from_objects(after_objs)
    bare = diff_replicas(replicas, replicas, *cats)
    given = diff_replicas(replicas, replicas, *cats, uids={(NS, "a"): UID, (NS, "b"): OTHER})
    status = Status.ROLLS if bump else Status.UNCHANGED
    assert [d.status for d in bare] == [d.status for d in given] == [status, status]
    a_bare, a_given = bare[0], given[0]
    assert a_bare.after is not None
    assert a_given.after is not None
    assert a_bare.after.revision == _name(_raw("a"), after_objs, None)
    assert a_given.after.revision == _name(_raw("a"), after_objs, UID) != a_bare.after.revision
    assert all("is for an empty uid: the replica has no metadata.uid" in (d.uid_notice or "") for d in bare)
    assert all(d.uid_notice is None for d in given)
    assert uid_note(given) is None
    note = uid_note(bare)
    assert note is not None
    assert note.startswith(f"2 of 2 replicas' {NOTE} (no metadata.uid in the files and no --uid)")
    assert "the verdicts (rolls, unchanged, ...) do not depend on the uid" in note


def test_one_note_counts_the_replicas_without_uid_in_every_format() -> None:
    before_objs, after_objs = _catalogs()
    replicas = _replicas(_raw("a"), _raw("b", uid=OTHER), _raw("c"))
    diffs = diff_replicas(
        replicas, replicas, Catalog.from_objects(before_objs), Catalog.from_objects(after_objs)
    )
    text = to_text(diffs)
    notes = [line for line in text.splitlines() if NOTE in line]
    assert len(notes) == 1
    assert notes[0].startswith(f"note: 2 of 3 replicas' {NOTE}")
    assert text.count(NOTE) == 1
    assert max(map(len, text.splitlines())) <= 500
    markdown = to_markdown(diffs)
    assert markdown.count(NOTE) == 1
    assert f"> 2 of 3 replicas' {NOTE}" in markdown
    doc = to_json(diffs)
    by_name = {r["name"]: r for r in doc["replicas"]}
    assert by_name["b"]["uidNotice"] is None
    assert by_name["b"]["after"]["uidNotice"] is None
    for name in ("a", "c"):
        assert by_name[name]["uidNotice"] == by_name[name]["after"]["uidNotice"]
        assert (
            f"the revision name {by_name[name]['after']['revision']} is for an empty uid"
            in (by_name[name]["uidNotice"])
        )
    assert [n for n in doc["notes"] if NOTE in n] == [uid_note(diffs)]
    # A caller that reads live uids leaves the note out (kubectl ome diff).
    assert NOTE not in to_text(diffs, uid_notes=False) + to_markdown(diffs, uid_notes=False)
    assert to_json(diffs, uid_notes=False)["notes"] == []


def test_one_replica_without_uid_is_named_in_the_note() -> None:
    before_objs, after_objs = _catalogs()
    replicas = _replicas(_raw("a"), _raw("b", uid=OTHER))
    diffs = diff_replicas(
        replicas, replicas, Catalog.from_objects(before_objs), Catalog.from_objects(after_objs)
    )
    assert (uid_note(diffs) or "").startswith(f"{NS}/a's {NOTE}")


# -- omerender diff, through python -m omerender.cli ------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("uid")
    before_objs, after_objs = _catalogs()
    paths = {
        "before": root / "before.yaml",
        "after": root / "after.yaml",
        "two": root / "two.yaml",
        "one": root / "one.yaml",
    }
    paths["before"].write_text(yaml.safe_dump_all(before_objs))
    paths["after"].write_text(yaml.safe_dump_all(after_objs))
    paths["two"].write_text(yaml.safe_dump_all([_raw("a"), _raw("b")]))
    paths["one"].write_text(yaml.safe_dump_all([_raw("a")]))
    return {k: str(v) for k, v in paths.items()}


def _cli(files: dict[str, str], replicas: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = ["diff", "--before", files["before"], "--after", files["after"], "-f", files[replicas], *extra]
    return subprocess.run(
        [sys.executable, "-m", "omerender.cli", *argv], capture_output=True, text=True, check=False, cwd=ROOT
    )


def test_cli_diff_notes_the_empty_uid_once_in_each_format(files: dict[str, str]) -> None:
    text = _cli(files, "two")
    assert text.returncode == 1, text.stderr
    assert text.stdout.count(NOTE) == 1
    assert text.stdout.splitlines()[0].startswith(f"note: 2 of 2 replicas' {NOTE}")
    after_objs = _catalogs()[1]
    assert f"{NS}/a: rolls " in text.stdout
    assert f"-> {_name(_raw('a'), after_objs, None)}" in text.stdout
    markdown = _cli(files, "two", "-o", "markdown")
    # The grouped comment shows no revision names (issue 36: the note only where they are shown).
    assert NOTE not in markdown.stdout
    assert "<revision>" not in markdown.stdout
    doc = json.loads(_cli(files, "two", "-o", "json").stdout)
    assert all(r["uidNotice"] for r in doc["replicas"])
    assert sum(NOTE in n for n in doc["notes"]) == 1


def test_cli_diff_uid_per_replica_names_the_clusters_revisions(files: dict[str, str]) -> None:
    done = _cli(files, "two", "--uid", f"{NS}/a={UID}", "--uid", f"{NS}/b={OTHER}", "-o", "json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    after_objs = _catalogs()[1]
    names = {r["name"]: r["after"]["revision"] for r in doc["replicas"]}
    assert names == {"a": _name(_raw("a"), after_objs, UID), "b": _name(_raw("b"), after_objs, OTHER)}
    assert [r["uidNotice"] for r in doc["replicas"]] == [None, None]
    assert doc["notes"] == []
    # Half given: the note names the other one.
    half = _cli(files, "two", "--uid", f"{NS}/a={UID}")
    assert half.returncode == 1, half.stderr
    assert half.stdout.startswith(f"note: {NS}/b's {NOTE}")


def test_cli_diff_bare_uid_with_one_replica(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["diff", "--before", files["before"], "--after", files["after"], "-f", files["one"]]
    assert main([*args, "--uid", UID]) == 1
    out = capsys.readouterr().out
    assert NOTE not in out
    assert f"-> {_name(_raw('a'), _catalogs()[1], UID)}" in out


@pytest.mark.parametrize(
    ("replicas", "uids", "message"),
    [
        (
            "two",
            [UID],
            f"--uid {UID}: a bare uid needs exactly one replica, and 2 are read ({NS}/a, {NS}/b); name the "
            "one it belongs to: --uid NAMESPACE/NAME=UID (repeatable)",
        ),
        (
            "one",
            [f"{NS}/nope={UID}"],
            f"--uid {NS}/nope={UID}: no InferenceReplica {NS}/nope among the replicas read ({NS}/a); give "
            "the namespace and name of one of them",
        ),
        ("one", [UID, f"{NS}/a={UID}"], f"--uid {UID}: a bare uid stands alone"),
        ("one", [f"{NS}/a={UID}", f"{NS}/a={OTHER}"], f"--uid {NS}/a: given twice with different uids"),
        ("one", ["a=x"], "argument --uid: 'a=x': name the replica as NAMESPACE/NAME=UID"),
        ("one", [f"{NS}/a= x"], f"argument --uid: '{NS}/a= x' is not a uid"),
    ],
)
def test_cli_diff_refuses_a_uid_it_cannot_place(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], replicas: str, uids: list[str], message: str
) -> None:
    args = ["diff", "--before", files["before"], "--after", files["after"], "-f", files[replicas]]
    with_uids = [word for uid in uids for word in ("--uid", uid)]
    try:
        code = main([*args, *with_uids])
    except SystemExit as exc:  # argparse's usage error
        code = int(exc.code or 0)
    assert code == 2
    assert message in capsys.readouterr().err


# -- omereconcile forecast --------------------------------------------------------------------------


def test_forecast_notes_the_empty_uid_and_takes_uid(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["forecast", "--before", files["before"], "--after", files["after"], "-f", files["two"]]
    assert omereconcile_main(args) == 1
    out = capsys.readouterr().out
    assert out.count(NOTE) == 1
    assert out.startswith(f"note: 2 of 2 replicas' {NOTE}")
    assert omereconcile_main([*args, "-o", "markdown"]) == 1
    assert f"Note: 2 of 2 replicas' {NOTE}" in capsys.readouterr().out
    assert omereconcile_main([*args, "-o", "json", "--uid", f"{NS}/b={OTHER}"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert {r["replica"]: r["uidNotice"] is not None for r in doc["replicas"]} == {
        f"{NS}/a": True,
        f"{NS}/b": False,
    }
    assert len(doc["notes"]) == 1
    assert doc["notes"][0].startswith(f"{NS}/a's {NOTE}")
    assert omereconcile_main([*args, "--uid", UID]) == 2
    assert "--uid NAMESPACE/NAME=UID" in capsys.readouterr().err


def test_uids_reach_the_diffs_made_in_other_processes(files: dict[str, str]) -> None:
    parser = argparse.ArgumentParser()
    diff_cmd.add_input_arguments(parser)
    argv = [
        "--before",
        files["before"],
        "--after",
        files["after"],
        "-f",
        files["two"],
        "--uid",
        f"{NS}/b={OTHER}",
    ]
    args = parser.parse_args(argv)
    args.command = "diff"
    sides = diff_cmd.read_sides(args)
    assert sides.uids == {(NS, "b"): OTHER}
    one, two = sides.diff(1), sides.diff(2)
    after = [(d.key, d.after.revision if d.after else None, d.uid_notice is None) for d in one]
    assert after == [(d.key, d.after.revision if d.after else None, d.uid_notice is None) for d in two]
    assert after[1] == (f"{NS}/b", _name(_raw("b"), _catalogs()[1], OTHER), True)
