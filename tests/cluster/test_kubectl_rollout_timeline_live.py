"""``kubectl ome rollout history --timeline`` of a real roll equals the steps the reconciler took.

A settled two-Instance ``SurgeThenDrain`` pool (``maxSurge: 1``) rolls to a new image while a watch
records every status the API server shows. The timeline, read afterwards from the replica's events and
pods only, must name the same Instances in the same order, each operation starting when status says it
started (to the second: both are stamped by the same pass), with the steps status showed.
"""

from __future__ import annotations

import json
import os
import statistics
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from helpers import StatusWatch, roll_pool, running_controller, settled_surge_pool
from kubectl_plugin import kubectl_ome

from testbed.testing import Cluster


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def test_timeline_of_a_finished_roll_is_the_roll_status_showed(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    ns = ["-n", namespace]
    with running_controller(cluster, namespace) as (ctrl, _kube):
        path = settled_surge_pool(cluster, ctrl, namespace, replicas=2)
        # pods that take 3 s to start: a roll long enough to split in seconds (timestamps are to the second)
        delay, cluster.kubelet.ready_delay = cluster.kubelet.ready_delay, 3.0
        try:
            with StatusWatch(cluster, namespace, "pool") as watch:
                roll_pool(cluster, path, timeout=120)
        finally:
            cluster.kubelet.ready_delay = delay
        statuses = watch.since(0)
        v2 = cluster.raw.get(path)["status"]["currentRevision"]
        new_pods = {
            p["metadata"]["name"]: p
            for p in cluster.raw.get(f"/api/v1/namespaces/{namespace}/pods")["items"]
            if p["metadata"]["labels"].get("ome.io/revision-hash") == v2.rsplit("-", 1)[-1]
        }
        got = kubectl_ome(cluster, "rollout", "history", "ir/pool", *ns, "--timeline", "-o", "json")
        assert got.returncode == 0, got.stderr
        tl = json.loads(got.stdout)["content"]
        text = kubectl_ome(cluster, "rollout", "history", "ir/pool", *ns, "--timeline")
        svg = kubectl_ome(cluster, "rollout", "history", "ir/pool", *ns, "--timeline", "-o", "svg")
        both = kubectl_ome(
            cluster, "rollout", "history", "ir/pool", *ns, "--timeline", "--forecast", "-o", "svg"
        )
        beside = kubectl_ome(
            cluster, "rollout", "history", "ir/pool", *ns, "--timeline", "--forecast", "-o", "json"
        )
    assert svg.stdout.startswith("<svg"), svg.stderr
    (tmp_path / "timeline.svg").write_text(svg.stdout)
    assert both.stdout.startswith("<svg"), both.stderr
    if os.environ.get("ROLLOUT_SVG"):  # the closing note: the roll beside its forecast
        Path(os.environ["ROLLOUT_SVG"]).write_text(both.stdout)
    print(text.stdout)  # the closing note's capture (pytest -s)

    # The forecast of the same change beside it: the same Instances through the same steps in the same
    # order, on the same clock (the start-up it assumed is this roll's own).
    assert ">What happened</text>" in both.stdout
    # The pods' start-ups are read to the second, so the kubelet's 3 s shows as 3 s or 4 s: the forecast
    # must assume the median of what this roll's own pods took, whatever that came to.
    took = sorted(float(i["startupSeconds"]) for i in tl["instances"])
    assert len(took) == 2
    # At least the kubelet's 3 s (2 once truncated); no fixed upper bound: scheduling and the serving
    # gate add to it, seconds more on a loaded machine. Each is checked against its pod below.
    assert all(t >= 2.0 for t in took), took
    assumed = f"assumes start-up {statistics.median(took):.0f}s (median of 2 pods of this roll)"
    assert assumed in both.stdout, both.stdout[:900]
    fc = json.loads(beside.stdout)["content"]["forecast"]
    assert fc["completes"] is True
    assert [(s["index"], s["step"]) for s in fc["steps"]] == [
        (0, "Surge"),
        (0, "SurgeDrain"),
        (1, "Surge"),
        (1, "SurgeDrain"),
    ]

    # What status showed: per Instance, its operation's start and the steps it went through.
    seen: dict[int, dict[str, Any]] = {}
    for st in statuses:
        for row in st.get("instanceStatuses") or []:
            op = row.get("operation") or {}
            if op.get("targetRevision") == v2 and op.get("type") == "Update":
                entry = seen.setdefault(row["index"], {"startedAt": op["startedAt"], "steps": []})
                if not entry["steps"] or entry["steps"][-1] != op["step"]:
                    entry["steps"].append(op["step"])
    assert sorted(seen) == [0, 1]
    assert (tl["name"], tl["complete"], tl["notes"]) == (v2, True, [])
    origin = _time(tl["origin"])
    drawn = {i["index"]: i for i in tl["instances"]}
    assert sorted(drawn) == sorted(seen)
    order_status = sorted(seen, key=lambda i: seen[i]["startedAt"])
    order_drawn = sorted(drawn, key=lambda i: drawn[i]["startedAt"])
    assert order_drawn == order_status
    for index, entry in seen.items():
        began = origin + timedelta(seconds=drawn[index]["startedAt"])
        assert abs((began - _time(entry["startedAt"])).total_seconds()) <= 1.0, (index, entry, drawn[index])
        steps = [s["step"] for s in drawn[index]["steps"]]
        assert steps == ["Surge", "SurgeDrain"]
        assert set(entry["steps"]) <= set(steps), (entry["steps"], steps)
        # The pod's own serving - creation, as the API server stamped them (to the second).
        pod = new_pods[drawn[index]["pod"]]
        gate = next(c for c in pod["status"]["conditions"] if c["type"] == "ome.io/serving")
        own = (
            _time(gate["lastTransitionTime"]) - _time(pod["metadata"]["creationTimestamp"])
        ).total_seconds()
        assert drawn[index]["startupSeconds"] == own, (index, drawn[index], own)
    assert tl["floor"] == 2  # a surge keeps the old pod serving until the new one does
    assert tl["peakExtraPods"] == 1  # maxSurge: 1
    assert tl["duration"] >= 6.0  # two start-ups one after the other
