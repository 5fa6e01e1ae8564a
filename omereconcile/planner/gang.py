"""Multi-pod (gang) Instances: a leader and its workers move as one (01 §3.6, §4, §5.2).

An Instance of a multi-pod replica is every pod of ``ctx.gang_slots`` at the row's incarnation. Its
PodGroup (``omerender.stamps.pod_group``) is created before any of its pods and deleted only once they
are all gone; all missing pods are created in one pass; the ``ome.io/serving`` gates go True together,
once every pod is ContainersReady (``ops/update_gang.go`` ``gangSurgeUpdate``: "ContainersReady permits
setting the serving gate", after ``AllPodsRuntimeReady``); the Instance is done only when every pod
serves and is Available.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from omereconcile.actions import CreatePod, CreatePodGroup, DeletePodGroup, UpdatePodGroup
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, hash_of
from omereconcile.planner.holds import UNSCHEDULABLE, first_unplaced
from omereconcile.planner.nodedeath import kubelet_silent
from omereconcile.planner.out import Out
from omereconcile.planner.plan_indices import instance_plan_indices
from omereconcile.planner.podstate import ladder, live, stuck_container
from omereconcile.planner.quota import QUOTA_EXCEEDED, takes_row
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import Row
from omereconcile.planner.steps import (
    by_name,
    check_failure,
    fail,
    recycle_terminal,
    render_pod,
    retire,
    revision_gone,
    terminal_failure,
)
from omereconcile.world import PodGroupView, PodView, format_time, parse_time
from omerender import constants as c
from omerender.naming import pod_group_name
from omerender.stamps import pod_group

__all__ = [
    "PODGROUP_TERMINATING",
    "POD_GROUP_RECHECK",
    "POD_GROUP_RESET",
    "RESTART_POLICY_RECREATE",
    "bring_up_gang",
    "correct_pod_group_drift",
    "first_failed_pod_termination",
    "gang_broken",
    "gang_names",
    "gang_serving",
    "group_of",
    "has_stale_single_pod_groups",
    "lost_gang_member",
    "release_pod_group",
    "reset_failed_pod_group",
    "runner_restarted_since_ready",
]

PODGROUP_TERMINATING = "PodGroupTerminating"  # operation.waiting (01 §4.6)
PODGROUP_NAME_IN_USE = "PodGroupNameInUse"
PODGROUP_FAILED = "Failed"  # scheduler-plugins PodGroupFailed: the gang scheduler's absorbing verdict
POD_GROUP_RESET = "PodGroupReset"  # Go workload.EventReasonPodGroupReset
RESTART_POLICY_RECREATE = "RecreateInstanceOnPodRestart"
POD_GROUP_RECHECK = timedelta(seconds=1)


def gang_names(ctx: Ctx, index: int) -> list[str]:
    return [ctx.pod_name(index, k, runner) for runner, k in ctx.gang_slots]


def group_of(ctx: Ctx, index: int) -> PodGroupView | None:
    name = pod_group_name(ctx.prefix, ctx.component, index)
    found = [g for g in ctx.world.pod_groups if g.name == name]
    found.sort(key=lambda g: g.terminating)
    return found[0] if found else None


def _ours(ctx: Ctx, group: PodGroupView) -> bool:
    """``workload/podgroup/podgroup.go`` ``ControlledByUID`` (ome-projects/ome @ dcfb4135): the group's
    controller owner reference names the replica's UID. A group with no controller reference is not
    ours: it is never adopted, updated or deleted."""
    return group.owner_uid is not None and group.owner_uid == ctx.world.replica.uid


def _ensure_pod_group(ctx: Ctx, row: Row, out: Out) -> str | None:
    """``workload/podgroup`` ``EnsurePodGroups``: the Instance's PodGroup exists before its pods.

    Returns None when the pods may be created in this pass (the group exists, is created ahead of
    them in this plan, or the CRD is not installed), else why not. As in Go's
    ``EnsurePodGroupForPodsFromObservation`` (ome-projects/ome ``workload/podgroup/podgroup.go`` @
    dcfb4135) ownership is checked first: a group not controlled by this replica (another owner, or
    no controller reference at all) is a conflict even while it terminates (``PodGroupNameInUse``);
    only a group of ours on its way out is waited out (``PodGroupTerminating``)."""
    if not ctx.world.gang_scheduling:
        return None
    group = group_of(ctx, row.index)
    if group is None:
        obj = _desired_group(ctx, row.index)
        name = obj["metadata"]["name"]
        if not any(isinstance(a, CreatePodGroup) and a.name == name for a in out.actions):
            out.actions.append(CreatePodGroup(name, obj, f"Instance {row.index}'s gang is scheduled as one"))
        return None
    if not _ours(ctx, group):
        return PODGROUP_NAME_IN_USE
    if group.terminating:
        return PODGROUP_TERMINATING
    if group.phase == PODGROUP_FAILED:
        return PODGROUP_FAILED  # the reset (``reset_failed_pod_group``) rebuilds it; members wait
    return None


def _foreign_group(ctx: Ctx, index: int) -> PodGroupView | None:
    """The Instance's PodGroup name held by a group this replica does not control (Go
    ``GangStateOwnershipConflict``, ``workload/podgroup`` ``ObserveGang``), else None. Only read where
    the PodGroup CRD is installed."""
    if not ctx.world.gang_scheduling:
        return None
    group = group_of(ctx, index)
    return group if group is not None and not _ours(ctx, group) else None


def _controller_description(group: PodGroupView) -> str:
    """Go ``workload/podgroup`` ``controllerDescription``: ``Kind/Name`` of the group's controller
    owner reference, or ``no controller``."""
    ref = next((o for o in group.owner_references if o.get("controller")), None)
    return "no controller" if ref is None else f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _group_terminating(ctx: Ctx, index: int) -> bool:
    """The Instance's own PodGroup is still on its way out (the ``PodGroupTerminating`` wait stands)."""
    group = group_of(ctx, index)
    return group is not None and _ours(ctx, group) and group.terminating


