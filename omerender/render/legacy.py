"""The runtime's legacy top-level pod fields: ``spec.nodeSelector`` and ``spec.containers``.

Before pieces existed a ServingRuntime was one inline pod spec; OME still reads two of its fields when it
renders an engine or decoder pod, whatever the template source (modelRef or runtimeRef alone).
"""

from __future__ import annotations

from typing import Any

from omerender.models import RuntimeResource

__all__ = ["merge_legacy_node_selector", "merge_legacy_resources"]


def _legacy_containers(runtime: RuntimeResource) -> list[Any]:
    containers = (runtime.spec.model_extra or {}).get("containers")
    return containers if isinstance(containers, list) else []


def merge_legacy_resources(container: dict[str, Any], runtime: RuntimeResource) -> None:
    """``isvcutils.MergeResource`` with no AcceleratorClass, as ``MergeEngineResources`` /
    ``MergeDecoderResources`` call it for a replica (its InferenceService shell sets no runner).

    The first ``spec.containers`` entry named like the runner lends every request and limit the runner
    does not set. Empty maps are dropped again, as Go's ``omitempty`` drops them.
    """
    name = container.get("name") or ""
    legacy = next(
        (c for c in _legacy_containers(runtime) if isinstance(c, dict) and (c.get("name") or "") == name),
        None,
    )
    legacy_resources = (legacy or {}).get("resources") or {}
    resources = container.get("resources")
    resources = dict(resources) if isinstance(resources, dict) else {}
    for section in ("requests", "limits"):
        merged = dict(resources.get(section) or {})
        for resource, quantity in (legacy_resources.get(section) or {}).items():
            merged.setdefault(resource, quantity)
        if merged:
            resources[section] = merged
        else:
            resources.pop(section, None)
    if resources:
        container["resources"] = resources
    else:
        container.pop("resources", None)


def merge_legacy_node_selector(pod: dict[str, Any], runtime: RuntimeResource) -> None:
    """``applyMergedNodeSelector`` / ``isvcutils.MergeNodeSelector`` for a replica: the runtime's
    ``spec.nodeSelector`` overwrites same-named keys of the pod's (no AcceleratorClass, and the
    InferenceService shell's own pod spec sets no selector)."""
    selector = runtime.spec.node_selector
    if selector:
        pod["nodeSelector"] = {**(pod.get("nodeSelector") or {}), **selector}
