"""``kubectl ome rollout history --timeline``: a finished roll read back from the replica's events and
its pods (nothing written), as text, a report and the forecast's SVG drawing."""

from __future__ import annotations

import io
import json
from typing import Any

from test_kubectl_rollout_get import NS, UID, V1, V2, _t, capture, event, revision

from omereconcile.kubectl import main
from omereconcile.kubectl.rolltimeline import build_timeline, render_text, to_drawing

H2 = V2.rsplit("-", 1)[1]


def finished() -> dict[str, Any]:
    return {
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": NS, "uid": UID, "generation": 2},
        "spec": {"component": "engine", "replicas": 2},
        "status": {
            "observedGeneration": 2,
            "currentRevision": V2,
            "updateRevision": V2,
            "instanceStatuses": [
                {"index": i, "phase": "Ready", "runningRevision": V2, "targetRevision": V2} for i in (0, 1)
            ],
        },
    }


def new_pod(index: int, created: int, serving: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"pool-engine-{index}-default-1",
            "uid": f"uid-new-{index}",
            "creationTimestamp": _t(created),
            "labels": {
                "ome.io/instance-index": str(index),
                "ome.io/revision-hash": H2,
                "component": "engine",
            },
        },
        "spec": {"containers": [{"name": "engine", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": _t(serving + 1)},
                {"type": "ome.io/serving", "status": "True", "lastTransitionTime": _t(serving)},
            ]
        },
    }


def normal(reason: str, message: str, ago: int) -> dict[str, Any]:
    return event(UID, "InferenceReplica", "pool", reason, message, ago, "Normal")


# revision 2 created 100 s ago; Instance 0 surges at -98, serves at -60, completes at -58; Instance 1
# waits its turn, surges at -57, serves at -20, completes at -18.
EVENTS = [
    normal(
        "RecreateUpdateStarted",
        f"OMENative component=engine instance=0 surge to revision {V2} (newOrdinal=1)",
        98,
    ),
    normal(
        "RecreateUpdateCompleted",
        f"OMENative component=engine instance=0 surge to revision {V2} complete (activeOrdinal=1)",
        58,
    ),
    normal(
        "RecreateUpdateStarted",
        f"OMENative component=engine instance=1 surge to revision {V2} (newOrdinal=1)",
        57,
    ),
    normal(
        "RecreateUpdateCompleted",
        f"OMENative component=engine instance=1 surge to revision {V2} complete (activeOrdinal=1)",
        18,
    ),
    normal(
        "RecreateUpdateStarted",
        f"OMENative component=engine instance=0 surge to revision {V1} (newOrdinal=0)",
        900,
    ),
    event(
        "uid-other",
        "InferenceReplica",
        "pool",
        "RecreateUpdateStarted",
        "component=engine instance=5 surge to revision " + V2 + " (",
        50,
        "Normal",
    ),
]
PODS = [new_pod(0, 98, 60), new_pod(1, 57, 20)]
REVS = [revision(V1, 1, 700), revision(V2, 2, 100)]


def test_a_finished_surge_roll_is_read_back_step_by_step() -> None:
    tl = build_timeline(finished(), REVS, PODS, EVENTS)
    assert (tl["name"], tl["duration"], tl["complete"], tl["floor"]) == (V2, 82.0, True, 2)
    assert [(i["index"], i["mode"]) for i in tl["instances"]] == [(0, "surge"), (1, "surge")]
    assert [(s["step"], s["start"], s["end"]) for s in tl["instances"][1]["steps"]] == [
        ("Surge", 43.0, 80.0),
        ("SurgeDrain", 80.0, 82.0),
    ]
    assert tl["instances"][1]["waits"][0]["end"] == 43.0  # waited for Instance 0 (maxSurge 1)
    assert tl["instances"][0]["startupSeconds"] == 38.0
    assert (tl["peakExtraPods"], tl["peakExtraGpus"]) == (1, 2)
    assert tl["notes"] == []
    capture("timeline_surge.txt", render_text(tl, "pool"))


def test_a_recreate_roll_lowers_the_floor_while_the_instance_is_down() -> None:
    events = [
        normal(
            "RecreateUpdateStarted",
            f"OMENative component=engine instance=0 recreate (revision {V1} -> {V2}, incarnation=2)",
            90,
        ),
        normal(
            "RecreateUpdateCompleted",
            f"OMENative component=engine instance=0 recreate to revision {V2} complete",
            50,
        ),
    ]
    tl = build_timeline(finished(), REVS, [new_pod(0, 85, 52)], events, "2")
    assert [(s["step"], s["start"], s["end"]) for s in tl["instances"][0]["steps"]] == [
        ("Drain", 10.0, 15.0),
        ("CreatePods", 15.0, 50.0),
    ]
    assert [(p["at"], p["serving"]) for p in tl["series"]] == [(0.0, 2), (10.0, 1), (48.0, 2)]
    assert [i["index"] for i in tl["instances"]] == [0]  # Instance 1 did not roll: not drawn
    assert tl["floor"] == 1


def test_gone_events_are_said_not_guessed() -> None:
    tl = build_timeline(finished(), REVS, PODS, [], "2")
    assert tl["instances"] == []
    assert "nothing to draw" in render_text(tl, "pool")


class Kube:
    def __init__(self) -> None:
        self.selectors: list[str] = []
        self.writes = 0

    def request(self, method: str, path: str, *, query: Any = None, **_: Any) -> dict[str, Any]:
        if method != "GET":
            self.writes += 1
        if path.endswith("/inferencereplicas/pool"):
            return finished()
        if path.endswith("/controllerrevisions"):
            return {"items": REVS}
        if path.endswith("/pods"):
            return {"items": PODS}
        if path.endswith("/events"):
            self.selectors.append(query["fieldSelector"])
            return {"items": EVENTS}
        raise AssertionError(path)

    def close(self) -> None:
        pass


def _run(*argv: str) -> tuple[int, str, str, Kube]:
    kube, out, err = Kube(), io.StringIO(), io.StringIO()
    code = main(["rollout", "history", "ir/pool", "-n", NS, *argv], out=out, err=err, connect=lambda _a: kube)  # type: ignore[arg-type,return-value]
    return code, out.getvalue(), err.getvalue(), kube


def test_history_timeline_text_json_and_svg_read_only() -> None:
    code, text, _, kube = _run("--timeline")
    assert code == 0
    assert text == render_text(build_timeline(finished(), REVS, PODS, EVENTS), "pool")
    assert kube.writes == 0
    assert kube.selectors == [
        f"involvedObject.kind=InferenceReplica,involvedObject.name=pool,involvedObject.uid={UID},type=Normal"
    ]
    code, doc, _, _ = _run("--timeline", "--revision", H2, "-o", "json")
    report = json.loads(doc)
    assert (code, report["kind"], report["content"]["name"]) == (0, "RolloutTimelineReport", V2)
    code, svg, _, _ = _run("--timeline", "-o", "svg")
    assert code == 0
    assert svg.startswith("<svg")
    assert "Instance 1 SurgeDrain" in svg
    assert len(to_drawing(build_timeline(finished(), REVS, PODS, EVENTS), "pool").steps) == 6


def test_svg_without_timeline_and_an_unknown_revision_are_refused() -> None:
    code, _, err, _ = _run("-o", "svg")
    assert (code, err) == (2, "error: -o svg draws a timeline: add --timeline\n")
    code, _, err, _ = _run("--timeline", "--revision", "9")
    assert (code, err) == (
        1,
        'error: unable to find revision "9" in the history of inferencereplica "pool"\n',
    )
