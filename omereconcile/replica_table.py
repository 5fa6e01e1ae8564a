"""Rows of ``kubectl ome get inferencereplicas``: pure, from raw InferenceReplica dicts and a ``now``.

Columns follow the contract (§1.5). Default: ``NAME COMPONENT PARENT DESIRED CURRENT READY LIFECYCLE AGE``;
``-o wide`` adds ``AVAILABLE REASON SERVING UPDATED ENCODING CURRENT-REVISION UPDATE-REVISION MIGRATIONS
PAUSED COORDINATION LIFECYCLE-FRESHNESS``; ``-A`` puts ``NAMESPACE`` first.

- Unset text cells print ``-``; unset status counts print ``0`` (the API's default for them).
- ``DESIRED`` is ``spec.replicas`` as stored, ``-`` when unset (the reconciler runs one Instance then).
- ``LIFECYCLE`` is the main condition as ``Type=Status``: ``RolloutStalled=True`` while a rollout is
  stalled, else ``Ready``, else ``RolloutStalled``; ``Unavailable`` when neither exists. ``REASON`` and
  ``LIFECYCLE-FRESHNESS`` describe that same condition.
- ``AGE`` is formatted the way kubectl formats it (apimachinery's ``duration.HumanDuration``).

Nothing here reads the clock, the environment or the API: ``omereconcile.kubectl`` does the I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

__all__ = [
    "COLUMNS",
    "VALID_RESOURCES",
    "WIDE_COLUMNS",
    "format_table",
    "human_duration",
    "lifecycle_condition",
    "replica_row",
    "replica_table",
    "resolve_resource",
]

# The names the plugin accepts for the resource (`irep`, the CRD short name, is not one of them).
VALID_RESOURCES: tuple[str, ...] = ("inferencereplicas", "inferencereplica", "ir")

COLUMNS: tuple[str, ...] = ("NAME", "COMPONENT", "PARENT", "DESIRED", "CURRENT", "READY", "LIFECYCLE", "AGE")
WIDE_COLUMNS: tuple[str, ...] = (
    "AVAILABLE",
    "REASON",
    "SERVING",
    "UPDATED",
    "ENCODING",
    "CURRENT-REVISION",
    "UPDATE-REVISION",
    "MIGRATIONS",
    "PAUSED",
    "COORDINATION",
    "LIFECYCLE-FRESHNESS",
)

JSON = Mapping[str, Any]


def resolve_resource(name: str) -> str:
    """``inferencereplicas`` for an accepted name; ``ValueError`` with the plugin's message otherwise."""
    if name.lower() in VALID_RESOURCES:
        return "inferencereplicas"
    raise ValueError(f'unknown resource "{name}" (valid resources: {", ".join(VALID_RESOURCES)})')


# -- AGE ----------------------------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """kubectl's AGE text (k8s.io/apimachinery/pkg/util/duration.HumanDuration) for a duration in seconds."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 60 * 2:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        s = secs % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _parse_time(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def age(obj: JSON, now: datetime) -> str:
    """AGE of an object: ``<unknown>`` without a parseable ``creationTimestamp`` (as kubectl prints)."""
    created = _parse_time(str((obj.get("metadata") or {}).get("creationTimestamp") or ""))
    if created is None:
        return "<unknown>"
    return human_duration((now - created).total_seconds())


# -- cells --------------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "0"


def _conditions(obj: JSON) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type"):
            out.setdefault(str(cond["type"]), cond)
    return out


def lifecycle_condition(obj: JSON) -> JSON | None:
    """The main condition: RolloutStalled when True, else Ready, else RolloutStalled; None if neither."""
    conds = _conditions(obj)
    stalled = conds.get("RolloutStalled")
    if stalled is not None and stalled.get("status") == "True":
        return stalled
    return conds.get("Ready") or stalled


def _lifecycle(cond: JSON | None) -> str:
    if cond is None:
        return "Unavailable"
    return f"{cond.get('type')}={_text(cond.get('status'))}"


def _freshness(obj: JSON, cond: JSON | None) -> str:
    if cond is None:
        return "Unavailable"
    observed = cond.get("observedGeneration")
    generation = (obj.get("metadata") or {}).get("generation")
    if not isinstance(observed, int) or observed <= 0:
        return "Unobserved"
    if isinstance(generation, int) and observed < generation:
        return "Stale"
    return "Current"


def _encoding(status: JSON) -> str:
    return "ColumnarV2" if status.get("instanceStatusEncoding") == "ColumnarV2" else "DenseV1"


def replica_row(obj: JSON, now: datetime, *, wide: bool = False, namespace: bool = False) -> list[str]:
    """One table row for an InferenceReplica dict, in the order of :func:`header`."""
    meta: JSON = obj.get("metadata") or {}
    spec: JSON = obj.get("spec") or {}
    status: JSON = obj.get("status") or {}
    cond = lifecycle_condition(obj)
    replicas = spec.get("replicas")
    row = [
        _text(meta.get("name")),
        _text(spec.get("component")),
        _text((spec.get("parentRef") or {}).get("name")),
        str(replicas) if isinstance(replicas, int) and not isinstance(replicas, bool) else "-",
        _count(status.get("replicas")),
        _count(status.get("readyReplicas")),
        _lifecycle(cond),
        age(obj, now),
    ]
    if wide:
        row += [
            _count(status.get("availableReplicas")),
            _text(cond.get("reason") if cond else None),
            _count(status.get("servingReplicas")),
            _count(status.get("updatedReplicas")),
            _encoding(status),
            _text(status.get("currentRevision")),
            _text(status.get("updateRevision")),
            str(len(status.get("migrations") or [])),
            "true" if spec.get("paused") is True else "false",
            "-",  # COORDINATION: always `-` in this release
            _freshness(obj, cond),
        ]
    if namespace:
        row.insert(0, _text(meta.get("namespace")))
    return row


def header(*, wide: bool = False, namespace: bool = False) -> list[str]:
    cols = list(COLUMNS) + (list(WIDE_COLUMNS) if wide else [])
    return ["NAMESPACE", *cols] if namespace else cols


def _sort_key(obj: JSON) -> tuple[str, str]:
    meta: JSON = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def replica_table(
    items: Iterable[JSON], now: datetime, *, wide: bool = False, namespace: bool = False
) -> list[list[str]]:
    """Header plus one row per replica, sorted by namespace then name."""
    rows = [replica_row(o, now, wide=wide, namespace=namespace) for o in sorted(items, key=_sort_key)]
    return [header(wide=wide, namespace=namespace), *rows]


def format_table(rows: Sequence[Sequence[str]]) -> str:
    """Aligned text like kubectl's tabwriter (min width 6, padding 3; the last column is not padded)."""
    if not rows:
        return ""
    ncols = max(len(r) for r in rows)
    widths = [0] * ncols
    for r in rows:
        for i, cell in enumerate(r[:-1]):
            widths[i] = max(widths[i], len(cell) + 3, 6)
    lines = []
    for r in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(r[:-1])]
        lines.append("".join(cells) + (r[-1] if r else ""))
    return "\n".join(lines) + "\n"
