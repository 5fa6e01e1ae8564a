"""A forecast as text, JSON and markdown (the pull-request comment next to ``omerender diff``'s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omereconcile.forecast.build import Forecast
from omereconcile.forecast.run import ReplicaForecast
from omerender.diff.verdicts import LINE_LIMIT, cut_line

__all__ = [
    "CUT_NOTE",
    "REPORT_API_VERSION",
    "cut_line",
    "headline",
    "markdown_row",
    "to_json",
    "to_markdown",
    "to_text",
]

CUT_NOTE = f"note: lines longer than {LINE_LIMIT} characters are cut (…); -o json has the full text"


def markdown_row(cells: Sequence[str]) -> str:
    """A markdown table row within :data:`LINE_LIMIT` characters: the last cell (a replica's holds, the
    longest text) is cut with ``…`` so the row keeps its closing ``|``."""
    escaped = [c.replace("|", "\\|") for c in cells]
    row = "| " + " | ".join(escaped) + " |"
    if len(row) <= LINE_LIMIT:
        return row
    room = LINE_LIMIT - (len(row) - len(escaped[-1]))
    return "| " + " | ".join([*escaped[:-1], cut_line(escaped[-1], max(room, 1))]) + " |"


def _dur(seconds: float) -> str:
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{sec:02d}s" if sec else f"{m}m"
    return f"{sec}s"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _startups(f: Forecast) -> str:
    values = sorted({r.startup_seconds for r in f.replicas})
    return "/".join(_dur(v) for v in values) + " start-up"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part // whole}%" if whole else "100%"


def headline(f: Forecast) -> str:
    """One line for the whole change, as a reviewer reads it."""
    t = f.totals
    if f.unplaced:
        extra = f"{_plural(len(f.unplaced), 'new or unblocked replica')} do not fit on the capacity given"
    else:
        extra = f"new and unblocked replicas +{_plural(f.added_gpus, 'GPU')}" if f.added_gpus else ""
    if not f.replicas:
        head = "rolls no replica" + (f" ({len(f.not_forecast)} not forecast)" if f.not_forecast else "")
        return head + (f"; {extra}" if extra else "")
    parts = [
        f"rolls {_plural(len(f.replicas), 'replica')} / {_plural(t.instances, 'Instance')}",
        f"peak +{_plural(t.peak_extra_pods, 'pod')}, +{_plural(t.peak_extra_gpus, 'GPU')}",
    ]
    if f.capacity is not None:
        total = sum(f.capacity)
        left = total - t.gpus_in_use_at_peak - f.reserved_gpus
        waits = [r for r in f.replicas if any(h.gate == "Unschedulable" for h in r.holds)]
        held = [r for r in waits if not r.completes]
        sizes = sorted(set(f.capacity))
        nodes = _plural(len(f.capacity), "node") + (f" of {sizes[0]}" if len(sizes) == 1 else "")
        cap = f"capacity {_plural(total, 'GPU')} ({nodes}), left at peak: {_plural(max(left, 0), 'GPU')}"
        if held:
            cap += f" → {_plural(len(held), 'replica')} will hold Unschedulable (cannot complete)"
        elif waits:
            cap += f" → {_plural(len(waits), 'replica')} will wait Unschedulable for room, then complete"
        parts.append(cap)
    parts.append(f"floor {_pct(t.floor, t.instances)} of serving Instances")
    done = "≈ " + _dur(t.duration) if t.completes else "does not complete (held)"
    parts.append(f"{done} at {_startups(f)}, {'concurrent' if f.concurrent else 'one replica at a time'}")
    if extra:
        parts.append(extra)
    return "; ".join(parts)


def _holds(r: ReplicaForecast) -> str:
    return "; ".join(f"{h.gate}: {h.reason}" for h in r.holds)


def _row(r: ReplicaForecast) -> list[str]:
    return [
        r.key,
        f"{r.replaced}/{r.instances}",
        str(r.steps),
        f"{r.floor} (at {_dur(r.floor_at)})",
        f"+{r.peak_extra_pods}",
        f"+{r.peak_extra_gpus}",
        ("≈ " + _dur(r.duration)) if r.completes else "held",
        _holds(r) or "-",
    ]


def _kept_out(f: Forecast) -> str | None:
    """One line counting the replicas not forecast whose verdict did not change (unknown until
    downloaded or blocked on both sides): a catalog kept in git has hundreds, listed by name in JSON."""
    quiet = [n for n in f.not_forecast if not n.changed]
    if not quiet:
        return None
    kinds: dict[str, int] = {}
    for n in quiet:
        verdict = n.why.split(" (")[0].split(",")[0]
        verdict = "still blocks" if verdict.startswith("still blocks") else verdict
        kinds[verdict] = kinds.get(verdict, 0) + 1
    parts = ", ".join(f"{count} {verdict}" for verdict, count in kinds.items())
    return f"{_plural(len(quiet), 'replica')} whose verdict did not change not forecast ({parts})"


_HEAD = ["REPLICA", "REPLACED", "STEPS", "FLOOR", "PODS", "GPUS", "DURATION", "HOLDS"]
_TITLES = {"GPUS": "GPUs", "PODS": "Pods"}


def pending_keys(f: Forecast) -> frozenset[str]:
    """The replicas a pending line names (``ns/name: its … pod asks for …``): said there, once."""
    return frozenset(line.split(":", 1)[0] for line in f.pending)


def to_text(f: Forecast, *, uid_note: str | None = None) -> str:
    """The table, the replicas not forecast, and the totals; ``uid_note``
    (:func:`omerender.diff.uid_note`) first, when given."""
    rows = [_HEAD, *(_row(r) for r in f.replicas)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEAD) - 1)]
    lines = ["  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]) for row in rows]
    lines = [ln.rstrip() for ln in lines] if f.replicas else []
    lines.extend(
        f"{n.key}: not forecast ({n.why})"
        for n in f.not_forecast
        if n.changed and n.key not in pending_keys(f)
    )
    if (quiet := _kept_out(f)) is not None:
        lines.append(quiet)
    lines.extend(f"{line}" for line in (*f.pending, *f.unplaced))
    lines.append(f"total: {headline(f)}")
    if uid_note is not None:
        lines.insert(0, f"note: {uid_note}")
    cut = [cut_line(line) for line in lines]
    if cut != lines:
        cut.append(CUT_NOTE)
    return "\n".join(cut) + "\n"


def to_markdown(f: Forecast, *, uid_note: str | None = None) -> str:
    """A pull-request comment: the totals, a row per rolling replica, and ``uid_note`` quoted."""
    out = ["### Rollout forecast", "", f"**{headline(f)}**", ""]
    if uid_note is not None:
        out.extend([f"> {uid_note}", ""])
    if f.replicas:
        out.append("| " + " | ".join(_TITLES.get(h, h.title()) for h in _HEAD) + " |")
        out.append("|" + "---|" * len(_HEAD))
        out.extend(markdown_row(_row(r)) for r in f.replicas)
        out.append("")
    out.extend(
        f"- `{n.key}`: not forecast ({n.why})"
        for n in f.not_forecast
        if n.changed and n.key not in pending_keys(f)
    )
    if (quiet := _kept_out(f)) is not None:
        out.append(f"- {quiet}")
    return "\n".join(line if line.startswith("|") else cut_line(line) for line in out).rstrip() + "\n"


def _replica_json(r: ReplicaForecast, uid_notices: Mapping[str, str]) -> dict[str, Any]:
    return {
        "replica": r.key,
        "uidNotice": uid_notices.get(r.key),
        "instances": r.instances,
        "replaced": r.replaced,
        "steps": r.steps,
        "floor": {"serving": r.floor, "atSeconds": r.floor_at},
        "peakExtraPods": r.peak_extra_pods,
        "peakExtraGPUs": r.peak_extra_gpus,
        "gpusPerInstance": r.gpus_per_instance,
        "startupSeconds": r.startup_seconds,
        "completes": r.completes,
        "durationSeconds": r.duration,
        "holds": [{"gate": h.gate, "reason": h.reason} for h in r.holds],
    }


# The JSON report's schema version: a new field keeps it; a field removed, renamed or given another
# meaning raises it (docs/releasing.md).
REPORT_API_VERSION = "omereconcile.forecast/v1"


def to_json(
    f: Forecast, *, uid_note: str | None = None, uid_notices: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The forecast as data. ``uid_notices``: replica key -> why its revision names are for an empty
    uid (:attr:`omerender.diff.ReplicaDiff.uid_notice`), each replica's ``uidNotice``; ``uid_note``
    in ``notes``."""
    t = f.totals
    notices = uid_notices or {}
    return {
        "apiVersion": REPORT_API_VERSION,
        "summary": headline(f),
        "notes": [uid_note] if uid_note is not None else [],
        "concurrent": f.concurrent,
        "capacity": None
        if f.capacity is None
        else {"nodes": len(f.capacity), "gpus": sum(f.capacity), "heldByUnchangedReplicas": f.reserved_gpus},
        "total": {
            "replicas": len(f.replicas),
            "instances": t.instances,
            "replaced": t.replaced,
            "peakExtraPods": t.peak_extra_pods,
            "peakExtraGPUs": t.peak_extra_gpus,
            "gpusInUseAtPeak": t.gpus_in_use_at_peak,
            "floor": {"serving": t.floor, "atSeconds": t.floor_at},
            "completes": t.completes,
            "durationSeconds": t.duration,
            "cannotCompleteWithCapacity": f.short_of_capacity,
        },
        "replicas": [_replica_json(r, notices) for r in f.replicas],
        "notForecast": [
            {"replica": n.key, "why": n.why, "changed": n.changed, "uidNotice": notices.get(n.key)}
            for n in f.not_forecast
        ],
        "unchanged": f.unchanged,
    }