def _desired_group(ctx: Ctx, index: int) -> dict[str, Any]:
    timeout = ctx.ready_timeout.total_seconds() if ctx.ready_timeout else None
    return pod_group(
        ctx.world.replica.model, index, ctx.pods_per_instance, instance_ready_timeout_seconds=timeout
    )


def _drift_patch(group: PodGroupView, want: Mapping[str, Any], keep_topology: bool) -> dict[str, Any]:
    """The merge patch that gives ``group`` the fields OME owns (Go ``podGroupMatches`` and the update
    of ``EnsurePodGroupForPodsFromObservation``, podgroup.go @ dcfb4135): labels replaced whole,
    owner references replaced, only the topology-key annotation (others are kept), minMember and
    scheduleTimeoutSeconds. Empty: nothing drifted."""
    meta_want = want["metadata"]
    meta: dict[str, Any] = {}
    labels = dict(meta_want.get("labels") or {})
    if dict(group.labels) != labels:
        meta["labels"] = {**{k: None for k in group.labels if k not in labels}, **labels}
    refs = [dict(o) for o in meta_want.get("ownerReferences") or []]
    if [dict(o) for o in group.owner_references] != refs:
        meta["ownerReferences"] = refs
    key = (meta_want.get("annotations") or {}).get(c.ANNOTATION_TOPOLOGY_KEY)
    if not keep_topology and group.annotations.get(c.ANNOTATION_TOPOLOGY_KEY) != key:
        meta["annotations"] = {c.ANNOTATION_TOPOLOGY_KEY: key}
    spec: dict[str, Any] = {}
    if group.min_member != want["spec"]["minMember"]:
        spec["minMember"] = want["spec"]["minMember"]
    timeout = want["spec"].get("scheduleTimeoutSeconds")
    if group.schedule_timeout_seconds != timeout:
        spec["scheduleTimeoutSeconds"] = timeout
    patch: dict[str, Any] = {}
    if meta:
        patch["metadata"] = meta
    if spec:
        patch["spec"] = spec
    return patch


def correct_pod_group_drift(
    ctx: Ctx, rows: Sequence[Row], retry: RetryBook, pods_by_index: Mapping[int, Sequence[PodView]], out: Out
) -> None:
    """Every planned multi-pod Instance's PodGroup of ours that drifted is put back, each pass (Go
    ``EnsurePodGroupsWithState``, ome-projects/ome ``workload/gang/gang.go`` @ 4dfb96b1, runs
    ``EnsurePodGroupForPodsFromObservation`` (``workload/podgroup/podgroup.go`` @ dcfb4135) for every
    Instance of the plan but those a Delete owns (``terminalOwnedIndices``)). The plan is
    ``instancePlanIndices`` (``planner/plan_indices.py``): it holds a gang surge's replacement, pinned
    beside its source above the replica count, and the indices a scale-down left (not only
    ``0..replicas-1``), so their groups are kept in line too.

    While pods of the Instance exist, the topology-key annotation is left as it is: Go keeps the
    key those immutable pods were placed by (read from their generated worker-to-leader affinity,
    else the group's own annotation), so a topology edit never changes a running gang's contract.
    Not mirrored: when the annotation was removed by hand while pods run, Go re-derives it from
    their affinity (or refuses the pass); ours leaves it absent. A group that is not ours or is
    terminating is never updated (``_ensure_pod_group`` says why its pods wait). A group of ours the
    gang scheduler marked ``Failed`` is reset instead (:func:`reset_failed_pod_group`), and a standing
    gang without its group gets it back (``_rebuild_standing_gangs_group``)."""
    if not ctx.world.gang_scheduling or not ctx.gang:
        return
    # Go ``terminalOwnedIndices``: a row a Delete owns keeps its group until the teardown removes it.
    deleting = {r.index for r in rows if r.phase == R.DELETING}
    for index in instance_plan_indices([r for r in rows if r.phase != R.DELETING], ctx.desired, retry):
        if index in deleting:
            continue
        group = group_of(ctx, index)
        if group is None:
            _rebuild_standing_gangs_group(ctx, index, out)
            continue
        if group.terminating or not _ours(ctx, group):
            continue
        if group.phase == PODGROUP_FAILED and _resettable(rows, index):
            reset_failed_pod_group(ctx, group, out)
            continue
        patch = _drift_patch(group, _desired_group(ctx, index), keep_topology=bool(pods_by_index.get(index)))
        if patch:
            fields = sorted({*patch.get("metadata", {}), *patch.get("spec", {})})
            out.actions.append(
                UpdatePodGroup(
                    group.name,
                    group.uid,
                    group.resource_version,
                    patch,
                    f"Instance {index}'s PodGroup drifted ({', '.join(fields)}): OME keeps it as its gang needs",
                )
            )


