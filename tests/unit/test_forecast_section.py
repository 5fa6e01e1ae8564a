"""The forecast by group, drawn (omereconcile.forecast.section): hand-computed cases on the example
catalog's image bump (60 s start-up, 3 s shutdown: one surge-and-drain step lasts 60–65 s), and the
diagram rendered by Mermaid's own tool when scripts/mermaid-cli.sh has installed it."""

from __future__ import annotations

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from omereconcile.forecast import forecast_section, group_costs, timeline
from omereconcile.timeline import to_svg
from tests.unit.test_forecast import STEP, _cli, _replica, _run, _strategy

A = ("llama-demo", "a")  # 3 Instances, maxSurge 1: +1 GPU, three steps
B = ("llama-demo", "b")  # 2 Instances, maxSurge 2: +2 GPUs, one step
C = ("llama-demo", "c")  # 2 Instances, maxSurge 1
GROUPS = [("router image bump", [A, B]), ("engine args", [C, ("llama-demo", "gone")])]


def _reps() -> list[dict[str, object]]:
    return [
        _replica("a", 3, lifecycle=_strategy("SurgeThenDrain", maxSurge=1)),
        _replica("b", 2, lifecycle=_strategy("SurgeThenDrain", maxSurge=2)),
        _replica("c", 2, lifecycle=_strategy("SurgeThenDrain", maxSurge=1)),
    ]


def test_a_group_adds_up_its_replicas_where_their_rolls_overlap() -> None:
    bump, args = group_costs(_run(*_reps()), GROUPS)
    assert bump.peak_extra_gpus == 3  # a's +1 and b's +2 at the same time
    assert (bump.floor, bump.instances) == (5, 5)  # surge first: nothing leaves rotation early
    assert 3 * STEP[0] <= bump.duration <= 3 * STEP[1]  # a's three steps
    assert [r.name for r in args.replicas] == ["c"]
    assert args.not_forecast == 1
    assert args.peak_extra_gpus == 1
    assert 2 * STEP[0] <= args.duration <= 2 * STEP[1]


def test_one_at_a_time_a_group_peaks_at_its_largest_replica_and_lasts_their_sum() -> None:
    bump, args = group_costs(_run(*_reps(), concurrent=False), GROUPS)
    assert bump.peak_extra_gpus == 2  # b's surge alone: a is done by then
    assert 4 * STEP[0] <= bump.duration <= 4 * STEP[1]
    assert args.start >= bump.end - 1.0  # c starts once b is done


def test_the_section_has_a_row_per_group_the_diagram_and_the_replicas_no_group_names() -> None:
    md = forecast_section(_run(*_reps()), GROUPS[:1])
    assert "| router image bump | 2 replicas, 5 Instances | +3 | 5/5 (100%) | ≈ 3m1" in md
    assert "| other rolling replicas | 1 replica, 2 Instances | +1 | 2/2 (100%) |" in md
    assert md.count("```mermaid") == 2
    assert "section router image bump (2)" in md
    assert "section other rolling replicas (1)" in md
    assert "<details><summary>3 rolling replicas, one by one</summary>" in md


def test_a_held_group_is_drawn_as_held() -> None:
    held = _replica("a", 3, lifecycle=_strategy("SurgeThenDrain", maxSurge=1, partition=2))
    tl = timeline(_run(held), [("staged", [A])])
    assert [s.kind for s in tl.steps] == ["held"]
    assert ":crit, s0," in forecast_section(_run(held), [("staged", [A])])


