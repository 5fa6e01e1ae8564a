"""Shape checks that hold for every writer, projected or standalone (01 §7.5).

Each returns the reasons a spec is malformed, without the ``InferenceReplica <ns>/<name>: `` prefix.
They read the raw spec where the typed model keeps a block opaque (the autoscaler's ``keda``/``hpa``
blocks, runner pod templates), so they must survive any JSON shape without raising.

TPU slice demand (OME's fourth shape check, only with ``TPUSliceProvisioning``) is out of scope: the
first version renders no TPU variables (DECISIONS §2).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from omerender.models import InferenceReplica

__all__ = ["go_quote", "validate_autoscaler", "validate_pacing", "validate_runner_volumes"]

_CLASSES = ("HPA", "KEDA", "External", "None")
# HPA metric type -> the field that must be set for it (autoscaling/v2 MetricSpec).
_METRIC_SOURCES = {
    "Resource": "resource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
    "ContainerResource": "containerResource",
}
_METRIC_TYPES = "Resource|Pods|Object|External|ContainerResource"


def go_quote(value: object) -> str:
    """Go's ``%q`` of a string, close enough for the names that reach these messages."""
    return json.dumps(str(value), ensure_ascii=False)


def _is_set(value: Any) -> bool:
    return value is not None


def validate_autoscaler(autoscaler: Any, min_replicas: int | None) -> list[str]:
    """OME's shared ``ValidateAutoscaler``: the class, KEDA triggers, HPA metric shapes, KEDA idle floor.

    ``min_replicas`` is ``spec.replicas`` as written (``None`` when unset), the floor the KEDA
    ``idleReplicaCount`` must stay under. OME stops at the first failure; this lists each, in its order.
    The block carries no min/max of its own (the replica count is the floor), so there is no range check.
    """
    if autoscaler is None:
        return []
    if not isinstance(autoscaler, Mapping):
        return ["AutoscalerClassUnknown: spec.autoscaler must be an object with a class"]
    out: list[str] = []
    cls = autoscaler.get("class")
    cls_text = cls if isinstance(cls, str) else ("" if cls is None else str(cls))
    if cls_text not in _CLASSES:
        out.append(
            f"AutoscalerClassUnknown: autoscaler.class {go_quote(cls_text)} is not one of HPA|KEDA|External|None"
        )
        return out
    keda = autoscaler.get("keda")
    if cls_text == "KEDA":
        triggers = keda.get("triggers") if isinstance(keda, Mapping) else None
        if not isinstance(triggers, Sequence) or isinstance(triggers, str) or not triggers:
            out.append("KedaTriggersRequired: class=keda requires at least 1 trigger")
    hpa = autoscaler.get("hpa")
    if cls_text == "HPA" and isinstance(hpa, Mapping):
        metrics = hpa.get("metrics")
        if isinstance(metrics, Sequence) and not isinstance(metrics, str):
            for i, metric in enumerate(metrics):
                problem = _metric_problem(i, metric)
                if problem:
                    out.append(problem)
    if cls_text == "KEDA" and isinstance(keda, Mapping) and min_replicas is not None:
        idle = keda.get("idleReplicaCount")
        if isinstance(idle, int) and not isinstance(idle, bool) and idle >= min_replicas:
            out.append(
                "KedaIdleBelowMin: keda.idleReplicaCount must be < minReplicas "
                f"(got idleReplicaCount={idle}, minReplicas={min_replicas})"
            )
    return out


def _metric_problem(i: int, metric: Any) -> str | None:
    if not isinstance(metric, Mapping) or not metric.get("type"):
        return f"HPAMetricMalformed: hpa.metrics[{i}].type is empty; must be one of {_METRIC_TYPES}"
    kind = metric["type"]
    source = _METRIC_SOURCES.get(str(kind))
    if source is None:
        return f"HPAMetricMalformed: hpa.metrics[{i}].type {go_quote(kind)} is not one of {_METRIC_TYPES}"
    if not _is_set(metric.get(source)):
        return f"HPAMetricMalformed: hpa.metrics[{i}].type={kind} but hpa.metrics[{i}].{source} is nil"
    return None


def validate_pacing(replica: InferenceReplica) -> list[str]:
    """``spec.pacing.partition`` must not exceed the effective replicas (unset or 0 counts as 1)."""
    pacing = replica.spec.pacing
    if pacing is None or pacing.partition is None:
        return []
    replicas = replica.spec.effective_replicas
    if pacing.partition > replicas:
        return [
            f"spec.pacing.partition ({pacing.partition}) must be <= spec.replicas ({replicas}); "
            "an over-partition silently holds every Instance back forever"
        ]
    return []


def validate_runner_volumes(replica: InferenceReplica) -> list[str]:
    """Every container's and init container's ``volumeMounts[].name`` names a volume of its runner's pod.

    Stored runners only: a refs replica stores none (its rendered pods are checked by ``lint``). OME
    answers with the first dangling mount; this lists every one, runners in order, init containers first.
    """
    out: list[str] = []
    for runner in replica.spec.runners or ():
        spec = runner.template.get("spec")
        if not isinstance(spec, Mapping):
            continue
        volumes = spec.get("volumes")
        declared = {
            v.get("name")
            for v in (volumes if isinstance(volumes, list) else ())
            if isinstance(v, Mapping) and isinstance(v.get("name"), str)
        }
        for field in ("initContainers", "containers"):
            containers = spec.get(field)
            for container in containers if isinstance(containers, list) else ():
                if not isinstance(container, Mapping):
                    continue
                mounts = container.get("volumeMounts")
                for mount in mounts if isinstance(mounts, list) else ():
                    name = mount.get("name") if isinstance(mount, Mapping) else None
                    if name in declared:
                        continue
                    out.append(
                        f"runner {go_quote(runner.name)} container {go_quote(container.get('name', ''))}: "
                        f"volumeMount {go_quote(name if name is not None else '')} has no matching volume "
                        "in the pod (for a multi-node runtime declare it under engineConfig.leader.volumes / "
                        "engineConfig.worker.volumes)"
                    )
    return out
