"""Events go through client-go's correlator: repeats are counted, variants combined, bursts dropped."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from omereconcile import actions as A
from omereconcile.cluster.events import AGGREGATE_PREFIX, EventCorrelator
from omereconcile.cluster.executor import Executor
from omereconcile.cluster.kube import STRATEGIC_MERGE_PATCH, NotFound

NS = "llama-demo"
EVENTS = f"/api/v1/namespaces/{NS}/events"


def _replica(name: str = "llama-pool", uid: str = "u-1") -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS, "uid": uid, "resourceVersion": "10"},
        "status": {},
    }


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class EventServer:
    """Stores events as the API server does: create answers with a resourceVersion, patch merges."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any, str]] = []
        self.stored: dict[str, dict[str, Any]] = {}
        self.rv = 100

    def post(self, path: str, body: Any, **q: Any) -> dict[str, Any]:
        self.calls.append(("POST", path, body, ""))
        self.rv += 1
        obj = copy.deepcopy(body)
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.stored[obj["metadata"]["name"]] = obj
        return copy.deepcopy(obj)

    def patch(self, path: str, body: Any, content_type: str = "", **q: Any) -> dict[str, Any]:
        self.calls.append(("PATCH", path, body, content_type))
        name = path.rsplit("/", 1)[-1]
        if name not in self.stored:
            raise NotFound(404, "NotFound", f'events "{name}" not found')
        self.rv += 1
        self.stored[name].update(copy.deepcopy(body))
        self.stored[name]["metadata"]["resourceVersion"] = str(self.rv)
        return copy.deepcopy(self.stored[name])


def _executor(server: EventServer, clock: Clock) -> Executor:
    return Executor(server, reporting_instance="host-a", clock=clock)  # type: ignore[arg-type]


def _record(ex: Executor, reason: str, message: str, replica: dict[str, Any] | None = None) -> None:
    res = ex.execute(A.Plan((A.RecordEvent("Normal", reason, message),)), replica or _replica())
    assert res.ok


def test_a_repeated_event_is_counted_on_the_existing_event() -> None:
    server, clock = EventServer(), Clock()
    ex = _executor(server, clock)
    _record(ex, "InstanceFailed", "Instance 0 failed")
    clock.tick(30)
    _record(ex, "InstanceFailed", "Instance 0 failed")
    assert [c[0] for c in server.calls] == ["POST", "PATCH"]
    _verb, path, patch, ctype = server.calls[1]
    (name,) = server.stored
    assert path == f"{EVENTS}/{name}"
    assert ctype == STRATEGIC_MERGE_PATCH
    assert patch == {"count": 2, "lastTimestamp": "2026-01-01T00:00:30Z", "message": "Instance 0 failed"}
    stored = server.stored[name]
    assert (stored["count"], stored["firstTimestamp"], stored["lastTimestamp"]) == (
        2,
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:30Z",
    )
    clock.tick(30)
    _record(ex, "InstanceFailed", "Instance 0 failed")
    assert server.stored[name]["count"] == 3
    assert len(server.stored) == 1


def _series(reason: str, message: str, n: int, gap: float) -> EventServer:
    """``n`` events of one reason, message ``message.format(i)``, ``gap`` seconds apart."""
    server, clock = EventServer(), Clock()
    ex = _executor(server, clock)
    for i in range(n):
        _record(ex, reason, message.format(i))
        clock.tick(gap)
    return server


def test_ten_variants_of_one_reason_become_one_combined_event() -> None:
    server = _series("RecreateUpdateCompleted", "OMENative engine/{} surge complete", 12, 1)
    verbs = [c[0] for c in server.calls]
    assert verbs == ["POST"] * 10 + ["PATCH"] * 2
    messages = [e["message"] for e in server.stored.values()]
    assert messages[:9] == [f"OMENative engine/{i} surge complete" for i in range(9)]
    combined = [e for e in server.stored.values() if e["message"].startswith(AGGREGATE_PREFIX)]
    assert len(combined) == 1
    assert len(server.stored) == 10
    assert combined[0]["count"] == 3
    assert combined[0]["message"] == AGGREGATE_PREFIX + "OMENative engine/11 surge complete"
    assert combined[0]["reason"] == "RecreateUpdateCompleted"


