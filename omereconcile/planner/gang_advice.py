"""The ``MaybeNoGangScheduler`` advisory (Go ``workload/podgroup`` ``maybeWarnNoGangScheduler``,
``effectiveSchedulerName``; ``types`` ``EventReasonMaybeNoGangScheduler``).

A stock kube-scheduler does not read scheduler-plugins PodGroups, so a gang whose pods name no
scheduler (or ``default-scheduler``) may be placed pod by pod. When the gangs' PodGroups stand and the
render's effective ``schedulerName`` (the leader's, else the worker's) is unset or
``default-scheduler``, a Warning is announced:
``OMENative component=<c> created scheduler-plugins PodGroup objects but pod template's
spec.schedulerName is "<name>" (default kube-scheduler does not enforce PodGroup gang); set
runtime.spec.schedulerName to a gang-aware scheduler (e.g. scheduler-plugins-scheduler) or install
scheduler-plugins as a plugin in the default scheduler``.

Said once per episode, by the newest Go's rule (ome-projects/ome ``workload/gang/gang.go`` @ 4dfb96b1
``EnsurePodGroupsWithState`` and ``maybeWarnNoGangScheduler``, ``status/announced.go`` @ 4dfb96b1):
every pass that ensures the gangs' PodGroups announces it on the row of the first planned Instance whose
group this pass ensured and whose row the pass started from (a row that does not exist yet waits for
the next pass), through that row's ``announced`` record as a standing message,
``MaybeNoGangScheduler@#<incarnation>``: once per incarnation of that row, across passes and restarts
of the reconciler. Before, it was said on every pass that created a PodGroup, and the executor kept a
per-process memory of it (the older Go's ``maybeNoGangSchedulerSeen``), which a restart forgot.
A heuristic, as in Go: scheduler-plugins installed as the default scheduler's
plugin gives a false positive that cannot be told from inside the cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from omereconcile.actions import CreatePodGroup
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.gang import group_of
from omereconcile.planner.inplace import revision_payload
from omereconcile.planner.out import Out
from omereconcile.planner.plan_indices import instance_plan_indices
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Row, load_rows
from omerender.naming import pod_group_name

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


def _ensured(ctx: Ctx, index: int, out: Out) -> bool:
    """The Instance's PodGroup of ours stands after this pass (Go: ``EnsurePodGroupForPodsFromObservation``
    succeeded): it exists, is ours and is not terminating, or this pass creates it."""
    name = pod_group_name(ctx.prefix, ctx.component, index)
    if any(isinstance(a, CreatePodGroup) and a.name == name for a in out.actions):
        return True
    group = group_of(ctx, index)
    return (
        group is not None
        and not group.terminating
        and group.owner_uid is not None
        and group.owner_uid == ctx.world.replica.uid
    )


def maybe_no_gang_scheduler(ctx: Ctx, rows: Sequence[Row], retry: RetryBook, out: Out) -> None:
    """Announce the advisory on the first planned gang (Go's plan order) whose PodGroup stands and
    whose row the pass started from, when the template names no gang scheduler. ``rows``: the pass's
    rows, whose non-``Deleting`` ones make the plan (Go ``terminalOwnedIndices`` skips a Delete's)."""
    if not ctx.gang or not ctx.world.gang_scheduling:
        return
    name = effective_scheduler_name(revision_payload(ctx, ctx.target))
    if name and name != DEFAULT_SCHEDULER:
        return  # the operator named a scheduler: trust it
    observed = {r.index for r in load_rows(ctx.world.replica.status)}
    planned = instance_plan_indices([r for r in rows if r.phase != R.DELETING], ctx.desired, retry)
    deleting = {r.index for r in rows if r.phase == R.DELETING}
    index = next((i for i in planned if i not in deleting and i in observed and _ensured(ctx, i, out)), None)
    if index is None:
        return
    out.announce(
        index,
        MAYBE_NO_GANG_SCHEDULER,
        f"OMENative component={ctx.component} created scheduler-plugins PodGroup objects but pod "
        f"template's spec.schedulerName is {json.dumps(name)} (default kube-scheduler does not enforce "
        "PodGroup gang); set runtime.spec.schedulerName to a gang-aware scheduler (e.g. "
        "scheduler-plugins-scheduler) or install scheduler-plugins as a plugin in the default scheduler",
    )
