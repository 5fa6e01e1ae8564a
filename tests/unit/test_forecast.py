"""The rollout forecast on hand-computed cases: the example catalog's runtime image bumped, so every
Instance of the example replica rolls; one GPU per Instance; a 60 s start-up.

Each roll step of one Instance takes the start-up plus the drain: the old pod leaves rotation on the
pass after the new one serves, is deleted a pass later and is gone after the simulated 3 s grace, so
one step lasts between 60 and 65 s. (The CLI test keeps the default 30 s shutdown.)
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from omereconcile.cli import main as omereconcile_main
from omereconcile.forecast import Forecast, ForecastInputError, forecast, to_json, to_markdown, to_text
from omereconcile.forecast.command import EXIT_SHORT_OF_CAPACITY
from omerender.catalog import Catalog
from omerender.cli.io import load_objects
from omerender.diff import diff_replicas
from omerender.models import InferenceReplica, parse_object

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 60.0
STEP = (STARTUP, STARTUP + 5.0)  # one Instance's surge-and-drain, in seconds


def _catalogs() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    before = load_objects([ROOT / "examples" / "catalog"])
    after = copy.deepcopy(before)
    for obj in after:
        if obj["kind"] == "ClusterServingRuntime":
            obj["spec"]["engineConfig"]["runner"]["image"] = "docker.io/vllm/vllm-openai:v0.9.1"
    return before, after


def _replica(name: str = "llama-pool", replicas: int = 3, **spec: Any) -> dict[str, Any]:
    obj = load_objects([ROOT / "examples" / "llama-pool.yaml"])[0]
    obj["metadata"]["name"] = name
    obj["spec"].update(replicas=replicas, **spec)
    return obj


def _strategy(kind: str, **rolling: Any) -> dict[str, Any]:
    return {"updateStrategy": {"type": kind, "rollingUpdate": rolling}}


def _run(*objs: dict[str, Any], after_spec: dict[str, Any] | None = None, **kw: Any) -> Forecast:
    before_objs, after_objs = _catalogs()
    before = {}
    after = {}
    for obj in objs:
        rep = parse_object(InferenceReplica, obj)
        key = (rep.namespace, rep.metadata.name)
        before[key] = rep
        changed = copy.deepcopy(obj)
        changed["spec"].update(after_spec or {})
        after[key] = parse_object(InferenceReplica, changed)
    diffs = diff_replicas(before, after, Catalog.from_objects(before_objs), Catalog.from_objects(after_objs))
    return forecast(diffs, before, after, after_objs, startup_seconds=STARTUP, shutdown_seconds=3.0, **kw)


def _within(value: float, steps: int) -> bool:
    return steps * STEP[0] <= value <= steps * STEP[1]


def test_surge_then_drain_max_surge_1_replaces_one_instance_at_a_time() -> None:
    f = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1)))
    (r,) = f.replicas
    assert (r.replaced, r.steps, r.peak_extra_pods, r.peak_extra_gpus, r.floor) == (3, 3, 1, 1, 3)
    assert r.completes
    assert r.holds == ()
    assert _within(r.duration, 3)
    assert f.totals.duration == r.duration


def test_surge_then_drain_max_surge_2_surges_two_then_one() -> None:
    (r,) = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=2))).replicas
    assert (r.replaced, r.steps, r.peak_extra_pods, r.peak_extra_gpus, r.floor) == (3, 2, 2, 2, 3)
    assert _within(r.duration, 2)


def test_recreate_pod_max_unavailable_1_dips_one_instance_and_adds_no_pod() -> None:
    (r,) = _run(_replica(lifecycle=_strategy("RecreatePod", maxUnavailable=1))).replicas
    assert (r.replaced, r.steps, r.peak_extra_pods, r.peak_extra_gpus, r.floor) == (3, 3, 0, 0, 2)
    assert _within(r.duration, 3)


def test_partition_stops_the_roll_at_the_partition_and_names_it() -> None:
    (r,) = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1, partition=2))).replicas
    assert (r.replaced, r.steps, r.completes) == (1, 1, False)
    assert [h.gate for h in r.holds] == ["Staged"]
    assert "partition 2" in r.holds[0].reason


def test_pause_starts_nothing_and_names_the_pause() -> None:
    rep = _replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1))
    (r,) = _run(rep, after_spec={"paused": True}).replicas
    assert (r.replaced, r.steps, r.peak_extra_pods, r.completes) == (0, 0, 0, False)
    assert [h.gate for h in r.holds] == ["Paused"]


def test_zero_budget_holds_on_the_budget_as_the_planner_names_it() -> None:
    (r,) = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=0))).replicas
    assert (r.replaced, r.steps, r.peak_extra_pods, r.completes) == (0, 0, 0, False)
    assert [(h.gate, h.reason) for h in r.holds] == [
        ("Budget", "per-Component surge budget 0 exhausted (would become 1)")
    ]


def test_insufficient_capacity_holds_unschedulable_and_cannot_complete() -> None:
    f = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1)), capacity=(3,))
    (r,) = f.replicas
    assert (r.replaced, r.completes) == (0, False)
    assert [h.gate for h in r.holds] == ["Unschedulable"]
    assert f.short_of_capacity
    assert f.totals.gpus_in_use_at_peak == 3  # the surge pod waits unplaced
    assert "1 replica will hold Unschedulable (cannot complete)" in to_text(f)


def test_one_spare_gpu_is_enough_for_max_surge_1() -> None:
    f = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1)), capacity=(2, 2))
    assert f.totals.completes
    assert not f.short_of_capacity
    assert f.totals.gpus_in_use_at_peak == 4
    assert "left at peak: 0 GPUs" in to_text(f)


def test_short_capacity_that_frees_up_as_old_pods_go_slows_the_roll_but_completes() -> None:
    # Uncapped surge: all three Instances surge at once, but one node of 4 GPUs has room for one.
    f = _run(_replica(), capacity=(4,))
    (r,) = f.replicas
    assert (r.replaced, r.completes, r.peak_extra_pods) == (3, True, 3)
    assert {h.gate for h in r.holds} == {"Unschedulable"}
    assert not f.short_of_capacity
    assert f.totals.gpus_in_use_at_peak == 4
    # The first surge runs alone; each drained Instance frees the GPU the next one waits for.
    assert _within(r.duration, 3)
    assert "1 replica will wait Unschedulable for room, then complete" in to_text(f)


def test_one_at_a_time_goes_on_past_a_held_replica() -> None:
    held = _replica("a", lifecycle=_strategy("SurgeThenDrain", maxSurge=0))
    rolls = _replica("b", lifecycle=_strategy("SurgeThenDrain", maxSurge=1))
    a, b = _run(held, rolls, concurrent=False).replicas
    assert (a.completes, [h.gate for h in a.holds]) == (False, ["Budget"])
    assert (b.completes, b.replaced, b.steps) == (True, 3, 3)


def test_replicas_that_do_not_fit_before_the_change_are_an_input_error() -> None:
    with pytest.raises(ForecastInputError, match="does not come up on the capacity given"):
        _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=1)), capacity=(2,))


def test_concurrent_rolls_add_up_at_the_peak_and_sequential_ones_add_up_in_time() -> None:
    reps = [_replica(n, lifecycle=_strategy("SurgeThenDrain", maxSurge=1)) for n in ("a", "b")]
    both = _run(*reps)
    one_by_one = _run(*reps, concurrent=False)
    assert (both.totals.peak_extra_pods, one_by_one.totals.peak_extra_pods) == (2, 1)
    assert _within(both.totals.duration, 3)
    assert _within(one_by_one.totals.duration, 6)
    assert (both.totals.instances, both.totals.floor) == (6, 6)


def test_unchanged_replicas_hold_capacity_that_the_roll_cannot_use() -> None:
    rolling = _replica("a", lifecycle=_strategy("SurgeThenDrain", maxSurge=1))
    before_objs, after_objs = _catalogs()
    steady = _replica("steady", replicas=2, runtimeRef={"name": "vllm-llama-3-2-1b-instruct"})
    # The steady replica does not roll when its runtime changes only for others: give it the after
    # catalog on both sides.
    reps = {
        ("llama-demo", n): parse_object(InferenceReplica, o) for n, o in (("a", rolling), ("steady", steady))
    }
    diffs = diff_replicas(
        {k: v for k, v in reps.items() if k[1] == "a"},
        {k: v for k, v in reps.items() if k[1] == "a"},
        Catalog.from_objects(before_objs),
        Catalog.from_objects(after_objs),
    ) + diff_replicas(
        {("llama-demo", "steady"): reps[("llama-demo", "steady")]},
        {("llama-demo", "steady"): reps[("llama-demo", "steady")]},
        Catalog.from_objects(after_objs),
        Catalog.from_objects(after_objs),
    )
    f = forecast(diffs, reps, reps, after_objs, startup_seconds=STARTUP, shutdown_seconds=3.0, capacity=(5,))
    assert (f.unchanged, f.reserved_gpus) == (1, 2)
    assert f.short_of_capacity  # 3 + 2 of 5 GPUs in use: no room for the surge


def test_outputs_carry_the_same_figures() -> None:
    f = _run(_replica(lifecycle=_strategy("SurgeThenDrain", maxSurge=2)), capacity=(4, 4))
    data = to_json(f)
    assert data["total"]["peakExtraPods"] == 2
    assert data["replicas"][0]["steps"] == 2
    assert data["capacity"] == {"nodes": 2, "gpus": 8, "heldByUnchangedReplicas": 0}
    md = to_markdown(f)
    assert "| llama-demo/llama-pool | 3/3 | 2 | 3 (at 0s) | +2 | +2 |" in md
    assert md.startswith("### Rollout forecast")


def _cli(tmp_path: Path, *extra: str, spec: dict[str, Any] | None = None) -> int:
    before_objs, after_objs = _catalogs()
    (tmp_path / "before.yaml").write_text(json.dumps({"kind": "List", "items": before_objs}))
    (tmp_path / "after.yaml").write_text(json.dumps({"kind": "List", "items": after_objs}))
    (tmp_path / "ir.yaml").write_text(json.dumps(_replica(**(spec or {}))))
    return omereconcile_main(
        [
            # The replica on both sides, each path behind its own flag: the form every version of
            # diff's flags reads.
            "forecast",
            "--before",
            str(tmp_path / "before.yaml"),
            "--before",
            str(tmp_path / "ir.yaml"),
            "--after",
            str(tmp_path / "after.yaml"),
            "--after",
            str(tmp_path / "ir.yaml"),
            "--startup",
            "1m",
            *extra,
        ]
    )


def test_cli_exit_codes_follow_diff_plus_one_for_capacity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    surge = {"lifecycle": _strategy("SurgeThenDrain", maxSurge=1)}
    assert _cli(tmp_path, "-o", "json", spec=surge) == 1
    assert json.loads(capsys.readouterr().out)["total"]["durationSeconds"] > 0
    assert _cli(tmp_path, "--capacity", "1x3", spec=surge) == EXIT_SHORT_OF_CAPACITY
    assert "Unschedulable" in capsys.readouterr().out
    assert _cli(tmp_path, "--capacity", "four", spec=surge) == 2
    assert "--capacity: 'four' is not NODESxGPUS" in capsys.readouterr().err
    assert _cli(tmp_path, "--startup", "soon", spec=surge) == 2
    assert "--startup: 'soon' is not a duration" in capsys.readouterr().err


def test_cli_fail_on_takes_diffs_words_and_semantics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--fail-on`` as ``omerender diff`` reads it: exit 1 only for a verdict it names (default
    rolls,blocks), ``none`` never; 4 (short of capacity) whatever it says; a word that is no verdict
    is bad usage (2) before any file is read."""
    surge = {"lifecycle": _strategy("SurgeThenDrain", maxSurge=1)}
    assert _cli(tmp_path, "--fail-on", "rolls", spec=surge) == 1
    assert _cli(tmp_path, "--fail-on", "blocks,new", spec=surge) == 0
    capsys.readouterr()
    assert _cli(tmp_path, "--fail-on", "none", "-o", "json", spec=surge) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["failOn"], doc["fails"], doc["total"]["replicas"]) == ([], False, 1)
    assert _cli(tmp_path, "-o", "json", spec=surge) == 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["failOn"], doc["fails"]) == (["rolls", "blocks"], True)
    short = ("--capacity", "1x3", "--fail-on", "none")
    assert _cli(tmp_path, *short, spec=surge) == EXIT_SHORT_OF_CAPACITY
    capsys.readouterr()
    assert _cli(tmp_path, "--fail-on", "rolls,bogus", spec=surge) == 2
    assert capsys.readouterr().err.startswith(
        "omereconcile forecast: --fail-on rolls,bogus: bogus: not a verdict; give a comma-separated list of "
    )
    # A replica the change adds is a verdict the default does not fail on (it did exit 1 before
    # --fail-on: every change did); naming it fails.
    before_objs, _ = _catalogs()
    (tmp_path / "before.yaml").write_text(json.dumps({"kind": "List", "items": before_objs}))
    (tmp_path / "after.yaml").write_text(json.dumps({"kind": "List", "items": [*before_objs, _replica()]}))
    args = ["forecast", "--before", str(tmp_path / "before.yaml"), "--after", str(tmp_path / "after.yaml")]
    assert omereconcile_main(args) == 0
    assert omereconcile_main([*args, "--fail-on", "new"]) == 1


