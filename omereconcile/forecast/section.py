"""The forecast by group, drawn: the part of the review comment that says what a roll costs over time.

Groups come from whoever groups the replicas (the diff's grouping by cause, or
:func:`groups_by_runtime` when the forecast runs alone) as plain tuples ``(label, ((namespace, name),
...))``, so this module depends on no grouping type. Per group: the peak extra GPUs and the serving floor,
both summed over the group's replicas on the shared clock (so they add up only where the replicas'
rolls overlap), and the duration from the first replica's start to the last one's end. The picture is
:mod:`omereconcile.timeline`'s: a bar per group, and the whole change's serving floor and extra GPUs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from omereconcile.forecast.build import Forecast
from omereconcile.forecast.report import (
    _HEAD,
    _TITLES,
    _dur,
    _kept_out,
    _pct,
    _plural,
    cut_line,
    headline,
    markdown_row,
    pending_keys,
)
from omereconcile.forecast.report import (
    _row as _replica_row,
)
from omereconcile.forecast.run import ReplicaForecast
from omereconcile.timeline import Point, Step, Timeline, to_mermaid
from omerender.diff import ReplicaDiff, Status

__all__ = ["GroupCost", "Groups", "forecast_section", "group_costs", "groups_by_runtime", "timeline"]

Groups = Sequence[tuple[str, Sequence[tuple[str, str]]]]
OTHER = "other rolling replicas"


@dataclass(frozen=True)
class GroupCost:
    """What one group's roll costs, from the forecast."""

    label: str
    replicas: tuple[ReplicaForecast, ...]  # the group's replicas that were forecast
    not_forecast: int  # the group's replicas listed but not forecast (they do not roll)
    instances: int
    peak_extra_gpus: int
    floor: int  # fewest of the group's Instances serving at once
    start: float  # seconds after the change
    end: float
    completes: bool
    waits: bool  # a replica waited Unschedulable for room (and then completed)
    series: tuple[Point, ...]

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def kind(self) -> str:
        return "held" if not self.completes else "waits" if self.waits else "done"


def merged(replicas: Iterable[ReplicaForecast]) -> tuple[Point, ...]:
    """The replicas' series summed on the shared clock: serving Instances and extra GPUs at each moment
    any of them changes (a replica counts all its Instances serving and no extra GPU before its start)."""
    reps = list(replicas)
    serving = [r.instances for r in reps]
    extra = [0] * len(reps)
    events = sorted((at, n, s, e) for n, r in enumerate(reps) for at, s, e in r.series)
    out: list[Point] = []
    total_s, total_e = sum(serving), 0
    for at, n, s, e in events:
        total_s += s - serving[n]
        total_e += e - extra[n]
        serving[n], extra[n] = s, e
        if out and out[-1].at == at:
            out[-1] = Point(at, total_s, total_e)
        elif not out or (out[-1].floor, out[-1].extra_gpus) != (total_s, total_e):
            out.append(Point(at, total_s, total_e))
    return tuple(out)


def group_costs(f: Forecast, groups: Groups) -> tuple[GroupCost, ...]:
    """Each group's cost, in the order given; the forecast's rolling replicas no group names last, as
    one group of their own (so the groups account for the whole roll)."""
    by_key = {(r.namespace, r.name): r for r in f.replicas}
    seen: set[tuple[str, str]] = set()
    listed = [(label, list(keys)) for label, keys in groups]
    rest = [k for k in by_key if k not in {k for _, keys in listed for k in keys}]
    if rest:
        listed.append((OTHER, rest))
    out: list[GroupCost] = []
    for label, keys in listed:
        reps = tuple(by_key[k] for k in keys if k in by_key and k not in seen)
        missing = sum(1 for k in keys if k not in by_key)
        seen.update(keys)
        series = merged(reps)
        instances = sum(r.instances for r in reps)
        start = min((r.started_at for r in reps), default=0.0)
        end = max((r.started_at + r.duration for r in reps), default=0.0)
        out.append(
            GroupCost(
                label=label,
                replicas=reps,
                not_forecast=missing,
                instances=instances,
                peak_extra_gpus=max((p.extra_gpus for p in series), default=0),
                floor=min((p.floor for p in series), default=instances),
                start=start,
                end=end,
                completes=all(r.completes for r in reps),
                waits=any(h.gate == "Unschedulable" for r in reps for h in r.holds),
                series=series,
            )
        )
    return tuple(out)


