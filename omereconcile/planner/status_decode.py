"""A stored status the planner cannot read as rows: the pass stops before any effect.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/reconciler.go`` @ ae43378d
``Reconciler.Reconcile`` (the entry read ``irstatus.GetDecoded`` runs before the teardown branch and
before any lifecycle effect; a failed decode returns ``instanceStatusDecodeError``),
``status_reader.go`` @ 614ba948 ``instanceStatusDecodeError`` (a Warning
``InstanceStatusDecodeFailed`` naming the fixed-catalog reason, then the reconcile fails closed), and
``irstatus/reader.go`` @ 614ba948 ``Decoder``: "The zero value carries no bound: it decodes DenseV1
unchanged and fails closed on every ColumnarV2 payload". Which reason: ``irstatus/encoding.go``
``ObservedEncoding`` (an unmarked status with columns, or a ``ColumnarV2`` status without columns or
with dense rows: ``representation_union``; another marker: ``unknown_encoding``) and
``irstatus/decode.go`` @ 614ba948 ``validateColumns`` (no bound: ``cardinality_limit``, checked before
the payload is parsed); the words are ``irstatus/errors.go``'s reason strings.

This controller keeps the plain ``status.instanceStatuses`` list only (DECISIONS §3.10): it is a
DenseV1 manager with no ColumnarV2 bound, Go's zero ``Decoder``. Pinned by
``tests/goparity/test_inferencereplica_status_reader.py`` (``status_reader_test.go`` @ 4dfb96b1,
``TestReconcileFailsClosedOnUndecodableColumnarV2`` "no bound configured"). Before, such a status was
read as no rows: the pass rebuilt rows from the pods and wrote them beside the ColumnarV2 marker, a
status the CRD refuses, and an Instance's journal (operation, last failure) held in the columns was lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omereconcile.actions import Plan, RecordEvent
from omereconcile.world import World

__all__ = ["INSTANCE_STATUS_DECODE_FAILED", "refuse_undecodable_status", "undecodable_reason"]

# Go ``EventReasonInstanceStatusDecodeFailed`` (status_reader.go).
INSTANCE_STATUS_DECODE_FAILED = "InstanceStatusDecodeFailed"
_COLUMNAR_V2 = "ColumnarV2"


def undecodable_reason(status: Mapping[str, Any]) -> str | None:
    """Go ``ObservedEncoding`` then the zero ``Decoder``'s ``validateColumns``: the codec reason a
    DenseV1 manager with no ColumnarV2 bound fails on, or None for a DenseV1 status."""
    encoding = status.get("instanceStatusEncoding")
    columns = status.get("instanceStatusColumns")
    if encoding is None:
        return None if columns is None else "representation_union"
    if encoding != _COLUMNAR_V2:
        return "unknown_encoding"
    if columns is None or status.get("instanceStatuses"):
        return "representation_union"
    return "cardinality_limit"


def refuse_undecodable_status(world: World) -> Plan | None:
    """The refused pass (one Warning, nothing else: no pod, Service, revision or status write), or
    None when the stored status is the plain ``instanceStatuses`` list."""
    rep = world.replica
    reason = undecodable_reason(rep.status)
    if reason is None:
        return None
    message = (
        f"InferenceReplica {rep.namespace}/{rep.name} per-Instance status cannot be decoded ({reason}); "
        "reconciliation is suspended until the status is repaired (this controller reads the plain "
        "status.instanceStatuses list only: remove status.instanceStatusEncoding and "
        "status.instanceStatusColumns, and the next pass rebuilds the rows from the pods)"
    )
    return Plan((RecordEvent("Warning", INSTANCE_STATUS_DECODE_FAILED, message),), None, message)
