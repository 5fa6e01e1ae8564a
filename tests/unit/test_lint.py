"""``omerender lint``: every problem found, each with the object that causes it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.catalog_gen import generate
from omerender.catalog import Catalog
from omerender.cli import main
from omerender.cli.kubeschema import kube_problems
from omerender.errors import InvalidObjectError
from omerender.lint import lint, lint_objects


def _runtime(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": spec,
    }


def _named(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objects if o["metadata"]["name"] == name)


def test_generated_catalog_is_clean() -> None:
    report = lint(Catalog.from_objects(generate(40, 80)), validate=kube_problems)
    assert report.findings == ()
    # every model renders its engine and its runtime's router; every enabled runtime renders each piece
    assert report.renders == 40 * 2 + 40 * 2


def test_undeclared_volume_mount_names_the_runtime() -> None:
    objects = generate(20, 60)
    broken = _named(objects, "srt-family3-3")
    broken["spec"]["engineConfig"]["runner"]["volumeMounts"] = [
        {"name": "devinf", "mountPath": "/dev/infiniband"}
    ]
    findings = lint(Catalog.from_objects(objects)).findings
    subjects = {(f.subject, f.component) for f in findings}
    assert ("ClusterServingRuntime srt-family3-3", "engine") in subjects
    assert all('volumeMount "devinf" has no matching volume' in f.problem for f in findings)


def test_model_without_runtime_is_reported() -> None:
    objects = generate(20, 60)
    model = _named(objects, "family4-model-4-1b")
    model["spec"]["modelArchitecture"] = "NobodyServesThis"
    findings = lint(Catalog.from_objects(objects)).findings
    assert len(findings) == 1
    assert findings[0].subject == "ClusterBaseModel family4-model-4-1b"
    assert findings[0].problem.startswith("RuntimeSelectionFailed: ")


def test_missing_parent_is_reported_once_under_the_runtime() -> None:
    objects = [o for o in generate(20, 60) if o["metadata"]["name"] != "mid-6"]
    findings = lint(Catalog.from_objects(objects)).findings
    orphans = {f.subject for f in findings if "ParentNotFound" in f.problem}
    assert orphans == {"ClusterServingRuntime srt-family6-6"}
    assert all('inherit-from parent "mid-6" not found' in f.problem for f in findings if f.subject in orphans)


def test_schema_violation_in_rendered_template() -> None:
    objects = generate(20, 60)
    profile = _named(objects, "profile-7")
    # Go drops the unknown key, so OME reads the runtime; the API server's strict validation refuses it.
    profile["spec"]["engineConfig"]["runner"]["ports"] = [{"containerPort": 80, "hostPorts": 1}]
    findings = lint(Catalog.from_objects(objects), validate=kube_problems).findings
    assert findings
    assert all("ports" in f.problem for f in findings)
    assert {f.subject for f in findings} >= {"ClusterServingRuntime srt-family7-7"}


def test_lint_reports_what_render_refuses_instead_of_stopping() -> None:
    # A string port or a bad quantity: OME's client cannot read the runtime, so render refuses the
    # catalog; lint names the runtime and the field and lints the rest.
    objects = generate(20, 60)
    profile = _named(objects, "profile-7")
    profile["spec"]["engineConfig"]["runner"]["ports"] = [{"containerPort": "http"}]
    with pytest.raises(InvalidObjectError):
        Catalog.from_objects(objects)
    report = lint_objects(objects, validate=kube_problems)
    invalid = [f for f in report.findings if f.problem.startswith("invalid: ")]
    assert [(f.subject, f.problem) for f in invalid] == [
        (
            "ClusterServingRuntime profile-7",
            "invalid: spec.engineConfig.runner.ports[0].containerPort: "
            "cannot decode string into Go value of type int32",
        )
    ]
    assert report.renders > 0


def test_lint_does_not_mutate_the_catalog() -> None:
    objects = generate(10, 45)
    before = copy.deepcopy(objects)
    catalog = Catalog.from_objects(objects)
    dumped = [m.model_dump() for m in catalog.models.values()]
    lint(catalog, validate=kube_problems)
    assert objects == before
    assert [m.model_dump() for m in catalog.models.values()] == dumped


def test_cli_exit_codes_and_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clean = tmp_path / "clean.yaml"
    clean.write_text(yaml.safe_dump_all(generate(200, 200)))
    assert main(["lint", "--objects", str(clean)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "lint: 100/" in captured.err  # progress shows above a few hundred renders
    assert captured.err.rstrip().endswith("0 problems, 0 warnings")

    objects = generate(20, 60)
    objects.append(_runtime("lonely", engineConfig={"runner": {"name": "c", "image": "i"}}))
    objects[-1]["metadata"]["annotations"] = {"ome.io/inherit-from": "ghost"}
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump_all(objects))
    assert main(["lint", "--objects", str(broken)]) == 1
    out = capsys.readouterr().out
    assert (
        f'ClusterServingRuntime lonely [-] ({broken}): ParentNotFound: inherit-from parent "ghost" not found'
        in out
    )
