"""``ome.io/release-held-revision`` matching as OME's ``findRetryBlockByRevisionOrHash``."""

from __future__ import annotations

from datetime import UTC, datetime

from omereconcile.planner.release import RELEASE_KEY, answer_release
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import RetryBlock

T0 = datetime(2025, 1, 1, tzinfo=UTC)
HEAD = "InferenceReplica ns/pool component=engine"


def _book(*blocks: tuple[str, str]) -> RetryBook:
    return RetryBook(
        {rev: RetryBlock(rev, state, 1, T0, T0, None, "ImagePullBackOff") for rev, state in blocks},
        "ns/pool",
        "engine",
    )


def test_no_annotation_no_answer() -> None:
    answer = answer_release({}, _book(("pool-engine-aaaa1111", "Held")), "ns", "pool")
    assert answer.remove is None
    assert answer.events == []


def test_the_first_block_in_status_order_matching_name_or_hash_is_released() -> None:
    book = _book(("pool-engine-aaaa1111", "Backoff"), ("other-engine-aaaa1111", "Held"))
    answer = answer_release({RELEASE_KEY: "aaaa1111"}, book, "ns", "pool")
    assert list(book.blocks) == ["pool-engine-aaaa1111", "other-engine-aaaa1111"]  # the Backoff one matched
    assert answer.remove is not None
    assert answer.remove.key == RELEASE_KEY
    (event,) = answer.events
    assert (event.type, event.event_reason) == ("Normal", "RetryBlockReleaseSkipped")
    assert (
        event.message
        == f"{HEAD}: retryBlock for revision pool-engine-aaaa1111 is Backoff, not Held; nothing to release"
    )


def test_an_empty_value_matches_nothing_and_is_quoted_as_go_does() -> None:
    book = _book(("pool-engine-aaaa1111", "Held"))
    (event,) = answer_release({RELEASE_KEY: ""}, book, "ns", "pool").events
    assert (
        event.message
        == f'{HEAD}: release requested for revision "" but no retryBlock exists for it; nothing to release'
    )
    assert "pool-engine-aaaa1111" in book.blocks


def test_a_held_block_named_in_full_is_removed() -> None:
    book = _book(("pool-engine-aaaa1111", "Held"), ("pool-engine-bbbb2222", "Held"))
    (event,) = answer_release({RELEASE_KEY: "pool-engine-bbbb2222"}, book, "ns", "pool").events
    assert list(book.blocks) == ["pool-engine-aaaa1111"]
    assert event.event_reason == "RetryBlockReleased"
    assert event.message == (
        f"{HEAD}: Held retryBlock for revision pool-engine-bbbb2222 removed at operator request "
        f"({RELEASE_KEY} annotation)"
    )
