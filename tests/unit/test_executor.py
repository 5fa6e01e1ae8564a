"""The executor's contract (docs/planner.md): order, stop at the first failure, preconditions, idempotent creates."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.cluster.executor import Executor
from omereconcile.cluster.kube import AlreadyExists, Conflict, Forbidden, Invalid, NotFound

NS = "llama-demo"
REPLICA: dict[str, Any] = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "InferenceReplica",
    "metadata": {
        "name": "llama-pool",
        "namespace": NS,
        "uid": "u-1",
        "resourceVersion": "10",
        "finalizers": [],
    },
    "spec": {"component": "engine"},
    "status": {"replicas": 1},
}


class FakeKube:
    """Records requests; ``fail`` maps (verb, path suffix) to an exception to raise once matched."""

    def __init__(self, fail: dict[tuple[str, str], Exception] | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail = fail or {}

    def _do(self, verb: str, path: str, body: Any = None) -> dict[str, Any]:
        self.calls.append((verb, path, body))
        for (v, suffix), exc in self.fail.items():
            if v == verb and path.endswith(suffix):
                raise exc
        if verb in ("PUT", "PATCH") and "inferencereplicas" in path:
            out = dict(body)
            out.setdefault("metadata", {})
            out["metadata"] = {**REPLICA["metadata"], **out["metadata"], "resourceVersion": "11"}
            return out
        return {}

    def post(self, path: str, body: Any, **q: Any) -> dict[str, Any]:
        return self._do("POST", path, body)

    def put(self, path: str, body: Any, **q: Any) -> dict[str, Any]:
        return self._do("PUT", path, body)

    def patch(self, path: str, body: Any, content_type: str = "", **q: Any) -> dict[str, Any]:
        return self._do("PATCH", path, body)

    def delete(self, path: str, body: Any = None, **q: Any) -> dict[str, Any]:
        return self._do("DELETE", path, body)


def _exec(kube: FakeKube, *acts: A.Action) -> Any:
    ex = Executor(kube, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    return ex.execute(A.Plan(tuple(acts)), REPLICA)


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}}


def test_create_pod_already_exists_counts_as_done_and_the_pass_goes_on() -> None:
    kube = FakeKube({("POST", "/pods"): AlreadyExists(409, "AlreadyExists", "exists")})
    res = _exec(kube, A.CreatePod("p0", _pod("p0"), "r"), A.RecordEvent("Normal", "InstanceCreated", "m"))
    assert res.ok
    assert [c[0] for c in kube.calls] == ["POST", "POST"]
    assert kube.calls[1][1] == f"/api/v1/namespaces/{NS}/events"


def test_status_conflict_stops_the_pass_before_any_pod_write() -> None:
    kube = FakeKube({("PUT", "/status"): Conflict(409, "Conflict", "modified")})
    res = _exec(kube, A.WriteStatus({"replicas": 2}, "r"), A.CreatePod("p1", _pod("p1"), "r"))
    assert not res.ok
    assert res.conflict
    assert isinstance(res.failed, A.WriteStatus)
    assert [c[0] for c in kube.calls] == ["PUT"]  # the pod create never ran


def test_status_is_written_through_the_subresource_pinned_to_the_read_object() -> None:
    kube = FakeKube()
    _exec(kube, A.WriteStatus({"replicas": 2, "conditions": ({"type": "Ready"},)}, "r"))
    verb, path, body = kube.calls[0]
    assert (verb, path) == (
        "PUT",
        f"/apis/ome.io/v1beta1/namespaces/{NS}/inferencereplicas/llama-pool/status",
    )
    assert body["metadata"]["resourceVersion"] == "10"
    assert body["metadata"]["uid"] == "u-1"
    assert body["status"] == {"replicas": 2, "conditions": [{"type": "Ready"}]}
    assert REPLICA["status"] == {"replicas": 1}  # the observed object is not mutated


def test_gate_patch_writes_only_the_serving_condition_pinned_to_uid_and_resource_version() -> None:
    kube = FakeKube()
    _exec(kube, A.SetServingGate("p0", "pod-uid", "42", False, "drain"))
    verb, path, body = kube.calls[0]
    assert (verb, path) == ("PATCH", f"/api/v1/namespaces/{NS}/pods/p0/status")
    assert body["metadata"] == {"uid": "pod-uid", "resourceVersion": "42"}
    assert [c["type"] for c in body["status"]["conditions"]] == ["ome.io/serving"]
    assert body["status"]["conditions"][0]["status"] == "False"
    assert set(body) == {"metadata", "status"}


def test_gate_patch_sends_the_planners_whole_condition_message_included() -> None:
    holds = '[{"userAgent":"Delete-drain","key":"0"}]'
    kube = FakeKube()
    act = A.SetServingGate(
        "p0",
        "u",
        "1",
        False,
        "drain",
        condition_reason="NotReady",
        message=holds,
        last_transition_time="2026-01-01T00:00:00Z",
    )
    _exec(kube, act)
    (cond,) = kube.calls[0][2]["status"]["conditions"]
    assert cond == {
        "type": "ome.io/serving",
        "status": "False",
        "reason": "NotReady",
        "message": holds,
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }
    kube = FakeKube()
    _exec(kube, A.SetServingGate("p0", "u", "2", True, "serve", condition_reason="Serving"))
    (cond,) = kube.calls[0][2]["status"]["conditions"]
    # An empty message is sent, not omitted: a strategic merge would otherwise keep the old holds.
    assert (cond["status"], cond["reason"], cond["message"]) == ("True", "Serving", "")


@pytest.mark.parametrize("exc", [Conflict(409, "Conflict", "rv"), Invalid(422, "Invalid", "uid immutable")])
def test_a_stale_gate_write_is_a_conflict_to_replan(exc: Exception) -> None:
    res = _exec(FakeKube({("PATCH", "/status"): exc}), A.SetServingGate("p0", "u", "1", True, "r"))
    assert res.conflict


def test_delete_pod_sends_uid_and_resource_version_preconditions_and_not_found_is_done() -> None:
    kube = FakeKube({("DELETE", "/pods/p0"): NotFound(404, "NotFound", "gone")})
    res = _exec(kube, A.DeletePod("p0", "pod-uid", "7", "drained"))
    assert res.ok
    assert kube.calls[0][2]["preconditions"] == {"uid": "pod-uid", "resourceVersion": "7"}


def test_event_and_prune_failures_never_fail_the_pass() -> None:
    kube = FakeKube(
        {
            ("POST", "/events"): Forbidden(403, "Forbidden", "no"),
            ("DELETE", "/controllerrevisions/old"): Conflict(409, "Conflict", "x"),
        }
    )
    res = _exec(kube, A.DeleteRevision("old", "prune"), A.RecordEvent("Warning", "X", "m"))
    assert res.ok
    assert len(res.applied) == 0


def test_finalizer_patches_are_pinned_to_the_resource_version_and_follow_a_status_write() -> None:
    kube = FakeKube()
    _exec(kube, A.WriteStatus({"replicas": 0}, "r"), A.RemoveFinalizer("ome.io/ir-teardown", "done"))
    # The finalizer was not on the object: nothing to remove, no request.
    assert [c[0] for c in kube.calls] == ["PUT"]
    kube = FakeKube()
    _exec(kube, A.AddFinalizer("ome.io/ir-teardown", "first"))
    assert kube.calls[0][2] == {"metadata": {"finalizers": ["ome.io/ir-teardown"], "resourceVersion": "10"}}


def test_remove_annotation_is_a_pinned_merge_patch_and_idempotent() -> None:
    kube = FakeKube()
    replica = {**REPLICA, "metadata": {**REPLICA["metadata"], "annotations": {"ome.io/reset-instances": "0"}}}
    ex = Executor(kube, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    act = A.RemoveAnnotation("ome.io/reset-instances", "answered")
    res = ex.execute(A.Plan((act, A.RecordEvent("Normal", "InstancesReset", "m"))), replica)
    assert res.ok
    verb, path, body = kube.calls[0]
    assert (verb, path) == ("PATCH", f"/apis/ome.io/v1beta1/namespaces/{NS}/inferencereplicas/llama-pool")
    assert body == {"metadata": {"annotations": {"ome.io/reset-instances": None}, "resourceVersion": "10"}}
    # The event goes on the replica as the removal returned it.
    assert kube.calls[1][2]["involvedObject"]["resourceVersion"] == "11"
    # Already removed (an earlier pass answered it): nothing is sent.
    kube = FakeKube()
    assert _exec(kube, act).ok
    assert kube.calls == []
    # A concurrent edit of the replica: 409, the pass stops before the answer's events.
    kube = FakeKube({("PATCH", "/inferencereplicas/llama-pool"): Conflict(409, "Conflict", "modified")})
    res = ex.__class__(kube, reporting_instance="t").execute(
        A.Plan((act, A.RecordEvent("Normal", "InstancesReset", "m"))), replica
    )
    assert res.conflict
    assert [c[0] for c in kube.calls] == ["PATCH"]


def test_event_lands_on_the_replica() -> None:
    kube = FakeKube()
    _exec(kube, A.RecordEvent("Warning", "ModelNotFound", "model x not found"))
    ev = kube.calls[0][2]
    assert ev["involvedObject"]["kind"] == "InferenceReplica"
    assert ev["involvedObject"]["uid"] == "u-1"
    assert (ev["type"], ev["reason"], ev["message"]) == ("Warning", "ModelNotFound", "model x not found")
    assert ev["source"]["component"] == "omereconcile"


class LedgerKube(FakeKube):
    """A ConfigMap endpoint that answers each write with the next resourceVersion."""

    version = 40

    def _do(self, verb: str, path: str, body: Any = None) -> dict[str, Any]:
        out = super()._do(verb, path, body)
        if "/configmaps" in path:
            self.version += 1
            return {"metadata": {"resourceVersion": str(self.version)}}
        return out

    def get_or_none(self, path: str, **q: Any) -> dict[str, Any] | None:
        self.calls.append(("GET", path, None))
        return {"metadata": {"name": path.rsplit("/", 1)[-1], "resourceVersion": "5", "labels": {"x": "y"}}}


LABELS = {"ome.io/managed-by": "OMENative"}


def _ledger(rv: str | None, chained: bool = False) -> A.WriteLedger:
    return A.WriteLedger("llama-pool-ome-migration-audit", '{"entries":null}', rv, LABELS, None, "r", chained)


def test_ledger_writes_are_compare_and_swap_and_a_chained_one_follows_the_first() -> None:
    kube = LedgerKube()
    res = _exec(kube, _ledger(None), _ledger(None, chained=True))
    assert res.ok
    (create, patch) = kube.calls
    assert (create[0], create[1]) == ("POST", f"/api/v1/namespaces/{NS}/configmaps")
    assert create[2]["data"] == {"history.json": '{"entries":null}'}
    # The second write is pinned to the version the create left, not to what the pass read.
    assert (patch[0], patch[2]["metadata"]) == ("PATCH", {"resourceVersion": "41"})


@pytest.mark.parametrize(
    ("verb", "exc"),
    [("POST", AlreadyExists(409, "AlreadyExists", "exists")), ("PATCH", NotFound(404, "NotFound", "gone"))],
)
def test_a_ledger_written_or_deleted_since_it_was_read_replans(verb: str, exc: Exception) -> None:
    kube = LedgerKube({(verb, "-ome-migration-audit" if verb == "PATCH" else "/configmaps"): exc})
    res = _exec(kube, _ledger(None if verb == "POST" else "7"), A.WriteStatus({}, "s"))
    assert res.conflict
    if verb == "PATCH":
        assert [c[0] for c in kube.calls] == [verb]
        return
    # A ConfigMap of that name the label-selected watch cannot see gets the label, pinned to its
    # version, so the next pass reads it instead of creating again.
    assert [c[0] for c in kube.calls] == ["POST", "GET", "PATCH"]
    assert kube.calls[2][2] == {"metadata": {"resourceVersion": "5", "labels": LABELS}}


def test_the_executor_records_every_advisory_the_plan_carries() -> None:
    """The newest Go says ``MaybeNoGangScheduler`` once per incarnation of a row through the row's
    ``announced`` record (``gang/gang.go`` @ 4dfb96b1, ``status/announced.go``), which the planner
    writes: the executor records what the plan carries and keeps no per-process memory of its own (it
    did, after the older Go's ``maybeNoGangSchedulerSeen``), so a re-announcement the record earns
    (a rebuilt Instance) reaches the API in the same process."""
    kube = FakeKube()
    ex = Executor(kube, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    first = A.RecordEvent("Warning", "MaybeNoGangScheduler", "m")
    again = A.RecordEvent("Warning", "MaybeNoGangScheduler", "m again")
    for advisory in (first, again):
        assert ex.execute(A.Plan((advisory,)), REPLICA).ok
    sent = [
        c[2]["message"] for c in kube.calls if c[0] == "POST" and c[2].get("reason") == "MaybeNoGangScheduler"
    ]
    assert sent == ["m", "m again"]
