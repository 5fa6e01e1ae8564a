"""What a change to the catalog (or to the replicas) does to each InferenceReplica: the CI snapshot diff.

:func:`diff_replicas` renders every replica against the objects before and after a change and says,
per replica, what OME would do:

=============================  ==============================================================
status (``--fail-on`` name)     meaning
=============================  ==============================================================
``rolls``                      renders to another revision: every Instance rolls to it
``blocks``                     rendered before (or was unknown until downloaded), cannot render
                               now; OME keeps the running pods as they are
``unblocks``                   blocked (or unknown until downloaded) before, renders now
``new``                        only among the after replicas (rendered, blocked or unknown)
``removed``                    only among the before replicas: OME tears its pods down
``unknown``                    "unknown until downloaded": its model, assumed Ready, has no
                               format name, and OME reads the format from the weights, so the
                               runtime it will select is unknown (the words and rule of
                               ``omerender lint --assume-models-ready``)
``still-blocks``               blocked before and after (for the same or another reason): the
                               replica never rendered, so the change blocks nothing
``unchanged``                  renders to the same revision: nothing rolls
=============================  ==============================================================

:attr:`ReplicaDiff.changed` says whether the verdict is a change (a replica unknown on both sides, or
blocked on both, is none); the CLI's exit status is 1 when a replica has a verdict its ``--fail-on``
names (``rolls,blocks`` by default), as dyff's ``--set-exit-code``.

Each rolling replica comes with a semantic diff of its runners' pod templates. Keyed lists are
compared by identity, not position (Kubernetes' strategic-merge keys): containers, init and ephemeral
containers, volumes, imagePullSecrets, resourceClaims and schedulingGates by ``name``; hostAliases by
``ip``; a container's env by ``name``, volumeMounts by ``mountPath`` (a volume may be mounted twice),
volumeDevices by ``devicePath`` and ports by ``name`` (``containerPort/protocol`` when unnamed); any
other list whose items all carry a distinct ``name`` by that name. A list of scalars (``args``,
``command``) is aligned as a sequence (:class:`difflib.SequenceMatcher`): one inserted argument is one
``added`` entry, not a change of every later index. Other lists (tolerations) are positional.

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
import pickle
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Any, Final, Literal

from omerender._records import record
from omerender.catalog import CLUSTER_SCOPED, Catalog, CatalogKey
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import InferenceReplica, ModelResource
from omerender.preview import revision_of
from omerender.render import RenderedRunner, render

__all__ = [
    "DEFAULT_FAIL_ON",
    "DEFAULT_MARKDOWN_CHARS",
    "LINE_LIMIT",
    "Blocked",
    "Change",
    "Outcome",
    "ReplicaDiff",
    "Status",
    "counts",
    "diff_replica",
    "diff_replicas",
    "fails",
    "natural_key",
    "normalise_template",
    "outcome",
    "parse_fail_on",
    "summary",
    "template_changes",
    "to_json",
    "to_markdown",
    "to_text",
    "uid_note",
]

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


@record
class Blocked:
    reason: str
    message: str


@record
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
    # Blocked only because the model, assumed Ready, has no format name: unknown until downloaded.
    unknown: bool = False
    # The block message shortened for one line (a no-runtime message names every runtime checked).
    short: str = ""
    # Set when the revision name is for an empty uid (:attr:`omerender.preview.RevisionInfo.uid_notice`).
    uid_notice: str | None = None

    @property
    def runtime(self) -> str | None:
        """``ClusterServingRuntime srt-x``, or None when no runtime made this render."""
        return f"{self.runtime_kind} {self.runtime_name}" if self.runtime_name else None

    @property
    def rendered(self) -> bool:
        return self.revision is not None

    @property
    def message(self) -> str:
        """The block message as the text and markdown print it (at most a few hundred characters)."""
        if self.blocked is None:
            return ""
        return self.short or self.blocked.message


def _model_key(model: ModelResource) -> CatalogKey:
    kind = model.kind
    return (
        kind,
        "" if kind in CLUSTER_SCOPED else (model.metadata.namespace or "default"),
        model.metadata.name,
    )


def _short_message(replica: InferenceReplica, catalog: Catalog, blocked: RenderBlocked) -> str:
    """A long block message cut for one line: a model no runtime serves as lint says it (how many
    runtimes were checked and the closest few), anything else cut with a pointer to the JSON."""
    message = blocked.message
    if len(message) <= _MESSAGE_LIMIT:
        return ""
    model = catalog.model_for(replica)
    if model is not None and blocked.reason is BlockReason.RUNTIME_SELECTION_FAILED:
        # Lint's finding for a model no runtime serves (its words, its closest runtimes), told with
        # as many of the closest as fit on the line.
        from omerender.lint import no_runtime_finding
        from omerender.selection import evaluate_runtimes

        try:
            report = evaluate_runtimes(model, catalog, replica.namespace, "engine")
        except RenderBlocked:
            report = None
        if report is not None and report.selected is None:
            finding = no_runtime_finding(model, report)
            head = finding.problem.removeprefix("RuntimeSelectionFailed: ").split("; closest: ")[0]
            passed_over = len(report.excluded)
            for shown in range(len(finding.closest), 0, -1):
                text = head + "; closest: " + "; ".join(map(str, finding.closest[:shown]))
                text += f"; and {passed_over - shown} more" if passed_over > shown else ""
                if len(text) <= _MESSAGE_LIMIT:
                    return text
            if finding.closest:  # the closest one's reason cut to the room left
                more = f"; and {passed_over - 1} more" if passed_over > 1 else ""
                room = _MESSAGE_LIMIT - len(head) - len("; closest: ") - len(more)
                first = str(finding.closest[0])
                if room > 40:
                    first = first if len(first) <= room else first[: room - 2] + "…)"
                    return f"{head}; closest: {first}{more}"
            return f"{head}; {passed_over} passed over"
    cut = message[:_MESSAGE_LIMIT]
    return f"{cut}… ({len(message) - len(cut)} more characters: -o json has the whole message)"


def outcome(
    replica: InferenceReplica,
    catalog: Catalog,
    unknown_models: Collection[CatalogKey] = (),
    *,
    uid: str | None = None,
) -> Outcome:
    """Render ``replica`` against ``catalog`` and compute its revision as OME's controller does.

    A template holding a value Kubernetes' Go types refuse blocks as ``RenderFailed`` naming the
    field, like any other render that cannot proceed (the fault may be the runtime's, not the replica's).
    ``unknown_models``: the models assumed Ready without a format name
    (:attr:`omerender.readiness.AssumedReady.format_unknown`); a render of one that blocks is
    :attr:`Outcome.unknown`. ``uid``: the replica's ``metadata.uid`` in the cluster, in place of the
    file's (:func:`omerender.preview.revision_of`); without one, :attr:`Outcome.uid_notice` says when
    the name is for an empty uid.
    """
    try:
        result = render(replica, catalog)
        revision = revision_of(result, uid=uid)
    except RenderBlocked as blocked:
        model = catalog.model_for(replica) if unknown_models else None
        unknown = model is not None and _model_key(model) in unknown_models
        return Outcome(
            blocked=Blocked(blocked.reason.value, blocked.message),
            unknown=unknown,
            short=_short_message(replica, catalog, blocked),
        )
    return Outcome(
        revision=revision.name,
        runners=result.runners,
        payload=revision.payload,
        scope_uid=revision.scope_uid,
        collision_count=revision.collision_count,
        runtime_kind=result.runtime_kind,
        runtime_name=result.runtime_name,
        uid_notice=revision.uid_notice,
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
        out["spec"] = _named_lists(spec)
    return out


def _named_lists(value: Any) -> Any:
    """``value`` with every list whose items all carry a distinct ``name`` keyed by it (resources'
    claims, a projected volume's items...), the lists keyed already walked into."""
    if isinstance(value, _Keyed):
        out: Any = _Keyed()
        out.update((k, _named_lists(v)) for k, v in value.items())
        return out
    if isinstance(value, Mapping):
        return {k: _named_lists(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        names = [v.get("name") for v in value]
        if all(isinstance(n, str) and n for n in names) and len(set(names)) == len(names):
            return _named_lists(_keyed(value, _BY_NAME))
    return value


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


@record
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


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _aligned(where: str, old: list[Any], new: list[Any], path: str) -> Iterator[Change]:
    """A scalar list's difference by sequence alignment: entries removed (at their index before) and
    added (at their index after); a run replaced by one as long is changed entry by entry."""
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:
            for k in range(i2 - i1):
                yield Change(where, f"{path}[{j1 + k}]", "changed", old[i1 + k], new[j1 + k])
            continue
        for i in range(i1, i2):
            yield Change(where, f"{path}[{i}]", "removed", old[i], None)
        for j in range(j1, j2):
            yield Change(where, f"{path}[{j}]", "added", None, new[j])


def _sequences(
    where: str, old: Any, new: Any, parts: list[Any], roots: tuple[Any, Any], out: list[Change]
) -> Any:
    """``new`` with every list of scalars that differs from ``old``'s replaced by ``old``'s, the
    differences appended to ``out`` as :func:`_aligned` finds them."""
    if isinstance(old, list) and isinstance(new, list):
        if old != new and all(_scalar(v) for v in (*old, *new)):
            out.extend(_aligned(where, old, new, _path_text(parts, *roots)))
            return old
        return new
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)) or old == new:
        return new
    copy: Any = _Keyed() if isinstance(new, _Keyed) else {}
    for key, value in new.items():
        copy[key] = _sequences(where, old[key], value, [*parts, key], roots, out) if key in old else value
    return copy


def _template_diff(where: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    if before == after:  # the common case in a large fleet: skip deepdiff
        return []
    rest = _unchanged_metadata_rest(before, after)
    if rest is None:
        return _template_diff_of(where, before, after)
    rest_before, rest_after = rest
    try:
        key = (where, pickle.dumps(rest_before, _PICKLE), pickle.dumps(rest_after, _PICKLE))
    except Exception:  # not plain data: diffed every time
        return _template_diff_of(where, before, after)
    changes = _TEMPLATE_DIFFS.get(key)
    if changes is None:
        if len(_TEMPLATE_DIFFS) >= _TEMPLATE_DIFFS_MAX:
            _TEMPLATE_DIFFS.clear()  # keep the memory bounded
        # Metadata equal, order and types included, gives no change and no path through it.
        changes = _TEMPLATE_DIFFS[key] = tuple(_template_diff_of(where, rest_before, rest_after))
    return list(changes)


# A change to a runtime changes the pod specs of every replica on it alike, while each replica's template
# metadata is its own: the diffs of templates whose metadata is unchanged are remembered by their other
# parts' pickles (equal pickles are equal data, order and types included).
_TEMPLATE_DIFFS: dict[tuple[str, bytes, bytes], tuple[Change, ...]] = {}
_TEMPLATE_DIFFS_MAX: Final = 512


def _unchanged_metadata_rest(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Both templates without their metadata, when that metadata is unchanged (equal pickles); None
    when it changed or the templates are not plain data."""
    if type(before) is not dict or type(after) is not dict:
        return None
    try:
        if pickle.dumps(before.get("metadata"), _PICKLE) != pickle.dumps(after.get("metadata"), _PICKLE):
            return None
    except Exception:
        return None
    return (
        {k: v for k, v in before.items() if k != "metadata"},
        {k: v for k, v in after.items() if k != "metadata"},
    )


_PICKLE: Final = 5


def _template_diff_of(where: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    from deepdiff import DeepDiff
    from deepdiff.helper import notpresent

    old, new = normalise_template(before), normalise_template(after)
    changes: list[Change] = []
    # Lists of scalars are aligned here; deepdiff then sees them equal.
    new = _sequences(where, old, new, [], (old, new), changes)
    # threshold_to_diff_deeper=0: always compare keyed entries one by one (deepdiff's default reports
    # a whole env as one change once two thirds of its keys are new).
    tree = DeepDiff(old, new, ignore_order=False, view="tree", verbose_level=2, threshold_to_diff_deeper=0)
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


@record
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
        """Whether the verdict is a change: it rolls, blocks, unblocks, appears or goes, or its
        runtime became unknown until downloaded (a replica unknown or blocked on both sides is none)."""
        if self.status is Status.UNKNOWN:
            return self.before is not None and not self.before.unknown
        return self.status in _CHANGED

    @property
    def listed(self) -> bool:
        """Whether the outputs list it without ``--show-unchanged``: a changed verdict, or template
        differences the revision does not hash."""
        return self.changed or (self.status is Status.UNCHANGED and bool(self.changes))

    @property
    def headline(self) -> str:
        old, new = self.before, self.after
        if self.status is Status.NEW and new is not None:
            return f"new, {_state(new)}" if not new.rendered else f"new -> {new.revision}"
        if self.status is Status.REMOVED and old is not None:
            return f"removed (was {_state(old) if not old.rendered else old.revision})"
        if old is None or new is None:  # pragma: no cover - only NEW and REMOVED lack a side
            return self.status.label
        was = _was(old, new)
        if self.status is Status.ROLLS:
            return f"rolls {old.revision} -> {new.revision}"
        if self.status is Status.UNKNOWN:
            return f"{self.status.label}{was}"
        if self.status in (Status.BLOCKS, Status.STILL_BLOCKS) and new.blocked is not None:
            # A replica that ran: its notes name the revision OME keeps running.
            return f"{self.status.label} {new.blocked.reason}{'' if old.rendered else was}"
        if self.status is Status.UNBLOCKS:
            return f"unblocks -> {new.revision}"
        return self.status.label

    @property
    def result(self) -> str:
        """The verdict and the block reason, without revisions: ``rolls``, ``blocks ModelNotFound``."""
        side = self.after if self.after is not None else self.before
        if side is not None and side.unknown and self.status is not Status.UNKNOWN:
            return f"{self.status.label}, unknown until downloaded"  # new or removed
        reason = side.blocked.reason if side is not None and side.blocked is not None else None
        if reason is None or self.status is Status.UNKNOWN:
            switch = self.runtime_change
            return f"{self.status.label}, runtime {switch[0]} -> {switch[1]}" if switch else self.status.label
        if self.status in (Status.BLOCKS, Status.STILL_BLOCKS):
            return f"{self.status.label} {reason}"
        return f"{self.status.label}, blocked {reason}"  # new or removed while blocked

    @property
    def uid_notice(self) -> str | None:
        """Set when a side's revision name is for an empty uid (the after side's notice first): the
        cluster's names will differ, though the verdict, which compares two names hashed with the
        same uid, does not."""
        for side in (self.after, self.before):
            if side is not None and side.uid_notice is not None:
                return side.uid_notice
        return None

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
        after = self.after
        if after is not None and after.unknown:
            out.append(
                "its model has no format name: the runtime is unknown until OME has downloaded the "
                "weights and read the format from them"
            )
        elif after is not None and after.blocked is not None:
            out.append(f"{after.blocked.reason}: {after.message}")
        if after is not None and not after.rendered and self.before is not None and self.before.rendered:
            out.append(f"OME keeps the running pods on {self.before.revision}")
        if self.status is Status.UNCHANGED and self.changes:
            out.append("these differences are outside the revision hash: OME replaces no pods")
        if self.status is Status.NEW and after is not None and after.rendered:
            out.append(f"OME creates its pods on {after.revision}")
        if self.status is Status.REMOVED and self.before is not None and self.before.rendered:
            out.append(f"OME deletes its pods (on {self.before.revision})")
        return tuple(out)


def _state(side: Outcome) -> str:
    """A side that did not render, in words: ``unknown until downloaded``, ``blocks ModelNotFound``."""
    if side.unknown:
        return Status.UNKNOWN.label
    return f"blocks {side.blocked.reason}" if side.blocked is not None else "renders"


def _was(old: Outcome, new: Outcome) -> str:
    """`` (was ...)`` when the before side's state says more than the verdict does."""
    if old.rendered:
        return f" (was {old.revision})" if not new.rendered else ""
    if old.unknown != new.unknown or (
        old.blocked is not None and new.blocked is not None and old.blocked.reason != new.blocked.reason
    ):
        return f" (was {'unknown until downloaded' if old.unknown else _blocked_reason(old)})"
    return ""


def _blocked_reason(side: Outcome) -> str:
    return side.blocked.reason if side.blocked is not None else "rendered"


def _status(old: Outcome | None, new: Outcome | None) -> Status:
    if old is None:
        return Status.NEW
    if new is None:
        return Status.REMOVED
    if new.unknown:
        return Status.UNKNOWN
    if new.blocked is not None:
        # Blocks only what ran (or may run: unknown until downloaded); a replica that never rendered
        # still blocks, whatever the reason is now.
        return Status.BLOCKS if old.rendered or old.unknown else Status.STILL_BLOCKS
    if old.blocked is not None:
        return Status.UNBLOCKS
    return Status.UNCHANGED if old.revision == new.revision else Status.ROLLS


def diff_replica(
    before: InferenceReplica | None,
    after: InferenceReplica | None,
    before_catalog: Catalog,
    after_catalog: Catalog,
    *,
    before_unknown: Collection[CatalogKey] = (),
    after_unknown: Collection[CatalogKey] = (),
    uid: str | None = None,
) -> ReplicaDiff:
    """Render the replica on both sides (either may be None: added or removed) and compare.
    ``before_unknown``/``after_unknown``: each side's models assumed Ready without a format name.
    ``uid``: the replica's ``metadata.uid`` in the cluster, hashed into both sides' revision names
    in place of the files' (a file from git has none: :attr:`ReplicaDiff.uid_notice`)."""
    known = after or before
    if known is None:
        raise ValueError("diff_replica needs the replica on at least one side")
    old = outcome(before, before_catalog, before_unknown, uid=uid) if before is not None else None
    new = outcome(after, after_catalog, after_unknown, uid=uid) if after is not None else None
    changes: tuple[Change, ...] = ()
    if old is not None and new is not None and old.blocked is None and new.blocked is None:
        changes = (*template_changes(old.runners, new.runners), *_revision_changes(old, new))
    return ReplicaDiff(known.namespace, known.metadata.name, _status(old, new), old, new, changes)


def diff_replicas(
    before: Mapping[ReplicaKey, InferenceReplica],
    after: Mapping[ReplicaKey, InferenceReplica],
    before_catalog: Catalog,
    after_catalog: Catalog,
    *,
    before_unknown: Collection[CatalogKey] = (),
    after_unknown: Collection[CatalogKey] = (),
    uids: Mapping[ReplicaKey, str] | None = None,
) -> tuple[ReplicaDiff, ...]:
    """Every replica of either side, matched by (namespace, name), sorted by namespace and name.
    ``uids``: (namespace, name) -> the replica's ``metadata.uid`` in the cluster, for the replicas
    whose files carry none (:func:`diff_replica`)."""
    old_unknown, new_unknown = frozenset(before_unknown), frozenset(after_unknown)
    uids = uids or {}
    return tuple(
        diff_replica(
            before.get(key),
            after.get(key),
            before_catalog,
            after_catalog,
            before_unknown=old_unknown,
            after_unknown=new_unknown,
            uid=uids.get(key),
        )
        for key in sorted(set(before) | set(after))
    )


# -- output -----------------------------------------------------------------------------------------------

# Values quoted in a change line of the text and markdown outputs (two per line, within LINE_LIMIT).
_SHOWN_VALUE = 200
# Changes one markdown block lists before it counts the rest (the JSON lists them all).
_SHOWN_CHANGES = 40
DEFAULT_MARKDOWN_CHARS: Final = 60_000
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


def _cap(line: str, limit: int = LINE_LIMIT) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _body(d: ReplicaDiff, shown: int | None = None) -> list[str]:
    """A replica's lines under its headline: runtime switch, changes (the first ``shown``), notes."""
    changes = d.changes if shown is None else d.changes[:shown]
    out = [*d.lead, *(c.line(limit=_SHOWN_VALUE) for c in changes)]
    if len(changes) < len(d.changes):
        out.append(f"… and {len(d.changes) - len(changes)} more changes (-o json lists every one)")
    out.extend(d.notes)
    return [_cap(line) for line in out]


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
    lines: list[str] = [_cap(f"note: {note}") for note in _merged(_all_notes(notes, items, uid_notes))]
    hidden: list[ReplicaDiff] = []
    for d in items:
        if not (show_unchanged or d.listed):
            hidden.append(d)
            continue
        lines.append(_cap(f"{d.key}: {d.headline}"))
        lines.extend(f"  {line}" for line in _body(d))
    if hidden:
        lines.append(f"note: {_hidden_note(hidden)}")
    return "".join(f"{_cap(line)}\n" for line in lines)


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
    """``{"replicas": [...], "summary": {verdict: count}, "changed": bool, "failOn": [...],
    "fails": bool, "notes": [...]}``; every replica, values unabridged; each side names the runtime it
    rendered from. A replica's ``uidNotice`` (and its sides') is set when its revision names are for
    an empty uid; ``notes`` then ends with :func:`uid_note` (unless ``uid_notes`` is False)."""
    items = list(diffs)
    return {
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
    head.extend(_cap(f"> {_html(note)}") + "\n\n" for note in _merged(_all_notes(notes, items, uid_notes)))
    if hidden:
        head.append(_hidden_note(hidden) + ".\n\n")
    if not shown:
        head.append("No replica changes its verdict.\n")
        return "".join(head)
    table = "| Replica | Result | Before | After |\n| --- | --- | --- | --- |\n"
    rows = [
        _cap(f"| `{d.key}` | {_cell(d.result)} | {_side_cell(d.before)} | {_side_cell(d.after)} |") + "\n"
        for d in shown
    ]
    blocks = [_block(d) for d in shown]
    where = f"the file `{full_report}`" if full_report else "`omerender diff -o json` (or `--report PATH`)"
    cut_line = (
        "\n**{left} of {total} listed replicas left out** to keep this comment under {limit} "
        f"characters; the full report: {where}.\n"
    )
    used = sum(map(len, head)) + len(table)
    fit = len(shown)
    if max_chars is not None:
        reserve = len(cut_line) + 40
        fit = 0
        for row, block in zip(rows, blocks, strict=True):
            if used + len(row) + len(block) + reserve > max_chars:
                break
            used += len(row) + len(block)
            fit += 1
    out = [*head, table, *rows[:fit], *blocks[:fit]]
    if fit < len(shown):
        out.append(cut_line.format(left=len(shown) - fit, total=len(shown), limit=max_chars))
    return "".join(out)
