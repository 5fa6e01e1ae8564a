"""The CI recipe (docs/ci-recipe.md) and the pre-commit hook (.pre-commit-hooks.yaml), run for real on a
git repository of two commits made here: the recipe's diff step as the workflow writes it, and the hook
through pre-commit itself."""

from __future__ import annotations

import copy
import os
import re
import stat
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.example_objects import MODEL, REPLICA, ROOT, RUNTIME

Obj = dict[str, Any]


def _git(repo: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=CI", "-c", "user.email=ci@example.com", *argv],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def _write(path: Path, *objs: Obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))


def _hook() -> Obj:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert isinstance(hook, dict)
    return hook


@pytest.fixture
def shim(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``omerender`` and ``omereconcile`` commands are this checkout's, as
    ``pip install 'omerender[tools,reconcile]'`` would make them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command, module in (("omerender", "omerender.cli"), ("omereconcile", "omereconcile")):
        script = bin_dir / command
        script.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m {module} "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    return env


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: the catalog (no status, as in git) and a replica; the second commit adds a runtime that
    scores higher for the replica's model, so the replica switches runtime and rolls."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    model = copy.deepcopy(MODEL)
    del model["status"]
    _write(repo / "catalog" / "models.yaml", model)
    _write(repo / "catalog" / "runtimes.yaml", RUNTIME)
    _write(repo / "replicas" / "llama-pool.yaml", REPLICA)
    hook = {k: v for k, v in _hook().items() if k != "additional_dependencies"}
    local = {**hook, "language": "system", "args": ["--objects", "catalog/"]}
    (repo / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}, sort_keys=False)
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "catalog and replica")
    newer = copy.deepcopy(RUNTIME)
    newer["metadata"]["name"] = "vllm-llama-3-2-1b-instruct-v2"
    newer["spec"]["supportedModelFormats"][0]["priority"] = 2
    newer["spec"]["engineConfig"]["runner"]["image"] = "docker.io/vllm/vllm-openai:v0.10.0"
    _write(repo / "catalog" / "runtimes.yaml", RUNTIME, newer)
    _git(repo, "commit", "-q", "-am", "a newer vLLM runtime")
    return repo


def _run(repo: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False)


def _block(marker: str) -> Any:
    """The YAML block of docs/ci-recipe.md after the ``<!-- marker: ... -->`` comment, parsed."""
    text = (ROOT / "docs" / "ci-recipe.md").read_text()
    block = re.search(rf"<!-- {marker}: [^\n]*-->\n```yaml\n(.*?)```", text, re.DOTALL)
    assert block is not None
    return yaml.safe_load(block.group(1))


def _workflow() -> Obj:
    workflow: Obj = _block("ci-recipe")
    return workflow


