"""``omerender lint`` output a person can read and a machine can parse, ``--assume-models-ready`` on
lint and render, and lint agreeing with render on what it reports."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.catalog_gen import generate
from omerender.catalog import Catalog
from omerender.cli import main
from omerender.errors import BlockReason, RenderBlocked
from omerender.lint import CLOSEST, lint
from omerender.models import InferenceReplica, parse_object
from omerender.preview import preview
from omerender.readiness import assume_models_ready

Obj = dict[str, Any]
RUNTIMES = 100  # 40 profiles and mid-levels, 60 serving runtimes (three per family)
GIT_MODELS = 30  # the first models carry no status, as catalog files in git do
FORMATLESS = 5  # of those, the first have no format yet: OME reads it from the downloaded weights

NO_RUNTIME = "family0-model-40-3b"  # architecture nobody serves
TOO_BIG = "family1-model-41-3b"  # no runtime of its size
SIZELESS = "family2-model-42-3b"  # no size: the runtime is picked by name among its family's
READY_FORMATLESS = "family3-model-43-3b"  # Ready, yet no format: OME will never fill it in
# Each model that selects a runtime renders its engine and its runtime's router; each serving runtime
# both pieces alone. Not rendered: the models without a format and the three that cannot select.
RENDERS = 2 * (60 - FORMATLESS - 3) + 2 * (RUNTIMES - 40)


def _catalog() -> tuple[list[Obj], list[Obj]]:
    objects = generate(60, RUNTIMES)
    models = [o for o in objects if o["kind"] == "ClusterBaseModel"]
    for model in models[:GIT_MODELS]:
        del model["status"]
    for model in models[:FORMATLESS]:
        del model["spec"]["modelFormat"]  # as in git: OME reads it from the weights
    named = {m["metadata"]["name"]: m for m in models}
    named[NO_RUNTIME]["spec"]["modelArchitecture"] = "NobodyServesThis"
    named[TOO_BIG]["spec"]["modelParameterSize"] = "900B"
    del named[SIZELESS]["spec"]["modelParameterSize"]
    del named[READY_FORMATLESS]["spec"]["modelFormat"]
    return models, [o for o in objects if o["kind"] != "ClusterBaseModel"]


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    models, runtimes = _catalog()
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "models.yaml").write_text(yaml.safe_dump_all(models, sort_keys=False))
    (tmp_path / "catalog" / "runtimes.yaml").write_text(yaml.safe_dump_all(runtimes, sort_keys=False))
    return tmp_path / "catalog"


def _lint(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_text_output_groups_findings_by_problem_with_object_and_file(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    code, out, err = _lint(capsys, "--objects", str(catalog_dir), "--assume-models-ready")
    assert code == 1
    assert err.endswith(f"lint: {RENDERS} renders, 3 problems, 2 warnings\n")
    models = catalog_dir / "models.yaml"
    headings = [line for line in out.splitlines() if re.match(r"(error|warning) ", line)]
    assert headings == [
        "error NoRuntimeFound: models no runtime can be selected for (2)",
        "error ModelFormatRequired: Ready models without a format name (1)",
        "warning NameTieBreak: selections decided by the runtime's name alone (1)",
        "warning RuntimeForAnotherSize: selected runtimes built for another model size (1)",
    ]
    findings = [line for line in out.splitlines() if line.startswith("  ")]
    assert [line.split(" [")[0] for line in findings] == [
        f"  ClusterBaseModel {NO_RUNTIME}",
        f"  ClusterBaseModel {TOO_BIG}",
        f"  ClusterBaseModel {READY_FORMATLESS}",
        f"  ClusterBaseModel {SIZELESS}",
        f"  ClusterBaseModel {SIZELESS}",
    ]
    assert all(line.split("]", 1)[1].startswith(f" ({models}): ") for line in findings)
    # The table closes the output.
    assert out.splitlines()[-5:] == [
        "problem                severity  count",
        "NoRuntimeFound         error         2",
        "ModelFormatRequired    error         1",
        "NameTieBreak           warning       1",
        "RuntimeForAnotherSize  warning       1",
    ]


def test_models_without_a_format_are_one_note_not_an_error_each(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    _, out, _ = _lint(capsys, "--objects", str(catalog_dir), "--assume-models-ready")
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: treating every model as Ready (--assume-models-ready): {GIT_MODELS} of 60 models were not Ready",
        f"note: {FORMATLESS} models without a format name: the runtime is unknown until OME has downloaded "
        "the weights and read the format from them (family0-model-0-1b, family1-model-1-1b, "
        "family2-model-2-1b and 2 more)",
    ]
    assert "family0-model-0-1b [" not in out  # no finding for any of them


def test_without_the_flag_lint_agrees_with_render_on_models_that_are_not_ready(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    code, out, err = _lint(capsys, "--objects", str(catalog_dir))
    assert code == 1  # the Ready models still have problems
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {GIT_MODELS} models not Ready, not linted: every replica of one blocks ModelNotFound until "
        "it is (family0-model-0-1b, family0-model-20-2b, family1-model-1-1b and 27 more); "
        "--assume-models-ready lints them as Ready"
    ]
    assert err.endswith(f"lint: {RENDERS - 2 * (GIT_MODELS - FORMATLESS)} renders, 3 problems, 2 warnings\n")


def test_a_model_no_runtime_serves_names_the_count_and_the_closest_few(catalog_dir: Path) -> None:
    models, runtimes = _catalog()
    report = lint(Catalog.from_objects([*models, *runtimes]), assume_ready=True)
    by_name = {f.name: f for f in report.findings if f.code == "NoRuntimeFound"}
    big = by_name[TOO_BIG]
    assert big.checked == RUNTIMES
    # The closest runtimes are its own family's, passed over for the size alone.
    assert len(big.closest) == CLOSEST
    assert all(c.name.startswith("srt-family1-") for c in big.closest)
    assert all(
        re.fullmatch(
            r"model size 900B is outside supported range \[.*\] for runtime srt-family1-.*", c.reason
        )
        for c in big.closest
    )
    assert big.problem.endswith(f"and {RUNTIMES - CLOSEST} more")
    assert (
        f"none of the {RUNTIMES} runtimes checked qualifies (0 namespace-scoped, {RUNTIMES} cluster-scoped)"
        in (big.problem)
    )
    # One line a person reads, whatever the catalog's size.
    assert len(big.problem) < 800
    stranger = by_name[NO_RUNTIME]
    assert all(
        "architecture mismatch (model=NobodyServesThis, runtime=" in c.reason for c in stranger.closest
    )


def test_json_output_for_machines(capsys: pytest.CaptureFixture[str], catalog_dir: Path) -> None:
    code, out, _ = _lint(capsys, "--objects", str(catalog_dir), "--assume-models-ready", "-o", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["assumeModelsReady"] is True
    assert (doc["renders"], doc["errors"], doc["warnings"]) == (RENDERS, 3, 2)
    assert doc["summary"] == {
        "NoRuntimeFound": 2,
        "ModelFormatRequired": 1,
        "NameTieBreak": 1,
        "RuntimeForAnotherSize": 1,
    }
    assert len(doc["notes"]) == 2
    big = next(f for f in doc["findings"] if f["name"] == TOO_BIG)
    assert big["file"] == str(catalog_dir / "models.yaml")
    assert (big["kind"], big["component"], big["severity"], big["checked"]) == (
        "ClusterBaseModel",
        "engine",
        "error",
        RUNTIMES,
    )
    assert [set(c) for c in big["closest"]] == [{"kind", "name", "reason"}] * CLOSEST


def test_warnings_alone_do_not_fail_lint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    models, runtimes = _catalog()
    keep = [
        m for m in models[GIT_MODELS:] if m["metadata"]["name"] not in (NO_RUNTIME, TOO_BIG, READY_FORMATLESS)
    ]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump_all([*keep, *runtimes]))
    code, out, err = _lint(capsys, "--objects", str(path))
    assert code == 0
    assert "warning NameTieBreak" in out
    assert err.endswith("0 problems, 2 warnings\n")


def _render(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, catalog: Path, model: str, *flags: str
) -> Any:
    replica = tmp_path / f"{model}.yaml"
    replica.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceReplica",
                # A uid, as a live replica has: without one render adds its empty-uid notice.
                "metadata": {
                    "name": "pool",
                    "namespace": "demo",
                    "uid": "5e0c7a1d-2b3c-4d5e-8f90-a1b2c3d4e5f6",
                },
                "spec": {"component": "engine", "modelRef": {"name": model}},
            }
        )
    )
    code = main(["render", str(replica), "--objects", str(catalog), *flags])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_lint_agrees_with_render(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path, tmp_path: Path
) -> None:
    _, out, _ = _lint(capsys, "--objects", str(catalog_dir), "--assume-models-ready")
    tie = next(line for line in out.splitlines() if "on the name alone" in line)
    picked = re.search(r"selects ClusterServingRuntime (\S+) over", tie)
    assert picked is not None
    code, rendered, _ = _render(capsys, tmp_path, catalog_dir, SIZELESS, "--assume-models-ready")
    assert code == 0
    assert f"(ClusterServingRuntime {picked.group(1)} + ClusterBaseModel {SIZELESS})" in rendered
    code, _, err = _render(capsys, tmp_path, catalog_dir, TOO_BIG, "--assume-models-ready")
    assert code == 1
    assert err.startswith("render: treating every model as Ready")
    assert "RuntimeSelectionFailed: no runtime found to support model safetensors with format" in err
    assert f"[model: ClusterBaseModel {TOO_BIG}" in err


def test_render_with_and_without_the_flag(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path, tmp_path: Path
) -> None:
    statusless = "family5-model-5-1b"
    code, out, err = _render(capsys, tmp_path, catalog_dir, statusless)
    assert (code, out) == (1, "")
    assert err == f'ModelNotFound: ClusterBaseModel "{statusless}" is not ready (state: unknown)\n'
    code, out, err = _render(capsys, tmp_path, catalog_dir, statusless, "--assume-models-ready")
    assert code == 0
    note = f"treating every model as Ready (--assume-models-ready): {GIT_MODELS} of 60 models were not Ready"
    assert out.startswith(f"# {note}\n---\n")
    assert err == f"render: {note}\n"
    code, _, err = _render(capsys, tmp_path, catalog_dir, "family0-model-0-1b", "--assume-models-ready")
    assert code == 1
    assert err.splitlines()[-1].endswith(
        "(assumed Ready, the model has no format until OME has downloaded its weights)"
    )


def test_assume_models_ready_readies_sharded_models_and_changes_nothing_else() -> None:
    models, runtimes = _catalog()
    sharded = models[7]  # status-less
    sharded["spec"]["distribution"] = "Sharded"
    sharded["metadata"]["generation"] = 4
    disabled = models[8]
    disabled["spec"]["disabled"] = True
    catalog = Catalog.from_objects([*models, *runtimes])
    assumed = assume_models_ready(catalog)
    replica = parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "pool", "namespace": "demo", "uid": "u"},
            "spec": {"component": "engine", "modelRef": {"name": sharded["metadata"]["name"]}},
        },
    )
    with pytest.raises(RenderBlocked) as blocked:
        preview(replica, catalog)
    assert blocked.value.reason is BlockReason.MODEL_NOT_FOUND
    assert preview(replica, assumed.catalog).revision.name.startswith("pool-engine-")
    key = ("ClusterBaseModel", "", disabled["metadata"]["name"])
    assert assumed.catalog.models[key].is_disabled
    assert not catalog.models[key].is_ready  # the catalog given is untouched
    assert assumed.catalog.runtimes is catalog.runtimes
    assert len(assumed.assumed) == GIT_MODELS


@pytest.mark.parametrize("text", ["", "kind: ConfigMap\nmetadata: {name: x}\n"])
def test_a_path_with_no_catalog_objects_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "nothing.yaml"
    path.write_text(text)
    assert main(["lint", "--objects", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"omerender lint: {path}: no models or serving runtimes found; give the catalog's files or folders\n"
    )


def test_one_problem_of_many_objects_is_said_once_then_the_objects() -> None:
    from omerender.cli.lint_cmd import to_text
    from omerender.lint import Finding, LintReport

    lws = "reads LWS_LEADER_ADDRESS, which OMENative pods do not carry; use OME_LEADER_ADDRESS"

    def finding(name: str, problem: str = lws) -> Finding:
        return Finding(f"ClusterServingRuntime {name}", "engine", problem, "LwsVariableUnset", "warning")

    text = to_text(LintReport(3, (finding("a"), finding("b"), finding("c", "reads LWS_GROUP_SIZE"))))
    assert text.count(lws) == 1
    assert (
        "  2 objects: "
        + lws
        + "\n    ClusterServingRuntime a [engine]\n    ClusterServingRuntime b [engine]\n"
        in text
    )
    assert "  ClusterServingRuntime c [engine]: reads LWS_GROUP_SIZE\n" in text
    alone = to_text(LintReport(2, (finding("a"), finding("b"))))
    assert "  all 2: " + lws + "\n" in alone
