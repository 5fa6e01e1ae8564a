"""Client-side validation of rendered objects against the Kubernetes 1.36 OpenAPI schemas.

The schemas are the strict JSON Schemas shipped by kubernetes-validate (``tools`` extra): an unknown
field is an error, as the API server's strict field validation reports it. One validator is built per
kind and kept, because loading the shared definitions costs far more than validating an object; lint
validates hundreds of templates in one run.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

__all__ = ["KUBERNETES_VERSION", "kube_problems"]

KUBERNETES_VERSION = "1.36"
_SCHEMA_DIR = "kubernetes-json-schema/v1.36.0-local-strict"


@functools.cache
def _definitions() -> Any:
    from referencing import Registry, Resource

    root = resources.files("kubernetes_validate").joinpath(_SCHEMA_DIR)
    defs = json.loads(root.joinpath("_definitions.json").read_text())
    return Resource.from_contents(defs) @ Registry()  # type: ignore[operator]


@functools.cache
def _validator(kind: str, api_version: str) -> Any:
    import jsonschema
    from referencing import Resource

    # rbac.authorization.k8s.io/v1 -> rbac-v1, v1 -> v1 (kubernetes-validate's file naming)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    root = resources.files("kubernetes_validate").joinpath(_SCHEMA_DIR)
    path = root.joinpath(f"{kind.lower()}-{group_version}.json")
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    registry = Resource.from_contents(schema) @ _definitions()
    return jsonschema.Draft202012Validator(schema, registry=registry)


def kube_problems(obj: Mapping[str, Any]) -> list[str]:
    """Every schema violation of ``obj`` as ``<Kind> <name>: <path>: <message>``; empty when valid."""
    kind, api_version = str(obj.get("kind", "")), str(obj.get("apiVersion", ""))
    name = f"{kind} {obj.get('metadata', {}).get('name', '')}"
    validator = _validator(kind, api_version)
    if validator is None:
        return [f"{name}: no Kubernetes {KUBERNETES_VERSION} schema for {api_version}/{kind}"]
    problems = []
    for error in sorted(validator.iter_errors(dict(obj)), key=lambda e: list(map(str, e.path))):
        path = ".".join(str(p) for p in error.path) or "<object>"
        problems.append(f"{name}: {path}: {error.message}")
    return problems
