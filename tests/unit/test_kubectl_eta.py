"""The ETA of ``rollout status`` and ``rollout get``: the planner run from where the live roll is.

The objects: a six-Instance ``SurgeThenDrain`` pool (``maxSurge: 1``) rolling ``engine:v1`` to
``engine:v2``; Instances 0 and 1 have rolled (their new pods served 4 s after creation, their updates
completed 1 s later), Instance 2 started its surge 2 s ago.
"""

from __future__ import annotations

import copy
import io
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from typing import Any

from omereconcile.kubectl import main
from omereconcile.kubectl.eta import DEFAULT_STARTUP_SECONDS, estimate, measure, plan_roll
from omereconcile.kubectl.live import Snapshot
from omereconcile.kubectl.rolltimeline import build_timeline
from omereconcile.kubectl.tree import Palette, render_tree

NOW = datetime(2026, 12, 6, 16, 30, 0, tzinfo=UTC)
NS, UID = "demo", "7d0c1c7e-2f7b-4a53-9a43-0c9d5b0f3e11"
V1, V2 = "pool-engine-457539a1", "pool-engine-71779956"


def _t(ago: float) -> str:
    return (NOW - timedelta(seconds=ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def revision(name: str, number: int, image: str, ago: float) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": NS,
            "creationTimestamp": _t(ago),
            "ownerReferences": [{"uid": UID, "kind": "InferenceReplica", "name": "pool", "controller": True}],
        },
        "revision": number,
        "data": {"podSpec": {"containers": [{"name": "engine", "image": image}]}},
    }


REVS = [revision(V1, 1, "engine:v1", 600), revision(V2, 2, "engine:v2", 13)]


def replica(done: int = 2, in_flight: bool = True) -> dict[str, Any]:
    rows = []
    for i in range(6):
        row: dict[str, Any] = {
            "index": i,
            "phase": "Ready",
            "incarnation": 1,
            "runningRevision": V2 if i < done else V1,
            "targetRevision": V2,
            "podCount": 1,
            "servingPodCount": 1,
        }
        if i == done and in_flight:
            row["phase"] = "Updating"
            row["operation"] = {
                "id": "op-2",
                "type": "Update",
                "targetRevision": V2,
                "step": "Surge",
                "startedAt": _t(2),
            }
        rows.append(row)
    template = {"spec": {"containers": [{"name": "engine", "image": "engine:v2"}]}}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": NS, "uid": UID, "generation": 2, "resourceVersion": "90"},
        "spec": {
            "component": "engine",
            "replicas": 6,
            "runners": [{"name": "default", "size": 1, "template": template}],
            "lifecycle": {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}},
        },
        "status": {
            "observedGeneration": 2,
            "currentRevision": V1,
            "updateRevision": V2,
            "readyReplicas": 6,
            "availableReplicas": 6,
            "instanceStatuses": rows,
        },
    }


def event(reason: str, message: str, ago: float) -> dict[str, Any]:
    return {
        "type": "Normal",
        "reason": reason,
        "message": message,
        "involvedObject": {"uid": UID, "kind": "InferenceReplica", "name": "pool"},
        "lastTimestamp": _t(ago),
        "count": 1,
    }


def started(i: int, ago: float) -> dict[str, Any]:
    return event(
        "RecreateUpdateStarted", f"component=engine instance={i} surge to revision {V2} (newOrdinal=1)", ago
    )


def completed(i: int, ago: float) -> dict[str, Any]:
    return event(
        "RecreateUpdateCompleted", f"component=engine instance={i} surge to revision {V2} complete", ago
    )


def new_pod(i: int, created: float, serving: float | None) -> dict[str, Any]:
    conds = (
        [] if serving is None else [{"type": "Ready", "status": "True", "lastTransitionTime": _t(serving)}]
    )
    return {
        "metadata": {
            "name": f"pool-engine-{i}-b",
            "uid": f"uid-{i}-b",
            "creationTimestamp": _t(created),
            "labels": {"ome.io/instance-index": str(i), "ome.io/revision-hash": V2.rsplit("-", 1)[1]},
        },
        "status": {"conditions": conds},
    }


# Instance 0: started 12 s ago, pod created then, serving 8 s ago, completed 7 s ago; Instance 1 the
# same 5 s later; Instance 2 started 2 s ago.
EVENTS = [started(0, 12), completed(0, 7), started(1, 7), completed(1, 2), started(2, 2)]
PODS = [new_pod(0, 12, 8), new_pod(1, 7, 3)]