def _rebuild_standing_gangs_group(ctx: Ctx, index: int, out: Out) -> None:
    """A gang whose pods stand without their PodGroup (the reset deleted it, or a hand did) gets it
    back at once, as Go's ``EnsurePodGroupsWithState`` creates every planned gang's group each pass
    (``inventory_test.go`` @ 4dfb96b1 ``TestGang_FailedPodGroupIsResetNotEscalated``: "the ensure
    builds a fresh one"). Ours creates a group ahead of missing pods in the Instance's own step
    (``_ensure_pod_group``); here only a gang with live pods on the name, which no step would
    recreate it for."""
    obj = _desired_group(ctx, index)
    name = obj["metadata"]["name"]
    if not any(p.labels.get(c.LABEL_POD_GROUP) == name and not p.terminating for p in ctx.world.pods):
        return
    out.actions.append(CreatePodGroup(name, obj, f"Instance {index}'s gang stands without its PodGroup"))


def _resettable(rows: Sequence[Row], index: int) -> bool:
    """Go ``resettableIndex`` (``workload/gang/gang.go`` @ 4dfb96b1): a teardown (Delete) or a migration
    owns its Instance's group; any other row, or none, may have it rebuilt."""
    row = next((r for r in rows if r.index == index), None)
    return row is None or row.operation is None or row.operation.type not in (R.OP_DELETE, "Migrate")


def reset_failed_pod_group(ctx: Ctx, group: PodGroupView, out: Out) -> None:
    """A PodGroup of ours the gang scheduler marked ``Failed`` is deleted, to be rebuilt under the same
    name by the next pass's ensure; one Warning ``PodGroupReset`` carries the scheduler's explanation.

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/gang/gang.go`` @ 4dfb96b1 (the one stored
    version; ``inventory.go`` is not in the index) ``EnsurePodGroupsWithState``, ``anyTerminalMember``,
    ``warnPodGroupReset``, with ``workload/podgroup`` ``ObserveGang`` (the message): the Failed verdict
    is absorbing (the scheduler stops reconciling the object, and the ensure only keeps labels,
    ownership and size), so the gang could never be admitted again under it. The row is untouched and
    the Instance is never failed for it. A member the kubelet finished with (phase ``Failed``, not
    being deleted) still on the name holds the reset back: the group's phase is derived from its
    members, so a rebuild around it would get the same verdict; the create pass recycles it first.
    Pinned by ``gang/inventory_test.go`` @ 4dfb96b1 ``TestGang_FailedPodGroupIsResetNotEscalated``
    and ``TestGang_FailedPodGroupResetWaitsForTerminalMemberRecycle``. Go announces the event once per
    episode on the row (``status.Announce``, ``PodGroupReset`` attempt-scoped), and so does ours, on the
    row's ``announced`` record (``Out.announce``, ``planner/status.py`` ``settle_announcements``): a row
    the pass does not write says nothing, and a reset repeated within one attempt is said once. PodGroups are not watched:
    a verdict is read on the next pass the replica gets, as in Go, whose PodGroup watch ignores status
    changes (``inferencereplica/watches.go`` ``podGroupPredicate``)."""
    members = [p for p in ctx.world.pods if p.labels.get(c.LABEL_POD_GROUP) == group.name]
    if any(p.phase == "Failed" and not p.terminating for p in members):
        return
    out.actions.append(DeletePodGroup(group.name, group.uid, "the gang scheduler failed it: rebuilt anew"))
    failed = f"{group.failed_members} of {group.min_member} members failed"
    detail = f"PodGroup {group.name} reported phase {group.phase}: {failed}"
    message = (
        f"OMENative component={ctx.component}: deleting PodGroup {group.name} so the gang can be admitted "
        f"again ({detail})"
    )
    if group.index is not None:
        out.announce(group.index, POD_GROUP_RESET, message)  # the row's ``announced`` record (goW)
    else:
        out.event("Warning", POD_GROUP_RESET, message)
    out.wake(ctx.now + POD_GROUP_RECHECK)


