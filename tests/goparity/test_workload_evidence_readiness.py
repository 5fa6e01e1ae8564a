"""OME's ``workload/evidence/readiness_test.go``: the two readiness limbos, disjoint.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/readiness_test.go`` @ dcfb4135 (one
stored version), with the pod shapes of ``helpers_external_test.go`` (``runningNotReadyPod``,
``gateNotFoldedPod``, ``servingPod``). Go's ``PodRunningNotReady`` and ``PodGateNotFolded`` are read
here off :func:`omereconcile.planner.podstate.limbo_failure`, which records ``ContainersNotReady`` for
the first shape and ``ReadinessGateNotSatisfied`` for the second (``FirstRunningNotReadyPod``, then
``FirstGateNotFoldedPod``). Pods are built as the API returns them and read through
:meth:`PodView.from_dict`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from omereconcile.planner.podstate import limbo_failure
from omereconcile.simulate.cluster import T0
from omereconcile.world import PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/evidence/readiness_test.go @ dcfb4135"
SINCE = T0
NOW = T0 + timedelta(minutes=5)


def _pod(
    conditions: list[dict[str, Any]], ready: bool, gates: bool = False, waiting: str | None = None
) -> PodView:
    state: dict[str, Any] = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    spec: dict[str, Any] = {"readinessGates": [{"conditionType": c.SERVING_GATE}]} if gates else {}
    return PodView.from_dict(
        {
            "metadata": {
                "name": "engine-0-default-0",
                "creationTimestamp": format_time(SINCE - timedelta(minutes=1)),
            },
            "spec": spec,
            "status": {
                "phase": "Running",
                "conditions": [{**cd, "lastTransitionTime": format_time(SINCE)} for cd in conditions],
                "containerStatuses": [{"name": "main", "ready": ready, "state": state}],
            },
        }
    )


def running_not_ready(waiting: str | None = None) -> PodView:
    """Go's ``runningNotReadyPod``: Running, its container running and not ready, ContainersReady False."""
    cond = {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady"}
    return _pod([cond], ready=False, waiting=waiting)


def gate_not_folded(waiting: str | None = None) -> PodView:
    """Go's ``gateNotFoldedPod``: containers ready, a declared readiness gate unsatisfied, Ready False."""
    conds = [
        {"type": "ContainersReady", "status": "True"},
        {"type": "Ready", "status": "False", "reason": "ReadinessGatesNotReady"},
    ]
    return _pod(conds, ready=True, gates=True, waiting=waiting)


def serving() -> PodView:
    """Go's ``servingPod``: containers ready, the serving gate True, Ready True."""
    conds = [
        {"type": "ContainersReady", "status": "True"},
        {"type": c.SERVING_GATE, "status": "True"},
        {"type": "Ready", "status": "True"},
    ]
    return _pod(conds, ready=True, gates=True)


def _limbo(pod: PodView) -> str | None:
    record = limbo_failure([pod], NOW)
    return None if record is None else str(record["reason"])


def test_pod_running_not_ready_excludes_waiting_containers() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/evidence/readiness_test.go @ dcfb4135,
    TestPodRunningNotReady_ExcludesWaitingContainers: a Running pod whose containers started but
    never report ContainersReady is the limbo; a serving pod is not; one parked in CrashLoopBackOff is
    the stuck-pod evidence's, not this. (Its nil-pod assertion has no counterpart.)"""
    assert _limbo(running_not_ready()) == "ContainersNotReady"
    assert _limbo(serving()) is None
    assert _limbo(running_not_ready(waiting="CrashLoopBackOff")) is None


def test_pod_gate_not_folded_is_disjoint_from_running_not_ready() -> None:
    """Go: same file, TestPodGateNotFolded_IsDisjointFromRunningNotReady: containers ready with Ready
    False behind a declared gate is the gate limbo, and only that one; the containers-not-ready pod
    and a serving pod are not; a CrashLoopBackOff container is a kubelet wedge, not a gate limbo."""
    assert _limbo(gate_not_folded()) == "ReadinessGateNotSatisfied"
    assert _limbo(running_not_ready()) != "ReadinessGateNotSatisfied"
    assert _limbo(serving()) is None
    assert _limbo(gate_not_folded(waiting="CrashLoopBackOff")) is None
