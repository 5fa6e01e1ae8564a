"""What a change to the catalog (or to the replicas) does to each InferenceReplica: the CI snapshot diff.

:func:`diff_replicas` renders every replica against the objects before and after a change and says,
per replica, what OME would do:

==================  =====================================================================  ========
status              meaning                                                                changed
==================  =====================================================================  ========
``unchanged``       renders to the same revision: nothing rolls
``rolls``           renders to another revision: every Instance rolls to it               yes
``blocks``          rendered (or blocked for another reason) before, cannot render now;    yes
                    OME keeps the running pods as they are
``still-blocked``   blocked before and after for the same reason: the change is not
                    what blocks it
``unblocks``        blocked before, renders now: OME creates its pods                      yes
``new``             only among the after replicas                                          yes
``removed``         only among the before replicas: OME tears its pods down                yes
==================  =====================================================================  ========

``changed`` is what the CLI's exit status reports (1 when any replica changed).

Each rolling replica comes with a semantic diff of its runners' pod templates. Keyed lists are
compared by identity, not position (Kubernetes' strategic-merge keys): containers, init and ephemeral
containers, volumes, imagePullSecrets, resourceClaims and schedulingGates by ``name``; hostAliases by
``ip``; a container's env by ``name``, volumeMounts by ``mountPath`` (a volume may be mounted twice),
volumeDevices by ``devicePath`` and ports by ``name`` (``containerPort/protocol`` when unnamed). Other
lists (args, command, tolerations) are positional, as they are to the container runtime.

Order still matters to OME: the revision hashes the pod spec's bytes, so reordering env changes the
revision although no value changed. Such a replica ``rolls``, and its diff says ``order changed`` for
that list, which is the only thing that differs.

Paths read like ``runner default: containers[ome-container].env[MODEL_PATH].value: "/a" -> "/b"``:
keyed entries in brackets, pod spec fields without their ``spec.`` prefix, ``metadata.`` kept. They
are listed in natural order (:func:`natural_key`: ``command[2]`` before ``command[10]``).

A replica that renders from another runtime than before (a new runtime outranks the old one, or the
old one is disabled) says ``runtime changed from <Kind> <old> to <Kind> <new>`` before its field
changes; each side's runtime is in the JSON output.

Pure: no I/O. The CLI (``omerender diff``) loads the objects and prints :func:`to_text`,
:func:`to_json` or :func:`to_markdown`. This is the only omerender module using deepdiff (``tools``
extra), imported when a template diff is computed, so the types and the reports import without it (the
reconciler image, which installs only the ``reconcile`` extra, imports ``omereconcile.forecast``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, Literal

from omerender.catalog import Catalog
from omerender.errors import RenderBlocked
from omerender.models import InferenceReplica
from omerender.preview import revision_of
from omerender.render import RenderedRunner, render

__all__ = [
    "Blocked",
    "Change",
    "Outcome",
    "ReplicaDiff",
    "Status",
    "diff_replica",
    "diff_replicas",
    "natural_key",
    "normalise_template",
    "outcome",
    "summary",
    "template_changes",
    "to_json",
    "to_markdown",
    "to_text",
]

ReplicaKey = tuple[str, str]  # (namespace, name)
ChangeKind = Literal["changed", "added", "removed", "reordered"]


class Status(StrEnum):
    UNCHANGED = "unchanged"
    ROLLS = "rolls"
    BLOCKS = "blocks"
    STILL_BLOCKED = "still-blocked"
    UNBLOCKS = "unblocks"
    NEW = "new"
    REMOVED = "removed"


_CHANGED: Final = frozenset(
    {Status.ROLLS, Status.BLOCKS, Status.UNBLOCKS, Status.NEW, Status.REMOVED},
)


@dataclass(frozen=True, slots=True)
class Blocked:
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Outcome:
    """A replica rendered against one set of objects: its revision and runners, or why it is blocked."""

    revision: str | None = None
    runners: tuple[RenderedRunner, ...] = ()
    blocked: Blocked | None = None
    # The revision's inputs besides the templates (01 §9): they explain a roll the templates do not.
    payload: bytes = b""
    scope_uid: str = ""
    collision_count: int = 0
    # The runtime the templates came from (None for spec.runners or a blocked render).
    runtime_kind: str | None = None
    runtime_name: str | None = None

    @property
    def runtime(self) -> str | None:
        """``ClusterServingRuntime srt-x``, or None when no runtime made this render."""
        return f"{self.runtime_kind} {self.runtime_name}" if self.runtime_name else None


def outcome(replica: InferenceReplica, catalog: Catalog) -> Outcome:
    """Render ``replica`` against ``catalog`` and compute its revision as OME's controller does.

    A template holding a value Kubernetes' Go types refuse blocks as ``RenderFailed`` naming the
    field, like any other render that cannot proceed (the fault may be the runtime's, not the replica's).
    """
    try:
        result = render(replica, catalog)
        revision = revision_of(result)
    except RenderBlocked as blocked:
        return Outcome(blocked=Blocked(blocked.reason.value, blocked.message))
    return Outcome(
        revision=revision.name,
        runners=result.runners,
        payload=revision.payload,
        scope_uid=revision.scope_uid,
        collision_count=revision.collision_count,
        runtime_kind=result.runtime_kind,
        runtime_name=result.runtime_name,
    )


# -- template normalisation ---------------------------------------------------------------------------


class _Keyed(dict[str, Any]):
    """A list turned into a dict keyed by its items' identity, in the list's order."""


def _field(name: str) -> Callable[[Mapping[str, Any]], str | None]:
    def key(item: Mapping[str, Any]) -> str | None:
        value = item.get(name)
        return str(value) if value not in (None, "") else None

    return key


def _port(item: Mapping[str, Any]) -> str | None:
    if item.get("name"):
        return str(item["name"])
    if item.get("containerPort") is None:
        return None
    return f"{item['containerPort']}/{item.get('protocol') or 'TCP'}"


_BY_NAME = _field("name")
_POD_LISTS: Final[Mapping[str, Callable[[Mapping[str, Any]], str | None]]] = {
    "containers": _BY_NAME,
    "initContainers": _BY_NAME,
    "ephemeralContainers": _BY_NAME,
    "volumes": _BY_NAME,
    "imagePullSecrets": _BY_NAME,
    "resourceClaims": _BY_NAME,
    "schedulingGates": _BY_NAME,
    "hostAliases": _field("ip"),
}
_CONTAINER_LISTS: Final[Mapping[str, Callable[[Mapping[str, Any]], str | None]]] = {
    "env": _BY_NAME,
    "ports": _port,
    "volumeMounts": _field("mountPath"),
    "volumeDevices": _field("devicePath"),
}
_CONTAINER_FIELDS: Final = ("containers", "initContainers", "ephemeralContainers")


def _keyed(items: Any, key: Callable[[Mapping[str, Any]], str | None]) -> Any:
    if not isinstance(items, list):
        return items
    out = _Keyed()
    for index, item in enumerate(items):
        name = key(item) if isinstance(item, Mapping) else None
        name = name if name is not None else f"#{index}"
        unique, n = name, 1
        while unique in out:  # a repeated key (two env vars named alike): keep both, in order
            n += 1
            unique = f"{name}#{n}"
        out[unique] = item
    return out


def normalise_template(template: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a pod template whose keyed lists are :class:`dict` s keyed by identity, in order."""
    out = dict(template)
    spec = out.get("spec")
    if isinstance(spec, Mapping):
        spec = dict(spec)
        for field, key in _POD_LISTS.items():
            if field in spec:
                spec[field] = _keyed(spec[field], key)
        for field in _CONTAINER_FIELDS:
            containers = spec.get(field)
            if isinstance(containers, _Keyed):
                for name, container in containers.items():
                    if isinstance(container, Mapping):
                        container = dict(container)
                        for sub, key in _CONTAINER_LISTS.items():
                            if sub in container:
                                container[sub] = _keyed(container[sub], key)
                        containers[name] = container
        out["spec"] = spec
    return out


