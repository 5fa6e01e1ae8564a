"""The library's diff (:func:`omerender.diff.compare`): what ``load`` returns (or paths) on both sides,
the CLI's verdicts, typed errors for wrong arguments and a missing extra named at the call."""

from __future__ import annotations

import inspect
import io
import itertools
import json
import subprocess
import sys
import tarfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import omerender
import omerender.diff
from omerender import InvalidArgumentError, Loaded, MissingExtraError, load
from omerender.cli import main
from omerender.diff import compare, diff_replica, diff_replicas
from tests.unit.ome_shaped_repo import build

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (str(ROOT / "examples" / "catalog"), str(ROOT / "examples" / "llama-pool.yaml"))


def _checkout(repo: Path, commit: str, into: Path) -> Path:
    """The commit's tree, as a pull-request job checks the base branch out beside the head."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=repo, capture_output=True, check=True, timeout=60
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def _cli_verdicts(base: Path, head: Path) -> dict[str, tuple[str, str]]:
    argv = ["diff", "--assume-models-ready", "-o", "json"]
    for flag, side in (("--before", base), ("--after", head)):
        argv += [flag, str(side / "config"), flag, str(side / "replicas")]
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    assert code in (0, 1), out.getvalue()
    report: dict[str, Any] = json.loads(out.getvalue())
    return {f"{r['namespace']}/{r['name']}": (r["status"], r["headline"]) for r in report["replicas"]}


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path]]:
    """Every commit of the OME-shaped repository, checked out: (step name, tree)."""
    root = tmp_path_factory.mktemp("ome-shaped")
    repo = root / "repo"
    return [
        (name, _checkout(repo, commit, root / f"tree-{i}")) for i, (commit, name) in enumerate(build(repo))
    ]


def test_the_library_gives_the_cli_verdicts_on_every_commit_of_the_ome_shaped_history(
    history: list[tuple[str, Path]],
) -> None:
    seen: set[str] = set()
    for (_, base), (step, head) in itertools.pairwise(history):
        expected = _cli_verdicts(base, head)
        diffs = compare(
            load(base / "config", base / "replicas"),
            load(head / "config", head / "replicas"),
            assume_models_ready=True,
        )
        assert {d.key: (d.status.value, d.headline) for d in diffs} == expected, step
        seen |= {status for status, _ in expected.values()}
    # The history exercises the verdicts that matter, unknown among them (not turned into still-blocks).
    assert {"rolls", "new", "unknown", "still-blocks", "unchanged", "blocks"} <= seen


def test_paths_are_read_as_load_reads_them() -> None:
    loaded = compare(load(*EXAMPLE), load(*EXAMPLE))
    assert [(d.key, d.status.value) for d in loaded] == [("llama-demo/llama-pool", "unchanged")]
    assert compare(list(EXAMPLE), EXAMPLE[0], replicas=EXAMPLE[1]) == compare(
        load(*EXAMPLE), load(EXAMPLE[0]), replicas=load(EXAMPLE[1])
    )


def test_a_catalog_where_a_side_belongs_is_a_typed_error_with_the_fix() -> None:
    loaded = load(*EXAMPLE)
    with pytest.raises(
        InvalidArgumentError, match=r"before must be what omerender.load\(\) returns"
    ) as caught:
        compare(loaded.catalog(), loaded)  # type: ignore[arg-type]
    assert "pass the Loaded it was built from" in str(caught.value)
    assert isinstance(caught.value, TypeError)
    with pytest.raises(InvalidArgumentError, match="after"):
        compare(loaded, 42)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="diff_replicas"):
        compare(loaded, {("ns", "name"): loaded.replicas()[0]})  # type: ignore[arg-type]


def test_catalogs_and_replicas_swapped_name_both_arguments() -> None:
    loaded = load(*EXAMPLE)
    catalog = loaded.catalog()
    replicas = {(r.namespace, r.metadata.name): r for r in loaded.replicas()}
    with pytest.raises(InvalidArgumentError) as caught:
        diff_replicas(catalog, catalog, replicas, replicas)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("omerender.diff.diff_replicas(): before must be a mapping")
    assert (
        "a Catalog belongs in before_catalog and after_catalog, the replicas in before and after" in message
    )
    with pytest.raises(InvalidArgumentError, match="before_catalog must be a Catalog, got dict"):
        diff_replicas(replicas, replicas, replicas, catalog)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="diff_replica\\(\\): after_catalog must be a Catalog"):
        diff_replica(None, loaded.replicas()[0], catalog, replicas)  # type: ignore[arg-type]


@pytest.mark.parametrize("call", ["compare", "diff_replicas"])
def test_a_missing_tools_extra_is_an_import_error_at_the_call(
    call: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load(*EXAMPLE)
    catalog = loaded.catalog()
    monkeypatch.setitem(sys.modules, "deepdiff", None)  # import deepdiff raises ImportError
    with pytest.raises(MissingExtraError) as caught:
        # Nothing rolls (or nothing is given): the error still comes at the call.
        compare(loaded, loaded) if call == "compare" else diff_replicas({}, {}, catalog, catalog)
    assert isinstance(caught.value, ImportError)
    assert caught.value.name == "deepdiff"
    assert str(caught.value) == (
        f"omerender.diff.{call}() needs the 'tools' extra (deepdiff is not installed): "
        "pip install 'omerender[tools]'"
    )


def _public_callables() -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for module in (omerender, omerender.diff):
        for name in module.__all__:
            value = getattr(module, name)
            out.append((f"{module.__name__}.{name}", value))
            if inspect.isclass(value):
                out += [
                    (f"{module.__name__}.{name}.{attr}", member)
                    for attr, member in vars(value).items()
                    if not attr.startswith("_") and callable(member)
                ]
    return out


def test_no_public_function_takes_arbitrary_keywords() -> None:
    """``**options: Any`` lets a misspelt keyword pass the type checker and fail at run time."""
    loose = []
    for where, value in _public_callables():
        try:
            parameters = inspect.signature(value).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters) and not inspect.isclass(value):
            loose.append(where)
    assert loose == []
    with pytest.raises(TypeError, match="strct"):
        Loaded().catalog(strct=True)  # type: ignore[call-arg]
