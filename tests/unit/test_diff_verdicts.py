"""``omerender diff`` on a catalog kept in git (issue 22): the verdicts without false alarms, ``--fail-on``,
a markdown comment that fits, readable list diffs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import main
from omerender.diff import LINE_LIMIT, Status, parse_fail_on, template_changes
from omerender.render import RenderedRunner
from tests.unit.example_objects import MODEL, RUNTIME

NS = "demo"
Obj = dict[str, Any]


def model(name: str, *, fmt: bool = True) -> Obj:
    out = copy.deepcopy(MODEL)
    del out["status"]  # as in git
    out["metadata"]["name"] = name
    if not fmt:
        del out["spec"]["modelFormat"]  # OME reads it from the weights
    return out


def runtime(name: str, image: str = "docker.io/vllm/vllm-openai:v0.9.0.1", **runner: Any) -> Obj:
    out = copy.deepcopy(RUNTIME)
    out["metadata"]["name"] = name
    out["spec"]["engineConfig"]["runner"]["image"] = image
    out["spec"]["engineConfig"]["runner"].update(runner)
    return out


def replica(name: str, model_name: str) -> Obj:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
        "spec": {"component": "engine", "modelRef": {"name": model_name}},
    }


def write(path: Path, *objs: Obj) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objs, sort_keys=False))
    return str(path)


def diff(capsys: pytest.CaptureFixture[str], before: str, after: str, *argv: str) -> tuple[int, str]:
    code = main(["diff", "--assume-models-ready", "--before", before, "--after", after, *argv])
    return code, capsys.readouterr().out


def verdicts(out: str) -> dict[str, str]:
    doc = json.loads(out)
    return {r["name"]: r["status"] for r in doc["replicas"]}


# -- verdicts -----------------------------------------------------------------------------------------------


def test_a_new_model_without_a_format_is_unknown_not_blocks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The issue's false alarm: a replica that never rendered (ModelNotFound) whose model arrives
    without a format is "unknown until downloaded", and exits 0."""
    rt = runtime("rt")
    before = write(
        tmp_path / "b.yaml", rt, model("m-old"), replica("old", "m-old"), replica("fresh", "m-new")
    )
    after = write(
        tmp_path / "a.yaml",
        rt,
        model("m-old"),
        model("m-new", fmt=False),
        replica("old", "m-old"),
        replica("fresh", "m-new"),
    )
    code, out = diff(capsys, before, after)
    assert code == 0
    assert f"{NS}/fresh: unknown until downloaded (was ModelNotFound)" in out.splitlines()
    assert "blocks" not in out
    code, out = diff(capsys, before, after, "-o", "json")
    assert verdicts(out) == {"fresh": "unknown", "old": "unchanged"}
    assert json.loads(out)["replicas"][0]["after"]["unknownUntilDownloaded"] is True
    code, _ = diff(capsys, before, after, "--fail-on", "unknown")
    assert code == 1


def test_a_replica_that_never_rendered_still_blocks_whatever_the_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Before: no such model. After: the model, with a format no runtime supports.
    odd = model("m-odd")
    odd["spec"]["modelFormat"] = {"name": "gguf", "version": "1"}
    before = write(tmp_path / "b.yaml", runtime("rt"), replica("r", "m-odd"))
    after = write(tmp_path / "a.yaml", runtime("rt"), odd, replica("r", "m-odd"))
    code, out = diff(capsys, before, after, "--show-unchanged")
    assert code == 0
    assert out.splitlines()[-2] == f"{NS}/r: still blocks RuntimeSelectionFailed (was ModelNotFound)"