def release_pod_group(ctx: Ctx, index: int, out: Out, why: str) -> bool:
    """Delete the Instance's PodGroup (its pods are gone). True once no group of ours is left."""
    group = group_of(ctx, index)
    if group is None or not _ours(ctx, group):
        return True
    if not group.terminating:
        out.actions.append(DeletePodGroup(group.name, group.uid, why))
    # PodGroups are not watched: nothing else would wake the pass that sees this one gone.
    out.wake(ctx.now + POD_GROUP_RECHECK)
    return False


def _create(
    ctx: Ctx, row: Row, target: str, runner: str, ordinal: int, out: Out, why: str, excluded_for: int | None
) -> None:
    try:
        pod = render_pod(ctx, target, row.index, row.incarnation, runner, ordinal, excluded_for)
    except LookupError:
        revision_gone(ctx, row.index, target, out)  # said once per attempt, however many members
        return
    out.actions.append(CreatePod(ctx.pod_name(row.index, ordinal, runner), pod, why))


def _evidence(pods: Sequence[PodView]) -> PodView | None:
    """The pod whose state speaks for the gang's failure checks: an unschedulable one first (it parks
    the clock), then one with a stuck container."""
    for p in pods:
        if p.unschedulable_since is not None:
            return p
    for p in pods:
        if stuck_container(p) is not None:
            return p
    return None


def _gang_hold(ctx: Ctx, row: Row, wait: str, pods: Sequence[PodView]) -> Row:
    """Go ``holds/gang.go`` ``gangHold`` / ``reportGang`` (ome-projects/ome @ dcfb4135), with
    ``holds/table.go`` ``takesRowFrom``: the row's PodGroup name is still held by a group of ours on
    its way out, so the gang cannot be created yet. The token takes an unheld row, its own, or one held
    only by the pause, and leaves the group's explanation on ``lastFailure`` (Go ``GangTermination``),
    stamped with the moment the hold began (``gangHoldObservedAt``) so an unchanged hold rewrites
    nothing; a row another wait already reports keeps it (its clock parked all the same). The
    explanation is Go's ``GangObservation.Message`` for a terminating group, in its words
    (``workload/podgroup`` ``ObserveGang``: "PodGroup <name> is terminating; the gang is announced
    again once it is collected"; pinned by ``escalation/gang_test.go`` @ 8263d0c7
    ``TestEscalation_GangTerminatingParksWithoutEscalating``).

    A scheduler hold whose pods are all placed now has ended in this very pass (Go releases it before
    the gang hold reads the row: escalation/gang_test.go
    TestEscalation_GangHoldTakesOverFromClearedPodToken @ 8263d0c7), so it does not keep the row."""
    op = row.operation
    assert op is not None
    current = op.waiting
    if current == UNSCHEDULABLE and first_unplaced(live(pods)) is None:
        current = None
    if not takes_row(wait, current):
        return row if op.deadline is None else replace(row, operation=replace(op, deadline=None))
    failure = row.last_failure or {}
    since = parse_time(failure.get("time")) if op.waiting == wait and failure.get("reason") == wait else None
    name = pod_group_name(ctx.prefix, ctx.component, row.index)
    evidence = {
        "reason": wait,
        "message": f"PodGroup {name} is terminating; the gang is announced again once it is collected",
        "time": format_time(since or ctx.now),
    }
    return replace(row, operation=replace(op, waiting=wait, deadline=None), last_failure=evidence)