def _run_step(
    repo: Path, env: dict[str, str], base_ref: str, step: Obj
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run a workflow step as GitHub's runner does (bash -eo pipefail), in the repository: its result and
    what it wrote to ``$GITHUB_OUTPUT``."""
    outputs = repo.parent / "github-output"
    outputs.write_text("")
    step_env = {**env, **step["env"], "BASE_REF": base_ref, "GITHUB_OUTPUT": str(outputs)}
    script = repo.parent / f"{step['id']}.sh"
    script.write_text(step["run"])
    done = _run(repo, step_env, "bash", "--noprofile", "--norc", "-eo", "pipefail", str(script))
    return done, outputs.read_text()


def _step(name: str) -> Obj:
    (step,) = [s for s in _workflow()["jobs"]["diff"]["steps"] if s.get("id") == name]
    return dict(step)


def _diff_step(
    repo: Path, env: dict[str, str], base_ref: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """The workflow's diff step."""
    return _run_step(repo, env, base_ref, _step("diff"))


def _lint_step(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The workflow's lint step (a plain command: run by bash as the runner does)."""
    step = {"id": "lint", "env": {}, **_step("lint")}
    done, _ = _run_step(repo, env, "HEAD", step)
    return done


def test_the_diff_step_reports_the_pull_requests_roll(repo: Path, shim: dict[str, str]) -> None:
    # On GitHub the base is origin/<base branch>; here, the commit before the pull request's.
    done, outputs = _diff_step(repo, shim, "HEAD~1")
    # A roll is reported and passes: the job's exit code is 0, the output counts it for the label.
    assert done.returncode == 0, done.stderr
    assert outputs == "rolls=1\n"
    comment = (repo / "omerender-diff.md").read_text()
    assert comment.startswith("### omerender diff: 1 replica: 1 rolls\n")
    assert "**Passes the check:** 1 rolls; none of it fails the check." in comment
    assert "| rolls | 1 | no |" in comment  # the table says what the job does
    assert "| blocks | 0 | yes: the job fails |" in comment
    assert (
        "- treating every model as Ready (--assume-models-ready): 1 of 1 model was not Ready (before and after)"
        in comment
    )
    assert (
        "rolls: runtime ClusterServingRuntime vllm-llama-3-2-1b-instruct -> "
        "ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2"
    ) in comment
    # Why the selection moved, in the selector's words: a new runtime that scores higher.
    assert "- cause: ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2 added" in comment
    assert "- why: ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2 is new" in comment
    assert (
        "- why: ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2 scores higher: 30 against 15" in comment
    )
    # The forecast is in the same comment: the rolling group's row, and the roll drawn as Mermaid
    # (a gantt of the groups, a chart of the serving floor and extra GPUs); the SVG file draws it too.
    forecast = comment[comment.index("### Rollout forecast") :]
    assert forecast.count("```mermaid") == 2
    assert "| 1. rolls: runtime ClusterServingRuntime vllm-l…" in forecast  # numbered as its group
    svg = ET.fromstring((repo / "omerender-roll.svg").read_text())
    assert any(w.startswith("1. rolls: runtime ClusterServingRuntime") for w in svg.itertext())
    # The step reads the base from git and leaves the checkout as it was, but for the comment, the
    # full report and the picture.
    assert _git(repo, "status", "--porcelain") == (
        "?? omerender-diff.json\n?? omerender-diff.md\n?? omerender-roll.svg\n"
    )


def _blocking_commit(repo: Path) -> None:
    """Both runtimes that served the model go; left: one of the model's architecture built for larger
    models, and one of another architecture whose size range fits."""
    larger = copy.deepcopy(RUNTIME)
    larger["metadata"]["name"] = "vllm-llama-70b"
    larger["spec"]["modelSizeRange"] = {"min": "30B", "max": "80B"}
    other = copy.deepcopy(RUNTIME)
    other["metadata"]["name"] = "vllm-aaa-qwen-1b"  # first by name: a name order would put it first
    other["spec"]["supportedModelFormats"][0]["modelArchitecture"] = "Qwen2ForCausalLM"
    _write(repo / "catalog" / "runtimes.yaml", larger, other)
    _git(repo, "commit", "-q", "-am", "runtimes replaced")


def test_the_diff_step_fails_the_job_on_a_block_and_says_why(repo: Path, shim: dict[str, str]) -> None:
    _blocking_commit(repo)
    done, outputs = _diff_step(repo, shim, "HEAD~1")
    assert done.returncode == 1, done.stderr
    assert outputs == "rolls=0\n"
    comment = (repo / "omerender-diff.md").read_text()
    assert "**Fails the check:** 1 blocks." in comment
    assert "| blocks | 1 | yes: the job fails |" in comment
    assert "#### 1. blocks RuntimeSelectionFailed — 1 replica — fails the check" in comment
    assert "- why: served before by ClusterServingRuntime vllm-llama-3-2-1b-instruct-v2" in comment
    assert (
        "- why: RuntimeSelectionFailed (model ClusterBaseModel llama-3-2-1b-instruct): no runtime found "
        "to support model safetensors with format safetensors" in comment
    )
    closest = next(line for line in comment.splitlines() if line.startswith("- why: closest runtimes: "))
    # The runtime of the model's architecture comes first, although the other's size fits.
    assert closest.index("vllm-llama-70b") < closest.index("vllm-aaa-qwen-1b"), closest


def test_the_lint_step_fails_the_job_on_lint_errors(repo: Path, shim: dict[str, str]) -> None:
    done = _lint_step(repo, shim)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = copy.deepcopy(RUNTIME)
    broken["spec"]["engineConfig"]["runner"]["volumeMounts"] = [{"name": "nowhere", "mountPath": "/x"}]
    _write(repo / "catalog" / "runtimes.yaml", broken)
    done = _lint_step(repo, shim)
    assert done.returncode == 1, done.stdout + done.stderr


def test_a_folder_missing_on_the_base_branch_reads_as_empty(repo: Path, shim: dict[str, str]) -> None:
    (repo / "replicas" / "llama-pool.yaml").rename(repo / "llama-pool.yaml")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "no replicas yet")
    (repo / "llama-pool.yaml").rename(repo / "replicas" / "llama-pool.yaml")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "replicas/ added")
    done, outputs = _diff_step(repo, shim, "HEAD~1")
    assert done.returncode == 0, done.stderr
    assert outputs == "rolls=0\n"
    comment = (repo / "omerender-diff.md").read_text()
    assert comment.startswith("### omerender diff: 1 replica: 1 new\n")
    assert "- replicas/ is not on the base branch: read as empty there" in comment


def test_the_diff_step_on_an_unchanged_branch(repo: Path, shim: dict[str, str]) -> None:
    done, outputs = _diff_step(repo, shim, "HEAD")
    assert done.returncode == 0, done.stderr
    assert outputs == "rolls=0\n"
    assert "**Passes the check:** no replica changes its verdict." in (repo / "omerender-diff.md").read_text()


def test_the_diff_step_fails_on_bad_input(repo: Path, shim: dict[str, str]) -> None:
    (repo / "catalog" / "runtimes.yaml").write_text("kind: [unclosed\n")
    _git(repo, "commit", "-q", "-am", "broken")
    done, _ = _diff_step(repo, shim, "HEAD~1")
    assert done.returncode == 2
    assert "catalog/runtimes.yaml: not valid YAML" in done.stderr


def test_the_manifest_is_one_pre_commit_reads_and_installs_the_tools_extra() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib")
    (hook,) = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert (hook["id"], hook["language"], hook["pass_filenames"]) == ("omerender-lint", "python", False)
    tools = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["tools"]
    assert sorted(hook["additional_dependencies"]) == sorted(tools)


def test_pre_commit_runs_the_hook(repo: Path, shim: dict[str, str]) -> None:
    pytest.importorskip("pre_commit")

    def pre_commit() -> subprocess.CompletedProcess[str]:
        return _run(repo, shim, sys.executable, "-m", "pre_commit", "run", "omerender-lint", "--all-files")

    done = pre_commit()
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"omerender lint\.+Passed", done.stdout)
    # A runtime whose container mounts a volume it does not declare: OME renders pods the API refuses.
    broken = copy.deepcopy(RUNTIME)
    broken["spec"]["engineConfig"]["runner"]["volumeMounts"] = [{"name": "nowhere", "mountPath": "/x"}]
    _write(repo / "catalog" / "runtimes.yaml", broken)
    _git(repo, "add", "-A")
    done = pre_commit()
    assert done.returncode == 1
    assert re.search(r"omerender lint\.+Failed", done.stdout)
    assert "ClusterServingRuntime vllm-llama-3-2-1b-instruct [engine] (catalog/runtimes.yaml)" in done.stdout
