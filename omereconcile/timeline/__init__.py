"""A roll drawn over time: labelled steps as bars, and a serving floor and extra GPUs as a series.

Neutral about where the rows come from (the forecast's rolling groups today, ``kubectl ome rollout
history --timeline`` later): the input is :class:`Step` rows (label, start, end, kind) and :class:`Point`
samples of the serving floor and the extra GPUs, all in seconds from one origin (the change). Two
outputs of one picture:

- :func:`to_mermaid`: Mermaid text, a ``gantt`` of the steps and an ``xychart-beta`` of the series (GitHub
  and GitLab render Mermaid code blocks in comments);
- :func:`to_svg`: a self-contained SVG file of the same picture, written here (no browser, no Node), for
  CI systems that show files;
- :func:`to_svg_compare`: several pictures of one change in one SVG on one time axis (``kubectl ome
  rollout history --timeline -o svg --forecast``: the roll as it happened above the forecast's run of
  the same change), bars in the same colours, each picture's floor and extra GPUs in one chart below,
  told apart by the line's dash.

Pure: no I/O, clock or environment.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "KINDS",
    "Point",
    "Step",
    "Timeline",
    "bins",
    "round_width",
    "to_mermaid",
    "to_svg",
    "to_svg_compare",
]

# What a step's bar says, and its Mermaid gantt tag: a step that completes, one that holds (does not
# complete) and one that waits for room before completing.
KINDS = {"done": "", "held": "crit", "waits": "active"}
_COLOURS = {"done": "#4c78a8", "held": "#e45756", "waits": "#f2a93b"}
_AREA, _LINE = "#72b7b2", "#1f3f6e"  # extra GPUs, serving floor


@dataclass(frozen=True)
class Step:
    """One bar: ``label`` from ``start`` to ``end`` seconds; ``kind`` one of :data:`KINDS`."""

    label: str
    start: float
    end: float
    kind: str = "done"


@dataclass(frozen=True)
class Point:
    """From ``at`` seconds on (until the next point): ``floor`` serving Instances, ``extra_gpus`` above
    the steady state."""

    at: float
    floor: int
    extra_gpus: int


@dataclass(frozen=True)
class Timeline:
    """The picture: ``steps`` (one bar each, in this order), ``series`` (sorted by time), ``of``: the
    Instances the floor is out of (0: not shown as a share)."""

    title: str
    steps: tuple[Step, ...]
    series: tuple[Point, ...] = ()
    of: int = 0
    note: str = ""  # a line under the title in :func:`to_svg_compare` (what the picture assumes)

    @property
    def end(self) -> float:
        ends = [s.end for s in self.steps] + [p.at for p in self.series]
        return max([1.0, *ends])


def _clock(seconds: float) -> str:
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else (f"{m}m{sec:02d}s" if sec else f"{m}m") if m else f"{sec}s"


def _mermaid_text(label: str) -> str:
    """A label as a gantt task or section name: Mermaid reads ``:`` as the end of the name and ``#``
    and ``;`` as comment and statement marks, so they are replaced."""
    out = label.replace(":", " ").replace(";", ",").replace("#", "no. ").replace("\n", " ")
    return " ".join(out.split()) or "-"


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


# Slice widths whose starts read as round times (30s, 1m30s, 2m, 5m, …), in seconds.
_ROUND = (1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200)


def round_width(end: float, most: int = 12) -> float:
    """The narrowest round slice width that cuts ``end`` seconds into at most ``most`` slices."""
    for width in _ROUND:
        if math.ceil(end / width) <= most:
            return float(width)
    return float(math.ceil(end / most / 86400) * 86400)


def bins(tl: Timeline, count: int = 12, width: float | None = None) -> list[tuple[float, int, int]]:
    """The series over ``count`` equal slices of the time shown (or slices of ``width`` seconds, the
    last one stretched over a remainder of less than half a slice), as ``(slice start, lowest floor,
    highest extra GPUs)``: what holds at the slice's start and every sample inside it."""
    pts = tl.series
    if not pts:
        return []
    if width is None:
        width = tl.end / count
    else:
        whole, rest = divmod(tl.end, width)
        count = max(1, int(whole) + (rest >= width / 2))
    out: list[tuple[float, int, int]] = []
    cur, i = pts[0], 0
    for b in range(count):
        lo, hi = b * width, ((b + 1) * width if b < count - 1 else tl.end)
        while i < len(pts) and pts[i].at <= lo:
            cur, i = pts[i], i + 1
        low, high = cur.floor, cur.extra_gpus
        j = i
        while j < len(pts) and pts[j].at < hi:
            low, high = min(low, pts[j].floor), max(high, pts[j].extra_gpus)
            j += 1
        out.append((lo, low, high))
    return out


