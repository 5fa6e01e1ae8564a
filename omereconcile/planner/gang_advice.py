"""The gang advisories: ``MaybeNoGangScheduler`` (Go ``workload/podgroup`` ``maybeWarnNoGangScheduler``,
``effectiveSchedulerName``; ``types`` ``EventReasonMaybeNoGangScheduler``) and ``GangSplitRisk`` (Go
``workload/ops`` ``maybeWarnGangSplitRisk``, ``hasAnyRequiredPodAffinity``; below).

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

from omereconcile.actions import CreatePod, CreatePodGroup
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.gang import group_of
from omereconcile.planner.inplace import revision_payload
from omereconcile.planner.out import Out
from omereconcile.planner.plan_indices import instance_plan_indices
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Row, load_rows
from omerender import constants as c
from omerender.naming import pod_group_name

__all__ = [
    "GANG_SPLIT_RISK",
    "MAYBE_NO_GANG_SCHEDULER",
    "effective_scheduler_name",
    "gang_split_risk",
    "has_required_pod_affinity",
    "maybe_gang_split_risk",
    "maybe_no_gang_scheduler",
]

MAYBE_NO_GANG_SCHEDULER = "MaybeNoGangScheduler"
GANG_SPLIT_RISK = "GangSplitRisk"  # types.EventReasonGangSplitRisk
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


def has_required_pod_affinity(pod: Mapping[str, Any]) -> bool:
    """Go ``hasAnyRequiredPodAffinity``: the pod declares at least one required (hard) podAffinity
    term, OME's or the operator's."""
    spec = pod.get("spec")
    affinity = spec.get("affinity") if isinstance(spec, Mapping) else None
    pod_affinity = affinity.get("podAffinity") if isinstance(affinity, Mapping) else None
    terms = (
        pod_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        if isinstance(pod_affinity, Mapping)
        else None
    )
    return bool(terms)


def gang_split_risk(ctx: Ctx, pod: Mapping[str, Any]) -> bool:
    """Go ``maybeWarnGangSplitRisk``'s test on the rendered pod (ome-projects/ome
    ``workload/ops/create.go``, the newest stored text, 53,576 characters, commit not named by the
    index; sgl-project/ome ``ops/gangsplit.go`` @ bb4fa1ee has the same test): only a worker of an
    Instance with a leader can split (the leader is the domain anchor, a single-pod Instance has
    nothing to co-locate), and only when the pod as rendered carries no required podAffinity — the
    render injects one when ``spec.topologyKey`` resolves (``injectGangDomainAffinity``) and keeps an
    operator's own."""
    metadata = pod.get("metadata")
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    runner = labels.get(c.LABEL_RUNNER) if isinstance(labels, Mapping) else None
    if runner != c.RUNNER_WORKER or not any(r == c.RUNNER_LEADER for r, _ in ctx.gang_slots):
        return False
    return not has_required_pod_affinity(pod)


def maybe_gang_split_risk(ctx: Ctx, out: Out) -> None:
    """Record ``GangSplitRisk`` for each Instance whose worker pods ``out`` creates at risk.

    Go (the newest stored ``create.go``, ``createMissingPods``, the funnel of every create path:
    Create, surge, rebuild) checks every pod it renders, before the create call, and announces the
    Warning once per episode on the Instance's own row (``status.Announce``, a standing reason keyed
    ``<reason>@#<incarnation>``: once per row and incarnation; sgl-project @ bb4fa1ee deduplicated per
    owner and Component per process instead). Here too it is announced on
    the row's ``announced`` record (``Out.announce``, ``planner/status.py``
    ``settle_announcements``): once per row and incarnation, across passes and reconciler restarts, so
    a create the API server refused does not warn again on the next attempt (the marker rides the
    pass that tried it, as Go writes it before the create call). An Instance is also not warned when
    a worker of its incarnation is already observed (the episode read from the pods, as before the
    record). Advisory only: it never holds the create.

    Go's words, except the field: Go names the InferenceService component's
    ``<component>.topologyKey``; on a standalone replica that field is the replica's
    ``spec.topologyKey``."""
    warned: set[int] = set()
    for act in out.actions:
        if not isinstance(act, CreatePod) or not gang_split_risk(ctx, act.pod):
            continue
        labels = act.pod["metadata"]["labels"]
        index = int(labels[c.LABEL_INSTANCE_INDEX])
        incarnation = labels.get(c.LABEL_INSTANCE_INCARNATION)
        if index in warned:
            continue
        warned.add(index)
        if any(
            p.index == index
            and p.labels.get(c.LABEL_INSTANCE_INCARNATION) == incarnation
            and p.labels.get(c.LABEL_RUNNER) == c.RUNNER_WORKER
            for p in ctx.world.pods
        ):
            continue  # an earlier pass created this incarnation's workers and warned
        out.announce(
            index,
            GANG_SPLIT_RISK,
            f"OMENative component={ctx.component} is a multi-node gang but its worker pods have no "
            "co-location podAffinity: the gang may be scheduled across separate network/NVLink/TPU "
            "topology domains, breaking the tightly-coupled collectives a multi-node runtime needs "
            "(NCCL/RCCL/NIXL all-reduce, multi-host TPU sessions). Set spec.topologyKey to the node "
            "label that identifies the required topology domain, or declare a worker podAffinity.",
        )
