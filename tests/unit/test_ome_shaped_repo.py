"""The pull-request job of ``docs/ci-recipe.md``, end to end, on every commit of an OME-shaped catalog
repository (``tests/unit/ome_shaped_repo.py``: 200 runtimes, 200 models of which 80% carry no format,
96-GPU gangs, Jinja in args, duplicate names, kustomizations, markdown, CRD patch lists).

Each commit is checked out as a pull request's head and the workflow's diff step runs as GitHub's
runner runs it, against the commit before; the test asserts each commit's verdicts (from the
``--report`` JSON), the step's ``changed`` output (the exit status) and that every markdown comment
posts (at most 65,536 characters, no line over 500). ``OMERENDER_REPO_SIZES=1`` prints the sizes.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import main as main_diff
from tests.unit.ome_shaped_repo import GANG_ARCHS, NAMESPACE, build, model_name, runtime_name

ROOT = Path(__file__).resolve().parents[2]
COMMENT_LIMIT = 65_536  # what a GitHub pull-request comment holds
LINE_LIMIT = 500


@dataclass(frozen=True)
class Job:
    step: str
    changed: bool  # the step's output: exit 1, some replica rolls or blocks
    markdown: str
    report: dict[str, Any]
    stderr: str

    def verdicts(self, *, changed_only: bool = True) -> dict[str, str]:
        return {r["name"]: r["status"] for r in self.report["replicas"] if r["changed"] or not changed_only}

    def replica(self, name: str) -> dict[str, Any]:
        (found,) = [r for r in self.report["replicas"] if r["name"] == name]
        return dict(found)


def _diff_step() -> dict[str, Any]:
    text = (ROOT / "docs" / "ci-recipe.md").read_text()
    block = re.search(r"<!-- ci-recipe: [^\n]*-->\n```yaml\n(.*?)```", text, re.DOTALL)
    assert block is not None
    (step,) = [s for s in yaml.safe_load(block.group(1))["jobs"]["diff"]["steps"] if s.get("id") == "diff"]
    return dict(step)


def _run(repo: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str, str]]]:
    """The repository and its history, (commit, step name) per commit."""
    root = tmp_path_factory.mktemp("ome-shaped") / "repo"
    return root, build(root)


@pytest.fixture(scope="module")
def jobs(repo: tuple[Path, list[tuple[str, str]]]) -> dict[str, Job]:
    """The diff step on every commit after the first, by step name."""
    root, history = repo
    tmp = root.parent
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for command, module in (("omerender", "omerender.cli"), ("omereconcile", "omereconcile")):
        shim = bin_dir / command
        shim.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m {module} "$@"\n')
        shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    step = _diff_step()
    script = tmp / "step.sh"
    script.write_text(step["run"])
    outputs = tmp / "github-output"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    # The fleet's cluster: 100 nodes of 8 GPUs hold the repository's replicas with room to roll.
    env.update({**step["env"], "CATALOG": "config", "REPLICAS": "replicas", "GITHUB_OUTPUT": str(outputs)})
    env["CAPACITY"] = "100x8"
    out: dict[str, Job] = {}
    for (base, _), (head, name) in itertools.pairwise(history):
        _run(root, env, "git", "checkout", "-q", head).check_returncode()
        outputs.write_text("")
        done = _run(
            root, {**env, "BASE_REF": base}, "bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)
        )
        # The job fails on a block (exit 1) and passes a roll (counted in the output, for the label).
        assert done.returncode in (0, 1), f"{name}: {done.stderr}"
        rolls = int(outputs.read_text().removeprefix("rolls=").strip())
        changed = bool(rolls) or done.returncode == 1
        markdown = (root / "omerender-diff.md").read_text()
        report = json.loads((root / "omerender-diff.json").read_text())
        out[name] = Job(name, changed, markdown, report, done.stderr)
    if os.environ.get("OMERENDER_REPO_SIZES"):
        for job in out.values():
            print(f"{job.step}: {len(job.markdown)} characters, exit {int(job.changed)}")
    return out


def test_the_history_has_the_shape_the_issue_names(jobs: dict[str, Job]) -> None:
    assert list(jobs) == [
        "image bump",
        "new model",
        "new runtime that changes selection",
        "removed format",
        "docs only",
        "inserted argument in the Jinja runtime",
        "gang image bump",
        "kustomization and CRD patch lists",
        "removed runtimes",
        "every runtime",
    ]
    first = jobs["image bump"]
    assert len(first.report["replicas"]) == 201
    # 160 of 200 models carry no format: their replicas are unknown until downloaded, on both sides.
    assert first.report["summary"]["unknown"] == 160
    # The layout the reader skips, said once: patch lists (no kind) and kustomizations.
    assert "without kind or apiVersion (patch lists and the like" in first.stderr
    assert "Kustomization" in first.stderr
    # The runtime kept in two files: a warning, not an error.
    assert f"ClusterServingRuntime {runtime_name('vllm', 10, 'medium')} is defined in" in first.stderr


def test_every_comment_posts(jobs: dict[str, Job]) -> None:
    for job in jobs.values():
        assert len(job.markdown) <= COMMENT_LIMIT, job.step
        assert max(map(len, job.markdown.splitlines())) <= LINE_LIMIT, job.step
        assert job.markdown.startswith("### omerender diff: "), job.step
        assert job.markdown.splitlines()[4] == "| Verdict | Replicas | Fails the check |", job.step


def test_an_image_bump_rolls_the_replicas_of_those_runtimes(jobs: dict[str, Job]) -> None:
    job = jobs["image bump"]
    assert job.changed
    assert job.verdicts() == {model_name(i): "rolls" for i in range(5)}
    assert job.report["summary"] == {
        "rolls": 5,
        "blocks": 0,
        "unblocks": 0,
        "new": 0,
        "removed": 0,
        "unknown": 160,
        "still-blocks": 1,  # the replica of a model still to come
        "unchanged": 35,
    }
    lines = job.markdown.splitlines()
    assert lines[0] == (
        "### omerender diff: 201 replicas: 5 rolls, 160 unknown until downloaded, 1 still blocks, 35 unchanged"
    )
    # One group: the change shown once (and once in the catalog's changes), its runtimes named.
    assert "#### 1. rolls: containers[ome-container].image — 5 replicas" in job.markdown
    bump = '"docker.io/lmsysorg/sglang:v0.4.6" -> "docker.io/lmsysorg/sglang:v0.4.7"'
    assert job.markdown.count(bump) == 2
    assert f"- **5 ClusterServingRuntimes changed: {runtime_name('srt', 3, 'small')}, " in job.markdown
    assert "- cause: 5 ClusterServingRuntimes changed: " in job.markdown


def test_a_new_model_is_no_false_alarm(jobs: dict[str, Job]) -> None:
    job = jobs["new model"]
    assert not job.changed  # nothing rolls or blocks: exit 0
    assert job.verdicts() == {"llama-3b-new": "new", "qwen2-3b-new": "new", "planned": "unknown"}
    assert job.replica("planned")["headline"] == "unknown until downloaded (was ModelNotFound)"
    assert job.replica("qwen2-3b-new")["headline"] == "new, unknown until downloaded"
    assert "blocks" not in job.report["replicas"][0]["headline"]
    assert job.report["summary"]["blocks"] == 0


def test_a_new_runtime_that_outranks_one_rolls_its_replicas_onto_it(jobs: dict[str, Job]) -> None:
    job = jobs["new runtime that changes selection"]
    assert job.changed
    assert job.verdicts() == {model_name(5): "rolls"}
    old, new = runtime_name("srt", 5, "small"), runtime_name("srt", 5, "small") + "-v2"
    assert (
        f"runtime changed from ClusterServingRuntime {old} to ClusterServingRuntime {new}"
        in job.replica(model_name(5))["notes"]
    )


def test_a_removed_format_makes_a_running_replica_unknown(jobs: dict[str, Job]) -> None:
    job = jobs["removed format"]
    assert not job.changed
    assert job.verdicts() == {model_name(6): "unknown"}
    assert job.replica(model_name(6))["headline"].startswith(
        f"unknown until downloaded (was {model_name(6)}-engine-"
    )


@pytest.mark.parametrize("step", ["docs only", "kustomization and CRD patch lists"])
def test_a_change_outside_the_catalog_objects_changes_nothing(jobs: dict[str, Job], step: str) -> None:
    job = jobs[step]
    assert not job.changed
    assert job.verdicts() == {}
    assert "**Passes the check:** no replica changes its verdict." in job.markdown
    assert "#### What changed in the catalog" not in job.markdown


def test_an_inserted_argument_is_one_line(jobs: dict[str, Job]) -> None:
    job = jobs["inserted argument in the Jinja runtime"]
    assert job.changed
    name = model_name(7)
    assert job.verdicts() == {name: "rolls"}
    (change,) = job.replica(name)["changes"]
    assert (change["path"], change["change"], change["after"]) == (
        "containers[ome-container].args[2]",
        "added",
        "--enable-metrics",
    )
    assert 'containers[ome-container].args[2]: added "--enable-metrics"' in job.markdown


def test_a_gang_runtime_bump_rolls_the_gangs(jobs: dict[str, Job]) -> None:
    job = jobs["gang image bump"]
    assert job.changed
    gangs = [model_name(180 + a) for a in range(GANG_ARCHS)]
    assert job.verdicts() == dict.fromkeys(gangs, "rolls")
    changes = {c["where"] for c in job.replica(gangs[0])["changes"]}
    assert changes == {"runner leader", "runner worker"}


def test_removed_runtimes_block_what_they_served(jobs: dict[str, Job]) -> None:
    job = jobs["removed runtimes"]
    assert job.changed
    assert job.verdicts() == {model_name(8): "blocks"}
    (reason,) = [
        line for line in job.markdown.splitlines() if line.startswith("- why: RuntimeSelectionFailed")
    ]
    assert f"(model ClusterBaseModel {model_name(8)}): no runtime found" in reason
    assert len(reason) <= LINE_LIMIT
    served = f"- why: served before by ClusterServingRuntime {runtime_name('srt', 8, 'small')}"
    assert served in job.markdown


def test_a_change_to_every_runtime_is_cut_to_a_comment_that_posts(jobs: dict[str, Job]) -> None:
    job = jobs["every runtime"]
    assert job.changed
    rolling = [n for n, v in job.verdicts().items() if v == "rolls"]
    assert len(rolling) == job.report["summary"]["rolls"] > 30
    # Every replica changes alike but for its runtime's image: one group per image, the change once.
    assert len(job.markdown) < 60_000
    # A gang group names its runners once: ``rolls (leader, worker): ...``.
    groups = re.findall(r"^#### \d+\. rolls(?: \([a-z, ]+\))?: .* — (\d+) replicas?", job.markdown, re.M)
    assert sum(map(int, groups)) == len(rolling)
    # The thirty variables are one line, so what tells the groups apart (the image each came from)
    # is in view under each heading, and each heading names the variables once.
    fences = re.findall(
        r"^#### \d+\. rolls(?: \([a-z, ]+\))?: ([^\n]*) — \d+ replicas?\n.*?```text\n(.*?)```",
        job.markdown,
        re.M | re.S,
    )
    assert len(fences) == len(groups)
    images = set()
    for heading, body in fences:
        assert "env (30 added)" in heading
        assert "SGL_TUNING_01" not in heading
        assert "env: 30 entries added: SGL_TUNING_00, SGL_TUNING_01, SGL_TUNING_02, …, SGL_TUNING_29" in body
        images.add(tuple(re.findall(r"image: (.*)", body)))
    assert len(images) == len(groups)
    # The report the line points to holds every replica and every change.
    assert all(len(job.replica(n)["changes"]) >= 31 for n in rolling)
    assert job.report["replicas"][0]["namespace"] == NAMESPACE


def test_a_kustomization_listing_a_subset_is_another_catalog(
    repo: tuple[Path, list[tuple[str, str]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """config/runtimes/kustomization.yaml lists 48 of the runtime files (49 by the last commit): a
    cluster deployed with ``kubectl apply -k`` holds those, and the diff read with ``-kb``/``-ka`` says
    what that cluster's replicas do, where a recursive read renders against every runtime."""
    root, history = repo
    subprocess.run(["git", "checkout", "-q", history[-1][0]], cwd=root, check=True, timeout=60)
    monkeypatch.chdir(root)

    def summary(*catalog: str) -> dict[str, int]:
        """The verdict counts of the last commit against itself, the catalog read as ``catalog`` says
        (``-k DIR`` or a path) on both sides."""
        argv = ["diff", "--assume-models-ready", "-o", "json"]
        for side in ("before", "after"):
            for path in (*catalog, "replicas"):
                flag, _, name = path.rpartition(" ")
                argv += [f"--{side}-kustomize" if flag == "-k" else f"--{side}", name]
        assert main_diff(argv) == 0
        counts: dict[str, int] = json.loads(capsys.readouterr().out)["summary"]
        return counts

    listed = summary("-k config/runtimes", "config/models")
    everything = summary("config")
    assert (everything["unchanged"], everything["still-blocks"]) == (39, 1)
    # The 70B models' runtimes and two of the three gang runtimes are not listed: their replicas
    # cannot render on such a cluster.
    assert (listed["unchanged"], listed["still-blocks"]) == (20, 20)