def to_mermaid(tl: Timeline) -> str:
    """Mermaid code blocks (fenced, for markdown): the steps as a gantt (time since the origin on the
    axis, each bar's duration in its label), the extra GPUs as an xychart of bars and, when it moves, the
    serving floor as an xychart of its own (a floor that stays put is said in the GPUs' title)."""
    lines = [
        "```mermaid",
        "gantt",
        f"    title {_mermaid_text(tl.title)}",
        "    dateFormat X",
        # Seconds from the origin read as a clock from midnight: minutes:seconds under an hour.
        f"    axisFormat {'%M:%S' if tl.end < 3600 else '%H:%M'}",
    ]
    for n, s in enumerate(tl.steps):
        tag = KINDS.get(s.kind, "")
        start, end = math.floor(s.start), max(math.ceil(s.end), math.floor(s.start) + 1)
        lines.append(f"    section {_mermaid_text(s.label)}")
        meta = ", ".join(x for x in (tag, f"s{n}", str(start), str(end)) if x)
        lines.append(f"    {_mermaid_text(_clock(s.end - s.start) + ' ' + s.kind)} :{meta}")
    lines.append("```")
    # Round slice starts: labels of a few characters that do not run into each other on the axis.
    pts = bins(tl, width=round_width(tl.end))
    if pts:
        # And the state at the end, so the chart shows the extra GPUs given back and the floor whole.
        last = tl.series[-1]
        pts.append((tl.end, last.floor, last.extra_gpus))
        # Two charts, each on its own scale: drawn on the GPUs' axis (hundreds) a floor of a few
        # Instances reads as a flat line near zero. A floor that never moves is said in the title.
        axis = f"    x-axis {_quoted('time since the change')} [{', '.join(_quoted(_clock(t)) for t, _, _ in pts)}]"
        floors = [f for _, f, _ in pts]
        floor_name = "serving Instances" + (f" of {tl.of}" if tl.of else "")
        steady = len(set(floors)) == 1
        gpu_title = "extra GPUs" + (f"; {floor_name}: {floors[0]} throughout" if steady else "")
        lines += [
            "",
            "```mermaid",
            "xychart-beta",
            f"    title {_quoted(gpu_title)}",
            axis,
            f"    y-axis {_quoted('GPUs')} 0 --> {max([1, *(e for _, _, e in pts)])}",
            f"    bar [{', '.join(str(e) for _, _, e in pts)}]",
            "```",
        ]
        if not steady:
            lines += [
                "",
                "```mermaid",
                "xychart-beta",
                f"    title {_quoted(floor_name + ', the lowest in each slice')}",
                axis,
                f"    y-axis {_quoted('Instances')} 0 --> {max([1, tl.of, *floors])}",
                f"    line [{', '.join(str(f) for f in floors)}]",
                "```",
            ]
    return "\n".join(lines) + "\n"


def _e(text: str) -> str:
    return html.escape(text, quote=True)


# Characters of a step's label the SVG's label column holds.
_LABEL = 40


