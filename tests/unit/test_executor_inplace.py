"""The executor's in-place write and its admission refusal (``patch_pod_in_place``,
``planner/admission_hold.py``)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from test_executor import NS, REPLICA, FakeKube, _exec, _pod

from omereconcile import actions as A
from omereconcile.cluster.executor import Executor
from omereconcile.cluster.kube import ApiError, Invalid

UNREACHABLE = 'Internal error occurred: failed calling webhook "m.example.com": connection refused'


def _replica_with_row() -> dict[str, Any]:
    replica = copy.deepcopy(REPLICA)
    replica["status"] = {
        "instanceStatuses": [
            {
                "index": 0,
                "phase": "Updating",
                "operation": {"type": "Update", "step": "InPlace", "deadline": "x"},
            }
        ]
    }
    return replica


def test_the_patch_names_only_the_changed_containers_and_is_pinned() -> None:
    kube = FakeKube()
    act = A.PatchPodInPlace(
        "p0", "uid-0", "42", "r", images={"engine": "e:v2"}, annotations={"k": None}, labels={"l": "v"}
    )
    assert _exec(kube, act).ok
    verb, path, body = kube.calls[0]
    assert (verb, path) == ("PATCH", f"/api/v1/namespaces/{NS}/pods/p0")
    assert body == {
        "metadata": {
            "uid": "uid-0",
            "resourceVersion": "42",
            "annotations": {"k": None},
            "labels": {"l": "v"},
        },
        "spec": {"containers": [{"name": "engine", "image": "e:v2"}]},
    }


def test_an_unreachable_webhook_is_recorded_on_the_row_and_announced() -> None:
    kube = FakeKube({("POST", "/pods"): ApiError(500, "InternalError", UNREACHABLE)})
    pod = _pod("p0")
    pod["metadata"]["labels"] = {"ome.io/instance-index": "0"}
    ex = Executor(kube, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    res = ex.execute(A.Plan((A.CreatePod("p0", pod, "r"),)), _replica_with_row())
    assert not res.ok
    verbs = [(c[0], c[1].rsplit("/", 1)[-1]) for c in kube.calls]
    assert verbs == [("POST", "pods"), ("PUT", "status"), ("POST", "events")]
    row = kube.calls[1][2]["status"]["instanceStatuses"][0]
    assert row["operation"]["waiting"] == "AdmissionUnavailable"
    assert "deadline" not in row["operation"]
    assert row["lastFailure"]["message"] == UNREACHABLE
    event = kube.calls[2][2]
    assert (event["reason"], event["type"]) == ("InstanceAdmissionUnavailable", "Normal")


def test_a_refused_in_place_drain_is_the_admission_wait_and_other_gate_writes_are_not() -> None:
    """Go ``update_inplace.go``: ``MarkPodNotServing`` refused for an unreachable webhook is recorded
    with ``recordAdmissionWait``; any other gate write's refusal is an ordinary error."""
    refused = ApiError(500, "InternalError", UNREACHABLE)
    drain = A.SetServingGate("p0", "uid-0", "42", False, "r", admission_wait_index=0)
    kube = FakeKube({("PATCH", "/p0/status"): refused})
    ex = Executor(kube, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    assert not ex.execute(A.Plan((drain,)), _replica_with_row()).ok
    assert [(c[0], c[1].rsplit("/", 1)[-1]) for c in kube.calls] == [
        ("PATCH", "status"),
        ("PUT", "status"),
        ("POST", "events"),
    ]
    assert kube.calls[1][2]["status"]["instanceStatuses"][0]["operation"]["waiting"] == "AdmissionUnavailable"
    other = FakeKube({("PATCH", "/p0/status"): refused})
    plain = A.SetServingGate("p0", "uid-0", "42", False, "r")
    assert not _exec(other, plain).ok
    assert [c[0] for c in other.calls] == ["PATCH"]


REJECTED = (
    'Pod "p0" is invalid: spec.containers[0].image: Invalid value: "e:v2": must be a valid image reference'
)


def test_an_invalid_in_place_patch_is_recorded_for_the_next_pass_to_fail_the_attempt() -> None:
    """Go ``update_inplace.go`` ``inPlaceUpdate``'s ``rejected``: a 422 Invalid on the patch ends the
    attempt (``planner/rejection.py``). The executor records it on the row; a 422 naming only
    ``metadata.uid`` (the UID precondition meeting a replaced pod) is a conflict and records nothing."""
    body = {"details": {"causes": [{"field": "spec.containers[0].image", "message": "must be valid"}]}}
    act = A.PatchPodInPlace("p0", "uid-0", "42", "r", images={"engine": "e:v2"}, index=0)
    kube = FakeKube({("PATCH", "/pods/p0"): Invalid(422, "Invalid", REJECTED, body)})
    ex = Executor(kube, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    res = ex.execute(A.Plan((act,)), _replica_with_row())
    assert not res.ok
    assert res.conflict
    assert [(c[0], c[1].rsplit("/", 1)[-1]) for c in kube.calls] == [("PATCH", "p0"), ("PUT", "status")]
    row = kube.calls[1][2]["status"]["instanceStatuses"][0]
    assert row["operation"]["waiting"] == "InvalidPodSpec"
    assert row["lastFailure"] == {
        "reason": "InvalidPodSpec",
        "message": REJECTED,
        "time": "2025-01-01T00:00:00Z",
    }

    uid = {"details": {"causes": [{"field": "metadata.uid", "message": "field is immutable"}]}}
    moved = FakeKube({("PATCH", "/pods/p0"): Invalid(422, "Invalid", "metadata.uid: immutable", uid)})
    ex = Executor(moved, reporting_instance="test", clock=lambda: datetime(2025, 1, 1, tzinfo=UTC))  # type: ignore[arg-type]
    assert ex.execute(A.Plan((act,)), _replica_with_row()).conflict
    assert [c[0] for c in moved.calls] == ["PATCH"]