def test_the_roll_measured_so_far_start_up_drain_and_progress() -> None:
    m = measure(build_timeline(replica(), REVS, PODS, EVENTS), PODS)
    assert (m.startup, m.startup_pods, m.drain, m.drain_samples) == (4.0, 2, 1.0, 2)
    assert (m.started, m.completed, m.last_start, m.last_completion) == (3, 2, 11.0, 11.0)


def test_the_planner_run_rolls_one_instance_at_a_time_each_a_start_up_and_a_drain_long() -> None:
    plan = plan_roll(replica(), REVS[0], REVS[1], startup_seconds=4.0, drain_seconds=1.0)
    assert plan.completes
    assert plan.hold == ""
    assert len(plan.starts) == len(plan.completions) == 6
    gaps = [b - a for a, b in zip(plan.starts, plan.starts[1:], strict=False)]
    # maxSurge 1: the next surge waits for the previous Instance's old pod to be gone
    assert all(5.0 <= g <= 7.0 for g in gaps), gaps
    assert plan.completions[-1] == plan.duration
    assert 6 * 5.0 <= plan.duration <= 6 * 7.0


def test_eta_is_the_rest_of_the_planner_run_from_the_live_roll_s_last_step() -> None:
    plans: dict[str, Any] = {}
    eta = estimate(replica(), REVS, PODS, EVENTS, NOW, cache=plans)
    assert eta is not None
    assert eta.seconds is not None
    plan = next(iter(plans.values()))
    # The live roll started its third update 2 s ago: the rest of the run from the third start, at the
    # pace of this roll (its starts 10 s apart where the run's are further), less 2 s.
    pace = (11.0 - 1.0) / (plan.starts[2] - plan.starts[0])
    assert 0.5 < pace < 1.0
    assert eta.seconds == pace * (plan.duration - plan.starts[2]) - 2.0
    assert 3.5 * 5.0 * pace <= eta.seconds <= 3.5 * 7.0 * pace
    assert "paced as this roll so far (2 updates started every 5.0s here, every " in eta.assumes
    assert eta.at == NOW + timedelta(seconds=eta.seconds)
    assert eta.assumes.startswith("start-up 4s (median of 2 pods of this roll), drain 1s (median of 2)")
    assert "room on the nodes for every new pod" in eta.assumes
    # Asked again (a watch redraw) a second later: the same run, one second less.
    again = estimate(replica(), REVS, PODS, EVENTS, NOW + timedelta(seconds=1), cache=plans)
    assert again is not None
    assert again.seconds == eta.seconds - 1.0
    assert len(plans) == 1
    # one update started: no pace to measure, said
    one = estimate(replica(done=0), REVS, [new_pod(0, 2, None)], [started(0, 2)], NOW, cache=plans)
    assert one is not None
    assert "pace of the planner's run (fewer than two updates started here)" in one.assumes


def test_between_two_updates_the_roll_is_matched_by_its_last_completion() -> None:
    plans: dict[str, Any] = {}
    eta = estimate(replica(in_flight=False), REVS, PODS, EVENTS[:4], NOW, cache=plans)
    assert eta is not None
    assert eta.seconds is not None
    plan = next(iter(plans.values()))
    # two updates completed, the second 2 s ago (11 s after the change); starts 5 s apart here
    pace = (6.0 - 1.0) / (plan.starts[1] - plan.starts[0])
    assert eta.seconds == pace * (plan.duration - plan.completions[1]) - 2.0


def test_before_any_pod_serves_the_forecast_default_start_up_is_used_and_said() -> None:
    eta = estimate(replica(done=0), REVS, [new_pod(0, 2, None)], [started(0, 2)], NOW)
    assert eta is not None
    assert eta.seconds is not None
    assert "no pod of this roll serves yet: the forecast's default" in eta.assumes
    assert eta.assumes.startswith("start-up 5m00s")
    assert eta.seconds >= 6 * DEFAULT_STARTUP_SECONDS - 2.0


def test_a_partitioned_roll_s_eta_is_to_its_partition() -> None:
    staged = replica()
    staged["spec"]["pacing"] = {"partition": 3}
    plans: dict[str, Any] = {}
    eta = estimate(staged, REVS, PODS, EVENTS, NOW, cache=plans)
    assert eta is not None
    assert eta.seconds is not None
    plan = next(iter(plans.values()))
    assert plan.completes
    assert plan.hold.startswith("Staged: ")
    assert len(plan.completions) == 3  # Instances 3, 4 and 5 stay on the prior revision
    assert plan.duration == plan.completions[-1]
    assert eta.text.startswith(f"{round(eta.seconds)}s to the partition (about ")