def test_a_removed_format_makes_a_running_replica_unknown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = write(tmp_path / "b.yaml", runtime("rt"), model("m"), replica("r", "m"))
    after = write(tmp_path / "a.yaml", runtime("rt"), model("m", fmt=False), replica("r", "m"))
    code, out = diff(capsys, before, after)
    assert code == 0
    (head,) = [line for line in out.splitlines() if line.startswith(f"{NS}/r: ")]
    assert head.startswith(f"{NS}/r: unknown until downloaded (was r-engine-")
    # ... and back: the format is given again, the replica renders.
    code, out = diff(capsys, after, before, "-o", "json")
    assert (code, verdicts(out)) == (0, {"r": "unblocks"})
    code, _ = diff(capsys, after, before, "--fail-on", "unblocks,new")
    assert code == 1


def test_fail_on_names_the_verdicts_that_exit_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    before = write(tmp_path / "b.yaml", runtime("rt"), model("m"), replica("r", "m"))
    after = write(tmp_path / "a.yaml", runtime("rt", "vllm:2"), model("m"), replica("r", "m"))
    assert diff(capsys, before, after)[0] == 1  # rolls fails by default
    assert diff(capsys, before, after, "--fail-on", "blocks")[0] == 0
    assert diff(capsys, before, after, "--fail-on", "none")[0] == 0
    assert main(["diff", "--before", before, "--after", after, "--fail-on", "rolls,sometimes"]) == 2
    assert "sometimes: not a verdict" in capsys.readouterr().err
    assert parse_fail_on("rolls, still-blocks") == {Status.ROLLS, Status.STILL_BLOCKS}


# -- a comment that posts ------------------------------------------------------------------------------------


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[str, str]:
    """30 replicas of one runtime that rolls (an image bump and one inserted argument), 10 unknown."""
    models = [model(f"m{i}") for i in range(30)] + [model(f"u{i}", fmt=False) for i in range(10)]
    replicas = [replica(f"r{i:02d}", m["metadata"]["name"]) for i, m in enumerate(models)]
    args = RUNTIME["spec"]["engineConfig"]["runner"]["args"]
    bumped = runtime("rt", "vllm:2", args=[*args[:2], "--enable-prefix-caching", *args[2:]])
    return (
        write(tmp_path / "b.yaml", runtime("rt"), *models, *replicas),
        write(tmp_path / "a.yaml", bumped, *models, *replicas),
    )


def test_markdown_is_cut_to_max_chars_naming_what_was_left_out(
    capsys: pytest.CaptureFixture[str], fleet: tuple[str, str], tmp_path: Path
) -> None:
    report = tmp_path / "full.md"
    code, md = diff(capsys, *fleet, "-o", "markdown", "--max-chars", "6000", "--report", str(report))
    assert code == 1
    assert len(md) <= 6000
    lines = md.splitlines()
    assert lines[0] == "### omerender diff: 40 replicas: 30 rolls, 10 unknown until downloaded"
    # The grouped review (issue 36): the 30 replicas change alike, one group, the change once.
    assert lines[4:8] == [
        "| Verdict | Replicas | Fails the check |",
        "| --- | ---: | --- |",
        "| rolls | 30 | yes: the job fails |",
        "| blocks | 0 | yes: the job fails |",
    ]
    assert md.count("#### 1. rolls: ") == 1
    assert "— 30 replicas — fails the check" in md
    assert max(map(len, lines)) <= LINE_LIMIT
    full = report.read_text()
    assert full.count("<details>") == 40  # the --report file: every replica, unknown ones too, nothing cut
    # Cut to a smaller budget, the comment says what was left out and where the full report is.
    code, md = diff(capsys, *fleet, "-o", "markdown", "--max-chars", "1500", "--report", str(report))
    assert len(md) <= 1500
    assert f"the full report: the file `{report}`" in md
    # The default for markdown keeps a pull-request comment postable (65,536 characters).
    code, md = diff(capsys, *fleet, "-o", "markdown")
    assert "left out" not in md


