"""OME's ``workload/types/scheduling_test.go``: the scheduler's verdict on a pod.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/scheduling_test.go`` @ 58a57f25 (the one read
of two stored versions, read whole), over ``types/scheduling.go`` (``PodUnschedulable``,
``FirstUnschedulablePod``). Ours: ``planner/holds.py`` ``unplaced`` and ``first_unplaced``.
``TestPodAdmissionGated`` is, body for body, the one of ``workload/gated_deadline_test.go`` and counted
there; ``TestOperationExternallyHeld_AdmissionUnavailable`` is a Go predicate (the admission wait
parking the clock is ported with ``holds/admission_test.go``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from omereconcile.planner.holds import first_unplaced, unplaced
from omereconcile.world import PodCondition, PodView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/scheduling_test.go @ 58a57f25"
MESSAGE = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu"
SINCE = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _unschedulable(name: str) -> PodView:
    """Go's ``unschedulablePod``: Pending, ruled out by the scheduler with its own message."""
    cond = PodCondition(
        "PodScheduled", "False", last_transition_time=SINCE, reason="Unschedulable", message=MESSAGE
    )
    return PodView(name, f"uid-{name}", "1", {}, phase="Pending", conditions=(cond,))


SCHEDULED = PodView("placed", "uid-placed", "1", {}, conditions=(PodCondition("PodScheduled", "True"),))


def test_pod_unschedulable() -> None:
    """Go: scheduling_test.go @ 58a57f25, TestPodUnschedulable: only PodScheduled=False with the
    Unschedulable reason counts, with the scheduler's message and the transition the grace is measured
    from; a scheduled pod and one with no condition do not (Go's nil pod: ours asks about none)."""
    verdict = unplaced(_unschedulable("engine-0-default-0"))
    assert verdict is not None
    assert (verdict.message, verdict.since) == (MESSAGE, SINCE)
    assert unplaced(SCHEDULED) is None
    assert unplaced(PodView("bare", "uid-bare", "1", {})) is None
    assert unplaced(None) is None


def test_first_unschedulable_pod_is_chosen_by_name() -> None:
    """Go: scheduling_test.go @ 58a57f25, TestFirstUnschedulablePod: of two unplaceable gang members the
    lowest name is reported (stable across passes); a placed pod is none."""
    b, a = _unschedulable("engine-0-worker-1"), _unschedulable("engine-0-worker-0")
    chosen = first_unplaced([b, a])
    assert chosen is not None
    assert chosen.name == a.name
    assert first_unplaced([SCHEDULED]) is None
