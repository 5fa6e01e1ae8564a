"""A pod write the API server permanently rejects ends the attempt (``InvalidPodSpec``).

Go (ome-projects/ome @ ae683e3f): ``workload/ops/update_inplace.go`` ``inPlaceUpdate`` (its
``rejected`` closure around the transition marker, image, annotation and revision-label patches),
``ops/create_rejection.go`` ``disposeRejectedAttempt``, ``workload/types/apierror.go``
``ClassifyAPIError`` and ``types/apirejection_dispose.go`` ``DisposeAPIRejection``; the case is
``ops/update_inplace_rejection_test.go`` ``TestUpdateInPlace_InvalidPatch_DisposesAndHoldsRevision``.

A 422 Invalid on the in-place patch is a statement about the revision, not a hiccup: the same patch
is refused byte for byte on every retry. Go disposes the attempt at the write site: the revision's
retry block is charged first (``InvalidPodSpec`` is workload-caused, ``retry.py``), then the Instance
is ``Failed`` with its operation cleared and ``lastFailure`` ``{reason: InvalidPodSpec, message: <the
API server's words>, time}`` (no pod name: the rejection is the evidence), and a Warning
``InstanceRejected`` names the pod, the API server's explanation and the held revision. Before this,
ours retried the patch on every pass until the operation's deadline reported a misleading timeout.

Ours splits the write site in two, as the quota and admission refusals do: only the executor sees the
answer, so it records it on the row with :func:`record_rejection` (``operation.waiting:
InvalidPodSpec`` and ``lastFailure`` with the API server's message, a status PUT pinned to the replica
as read), and the next pass disposes the attempt with :func:`dispose_rejection` before anything else
happens to the row. The token lives on the operation, so it is never mistaken for a later attempt's.

A pod CREATE is read the same way (Go ``ops/create.go`` ``createMissingPods``: ``ClassifyAPIError``
on the refused ``Client.Create``, then ``disposeRejectedAttempt`` for both permanent classes @
ae683e3f; ``evidence/rejection.go`` ``ClassifyAPIError`` @ dcfb4135): a 422 Invalid on the pod
template is ``InvalidPodSpec`` (the revision's fault: its retry block is charged), a refusal whose
status cause is ``NamespaceTerminating`` is ``NamespaceTerminating`` (the environment's: the Instance
fails so the operator sees why, and no block is charged). Go checks the namespace cause first, because
that refusal is also a 403. :func:`create_rejection_reason` is that reading; the executor records it
with :func:`record_rejection` exactly as for the in-place patch. Before, ours ended the pass on such a
create and the next pass created again, until the operation's deadline reported a timeout.

Not ported: Go withholds the revision's blame (``blameRevision``) for a migration surge's pod, which
carries a migration request's placement overlay; ours has no migration request, so every create
refused as Invalid blames its revision.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import fail
from omereconcile.world import format_time

__all__ = [
    "INVALID_POD_SPEC",
    "NAMESPACE_TERMINATING",
    "REJECTION_REASONS",
    "create_rejection_reason",
    "dispose_rejection",
    "is_permanent_rejection",
    "record_rejection",
]

INVALID_POD_SPEC = "InvalidPodSpec"  # types RejectionReasonInvalidPodSpec
NAMESPACE_TERMINATING = "NamespaceTerminating"  # types RejectionReasonNamespaceTerminating
REJECTION_REASONS = frozenset({INVALID_POD_SPEC, NAMESPACE_TERMINATING})
# The reasons that blame the attempt's revision (Go APIRejectionPermanentWorkload); the others are
# the environment's (APIRejectionPermanentEnvironment) and charge no retry block.
BLAMING_REASONS = frozenset({INVALID_POD_SPEC})


def create_rejection_reason(status: int, body: Mapping[str, Any] | None) -> str | None:
    """Go ``ClassifyAPIError``'s permanent classes for a refused pod create: ``NamespaceTerminating``
    when a status cause says the namespace is being deleted (checked first: that refusal is a 403),
    ``InvalidPodSpec`` for a 422 Invalid; None for every other answer (quota, admission outage,
    throttling and the rest are read elsewhere or retried by the next pass)."""
    causes = ((body or {}).get("details") or {}).get("causes") or []
    if any(isinstance(cause, Mapping) and cause.get("type") == NAMESPACE_TERMINATING for cause in causes):
        return NAMESPACE_TERMINATING
    if status == 422:
        return INVALID_POD_SPEC
    return None


def is_permanent_rejection(status: int, body: Mapping[str, Any] | None) -> bool:
    """Go ``ClassifyAPIError``'s ``APIRejectionPermanentWorkload`` for a pod patch: a 422 Invalid.
    A 422 whose only cause is ``metadata.uid`` is the patch's UID precondition meeting a pod replaced
    under the same name (a conflict to replan, not a verdict on the revision)."""
    if status != 422:
        return False
    causes = ((body or {}).get("details") or {}).get("causes") or []
    fields = {str(cause.get("field") or "") for cause in causes if isinstance(cause, Mapping)}
    return fields != {"metadata.uid"}


def record_rejection(
    status: Mapping[str, Any], index: int, message: str, now: datetime, reason: str = INVALID_POD_SPEC
) -> dict[str, Any] | None:
    """The status with the rejection recorded on row ``index`` for the next pass to dispose (None
    when there is nothing to record: no such row, or it has no phase or operation in flight)."""
    found = R.operation_row(status, index)
    if found is None:
        return None
    new, row, op = found
    op["waiting"] = reason
    row["lastFailure"] = {"reason": reason, "message": message, "time": format_time(now)}
    return new


def dispose_rejection(ctx: Ctx, row: Row, pod: str, out: Out, retry: RetryBook) -> Row:
    """Go ``disposeRejectedAttempt`` on the rejection the executor recorded: the target revision's
    retry block charged (``InvalidPodSpec`` only; Go ``DisposeAPIRejection`` blames no revision for
    an environment class such as ``NamespaceTerminating``), the Instance ``Failed`` with its operation cleared and the recorded
    ``lastFailure`` kept, and the ``InstanceRejected`` Warning."""
    op = row.operation
    assert op is not None
    assert op.waiting in REJECTION_REASONS
    reason = op.waiting
    recorded = dict(row.last_failure or {})
    message = str(recorded.get("message") or "")
    record = {"reason": reason, "message": message, "time": recorded.get("time") or format_time(ctx.now)}
    target = op.target_revision
    blamed = reason in BLAMING_REASONS and bool(target)
    detail = f"revision {target} held for retry" if blamed else "no revision is blamed"
    out.event(
        "Warning",
        "InstanceRejected",
        f"OMENative {ctx.instance_key(row.index)}: apiserver rejected pod {pod} ({reason}: {message}); {detail}",
    )
    charge = retry if blamed else None
    return fail(ctx, row, "", None, reason, message, out, charge, announce=False, record=record)