def test_cli_nothing_rolls_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before_objs, _ = _catalogs()
    (tmp_path / "c.yaml").write_text(json.dumps({"kind": "List", "items": [*before_objs, _replica()]}))
    args = ["forecast", "--before", str(tmp_path / "c.yaml"), "--after", str(tmp_path / "c.yaml")]
    assert omereconcile_main(args) == 0
    assert "rolls no replica" in capsys.readouterr().out


def test_cli_warnings_name_omereconcile_not_omerender(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog object defined twice is warned of by the forecast under its own program's name."""
    before_objs, _ = _catalogs()
    (tmp_path / "c.yaml").write_text(json.dumps({"kind": "List", "items": [*before_objs, _replica()]}))
    runtime = next(o for o in before_objs if o["kind"] == "ClusterServingRuntime")
    (tmp_path / "z-again.yaml").write_text(json.dumps(runtime))
    args = ["forecast", "--before", str(tmp_path), "--after", str(tmp_path)]
    assert omereconcile_main(args) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if ": warning: " in line]
    assert warnings
    assert all(line.startswith("omereconcile forecast: warning: ClusterServingRuntime ") for line in warnings)


def _runners_replica(
    image: str, runners: list[tuple[str, int]], gpus: int = 0, **spec: Any
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "engine", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    template = {"spec": {"containers": [container]}}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "gang", "namespace": "ns"},
        "spec": {
            "component": "engine",
            "replicas": 2,
            "runners": [{"name": n, "size": size, "template": template} for n, size in runners],
            **spec,
        },
    }


