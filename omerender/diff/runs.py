"""Runs of list entries added or removed alike, said as one line.

Thirty environment variables added to a runtime are thirty change lines; shown one by one they push
the change that tells two groups apart (the image each came from) past the cut. The review says
``env: 30 entries added: A, B, C, …, Z`` instead. Display only: the grouping, the JSON reports and
``--report`` keep every line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["compact_lines", "entry_base"]

# ``<head>[<key>]: added …`` / ``… removed …``: the first list entry of the line, non-greedy so a
# value that happens to hold ``[x]: added`` does not move it.
_ENTRY = re.compile(r"(?P<head>.+?)\[(?P<key>[^\[\]]*)\]: (?P<kind>added|removed)(?: |$)", re.DOTALL)
# Fewer alike entries than this are shown as they are.
MIN_RUN = 3
# Keys a run names before the rest are left to the report.
_KEYS = 5


def _keys(keys: Sequence[str]) -> str:
    if len(keys) <= _KEYS:
        return ", ".join(keys)
    return f"{', '.join(keys[:3])}, …, {keys[-1]}"


def compact_lines(lines: Sequence[str]) -> list[str]:
    """``lines`` with each run of at least three consecutive entries of one list added (or removed)
    said as one line naming how many and which."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        first = _ENTRY.match(lines[i])
        if first is not None:
            keys = [first["key"]]
            j = i + 1
            while j < len(lines):
                nxt = _ENTRY.match(lines[j])
                if nxt is None or nxt["head"] != first["head"] or nxt["kind"] != first["kind"]:
                    break
                keys.append(nxt["key"])
                j += 1
            if len(keys) >= MIN_RUN:
                out.append(f"{first['head']}: {len(keys)} entries {first['kind']}: {_keys(keys)}")
                i = j
                continue
        out.append(lines[i])
        i += 1
    return out


def entry_base(path: str) -> str | None:
    """The list of a list entry's path (``env`` of ``env[X]``), or None for any other path."""
    match = re.fullmatch(r"(.+)\[[^\[\]]*\]", path)
    return match.group(1) if match else None
