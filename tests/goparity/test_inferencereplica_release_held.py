"""OME's ``inferencereplica/release_held_test.go``: answering ``ome.io/release-held-revision``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/release_held_test.go`` @ 4dfb96b1 (the
listed version of three stored), over ``release_held.go`` (``consumeReleaseHeldRequest``,
``findRetryBlockByRevisionOrHash``). Go seeds ``releaseIR``'s two blocks (a ``Held`` one and a
``Backoff`` bystander) and reads the stored status, the annotation and the recorded events; here the
same blocks go to :func:`omereconcile.planner.release.answer_release`, which removes the released
block from the pass's :class:`~omereconcile.planner.retry.RetryBook` (the status write carries it) and
answers with the annotation's removal and the event.
"""

from __future__ import annotations

from omereconcile.planner.release import RELEASE_KEY, ReleaseAnswer, answer_release
from omereconcile.planner.retry import BACKOFF_STATE, HELD_STATE, RetryBlock, RetryBook
from omereconcile.simulate.cluster import T0

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/release_held_test.go @ 4dfb96b1"
HELD, BYSTANDER = "llama-pool-engine-aaaaaaaa", "llama-pool-engine-bbbbbbbb"


def _book() -> RetryBook:
    """Go's ``releaseIR`` blocks: ``Held`` at aaaaaaaa (3 attempts), ``Backoff`` at bbbbbbbb (1)."""
    return RetryBook(
        {
            HELD: RetryBlock(HELD, HELD_STATE, 3, T0, T0, None, "ImagePullBackOff"),
            BYSTANDER: RetryBlock(BYSTANDER, BACKOFF_STATE, 1, T0, T0, None, ""),
        },
        "llama-demo/llama-pool",
        "engine",
    )


def _answer(value: str | None) -> tuple[RetryBook, ReleaseAnswer]:
    book = _book()
    annotations = {} if value is None else {RELEASE_KEY: value}
    return book, answer_release(annotations, book, "llama-demo", "llama-pool")


def _events(answer: ReleaseAnswer, reason: str) -> list[str]:
    return [e.message for e in answer.events if e.event_reason == reason]


def test_full_name_releases_held_block() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/release_held_test.go @ 4dfb96b1,
    TestConsumeReleaseHeld_FullNameReleasesHeldBlock: the Held block named in full is removed, the
    bystander keeps its state, the annotation is consumed, one ``RetryBlockReleased`` names the
    revision and says it was the operator's request."""
    book, answer = _answer(HELD)
    assert list(book.blocks) == [BYSTANDER]
    assert book.blocks[BYSTANDER] == _book().blocks[BYSTANDER]
    assert answer.remove is not None
    (released,) = _events(answer, "RetryBlockReleased")
    assert HELD in released
    assert "operator request" in released


def test_bare_hash_matches() -> None:
    """Go: same file, TestConsumeReleaseHeld_BareHashMatches: ``aaaaaaaa`` names the Held block whose
    revision ends in that hash."""
    book, answer = _answer("aaaaaaaa")
    assert list(book.blocks) == [BYSTANDER]
    assert answer.remove is not None
    assert len(_events(answer, "RetryBlockReleased")) == 1


def test_non_held_match_no_op_consumed() -> None:
    """Go: same file, TestConsumeReleaseHeld_NonHeldMatch_NoOpConsumed: a Backoff block named is left
    as it was, the annotation consumed, one skip event saying "not Held", no release event."""
    book, answer = _answer(BYSTANDER)
    assert book.blocks == _book().blocks
    assert answer.remove is not None
    (skipped,) = _events(answer, "RetryBlockReleaseSkipped")
    assert "not Held" in skipped
    assert _events(answer, "RetryBlockReleased") == []


def test_unknown_revision_no_op_consumed() -> None:
    """Go: same file, TestConsumeReleaseHeld_UnknownRevision_NoOpConsumed: a revision with no block
    changes nothing; one skip event says no retryBlock exists."""
    book, answer = _answer("llama-pool-engine-cccccccc")
    assert book.blocks == _book().blocks
    assert answer.remove is not None
    (skipped,) = _events(answer, "RetryBlockReleaseSkipped")
    assert "no retryBlock exists" in skipped


def test_no_annotation_no_op() -> None:
    """Go: same file, TestConsumeReleaseHeld_NoAnnotation_NoOp: no annotation, no write, no event."""
    book, answer = _answer(None)
    assert book.blocks == _book().blocks
    assert answer.remove is None
    assert answer.events == []
