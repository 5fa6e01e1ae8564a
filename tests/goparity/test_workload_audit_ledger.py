"""OME's ``workload/audit/ledger_test.go``: the audit ledger's trim, round trip and ownership.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/audit/ledger_test.go`` @ 9177c1b0 (the one stored
version, read whole), over ``audit/ledger.go`` (``UpsertEntry`` / ``trim``, ``LoadLedgerForOwner``,
``PersistLedgerForOwner``, ``claimControllerRef``). Ours: :class:`omereconcile.planner.relocation.LedgerBook`
(``upsert``, ``write``) and :meth:`omereconcile.world.LedgerView.from_dict` (the read).

Not mappable (8 of 11): the Manual migration request annotation (``ExtractRequestUUID``,
``ParseMigrationRequest`` ×2: a standalone replica accepts no migration request), the write races
(``ConflictOnConcurrentUpdate``, ``ConflictOnCreateRace``, ``ConflictWhenDeletedSinceLoad``,
``SequentialPersistsSamePass``: the API server's compare-and-swap and the executor's chaining — ours
pins every ``WriteLedger`` to the resourceVersion it read) and ``InFlightEntry_ReturnsCopyNotAlias``
(Go aliasing).
"""

from __future__ import annotations

import json

from omereconcile.planner.relocation import MAX_TERMINAL_ENTRIES, LedgerBook
from omereconcile.world import LEDGER_KEY, LedgerView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/audit/ledger_test.go @ 9177c1b0"
OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "llama-70b", "uid": "owner-uid", "controller": True}


def test_trim_drops_the_oldest_terminal_entries_and_keeps_started_ones() -> None:
    """Go: ledger_test.go @ 9177c1b0, TestAuditLedger_TrimDropsOldestTerminalButKeepsStarted."""
    book = LedgerBook(LedgerView(exists=True), "llama-70b", 3)
    book.upsert({"requestUUID": "in-flight-pinned", "phase": "Started"})
    for i in range(MAX_TERMINAL_ENTRIES + 50):
        book.upsert({"requestUUID": f"done-{i:04d}", "phase": "Completed"})
    terminal = [e for e in book.entries if e["phase"] in ("Completed", "Failed")]
    assert len(terminal) == MAX_TERMINAL_ENTRIES
    assert any(e["requestUUID"] == "in-flight-pinned" for e in book.entries)
    assert all(e["requestUUID"] != "done-0000" for e in book.entries)


def test_an_entry_survives_the_write_and_the_next_read() -> None:
    """Go: ledger_test.go @ 9177c1b0, TestAuditLedger_DedupAcrossPersist: an empty ledger, one
    Completed entry upserted and persisted, read back: it is there, an unrelated one is not. (Go's
    ``HasCompletedOrFailedRequest`` is the migration dedup; here the entry is looked up by UUID.)"""
    book = LedgerBook(LedgerView(), "llama-70b", 3)
    assert book.entries == []
    book.upsert({"requestUUID": "abc", "phase": "Completed"})
    write = book.write(OWNER)
    assert write is not None
    assert write.resource_version is None  # no ConfigMap yet: a create
    reread = LedgerView.from_dict({"metadata": {"resourceVersion": "1"}, "data": {LEDGER_KEY: write.data}})
    uuids = {e["requestUUID"]: e["phase"] for e in reread.entries}
    assert uuids == {"abc": "Completed"}
    assert json.loads(write.data) == {"entries": [{"requestUUID": "abc", "phase": "Completed"}]}


def test_the_write_replaces_a_stale_controller_reference_and_keeps_bystanders() -> None:
    """Go: ledger_test.go @ 9177c1b0, TestPersistLedgerForOwner_ReplacesStaleControllerRef: a
    predecessor's controller reference (same name, another UID) is replaced by the current owner's; a
    non-controller reference stays; one controller in the end."""
    stale = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "llama-70b",
        "uid": "stale-owner-uid",
        "controller": True,
    }
    bystander = {"apiVersion": "v1", "kind": "ConfigMap", "name": "bystander", "uid": "bystander-uid"}
    view = LedgerView.from_dict(
        {
            "metadata": {"resourceVersion": "7", "ownerReferences": [stale, bystander]},
            "data": {LEDGER_KEY: '{"entries":[]}'},
        }
    )
    book = LedgerBook(view, "llama-70b", 3)
    book.upsert({"requestUUID": "u1", "phase": "Started"})
    write = book.write(OWNER)
    assert write is not None
    assert write.resource_version == "7"
    refs = list(write.owner_references or ())
    controllers = [r for r in refs if r.get("controller")]
    assert [r["uid"] for r in controllers] == ["owner-uid"]
    assert any(r["uid"] == "bystander-uid" for r in refs)
