"""OME's ``workload/gated_deadline_test.go``: the one test not also in ``escalation/deadline_test.go``.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/gated_deadline_test.go`` @ ae683e3f (the one
stored version, read whole). Nine of its ten tests (``TestReconcileGatedDeadlines_*``,
``TestGatedInstance_NotFailedByDeadlineBackstop``, ``TestQuotaBlockedInstance_NotFailedByDeadlineBackstop``,
``TestGangSurgeSource_HeldWhileItsSurgeWaitsOnQuota``) are, body for body, tests of
``workload/escalation/deadline_test.go`` @ 8263d0c7, ported in ``test_workload_escalation_deadline.py``
and counted there. The tenth, ``TestPodAdmissionGated`` (Go ``PodAdmissionGated``), is ours
:attr:`omereconcile.world.PodView.admission_gated`.
"""

from __future__ import annotations

from omereconcile.world import PodView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/gated_deadline_test.go @ ae683e3f"


def test_a_pod_is_admission_gated_while_it_carries_a_scheduling_gate() -> None:
    """Go: gated_deadline_test.go @ ae683e3f, TestPodAdmissionGated: a pod with a scheduling gate (a
    Kueue admission gate) is gated, one without is not. Go's nil pod has no counterpart (ours never
    asks about an absent pod)."""
    gated = PodView("p-gated", "u1", "1", {}, scheduling_gates=("kueue.x-k8s.io/admission",))
    assert gated.admission_gated is True
    assert PodView("p-open", "u2", "1", {}).admission_gated is False
