"""The executor's record of a ResourceQuota refusal (``planner/quota.py``, OME ``RecordCapacityRefusal``)."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest
from test_executor import REPLICA, FakeKube

from omereconcile import actions as A
from omereconcile.cluster.executor import Executor
from omereconcile.cluster.kube import Forbidden, Invalid
from omerender import constants as c

T = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)
QUOTA_MSG = (
    'pods "llama-pool-engine-1-default-0" is forbidden: exceeded quota: gpu, requested: '
    "requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8"
)


def _replica(waiting: str | None = None, refused: bool = False) -> dict[str, Any]:
    rep = copy.deepcopy(REPLICA)
    op: dict[str, Any] = {"id": "1-create-1", "type": "Create", "step": "CreatePods", "targetRevision": "r"}
    if waiting:
        op["waiting"] = waiting
    if refused:
        op["capacityRefusedAt"] = "2025-01-01T11:00:00Z"
    rep["status"] = {
        "instanceStatuses": [
            {"index": 0, "phase": "Ready"},
            {"index": 1, "phase": "Creating", "operation": op},
        ]
    }
    return rep


def _create() -> A.CreatePod:
    pod = {"metadata": {"name": "llama-pool-engine-1-default-0", "labels": {c.LABEL_INSTANCE_INDEX: "1"}}}
    return A.CreatePod("llama-pool-engine-1-default-0", pod, "create")


def _run(rep: dict[str, Any], message: str = QUOTA_MSG) -> tuple[FakeKube, Any]:
    kube = FakeKube({("POST", "/pods"): Forbidden(403, "Forbidden", message)})
    res = Executor(kube, reporting_instance="test", clock=lambda: T).execute(A.Plan((_create(),)), rep)  # type: ignore[arg-type]
    return kube, res


def _events(kube: FakeKube) -> list[dict[str, Any]]:
    return [b for v, p, b in kube.calls if v == "POST" and p.endswith("/events")]


def test_a_quota_refusal_is_recorded_on_the_operation_and_announced_once() -> None:
    kube, res = _run(_replica())
    assert isinstance(res.error, Forbidden)  # the pass still ends on the refusal
    assert not res.conflict
    (put,) = [b for v, p, b in kube.calls if v == "PUT"]
    op = put["status"]["instanceStatuses"][1]["operation"]
    assert op["capacityRefusedAt"] == "2025-01-01T12:00:00Z"
    assert "waiting" not in op  # the next pass's planner reports the token
    assert put["metadata"]["resourceVersion"] == "10"  # pinned to the replica as read
    (event,) = _events(kube)
    assert (event["type"], event["reason"]) == ("Normal", "InstanceQuotaBlocked")
    assert event["message"] == f"OMENative component=engine instance=1 waiting on capacity: {QUOTA_MSG}"


@pytest.mark.parametrize("waiting", ["QuotaExceeded", "Unschedulable"])
def test_no_announcement_when_the_row_already_reports_a_wait(waiting: str) -> None:
    kube, _ = _run(_replica(waiting=waiting))
    assert [v for v, p, _ in kube.calls if v == "PUT"] == ["PUT"]
    assert _events(kube) == []


def test_a_paused_row_hears_of_the_refusal() -> None:
    kube, _ = _run(_replica(waiting="Paused"))
    assert len(_events(kube)) == 1


def test_an_episode_already_recorded_writes_nothing() -> None:
    kube, res = _run(_replica(refused=True))
    assert isinstance(res.error, Forbidden)
    assert [v for v, _, _ in kube.calls] == ["POST"]


def test_an_rbac_refusal_is_an_ordinary_error() -> None:
    kube, res = _run(_replica(), message='pods is forbidden: User "x" cannot create resource "pods"')
    assert isinstance(res.error, Forbidden)
    assert [v for v, _, _ in kube.calls] == ["POST"]


INVALID_MSG = (
    'Pod "llama-pool-engine-1-default-0" is invalid: spec.containers[0].resources.limits: '
    'Invalid value: "-1": must be greater than or equal to 0'
)
TERMINATING_MSG = (
    'pods "llama-pool-engine-1-default-0" is forbidden: unable to create new content in namespace '
    "default because it is being terminated"
)


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        pytest.param(
            Invalid(422, "Invalid", INVALID_MSG, {"details": {"causes": [{"type": "FieldValueInvalid"}]}}),
            "InvalidPodSpec",
            id="invalid",
        ),
        pytest.param(
            Forbidden(
                403, "Forbidden", TERMINATING_MSG, {"details": {"causes": [{"type": "NamespaceTerminating"}]}}
            ),
            "NamespaceTerminating",
            id="namespace-terminating",
        ),
    ],
)
def test_a_create_refused_for_good_is_recorded_for_the_next_pass_to_fail_the_attempt(
    error: Exception, reason: str
) -> None:
    """Go ``ops/create.go`` ``createMissingPods`` on ``ClassifyAPIError``'s permanent classes: the
    executor records the refusal on the row (``planner/rejection.py``) and the pass ends on it; no
    quota record, no event from the executor (the disposing pass warns ``InstanceRejected``)."""
    kube = FakeKube({("POST", "/pods"): error})
    res = Executor(kube, reporting_instance="test", clock=lambda: T).execute(A.Plan((_create(),)), _replica())  # type: ignore[arg-type]
    assert res.error is error
    (put,) = [b for v, p, b in kube.calls if v == "PUT"]
    row = put["status"]["instanceStatuses"][1]
    assert row["operation"]["waiting"] == reason
    assert "capacityRefusedAt" not in row["operation"]
    assert row["lastFailure"] == {"reason": reason, "message": error.message, "time": "2025-01-01T12:00:00Z"}  # type: ignore[attr-defined]
    assert _events(kube) == []


def test_a_plain_forbidden_create_records_nothing() -> None:
    """An RBAC refusal is neither quota nor a permanent rejection: the pass ends, nothing recorded."""
    kube, res = _run(_replica(), 'pods "x" is forbidden: user cannot create pods')
    assert isinstance(res.error, Forbidden)
    assert [v for v, _, _ in kube.calls] == ["POST"]