def _gang_forecast(before: list[tuple[str, int]], after: list[tuple[str, int]], **kw: Any) -> Forecast:
    surge = {"lifecycle": _strategy("SurgeThenDrain", maxSurge=1)}
    old = parse_object(InferenceReplica, _runners_replica("engine:v1", before, gpus=8, **surge))
    new = parse_object(InferenceReplica, _runners_replica("engine:v2", after, gpus=8, **surge))
    key = ("ns", "gang")
    diffs = diff_replicas({key: old}, {key: new}, Catalog.from_objects([]), Catalog.from_objects([]))
    assert [d.status.value for d in diffs] == ["rolls"]
    return forecast(diffs, {key: old}, {key: new}, [], startup_seconds=STARTUP, shutdown_seconds=3.0, **kw)


@pytest.mark.parametrize("workers", [1, 3])
def test_gangs_roll_as_whole_gangs_one_replacement_gang_at_a_time(workers: int) -> None:
    """Two gangs of a leader and ``workers`` workers at 8 GPUs a pod, SurgeThenDrain with ``maxSurge: 1``
    (a budget that counts whole Instances): each step brings up a whole replacement gang at a new index, so the peak is one
    gang's pods and GPUs, and the roll takes two steps."""
    shape = [("leader", 1), ("worker", workers)]
    f = _gang_forecast(shape, shape)
    (r,) = f.replicas
    gang = 1 + workers
    assert (r.instances, r.replaced, r.steps) == (2, 2, 2)
    assert (r.peak_extra_pods, r.peak_extra_gpus, r.gpus_per_instance) == (gang, 8 * gang, 8 * gang)
    assert r.floor == 2  # a source gang serves until its replacement does
    assert r.completes
    # Each step: the start-up, then the hand-over (source pods drained and gone after the 3 s grace,
    # then its PodGroup, then the promote), a few passes more than a single pod's.
    assert r.duration is not None
    assert 2 * STARTUP <= r.duration <= 2 * (STARTUP + 10.0)
    assert f.not_forecast == ()


