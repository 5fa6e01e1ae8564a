"""What changed in the catalog itself: each model, runtime and fine-tuned weight added, removed or
changed, with its semantic diff (the engine of the replicas' template diffs, :mod:`.templates`).

Objects changed alike (the same diff lines once their own name is set aside: a router image bump in
176 runtimes) are one :class:`CatalogChange` naming them all, so the review shows the change once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from omerender._records import record
from omerender.catalog import Catalog, CatalogKey
from omerender.diff.templates import _template_diff_of

__all__ = ["CatalogChange", "catalog_changes", "key_text"]

ObjectChange = Literal["added", "removed", "changed"]
_NAME = "<name>"


def key_text(key: CatalogKey) -> str:
    """``ClusterServingRuntime srt-x``, ``ServingRuntime team/srt-x``."""
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


@record
class CatalogChange:
    """One change made alike to one or more catalog objects of one kind.

    ``objects``: their keys, by name; ``lines``: the semantic diff, the objects' own name written
    ``<name>`` (empty for an object added or removed)."""

    kind: str
    change: ObjectChange
    objects: tuple[CatalogKey, ...]
    lines: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The changed objects' names, ``namespace/name`` for a namespaced kind."""
        return tuple(f"{ns}/{name}" if ns else name for _, ns, name in self.objects)

    def label(self, shown: int = 3) -> str:
        """``ClusterServingRuntime srt-a changed`` or ``176 ClusterServingRuntimes changed: a, b, c
        and 173 more``."""
        names = self.names
        if len(names) == 1:
            return f"{self.kind} {names[0]} {self.change}"
        more = f" and {len(names) - shown} more" if len(names) > shown else ""
        return f"{len(names)} {self.kind}s {self.change}: {', '.join(names[:shown])}{more}"


def _objects(catalog: Catalog) -> dict[CatalogKey, Any]:
    out: dict[CatalogKey, Any] = {}
    out.update(catalog.models)
    out.update(catalog.runtimes)
    out.update((("FineTunedWeight", "", name), weight) for name, weight in catalog.fine_tuned_weights.items())
    return out


def _document(obj: Any) -> dict[str, Any]:
    """What of an object a render reads: its labels, annotations and spec (no status, no uid)."""
    data: dict[str, Any] = obj.model_dump(by_alias=True, exclude_none=True, mode="json")
    meta = data.get("metadata") or {}
    kept = {k: meta[k] for k in ("labels", "annotations") if meta.get(k)}
    return {"metadata": kept, "spec": data.get("spec") or {}}


def _lines(key: CatalogKey, before: Any, after: Any) -> tuple[str, ...] | None:
    old, new = _document(before), _document(after)
    if old == new:
        return None
    name = key[2]
    changes = _template_diff_of(_NAME, old, new)
    pattern = whole_name(name)
    return tuple(pattern.sub(_NAME, c.line().removeprefix(f"{_NAME}: ")) for c in changes)


def whole_name(name: str) -> re.Pattern[str]:
    """``name`` where it stands whole: not preceded or followed by a letter, digit, ``_`` or ``-``."""
    return re.compile(rf"(?<![A-Za-z0-9_-]){re.escape(name)}(?![A-Za-z0-9_-])")


def catalog_changes(before: Catalog, after: Catalog) -> tuple[CatalogChange, ...]:
    """Every model, runtime and fine-tuned weight added, removed or changed between the catalogs,
    objects changed alike merged; removals first, then changes, then additions, by kind."""
    old, new = _objects(before), _objects(after)
    merged: dict[tuple[str, ObjectChange, tuple[str, ...]], list[CatalogKey]] = {}
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            merged.setdefault((key[0], "removed", ()), []).append(key)
        elif key not in old:
            merged.setdefault((key[0], "added", ()), []).append(key)
        else:
            lines = _lines(key, old[key], new[key])
            if lines is not None:
                merged.setdefault((key[0], "changed", lines), []).append(key)
    order = {"removed": 0, "changed": 1, "added": 2}
    return tuple(
        CatalogChange(kind, change, tuple(keys), lines)
        for (kind, change, lines), keys in sorted(
            merged.items(), key=lambda item: (order[item[0][1]], item[0][0], -len(item[1]), item[1][0])
        )
    )


def changed_keys(changes: Iterable[CatalogChange]) -> Mapping[CatalogKey, CatalogChange]:
    """Each changed object's key -> its :class:`CatalogChange`."""
    return {key: change for change in changes for key in change.objects}
