"""No output line longer than 500 characters (issue 34): a table's long cell is cut with ``…``, one note
says so, and ``-o json`` has the full text. Over the OME-shaped catalog (200 runtimes, 200 models) and
a forecast whose holds cell would be thousands of characters long."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from omereconcile.forecast import to_json, to_markdown, to_text
from omereconcile.forecast.report import CUT_NOTE
from omereconcile.forecast.run import Hold
from omereconcile.forecast.section import forecast_section, groups_by_runtime
from omerender.cli import main
from omerender.diff import LINE_LIMIT
from tests.unit.ome_shaped_repo import build
from tests.unit.test_forecast import _replica, _run, _strategy


def _longest(text: str) -> int:
    return max(map(len, text.splitlines()))


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The OME-shaped repository's catalog, with one gang runtime kept again under a folder whose path
    alone is longer than a line may be."""
    repo = tmp_path_factory.mktemp("shaped") / "repo"
    build(repo)
    config = repo / "config"
    deep = config / "runtimes" / ("vendor-" + "x" * 200) / ("team-" + "y" * 200)
    deep.mkdir(parents=True)
    gang = (config / "runtimes" / "srt" / "srt-arctic-gang.yaml").read_text()
    (deep / "srt-arctic-gang-copy.yaml").write_text(
        gang.replace("name: srt-arctic-gang", "name: srt-arctic-copy")
    )
    return config


def _lint(*argv: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["lint", "--no-schema", *argv]) == 0  # warnings only
    return out.getvalue()


def test_lint_over_the_big_catalog_keeps_every_line_within_the_limit(catalog: Path) -> None:
    text = _lint(str(catalog))
    assert _longest(text) <= LINE_LIMIT
    (cut,) = [line for line in text.splitlines() if "srt-arctic-copy" in line]
    assert len(cut) == LINE_LIMIT
    assert cut.endswith("… (-o json has the full text)")
    report = json.loads(_lint(str(catalog), "-o", "json"))
    (finding,) = [f for f in report["findings"] if f["name"] == "srt-arctic-copy"]
    assert "y" * 200 in finding["file"]
    assert "OME_INSTANCE_POD_COUNT" in finding["problem"]


def test_lint_cuts_no_line_within_the_limit(catalog: Path, tmp_path: Path) -> None:
    shutil.copytree(catalog / "runtimes" / "srt", tmp_path / "srt")
    text = _lint(str(tmp_path / "srt"))
    assert "-o json has the full text" not in text
    assert _longest(text) <= LINE_LIMIT


def test_a_forecast_holds_cell_is_cut_in_every_output_and_whole_in_json() -> None:
    f = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1)), capacity=(3,))
    (r,) = f.replicas
    # Many holds of one replica: the cell the issue saw as a 3,200-character line.
    holds = tuple(Hold("Unschedulable", f"pod {i}: 0/100 nodes are available: {'x' * 60}") for i in range(40))
    long = dataclasses.replace(f, replicas=(dataclasses.replace(r, holds=holds),))
    full = "; ".join(f"{h.gate}: {h.reason}" for h in holds)
    assert len(full) > 3000
    for text in (to_text(long), to_markdown(long), forecast_section(long, groups_by_runtime(()))):
        assert _longest(text) <= LINE_LIMIT
        assert "…" in text
    assert CUT_NOTE in to_text(long)
    row = next(line for line in to_markdown(long).splitlines() if line.startswith(f"| {r.key} "))
    assert row.endswith("… |")  # the table keeps its closing bar
    assert [h["reason"] for h in to_json(long)["replicas"][0]["holds"]] == [h.reason for h in holds]
    assert CUT_NOTE not in to_text(f)


def test_validate_folds_a_long_message_keeping_every_word() -> None:
    """validate has no JSON output to hold what a cut would lose: a long line is folded, indented."""
    from omerender.cli.validate_cmd import _folded

    line = "InferenceReplica ns/r: spec.runners: " + ", ".join(f"runner-{k} is refused" for k in range(60))
    folded = _folded(line)
    assert _longest(folded) <= LINE_LIMIT
    assert len(folded.splitlines()) > 1
    assert folded.replace("\n    ", " ") == line
    assert _folded("short") == "short"
