"""``kubectl ome rollout get``: the tree of a roll, checked as captured screens.

The objects are a two-Instance ``SurgeThenDrain`` pool rolling from ``v1`` to ``v2``: Instance 0 is in
its ``Surge`` step with a ``v2`` pod that pulls no image on a node whose kubelet went silent; Instance
1 still serves ``v1``. The screens are in ``tests/unit/kubectl_captures/`` (one file per case; run
with ``UPDATE_CAPTURES=1`` to rewrite them after a deliberate change, then read the diff).
"""

from __future__ import annotations

import copy
import io
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from omereconcile.cluster.kube import Forbidden
from omereconcile.kubectl import main
from omereconcile.kubectl.live import use_colour
from omereconcile.kubectl.tree import Palette, build_tree, render_tree

CAPTURES = Path(__file__).parent / "kubectl_captures"
NOW = datetime(2026, 12, 6, 16, 30, 0, tzinfo=UTC)
NS = "llama-demo"
V1, V2 = "pool-engine-457539a1", "pool-engine-71779956"
UID = "b782d1ff-124c-4805-8056-13794d9302b6"


def _t(seconds_ago: int) -> str:
    return datetime.fromtimestamp(NOW.timestamp() - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def replica() -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": NS, "uid": UID, "generation": 2, "resourceVersion": "359"},
        "spec": {
            "component": "engine",
            "replicas": 2,
            "lifecycle": {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}},
        },
        "status": {
            "observedGeneration": 2,
            "currentRevision": V1,
            "updateRevision": V2,
            "readyReplicas": 2,
            "availableReplicas": 2,
            "instanceStatuses": [
                {
                    "index": 0,
                    "phase": "Updating",
                    "incarnation": 1,
                    "runningRevision": V1,
                    "targetRevision": V2,
                    "operation": {
                        "id": "update-0-1796173531",
                        "type": "Update",
                        "step": "Surge",
                        "strategy": "SurgeThenDrain",
                        "targetRevision": V2,
                        "startedAt": _t(95),
                        "lastProgressAt": _t(80),
                        "deadline": _t(-520),
                        "waiting": "SurgePodNotReady",
                    },
                },
                {"index": 1, "phase": "Ready", "incarnation": 1, "runningRevision": V1, "targetRevision": V1},
            ],
        },
    }


def revision(name: str, number: int, age: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": name,
            "namespace": NS,
            "creationTimestamp": _t(age),
            "labels": {"ome.io/inferenceservice": "pool", "component": "engine"},
            "ownerReferences": [{"uid": UID, "kind": "InferenceReplica", "name": "pool"}],
        },
        "revision": number,
    }


def pod(
    name: str, index: int, rev: str, node: str, age: int, ready: bool, waiting: str = ""
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "phase": "Running" if ready else "Pending",
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False"},
            *([{"type": "ome.io/serving", "status": "True"}] if ready else []),
        ],
        "containerStatuses": [
            {
                "name": "engine",
                "restartCount": 0,
                "state": {"waiting": {"reason": waiting}} if waiting else {},
            }
        ],
    }
    return {
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "creationTimestamp": _t(age),
            "labels": {
                "ome.io/inferenceservice": "pool",
                "component": "engine",
                "ome.io/instance-index": str(index),
                "ome.io/revision-hash": rev.rsplit("-", 1)[1],
            },
        },
        "spec": {"nodeName": node},
        "status": status,
    }


def pods() -> list[dict[str, Any]]:
    return [
        pod("pool-engine-0-a", 0, V1, "node-1", 600, True),
        pod("pool-engine-0-b", 0, V2, "node-2", 80, False, "ImagePullBackOff"),
        pod("pool-engine-1-a", 1, V1, "node-1", 600, True),
    ]


def node(name: str, silent: bool = False) -> dict[str, Any]:
    cond = (
        {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}
        if silent
        else {"type": "Ready", "status": "True"}
    )
    taints = [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}] if silent else []
    return {"metadata": {"name": name}, "spec": {"taints": taints}, "status": {"conditions": [cond]}}


def event(
    uid: str, kind: str, name: str, reason: str, message: str, age: int, type_: str = "Warning"
) -> dict[str, Any]:
    return {
        "metadata": {"name": f"{name}.{reason}", "namespace": NS},
        "involvedObject": {"kind": kind, "name": name, "uid": uid, "namespace": NS},
        "type": type_,
        "reason": reason,
        "message": message,
        "lastTimestamp": _t(age),
        "count": 3 if reason == "BackOff" else 1,
    }


