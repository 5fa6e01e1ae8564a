"""The forecast's inputs besides the diff: sizes, capacity, start-up time per runtime."""

from __future__ import annotations

import pytest

from omereconcile.forecast import (
    ForecastInputError,
    capacity_from_nodes,
    parse_capacity,
    parse_duration,
    sizes_from_dump,
)
from omereconcile.forecast.inputs import STARTUP_ANNOTATION, runtime_startup

GPU = "nvidia.com/gpu"


@pytest.mark.parametrize(
    ("text", "seconds"), [("300", 300.0), ("90s", 90.0), ("5m", 300.0), ("1h30m", 5400.0)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "--startup") == seconds


@pytest.mark.parametrize("text", ["soon", "5 min", "-3", "1h30"])
def test_bad_durations_name_the_flag(text: str) -> None:
    with pytest.raises(ForecastInputError, match="--startup"):
        parse_duration(text, "--startup")


def test_capacity_flag() -> None:
    assert parse_capacity("4x8") == (8, 8, 8, 8)
    with pytest.raises(ForecastInputError, match="like 4x8"):
        parse_capacity("0x8")


def test_capacity_from_a_node_dump_counts_schedulable_nodes_with_accelerators() -> None:
    def node(name: str, gpus: str | None, cordoned: bool = False) -> dict[str, object]:
        alloc = {"cpu": "32"} | ({GPU: gpus} if gpus else {})
        return {
            "kind": "Node",
            "metadata": {"name": name},
            "spec": {"unschedulable": cordoned},
            "status": {"allocatable": alloc},
        }

    dump = [
        {
            "kind": "List",
            "items": [node("a", "8"), node("b", "8", cordoned=True), node("c", None), node("d", "4")],
        }
    ]
    assert capacity_from_nodes(dump, [GPU]) == (8, 4)
    with pytest.raises(ForecastInputError, match="kubectl get nodes"):
        capacity_from_nodes([], [GPU])


def test_sizes_from_an_ir_dump_prefer_the_live_spec() -> None:
    def ir(name: str, spec: int | None, status: int | None) -> dict[str, object]:
        return {
            "kind": "InferenceReplica",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {} if spec is None else {"replicas": spec},
            "status": {} if status is None else {"replicas": status},
        }

    dump = [{"kind": "InferenceReplicaList", "items": [ir("a", 5, 4), ir("b", None, 3), ir("c", None, None)]}]
    assert sizes_from_dump(dump) == {("ns", "a"): 5, ("ns", "b"): 3, ("ns", "c"): 1}


def test_startup_annotation_per_runtime_namespaced_first() -> None:
    template = {"metadata": {"annotations": {"ome.io/serving-runtime": "vllm"}}}

    def rt(kind: str, ns: str | None, value: str) -> dict[str, object]:
        meta: dict[str, object] = {"name": "vllm", "annotations": {STARTUP_ANNOTATION: value}}
        if ns:
            meta["namespace"] = ns
        return {"kind": kind, "metadata": meta}

    cluster = rt("ClusterServingRuntime", None, "10m")
    assert runtime_startup(template, "ns", [cluster], 60.0) == 600.0
    assert runtime_startup(template, "ns", [cluster, rt("ServingRuntime", "ns", "2m")], 60.0) == 120.0
    assert runtime_startup(template, "ns", [rt("ServingRuntime", "other", "2m")], 60.0) == 60.0
    with pytest.raises(ForecastInputError, match=STARTUP_ANNOTATION):
        runtime_startup(template, "ns", [rt("ClusterServingRuntime", None, "later")], 60.0)


def test_without_the_tools_extra_the_reconciler_runs_and_forecast_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The reconciler's image installs omerender[reconcile] only: no deepdiff. Import the CLI afresh
    # as it would be there.
    import importlib
    import sys

    for name in list(sys.modules):
        if name == "deepdiff" or name.startswith(
            ("deepdiff.", "omereconcile", "omerender.diff", "omerender.cli")
        ):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "deepdiff", None)
    cli = importlib.import_module("omereconcile.cli")
    assert cli.main(["forecast", "--before", "a", "--after", "b"]) == 2
    assert "pip install 'omerender[tools]'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        cli.main(["run", "--help"])
    assert done.value.code == 0
