"""OME's ``workload/evidence/rejection_test.go``: how a refused pod create is read.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/rejection_test.go`` @ dcfb4135 (the
listed one of two stored versions), against ``rejection.go`` @ 58a57f25 (the version read of two
stored; read whole: ``ClassifyAPIError``, ``AdmissionUnavailable``, ``apiErrorMessage``).
Ours reads four of Go's classes, at the executor's create (``cluster/executor.py``): the
ResourceQuota refusal (:func:`omereconcile.planner.quota.is_quota_refusal`, the ``QuotaExceeded``
hold), the unreachable webhook (``admission_hold.is_admission_unavailable``, pinned by the
``holds/admission_test.go`` port) and the two permanent classes
(:func:`omereconcile.planner.rejection.create_rejection_reason`: ``InvalidPodSpec``,
``NamespaceTerminating``, the attempt then disposed as Go's ``disposeRejectedAttempt`` does). Every
other refused create stops the pass and the next pass retries it, which is Go's
``APIRejectionTransient`` reading.

Mapped (4 of 12): the invalid-pod-spec, namespace-terminating, quota and plain-Forbidden entries of
``TestClassifyAPIError``. Not mappable (8, listed in ``docs/goparity.md``): ours has no ``Throttled``
class (2 entries: a 429 or 503 ends the pass and the executor's backoff retries it); the transient entries for Conflict,
AlreadyExists, NotFound, an unknown and a nil error are Go error values (ours: ``AlreadyExists`` on a
create is an earlier pass's pod, the rest stop the pass); ``TestClassifyAPIError_WrappedError``
unwraps a Go error chain (ours reads the status and message of the one ``ApiError``).
"""

from __future__ import annotations

from omereconcile.planner.quota import is_quota_refusal
from omereconcile.planner.rejection import create_rejection_reason

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


def test_invalid_pod_spec_is_permanent_and_workload_caused() -> None:
    """``TestClassifyAPIError`` "invalid pod spec is permanent and workload-caused": the 422
    ``apierrors.NewInvalid`` returns (a ``FieldValueRequired`` cause on ``spec.containers``) is
    ``InvalidPodSpec``, the class that blames the revision."""
    body = {
        "reason": "Invalid",
        "details": {"causes": [{"type": "FieldValueRequired", "field": "spec.containers"}]},
    }
    assert create_rejection_reason(422, body) == "InvalidPodSpec", GO


def test_namespace_terminating_is_permanent_and_environment_caused() -> None:
    """``TestClassifyAPIError`` "namespace terminating is permanent and environment-caused": the 403
    carrying the ``NamespaceTerminating`` status cause is ``NamespaceTerminating``, read before the
    Forbidden could be taken for anything else; neither it nor the quota or plain Forbidden is read as
    the other."""
    body = {"reason": "Forbidden", "details": {"causes": [{"type": "NamespaceTerminating"}]}}
    assert create_rejection_reason(403, body) == "NamespaceTerminating", GO
    assert not is_quota_refusal(
        403, _forbidden("unable to create new content in namespace prod because it is being terminated")
    ), GO
    assert create_rejection_reason(403, {"reason": "Forbidden"}) is None, GO
