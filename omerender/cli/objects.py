"""The catalog objects a command reads (``--objects``, and ``diff``'s ``--before``/``--after``).

One place for every command, so they all read a folder alike:

- **Only the kinds a render reads** are kept: BaseModel, ClusterBaseModel, ServingRuntime,
  ClusterServingRuntime, FineTunedWeight, InferenceService, and the ``inferenceservice-config``
  ConfigMap in namespace ``ome`` (plus the kinds a command asks for, such as ``diff``'s
  InferenceReplicas). A Deployment, a Secret or any other ConfigMap in the folder is skipped unread.
- **Strict field validation**, as ``kubectl apply`` does it: each kept OME object is checked against
  its CRD schema (OME's own, ``schemas/crds``; not our models, which know fewer fields than OME's
  catalog uses): an unknown field, an ``apiVersion`` the CRD does not serve, a missing or invalid
  ``metadata.name`` are errors naming the file, the object, the field and the fix, all listed at once.
- **Duplicates** (two objects with one kind, scope and name): ``kubectl apply -R`` applies them in path
  order, so the later one is what the cluster keeps. The same here, with one warning per duplicate
  naming both files; ``--strict`` makes every duplicate an error instead, listed all at once.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from omerender.catalog import CATALOG_KINDS, CLUSTER_SCOPED, is_operator_config
from omerender.cli.io import InputError, loaded_from

__all__ = [
    "CATALOG_KINDS",
    "add_objects_options",
    "catalog_objects",
    "catalog_problems",
    "without_duplicates",
]

_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MAX: Final = 253
# A ConfigMap's own fields (core/v1 ConfigMap); anything else the API server's strict validation refuses.
_CONFIG_MAP_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata", "data", "binaryData", "immutable"})

Loaded = tuple[dict[str, Any], Path]


def add_objects_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that reads catalog objects shares."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help=(
            "two catalog objects of one kind and name are an error (exit 2), all listed at once; "
            "without it the later one in path order wins, as with kubectl apply -R, and each is a warning"
        ),
    )


def _who(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    name = name if isinstance(name, str) and name else "<unnamed>"
    kind = str(obj.get("kind"))
    if kind in CLUSTER_SCOPED:
        return f"{kind} {name}"
    return f"{kind} {meta.get('namespace') or 'default'}/{name}"


def _key(obj: Mapping[str, Any]) -> tuple[str, str, str] | None:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(meta, Mapping) or not isinstance(name, str) or not name:
        return None  # a nameless object is reported by the strict check, not matched as a duplicate
    kind = str(obj.get("kind"))
    namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or "default")
    return (kind, namespace, name)


def _name_problems(obj: Mapping[str, Any]) -> list[str]:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        return ["metadata.name: required; name the object (lowercase letters, digits, '-' and '.')"]
    if len(name) > _SUBDOMAIN_MAX or not _SUBDOMAIN.fullmatch(name):
        return [
            f"metadata.name: {name[:70]!r} is not a DNS-1123 subdomain; use lowercase letters, digits, "
            "'-' and '.', starting and ending with a letter or digit"
        ]
    return []


def catalog_problems(obj: Mapping[str, Any]) -> list[str]:
    """``<field>: <problem and fix>`` for everything ``kubectl apply`` with strict field validation
    refuses in a catalog object (an OME kind of :data:`CATALOG_KINDS` or the operator ConfigMap)."""
    from omerender.cli.crds import crd_for
    from omerender.crdschema import validate_against_crd

    kind = obj.get("kind")
    if kind == "ConfigMap":
        out = [] if obj.get("apiVersion") == "v1" else [f"apiVersion: {obj.get('apiVersion')!r}; use v1"]
        out += [
            f"{field}: unknown field of a ConfigMap; remove it (its settings belong under data)"
            for field in sorted(set(obj) - _CONFIG_MAP_FIELDS, key=str)
        ]
        return out
    crd = crd_for(str(kind))
    group = crd["spec"]["group"]
    served = [f"{group}/{v['name']}" for v in crd["spec"]["versions"] if v.get("served")]
    if obj.get("apiVersion") not in served:
        return [f"apiVersion: {obj.get('apiVersion')!r} is not served; use {' or '.join(served)}"]
    out = _name_problems(obj)
    for problem in validate_against_crd(obj, crd):
        if problem.path == "metadata.name" and out:
            continue  # said once, with the fix
        fix = (
            "; remove it or check its spelling against the CRD"
            if "not a known field" in problem.message
            else ""
        )
        out.append(f"{problem.path}: {problem.message}{fix}")
    return out


def without_duplicates(loaded: Iterable[Loaded], *, strict: bool, command: str) -> list[Loaded]:
    """``loaded`` with every earlier object of a repeated kind, scope and name dropped (the later one
    wins, as ``kubectl apply -R`` leaves it), warning once per duplicate on stderr; with ``strict``, an
    InputError listing every duplicate instead."""
    last: dict[tuple[str, str, str], int] = {}
    items = list(loaded)
    for index, (obj, _) in enumerate(items):
        key = _key(obj)
        if key is not None and obj.get("kind") != "InferenceReplica":
            last[key] = index
    dropped: set[int] = set()
    lines: list[str] = []
    previous: dict[tuple[str, str, str], int] = {}
    for index, (obj, file) in enumerate(items):
        key = _key(obj)
        if key is None or key not in last:
            continue
        if key in previous:
            earlier = previous[key]
            dropped.add(earlier)
            where = (
                f"in {file}" if items[earlier][1] == file else f"in {items[earlier][1]} and again in {file}"
            )
            lines.append(f"{_who(obj)} is defined {'twice ' if items[earlier][1] == file else ''}{where}")
        previous[key] = index
    if lines and strict:
        raise InputError(
            f"{len(lines)} duplicate catalog object{'s' if len(lines) != 1 else ''} (--strict); keep one of each:\n  "
            + "\n  ".join(lines)
        )
    for line in lines:
        print(
            f"omerender {command}: warning: {line}; the later one is used, as kubectl apply -R would leave it "
            "(--strict makes this an error)",
            file=sys.stderr,
        )
    return [item for index, item in enumerate(items) if index not in dropped]


def catalog_objects(
    paths: Iterable[str | Path], args: argparse.Namespace, *, also: Collection[str] = ()
) -> list[dict[str, Any]]:
    """The catalog objects in ``paths`` (and those of the kinds in ``also``), strictly checked and
    without duplicates; see the module's docstring. Raises InputError listing every problem found."""
    return select_catalog(loaded_from(paths), args, also=also)


def select_catalog(
    loaded: Iterable[Loaded], args: argparse.Namespace, *, also: Collection[str] = ()
) -> list[dict[str, Any]]:
    """:func:`catalog_objects` of objects already loaded with their files (``io.loaded_from``), in
    path order: for a command that looks at each path's objects before it takes them all."""
    kept = [
        (obj, file)
        for obj, file in loaded
        if obj.get("kind") in CATALOG_KINDS or obj.get("kind") in also or is_operator_config(obj)
    ]
    problems = [
        f"{file}: {_who(obj)}: {problem}"
        for obj, file in kept
        if obj.get("kind") not in also
        for problem in catalog_problems(obj)
    ]
    if problems:
        raise InputError(
            f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in the catalog objects, as "
            "kubectl apply with strict field validation reports them:\n  " + "\n  ".join(problems)
        )
    command = str(getattr(args, "command", "") or "")
    return [
        obj
        for obj, _ in without_duplicates(kept, strict=bool(getattr(args, "strict", False)), command=command)
    ]