def bring_up_gang(
    ctx: Ctx,
    row: Row,
    pods: Sequence[PodView],
    out: Out,
    retry: RetryBook | None,
    excluded_for: int | None = None,
) -> tuple[Row, bool]:
    """Create, recycle or wait for every pod of the gang at the operation's target and incarnation.

    ``excluded_for``: the Instance whose node exclusions the pods render with, when not ``row``'s own
    (a gang surge's replacement renders its source's, Go ``gangSurgeUpdate``: the exclusions follow
    the Instance through the surge; ome-projects/ome @ 58a57f25 update_gang_test.go
    ``TestGangSurge_InheritsExcludedNodes``).

    Pods of another incarnation or revision, or in no slot, are retired first (never while they
    serve). Returns the row (parked, or Failed when ``retry`` is given and the evidence says so) and
    whether every pod serves and is Available.
    """
    op = row.operation
    assert op is not None
    names = gang_names(ctx, row.index)
    want_hash = hash_of(op.target_revision)
    for p in live(pods):
        if p.name not in names or p.incarnation != row.incarnation or p.revision_hash != want_hash:
            retire(p, out, f"pod is not a member of Instance {row.index} at incarnation {row.incarnation}")
    members = [
        p
        for p in (by_name(pods, n) for n in names)
        if p is not None and p.incarnation == row.incarnation and p.revision_hash == want_hash
    ]
    missing = [
        (runner, k) for (runner, k), n in zip(ctx.gang_slots, names, strict=True) if by_name(pods, n) is None
    ]
    # A name another controller holds is read on every pass, members present or not; it withholds
    # every create and ends the attempt below, once dead members are recycled (Go's Create pass
    # recycles them before the escalation pass reads the gang).
    foreign = _foreign_group(ctx, row.index)
    withheld = foreign is not None
    if missing and not withheld:
        wait = _ensure_pod_group(ctx, row, out)
        if wait == PODGROUP_FAILED:
            # Go ``EnsurePodGroupsWithState``: members are withheld until the reset's replacement group
            # exists, and the row is untouched (no hold, no failure): a failure that resets itself
            # must not end an attempt. Dead members are still recycled below (the reset waits on it).
            out.wake(ctx.now + POD_GROUP_RECHECK)
            withheld = True
        elif wait is not None:
            # PodGroups are not watched: look again shortly (Go polls a terminating PodGroup, its
            # reconciler_test TestReconcile_TerminatingPodGroupUsesConfiguredPoll).
            out.wake(ctx.now + POD_GROUP_RECHECK)
            if first_unplaced(live(pods)) is None:
                return _gang_hold(ctx, row, wait, pods), False
            # A member the scheduler refuses: the pod hold is marked first, the wait a grace can end
            # (the collection ends by itself). Nothing is created meanwhile; the failure checks below
            # read the member (Go escalation/escalation.go Run, the pod-level marks before the GANG
            # path; escalation/gang_test.go @ 8263d0c7 TestEscalation_PodHoldWinsOverGangHold). Either
            # wait parks the clock, whichever reports it.
            withheld = True
            if op.deadline is not None:
                row = replace(row, operation=replace(op, deadline=None))
                op = row.operation
                assert op is not None
    if op.waiting == PODGROUP_TERMINATING and not _group_terminating(ctx, row.index):
        # The gang hold is read on every pass (ome-projects/ome 4dfb96b1 escalation/escalation.go Run,
        # GANG path; escalation/gang_test.go TestEscalation_GangHoldClearedOnceCollected @ 8263d0c7): a
        # row whose group is gone, or no longer on its way out, releases the token and re-arms a full
        # window, whether or not its pods exist.
        row = replace(row, operation=replace(op, waiting=None, deadline=ctx.deadline_from(ctx.now)))
        op = row.operation
        assert op is not None
    quiet = [
        p
        for p in (by_name(pods, n) for n in names)
        if p is not None and kubelet_silent(ctx.world.nodes, p, ctx.world.settings.force_delete)
    ]
    if missing and not quiet and not withheld:
        # A member whose kubelet stopped reporting keeps its name (it may still run), so the gang cannot
        # complete around it: nothing is created while one stands, held or being force-deleted this
        # pass (Go ops/update_gang.go; ome-projects/ome @ 58a57f25 update_gang_test.go
        # TestGangSurgeUpdate_UnknownMemberSweptOnProvenNodeDeath and …HeldWithoutForceDeletePolicy).
        for runner, k in missing:
            _create(
                ctx,
                row,
                op.target_revision,
                runner,
                k,
                out,
                f"{op.type} {op.step}: gang pod at {op.target_revision}",
                excluded_for,
            )
    dead = [p for p in members if p.ended and not p.terminating]
    if dead:
        # Every dead member in one recycle (ops/terminal_recycle.go recycleTerminalPods; ome-projects/ome
        # @ 58a57f25 TestCreate_RecyclesWholeTerminalGangTogether): one count, the delete of each.
        row = recycle_terminal(ctx, row, dead[0], out, dead[1:])
    if foreign is not None and (retry is not None or missing):
        # Go escalation/escalation.go Run, the GANG path (escalation/gang.go gangTerminalReason,
        # escalateGangFailure; ome-projects/ome 4dfb96b1, pinned by escalation/gang_test.go @ 8263d0c7
        # TestEscalation_GangOwnershipConflictFailsOnlyItsRow): nothing this controller does frees the
        # name, so the attempt ends, environment-caused (no retry charge), in ObserveGang's words.
        if retry is None:
            return row, False
        msg = (
            f"PodGroup {foreign.name} is controlled by {_controller_description(foreign)}, not by this owner"
        )
        return fail(ctx, row, "", None, PODGROUP_NAME_IN_USE, msg, out, None), False
    standing = [p for p in members if not p.terminating and not p.ended]
    complete_gang = not missing and len(standing) == len(names)
    if complete_gang and all(p.containers_ready for p in standing):
        for p in standing:
            out.gate(p, True, "every pod of the gang is ready: the gang enters rotation together")
    ladders = [ladder(p, ctx.world.endpoints, ctx.min_ready, ctx.now) for p in standing]
    for lad in ladders:
        out.wake(lad.available_at)
    done = complete_gang and all(
        lad.serving and lad.available and p.ready for lad, p in zip(ladders, standing, strict=True)
    )
    if done or retry is None or row.operation is None:
        return row, done
    evidence = _evidence(standing)
    name = evidence.name if evidence is not None else names[0]
    row, failed = check_failure(ctx, row, evidence, name, out, retry, created=not missing, members=standing)
    return (failed if failed is not None else row), False


