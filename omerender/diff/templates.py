"""The semantic diff of two renders' pod templates: keyed lists by identity, argument lists aligned."""

from __future__ import annotations

import json
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from difflib import SequenceMatcher
from typing import Any, Final

from omerender._records import record
from omerender.diff.outcome import Outcome
from omerender.diff.verdicts import ChangeKind
from omerender.render import RenderedRunner

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
        """The runner whose template changed (``default``, ``leader``...), or None for a change
        outside a runner (the revision's other fields)."""
        return self.where.removeprefix("runner ") if self.where.startswith("runner ") else None

    def line(self, limit: int | None = _VALUE_LIMIT) -> str:
        """The change as one line, ``where: path: old -> new``, each value cut to ``limit`` characters
        (None: whole)."""
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
        """The change as JSON data (``where``, ``runner``, ``path``, ``change``, ``before``, ``after``),
        values whole."""
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
