"""``kubectl ome instance status``: the Warning events shown are the replica's and its pods', chosen as
the API server selects them by ``involvedObject`` kind, name and UID, so an earlier pod of the same
name (deleted and created again) or another kind's object of the same name does not lend its events."""

from __future__ import annotations

import io
import json
from typing import Any

from test_kubectl_rollout_get import NS, UID, event, pods, replica

from omereconcile.kubectl import main

EVENTS = [
    event(UID, "InferenceReplica", "pool", "InstanceNotReady", "this replica", 30),
    event(
        "uid-old-replica", "InferenceReplica", "pool", "RenderFailed", "a deleted replica of that name", 40
    ),
    event("uid-x", "Service", "pool", "SyncFailed", "a Service named pool", 40),
    event("uid-pool-engine-0-b", "Pod", "pool-engine-0-b", "BackOff", "this pod", 20),
    event("uid-earlier", "Pod", "pool-engine-0-b", "Failed", "an earlier pod of that name", 50),
    event("uid-pool-engine-0-b", "Pod", "pool-engine-0-b", "Pulled", "a Normal event", 10, "Normal"),
]


def _selected(selector: str) -> list[dict[str, Any]]:
    """The field selector as the API server applies it to events (conjunction of equalities)."""
    wanted = dict(part.split("=", 1) for part in selector.split(","))

    def field(ev: dict[str, Any], key: str) -> str:
        if key.startswith("involvedObject."):
            return str(ev["involvedObject"].get(key.split(".", 1)[1]))
        return str(ev.get(key))

    return [e for e in EVENTS if all(field(e, k) == v for k, v in wanted.items())]


class Kube:
    def __init__(self) -> None:
        self.selectors: list[str] = []

    def request(self, method: str, path: str, *, query: Any = None, **_: Any) -> dict[str, Any]:
        if path.endswith("/inferencereplicas/pool"):
            return replica()
        if path.endswith("/pods"):
            return {"items": [p for p in pods() if p["metadata"]["labels"]["ome.io/instance-index"] == "0"]}
        if path.endswith("/events"):
            self.selectors.append(query["fieldSelector"])
            return {"items": _selected(query["fieldSelector"])}
        raise AssertionError(path)

    def close(self) -> None:
        pass


def test_instance_status_shows_only_this_replicas_and_these_pods_warning_events() -> None:
    kube = Kube()
    out = io.StringIO()
    code = main(
        ["instance", "status", "ir/pool", "0", "-n", NS, "-o", "json"],
        out=out,
        err=io.StringIO(),
        connect=lambda _a: kube,  # type: ignore[arg-type,return-value]
    )
    assert code == 0
    shown = [e["message"] for e in json.loads(out.getvalue())["content"]["warningEvents"]]
    assert shown == ["this replica", "this pod"]  # oldest first
    assert (
        f"involvedObject.kind=InferenceReplica,involvedObject.name=pool,involvedObject.uid={UID},type=Warning"
        in kube.selectors
    )
