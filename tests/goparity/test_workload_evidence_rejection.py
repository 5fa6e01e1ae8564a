"""OME's ``workload/evidence/rejection_test.go``: how a refused pod create is read.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/rejection_test.go`` @ dcfb4135 (the
listed one of two stored versions), against ``rejection.go`` @ 58a57f25 (the version read of two
stored; read whole: ``ClassifyAPIError``, ``AdmissionUnavailable``, ``apiErrorMessage``).
Ours reads two of Go's classes, at the executor's create (``cluster/executor.py``): the
ResourceQuota refusal (:func:`omereconcile.planner.quota.is_quota_refusal`, the ``QuotaExceeded``
hold) and the unreachable webhook (``admission_hold.is_admission_unavailable``, pinned by the
``holds/admission_test.go`` port). Every other refused create stops the pass and the next pass
retries it, which is Go's ``APIRejectionTransient`` reading.

Mapped (2 of 12): the quota entry and the plain-Forbidden entry of ``TestClassifyAPIError``. Not
mappable (10, listed in ``docs/goparity.md``): ours has no ``PermanentWorkload``
(``InvalidPodSpec``), ``PermanentEnvironment`` (``NamespaceTerminating``) or ``Throttled`` class (2
entries), so those entries have nothing to run against; the transient entries for Conflict,
AlreadyExists, NotFound, an unknown and a nil error are Go error values (ours: ``AlreadyExists`` on a
create is an earlier pass's pod, the rest stop the pass); ``TestClassifyAPIError_WrappedError``
unwraps a Go error chain (ours reads the status and message of the one ``ApiError``).
"""

from __future__ import annotations

from omereconcile.planner.quota import is_quota_refusal

GO = "ome-projects/ome pkg/controller/v1beta1/workload/evidence/rejection_test.go @ dcfb4135"


def _forbidden(reason: str) -> str:
    """The message ``apierrors.NewForbidden(pods, name, errors.New(reason))`` carries."""
    return f'pods "engine-0-default-0" is forbidden: {reason}'


def test_quota_rejection_is_capacity_blocked() -> None:
    """``TestClassifyAPIError`` "quota rejection is capacity-blocked": a 403 whose message names the
    exceeded quota is the capacity refusal (ours: the ``QuotaExceeded`` hold)."""
    message = _forbidden(
        "exceeded quota: team-quota, requested: requests.nvidia.com/gpu=8, "
        "used: requests.nvidia.com/gpu=56, limited: requests.nvidia.com/gpu=64"
    )
    assert is_quota_refusal(403, message), GO


def test_plain_forbidden_stays_transient() -> None:
    """``TestClassifyAPIError`` "plain forbidden without a quota message stays transient": an RBAC
    refusal is not a quota wait."""
    assert not is_quota_refusal(403, _forbidden("user cannot create pods")), GO
