"""The OME CustomResourceDefinitions shipped with the package, and the checks ``kubectl apply`` with
strict field validation makes against them.

The CRDs are package data (``omerender/data/crds/``, a copy of the repository's ``schemas/crds/``,
and ``omerender/data/crds.json``, the same CRDs as one JSON document read in place of the YAML;
``python -m omerender.cli.crds`` refreshes both); a source checkout's ``schemas/crds/`` is the fallback.
Reading package data is the only reading this module does: the objects checked are inputs.

The checks, one list of ``<field>: <problem and fix>`` per object (:func:`object_problems`):

- an OME kind: an ``apiVersion`` the CRD does not serve, then the CRD schema
  (:func:`omerender.crdschema.validate_against_crd`: unknown fields, wrong types, required fields,
  patterns), and ``metadata.name`` present and a DNS-1123 subdomain, as the API server requires of a
  custom resource's name;
- an InferenceReplica, also the names the render derives from it: the pods' ``ome.io/inferenceservice``
  label holds the name prefix (the replica's name, or its ``parentRef.name`` when projected), so at
  most 63 characters, and ``metadata.namespace``, when given, a DNS-1123 label;
- the ``inferenceservice-config`` ConfigMap: ``apiVersion: v1`` and a ConfigMap's fields only.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Final

import yaml

from omerender.errors import OmeRenderError

__all__ = [
    "PACKAGE_CRD_BUNDLE",
    "PACKAGE_CRD_DIR",
    "SOURCE_CRD_DIR",
    "CrdsMissingError",
    "crd_dir",
    "crd_for",
    "crd_for_api",
    "load_crds",
    "object_problems",
    "ome_kinds",
    "replica_problems",
    "unknown_kind",
]

# The kinds users write: the OME group. schemas/crds also holds the scheduler-plugins PodGroup CRD,
# shipped too: `render --validate` checks the PodGroups of multi-pod Instances against it.
PATTERN: Final = "ome.io_*.yaml"
OTHERS: Final = ("scheduling.x-k8s.io_podgroups.yaml",)

PACKAGE_CRD_DIR = Path(str(resources.files("omerender"))) / "data" / "crds"
SOURCE_CRD_DIR = Path(__file__).resolve().parents[1] / "schemas" / "crds"
# The package's CRDs once more, as one JSON object (file name -> CRD): JSON loads in C in a fraction of
# a millisecond, where the YAML of the three CRDs a render checks takes about 8 ms (libyaml parses it,
# but PyYAML builds the objects in Python). tests/unit/test_crd_bundle.py keeps it equal to the YAML.
PACKAGE_CRD_BUNDLE = PACKAGE_CRD_DIR.parent / "crds.json"

_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN_MAX: Final = 253
_LABEL_VALUE_MAX: Final = 63
# A ConfigMap's own fields (core/v1 ConfigMap); anything else the API server's strict validation refuses.
_CONFIG_MAP_FIELDS: Final = frozenset({"apiVersion", "kind", "metadata", "data", "binaryData", "immutable"})
_REPLICA: Final = "InferenceReplica"


class CrdsMissingError(OmeRenderError):
    """The package was installed without its CRDs (package data), so nothing can be checked."""


def crd_dir() -> Path:
    """The folder the CRDs are read from: the package data, else a source checkout's ``schemas/crds``."""
    for candidate in (PACKAGE_CRD_DIR, SOURCE_CRD_DIR):
        if any(candidate.glob(PATTERN)):
            return candidate
    raise CrdsMissingError(
        f"the OME CRDs are not installed with omerender (looked in {PACKAGE_CRD_DIR} and {SOURCE_CRD_DIR}); "
        "reinstall omerender with its package data"
    )


