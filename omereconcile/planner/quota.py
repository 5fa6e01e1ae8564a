"""ResourceQuota refusals of a pod create: the ``QuotaExceeded`` hold (01 §4.6).

The refusal is the API server's answer to a create the executor made; no later pass can read it off
the cluster. So, as OME does, the create site records it on the Instance's operation
(``operation.capacityRefusedAt``, ``workload/status`` ``RecordCapacityRefusal``) and the next pass
reads the record:

- while the record stands, the operation carries ``waiting: QuotaExceeded`` and its
  ``InstanceReadyTimeout`` clock is parked (no deadline), anchored to the record rather than the
  token so the one-pass gap between the refusal and its report cannot expire the attempt
  (``types/apirejection.go`` ``OperationCapacityRefused``, ``holds/quota.go`` ``reportQuota``);
- the token takes a row that reports no wait, or only the pause; a row already reporting another
  wait keeps it (``holds/table.go`` ``takesRowFrom``);
- once the create has gone through (the step's pod exists), the record is cleared, the token
  released and the deadline re-armed with a full window from that moment
  (``ClearCapacityRefusal``);
- the refusal is announced once per episode, when it is first recorded and becomes the row's
  reported wait: Normal ``InstanceQuotaBlocked`` with the API server's own message
  (``ops/create.go``). The message names current usage, so it goes to the event, never to status.

The pure functions the executor calls live here too, so the simulated API and the real one record a
refusal the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.rows import Row
from omereconcile.world import format_time

__all__ = [
    "PAUSED",
    "QUOTA_EXCEEDED",
    "QUOTA_MARKER",
    "is_quota_refusal",
    "quota_blocked_message",
    "quota_hold",
    "record_capacity_refusal",
    "takes_row",
]

QUOTA_EXCEEDED = "QuotaExceeded"  # types RejectionReasonQuotaExceeded
PAUSED = "Paused"
# The phrase the ResourceQuota admission plugin puts in its 403 (types/apierror.go quotaExceededMarker):
# it separates "out of quota" from an RBAC refusal, which stays an ordinary error.
QUOTA_MARKER = "exceeded quota"


def is_quota_refusal(status: int, message: str) -> bool:
    """Go ``ClassifyAPIError``: a 403 Forbidden whose message carries the quota marker."""
    return status == 403 and QUOTA_MARKER in message


def takes_row(token: str, current: str | None) -> bool:
    """Go ``takesRowFrom``: a token takes an unheld row, its own, or one held only by the pause."""
    return not current or current == token or (current == PAUSED and token != PAUSED)


def quota_blocked_message(component: str, index: int, message: str) -> str:
    """The ``InstanceQuotaBlocked`` event of ``ops/create.go``."""
    return f"OMENative component={component} instance={index} waiting on capacity: {message}"


def record_capacity_refusal(
    status: Mapping[str, Any], index: int, now: datetime
) -> tuple[dict[str, Any] | None, bool]:
    """Go ``RecordCapacityRefusal`` on a status object: the status with the refusal recorded on the
    row's operation (None when there is nothing to record: no such row, no phase or operation, or
    a refusal already recorded), and whether the refusal enters the row's reported wait (Go
    ``holds.Enters``), i.e. whether to announce it."""
    found = R.operation_row(status, index)
    if found is None or found[2].get("capacityRefusedAt"):
        return None, False
    new, _row, op = found
    incumbent = str(op.get("waiting") or "")
    op["capacityRefusedAt"] = format_time(now)
    return new, incumbent != QUOTA_EXCEEDED and takes_row(QUOTA_EXCEEDED, incumbent)


def quota_hold(ctx: Ctx, row: Row, created: bool) -> Row:
    """Report, or release, the row's quota wait. ``created``: the step's pod exists."""
    op = row.operation
    assert op is not None
    if op.capacity_refused_at is None:
        if op.waiting == QUOTA_EXCEEDED:
            op = replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now))
            return replace(row, operation=op)
        return row
    if created:
        waiting = None if op.waiting == QUOTA_EXCEEDED else op.waiting
        op = replace(op, capacity_refused_at=None, waiting=waiting, deadline=ctx.deadline_from(ctx.now))
        return replace(row, operation=op)
    waiting = QUOTA_EXCEEDED if takes_row(QUOTA_EXCEEDED, op.waiting) else op.waiting
    return replace(row, operation=replace(op, waiting=waiting, deadline=None))