def events() -> list[dict[str, Any]]:
    return [
        event(
            "uid-pool-engine-0-b",
            "Pod",
            "pool-engine-0-b",
            "BackOff",
            'Back-off pulling image "engine:v2"',
            20,
        ),
        event("uid-pool-engine-0-b", "Pod", "pool-engine-0-b", "Failed", "an old failure", 900),  # outside 5m
        event("uid-pool-engine-0-b", "Pod", "pool-engine-0-b", "Pulling", "a Normal event", 10, "Normal"),
        event("uid-other", "Pod", "pool-engine-0-b", "BackOff", "a former pod of the same name", 15),
        event(UID, "InferenceReplica", "pool", "InstanceNotReady", "Instance 0 surge pod not ready", 30),
        event(
            UID,
            "InferenceReplica",
            "pool",
            "InstanceFailed",
            "InferenceReplica llama-demo/pool component=engine instance=1 escalated to Phase=Failed",
            25,
        ),
    ]


def nodes() -> dict[str, Any]:
    return {"node-1": node("node-1"), "node-2": node("node-2", silent=True)}


def capture(name: str, text: str) -> None:
    path = CAPTURES / name
    if os.environ.get("UPDATE_CAPTURES"):
        path.write_text(text)
    assert text == path.read_text(), f"screen differs from {path} (UPDATE_CAPTURES=1 rewrites it)"


def _screen(obj: dict[str, Any], colour: bool = False, wide: bool = False) -> str:
    revs = [revision(V1, 1, 700), revision(V2, 2, 100)]
    tree = build_tree(obj, revs, pods(), nodes(), events(), NOW)
    return render_tree(tree, Palette(colour), wide=wide)


def test_mid_roll_screen_names_the_step_its_wait_the_silent_node_and_the_pods_warning() -> None:
    text = _screen(replica())
    capture("mid_roll.txt", text)
    assert "Instance 0 Updating -> 71779956  Update/Surge for 80s, deadline in 8m40s" in text
    assert "node node-2 (Unknown,unreachable)" in text
    assert 'BackOff 20s ago (x3) Pod/pool-engine-0-b: Back-off pulling image "engine:v2"' in text
    assert "an old failure" not in text
    assert "a Normal event" not in text
    assert "a former pod of the same name" not in text  # same name, another uid: not this pod's
    assert "\x1b[" not in text


def test_mid_roll_in_colour_is_the_same_text_with_ansi_codes() -> None:
    coloured = _screen(replica(), colour=True)
    capture("mid_roll_colour.txt", coloured)
    assert "\x1b[31m" in coloured
    import re

    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == _screen(replica())


def test_held_revision_and_paused_roll_show_in_the_header() -> None:
    held = replica()
    held["status"]["rolloutHold"] = {
        "gate": "Held",
        "reason": f"revision {V2} is held after repeated failures",
    }
    held["status"]["instanceStatuses"][0]["lastFailure"] = {
        "reason": "ImagePullBackOff",
        "podName": "pool-engine-0-b",
        "exitCode": 0,
        "time": _t(40),
    }
    capture("held.txt", _screen(held))
    paused = replica()
    paused["spec"]["paused"] = True
    paused["status"]["instanceStatuses"][0]["operation"]["waiting"] = "Paused"
    text = _screen(paused, wide=True)
    capture("paused_wide.txt", text)
    assert "Paused:      yes (Recover)" in text
    assert "revision 71779956" in text


def test_tree_document_places_pods_and_events_under_their_instance() -> None:
    revs = [revision(V1, 1, 700), revision(V2, 2, 100)]
    tree = build_tree(replica(), revs, pods(), nodes(), events(), NOW)
    assert [(r["name"], r["roles"], r["instances"], r["rollingHere"]) for r in tree["revisions"]] == [
        (V2, ["update"], [], [0]),
        (V1, ["current"], [0, 1], []),
    ]
    zero = tree["instances"][0]
    assert [p["name"] for p in zero["pods"]] == ["pool-engine-0-a", "pool-engine-0-b"]
    assert zero["operation"]["inStepSeconds"] == 80
    assert zero["operation"]["deadlineInSeconds"] == 520
    assert [e["reason"] for e in zero["warningEvents"]] == ["BackOff"]
    assert [e["reason"] for e in tree["replica"]["warningEvents"]] == ["InstanceNotReady"]
    # a replica's event naming an Instance as the controller names one sits under that Instance
    assert [e["reason"] for e in tree["instances"][1]["warningEvents"]] == ["InstanceFailed"]
    no_nodes = build_tree(replica(), revs, pods(), None, events(), NOW)
    assert {p["nodeState"] for i in no_nodes["instances"] for p in i["pods"]} == {"?"}