def test_a_gang_that_cannot_be_placed_whole_holds_unschedulable() -> None:
    """Four 8-GPU nodes hold the two running gangs of two 8-GPU pods; a replacement gang needs two
    more nodes at once, so the roll holds as the planner names it and the change cannot complete."""
    shape = [("leader", 1), ("worker", 1)]
    f = _gang_forecast(shape, shape, capacity=(8, 8, 8, 8))
    (r,) = f.replicas
    assert not r.completes
    assert "Unschedulable" in [h.gate for h in r.holds]
    assert r.floor == 2
    assert f.short_of_capacity
    # With two more nodes the replacement gang fits, one at a time.
    assert _gang_forecast(shape, shape, capacity=(8,) * 6).replicas[0].completes


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([("default", 1)], [("leader", 1), ("worker", 1)]),  # single-pod Instances become gangs
        ([("leader", 1), ("worker", 1)], [("leader", 1), ("worker", 2)]),  # the gang's size changes
    ],
)
def test_other_multi_pod_shapes_are_listed_not_guessed(
    before: list[tuple[str, int]], after: list[tuple[str, int]]
) -> None:
    f = _gang_forecast(before, after)
    assert f.replicas == ()
    (n,) = f.not_forecast
    assert n.key == "ns/gang"
    assert n.why.startswith("rolls, multi-pod Instances other than one leader and a fixed number of workers")
    assert f.changed
    assert "ns/gang: not forecast (rolls, multi-pod Instances" in to_text(f)


