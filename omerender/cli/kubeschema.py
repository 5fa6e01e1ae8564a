"""Client-side validation of rendered objects against the Kubernetes 1.36 OpenAPI schemas.

Uses kubernetes-validate (in the ``tools`` extra), strict mode: an unknown field is an error, as the API
server's strict field validation would report it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["KUBERNETES_VERSION", "kube_problems"]

KUBERNETES_VERSION = "1.36"


def kube_problems(obj: Mapping[str, Any]) -> list[str]:
    """Every schema violation of ``obj`` as ``<Kind> <name>: <path>: <message>``; empty when valid."""
    import kubernetes_validate  # the tools extra; imported late so `render` works without it

    name = f"{obj.get('kind')} {obj.get('metadata', {}).get('name', '')}"
    try:
        kubernetes_validate.validate(dict(obj), KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(str(p) for p in exc.path) or "<object>"
        return [f"{name}: {path}: {exc.message}"]
    except kubernetes_validate.SchemaNotFoundError:
        return [
            f"{name}: no Kubernetes {KUBERNETES_VERSION} schema for {obj.get('apiVersion')}/{obj.get('kind')}"
        ]
    return []
