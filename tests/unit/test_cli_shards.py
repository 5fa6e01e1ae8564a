"""Work split across processes (``--jobs``): the same answer for every part count, and a child that
fails in any way costs time, never the answer. A large file is loaded in parts with the same result."""

from __future__ import annotations

import contextlib
import io
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.catalog_gen import generate, generate_replicas
from omerender.cli import main
from omerender.cli.io import load_objects, loading_in
from omerender.cli.shards import in_parts, parts_for
from omerender.cli.yamlsafe import YamlLimitError, load_documents, split_documents

PARENT = os.getpid()


_FORKED: list[int] = []  # the children in_parts forked during the running test


@pytest.fixture(autouse=True)
def _record_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test process may have children of its own (a control plane started by other tests), so
    # "no children left" is checked for the ones forked here only.
    _FORKED.clear()
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid > 0:
            _FORKED.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)


def _no_children_left() -> bool:
    """Every child forked during the test has been reaped (none is left running or a zombie)."""
    for pid in _FORKED:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def test_parts_come_back_in_order_and_are_computed_in_children() -> None:
    results = in_parts(lambda part, parts: (part, parts, os.getpid()), 3)
    assert [(part, parts) for part, parts, _ in results] == [(0, 3), (1, 3), (2, 3)]
    pids = [pid for _, _, pid in results]
    assert pids[0] == os.getpid()
    assert len(set(pids)) == 3  # each of the other parts ran in a process of its own
    assert len(_FORKED) == 2
    assert _no_children_left()


def test_one_part_runs_here() -> None:
    assert in_parts(lambda part, parts: (part, parts, os.getpid()), 1) == [(0, 1, os.getpid())]


def _raises_in_children(part: int, parts: int) -> int:
    if os.getpid() != PARENT:
        raise RuntimeError("boom")
    return part * 10


def _killed_in_children(part: int, parts: int) -> int:
    if os.getpid() != PARENT:
        os.kill(os.getpid(), signal.SIGKILL)
    return part * 10


def _unpicklable_in_children(part: int, parts: int) -> Any:
    if os.getpid() != PARENT:
        return lambda: part
    return part * 10


@pytest.mark.parametrize("work", [_raises_in_children, _killed_in_children, _unpicklable_in_children])
def test_a_failed_child_is_recomputed_here(work: Any) -> None:
    assert in_parts(work, 3) == [0, 10, 20]
    assert _no_children_left()


def test_an_error_here_is_raised_and_the_children_are_reaped() -> None:
    def work(part: int, parts: int) -> int:
        if part == 0:
            raise ValueError("bad input")
        return part

    with pytest.raises(ValueError, match="bad input"):
        in_parts(work, 3)
    assert _no_children_left()


def test_an_error_of_the_work_itself_is_raised_as_a_serial_run_raises_it() -> None:
    def work(part: int, parts: int) -> int:
        if part == 2:
            raise ValueError(f"part {part}")
        return part

    with pytest.raises(ValueError, match="part 2"):
        in_parts(work, 3)
    assert _no_children_left()


def test_parts_for() -> None:
    assert parts_for(3, 1000, per_part=100) == 3  # as asked
    assert parts_for(3, 2, per_part=100) == 2  # never more parts than units
    assert parts_for(100, 1000, per_part=1) == 8  # capped
    assert parts_for(None, 50, per_part=100) == 1  # small work stays here
    assert 1 <= parts_for(None, 10_000, per_part=100) <= 8


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _catalog_with_problems() -> list[dict[str, Any]]:
    objects = generate(40, 80)
    lonely = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "lonely", "annotations": {"ome.io/inherit-from": "ghost"}},
        "spec": {"engineConfig": {"runner": {"name": "c", "image": "i"}}},
    }
    objects.append(lonely)
    for obj in objects:
        if obj["kind"] == "ClusterBaseModel" and obj["metadata"]["name"].startswith("family1-"):
            del obj["spec"]["modelFormat"]  # a Ready model without a format name
    return objects


@pytest.mark.parametrize("output", ["text", "json"])
def test_lint_prints_the_same_for_every_part_count(tmp_path: Path, output: str) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump_all(_catalog_with_problems()))
    runs = {
        jobs: _run("lint", "--objects", str(path), "-o", output, "--jobs", jobs) for jobs in ("1", "2", "3")
    }
    code, out, _err = runs["1"]
    assert code == 1
    assert "ParentNotFound" in out
    assert "ModelFormatRequired" in out
    assert runs["2"] == runs["1"]
    assert runs["3"] == runs["1"]
    assert _no_children_left()


def _write(path: Path, objects: list[dict[str, Any]]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objects))
    return str(path)


