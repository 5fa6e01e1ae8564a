"""OME's ``workload/audit/autorecover_test.go``: the relocation directives' memory in the audit ledger.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/audit/autorecover_test.go`` @ 58a57f25 (the one
stored version, read whole), over ``audit/autorecover.go`` @ 58a57f25 (``RecentAutoRecoverExclusions``,
``NodesExcludedForRevision``, ``CountAutoRecoverAttempts``, ``NewestAutoRecoverEntry``,
``ReleaseAutoRecoverExclusions``). Ours: :class:`omereconcile.planner.relocation.LedgerBook` over the
ledger's ``history.json`` entries (``recent_exclusions``, ``excluded_nodes``, ``count_attempts``,
``newest``, ``release``). These are the ledger's bookkeeping, not the disposition's decision to
relocate (``tests/sim/test_relocation.py``). Go's nil ledger is a ledger with no entries here.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from omereconcile.planner.relocation import LedgerBook
from omereconcile.world import LedgerView, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/audit/autorecover_test.go @ 58a57f25"
NOW = datetime(2026, 5, 21, 12, 0, tzinfo=UTC)  # Go's fixedNow


def _entry(uuid: str, node: str, offset: timedelta, **fields: Any) -> dict[str, Any]:
    """Go's ``autoRecoverEntry``: a completed AutoRecover directive of engine Instance 0 at rev1."""
    stamp = format_time(NOW + offset)
    entry = {
        "requestUUID": uuid,
        "component": "engine",
        "sourceInstance": 0,
        "phase": "Completed",
        "reason": "AutoRecover",
        "outcome": "relocate-recreate",
        "fromNode": node,
        "revision": "own-engine-rev1",
        "startedAt": stamp,
        "completedAt": stamp,
    }
    entry.update(fields)
    return entry


def _book(*entries: dict[str, Any], max_attempts: int = 5) -> LedgerBook:
    return LedgerBook(LedgerView(exists=True, entries=tuple(entries)), "own", max_attempts)


def _nodes(exclusions: list[tuple[str, str]]) -> list[str]:
    return [node for node, _ in exclusions]


def test_duplicates_collapse_before_the_window() -> None:
    """Go: autorecover_test.go @ 58a57f25, TestRecentAutoRecoverExclusions_DedupBeforeWindow: [A, B, B]
    with limit 2 keeps the older distinct A; limit 1 keeps the newest distinct node."""
    book = _book(
        _entry("u1", "node-a", -timedelta(minutes=3)),
        _entry("u2", "node-b", -timedelta(minutes=2)),
        _entry("u3", "node-b", -timedelta(minutes=1)),
    )
    assert _nodes(book.recent_exclusions("engine", 0, 2)) == ["node-a", "node-b"]
    assert _nodes(book.recent_exclusions("engine", 0, 1)) == ["node-b"]


def test_empty_cases_exclude_nothing() -> None:
    """Go: autorecover_test.go @ 58a57f25, TestRecentAutoRecoverExclusions_EmptyCases: no ledger, a zero
    limit and another component all give no exclusion."""
    assert _book().recent_exclusions("engine", 0, 3) == []
    book = _book(_entry("u1", "node-a", timedelta(0)))
    assert book.recent_exclusions("engine", 0, 0) == []
    assert book.recent_exclusions("decoder", 0, 3) == []


def test_exclusions_carry_their_revision() -> None:
    """Go: autorecover_test.go @ 58a57f25, TestRecentAutoRecoverExclusions_CarryTheirRevision: the
    newest directive for a node decides its revision, a revision-less directive excludes nothing but
    counts on the budget, and the set narrows to one revision."""
    book = _book(
        _entry("u1", "node-a", -timedelta(minutes=3)),
        _entry("u2", "node-a", -timedelta(minutes=2), revision="own-engine-rev2"),
        _entry("u3", "node-b", -timedelta(minutes=1)),
        _entry("u4", "node-c", timedelta(0), revision=""),
    )
    assert book.recent_exclusions("engine", 0, 5) == [
        ("node-a", "own-engine-rev2"),
        ("node-b", "own-engine-rev1"),
    ]
    assert book.excluded_nodes("engine", 0, "own-engine-rev1", limit=5) == ["node-b"]
    assert book.excluded_nodes("engine", 0, "", limit=5) == []
    assert book.count_attempts("engine", 0) == 4


def test_newest_auto_recover_entry_is_by_append_order() -> None:
    """Go: autorecover_test.go @ 58a57f25, TestNewestAutoRecoverEntry: the last AutoRecover entry of the
    Instance, a later entry of another reason ignored; none for another Instance or no ledger."""
    assert _book().newest("engine", 0) is None
    book = _book(
        _entry("u1", "node-a", -timedelta(minutes=2)),
        _entry("u2", "node-b", -timedelta(minutes=1)),
        {"requestUUID": "u3", "component": "engine", "sourceInstance": 0, "phase": "Started"},
    )
    newest = book.newest("engine", 0)
    assert newest is not None
    assert (newest["requestUUID"], newest["fromNode"]) == ("u2", "node-b")
    assert book.newest("engine", 1) is None


def test_release_lets_go_of_one_revision_of_one_instance() -> None:
    """Go: autorecover_test.go @ 58a57f25, TestReleaseAutoRecoverExclusions: only this Instance's
    unreleased directives for the revision go, each node reported once, the entries stay on the
    budget, and a second release (or none without a revision or ledger) finds nothing."""
    book = _book(
        _entry("u1", "node-a", -timedelta(minutes=3)),
        _entry("u2", "node-a", -timedelta(minutes=2)),
        _entry("u3", "node-b", -timedelta(minutes=1), revision="own-engine-rev2"),
        _entry("u4", "node-c", timedelta(0), sourceInstance=1),
    )
    assert book.release("engine", 0, "own-engine-rev1") == ["node-a"]
    assert _nodes(book.recent_exclusions("engine", 0, 5)) == ["node-b"]
    assert _nodes(book.recent_exclusions("engine", 1, 5)) == ["node-c"]
    assert book.count_attempts("engine", 0) == 3
    assert book.release("engine", 0, "own-engine-rev1") == []
    assert book.release("engine", 0, "") == []
    assert LedgerBook(None, "own", 5).release("engine", 0, "own-engine-rev1") == []
