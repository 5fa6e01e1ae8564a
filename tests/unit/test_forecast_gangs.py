"""Forecast capacity placed pod by pod (issue 22): a gang's pods go on any nodes with room, all or
nothing for the gang, so a gang bigger than one node fits on several; that holds for the gangs that
roll and for those the change leaves running."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from omereconcile.cli import main as omereconcile_main
from omereconcile.forecast import forecast, to_text
from omereconcile.forecast.world import Nodes
from omerender.catalog import Catalog
from omerender.diff import diff_replicas
from omerender.models import InferenceReplica, parse_object
from omerender.readiness import assume_models_ready
from tests.unit.example_objects import MODEL, RUNTIME

STARTUP = 60.0
SURGE = {"lifecycle": {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}}


def runners_replica(
    name: str, image: str, workers: int, *, instances: int = 1, gpus: int = 8
) -> dict[str, Any]:
    """Instances of one pod (``workers=0``) or of a leader and ``workers`` workers, ``gpus`` a pod."""
    container = {"name": "engine", "image": image, "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
    template = {"spec": {"containers": [container]}}
    shape = [("leader", 1), ("worker", workers)] if workers else [("default", 1)]
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "component": "engine",
            "replicas": instances,
            "runners": [{"name": n, "size": size, "template": template} for n, size in shape],
            **SURGE,
        },
    }


def test_a_running_4_pod_gang_is_placed_pod_by_pod_on_8_gpu_nodes() -> None:
    gang = (8, 8, 8, 8)  # a leader and three workers, 8 GPUs each: 32 GPUs, more than a node
    assert Nodes((8,) * 4, (gang,)).unplaced_reserved() == 0
    assert Nodes((8,) * 3, (gang,)).unplaced_reserved() == 1  # all or nothing: 3 of 4 pods is none
    # Two gangs and a single pod on nine nodes: pod by pod, every one finds a node.
    assert Nodes((8,) * 9, (gang, gang, (8,))).unplaced_reserved() == 0
    assert Nodes((8,) * 8, (gang, gang, (8,))).unplaced_reserved() == 1


def test_capacity_100x8_holds_a_catalog_with_a_gang_bigger_than_one_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The gang does not roll (its template is the same on both sides); the single-pod replica does."""
    steady = runners_replica("gang", "engine:v1", workers=3, instances=2)
    for side, image in (("before", "engine:v1"), ("after", "engine:v2")):
        items = [steady, runners_replica("single", image, workers=0, instances=2)]
        (tmp_path / f"{side}.yaml").write_text(json.dumps({"kind": "List", "items": items}))
    argv = ["forecast", "--before", str(tmp_path / "before.yaml"), "--after", str(tmp_path / "after.yaml")]
    assert omereconcile_main([*argv, "--capacity", "100x8", "--startup", "1m", "-o", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["capacity"] == {"nodes": 100, "gpus": 800, "heldByUnchangedReplicas": 64}
    assert [r["replica"] for r in doc["replicas"]] == ["ns/single"]
    # Eight nodes hold the two running gangs pod by pod, and none is left for the single pods.
    assert omereconcile_main([*argv, "--capacity", "8x8", "--startup", "1m"]) == 2
    assert "does not come up on the capacity given" in capsys.readouterr().err


def _gang_roll(capacity: tuple[int, ...] | None) -> Any:
    old = parse_object(InferenceReplica, runners_replica("big", "engine:v1", workers=11))
    new = parse_object(InferenceReplica, runners_replica("big", "engine:v2", workers=11))
    key = ("ns", "big")
    empty = Catalog.from_objects([])
    diffs = diff_replicas({key: old}, {key: new}, empty, empty)
    return forecast(
        diffs, {key: old}, {key: new}, [], startup_seconds=STARTUP, shutdown_seconds=3.0, capacity=capacity
    )


def test_a_96_gpu_gang_fits_on_twelve_8_gpu_nodes() -> None:
    """A leader and eleven workers at 8 GPUs a pod: twelve nodes run it; its replacement gang (maxSurge
    1) needs twelve more at once."""
    f = _gang_roll((8,) * 24)
    (r,) = f.replicas
    assert r.completes
    assert (r.gpus_per_instance, r.peak_extra_pods, r.peak_extra_gpus) == (96, 12, 96)
    assert "peak +12 pods, +96 GPUs; capacity 192 GPUs (24 nodes of 8), left at peak: 0 GPUs" in to_text(f)
    # Twelve nodes run the gang as it is; the replacement cannot be placed whole.
    f = _gang_roll((8,) * 12)
    (r,) = f.replicas
    assert not r.completes
    assert [h.gate for h in r.holds] == ["Unschedulable"]
    assert f.short_of_capacity


def test_replicas_whose_verdict_did_not_change_are_counted_not_listed() -> None:
    """A catalog kept in git has hundreds of replicas unknown until downloaded on both sides: the
    forecast counts them in one line and lists only the changes it does not forecast."""
    model = copy.deepcopy(MODEL)
    del model["status"], model["spec"]["modelFormat"]
    ready = assume_models_ready(Catalog.from_objects([model, RUNTIME]))
    unknown = parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "waiting", "namespace": "ns"},
            "spec": {"component": "engine", "modelRef": {"name": MODEL["metadata"]["name"]}},
        },
    )
    gone = parse_object(InferenceReplica, runners_replica("gone", "engine:v1", workers=0))
    before = {("ns", "waiting"): unknown, ("ns", "gone"): gone}
    after = {("ns", "waiting"): unknown}
    keys = ready.format_unknown
    diffs = diff_replicas(
        before, after, ready.catalog, ready.catalog, before_unknown=keys, after_unknown=keys
    )
    f = forecast(diffs, before, after, [], startup_seconds=STARTUP)
    assert f.changed  # the removed replica
    assert to_text(f).splitlines()[:2] == [
        "ns/gone: not forecast (removed)",
        "1 replica whose verdict did not change not forecast (1 unknown until downloaded)",
    ]