@pytest.mark.parametrize("output", ["text", "json", "markdown"])
def test_diff_prints_the_same_for_every_part_count(tmp_path: Path, output: str) -> None:
    catalog = generate(40, 200)
    after = [dict(o) for o in catalog]
    for i, obj in enumerate(after):
        name = obj["metadata"]["name"]
        if (
            obj["kind"] == "ClusterServingRuntime"
            and name.startswith("srt-")
            and int(name.rsplit("-", 1)[1]) % 2
        ):
            spec = yaml.safe_load(yaml.safe_dump(obj["spec"]))
            spec["engineConfig"]["runner"]["image"] += "-patched"  # rolls the replicas it serves
            after[i] = {**obj, "spec": spec}
        elif obj["kind"] == "ClusterBaseModel" and "-model-5-" in name:
            after[i] = {**obj, "status": {"state": "Importing"}}  # blocks its replicas
    replicas = generate_replicas(60, models=40)
    before_replicas, after_replicas = replicas[:55], replicas[5:]  # some removed, some new
    before = _write(tmp_path / "before" / "all.yaml", [*catalog, *before_replicas])
    after_path = _write(tmp_path / "after" / "all.yaml", [*after, *after_replicas])
    runs = {
        jobs: _run("diff", "--before", before, "--after", after_path, "-o", output, "--jobs", jobs)
        for jobs in ("1", "2", "4")
    }
    code, _, err = runs["1"]
    assert code == 1
    for status in ("unchanged", "rolls", "blocks", "new", "removed"):
        assert status in err  # the summary: every kind of outcome is among them
    assert runs["2"] == runs["1"]
    assert runs["4"] == runs["1"]
    assert _no_children_left()


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_jobs_must_be_a_positive_count(
    tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(yaml.safe_dump_all(generate(2, 2)))
    with pytest.raises(SystemExit) as exited:
        main(["lint", "--objects", str(path), "--jobs", value])
    assert exited.value.code == 2
    assert "whole number of processes" in capsys.readouterr().err


# -- one large file loaded in several processes -------------------------------------------------------

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.text(alphabet=st.sampled_from("ab-:\n '\"#&*{}[]|>%.\t"), max_size=12),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(alphabet="abk-", max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
_STYLES = st.sampled_from([{}, {"default_flow_style": True}, {"default_style": "|"}, {"default_style": '"'}])


def _stream(draw: st.DrawFn) -> str:
    docs = draw(st.lists(_VALUES, min_size=1, max_size=6))
    text = yaml.safe_dump_all(docs, explicit_start=draw(st.booleans()), **draw(_STYLES))
    # Hand-written forms a generator would not make: a marker with content on its line, "..." ends,
    # an empty document, a comment, text that is not YAML at all.
    extra = draw(
        st.lists(
            st.sampled_from(["--- a: 1\n", "...\n", "---\n", "# c\n---\n", "--- |\n  x\n", "a: [\n"]),
            max_size=3,
        )
    )
    return text + "".join(extra)


@st.composite
def _streams(draw: st.DrawFn) -> str:
    return _stream(draw)


def _loaded(data: bytes, parts: int) -> object:
    try:
        return ("ok", load_documents(data, parts=parts, run_parts=in_parts))
    except (yaml.YAMLError, YamlLimitError, UnicodeDecodeError) as exc:
        return ("error", type(exc).__name__, str(exc))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=_streams(), parts=st.integers(2, 4))
def test_a_stream_loaded_in_parts_is_the_stream_loaded_whole(stream: str, parts: int) -> None:
    data = stream.encode()
    assert _loaded(data, parts) == _loaded(data, 1)


def test_split_documents_cuts_only_before_markers() -> None:
    text = "a: 1\n---\nb: |\n  ---x\n  y\n--- c\n---\n"
    pieces = split_documents(text, 3)
    assert "".join(pieces) == text
    assert all(piece.startswith("---") for piece in pieces[1:])
    assert split_documents("a: 1\nb: 2\n", 4) == ["a: 1\nb: 2\n"]  # no marker, no cut


def test_a_file_loads_in_several_processes_with_the_same_objects(tmp_path: Path) -> None:
    objects = generate_replicas(1500)
    path = tmp_path / "replicas.yaml"
    path.write_text(yaml.safe_dump_all(objects, explicit_start=True))
    assert path.stat().st_size > 3 * 64 * 1024  # --jobs splits only a file of a few blocks
    assert len(split_documents(path.read_text(), 3)) == 3
    with loading_in(1):
        serial = load_objects([path])
    for jobs in (2, 3):
        with loading_in(jobs):
            assert load_objects([path]) == serial == objects
    assert _no_children_left()


def test_jobs_never_split_a_small_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump_all(generate_replicas(20), explicit_start=True))

    def no_fork() -> int:
        raise AssertionError("a small file was split across processes")

    monkeypatch.setattr(os, "fork", no_fork)
    with loading_in(8):
        assert len(load_objects([path])) == 20