def _mermaid_blocks(md: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", md, flags=re.S)


def test_mermaid_cli_renders_the_diagram_showing_the_groups(tmp_path: Path) -> None:
    if not os.environ.get("MMDC"):  # scripts/test.sh sets it: never skipped there, never silently
        pytest.fail('MMDC is unset: run eval "$(bash scripts/mermaid-cli.sh | tail -n 1)" first')
    md = forecast_section(_run(*_reps()), GROUPS)
    (tmp_path / "comment.md").write_text(md)
    cmd = [os.environ["MMDC"], "-i", str(tmp_path / "comment.md"), "-o", str(tmp_path / "out.md"), "-q"]
    if os.environ.get("MMDC_PUPPETEER_CONFIG"):
        cmd += ["-p", os.environ["MMDC_PUPPETEER_CONFIG"]]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr
    gantt, chart = (tmp_path / "out-1.svg").read_text(), (tmp_path / "out-2.svg").read_text()
    words = " ".join(ET.fromstring(gantt).itertext())
    assert "router image bump (2)" in words
    assert "engine args (1)" in words
    assert "Error" not in words  # Mermaid draws a parse error as a picture, it does not fail
    assert "extra GPUs; serving Instances of 7: 7 throughout" in " ".join(ET.fromstring(chart).itertext())


def test_the_svg_file_shows_the_groups() -> None:
    svg = to_svg(timeline(_run(*_reps()), GROUPS))
    words = list(ET.fromstring(svg).itertext())
    assert "router image bump (2)" in words
    assert "engine args (1)" in words


def test_the_command_writes_the_comment_with_the_diagram_and_the_svg_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg = tmp_path / "roll.svg"
    code = _cli(
        tmp_path,
        "-o",
        "markdown",
        "--svg",
        str(svg),
        spec={"lifecycle": _strategy("SurgeThenDrain", maxSurge=1)},
    )
    out = capsys.readouterr().out
    assert code == 1, out  # it rolls: --fail-on's default
    assert "| rolls with " in out
    assert out.count("```mermaid") == 2
    words = list(ET.fromstring(svg.read_text()).itertext())
    assert any(w.startswith("rolls with ") and w.endswith("(1)") for w in words)


def _sixteen(objs: list[dict[str, object]]) -> None:
    for obj in objs:
        if obj["kind"] == "ClusterServingRuntime":
            runner = obj["spec"]["engineConfig"]["runner"]  # type: ignore[index]
            runner["resources"] = {"limits": {"nvidia.com/gpu": "16"}}


def test_a_pod_larger_than_every_node_is_named_and_the_forecast_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tests.unit.test_forecast as tf

    real = tf._catalogs

    def big() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        before, after = real()
        _sixteen(before)
        _sixteen(after)
        return before, after

    monkeypatch.setattr(tf, "_catalogs", big)
    f = _run(_replica("a", 2), capacity=(8, 8))
    assert len(f.pending) == 1
    assert f.pending[0].startswith("llama-demo/a: its ")
    assert "pod asks for 16 GPUs and the largest node has 8: Pending before and after" in f.pending[0]
    assert f.replicas == ()


def test_three_new_16_gpu_replicas_on_a_full_cluster_are_reported_as_not_fitting() -> None:
    import copy as _copy

    from omereconcile.forecast import forecast
    from omerender.catalog import Catalog
    from omerender.diff import diff_replicas
    from omerender.models import InferenceReplica, parse_object
    from tests.unit.test_forecast import _catalogs

    objs, _ = _catalogs()
    _sixteen(objs)
    old = {}
    for n in range(2):  # two 16-GPU Instances fill the two 16-GPU nodes
        rep = parse_object(InferenceReplica, _replica(f"old-{n}", 1))
        old[(rep.namespace, rep.metadata.name)] = rep
    new = dict(old)
    for n in range(3):
        rep = parse_object(InferenceReplica, _replica(f"new-{n}", 1))
        new[(rep.namespace, rep.metadata.name)] = rep
    cat = Catalog.from_objects(objs)
    diffs = diff_replicas(old, new, cat, Catalog.from_objects(_copy.deepcopy(objs)))
    f = forecast(diffs, old, new, objs, startup_seconds=60.0, capacity=(16, 16))
    assert [u.split(":")[0] for u in f.unplaced] == [
        "llama-demo/new-0",
        "llama-demo/new-1",
        "llama-demo/new-2",
    ]
    assert f.short_of_capacity
    assert f.pending == ()


def test_progress_is_reported_while_the_roll_is_simulated() -> None:
    from omereconcile.forecast import forecast
    from omerender.catalog import Catalog
    from omerender.diff import diff_replicas
    from omerender.models import InferenceReplica, parse_object
    from tests.unit.test_forecast import _catalogs

    before_objs, after_objs = _catalogs()
    rep = parse_object(InferenceReplica, _replica("a", 3))
    reps = {(rep.namespace, rep.metadata.name): rep}
    diffs = diff_replicas(reps, reps, Catalog.from_objects(before_objs), Catalog.from_objects(after_objs))
    seen: list[str] = []
    forecast(diffs, reps, reps, after_objs, startup_seconds=60.0, progress=seen.append)
    assert seen[0] == "bringing 1 simulations of 1 replicas up before the change"
    assert any(m.startswith("0/1 replicas rolled, ") for m in seen[1:])
