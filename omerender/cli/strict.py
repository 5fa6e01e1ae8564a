"""An InferenceReplica checked as ``kubectl apply`` with strict field validation would check it, plus
the names the render derives from it.

- the CRD schema (:func:`omerender.crdschema.validate_against_crd`): unknown fields, wrong types, an
  ``apiVersion`` the CRD does not serve;
- ``metadata.name``: present, a DNS-1123 subdomain (what the API server requires of a custom
  resource's name), and no longer than 63 characters where the render makes it a label value: the
  pods' ``ome.io/inferenceservice`` label holds the name prefix (the replica's name, or its
  ``parentRef.name`` when projected), and a label value holds at most 63 characters;
- ``metadata.namespace``, when given: a DNS-1123 label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from omerender.cli.io import InputError
from omerender.crdschema import validate_against_crd

__all__ = ["check_replica", "replica_problems"]

KIND: Final = "InferenceReplica"
_SUBDOMAIN: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE_MAX: Final = 63
_SUBDOMAIN_MAX: Final = 253


def _served(crd: Mapping[str, Any]) -> list[str]:
    group = crd["spec"]["group"]
    return [f"{group}/{v['name']}" for v in crd["spec"]["versions"] if v.get("served")]


def _name_problems(meta: Mapping[str, Any], spec: Any) -> list[str]:
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        return ["metadata.name: required; give the replica a name (lowercase letters, digits and '-')"]
    out: list[str] = []
    if len(name) > _SUBDOMAIN_MAX or not _SUBDOMAIN.fullmatch(name):
        out.append(
            f"metadata.name: {name[:70]!r} is not a DNS-1123 subdomain; use lowercase letters, digits, "
            "'-' and '.', starting and ending with a letter or digit"
        )
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


def replica_problems(obj: Mapping[str, Any]) -> list[str]:
    """``<field>: <problem and fix>`` for everything ``kubectl apply`` (and the render's names) refuse."""
    from omerender.cli.crds import crd_for

    crd = crd_for(KIND)
    served = _served(crd)
    if obj.get("apiVersion") not in served:
        return [f"apiVersion: {obj.get('apiVersion')!r} is not served; use {' or '.join(served)}"]
    meta = obj.get("metadata")
    out = [f"{p.path}: {p.message}" for p in validate_against_crd(obj, crd)]
    out.extend(_name_problems(meta if isinstance(meta, Mapping) else {}, obj.get("spec")))
    return out


def check_replica(obj: Mapping[str, Any], where: str) -> None:
    """Raise InputError naming ``where`` (the file), the replica and every problem, when there are any."""
    problems = replica_problems(obj)
    if problems:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        who = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '<unnamed>'}"
        raise InputError(f"{where}: {KIND} {who}: " + "; ".join(problems))
