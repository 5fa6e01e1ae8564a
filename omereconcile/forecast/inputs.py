"""What a forecast reads besides the diff: sizes, start-up times, capacity.

Pure: the CLI loads the files and passes the objects in.

- **Size** of each replica: ``spec.replicas`` from the replica files, or from a ``kubectl get ir -A -o
  yaml`` dump (the live ``spec.replicas``, which an autoscaler writes; ``status.replicas`` when unset).
- **Start-up time**: the ``--startup`` flag, overridden per serving runtime by the
  :data:`STARTUP_ANNOTATION` annotation on the (Cluster)ServingRuntime the replica renders with after the
  change (``"5m"``, ``"90s"``, ``"1h30m"`` or plain seconds).
- **Capacity**: ``--capacity NODESxGPUS`` (``4x8``: four nodes of eight), or a ``kubectl get nodes -o
  yaml`` dump: each schedulable node's allocatable accelerators (every configured resource name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from omerender.accelerators import quantity_value
from omerender.catalog import CONFIG_MAP

__all__ = [
    "STARTUP_ANNOTATION",
    "ForecastInputError",
    "capacity_from_nodes",
    "operator_config",
    "parse_capacity",
    "parse_duration",
    "runtime_startup",
    "sizes_from_dump",
]

STARTUP_ANNOTATION: Final = "forecast.ome.io/startup-time"
_RUNTIME_ANNOTATION: Final = "ome.io/serving-runtime"  # stamped on every rendered pod template
_RUNTIME_KINDS: Final = ("ServingRuntime", "ClusterServingRuntime")
_PART = re.compile(r"(\d+(?:\.\d+)?)(h|m|s)")


class ForecastInputError(ValueError):
    """An input of the forecast is malformed; the message names it and the fix. ``replicas``: the
    replicas (``namespace/name``) it is about, whose files the command names."""

    def __init__(self, message: str, replicas: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.replicas = replicas


def parse_duration(text: str, where: str) -> float:
    """Seconds from ``"5m"``, ``"90s"``, ``"1h30m"`` or ``"300"``."""
    value = text.strip()
    try:
        seconds = float(value)
    except ValueError:
        parts = _PART.findall(value)
        if not parts or "".join(n + u for n, u in parts) != value:
            raise ForecastInputError(
                f"{where}: {text!r} is not a duration; write it like 300, 90s, 5m or 1h30m"
            ) from None
        seconds = sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)
    if seconds < 0:
        raise ForecastInputError(f"{where}: {text!r} is negative; a start-up time is 0 or more")
    return seconds


def parse_capacity(text: str) -> tuple[int, ...]:
    """``NODESxGPUS`` (``4x8``) as the accelerators of each node."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if m is None or int(m.group(1)) < 1:
        raise ForecastInputError(
            f"--capacity: {text!r} is not NODESxGPUS; write the node count and the accelerators per node, "
            "like 4x8"
        )
    return (int(m.group(2)),) * int(m.group(1))


def _items(objects: Iterable[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    """The objects of ``kind``, ``List`` documents (what ``kubectl get -o yaml`` writes) unwrapped."""
    out: list[Mapping[str, Any]] = []
    for obj in objects:
        if obj.get("kind") == "List" or str(obj.get("kind", "")).endswith("List"):
            out.extend(i for i in obj.get("items") or [] if isinstance(i, Mapping) and i.get("kind") == kind)
        elif obj.get("kind") == kind:
            out.append(obj)
    return out


def capacity_from_nodes(objects: Iterable[Mapping[str, Any]], names: Sequence[str]) -> tuple[int, ...]:
    """Each schedulable node's allocatable accelerators (nodes with none are left out)."""
    nodes = _items(objects, "Node")
    if not nodes:
        raise ForecastInputError("--nodes-from: no Node found; give the output of kubectl get nodes -o yaml")
    out: list[int] = []
    for node in nodes:
        if (node.get("spec") or {}).get("unschedulable"):
            continue
        alloc = (node.get("status") or {}).get("allocatable") or {}
        name = (node.get("metadata") or {}).get("name")
        gpus = sum(
            quantity_value(alloc[n], f"node {name} status.allocatable[{n}]") for n in names if n in alloc
        )
        if gpus > 0:
            out.append(gpus)
    return tuple(out)


def sizes_from_dump(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """(namespace, name) -> Instances running now, from a ``kubectl get ir -A -o yaml`` dump."""
    items = _items(objects, "InferenceReplica")
    if not items:
        raise ForecastInputError(
            "--replicas-from: no InferenceReplica found; give the output of kubectl get ir -A -o yaml"
        )
    out: dict[tuple[str, str], int] = {}
    for obj in items:
        meta = obj.get("metadata") or {}
        size = (obj.get("spec") or {}).get("replicas") or (obj.get("status") or {}).get("replicas") or 1
        if not isinstance(size, int) or size < 0:
            raise ForecastInputError(
                f"--replicas-from: InferenceReplica {meta.get('namespace')}/{meta.get('name')} has "
                f"spec.replicas {size!r}; it must be a whole number"
            )
        out[(str(meta.get("namespace") or "default"), str(meta.get("name")))] = size
    return out


def runtime_startup(
    template: Mapping[str, Any], namespace: str, objects: Iterable[Mapping[str, Any]], default: float
) -> float:
    """The start-up time of the runtime a rendered pod template names: the namespaced runtime of that
    name first, then the cluster one (as OME resolves a runtime reference), else ``default``."""
    notes = (template.get("metadata") or {}).get("annotations") or {}
    runtime = notes.get(_RUNTIME_ANNOTATION)
    if not runtime:
        return default
    found: dict[str, Mapping[str, Any]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        if obj.get("kind") not in _RUNTIME_KINDS or meta.get("name") != runtime:
            continue
        if obj.get("kind") == "ServingRuntime" and (meta.get("namespace") or "default") != namespace:
            continue
        found[str(obj.get("kind"))] = obj
    for kind in _RUNTIME_KINDS:
        meta = (found.get(kind) or {}).get("metadata") or {}
        value = (meta.get("annotations") or {}).get(STARTUP_ANNOTATION)
        if value is not None:
            return parse_duration(str(value), f"{kind} {runtime} annotation {STARTUP_ANNOTATION}")
    return default


def operator_config(objects: Iterable[Mapping[str, Any]]) -> dict[str, str] | None:
    """The ``data`` of OME's ``inferenceservice-config`` ConfigMap (namespace ``ome``) among the objects:
    the operator settings the planner runs with (readiness deadline, grace periods, retry ladder) and the
    accelerator names. ``None`` when it is not among them."""
    for obj in objects:
        meta = obj.get("metadata") or {}
        if (
            obj.get("kind") == "ConfigMap"
            and meta.get("name") == CONFIG_MAP
            and meta.get("namespace") == "ome"
        ):
            data = obj.get("data")
            return {str(k): str(v) for k, v in data.items()} if isinstance(data, Mapping) else {}
    return None