def test_an_update_waiting_for_room_gets_no_number() -> None:
    parked = replica()
    parked["status"]["instanceStatuses"][2]["operation"]["waiting"] = "Unschedulable"
    eta = estimate(parked, REVS, PODS, EVENTS, NOW)
    assert eta is not None
    assert eta.seconds is None
    assert eta.text == (
        "none while Instance 2 waits for room on the nodes (Unschedulable): when room comes is not the roll's to say"
    )


def test_a_roll_behind_the_planner_run_says_so_instead_of_a_negative_time() -> None:
    eta = estimate(replica(), REVS, PODS, EVENTS, NOW + timedelta(hours=1))
    assert eta is not None
    assert eta.seconds == 0.0
    assert eta.text == "any moment now (the roll is behind the planner's run)"


def test_held_paused_and_complete_rolls_have_no_eta_their_status_says_why() -> None:
    held = replica()
    held["status"]["rolloutHold"] = {"gate": "Held", "reason": "revision 2 failed 3 times"}
    assert estimate(held, REVS, PODS, EVENTS, NOW) is None
    paused = replica()
    paused["spec"]["paused"] = True
    assert estimate(paused, REVS, PODS, EVENTS, NOW) is None
    complete = replica(done=6, in_flight=False)
    complete["status"]["currentRevision"] = V2
    complete["status"]["updatedReplicas"] = 6
    assert estimate(complete, REVS, PODS, EVENTS, NOW) is None


def test_rollout_get_prints_the_eta_and_what_it_assumes_under_the_counts() -> None:
    snap = Snapshot()
    snap.replica, snap.revisions, snap.pods, snap.normal = replica(), REVS, PODS, EVENTS
    tree = snap.tree(NOW, 300.0)
    assert tree["eta"]["seconds"] is not None
    lines = render_tree(tree, Palette(False)).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Revisions:"))
    assert lines[at + 1] == f"ETA:         {tree['eta']['text']}"
    assert lines[at + 2].startswith("Assumes:     start-up 4s (median of 2 pods of this roll)")
    # another replica's Normal events are not this roll's: no drain measured, the pods still give the
    # start-up
    other = copy.deepcopy(EVENTS)
    for ev in other:
        ev["involvedObject"]["uid"] = "another"
    snap.normal = other
    assumes = snap.tree(NOW, 300.0)["eta"]["assumes"]
    assert assumes.startswith("start-up 4s (median of 2 pods of this roll), drain 30s (none finished yet")


class Kube:
    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.selectors: list[str] = []

    def request(self, method: str, path: str, *, query: Any = None, **_: Any) -> dict[str, Any]:
        assert method == "GET"
        if path.endswith("/inferencereplicas/pool"):
            return self.obj
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


def _status(*argv: str) -> tuple[int, str, Kube]:
    kube, out, err = Kube(replica()), io.StringIO(), io.StringIO()
    code = main(
        ["rollout", "status", "ir/pool", "-n", NS, "--watch=false", *argv],
        out=out,
        err=err,
        connect=lambda _a: kube,  # type: ignore[arg-type,return-value]
    )
    assert err.getvalue() == ""
    return code, out.getvalue(), kube


def test_rollout_status_prints_the_eta_under_its_progress_line_and_in_its_report() -> None:
    code, text, kube = _status()
    lines = text.splitlines()
    assert code == 0
    assert lines[0].startswith('Waiting for inferencereplica "pool" rollout to finish')
    assert lines[1].startswith("  expected to complete in: ")
    assert lines[2].startswith("  assumes: start-up 4s (median of 2 pods of this roll)")
    assert kube.selectors == [
        f"involvedObject.kind=InferenceReplica,involvedObject.name=pool,involvedObject.uid={UID},type=Normal"
    ]
    code, doc, _ = _status("-o", "json")
    eta = json.loads(doc)["content"]["eta"]
    assert code == 0
    assert isinstance(eta["seconds"], float)  # the real clock is past NOW: 0.0, "any moment now"
    assert eta["assumes"].startswith("start-up 4s")