def gang_serving(ctx: Ctx, pods: Sequence[PodView]) -> bool:
    """Every desired pod of the gang serves (Go ``InstanceMeetsThreshold`` on serving pods)."""
    serving = sum(1 for p in pods if ladder(p, ctx.world.endpoints, ctx.min_ready, ctx.now).serving)
    return serving >= ctx.pods_per_instance


def runner_restarted_since_ready(pod: PodView, ready_since: datetime | None) -> str | None:
    """``ops/restart.go`` ``runnerRestartedSinceReady``: the runner container's last termination
    finished, or its current run started, after the Instance entered ``Ready``. Either proves the
    process group formed at ``Ready`` lost this member's process although the kubelet restarted it in
    place. Sidecars and init containers never count; without ``readySince`` nothing is dated."""
    if ready_since is None or pod.terminating:
        return None
    for ct in pod.containers:
        if ct.name != c.MAIN_CONTAINER:
            continue
        if ct.finished_at is not None and ct.finished_at > ready_since:
            reason = ct.terminated_reason or "Error"
            exit_code = ct.exit_code or 0
            return f"pod {pod.name} container {ct.name} restarted after Ready: {reason} (exit {exit_code})"
        if ct.started_at is not None and ct.started_at > ready_since:
            return f"pod {pod.name} container {ct.name} restarted after Ready"
    return None


def runner_restarted_again_since_ready(pod: PodView, ready_since: datetime | None) -> bool:
    """Go ``RunnerRestartedAgainSinceReady`` (``workload/ops/restart.go``, the newest of 5, 78,474
    characters): the run the runner's last termination records had itself begun after the Instance
    entered Ready, so the container restarted more than once since (the kubelet keeps only the latest
    termination). The nil-``readySince`` and Terminating rules of ``RunnerRestartedSinceReady``
    apply."""
    if ready_since is None or pod.terminating:
        return False
    for ct in pod.containers:
        if ct.name != c.MAIN_CONTAINER:
            continue
        return (
            ct.finished_at is not None and ct.last_started_at is not None and ct.last_started_at > ready_since
        )
    return False


def gang_broken(ctx: Ctx, row: Row, pods: Sequence[PodView]) -> str | None:
    """Why a steady gang is no longer whole, in the words of ``ops/restart.go``
    ``DetectRestartTriggerWithPods`` (its ``Ready`` branch): per member, a runner restart dated after
    ``readySince`` (``runner_restarted_since_ready``) or a member that ended (``pod <name> Failed``);
    then fewer live members than desired (``pod count <n> below desired <m>``). A member on its way out
    or at another incarnation counts as lost. None when every member stands."""
    names = gang_names(ctx, row.index)
    members = [by_name(pods, n) for n in names]
    for p in members:
        if p is None:
            continue
        restarted = runner_restarted_since_ready(p, row.ready_since)
        if restarted is not None:
            return restarted
        if not p.terminating and p.ended:
            return f"pod {p.name} Failed"
    live_members = [
        p for p in members if p is not None and not p.terminating and p.incarnation == row.incarnation
    ]
    if len(live_members) < len(names):
        return f"pod count {len(live_members)} below desired {len(names)}"
    return None


_LOSS_PHASES = (R.PENDING, R.CREATING, R.FAILED, R.READY)
_CREATE_REFUSED = (QUOTA_EXCEEDED, PODGROUP_TERMINATING)


def lost_gang_member(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out | None = None) -> str | None:
    """``ops/restart.go`` ``instanceLostGangMember`` (the newest version): a committed multi-pod
    Instance missing a member while at least one survives is rebuilt as a whole by a Restart, so the
    survivors do not pin the replacement to a topology it cannot enter.

    Only below ``Ready`` is it asked (the ``Ready`` branch reads ``gang_broken``), only under
    ``RecreateInstanceOnPodRestart``, in ``Pending``/``Creating``/``Failed``/``Ready``, and only when no
    operation other than a ``Create`` owns the pods (a ``Restart`` parked at ``Failed`` owns none: it
    re-arms, ``planner/restart.py``). Committed, as Go's ``createCommitted`` (ome-projects/ome
    ``pkg/controller/v1beta1/workload/ops/restart.go`` @ 58a57f25 and the newest stored version, the
    same text): the operation's step is ``CreatePods`` (a Create commits it before issuing its pod
    creates, so an interrupted partial create is rebuilt whole), or the row is ``Failed`` (an attempt
    ran), or the published ``podCount`` has reached the desired count (the legacy fallback). A
    terminal pod is no survivor. Total loss stays with ``Create``'s fresh
    start. Nothing here reads readiness, container state, deadlines or operation age, so a gang that is
    merely slow to boot is never recycled underneath itself. The rebuild answers to the RetryBlock of
    the revision it would re-materialize (``_rebuild_denied``); a backoff that denies it asks ``out``
    for a pass when it is due, since nothing else changes when the backoff ends."""
    expected = ctx.pods_per_instance
    if expected <= 1 or ctx.restart_policy != RESTART_POLICY_RECREATE or row.phase not in _LOSS_PHASES:
        return None
    op = row.operation
    if op is not None and op.type != R.OP_CREATE and not (op.type == R.OP_RESTART and row.phase == R.FAILED):
        # A Restart parked at Failed is a spent attempt, not an owner: only another Restart rebuilds
        # the gang whole, so it may re-arm (Go's exemption, ops/restart.go @ 58a57f25).
        return None
    if op is not None and (op.capacity_refused_at is not None or op.waiting in _CREATE_REFUSED):
        # The missing members were never created (a refusal the Create records and waits out), not
        # lost: rebuilding would only have the same creates refused again.
        return None
    # Go createCommitted. Go lists the pods live here; ours plans from the watch caches, and a pass
    # after pod creates waits until the pods cache shows them (omereconcile/cluster/expectations.py,
    # the ReplicaSet controller's expectations), so a member this reconciler just created is not
    # read as lost.
    committed = op is not None and op.step == R.STEP_CREATE_PODS
    if not committed and row.phase != R.FAILED and row.pod_count < expected:
        return None
    if _retired_attempt_leftovers(row, pods):
        return None
    survivors = sum(1 for p in pods if not p.ended)
    if survivors == 0 or survivors >= expected:
        return None
    denied, due = _rebuild_denied(ctx, row)
    if denied:
        if out is not None:
            out.wake(due)
        return None
    return f"gang member lost: {survivors} of {expected} pods present"


