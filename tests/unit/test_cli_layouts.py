"""Real repository layouts on the command line: path flags repeat (and the old space-separated form
works), ``-`` reads standard input, ``-k DIR`` reads a kustomization, folders read manifests only,
what no command reads is skipped with one note, and no input path is ever dropped unseen."""

from __future__ import annotations

import io
import shutil
import stat
import sys
from pathlib import Path

import pytest
import yaml

from omerender.cli import main

ROOT = Path(__file__).resolve().parents[2]
REPLICA = ROOT / "examples" / "llama-pool.yaml"
CATALOG = ROOT / "examples" / "catalog"
MODEL = CATALOG / "llama-3-2-1b-instruct.yaml"
RUNTIME = CATALOG / "vllm-llama-3-2-1b-instruct.yaml"


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def revision(out: str) -> str:
    docs = [d for d in yaml.safe_load_all(out) if d]
    return next(d["metadata"]["name"] for d in docs if d["kind"] == "ControllerRevision")


@pytest.fixture
def rendered(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run(capsys, "render", REPLICA, "--objects", CATALOG)
    assert code == 0, err
    return revision(out)


def test_a_repeated_objects_flag_keeps_every_path(capsys: pytest.CaptureFixture[str], rendered: str) -> None:
    code, out, err = run(capsys, "render", REPLICA, "--objects", MODEL, "--objects", RUNTIME)
    assert code == 0, err
    assert revision(out) == rendered
    # The old form: several paths after one flag.
    code, out, err = run(capsys, "render", REPLICA, "--objects", MODEL, RUNTIME)
    assert code == 0, err
    assert revision(out) == rendered


def test_lint_and_validate_keep_every_repeated_path(capsys: pytest.CaptureFixture[str]) -> None:
    def renders(*argv: str | Path) -> str:
        code, _, err = run(capsys, "lint", "--no-schema", *argv)
        assert code == 0, err
        return next(line for line in err.splitlines() if line.startswith("lint: "))

    alone = renders("--objects", RUNTIME)
    both = renders("--objects", MODEL, RUNTIME)
    assert both != alone  # the model's render joins the runtime's own
    assert renders("--objects", MODEL, "--objects", RUNTIME) == both
    code, out, err = run(capsys, "validate", REPLICA, "--objects", MODEL, "--objects", RUNTIME)
    assert code == 0, err
    assert out == "llama-demo/llama-pool: allowed\n"


def test_a_replica_among_the_objects_is_an_error_not_swallowed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "second.yaml"
    other.write_text(REPLICA.read_text().replace("llama-pool", "second"))
    code, _, err = run(capsys, "validate", REPLICA, "--objects", CATALOG, other)
    assert code == 2
    assert f"--objects {other}: holds 1 InferenceReplica, nothing --objects reads" in err
    code, _, err = run(capsys, "render", REPLICA, "--objects", CATALOG, other)
    assert code == 2
    assert f"--objects {other}: holds 1 InferenceReplica" in err
    # lint reads no replica at all: the folder is named as given and the advice is lint's own.
    code, _, err = run(capsys, "lint", str(CATALOG), str(other))
    assert code == 2
    assert f"lint: {other}: holds 1 InferenceReplica, nothing lint reads; lint checks the catalog" in err
    assert "FILE argument" not in err


def test_a_file_without_replicas_among_validates_files_is_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "validate", REPLICA, MODEL, "--objects", CATALOG)
    assert code == 2
    assert f"FILE {MODEL}: holds 1 ClusterBaseModel, nothing FILE reads" in err


def test_dash_reads_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, rendered: str
) -> None:
    stdin(monkeypatch, REPLICA.read_bytes())
    code, out, err = run(capsys, "render", "-", "--objects", CATALOG)
    assert code == 0, err
    assert revision(out) == rendered
    stdin(monkeypatch, MODEL.read_bytes() + b"---\n" + RUNTIME.read_bytes())
    code, out, err = run(capsys, "render", REPLICA, "--objects", "-")
    assert code == 0, err
    assert revision(out) == rendered
    stdin(monkeypatch, REPLICA.read_bytes())
    code, out, err = run(capsys, "validate", "-", "--objects", CATALOG)
    assert code == 0, err
    stdin(monkeypatch, MODEL.read_bytes() + b"---\n" + RUNTIME.read_bytes())
    code, out, err = run(capsys, "lint", "--no-schema", "--objects", "-")
    assert code == 0, err


def test_standard_input_is_read_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin(monkeypatch, REPLICA.read_bytes())
    code, _, err = run(capsys, "render", "-", "--objects", "-")
    assert code == 2
    assert "- (standard input) is given twice" in err


def _real_layout(tmp_path: Path) -> Path:
    """A catalog repository as OME's is laid out: a docs file beside the models, CRD patch lists and
    a kustomization listing a subset of the runtimes."""
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "runtimes").mkdir()
    shutil.copy(MODEL, repo / "models" / MODEL.name)
    shutil.copy(RUNTIME, repo / "runtimes" / RUNTIME.name)
    unlisted = yaml.safe_load(RUNTIME.read_text())
    unlisted["metadata"]["name"] = "unlisted-runtime"
    (repo / "runtimes" / "unlisted.yaml").write_text(yaml.safe_dump(unlisted))
    (repo / "models" / "SUPPORTED_MODELS.md").write_text("# Models\n\n| name | size |\n|---|---|\n")
    patches = repo / "config" / "crd" / "patches"
    patches.mkdir(parents=True)
    (patches / "cainjection.yaml").write_text("- op: add\n  path: /metadata/annotations\n  value: {}\n")
    (repo / "config" / "crd" / "kustomization.yaml").write_text(
        yaml.safe_dump({"resources": [], "patches": [{"path": "patches/cainjection.yaml"}]})
    )
    (repo / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [f"models/{MODEL.name}", f"runtimes/{RUNTIME.name}"],
            }
        )
    )
    return repo