def test_variants_spread_beyond_ten_minutes_are_not_combined() -> None:
    # Each one more than the aggregation interval after the previous.
    server = _series("InstanceReady", "Instance {} ready", 12, 601)
    assert [c[0] for c in server.calls] == ["POST"] * 12
    assert not any(e["message"].startswith(AGGREGATE_PREFIX) for e in server.stored.values())


def test_other_reasons_and_types_are_kept_apart() -> None:
    server, clock = EventServer(), Clock()
    ex = _executor(server, clock)
    for i in range(9):
        _record(ex, "InstanceCreated", f"Instance {i} created")
        clock.tick(1)
    res = ex.execute(A.Plan((A.RecordEvent("Warning", "InstanceCreated", "Instance 9 created"),)), _replica())
    assert res.ok
    clock.tick(1)
    _record(ex, "InstanceReady", "Instance 9 ready")
    assert not any(e["message"].startswith(AGGREGATE_PREFIX) for e in server.stored.values())
    assert len(server.stored) == 11


def test_a_burst_past_25_per_replica_is_dropped_and_refills_one_per_five_minutes() -> None:
    server, clock = EventServer(), Clock()
    ex = _executor(server, clock)
    for i in range(30):
        _record(ex, f"Reason{i}", "m")  # distinct reasons: nothing combined
        clock.tick(0.001)
    assert len(server.calls) == 25
    _record(ex, "Other", "m", _replica("other-pool", "u-2"))  # another replica has its own budget
    assert len(server.calls) == 26
    clock.tick(299)
    _record(ex, "Late", "m")
    assert len(server.calls) == 26
    clock.tick(1)
    _record(ex, "Later", "m")
    assert len(server.calls) == 27
    assert server.calls[-1][2]["reason"] == "Later"


def test_a_counted_event_that_was_deleted_is_created_again() -> None:
    server, clock = EventServer(), Clock()
    ex = _executor(server, clock)
    _record(ex, "InstanceFailed", "Instance 0 failed")
    server.stored.clear()  # expired (the API server's event TTL) or deleted
    clock.tick(5)
    _record(ex, "InstanceFailed", "Instance 0 failed")
    assert [c[0] for c in server.calls] == ["POST", "PATCH", "POST"]
    (ev,) = server.stored.values()
    assert ev["count"] == 2
    assert "resourceVersion" not in server.calls[-1][2]["metadata"]
    clock.tick(5)
    _record(ex, "InstanceFailed", "Instance 0 failed")
    assert server.calls[-1][0] == "PATCH"
    assert ev["metadata"]["name"] in server.calls[-1][1]


def test_the_correlator_alone_keys_on_source_object_type_reason_and_message() -> None:
    clock = Clock()
    co = EventCorrelator(clock)
    ev = {
        "metadata": {"name": "x.1", "namespace": NS},
        "involvedObject": {
            "kind": "InferenceReplica",
            "namespace": NS,
            "name": "p",
            "uid": "u",
            "resourceVersion": "1",
        },
        "source": {"component": "omereconcile", "host": "h"},
        "type": "Normal",
        "reason": "R",
        "message": "m",
        "count": 1,
        "firstTimestamp": "t0",
        "lastTimestamp": "t0",
    }
    first = co.correlate(ev)
    assert first is not None
    assert first.patch is None
    moved = copy.deepcopy(ev)
    moved["involvedObject"]["resourceVersion"] = "2"  # the replica's version is not part of the key
    moved["lastTimestamp"] = "t1"
    second = co.correlate(moved)
    assert second is not None
    assert second.patch == {"count": 2, "lastTimestamp": "t1", "message": "m"}
    assert second.event["metadata"]["name"] == "x.1"
    assert second.event["firstTimestamp"] == "t0"
    other_host = copy.deepcopy(ev)
    other_host["source"]["host"] = "h2"  # another reconciler process records its own
    third = co.correlate(other_host)
    assert third is not None
    assert third.patch is None