# -- the verb, through main(), against a fake Kube -----------------------------------------------------


class FakeKube:
    def __init__(self, *, nodes_forbidden: bool = False) -> None:
        self.nodes_forbidden = nodes_forbidden
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def request(self, method: str, path: str, *, query: Any = None, **_: Any) -> dict[str, Any]:
        query = {k: v for k, v in (query or {}).items() if v is not None}
        self.calls.append((path, query))
        if path.endswith("/inferencereplicas/pool"):
            return replica()
        if path.endswith("/controllerrevisions"):
            return {"items": [revision(V1, 1, 700), revision(V2, 2, 100)]}
        if path.endswith("/pods"):
            return {"items": pods()}
        if path == "/api/v1/nodes":
            if self.nodes_forbidden:
                raise Forbidden(403, "Forbidden", 'nodes is forbidden: User "u" cannot list resource "nodes"')
            return {"items": list(nodes().values())}
        if path.endswith("/events"):
            return {"items": events()}
        raise AssertionError(path)

    def close(self) -> None:
        pass


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(*argv: str, kube: FakeKube | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    fake = kube or FakeKube()
    code = main(["rollout", "get", "ir/pool", "-n", NS, *argv], out=out, err=err, connect=lambda _a: fake)  # type: ignore[arg-type,return-value]
    return code, out.getvalue(), err.getvalue()


def test_get_prints_the_tree_without_colour_when_piped_and_asks_for_warnings_only() -> None:
    kube = FakeKube()
    code, out, err = _run(kube=kube)
    assert (code, err) == (0, "")
    assert out.startswith("Name:        pool (llama-demo)\nStatus:      Progressing\n")
    assert "\x1b[" not in out
    assert (
        "/api/v1/namespaces/llama-demo/events",
        {"limit": 500, "fieldSelector": "type=Warning"},
    ) in kube.calls


def test_get_json_is_a_cli_report_of_the_same_tree() -> None:
    code, out, _ = _run("-o", "json")
    doc = json.loads(out)
    assert (code, doc["apiVersion"], doc["kind"]) == (0, "cli.ome.io/v1alpha1", "RolloutTreeReport")
    assert doc["metadata"] == {"name": "pool", "namespace": NS}
    assert doc["sources"][0]["uid"] == UID
    assert doc["content"]["replica"]["state"] == "Progressing"
    assert [i["index"] for i in doc["content"]["instances"]] == [0, 1]


def test_get_without_nodes_permission_still_prints_and_says_why() -> None:
    code, out, _ = _run(kube=FakeKube(nodes_forbidden=True))
    assert code == 0
    assert "node node-2 (?)" in out
    assert out.rstrip().splitlines()[-1].startswith("warning: nodes not readable (nodes is forbidden")


@pytest.mark.parametrize(
    ("mode", "tty", "env", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"NO_COLOR": ""}, True),
        ("auto", False, {}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {}, False),
    ],
)
def test_colour_on_a_terminal_unless_no_color(
    mode: str, tty: bool, env: dict[str, str], expected: bool
) -> None:
    assert use_colour(Tty() if tty else io.StringIO(), mode, env) is expected


def test_captures_are_unchanged_by_a_copy_of_the_inputs() -> None:
    obj = replica()
    before = copy.deepcopy(obj)
    _screen(obj)
    assert obj == before  # the tree does not write into what it read


# -- --watch: redrawn from watch events, throttled ------------------------------------------------------


