"""The review as a pull-request comment (markdown), read top to bottom in a few seconds:

1. the verdict: whether the check fails and for what, and the lasting cost (pods and GPUs after the change
   minus before; the forecast below gives the peak during the roll);
2. the verdict table (its "Fails the check" column is what the job does with ``--fail-on``);
3. what changed in the catalog, each change once, with the groups below it reaches;
4. the groups, those that fail the check first: label, replicas (a few named, the rest collapsed),
   causes, why, cost, the change lines once;
5. ``extra_sections`` (the forecast), then defects and notes, one line each.

Within ``max_chars``: the extra sections, verdict and notes are kept; groups, then catalog changes, are
cut from the end with a line saying how many and where the full report is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omerender.diff.catalog_changes import CatalogChange
from omerender.diff.reports import DEFAULT_MARKDOWN_CHARS, _merged
from omerender.diff.review import Group, Review
from omerender.diff.runs import compact_lines
from omerender.diff.verdicts import LINE_LIMIT, Status, cut_line

__all__ = ["to_markdown"]

# Replicas a group names before the rest are collapsed into a <details> block.
_NAMED = 5
# Replicas a group's collapsed list holds (the --report file lists them all).
_LISTED = 40
# Change lines a group or catalog change shows (the JSON report lists them all).
_LINES = 12
# Lines a catalog change shows: the groups below show what the replicas get.
_CATALOG_LINES = 6
# A note longer than this is cut at its first sentence end or clause before it.
_NOTE = 240


def _html(text: str) -> str:
    """Text safe in markdown's inline HTML: ``&`` escaped, and ``<`` where it could open a tag
    (``<replica>``); ``->`` and ``<-`` read as they are."""
    return re.sub(r"<(?=[A-Za-z/!?])", "&lt;", text.replace("&", "&amp;"))


def _code(text: str) -> str:
    return f"`{text.replace('`', '')}`"


def _fence(lines: Sequence[str]) -> str:
    body = "".join(cut_line(line) + "\n" for line in lines)
    longest = max((len(m) for m in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}{fence}\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _verdict(review: Review) -> str:
    def counted(groups: Sequence[Group]) -> str:
        found: dict[Status, list[int]] = {}
        for g in groups:
            found.setdefault(g.status, []).append(len(g.replicas))
        return ", ".join(
            f"{sum(sizes)} {status.label}" + (f" ({len(sizes)} groups)" if len(sizes) > 1 else "")
            for status, sizes in found.items()
        )

    failing = [g for g in review.groups if g.fails]
    if failing:
        head = f"**Fails the check:** {counted(failing)}."
    elif review.groups:
        head = f"**Passes the check:** {counted(review.groups)}; none of it fails the check."
    else:
        head = "**Passes the check:** no replica changes its verdict."
    return f"{head} Lasting cost: {review.cost.text()}.\n"


def _table(review: Review) -> str:
    rows = "".join(
        f"| {s.label} | {n} | {'yes: the job fails' if s in review.fail_on else 'no'} |\n"
        for s, n in review.counts.items()
        if n or s in review.fail_on
    )
    return f"| Verdict | Replicas | Fails the check |\n| --- | ---: | --- |\n{rows}"


def _reached(change: CatalogChange, groups: Sequence[Group]) -> list[int]:
    """The numbers of the groups below whose causes name one of the change's objects."""
    objects = set(change.objects)
    return [i for i, g in enumerate(groups, 1) if objects.intersection(g.cause_keys)]


def _reaches(hits: Sequence[int]) -> str:
    """`` → groups 1 and 3``, or `` → no replica changes`` (a runtime no replica selects, or a field no
    render reads)."""
    if not hits:
        return " → no replica changes"
    if len(hits) == 1:
        return f" → group {hits[0]}"
    return f" → groups {', '.join(map(str, hits[:-1]))} and {hits[-1]}"


def _catalog_change(change: CatalogChange, reach: str = "") -> str:
    head = f"- **{_html(change.label())}**{reach}"
    if not change.lines:
        return head + "\n"
    shown = compact_lines(change.lines)
    lines = shown[:_CATALOG_LINES]
    if len(shown) > _CATALOG_LINES:
        lines.append(f"… and {len(shown) - _CATALOG_LINES} more lines")
    return head + "\n\n" + "".join("  " + line + "\n" for line in _fence(lines).splitlines()) + "\n"


def _catalog_section(review: Review) -> list[tuple[str, int]]:
    """The catalog's changes as (markdown, how many changes it holds): those that reach a group first
    (in the groups' order); the ones no replica changes with go last, folded into one item when others
    lead (a reader skips them)."""
    reaching: list[tuple[int, str]] = []
    idle: list[CatalogChange] = []
    for change in review.catalog_changes:
        hits = _reached(change, review.groups)
        if hits:
            reaching.append((hits[0], _catalog_change(change, _reaches(hits))))
        else:
            idle.append(change)
    out = [(text, 1) for _, text in sorted(reaching, key=lambda item: item[0])]
    if idle and out:
        verb = "changes" if len(idle) == 1 else "change"
        summary = f"{len(idle)} more catalog change{'s' if len(idle) != 1 else ''} that {verb} no replica"
        folded = "".join(_catalog_change(c) for c in idle)
        out.append((f"<details><summary>{summary}</summary>\n\n{folded}</details>\n", len(idle)))
    else:
        out.extend((_catalog_change(c, _reaches([])), 1) for c in idle)
    return out