@functools.cache
def _bundle() -> dict[str, Any]:
    """The package's CRDs by file name, from :data:`PACKAGE_CRD_BUNDLE`; empty when it is missing."""
    try:
        bundle = json.loads(PACKAGE_CRD_BUNDLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return bundle if isinstance(bundle, dict) else {}


@functools.cache
def _read_crd(path: Path) -> tuple[str, dict[str, Any]]:
    """(the kind it defines, the CRD) of one CRD file, read once (from the JSON bundle when the file
    is one of the package's)."""
    crd = _bundle().get(path.name) if path.parent == PACKAGE_CRD_DIR else None
    if crd is None:
        try:
            crd = yaml.load(
                path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            )
        except (OSError, yaml.YAMLError) as exc:
            raise CrdsMissingError(f"{path}: cannot read the CRD: {exc}") from None
    kind = crd.get("spec", {}).get("names", {}).get("kind") if isinstance(crd, dict) else None
    if not isinstance(kind, str):
        raise CrdsMissingError(f"{path}: not a CustomResourceDefinition (no spec.names.kind)")
    return kind, crd


@functools.cache
def load_crds() -> dict[str, dict[str, Any]]:
    """Every shipped CRD by the kind it defines (``InferenceReplica``, ``ClusterServingRuntime``, …)."""
    return dict(_read_crd(path) for path in sorted(crd_dir().glob(PATTERN)))


def ome_kinds() -> frozenset[str]:
    """Every kind the OME CRDs define."""
    return frozenset(load_crds())


def unknown_kind(api_version: Any, kind: Any) -> str | None:
    """The problem with an ``ome.io`` object of a kind OME does not define (a misspelling such as
    ``ClusterBaseModle``, not another kind to skip), with the closest kind; None for any other."""
    if not isinstance(api_version, str) or api_version.rpartition("/")[0] != "ome.io" or not kind:
        return None
    known = sorted(ome_kinds())
    if kind in known:
        return None
    import difflib

    close = difflib.get_close_matches(str(kind), known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}?" if close else f"OME's kinds are {', '.join(known)}"
    return f"{kind!r} is not a kind OME defines; {hint}"


def crd_for(kind: str) -> dict[str, Any]:
    """The CRD defining ``kind``; treat it as read-only (validators are cached per CRD dict)."""
    # Once per kind and process, as the files themselves are read (_read_crd): a diff checks every
    # replica, and finding the folder lists it.
    crd = _CRD_BY_KIND.get(kind)
    if crd is None:
        crd = _CRD_BY_KIND[kind] = _find_crd(kind)
    return crd


_CRD_BY_KIND: dict[str, dict[str, Any]] = {}


def _find_crd(kind: str) -> dict[str, Any]:
    # OME's files are named for the plural (ome.io_clusterbasemodels.yaml): read only the one needed
    # (a command checks two or three kinds; each file is 5-20 KB of YAML).
    path = crd_dir() / f"ome.io_{kind.lower()}s.yaml"
    if path.is_file():
        found, crd = _read_crd(path)
        if found == kind:
            return crd
    crds = load_crds()
    if kind not in crds:
        raise CrdsMissingError(f"no CRD for {kind} among {', '.join(sorted(crds))} in {crd_dir()}")
    return crds[kind]


@functools.cache
def _by_group_kind() -> dict[tuple[str, str], dict[str, Any]]:
    """Every shipped CRD, the OME ones and the PodGroup, by (group, kind)."""
    out = {(str(crd["spec"].get("group", "")), kind): crd for kind, crd in load_crds().items()}
    for name in OTHERS:
        path = crd_dir() / name
        if path.is_file():
            kind, crd = _read_crd(path)
            out[(str(crd.get("spec", {}).get("group", "")), kind)] = crd
    return out


def crd_for_api(kind: str, api_version: str) -> dict[str, Any] | None:
    """The shipped CRD defining ``kind`` in ``api_version``'s group, or None (read-only, as :func:`crd_for`)."""
    return _by_group_kind().get((api_version.rpartition("/")[0], kind))


def _served(crd: Mapping[str, Any]) -> list[str]:
    group = crd["spec"]["group"]
    return [f"{group}/{v['name']}" for v in crd["spec"]["versions"] if v.get("served")]


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


def _replica_names(obj: Mapping[str, Any]) -> list[str]:
    """The names the render derives from a replica (see the module docstring)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return []
    out: list[str] = []
    spec = obj.get("spec")
    parent = spec.get("parentRef") if isinstance(spec, Mapping) else None
    prefix_field, prefix = "metadata.name", name
    if isinstance(parent, Mapping) and isinstance(parent.get("name"), str):
        prefix_field, prefix = "spec.parentRef.name", parent["name"]
    if len(prefix) > _LABEL_VALUE_MAX:
        out.append(
            f"{prefix_field}: {len(prefix)} characters; the render puts it in the pods' "
            f"ome.io/inferenceservice label, which holds at most {_LABEL_VALUE_MAX}: shorten it"
        )
    namespace = meta.get("namespace")
    if namespace is not None and (not isinstance(namespace, str) or not _LABEL.fullmatch(namespace)):
        out.append(f"metadata.namespace: {namespace!r} is not a DNS-1123 label; use a namespace's name")
    return out


def _without_status(obj: Mapping[str, Any], crd: Mapping[str, Any]) -> Mapping[str, Any]:
    """``obj`` as the API server validates a create or update of it: a kind with a status subresource
    drops the ``status`` written with it (the controller writes status), so it is not checked."""
    versions = crd["spec"]["versions"]
    if "status" not in obj or not any("status" in (v.get("subresources") or {}) for v in versions):
        return obj
    return {k: v for k, v in obj.items() if k != "status"}


def object_problems(obj: Mapping[str, Any]) -> list[str]:
    """``<field>: <problem and fix>`` for everything ``kubectl apply`` with strict field validation
    refuses in ``obj`` (an OME kind or a ConfigMap), and for an InferenceReplica the names the render
    derives; empty when it would be applied."""
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
    served = _served(crd)
    if obj.get("apiVersion") not in served:
        return [f"apiVersion: {obj.get('apiVersion')!r} is not served; use {' or '.join(served)}"]
    out = _name_problems(obj)
    for problem in validate_against_crd(_without_status(obj, crd), crd):
        if problem.path == "metadata.name" and out:
            continue  # said once, with the fix
        fix = (
            "; remove it or check its spelling against the CRD"
            if "not a known field" in problem.message
            else ""
        )
        out.append(f"{problem.path}: {problem.message}{fix}")
    if kind == _REPLICA:
        out.extend(_replica_names(obj))
    return out


def replica_problems(obj: Mapping[str, Any]) -> list[str]:
    """:func:`object_problems` of an InferenceReplica, worded as the CLI has always worded them."""
    crd = crd_for(_REPLICA)
    served = _served(crd)
    if obj.get("apiVersion") not in served:
        return [f"apiVersion: {obj.get('apiVersion')!r} is not served; use {' or '.join(served)}"]
    from omerender.crdschema import validate_against_crd

    meta = obj.get("metadata")
    out = [f"{p.path}: {p.message}" for p in validate_against_crd(_without_status(obj, crd), crd)]
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(name, str) or not name:
        out.append("metadata.name: required; give the replica a name (lowercase letters, digits and '-')")
    elif len(name) > _SUBDOMAIN_MAX or not _SUBDOMAIN.fullmatch(name):
        out.append(
            f"metadata.name: {name[:70]!r} is not a DNS-1123 subdomain; use lowercase letters, digits, "
            "'-' and '.', starting and ending with a letter or digit"
        )
    out.extend(_replica_names(obj))
    return out
