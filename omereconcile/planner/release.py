"""``ome.io/release-held-revision``: the operator's manual exit from a ``Held`` retry block (01 §4.7).

OME ``inferencereplica`` ``consumeReleaseHeldRequest`` and ``findRetryBlockByRevisionOrHash``: the
annotation names a revision by its full ControllerRevision name or its bare hash. Every present
request is answered once:

- a matching ``Held`` block is removed (``RetryBlockReleased``, Normal);
- a matching block in another state, or no matching block, changes nothing
  (``RetryBlockReleaseSkipped``, Normal);
- then the annotation is removed.

The block removal rides this pass's status write, which lands before the annotation removal; a crash
between the two re-delivers the request into the no-op branch, as in Go. The events are recorded
after the annotation removal lands (as ``ome.io/reset-instances`` does here), so an answer is never
recorded twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from omereconcile.actions import RecordEvent, RemoveAnnotation
from omereconcile.planner.context import hash_of
from omereconcile.planner.reset import _go_quote
from omereconcile.planner.retry import HELD_STATE, RetryBook
from omerender import constants as c

__all__ = ["RELEASE_KEY", "ReleaseAnswer", "answer_release"]

RELEASE_KEY = c.ANNOTATION_RELEASE_HELD_REVISION


@dataclass(frozen=True, slots=True)
class ReleaseAnswer:
    remove: RemoveAnnotation | None = None
    events: list[RecordEvent] = field(default_factory=list)


def _find(book: RetryBook, value: str) -> str | None:
    """Go ``findRetryBlockByRevisionOrHash``: the full name, or the name's trailing hash; the first
    block in status order wins; an empty value matches nothing."""
    if not value:
        return None
    for rev in book.blocks:
        if value in (rev, hash_of(rev)):
            return rev
    return None


def answer_release(
    annotations: Mapping[str, str] | None, book: RetryBook, namespace: str, name: str
) -> ReleaseAnswer:
    """Answer a present request against ``book`` (removing the released block from it)."""
    value = (annotations or {}).get(RELEASE_KEY)
    if value is None:
        return ReleaseAnswer()
    head = f"InferenceReplica {namespace}/{name} component={book.component}"
    rev = _find(book, value)
    if rev is None:
        message = (
            f"{head}: release requested for revision {_go_quote(value)} but no retryBlock exists for it; "
            "nothing to release"
        )
        reason = "RetryBlockReleaseSkipped"
    elif book.blocks[rev].state != HELD_STATE:
        message = (
            f"{head}: retryBlock for revision {rev} is {book.blocks[rev].state}, not Held; nothing to release"
        )
        reason = "RetryBlockReleaseSkipped"
    else:
        del book.blocks[rev]
        message = f"{head}: Held retryBlock for revision {rev} removed at operator request ({RELEASE_KEY} annotation)"
        reason = "RetryBlockReleased"
    remove = RemoveAnnotation(RELEASE_KEY, f"{RELEASE_KEY}={value!r} answered")
    return ReleaseAnswer(remove, [RecordEvent("Normal", reason, message)])
