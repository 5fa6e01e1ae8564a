"""The per-replica outputs: text, JSON and the per-replica markdown table; counts and the notes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any, Final

from omerender.diff.outcome import Outcome
from omerender.diff.replicas import ReplicaDiff
from omerender.diff.runs import compact_lines
from omerender.diff.verdicts import DEFAULT_FAIL_ON, Status, cut_line

# -- output -----------------------------------------------------------------------------------------------

# Values quoted in a change line of the text and markdown outputs (two per line, within LINE_LIMIT).
_SHOWN_VALUE = 200
# Changes one markdown block lists before it counts the rest (the JSON lists them all).
_SHOWN_CHANGES = 40
DEFAULT_MARKDOWN_CHARS: Final = 60_000
#: The JSON report's schema version (its ``apiVersion``): a new field keeps it, a field removed, renamed
#: or given another meaning raises it (``docs/releasing.md``).
REPORT_API_VERSION: Final = "omerender.diff/v1"
_ORDER: Final = {s: i for i, s in enumerate(Status)}


def counts(diffs: Iterable[ReplicaDiff]) -> dict[Status, int]:
    """How many replicas have each verdict, every verdict present (in :class:`Status` order)."""
    found = Counter(d.status for d in diffs)
    return {s: found[s] for s in Status}


def fails(diffs: Iterable[ReplicaDiff], fail_on: Collection[Status] = DEFAULT_FAIL_ON) -> bool:
    """Whether some replica has a verdict ``fail_on`` names: the CLI then exits 1."""
    return any(d.status in fail_on for d in diffs)


def summary(diffs: Iterable[ReplicaDiff]) -> str:
    """``3 replicas: 2 rolls, 1 unchanged`` (verdicts in :class:`Status` order)."""
    found = counts(diffs)
    total = sum(found.values())
    parts = [f"{n} {s.label}" for s, n in found.items() if n]
    return f"{total} replica{'s' if total != 1 else ''}: {', '.join(parts) or 'none'}"


def uid_note(diffs: Iterable[ReplicaDiff]) -> str | None:
    """One line for every replica whose revision names are for an empty uid (no ``metadata.uid`` in
    its files and none given), or None when there is none.

    OME hashes the uid the API server assigned into a standalone replica's revision name, so the names
    the outputs print for those replicas (``rolls A -> B``) are not the cluster's; the verdict is
    unaffected: both sides are hashed with the same uid, so they differ exactly when the cluster's do.
    """
    items = list(diffs)
    empty = [d for d in items if d.uid_notice is not None]
    if not empty:
        return None
    total = len(items)
    who = (
        f"{empty[0].key}'s revision names are"
        if len(empty) == 1
        else f"{len(empty)} of {total} replicas' revision names are"
    )
    return (
        f"{who} for an empty uid (no metadata.uid in the files and no --uid): OME hashes the uid the "
        "API server assigns into the name, so the cluster's names will differ; the verdicts (rolls, "
        "unchanged, ...) do not depend on the uid, as both sides are hashed with the same one. For the "
        "cluster's names give --uid NAMESPACE/NAME=UID (uids= in the API)"
    )


def _all_notes(notes: Sequence[str], diffs: Sequence[ReplicaDiff], with_uid: bool) -> list[str]:
    line = uid_note(diffs) if with_uid else None
    return [*notes, line] if line is not None else list(notes)


def _body(d: ReplicaDiff, shown: int | None = None) -> list[str]:
    """A replica's lines under its headline: runtime switch, changes (the first ``shown``), notes."""
    # Entries of one list added alike are one line (``env: 30 entries added: …``); -o json has each.
    lines = compact_lines([c.line(limit=_SHOWN_VALUE) for c in d.changes])
    kept = lines if shown is None else lines[:shown]
    out = [*d.lead, *kept]
    if len(kept) < len(lines):
        out.append(f"… and {len(lines) - len(kept)} more changes (-o json lists every one)")
    out.extend(d.notes)
    return [cut_line(line) for line in out]


