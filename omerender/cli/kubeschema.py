"""Client-side validation of rendered objects against the Kubernetes 1.36 OpenAPI schemas, and of
custom resources (the PodGroups of multi-pod Instances, OME's kinds) against their CRDs from
``schemas/crds`` (shipped as package data: :mod:`omerender.cli.crds`).

The schemas are the strict JSON Schemas shipped by kubernetes-validate (``tools`` extra): an unknown
field is an error, as the API server's strict field validation reports it. They are compiled with
jsonschema-rs, once per kind, with the shared definitions inlined: lint validates hundreds of templates
per run, and the compiled validator takes microseconds where the pure-Python one took milliseconds.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

from omerender.cli import crds
from omerender.crdschema import validate_against_crd
from omerender.wording import must_be_one_of, must_be_type

__all__ = ["KUBERNETES_VERSION", "kube_problems"]

KUBERNETES_VERSION = "1.36"
_SCHEMA_DIR = "kubernetes-json-schema/v1.36.0-local-strict"
_REMOTE_REF = '"/api/_definitions.json#/$defs/'


def _schemas() -> Any:
    return resources.files("kubernetes_validate").joinpath(_SCHEMA_DIR)


@functools.cache
def _definitions() -> Any:
    defs = _schemas().joinpath("_definitions.json").read_text()
    return json.loads(defs.replace(_REMOTE_REF, '"#/$defs/'))["$defs"]


@functools.cache
def _validator(kind: str, api_version: str) -> Any:
    import jsonschema_rs

    # rbac.authorization.k8s.io/v1 -> rbac-v1, v1 -> v1 (kubernetes-validate's file naming)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = _schemas().joinpath(f"{kind.lower()}-{group_version}.json")
    if not path.is_file():
        return None
    schema = json.loads(path.read_text().replace(_REMOTE_REF, '"#/$defs/'))
    schema.pop("$id", None)
    schema["$defs"] = _definitions()
    return jsonschema_rs.validator_for(schema)


def _path(parts: Any) -> str:
    return ".".join(str(p) for p in parts) or "<object>"


def kube_problems(obj: Mapping[str, Any]) -> list[str]:
    """Every schema violation of ``obj`` as ``<Kind> <name>: <path>: <message>``; empty when valid."""
    kind, api_version = str(obj.get("kind", "")), str(obj.get("apiVersion", ""))
    name = f"{kind} {obj.get('metadata', {}).get('name', '')}"
    validator = _validator(kind, api_version)
    if validator is None:
        crd = crds.crd_for_api(kind, api_version)
        if crd is not None:
            return [f"{name}: {p}" for p in validate_against_crd(obj, crd)]
        if not _schemas().is_dir():  # a kubernetes-validate older than the pyproject.toml bound
            return [
                f"{name}: the installed kubernetes-validate has no Kubernetes {KUBERNETES_VERSION} schemas: "
                f"pip install 'kubernetes-validate>={KUBERNETES_VERSION}'"
            ]
        return [f"{name}: no Kubernetes {KUBERNETES_VERSION} schema or CRD for {api_version}/{kind}"]
    data = dict(obj)
    if validator.is_valid(data):
        return []
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.instance_path])
    return [f"{name}: {_path(e.instance_path)}: {_message(e)}" for e in errors]


def _message(error: Any) -> str:
    """jsonschema-rs's type and enum errors in our words (``must be of type object, got integer 5``,
    as the CRD check says them); its own text for the rest, which names no Python type."""
    kind = getattr(error, "kind", None)
    # ``Type`` in jsonschema-rs 0.3x, ``ValidationErrorKind_Type`` in 0.29 (the lowest we allow).
    name = type(kind).__name__.rsplit("_", 1)[-1]
    types = getattr(kind, "types", None)
    if name == "Type" and types:
        return must_be_type([str(t) for t in types], error.instance)
    options = getattr(kind, "options", None)
    if name == "Enum" and isinstance(options, list | tuple):
        return must_be_one_of(options, error.instance)
    return str(error.message)
