"""OME's ``inferencereplica/retryblock_adapter_test.go``: the RetryBlock history cap.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/retryblock_adapter_test.go`` @ 614ba948
(one stored version, read whole), ``TestBuildMutateRetryBlock_RetentionPrunesOldest``: historical
blocks (any revision but ``status.updateRevision``) are capped at ``maxHistoricalRetryBlocks`` (3),
pruned oldest first by ``lastFailureAt`` with an unset ``lastFailureAt`` oldest, and the update
revision's block is never pruned, even as the oldest. Ours is
:meth:`omereconcile.planner.retry.RetryBook.cap_history`, with the cap the operator's
``lifecycle.retryBlockHistoryLimit`` (3 here), over blocks read as the status stores them
(:meth:`RetryBlock.from_dict`: an unset ``lastFailureAt`` reads as ``firstFailureAt``, else the epoch).
The file's other cases are listed in ``docs/goparity.md``.
"""

from __future__ import annotations

from typing import Any

from omereconcile.planner.retry import MAX_HISTORICAL_BLOCKS, RetryBook
from omereconcile.planner.rows import RetryBlock

GO = (
    "ome-projects/ome pkg/controller/v1beta1/inferencereplica/retryblock_adapter_test.go @ 614ba948 "
    "TestBuildMutateRetryBlock_RetentionPrunesOldest"
)


def _block(rev: str, state: str, last: str | None) -> RetryBlock:
    body: dict[str, Any] = {
        "targetRevision": rev,
        "state": state,
        "attemptsStarted": 3 if state == "Held" else 1,
    }
    if last is not None:
        body["lastFailureAt"] = last
    return RetryBlock.from_dict(body)


def test_retention_prunes_the_oldest_and_never_the_update_revision() -> None:
    """The update revision's block is the oldest (no ``lastFailureAt``); a fourth historical block
    (11:00) pushes the history past 3: the historical block with no ``lastFailureAt`` goes."""
    blocks = [
        _block("rev-current", "Backoff", None),
        _block("rev-old-nil", "Held", None),
        _block("rev-old-1", "Held", "2026-07-22T09:00:00Z"),
        _block("rev-old-2", "Held", "2026-07-22T10:00:00Z"),
        _block("rev-old-3", "Held", "2026-07-22T11:00:00Z"),
    ]
    book = RetryBook({b.target_revision: b for b in blocks}, "prod/llama-engine", "engine")
    book.cap_history("rev-current", MAX_HISTORICAL_BLOCKS)
    assert sorted(book.blocks) == ["rev-current", "rev-old-1", "rev-old-2", "rev-old-3"], GO