def _merged(notes: Sequence[str]) -> list[str]:
    """``before: X`` and ``after: X`` as one ``X (before and after)``; other notes as they are."""
    out: list[str] = []
    for note in notes:
        side, _, text = note.partition(": ")
        if side == "after" and f"before: {text}" in out:
            out[out.index(f"before: {text}")] = f"{text} (before and after)"
        else:
            out.append(note)
    return out


def _hidden_note(hidden: Sequence[ReplicaDiff]) -> str:
    found = Counter(d.status for d in hidden)
    parts = ", ".join(f"{found[s]} {s.label}" for s in Status if found[s])
    return (
        f"{len(hidden)} replica{'s' if len(hidden) != 1 else ''} whose verdict did not change "
        f"not listed ({parts}); --show-unchanged lists them"
    )


def to_text(
    diffs: Iterable[ReplicaDiff],
    *,
    notes: Sequence[str] = (),
    show_unchanged: bool = False,
    uid_notes: bool = True,
) -> str:
    """``notes`` (what the comparison assumed) and :func:`uid_note` (unless ``uid_notes`` is False)
    first, then one headline per replica whose verdict changed (every replica with
    ``show_unchanged``), its changes and notes indented by two spaces, then one note counting the
    replicas left unlisted. No line is longer than :data:`LINE_LIMIT`."""
    items = list(diffs)
    lines: list[str] = [cut_line(f"note: {note}") for note in _merged(_all_notes(notes, items, uid_notes))]
    hidden: list[ReplicaDiff] = []
    for d in items:
        if not (show_unchanged or d.listed):
            hidden.append(d)
            continue
        lines.append(cut_line(f"{d.key}: {d.headline}"))
        lines.extend(f"  {line}" for line in _body(d))
    if hidden:
        lines.append(f"note: {_hidden_note(hidden)}")
    return "".join(f"{cut_line(line)}\n" for line in lines)


def _outcome_json(side: Outcome | None) -> dict[str, Any] | None:
    if side is None:
        return None
    blocked = side.blocked
    runtime = {"kind": side.runtime_kind, "name": side.runtime_name} if side.runtime_name else None
    return {
        "revision": side.revision,
        "runtime": runtime,
        "blocked": {"reason": blocked.reason, "message": blocked.message} if blocked else None,
        "unknownUntilDownloaded": side.unknown,
        "uidNotice": side.uid_notice,
    }


def to_json(
    diffs: Iterable[ReplicaDiff],
    *,
    notes: Sequence[str] = (),
    fail_on: Collection[Status] = DEFAULT_FAIL_ON,
    uid_notes: bool = True,
) -> dict[str, Any]:
    """``{"apiVersion": "omerender.diff/v1", "replicas": [...], "summary": {verdict: count}, "changed":
    bool, "failOn": [...], "fails": bool, "notes": [...]}``; every replica, values unabridged; each side names the runtime it
    rendered from. A replica's ``uidNotice`` (and its sides') is set when its revision names are for
    an empty uid; ``notes`` then ends with :func:`uid_note` (unless ``uid_notes`` is False)."""
    items = list(diffs)
    return {
        "apiVersion": REPORT_API_VERSION,
        "notes": _all_notes(notes, items, uid_notes),
        "replicas": [
            {
                "namespace": d.namespace,
                "name": d.name,
                "status": d.status.value,
                "headline": d.headline,
                "changed": d.changed,
                "uidNotice": d.uid_notice,
                "runtimeChanged": d.runtime_change is not None,
                "before": _outcome_json(d.before),
                "after": _outcome_json(d.after),
                "changes": [c.as_json() for c in d.changes],
                "notes": [*d.lead, *d.notes],
            }
            for d in items
        ],
        "summary": {s.value: n for s, n in counts(items).items()},
        "changed": any(d.changed for d in items),
        "failOn": [s.value for s in Status if s in fail_on],
        "fails": fails(items, fail_on),
    }


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _side_cell(side: Outcome | None) -> str:
    if side is None:
        return "—"
    if side.unknown:
        return "unknown until downloaded"
    if side.blocked is not None:
        return f"blocked: {_cell(side.blocked.reason)}"
    return f"`{side.revision}`"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _fence(body: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}{fence}\n"