def _retired_attempt_leftovers(row: Row, pods: Sequence[PodView]) -> bool:
    """Go ``ops/create.go`` ``retiredAttemptPods`` (ome-projects/ome, the newest stored version, 53,576
    characters): a Create at ``CreatePods`` on a never-promoted row holds live pods of another
    revision than the one it is pinned to, the leftovers of an attempt it retired
    (``retireSupersededCreateMutation``), which the Create pass deletes. Ours asks the lost-member
    trigger inside that pass, so while they stand the short set is not read as this attempt's loss:
    the cleanup goes first, then the attempt builds its gang whole (``create_test.go``
    ``TestCreate_FreshAttemptRecreatesRetiredPodsAtItsRevision``). Go's restart selection yields a
    superseded revision's leftovers the same way on a Ready or Failed row (``RepairYieldsToTarget``,
    ``EvaluateWreckage``: "the half-gone set reads as a loss that is not the row's own"); in which
    order Go's dispatcher runs its restart selection and this cleanup for a Creating row was not
    read."""
    op = row.operation
    if op is None or op.type != R.OP_CREATE or op.step != R.STEP_CREATE_PODS or row.running_revision:
        return False
    pinned = hash_of(op.target_revision)
    return bool(pinned) and any(
        p.revision_hash and p.revision_hash != pinned and not p.terminating for p in pods
    )


def _rebuild_denied(ctx: Ctx, row: Row) -> tuple[bool, datetime | None]:
    """``ops/restart.go`` ``rebuildRetryBlockDenies`` (ome-projects/ome, the newest stored version, the
    one carrying ``readCrashLoopEpisode``): a rebuild below ``Ready`` re-materializes the revision the
    row records (running, else target, else the update revision), so it answers to that revision's
    RetryBlock as a Create does: ``Held`` denies, ``Backoff`` denies until due, ``RetryInProgress``
    while any Create is in flight (``anyInFlightCreateAttempt`` over every Instance). Also answers
    when a denying backoff is due (None for the other denials)."""
    rev = row.running_revision or row.target_revision or ctx.spec_revision
    blocks = R.load_retry_blocks(ctx.world.replica.status)
    if not rev or rev not in blocks:
        return False, None
    in_flight = any(
        r.operation is not None and r.operation.type == R.OP_CREATE and r.phase == R.CREATING
        for r in R.load_rows(ctx.world.replica.status)
    )
    book = RetryBook(blocks, f"{ctx.namespace}/{ctx.name}", ctx.component)
    state, due = book.gate(rev, ctx.now, in_flight)
    return state is not None, due


def pod_termination(ctx: Ctx, pod: PodView) -> dict[str, object] | None:
    """``workload.PodTermination`` as far as a ``PodView`` carries it: a container whose current or
    last run ended with a non-zero exit (the current first, Go ``nonZeroTerminated``), then a container
    parked in a terminal waiting reason, then a pod that ended (``steps`` terminal diagnostics). None
    when the pod shows nothing worth keeping."""
    for ct in (*pod.containers, *pod.init_containers):
        # Go nonZeroTerminated: the live state wins over the last termination (a pod that Failed shows
        # its crash there, e.g. OOMKilled exit 137).
        if ct.state_exit_code:
            exit_code, reason = ct.state_exit_code, ct.state_terminated_reason
        elif ct.finished_at is not None and ct.exit_code:
            exit_code, reason = ct.exit_code, ct.terminated_reason
        else:
            continue
        return {
            "podName": pod.name,
            "containerName": ct.name,
            "reason": reason or "Error",
            "exitCode": exit_code,
            "time": format_time(ctx.now),
        }
    stuck = stuck_container(pod)
    if stuck is not None:
        return {
            "podName": pod.name,
            "containerName": stuck.container,
            "reason": stuck.reason,
            "time": format_time(ctx.now),
        }
    if pod.phase != "Failed":
        for ct in pod.containers:
            # Go PodTermination's third branch as the 8,317-character types/podtermination.go states it
            # (no phase guard): a clean exit is a termination too, so a runner that stopped itself and
            # was restarted in place is recorded (Completed, exit 0) when its Restart opens. Regular
            # containers only: a completed init container is a healthy pod's ordinary state (the
            # 6,949-character version's reason for its guard).
            if ct.terminated_reason is not None or ct.finished_at is not None:
                return {
                    "podName": pod.name,
                    "containerName": ct.name,
                    "reason": ct.terminated_reason or "Error",
                    "exitCode": ct.exit_code or 0,
                    "time": format_time(ctx.now),
                }
    return terminal_failure(ctx, pod) if pod.phase == "Failed" else None