def test_one_inserted_argument_is_one_line(
    capsys: pytest.CaptureFixture[str], fleet: tuple[str, str]
) -> None:
    _, out = diff(capsys, *fleet)
    lines = out.splitlines()
    at = lines.index(next(line for line in lines if line.startswith(f"{NS}/r00: rolls")))
    assert lines[at + 1 : at + 3] == [
        '  runner default: containers[ome-container].args[2]: added "--enable-prefix-caching"',
        '  runner default: containers[ome-container].image: "docker.io/vllm/vllm-openai:v0.9.0.1" -> "vllm:2"',
    ]
    assert lines[-1] == (
        "note: 10 replicas whose verdict did not change not listed (10 unknown until downloaded); "
        "--show-unchanged lists them"
    )


def test_a_model_no_runtime_serves_is_one_short_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """OME's message names every runtime checked (34 KB for 203 runtimes); the text says it as lint does."""
    others = [runtime(f"other-runtime-with-a-long-name-{i:03d}") for i in range(40)]
    for rt in others:
        rt["spec"]["supportedModelFormats"][0]["modelArchitecture"] = "MistralForCausalLM"
    before = write(tmp_path / "b.yaml", runtime("rt"), *others, model("m"), replica("r", "m"))
    after = write(tmp_path / "a.yaml", *others, model("m"), replica("r", "m"))
    code, out = diff(capsys, before, after)
    assert code == 1
    assert max(map(len, out.splitlines())) <= LINE_LIMIT
    (reason,) = [line for line in out.splitlines() if line.startswith("  RuntimeSelectionFailed: ")]
    assert "none of the 40 runtimes checked qualifies" in reason
    assert reason.endswith(" more")
    assert "closest: ClusterServingRuntime other-runtime-with-a-long-name-000 (" in reason
    code, out = diff(capsys, before, after, "-o", "json")
    message = json.loads(out)["replicas"][0]["after"]["blocked"]["message"]
    assert len(message) > 5_000  # the JSON keeps OME's words whole


# -- list diffs --------------------------------------------------------------------------------------------


def runner(template: Obj) -> RenderedRunner:
    return RenderedRunner(name="default", size=1, template=template)


def test_scalar_lists_align_and_named_lists_match_by_name() -> None:
    def template(args: list[str], claims: list[str], command: list[str]) -> Obj:
        container = {
            "name": "c",
            "args": args,
            "command": command,
            "resources": {"claims": [{"name": n} for n in claims]},
        }
        return {"spec": {"containers": [container]}}

    before = template(["a", "b", "c", "d", "e"], ["gpu-0", "gpu-1"], ["python3", "-m", "x"])
    after = template(["a", "c", "d", "E", "e", "f"], ["gpu-1"], ["python3", "-m", "y"])
    lines = [c.line() for c in template_changes([runner(before)], [runner(after)])]
    assert lines == [
        'runner default: containers[c].args[1]: removed "b"',
        'runner default: containers[c].args[3]: added "E"',
        'runner default: containers[c].args[5]: added "f"',
        'runner default: containers[c].command[2]: "x" -> "y"',
        'runner default: containers[c].resources.claims[gpu-0]: removed {"name": "gpu-0"}',
    ]


def test_many_new_env_vars_are_listed_one_by_one() -> None:
    """deepdiff reports a whole mapping as one change when most of its keys are new; env is keyed, so
    each variable is its own line."""
    env = [{"name": "MODEL_PATH", "value": "/m"}, {"name": "PORT", "value": "8080"}]
    tuning = [{"name": f"TUNING_{k:02d}", "value": str(k)} for k in range(30)]
    before = {"spec": {"containers": [{"name": "c", "env": env}]}}
    after = {"spec": {"containers": [{"name": "c", "env": [*env, *tuning]}]}}
    lines = [c.line() for c in template_changes([runner(before)], [runner(after)])]
    assert len(lines) == 30
    assert (
        lines[0] == 'runner default: containers[c].env[TUNING_00]: added {"name": "TUNING_00", "value": "0"}'
    )
