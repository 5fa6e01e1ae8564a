"""Every JSON report says its schema version first (``apiVersion``), so a consumer can tell a report it
reads from one whose shape changed (docs/releasing.md: a field removed, renamed or given another
meaning raises the version)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omereconcile.cli import main as omereconcile_main
from omerender.cli import main as omerender_main

ROOT = Path(__file__).resolve().parents[2]
CATALOG = str(ROOT / "examples" / "catalog")
REPLICA = str(ROOT / "examples" / "llama-pool.yaml")
SIDES = ["--before", CATALOG, "--before", REPLICA, "--after", CATALOG, "--after", REPLICA]


def _json(capsys: pytest.CaptureFixture[str], code: int) -> dict[str, Any]:
    out = capsys.readouterr().out
    assert code == 0, out
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_the_diff_report_is_omerender_diff_v1(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, omerender_main(["diff", *SIDES, "-o", "json"]))
    assert next(iter(doc.items())) == ("apiVersion", "omerender.diff/v1")


def test_the_diff_file_report_carries_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "diff.json"
    assert omerender_main(["diff", *SIDES, "--report", str(report)]) == 0
    assert json.loads(report.read_text())["apiVersion"] == "omerender.diff/v1"


def test_the_lint_report_is_omerender_lint_v1(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, omerender_main(["lint", "--no-schema", "--objects", CATALOG, "-o", "json"]))
    assert next(iter(doc.items())) == ("apiVersion", "omerender.lint/v1")


def test_the_forecast_report_is_omereconcile_forecast_v1(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, omereconcile_main(["forecast", *SIDES, "-o", "json"]))
    assert next(iter(doc.items())) == ("apiVersion", "omereconcile.forecast/v1")