def _wrapped(items: Sequence[str], limit: int = LINE_LIMIT) -> str:
    """``items`` joined by commas, in lines of at most ``limit`` characters (a line ends with its
    comma: markdown reads the line break as a space)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + len(item) + 2 <= limit:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    return ",\n".join(lines)


def _replicas(group: Group) -> str:
    names = [f"{ns}/{name}" for ns, name in group.replicas]
    shown = ", ".join(_code(n) for n in names[:_NAMED])
    if len(names) <= _NAMED:
        return f"Replicas: {shown}\n"
    rest = names[_NAMED:_LISTED]
    more = len(names) - _NAMED - len(rest)
    tail = f"\n\n… and {more} more: the full report lists every one" if more else ""
    return (
        f"Replicas: {shown} and {len(names) - _NAMED} more\n"
        f"<details><summary>{len(names) - _NAMED} more</summary>\n\n"
        f"{_wrapped([_code(n) for n in rest])}{tail}\n\n</details>\n"
    )


def _group(index: int, group: Group) -> str:
    fails = " — fails the check" if group.fails else ""
    out = [f"\n#### {index}. {_html(group.label)} — {_plural(len(group.replicas), 'replica')}{fails}\n\n"]
    for cause in group.causes:
        out.append(cut_line(f"- cause: {_html(cause)}") + "\n")
    for why in group.why:
        out.append(cut_line(f"- why: {_html(why)}") + "\n")
    out.append(f"- lasting cost: {group.cost.text()}\n")
    if group.changes:
        shown = compact_lines(group.changes)
        lines = shown[:_LINES]
        if len(shown) > _LINES:
            lines.append(f"… and {len(shown) - _LINES} more changes (--report lists every one)")
        out.append("\n" + _fence(lines))
    out.append("\n" + _replicas(group))
    return "".join(out)


def _note(text: str) -> str:
    """One line: the note's first sentence (or clause) when it runs long."""
    if len(text) <= _NOTE:
        return text
    for sep in (". ", "; ", ": "):
        cut = text.find(sep, 40, _NOTE)
        if cut > 0:
            return text[:cut] + ("." if sep == ". " else "")
    return text[: _NOTE - 1] + "…"


def to_markdown(
    review: Review,
    *,
    max_chars: int | None = DEFAULT_MARKDOWN_CHARS,
    extra_sections: Sequence[str] = (),
    full_report: str | None = None,
) -> str:
    """The review comment (see the module's docstring); ``extra_sections``: markdown placed after the
    groups (the forecast), kept whole within ``max_chars``; ``full_report``: the file ``--report``
    wrote, named where something was cut."""
    counted = ", ".join(f"{n} {s.label}" for s, n in review.counts.items() if n) or "none"
    head = [
        f"### omerender diff: {_plural(review.total, 'replica')}: {counted}\n\n",
        _verdict(review),
        "\n",
        _table(review),
    ]
    tail: list[str] = []
    for section in extra_sections:
        tail.append("\n" + section.rstrip("\n") + "\n")
    if review.defects:
        tail.append("\n**Defects** (a roll without a cause):\n\n")
        tail.extend(cut_line(f"- {_html(line)}") + "\n" for line in review.defects)
    notes = [_note(n) for n in _merged(review.notes)]
    if review.unlisted:
        notes.append(
            f"{_plural(review.unlisted, 'replica')} whose verdict did not change: counted above, not listed"
        )
    if notes:
        tail.append("\n**Notes**\n\n")
        tail.extend(cut_line(f"- {_html(n)}") + "\n" for n in notes)
    where = f"the file `{full_report}`" if full_report else "`omerender diff --report PATH`"
    catalog = _catalog_section(review)
    groups = [_group(i, g) for i, g in enumerate(review.groups, 1)]
    budget = None if max_chars is None else max_chars - sum(map(len, head)) - sum(map(len, tail)) - 200
    body: list[str] = []
    left_groups = left_changes = 0
    if catalog:
        body.append(f"\n#### What changed in the catalog ({len(review.catalog_changes)})\n\n")
    used = sum(map(len, body))
    kept_catalog: list[str] = []
    for index, (text, _) in enumerate(catalog):
        # The catalog's changes take at most half the room: the groups say what they do.
        if budget is not None and used + len(text) > budget // 2:
            left_changes = sum(n for _, n in catalog[index:])
            break
        kept_catalog.append(text)
        used += len(text)
    body.extend(kept_catalog)
    if left_changes:
        body.append(f"- … and {left_changes} more catalog changes: the full report is {where}\n")
    if groups:
        body.append(f"\n#### Why replicas change: {_plural(len(groups), 'group')}\n")
    used = sum(map(len, body))
    for index, text in enumerate(groups):
        if budget is not None and used + len(text) > budget:
            left_groups = len(groups) - index
            break
        body.append(text)
        used += len(text)
    if left_groups:
        body.append(
            f"\n**{left_groups} of {len(groups)} groups left out** to keep this comment under "
            f"{max_chars} characters; the full report: {where}.\n"
        )
    return "".join([*head, *body, *tail])