def _plain(value: Any) -> Any:
    """Undo the normalisation for display: keyed dicts back to lists."""
    if isinstance(value, _Keyed):
        return [_plain(v) for v in value.values()]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# -- changes ------------------------------------------------------------------------------------------

_MISSING: Final = object()
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VALUE_LIMIT = 300


def _fmt(value: Any, limit: int | None = _VALUE_LIMIT) -> str:
    text = json.dumps(_plain(value), ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: ``where`` is ``runner <name>`` or ``revision``; ``path`` is empty for a whole runner."""

    where: str
    path: str
    kind: ChangeKind
    before: Any = None
    after: Any = None

    @property
    def runner(self) -> str | None:
        return self.where.removeprefix("runner ") if self.where.startswith("runner ") else None

    def line(self, limit: int | None = _VALUE_LIMIT) -> str:
        head = f"{self.where}: {self.path}: " if self.path else f"{self.where}: "
        if self.kind == "added":
            return head + ("added" if self.after is None else f"added {_fmt(self.after, limit)}")
        if self.kind == "removed":
            return head + ("removed" if self.before is None else f"removed {_fmt(self.before, limit)}")
        if self.kind == "reordered":
            return head + f"order changed: {', '.join(self.before)} -> {', '.join(self.after)}"
        return head + f"{_fmt(self.before, limit)} -> {_fmt(self.after, limit)}"

    def __str__(self) -> str:
        return self.line()

    def as_json(self) -> dict[str, Any]:
        return {
            "where": self.where,
            "runner": self.runner,
            "path": self.path,
            "change": self.kind,
            "before": _plain(self.before),
            "after": _plain(self.after),
        }


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, Mapping):
        return node.get(key, _MISSING)
    if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
        return node[key]
    return _MISSING


def _path_text(parts: Iterable[Any], before: Any, after: Any) -> str:
    """The display path of ``parts`` (walked from both template roots): keyed entries in brackets.

    A leading ``spec`` is dropped (pod spec fields read as ``containers[x].image``); a key that is not
    an identifier (``app.kubernetes.io/name``) and a list index are bracketed too.
    """
    out = ""
    for index, part in enumerate(parts):
        container = before if isinstance(before, Mapping | list) else after
        if index == 0 and part == "spec":
            pass
        elif isinstance(container, _Keyed) or isinstance(part, int) or not _IDENT.fullmatch(str(part)):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
        before, after = _child(before, part), _child(after, part)
    return out


_REPORTS: Final[Mapping[str, ChangeKind]] = {
    "values_changed": "changed",
    "type_changes": "changed",
    "dictionary_item_added": "added",
    "iterable_item_added": "added",
    "dictionary_item_removed": "removed",
    "iterable_item_removed": "removed",
}
_KIND_ORDER: Final = {"removed": 0, "changed": 1, "added": 2, "reordered": 3}


_DIGITS: Final = re.compile(r"(\d+)")


def natural_key(path: str) -> tuple[str | int, ...]:
    """Sort key reading digit runs as numbers: ``command[2]`` before ``command[10]``.

    ``re.split`` with a capturing group alternates text and digits, so both keys hold text at even
    and numbers at odd positions and compare element by element.
    """
    return tuple(int(part) if index % 2 else part for index, part in enumerate(_DIGITS.split(path)))


def _present(value: Any, absent: object) -> Any:
    # deepdiff marks the missing side of an addition or removal with its ``notpresent`` sentinel.
    return None if value is absent else value


def _order_changes(
    where: str, before: Any, after: Any, parts: list[Any], roots: tuple[Any, Any]
) -> list[Change]:
    out: list[Change] = []
    if isinstance(before, _Keyed) and isinstance(after, _Keyed):
        shared = set(before) & set(after)
        old = [k for k in before if k in shared]
        new = [k for k in after if k in shared]
        if old != new:
            out.append(Change(where, _path_text(parts, *roots), "reordered", old, new))
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in before:
            if key in after:
                out.extend(_order_changes(where, before[key], after[key], [*parts, key], roots))
    return out


def _template_diff(where: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    if before == after:  # the common case in a large fleet: skip deepdiff
        return []
    from deepdiff import DeepDiff
    from deepdiff.helper import notpresent

    old, new = normalise_template(before), normalise_template(after)
    changes: list[Change] = []
    tree = DeepDiff(old, new, ignore_order=False, view="tree", verbose_level=2)
    for report, levels in tree.items():
        kind = _REPORTS.get(report, "changed")
        for level in levels:
            path = _path_text(level.path(output_format="list"), old, new)
            changes.append(
                Change(where, path, kind, _present(level.t1, notpresent), _present(level.t2, notpresent))
            )
    changes.extend(_order_changes(where, old, new, [], (old, new)))
    return sorted(changes, key=lambda c: (natural_key(c.path), _KIND_ORDER[c.kind]))


def template_changes(before: Iterable[RenderedRunner], after: Iterable[RenderedRunner]) -> tuple[Change, ...]:
    """What differs between two renders' runners: runners added or removed, sizes, template fields."""
    old = {r.name: r for r in before}
    new = {r.name: r for r in after}
    out: list[Change] = []
    for name in [*new, *(n for n in old if n not in new)]:
        where = f"runner {name}"
        if name not in old:
            out.append(Change(where, "", "added"))
        elif name not in new:
            out.append(Change(where, "", "removed"))
        elif old[name] == new[name]:
            continue  # the common case; memoized runners compare without making their templates
        else:
            if old[name].size != new[name].size:
                out.append(Change(where, "size", "changed", old[name].size, new[name].size))
            out.extend(_template_diff(where, old[name].template, new[name].template))
    return tuple(out)


def _payload(raw: bytes) -> Mapping[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, Mapping) else {}


def _revision_changes(old: Outcome, new: Outcome) -> list[Change]:
    """The revision's inputs that are not templates: topology key, pairing protocol, scope, collisions."""
    out: list[Change] = []
    if old.payload != new.payload:  # equal bytes hold equal keys: most of a fleet decodes nothing
        a, b = _payload(old.payload), _payload(new.payload)
        for key in ("topologyKey", "pairingProtocol"):
            if a.get(key) != b.get(key):
                out.append(Change("revision", key, "changed", a.get(key), b.get(key)))
    if old.scope_uid != new.scope_uid:
        out.append(Change("revision", "scopeUID", "changed", old.scope_uid, new.scope_uid))
    if old.collision_count != new.collision_count:
        out.append(Change("revision", "collisionCount", "changed", old.collision_count, new.collision_count))
    return out


# -- per replica ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReplicaDiff:
    """What one replica does across the change. ``before``/``after`` are None when it is absent there."""

    namespace: str
    name: str
    status: Status
    before: Outcome | None
    after: Outcome | None
    changes: tuple[Change, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def changed(self) -> bool:
        """Whether OME would act on it: it rolls, blocks, unblocks, appears or goes."""
        return self.status in _CHANGED

    @property
    def headline(self) -> str:
        old, new = self.before, self.after
        if self.status is Status.NEW and new is not None:
            return f"new, blocks {new.blocked.reason}" if new.blocked else f"new -> {new.revision}"
        if self.status is Status.REMOVED and old is not None:
            return (
                f"removed (was blocked {old.blocked.reason})"
                if old.blocked
                else f"removed (was {old.revision})"
            )
        if old is None or new is None:  # pragma: no cover - only NEW and REMOVED lack a side
            return self.status.value
        if self.status is Status.ROLLS:
            return f"rolls {old.revision} -> {new.revision}"
        if self.status is Status.BLOCKS and new.blocked is not None:
            was = f" (was {old.blocked.reason})" if old.blocked else ""
            return f"blocks {new.blocked.reason}{was}"
        if self.status is Status.STILL_BLOCKED and new.blocked is not None:
            return f"still blocks {new.blocked.reason}"
        if self.status is Status.UNBLOCKS:
            return f"unblocks -> {new.revision}"
        return self.status.value

    @property
    def result(self) -> str:
        """The status and the block reason, without revisions: ``rolls``, ``blocks ModelNotFound``."""
        side = self.after if self.after is not None else self.before
        reason = side.blocked.reason if side is not None and side.blocked is not None else None
        if reason is None:
            switch = self.runtime_change
            return f"{self.status.value}, runtime {switch[0]} -> {switch[1]}" if switch else self.status.value
        if self.status is Status.BLOCKS:
            return f"blocks {reason}"
        if self.status is Status.STILL_BLOCKED:
            return f"still blocks {reason}"
        return f"{self.status.value}, blocked {reason}"  # new or removed while blocked

    @property
    def runtime_change(self) -> tuple[str, str] | None:
        """(old, new) runtime when the replica renders on both sides, from different runtimes."""
        old = self.before.runtime if self.before is not None else None
        new = self.after.runtime if self.after is not None else None
        return (old, new) if old is not None and new is not None and old != new else None

    @property
    def lead(self) -> tuple[str, ...]:
        """What to read before the field changes: the runtime switch that explains most of them."""
        switch = self.runtime_change
        return (f"runtime changed from {switch[0]} to {switch[1]}",) if switch is not None else ()

    @property
    def notes(self) -> tuple[str, ...]:
        out: list[str] = []
        if self.after is not None and self.after.blocked is not None:
            out.append(f"{self.after.blocked.reason}: {self.after.blocked.message}")
            if self.before is not None and self.before.revision is not None:
                out.append(f"OME keeps the running pods on {self.before.revision}")
        if self.status is Status.UNCHANGED and self.changes:
            out.append("these differences are outside the revision hash: OME replaces no pods")
        return tuple(out)


def _status(old: Outcome | None, new: Outcome | None) -> Status:
    if old is None:
        return Status.NEW
    if new is None:
        return Status.REMOVED
    if new.blocked is not None:
        same = old.blocked is not None and old.blocked.reason == new.blocked.reason
        return Status.STILL_BLOCKED if same else Status.BLOCKS
    if old.blocked is not None:
        return Status.UNBLOCKS
    return Status.UNCHANGED if old.revision == new.revision else Status.ROLLS


def diff_replica(
    before: InferenceReplica | None,
    after: InferenceReplica | None,
    before_catalog: Catalog,
    after_catalog: Catalog,
) -> ReplicaDiff:
    """Render the replica on both sides (either may be None: added or removed) and compare."""
    known = after or before
    if known is None:
        raise ValueError("diff_replica needs the replica on at least one side")
    old = outcome(before, before_catalog) if before is not None else None
    new = outcome(after, after_catalog) if after is not None else None
    changes: tuple[Change, ...] = ()
    if old is not None and new is not None and old.blocked is None and new.blocked is None:
        changes = (*template_changes(old.runners, new.runners), *_revision_changes(old, new))
    return ReplicaDiff(known.namespace, known.metadata.name, _status(old, new), old, new, changes)


def diff_replicas(
    before: Mapping[ReplicaKey, InferenceReplica],
    after: Mapping[ReplicaKey, InferenceReplica],
    before_catalog: Catalog,
    after_catalog: Catalog,
) -> tuple[ReplicaDiff, ...]:
    """Every replica of either side, matched by (namespace, name), sorted by namespace and name."""
    return tuple(
        diff_replica(before.get(key), after.get(key), before_catalog, after_catalog)
        for key in sorted(set(before) | set(after))
    )


# -- output -----------------------------------------------------------------------------------------------


def summary(diffs: Iterable[ReplicaDiff]) -> str:
    """``3 replicas: 1 rolls, 2 unchanged`` (statuses in a fixed order)."""
    counts = Counter(d.status for d in diffs)
    total = sum(counts.values())
    parts = [f"{counts[s]} {s.value}" for s in Status if counts[s]]
    return f"{total} replica{'s' if total != 1 else ''}: {', '.join(parts) or 'none'}"


def to_text(diffs: Iterable[ReplicaDiff], *, notes: Sequence[str] = ()) -> str:
    """``notes`` (what the comparison assumed) first, then one headline per replica, then its changes
    and notes indented by two spaces."""
    lines: list[str] = [f"note: {note}" for note in notes]
    for d in diffs:
        lines.append(f"{d.key}: {d.headline}")
        lines.extend(f"  {note}" for note in d.lead)
        lines.extend(f"  {change.line()}" for change in d.changes)
        lines.extend(f"  {note}" for note in d.notes)
    return "".join(f"{line}\n" for line in lines)


def _outcome_json(side: Outcome | None) -> dict[str, Any] | None:
    if side is None:
        return None
    blocked = side.blocked
    runtime = {"kind": side.runtime_kind, "name": side.runtime_name} if side.runtime_name else None
    return {
        "revision": side.revision,
        "runtime": runtime,
        "blocked": {"reason": blocked.reason, "message": blocked.message} if blocked else None,
    }


def to_json(diffs: Iterable[ReplicaDiff], *, notes: Sequence[str] = ()) -> dict[str, Any]:
    """``{"replicas": [...], "summary": {status: count}, "changed": bool, "notes": [...]}``; values
    unabridged; each side names the runtime it rendered from."""
    items = list(diffs)
    counts = Counter(d.status for d in items)
    return {
        "notes": list(notes),
        "replicas": [
            {
                "namespace": d.namespace,
                "name": d.name,
                "status": d.status.value,
                "headline": d.headline,
                "changed": d.changed,
                "runtimeChanged": d.runtime_change is not None,
                "before": _outcome_json(d.before),
                "after": _outcome_json(d.after),
                "changes": [c.as_json() for c in d.changes],
                "notes": [*d.lead, *d.notes],
            }
            for d in items
        ],
        "summary": {s.value: counts[s] for s in Status},
        "changed": any(d.changed for d in items),
    }


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _side_cell(side: Outcome | None) -> str:
    if side is None:
        return "—"
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


def to_markdown(diffs: Iterable[ReplicaDiff], *, notes: Sequence[str] = ()) -> str:
    """A pull-request comment: a table of the replicas that change, a collapsible block for each.

    Unchanged replicas are listed in one collapsed block at the end, so a large fleet stays readable.
    """
    items = list(diffs)
    moving: list[ReplicaDiff] = []
    still: list[ReplicaDiff] = []
    for d in items:  # one pass: "d not in moving" compared every pair of a fleet
        (moving if d.status is not Status.UNCHANGED or d.changes else still).append(d)
    out = [f"### omerender diff: {summary(items)}\n\n"]
    out.extend(f"> {_html(note)}\n\n" for note in notes)
    if moving:
        out.append("| Replica | Result | Before | After |\n| --- | --- | --- | --- |\n")
        for d in moving:
            out.append(
                f"| `{d.key}` | {_cell(d.result)} | {_side_cell(d.before)} | {_side_cell(d.after)} |\n"
            )
        for d in moving:
            body = "".join(f"{n}\n" for n in d.lead)
            body += "".join(f"{c.line(limit=None)}\n" for c in d.changes)
            body += "".join(f"{n}\n" for n in d.notes)
            out.append(
                f"\n<details>\n<summary><code>{_html(d.key)}</code> {_html(d.headline)}"
                f"{_count(len(d.changes))}</summary>\n\n"
            )
            out.append(_fence(body) if body else "No template changes.\n")
            out.append("\n</details>\n")
    else:
        out.append("No replica rolls or blocks.\n")
    if still:
        names = "".join(f"- `{d.key}`\n" for d in still)
        out.append(f"\n<details>\n<summary>{len(still)} unchanged</summary>\n\n{names}\n</details>\n")
    return "".join(out)