class WatchingKube(FakeKube):
    """``FakeKube`` with watches: the replica's changes come from ``push``; other watches stay quiet."""

    def __init__(self) -> None:
        super().__init__()
        import queue

        self.current = replica()
        self.changes: queue.Queue[dict[str, Any]] = queue.Queue()
        self.watches: list[tuple[str, str]] = []

    def request(self, method: str, path: str, *, query: Any = None, **kw: Any) -> dict[str, Any]:
        if path.endswith("/inferencereplicas"):
            return {"metadata": {"resourceVersion": "359"}, "items": [copy.deepcopy(self.current)]}
        if path.endswith("/inferencereplicas/pool"):
            return copy.deepcopy(self.current)
        out = super().request(method, path, query=query, **kw)
        out.setdefault("metadata", {"resourceVersion": "359"})
        return out

    def list(self, path: str, **query: Any) -> dict[str, Any]:
        return self.request("GET", path, query=query)

    def get(self, path: str, **query: Any) -> dict[str, Any]:
        return self.request("GET", path, query=query)

    def watch(self, path: str, *, resource_version: str, **_: Any) -> Any:
        import queue

        from omereconcile.cluster.kube import WatchEvent

        self.watches.append((path, resource_version))
        if not path.endswith("/inferencereplicas"):
            import time

            time.sleep(0.3)
            return
        while True:
            try:
                obj = self.changes.get(timeout=0.3)
            except queue.Empty:
                return
            self.current = obj
            yield WatchEvent("MODIFIED", copy.deepcopy(obj))


def _steps(kube: WatchingKube, n: int) -> None:
    import time

    for i in range(n):
        obj = replica()
        obj["metadata"]["resourceVersion"] = str(400 + i)
        op = obj["status"]["instanceStatuses"][0]["operation"]
        op["step"] = "Drain" if i == n - 1 else f"Surge{i}"
        kube.changes.put(obj)
        time.sleep(0.02)


def _watch(out: io.StringIO, kube: WatchingKube, n: int) -> int:
    import threading

    pusher = threading.Timer(0.3, _steps, (kube, n))
    pusher.start()
    try:
        return main(
            ["rollout", "get", "ir/pool", "-n", NS, "--watch", "--timeout", "2s"],
            out=out,
            err=io.StringIO(),
            connect=lambda _a: kube,  # type: ignore[arg-type,return-value]
        )
    finally:
        pusher.join()


def test_watch_redraws_from_watch_events_at_most_four_times_a_second_as_snapshots_when_piped() -> None:
    kube = WatchingKube()
    out = io.StringIO()
    assert _watch(out, kube, 30) == 0
    snapshots = out.getvalue().split("\n\nName:")
    # 30 changes in ~0.6 s: the first screen, then at most 4 a second over the 2 s.
    assert 2 <= len(snapshots) <= 1 + 2 * 4 + 1, len(snapshots)
    assert "Update/Drain" in snapshots[-1]
    assert "\x1b[" not in out.getvalue()
    # list then watch from the list's resourceVersion (not a GET's), as the controller's reflector does
    assert (f"/apis/ome.io/v1beta1/namespaces/{NS}/inferencereplicas", "359") in kube.watches


def test_watch_on_a_terminal_redraws_in_place() -> None:
    kube = WatchingKube()
    out = Tty()
    assert _watch(out, kube, 3) == 0
    screens = out.getvalue().split("\x1b[H\x1b[2J")
    assert screens[0] == ""
    assert len(screens) >= 3
    assert "Update/Drain" in screens[-1]


def test_an_event_line_leaves_out_the_subject_the_tree_already_shows() -> None:
    """The controller opens its messages with ``InferenceReplica <ns>/<name> component=<c>
    [instance=<n>]`` (or ``OMENative component=<c>:``): under the replica, or under the Instance it
    names, that is said already; an Instance not drawn above it stays named."""
    from omereconcile.kubectl.tree import _event_text

    plain = Palette(False)

    def ev(message: str) -> dict[str, Any]:
        return {"reason": "R", "ageSeconds": 5, "object": "InferenceReplica/pool", "message": message}

    assert _event_text(ev(f"InferenceReplica {NS}/pool component=engine update held"), plain, "pool") == (
        "⚠ R 5s ago update held"
    )
    assert _event_text(ev("OMENative component=engine: no timeout is set"), plain, "pool") == (
        "⚠ R 5s ago no timeout is set"
    )
    named = ev(f"InferenceReplica {NS}/pool component=engine instance=1 escalated")
    assert _event_text(named, plain, "pool", 1) == "⚠ R 5s ago escalated"
    assert _event_text(named, plain, "pool") == "⚠ R 5s ago Instance 1: escalated"
    # Another replica's subject, or a pod's event, is left as written.
    other = ev(f"InferenceReplica {NS}/other component=engine update held")
    assert _event_text(other, plain, "pool").endswith(
        f"InferenceReplica {NS}/other component=engine update held"
    )
