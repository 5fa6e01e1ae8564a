"""An unreachable admission webhook: the ``AdmissionUnavailable`` hold (01 §4.6).

Go (ome-projects/ome, newest stored ``workload/evidence`` ``AdmissionUnavailable`` and
``ClassifyAPIError``, their tests, ``types`` ``EventReasonInstanceAdmissionUnavailable``, and the
``recordAdmissionWait`` / ``releaseAdmissionWait`` calls of ``ops/update_inplace.go``): when the API
server cannot consult an admission webhook it answers a pod create or patch (the in-place image patch,
or the in-place drain's serving-gate write) with an InternalError,
Timeout or ServiceUnavailable (500, 504, 503) whose message carries the dispatcher's phrase ``failed
calling webhook``. That is a wait, not a verdict: the attempt is not failed and no retry is charged.
The refused pass records it on the Instance's row — ``operation.waiting: AdmissionUnavailable``, the
``InstanceReadyTimeout`` clock parked (no deadline), ``lastFailure`` carrying the API server's own
words (reason ``AdmissionUnavailable``) — and announces it once per episode
(``InstanceAdmissionUnavailable``); later refused passes write nothing. Once the write goes through
(the step's pod exists, or the in-place patch landed) the token goes and the deadline is re-armed with
a full window. The same codes without the phrase, and every answer admission itself gave (Invalid,
Forbidden), are not this hold.

Like the quota refusal, the answer is only seen by the executor: it records the wait with
``record_admission_wait`` (a status PUT pinned to the replica as read) and the next pass reads it.
Not found in the index: the event's text and type. Here it is Normal, worded like
``InstanceQuotaBlocked``: ``OMENative component=<c> instance=<i> waiting on admission: <message>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.quota import takes_row
from omereconcile.planner.rows import Row
from omereconcile.world import format_time

__all__ = [
    "ADMISSION_UNAVAILABLE",
    "admission_hold",
    "admission_unavailable_message",
    "is_admission_unavailable",
    "record_admission_wait",
]

ADMISSION_UNAVAILABLE = "AdmissionUnavailable"  # types RejectionReasonAdmissionUnavailable
# The API server's admission dispatcher, failing closed on a webhook it could not call.
WEBHOOK_MARKER = "failed calling webhook"
_CODES = frozenset({500, 503, 504})  # InternalError, ServiceUnavailable, Timeout


def is_admission_unavailable(status: int, message: str) -> bool:
    """Go ``evidence.AdmissionUnavailable``."""
    return status in _CODES and WEBHOOK_MARKER in message


def admission_unavailable_message(component: str, index: int, message: str) -> str:
    return f"OMENative component={component} instance={index} waiting on admission: {message}"


def record_admission_wait(
    status: Mapping[str, Any], index: int, pod: str, message: str, now: datetime
) -> tuple[dict[str, Any] | None, bool]:
    """The status with the wait recorded on row ``index`` (None when nothing is to be written: no such
    row or operation, the wait already recorded, or another wait holds the row), and whether to
    announce it (the token enters the row)."""
    found = R.operation_row(status, index)
    if found is None:
        return None, False
    new, row, op = found
    incumbent = str(op.get("waiting") or "")
    if incumbent == ADMISSION_UNAVAILABLE or not takes_row(ADMISSION_UNAVAILABLE, incumbent):
        return None, False
    op["waiting"] = ADMISSION_UNAVAILABLE
    op.pop("deadline", None)
    row["lastFailure"] = {
        "podName": pod,
        "reason": ADMISSION_UNAVAILABLE,
        "message": message,
        "time": format_time(now),
    }
    return new, True


def admission_hold(ctx: Ctx, row: Row, through: bool) -> Row:
    """Keep the row's admission wait parked, or release it once the write went ``through``."""
    op = row.operation
    assert op is not None
    if op.waiting != ADMISSION_UNAVAILABLE:
        return row
    if through:
        return replace(row, operation=replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now)))
    return replace(row, operation=replace(op, deadline=None))