def first_failed_pod_termination(ctx: Ctx, pods: Sequence[PodView]) -> dict[str, object] | None:
    """``ops/restart.go`` ``firstFailedPodTermination``: a ``Failed`` pod's diagnostics first, else any
    pod showing a crash or a wedge; None when the failing pod already vanished."""
    for p in pods:
        if p.phase == "Failed":
            found = pod_termination(ctx, p)
            if found is not None:
                return found
    for p in pods:
        if p.phase != "Failed":
            found = pod_termination(ctx, p)
            if found is not None:
                return found
    return None


def _stale_group_candidates(ctx: Ctx, rows: Sequence[Row]) -> list[tuple[int, PodGroupView]]:
    """The PodGroups of ours at the names of planned single-pod Instances not in terminal finalization
    (a ``Deleting`` row under its Delete, a ``GangSurgeTargetCleanup`` step), by index."""
    if ctx.gang or not ctx.world.gang_scheduling:
        return []
    terminal = {
        r.index
        for r in rows
        if r.operation is not None
        and (
            (r.phase == R.DELETING and r.operation.type == R.OP_DELETE)
            or (r.operation.type == R.OP_UPDATE and r.operation.step == R.STEP_GANG_SURGE_TARGET_CLEANUP)
        )
    }
    planned = set(range(ctx.desired)) | {r.index for r in rows}
    found: list[tuple[int, PodGroupView]] = []
    for index in sorted(planned - terminal):
        name = pod_group_name(ctx.prefix, ctx.component, index)
        group = next(
            (g for g in ctx.world.pod_groups if g.name == name and g.owner_uid == ctx.world.replica.uid), None
        )
        if group is not None:
            found.append((index, group))
    return found


def has_stale_single_pod_groups(ctx: Ctx, rows: Sequence[Row]) -> bool:
    """Whether the stale-group gate has a PodGroup to judge (Go then reads an authoritative pod
    snapshot, and refuses one holding an owned pod without a valid instance index)."""
    return bool(_stale_group_candidates(ctx, rows))


def stale_single_pod_groups(
    ctx: Ctx, rows: Sequence[Row], by_index: dict[int, list[PodView]], out: Out
) -> bool:
    """A PodGroup of ours left at the name of an Instance now planned as a single pod (a gang spec
    turned single-pod) goes before any workload runs; True while one is on its way out, and the pass
    must not create or admit anything.

    Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/reconciler.go``
    ``reconcileStaleSinglePodGroups`` (the version carrying ``requiresAuthoritativePodGroupInventory``;
    reconciler_test.go @ ae43378d ``TestReconcile_MultiToSinglePodGroupCleanupGatesWorkload``). For
    each planned single-pod Instance not in terminal finalization (a ``Deleting`` row under its Delete,
    a ``GangSurgeTargetCleanup`` step), a PodGroup of ours at its name: Terminating blocks; referenced
    by a pod's PodGroup label, or with pods at the Instance's index, is kept; otherwise it is deleted
    and blocks. Go's ``ScaleDownPodBatchSize`` budget is not a setting here (unbudgeted). Its refusal
    of a snapshot holding an owned pod with a malformed instance index is the caller's
    (``planner/core.py``, with :func:`has_stale_single_pod_groups` and ``planner/snapshot.py``)."""
    candidates = _stale_group_candidates(ctx, rows)
    if not candidates:
        return False
    referenced = {
        p.labels.get(c.LABEL_POD_GROUP)
        for pods in by_index.values()
        for p in pods
        if p.labels.get(c.LABEL_POD_GROUP)
    }
    blocked = False
    for index, group in candidates:
        name = group.name
        if group.terminating:
            blocked = True
            continue
        if name in referenced or by_index.get(index):
            continue
        out.actions.append(
            DeletePodGroup(group.name, group.uid, f"PodGroup left at Instance {index}, now a single pod")
        )
        blocked = True
    if blocked:
        out.wake(ctx.now + POD_GROUP_RECHECK)
    return blocked
