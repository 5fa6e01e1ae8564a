"""The verdicts a replica gets across a change (:class:`Status`) and ``--fail-on``'s words for them."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final, Literal

ReplicaKey = tuple[str, str]  # (namespace, name)
ChangeKind = Literal["changed", "added", "removed", "reordered"]


class Status(StrEnum):
    """A replica's verdict; the value is its ``--fail-on`` and JSON name. Listed changes first."""

    ROLLS = "rolls"
    BLOCKS = "blocks"
    UNBLOCKS = "unblocks"
    NEW = "new"
    REMOVED = "removed"
    UNKNOWN = "unknown"
    STILL_BLOCKS = "still-blocks"
    UNCHANGED = "unchanged"

    @property
    def label(self) -> str:
        """The verdict in words: ``still blocks``, ``unknown until downloaded``."""
        return _LABELS.get(self, self.value)


_LABELS: Final[Mapping[Status, str]] = {
    Status.UNKNOWN: "unknown until downloaded",
    Status.STILL_BLOCKS: "still blocks",
}
_CHANGED: Final = frozenset(
    {Status.ROLLS, Status.BLOCKS, Status.UNBLOCKS, Status.NEW, Status.REMOVED},
)
# What fails the check by default (``--fail-on``): what OME would do to running pods.
DEFAULT_FAIL_ON: Final = frozenset({Status.ROLLS, Status.BLOCKS})
# The longest line the text and markdown outputs print, and the longest block message they quote.
LINE_LIMIT: Final = 500


def cut_line(line: str, limit: int = LINE_LIMIT) -> str:
    """``line`` within ``limit`` characters, its end replaced by ``…`` when longer."""
    return line if len(line) <= limit else line[: limit - 1] + "…"


_MESSAGE_LIMIT: Final = 440


def parse_fail_on(text: str) -> frozenset[Status]:
    """``rolls,blocks`` -> the statuses; ``none`` (or empty) -> none. Raises ValueError naming the
    unknown word and the accepted ones."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    if words in ([], ["none"]):
        return frozenset()
    known = {s.value: s for s in Status}
    bad = [w for w in words if w not in known]
    if bad:
        raise ValueError(
            f"{', '.join(bad)}: not a verdict; give a comma-separated list of {', '.join(known)}, or none"
        )
    return frozenset(known[w] for w in words)