def test_a_single_pod_runners_replica_is_forecast_without_a_catalog() -> None:
    old = parse_object(InferenceReplica, _runners_replica("engine:v1", [("default", 1)]))
    new = parse_object(InferenceReplica, _runners_replica("engine:v2", [("default", 1)]))
    key = ("ns", "gang")
    diffs = diff_replicas({key: old}, {key: new}, Catalog.from_objects([]), Catalog.from_objects([]))
    f = forecast(diffs, {key: old}, {key: new}, [], startup_seconds=STARTUP, shutdown_seconds=3.0)
    (r,) = f.replicas
    assert (r.replaced, r.instances, r.gpus_per_instance, r.peak_extra_gpus) == (2, 2, 0, 0)
    assert r.completes


def test_operator_settings_from_the_config_map_reach_the_planner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A readiness deadline shorter than the start-up: every replacement misses it.
    config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "ome"},
        "data": {"lifecycle": json.dumps({"instanceReadyTimeout": "30s"})},
    }
    (tmp_path / "cm.yaml").write_text(json.dumps(config))
    # maxSurge left uncapped: with a cap, the failed replacement's Terminating pod holds the one surge
    # slot between attempts (Go's ExtraPodSurgeInFlight) and that Budget hold is what the forecast
    # reports (tests/sim/test_admission_newest.py pins it); this test is about the ConfigMap.
    surge = {"lifecycle": _strategy("SurgeThenDrain")}
    assert _cli(tmp_path, "-o", "json", "--after", str(tmp_path / "cm.yaml"), spec=surge) == 1
    (r,) = json.loads(capsys.readouterr().out)["replicas"]
    assert (r["completes"], r["replaced"]) == (False, 0)
    # No updateRetry in that ConfigMap, and a missed deadline is not the revision's fault for certain:
    # nothing holds it, every attempt fails and is retried at once, so the roll never completes and the
    # forecast says so in the planner's RolloutStalled words (within its simulated-time horizon).
    assert [h["gate"] for h in r["holds"]] == ["RolloutStalled"]
    assert "Instance(s) failing rollout to llama-pool-engine-" in r["holds"][0]["reason"]
    # The deadline records what the replacement showed: running, never ready (evidence.ContainersNotReady).
    assert r["holds"][0]["reason"].endswith("(ContainersNotReady x3)")  # all three surge at once


def test_cli_reads_live_sizes_and_node_capacity_from_kubectl_dumps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    live = _replica(replicas=5)  # the autoscaler scaled it to 5; the file says 3
    (tmp_path / "irs.yaml").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [live]}))
    nodes = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "kind": "Node",
                "metadata": {"name": f"n{i}"},
                "status": {"allocatable": {"nvidia.com/gpu": "3"}},
            }
            for i in range(2)
        ],
    }
    (tmp_path / "nodes.yaml").write_text(json.dumps(nodes))
    surge = {"lifecycle": _strategy("SurgeThenDrain", maxSurge=1)}
    code = _cli(
        tmp_path,
        "--replicas-from",
        str(tmp_path / "irs.yaml"),
        "--nodes-from",
        str(tmp_path / "nodes.yaml"),
        "-o",
        "markdown",
        spec=surge,
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert "rolls 1 replica / 5 Instances" in out
    assert "capacity 6 GPUs (2 nodes of 3), left at peak: 0 GPUs" in out
    assert "| llama-demo/llama-pool | 5/5 | 5 |" in out