def _count(changes: int) -> str:
    return f" ({changes} change{'s' if changes != 1 else ''})" if changes else ""


def _verdict_table(items: Sequence[ReplicaDiff], fail_on: Collection[Status]) -> str:
    rows = "".join(
        f"| {s.label} | {n} | {'yes' if s in fail_on else 'no'} |\n"
        for s, n in counts(items).items()
        if n or s in fail_on
    )
    return f"| Verdict | Replicas | Fails the check |\n| --- | ---: | --- |\n{rows}"


def _block(d: ReplicaDiff) -> str:
    body = "".join(f"{line}\n" for line in _body(d, _SHOWN_CHANGES))
    return (
        f"\n<details>\n<summary><code>{_html(d.key)}</code> {_html(d.headline)}"
        f"{_count(len(d.changes))}</summary>\n\n"
        + (_fence(body) if body else "No template changes.\n")
        + "\n</details>\n"
    )


def to_markdown(
    diffs: Iterable[ReplicaDiff],
    *,
    notes: Sequence[str] = (),
    fail_on: Collection[Status] = DEFAULT_FAIL_ON,
    max_chars: int | None = DEFAULT_MARKDOWN_CHARS,
    show_unchanged: bool = False,
    full_report: str | None = None,
    uid_notes: bool = True,
) -> str:
    """A pull-request comment: a table counting every verdict, then the replicas whose verdict
    changed (every replica with ``show_unchanged``), those that fail the check first, one row each and
    one collapsed ``<details>`` block each.

    The comment stays within ``max_chars`` (None: no limit): replicas that do not fit are left out,
    and a last line says how many and where the full report is (``full_report``, the file
    ``--report`` wrote, else ``-o json``). No line is longer than :data:`LINE_LIMIT`. The notes
    are quoted under the table, :func:`uid_note` last (unless ``uid_notes`` is False).
    """
    items = list(diffs)
    shown = [d for d in items if show_unchanged or d.listed]
    shown.sort(key=lambda d: (d.status not in fail_on, _ORDER[d.status], d.namespace, d.name))
    hidden = [d for d in items if not (show_unchanged or d.listed)]
    head = [f"### omerender diff: {summary(items)}\n\n", _verdict_table(items, fail_on), "\n"]
    head.extend(
        cut_line(f"> {_html(note)}") + "\n\n" for note in _merged(_all_notes(notes, items, uid_notes))
    )
    if hidden:
        head.append(_hidden_note(hidden) + ".\n\n")
    if not shown:
        head.append("No replica changes its verdict.\n")
        return "".join(head)
    table = "| Replica | Result | Before | After |\n| --- | --- | --- | --- |\n"
    rows = [
        cut_line(f"| `{d.key}` | {_cell(d.result)} | {_side_cell(d.before)} | {_side_cell(d.after)} |") + "\n"
        for d in shown
    ]
    blocks = [_block(d) for d in shown]
    where = f"the file `{full_report}`" if full_report else "`omerender diff -o json` (or `--report PATH`)"
    left_out = (
        "\n**{left} of {total} listed replicas left out** to keep this comment under {limit} "
        f"characters; the full report: {where}.\n"
    )
    used = sum(map(len, head)) + len(table)
    fit = len(shown)
    if max_chars is not None:
        reserve = len(left_out) + 40
        fit = 0
        for row, block in zip(rows, blocks, strict=True):
            if used + len(row) + len(block) + reserve > max_chars:
                break
            used += len(row) + len(block)
            fit += 1
    out = [*head, table, *rows[:fit], *blocks[:fit]]
    if fit < len(shown):
        out.append(left_out.format(left=len(shown) - fit, total=len(shown), limit=max_chars))
    return "".join(out)