def _history(*argv: str) -> tuple[int, str, str]:
    kube, out, err = Kube(replica()), io.StringIO(), io.StringIO()
    code = main(
        ["rollout", "history", "ir/pool", "-n", NS, *argv],
        out=out,
        err=err,
        connect=lambda _a: kube,  # type: ignore[arg-type,return-value]
    )
    return code, out.getvalue(), err.getvalue()


def test_history_timeline_forecast_sets_the_planner_run_beside_the_roll_on_one_axis() -> None:
    code, doc, _ = _history("--timeline", "--forecast", "-o", "json")
    assert code == 0
    content = json.loads(doc)["content"]
    fc = content["forecast"]
    assert fc["completes"] is True
    assert (
        fc["assumes"]
        == "start-up 4s (median of 2 pods of this roll), drain 1s (median of 2), room for every pod"
    )
    # the run rolls the six Instances one at a time, through the steps the roll drew for 0 and 1
    assert [(s["index"], s["step"]) for s in fc["steps"]][:4] == [
        (0, "Surge"),
        (0, "SurgeDrain"),
        (1, "Surge"),
        (1, "SurgeDrain"),
    ]
    assert sorted({s["index"] for s in fc["steps"]}) == list(range(6))
    code, text, _ = _history("--timeline", "--forecast", "--startup", "10s")
    assert code == 0
    assert f"forecast of the same change: {fc['duration']:.0f}s; the roll took not complete\n" not in text
    assert "forecast assumes: start-up 10s (--startup), drain 1s (median of 2), room for every pod\n" in text
    code, svg, _ = _history("--timeline", "--forecast", "-o", "svg")
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[:2] == [f"Roll of pool to {V2}", "What happened"]
    assert "Forecast: the planner's run of the same change" in texts
    assert (
        "assumes start-up 4s (median of 2 pods of this roll), drain 1s (median of 2), room for every pod"
        in texts
    )
    # one time axis: both pictures' tick labels are the same
    axes: dict[str, list[tuple[str | None, str | None]]] = {}
    for t in root.iter("{http://www.w3.org/2000/svg}text"):
        if t.get("text-anchor") in ("start", "middle") and t.get("fill") == "#555":
            axes.setdefault(str(t.get("y")), []).append((t.get("x"), t.text))
    assert len(axes) == 3  # the two pictures and the series chart
    first, *others = axes.values()
    assert all(o == first for o in others)
    assert len(first) >= 4


def test_forecast_needs_a_timeline_and_an_earlier_revision() -> None:
    code, _, err = _history("--forecast")
    assert (code, err) == (2, "error: --forecast sets a forecast beside a timeline: add --timeline\n")
    code, _, err = _history("--timeline", "--forecast", "--revision", "1")
    assert code == 1
    assert err.startswith(f"error: revision {V1} is the first of inferencereplica")


def test_a_watch_runs_the_planner_again_only_when_what_it_reads_moved() -> None:
    plans: dict[str, Any] = {}
    estimate(replica(), REVS, PODS, EVENTS, NOW, cache=plans)
    slower = [new_pod(0, 12, 8), new_pod(1, 7, 3), new_pod(2, 2, -2)]  # one more pod, same start-up
    estimate(replica(), REVS, slower, EVENTS, NOW, cache=plans)
    assert len(plans) == 1
    much_slower = [new_pod(0, 12, 6), new_pod(1, 7, 1)]  # 6 s: another step, another run
    estimate(replica(), REVS, much_slower, EVENTS, NOW, cache=plans)
    assert len(plans) == 2


def test_no_eta_skips_the_planner_run() -> None:
    code, text, kube = _status("--no-eta")
    assert code == 0
    assert len(text.splitlines()) == 1
    assert kube.selectors == []  # nor reads the events it would measure


def test_a_refusal_is_said_in_its_words_and_anything_else_is_named_as_a_bug() -> None:
    from omereconcile.forecast.inputs import ForecastInputError
    from omereconcile.kubectl.eta import failed

    said = failed(ForecastInputError("the replica's revision does not render"))
    assert (
        said.text
        == "none: the planner could not be run on this roll (the replica's revision does not render)"
    )

    def boom() -> None:
        raise AssertionError

    try:
        boom()
    except AssertionError as exc:
        bug = failed(exc)
    assert bug.seconds is None
    assert bug.text.startswith("none: internal error (AssertionError at test_kubectl_eta.py:")
    assert "this is a bug, please report it" in bug.text
    assert "()" not in bug.text
