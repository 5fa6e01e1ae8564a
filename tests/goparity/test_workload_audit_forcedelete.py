"""OME's ``workload/audit/forcedelete_test.go``: ForceDelete audit rows are inert for relocation.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/audit/forcedelete_test.go`` @ 58a57f25 (the one
stored version, read whole). Ours: :class:`omereconcile.planner.relocation.LedgerBook`, whose ledger
holds the force-delete rows (``record_force_delete``) beside the relocation directives.
``TestHasCompletedOrFailedRequest_IgnoresForceDeleteRows`` is not mappable: it guards the dedup of
Manual migration requests, which a standalone replica does not accept (and so Go's
``HasInFlightMigrationForInstance`` assertion below has no counterpart either).
"""

from __future__ import annotations

from typing import Any

from omereconcile.planner import rows as R
from omereconcile.planner.relocation import LedgerBook
from omereconcile.world import LedgerView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/audit/forcedelete_test.go @ 58a57f25"


def _force_delete(uid: str, node: str, at: str, outcome: str = "force-delete-unreachable") -> dict[str, Any]:
    """Go's ``forceDeleteEntry``: a terminal ForceDelete row keyed by the pod UID."""
    return {
        "requestUUID": uid,
        "component": "engine",
        "sourceInstance": 0,
        "phase": "Completed",
        "reason": "ForceDelete",
        "outcome": outcome,
        "fromNode": node,
        "startedAt": at,
        "completedAt": at,
    }


def test_force_delete_rows_are_inert_for_the_relocation_readers() -> None:
    """Go: forcedelete_test.go @ 58a57f25, TestForceDeleteEntries_InertForAutoRecoverReaders: force-delete
    rows (unreachable and finalizer-report) burn no relocation budget, steer no placement, are no
    newest directive, and are not pruned as directives when the Instance proves its placement."""
    entries = (
        _force_delete("uid-1", "node-a", "2026-07-23T00:00:00Z"),
        _force_delete("uid-2", "node-b", "2026-07-23T00:01:00Z"),
        _force_delete("uid-3", "node-c", "2026-07-23T00:02:00Z", outcome="finalizer-report"),
    )
    book = LedgerBook(LedgerView(exists=True, entries=entries), "own", 5)
    assert book.count_attempts("engine", 0) == 0
    assert book.recent_exclusions("engine", 0, 5) == []
    assert book.newest("engine", 0) is None
    book.prune_ready("engine", [R.Row(index=0, phase=R.READY)])
    assert book.entries == [dict(e) for e in entries]
    assert not book.dirty