def test_a_real_layout_lints_with_one_note_for_what_was_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    repo = _real_layout(tmp_path)
    code, _, err = run(capsys, "lint", "--no-schema", "--objects", repo)
    assert code in (0, 1), err  # lint's verdict on the catalog, not bad input
    notes = [line for line in err.splitlines() if line.startswith("omerender lint: note: ")]
    assert any(line.startswith("omerender lint: note: skipped 3 documents") for line in notes), err
    assert any(f"read it with -k {repo}" in line for line in notes), err
    assert "SUPPORTED_MODELS" not in err


def _no_tools(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


def test_k_without_kustomize_reads_the_listed_resources_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = _real_layout(tmp_path)
    kustomization = yaml.safe_load((repo / "kustomization.yaml").read_text())
    kustomization["images"] = [{"name": "docker.io/vllm/vllm-openai", "newTag": "v0.10"}]
    (repo / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    _no_tools(monkeypatch, tmp_path)
    code, out, err = run(capsys, "lint", "--no-schema", "-k", repo, "-o", "json")
    assert code in (0, 1), err
    assert "unlisted-runtime" not in out
    assert f"{repo / 'kustomization.yaml'}: read without kustomize" in err
    assert "images not applied" in err


def _fake_tool(tmp_path: Path, name: str, stream: Path) -> Path:
    """A kustomize on PATH whose build prints ``stream`` (and its arguments to a file)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / name
    tool.write_text(f'#!/bin/sh\necho "$@" > {tmp_path / "args"}\nexec {shutil.which("cat")} {stream}\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return bin_dir


def test_k_runs_kustomize_build_when_it_is_on_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rendered: str
) -> None:
    repo = _real_layout(tmp_path)
    stream = tmp_path / "built.yaml"
    stream.write_bytes(MODEL.read_bytes() + b"---\n" + RUNTIME.read_bytes())
    monkeypatch.setenv("PATH", str(_fake_tool(tmp_path, "kustomize", stream)))
    code, out, err = run(capsys, "render", REPLICA, "-k", repo)
    assert code == 0, err
    assert revision(out) == rendered
    assert (tmp_path / "args").read_text().split() == ["build", str(repo)]
    assert "not applied" not in err


def test_k_falls_back_to_kubectl_kustomize(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = _real_layout(tmp_path)
    stream = tmp_path / "built.yaml"
    stream.write_bytes(MODEL.read_bytes() + b"---\n" + RUNTIME.read_bytes())
    monkeypatch.setenv("PATH", str(_fake_tool(tmp_path, "kubectl", stream)))
    code, _, err = run(capsys, "lint", "--no-schema", "-k", repo)
    assert code in (0, 1), err
    assert (tmp_path / "args").read_text().split() == ["kustomize", str(repo)]


def test_a_failing_kustomize_is_bad_input_with_its_message(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = _real_layout(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "kustomize"
    tool.write_text("#!/bin/sh\necho 'Error: accumulating resources: missing.yaml' >&2\nexit 1\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    code, _, err = run(capsys, "lint", "--no-schema", "-k", repo)
    assert code == 2
    assert f"-k {repo}: kustomize build {repo} exited 1: Error: accumulating resources" in err


def test_diff_two_folders_skip_docs_files_with_a_note(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("deepdiff")
    sides: list[Path] = []
    for side in ("a", "b"):
        folder = tmp_path / side
        folder.mkdir()
        for source in (MODEL, RUNTIME, REPLICA):
            shutil.copy(source, folder / source.name)
        (folder / "SUPPORTED_MODELS.md").write_text("| a | b |\n|---|---|\n")
        sides.append(folder)
    code, _, err = run(capsys, "diff", *sides)
    assert code == 0, err
    assert "note: skipped 1 file that are not manifests" in err


def test_diff_reads_kustomizations_on_each_side(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("deepdiff")
    repo = _real_layout(tmp_path)
    _no_tools(monkeypatch, tmp_path)
    code, out, err = run(capsys, "diff", "--before-kustomize", repo, "--after", CATALOG, "-f", REPLICA)
    assert code == 0, err
    assert "unchanged" in out


def test_lint_refuses_a_misspelled_kind_naming_file_and_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    wrong = yaml.safe_load(MODEL.read_text())
    wrong["kind"] = "ClusterBaseModle"
    bad = tmp_path / "model.yaml"
    bad.write_text(yaml.safe_dump(wrong))
    code, _, err = run(capsys, "lint", "--no-schema", "--objects", RUNTIME, bad)
    assert code == 2
    assert (
        f"{bad}: ClusterBaseModle llama-3-2-1b-instruct: kind: 'ClusterBaseModle' is not a kind OME "
        "defines; did you mean ClusterBaseModel?"
    ) in err