def to_svg(tl: Timeline) -> str:
    """The same picture as one SVG document: a bar per step on a time axis, and below it the extra GPUs
    (an area, left scale) and the serving floor (a step line, right scale) on the same time axis."""
    label_w, chart_w, row_h, pad = 260, 560, 22, 10
    width = label_w + chart_w + 2 * pad + 60  # room for the last bar's duration
    rows_h = max(1, len(tl.steps)) * row_h
    series_h = 140 if tl.series else 0
    height = 40 + rows_h + 30 + (series_h + 80 if series_h else 0)
    end = tl.end

    def x(t: float) -> float:
        return label_w + pad + chart_w * max(0.0, min(t, end)) / end

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{pad}" y="20" font-size="14" font-weight="bold">{_e(tl.title)}</text>',
    ]
    top = 32
    for n, s in enumerate(tl.steps):
        y = top + n * row_h
        x0, x1 = x(s.start), x(s.end)
        colour = _COLOURS.get(s.kind, _COLOURS["done"])
        # Cut to the label column (about 6 px a character at 12 px), the whole label in the tooltip.
        shown = s.label if len(s.label) <= _LABEL else s.label[: _LABEL - 1] + "…"
        out.append(f'<g><title>{_e(s.label)}</title><text x="{pad}" y="{y + 15}">{_e(shown)}</text></g>')
        out.append(
            f'<rect x="{x0:.1f}" y="{y + 3}" width="{max(x1 - x0, 1.0):.1f}" height="{row_h - 6}" '
            f'fill="{colour}"><title>{_e(f"{s.label}: {_clock(s.end - s.start)} {s.kind}")}</title></rect>'
        )
        out.append(f'<text x="{x1 + 4:.1f}" y="{y + 15}" fill="#333">{_e(_clock(s.end - s.start))}</text>')
    axis_y = top + rows_h + 4
    out.append(f'<line x1="{x(0):.1f}" y1="{axis_y}" x2="{x(end):.1f}" y2="{axis_y}" stroke="#888"/>')
    # Ticks at round times, and the end; none so near the end that their labels would touch.
    step = round_width(end, most=6)
    ticks = [k * step for k in range(int(end // step) + 1) if k * step <= end - 0.6 * step] + [end]
    for t in ticks:
        anchor = "start" if t == 0 else "end" if t == end else "middle"
        out.append(
            f'<text x="{x(t):.1f}" y="{axis_y + 16}" text-anchor="{anchor}" fill="#555">{_e(_clock(t))}</text>'
        )
    if tl.series:
        base = axis_y + 70 + series_h
        peak = max([1, *(p.extra_gpus for p in tl.series)])
        # The floor on its own scale (right), as in the markdown's two charts: on the GPUs' scale a few
        # Instances would lie flat along zero.
        floor_top = max([1, tl.of, *(p.floor for p in tl.series)])

        def yv(v: int) -> float:
            return base - series_h * v / peak

        def yf(v: int) -> float:
            return base - series_h * v / floor_top

        floor_name = "serving Instances" + (f" of {tl.of}" if tl.of else "")
        out.append(
            f'<text x="{pad}" y="{axis_y + 40}" fill="{_LINE}">{_e(floor_name)} (line, right scale)</text>'
            f'<text x="{pad}" y="{axis_y + 56}" fill="{_AREA}">extra GPUs (area, left scale)</text>'
            f'<text x="{label_w}" y="{base}" text-anchor="end" fill="#555">0</text>'
            f'<text x="{label_w}" y="{yv(peak) + 4:.1f}" text-anchor="end" fill="{_AREA}">{peak}</text>'
            f'<text x="{x(end) + 4:.1f}" y="{yf(floor_top) + 4:.1f}" fill="{_LINE}">{floor_top}</text>'
        )
        pts = list(tl.series)
        extra = [f"{x(pts[0].at):.1f},{base}"]
        floor = []
        for i, p in enumerate(pts):
            nxt = pts[i + 1].at if i + 1 < len(pts) else end
            extra += [f"{x(p.at):.1f},{yv(p.extra_gpus):.1f}", f"{x(nxt):.1f},{yv(p.extra_gpus):.1f}"]
            floor += [f"{x(p.at):.1f},{yf(p.floor):.1f}", f"{x(nxt):.1f},{yf(p.floor):.1f}"]
        extra.append(f"{x(end):.1f},{base}")
        out.append(f'<polygon points="{" ".join(extra)}" fill="{_AREA}" fill-opacity="0.5"/>')
        out.append(f'<polyline points="{" ".join(floor)}" fill="none" stroke="{_LINE}" stroke-width="2"/>')
        # The floor's value where it ends, unless the scale's top already says it.
        if pts[-1].floor != floor_top:
            out.append(
                f'<text x="{x(end) + 4:.1f}" y="{yf(pts[-1].floor) + 4:.1f}" fill="{_LINE}">{pts[-1].floor}</text>'
            )
        out.append(f'<line x1="{x(0):.1f}" y1="{base}" x2="{x(end):.1f}" y2="{base}" stroke="#888"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


_DASHES = ("", "6,4", "2,3")


def _axis(x: Callable[[float], float], y: float, end: float) -> list[str]:
    """A time axis at ``y``: the line and a tick label every round step (1s, 2s, 5s ... 1h ...), at most
    about eight of them, so the labels of two pictures on one axis fall on the same times."""
    step = round_width(end, most=8)
    out = [f'<line x1="{x(0):.1f}" y1="{y}" x2="{x(end):.1f}" y2="{y}" stroke="#888"/>']
    t = 0.0
    while t <= end + 1e-9:
        anchor = "start" if t == 0 else "middle"
        out.append(
            f'<line x1="{x(t):.1f}" y1="{y}" x2="{x(t):.1f}" y2="{y + 4}" stroke="#888"/>'
            f'<text x="{x(t):.1f}" y="{y + 16}" text-anchor="{anchor}" fill="#555">{_e(_clock(t))}</text>'
        )
        t += step
    return out  # the first picture's lines solid, the next dashed, then dotted


def to_svg_compare(title: str, panels: Sequence[Timeline]) -> str:
    """``panels`` in one SVG, one under the other on one time axis (the longest picture's end), each
    with its title, its bars (the colours of :func:`to_svg`) and its own axis; below them one chart of
    every picture's serving floor and extra GPUs, the first picture's lines solid, the next dashed."""
    label_w, chart_w, row_h, pad = 260, 560, 22, 10
    width = label_w + chart_w + 2 * pad + 60
    end = max([1.0, *(p.end for p in panels)])

    def x(t: float) -> float:
        return label_w + pad + chart_w * max(0.0, min(t, end)) / end

    body: list[str] = [f'<text x="{pad}" y="20" font-size="14" font-weight="bold">{_e(title)}</text>']
    y = 32
    for tl in panels:
        body.append(f'<text x="{pad}" y="{y + 16}" font-size="13" font-weight="bold">{_e(tl.title)}</text>')
        body.append(
            f'<text x="{x(end):.1f}" y="{y + 16}" text-anchor="end" fill="#555">'
            f"{_e('ends at ' + _clock(tl.end))}</text>"
        )
        y += 24
        if tl.note:
            body.append(f'<text x="{pad}" y="{y + 10}" font-size="11" fill="#555">{_e(tl.note)}</text>')
            y += 18
        for n, s in enumerate(tl.steps):
            top = y + n * row_h
            x0, x1 = x(s.start), x(s.end)
            colour = _COLOURS.get(s.kind, _COLOURS["done"])
            body.append(f'<text x="{pad}" y="{top + 15}">{_e(s.label)}</text>')
            body.append(
                f'<rect x="{x0:.1f}" y="{top + 3}" width="{max(x1 - x0, 1.0):.1f}" height="{row_h - 6}" '
                f'fill="{colour}"><title>{_e(f"{s.label}: {_clock(s.end - s.start)} {s.kind}")}</title></rect>'
            )
            body.append(
                f'<text x="{x1 + 4:.1f}" y="{top + 15}" fill="#333">{_e(_clock(s.end - s.start))}</text>'
            )
        y += max(1, len(tl.steps)) * row_h + 4
        body += _axis(x, y, end)
        y += 34
    drawn = [(n, tl) for n, tl in enumerate(panels) if tl.series]
    if drawn:
        series_h = 140
        legend_y = y + 6
        for n, tl in drawn:
            dash = _DASHES[min(n, len(_DASHES) - 1)]
            attr = f' stroke-dasharray="{dash}"' if dash else ""
            ly = legend_y + 16 * n
            floor_name = "serving Instances" + (f" of {tl.of}" if tl.of else "")
            body.append(
                f'<line x1="{pad}" y1="{ly - 4}" x2="{pad + 28}" y2="{ly - 4}" stroke="{_LINE}" '
                f'stroke-width="2"{attr}/><line x1="{pad + 34}" y1="{ly - 4}" x2="{pad + 62}" y2="{ly - 4}" '
                f'stroke="{_AREA}" stroke-width="2"{attr}/>'
                f'<text x="{pad + 68}" y="{ly}">{_e(tl.title)}: {_e(floor_name)}, extra GPUs</text>'
            )
        base = legend_y + 16 * len(panels) + 10 + series_h
        peak = max([1, *(p.extra_gpus for _, tl in drawn for p in tl.series)])
        # The floors on their own scale (right), as in :func:`to_svg`.
        floor_top = max([1, *(tl.of for _, tl in drawn), *(p.floor for _, tl in drawn for p in tl.series)])

        def yv(v: int) -> float:
            return base - series_h * v / peak

        def yf(v: int) -> float:
            return base - series_h * v / floor_top

        body.append(
            f'<text x="{label_w}" y="{base}" text-anchor="end" fill="#555">0</text>'
            f'<text x="{label_w}" y="{yv(peak) + 4:.1f}" text-anchor="end" fill="{_AREA}">{peak} GPUs</text>'
            f'<text x="{x(end) + 4:.1f}" y="{yf(floor_top) + 4:.1f}" fill="{_LINE}">{floor_top} Instances</text>'
        )
        for n, tl in drawn:
            dash = _DASHES[min(n, len(_DASHES) - 1)]
            attr = f' stroke-dasharray="{dash}"' if dash else ""
            pts = list(tl.series)
            floor: list[str] = []
            extra: list[str] = []
            for i, p in enumerate(pts):
                nxt = pts[i + 1].at if i + 1 < len(pts) else tl.end
                floor += [f"{x(p.at):.1f},{yf(p.floor):.1f}", f"{x(nxt):.1f},{yf(p.floor):.1f}"]
                extra += [f"{x(p.at):.1f},{yv(p.extra_gpus):.1f}", f"{x(nxt):.1f},{yv(p.extra_gpus):.1f}"]
            body.append(
                f'<polyline points="{" ".join(extra)}" fill="none" stroke="{_AREA}" stroke-width="2"{attr}/>'
            )
            body.append(
                f'<polyline points="{" ".join(floor)}" fill="none" stroke="{_LINE}" stroke-width="2"{attr}/>'
            )
        body += _axis(x, base, end)
        y = base + 30
    height = y + 10
    head = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    return "\n".join([*head, *body, "</svg>"]) + "\n"
