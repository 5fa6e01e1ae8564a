"""The ``MaybeNoGangScheduler`` advisory (Go ``workload/podgroup`` ``maybeWarnNoGangScheduler``,
``effectiveSchedulerName``; ``types`` ``EventReasonMaybeNoGangScheduler``).

A stock kube-scheduler does not read scheduler-plugins PodGroups, so a gang whose pods name no
scheduler (or ``default-scheduler``) may be placed pod by pod. When a pass creates a multi-pod
Instance's PodGroup and the render's effective ``schedulerName`` (the leader's, else the worker's) is
unset or ``default-scheduler``, one Warning is recorded:
``OMENative component=<c> created scheduler-plugins PodGroup objects but pod template's
spec.schedulerName is "<name>" (default kube-scheduler does not enforce PodGroup gang); set
runtime.spec.schedulerName to a gang-aware scheduler (e.g. scheduler-plugins-scheduler) or install
scheduler-plugins as a plugin in the default scheduler``.

Go deduplicates it per (owner, Component) per process; the newest (``podgroup`` ``EnsurePodGroups``,
``status/announced.go`` @ 4dfb96b1) announces it on every pass on the row of the first Instance whose
PodGroup was ensured, once per incarnation of that row (``<reason>@#<incarnation>`` on the row's
``announced`` record, which the planner does not write yet: ``docs/goparity.md``, ``announced_test.go``).
Here the Warning is tied to what its API comment names: the creation of a PodGroup, at most once per
pass. A heuristic, as in Go: scheduler-plugins installed as the default scheduler's
plugin gives a false positive that cannot be told from inside the cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from omereconcile.actions import CreatePodGroup
from omereconcile.planner.context import Ctx
from omereconcile.planner.inplace import revision_payload
from omereconcile.planner.out import Out

__all__ = ["MAYBE_NO_GANG_SCHEDULER", "effective_scheduler_name", "maybe_no_gang_scheduler"]

MAYBE_NO_GANG_SCHEDULER = "MaybeNoGangScheduler"
DEFAULT_SCHEDULER = "default-scheduler"  # corev1.DefaultSchedulerName


def effective_scheduler_name(payload: Mapping[str, Any] | None) -> str:
    """Go ``effectiveSchedulerName``: the leader's ``schedulerName``, else the worker's, else empty."""
    for key in ("podSpec", "workerPodSpec"):
        spec = payload.get(key) if payload is not None else None
        name = spec.get("schedulerName") if isinstance(spec, dict) else None
        if isinstance(name, str) and name:
            return name
    return ""


def maybe_no_gang_scheduler(ctx: Ctx, out: Out) -> None:
    """Record the advisory when ``out`` creates a PodGroup under a template with no gang scheduler."""
    if not any(isinstance(a, CreatePodGroup) for a in out.actions):
        return
    name = effective_scheduler_name(revision_payload(ctx, ctx.target))
    if name and name != DEFAULT_SCHEDULER:
        return  # the operator named a scheduler: trust it
    out.event(
        "Warning",
        MAYBE_NO_GANG_SCHEDULER,
        f"OMENative component={ctx.component} created scheduler-plugins PodGroup objects but pod "
        f"template's spec.schedulerName is {json.dumps(name)} (default kube-scheduler does not enforce "
        "PodGroup gang); set runtime.spec.schedulerName to a gang-aware scheduler (e.g. "
        "scheduler-plugins-scheduler) or install scheduler-plugins as a plugin in the default scheduler",
    )