def timeline(f: Forecast, groups: Groups) -> Timeline:
    """The picture of the roll: a bar per group that rolls, and the whole change's serving floor and
    extra GPUs (summed over every rolling replica)."""
    costs = [c for c in group_costs(f, groups) if c.replicas]
    steps = tuple(Step(f"{c.label} ({len(c.replicas)})", c.start, c.end, c.kind) for c in costs)
    return Timeline("Rollout forecast", steps, merged(f.replicas), f.totals.instances)


def _row(c: GroupCost) -> list[str]:
    if not c.replicas:
        return [c.label, f"{c.not_forecast} not forecast", "-", "-", "-"]
    count = _plural(len(c.replicas), "replica") + (
        f" (+{c.not_forecast} not forecast)" if c.not_forecast else ""
    )
    done = ("≈ " + _dur(c.duration)) if c.completes else "held (does not complete)"
    if c.completes and c.waits:
        done += ", waits for room"
    return [
        c.label,
        f"{count}, {_plural(c.instances, 'Instance')}",
        f"+{c.peak_extra_gpus}",
        f"{c.floor}/{c.instances} ({_pct(c.floor, c.instances)})",
        done,
    ]


def forecast_section(
    f: Forecast, groups: Groups, *, uid_note: str | None = None, in_review: bool = False
) -> str:
    """The forecast part of the review comment (markdown): the headline, a row per group (peak extra
    GPUs, serving floor, duration), the roll drawn as Mermaid (a gantt of the groups over time and an
    xychart of the serving floor and extra GPUs), then the row of each replica (collapsed) and the
    replicas not forecast. ``uid_note`` (:func:`omerender.diff.uid_note`): one line after the groups.
    ``in_review``: inside the diff's review, which already says why each replica that does not roll is
    where it is: only what the forecast adds (pods that cannot be placed) is said of those."""
    out = ["### Rollout forecast", "", f"**{headline(f)}**", ""]
    costs = group_costs(f, groups)
    if any(c.replicas for c in costs):
        out += [
            "| group | replicas | peak extra GPUs | serving floor | duration |",
            "|---|---|---|---|---|",
            *("| " + " | ".join(x.replace("|", "\\|") for x in _row(c)) + " |" for c in costs),
            "",
            to_mermaid(timeline(f, groups)).rstrip(),
            "",
        ]
    if uid_note is not None:
        out += [f"Note: {uid_note}", ""]
    if f.replicas:
        out += [
            f"<details><summary>{_plural(len(f.replicas), 'rolling replica')}, one by one</summary>",
            "",
            "| " + " | ".join(_TITLES.get(h, h.title()) for h in _HEAD) + " |",
            "|" + "---|" * len(_HEAD),
            *(markdown_row(_replica_row(r)) for r in f.replicas),
            "",
            "</details>",
            "",
        ]
    out.extend(cut_line(f"- {line}") for line in (*f.pending, *f.unplaced))
    if not in_review:
        out.extend(
            f"- `{n.key}`: not forecast ({n.why})"
            for n in f.not_forecast
            if n.changed and n.key not in pending_keys(f)
        )
        if (quiet := _kept_out(f)) is not None:
            out.append(f"- {quiet}")
    return "\n".join(out).rstrip() + "\n"


def groups_by_runtime(diffs: Iterable[ReplicaDiff]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The rolling replicas grouped by the runtime they render with after the change (the forecast's
    own grouping when no grouping by cause is given), largest group first."""
    out: dict[str, list[tuple[str, str]]] = {}
    for d in diffs:
        if d.status is Status.ROLLS and d.after is not None:
            label = f"rolls with {d.after.runtime_name}" if d.after.runtime_name else "rolls (spec.runners)"
            out.setdefault(label, []).append((d.namespace, d.name))
    return sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[0]))
