"""OME's ``workload/escalation/gang_test.go``, the gang-surge cases: what the escalation pass reads on a
gang surge's SOURCE and on its replacement's marker row.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/gang_test.go`` @ 8263d0c7 (the newest
stored version, 50,896 characters read), tests ``TestReconcileGatedDeadlines_ParksGangSurgeSourceOnMember-
Rejection``, ``…_ParksGangTerminatingSurgeSource``, ``TestEscalation_GangReadingSkipsSurgeSource``,
``…GangReadingsOnASurgeSource``, ``…WedgedGangReplacementFailsBothHalvesOfThePair`` and
``…TerminatingMarkerPodEndsNothing``, over ``escalation/escalation.go`` ``Run`` and
``ReconcileGatedDeadlines``. Go builds the pair by hand (``gangSurgePair``: the source at ``Surge`` with
``SurgeIndex`` 1, the marker ``GangSurgeTarget`` at index 1). Ours builds it the way a user gets one:
a one-Instance leader+worker replica is brought up in the simulated world, its image changed, and one
pass journals the pair (``planner/gang_ops.py`` ``start_gang_surge``) with the replacement's PodGroup
and pods. The case then edits the observed world (a member's status, a PodGroup's deletion or owner)
and runs one pass of the pair, :func:`omereconcile.planner.gang_ops.step_gang_surge`, where ours reads
the replacement's evidence (``bring_up_gang``) and the source's step.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import PODGROUP_TERMINATING
from omereconcile.planner.gang_ops import step_gang_surge
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/gang_test.go @ 8263d0c7"
TIMEOUT = timedelta(minutes=30)
SOURCE_GROUP = "llama-pool-engine-0"
MARKER_GROUP = "llama-pool-engine-1"
LEADER = "llama-pool-engine-1-leader-0"
WORKER = "llama-pool-engine-1-worker-0"
COSCHEDULING = "0/3 nodes are available: cannot find enough sibling pods for PodGroup llama-pool-engine-1"


def gang_surge_pair(stuck: timedelta = timedelta(0), grace: timedelta = timedelta(minutes=10)) -> Sim:
    """Go ``gangSurgePair``, the way tests/sim/test_gang_surge.py gets one: a one-Instance leader+worker
    gang serving ``vllm:v1``, the image changed, one pass. Index 0 is then the source (``Update``/``Surge``,
    ``surgeIndex`` 1, serving), index 1 the marker (``GangSurgeTarget``, Creating) with its PodGroup and
    its two pods created, both rows with a live 30-minute deadline."""
    settings = OperatorSettings(
        instance_ready_timeout=TIMEOUT, stuck_pod_grace_period=stuck, unschedulable_grace_period=grace
    )
    sim = Sim(settings=settings, workers=1)
    sim.apply_replica(base_replica(replicas=1))
    d = Driver(sim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.image = "vllm:v2"
    d.one_pass()
    rows = R.load_rows(sim.status)
    assert [(r.index, r.operation and r.operation.step) for r in rows] == [
        (0, R.STEP_SURGE),
        (1, R.STEP_GANG_SURGE_TARGET),
    ]
    assert rows[0].operation is not None
    assert rows[0].operation.surge_index == 1
    assert sorted(sim.pod_groups) == [SOURCE_GROUP, MARKER_GROUP]
    return sim


def _set_status(sim: Sim, name: str, status: dict[str, Any], *, deleting: bool = False) -> None:
    obj = sim.pods[name].obj
    obj["status"] = status
    if status.get("startTime"):
        obj["spec"]["nodeName"] = "node-a"  # Go waitingPod's node, a Node the watch sees Ready
        obj["metadata"]["creationTimestamp"] = status["startTime"]
    if deleting:
        obj["metadata"]["deletionTimestamp"] = format_time(sim.now - timedelta(hours=1))


def _waiting(sim: Sim, reason: str, since: timedelta) -> dict[str, Any]:
    """Go ``waitingPod``: placed on a node, its container waiting in ``reason``."""
    at = format_time(sim.now - since)
    return {
        "phase": "Pending" if reason != "CrashLoopBackOff" else "Running",
        "startTime": at,
        "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": at}],
        "containerStatuses": [
            {
                "name": "ome-container",
                "ready": False,
                "restartCount": 3,
                "state": {"waiting": {"reason": reason}},
            }
        ],
    }


def _group_terminating(sim: Sim, name: str) -> None:
    sim.pod_groups[name]["metadata"]["deletionTimestamp"] = format_time(sim.now)


def _group_foreign(sim: Sim, name: str) -> None:
    """Go ``GangStateOwnershipConflict``: the name is controlled by StatefulSet/legacy."""
    sim.pod_groups[name]["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "legacy",
            "uid": "uid-legacy",
            "controller": True,
        }
    ]


def _group_failed(sim: Sim, name: str) -> None:
    """Go ``GangStateFailed``: the gang scheduler's absorbing verdict on a group of ours."""
    sim.pod_groups[name]["status"] = {"phase": "Failed", "failed": 1}


def _ctx(sim: Sim) -> Ctx:
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def run_pair(
    sim: Sim, source_step: str = R.STEP_SURGE, marker_step: str = R.STEP_GANG_SURGE_TARGET
) -> tuple[R.Row | None, R.Row | None, R.Row, Out, RetryBook]:
    """One pass of the pair as the world now reads; returns (source, marker, the source before, out,
    book)."""
    ctx = _ctx(sim)
    src, tgt = R.load_rows(sim.status)
    assert src.operation is not None
    assert tgt.operation is not None
    src = replace(src, operation=replace(src.operation, step=source_step))
    tgt = replace(tgt, operation=replace(tgt.operation, step=marker_step))
    by_index: dict[int, list[Any]] = {0: [], 1: []}
    for p in ctx.world.pods:
        if p.index in by_index:
            by_index[p.index].append(p)
    out = Out(ctx.now)
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    new_src, new_tgt = step_gang_surge(ctx, src, tgt, by_index[0], by_index[1], out, book)
    return new_src, new_tgt, src, out, book


def _warnings(out: Out) -> list[str]:
    return [e.message for e in out.events if e.type == "Warning"]


def test_parks_gang_surge_source_on_member_rejection() -> None:
    """Go: same file, TestReconcileGatedDeadlines_ParksGangSurgeSourceOnMemberRejection: a replacement
    member the gang scheduler rejected holds the marker (``Unschedulable``) and parks the source's clock
    (its deadline zero). Failed before (ours parked only the marker's deadline); fixed by Go's
    ``ReconcileGatedDeadlines`` / ``instanceHeldExternally`` in ``planner/gang_ops.py``
    ``_source_clock``."""
    sim = gang_surge_pair()
    cond = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": COSCHEDULING,
        "lastTransitionTime": format_time(sim.now - timedelta(minutes=1)),
    }
    _set_status(sim, LEADER, {"phase": "Pending", "conditions": [cond]})
    src, tgt, _, _, _ = run_pair(sim)
    assert tgt is not None
    assert tgt.operation is not None
    assert tgt.operation.waiting == UNSCHEDULABLE
    assert src is not None
    assert src.operation is not None
    assert src.operation.deadline is None


def test_parks_gang_terminating_surge_source() -> None:
    """Go: same file, TestReconcileGatedDeadlines_ParksGangTerminatingSurgeSource: the replacement's
    PodGroup name still being collected holds the marker (``PodGroupTerminating``) and parks the
    source's clock. Failed before; fixed with the case above."""
    sim = gang_surge_pair()
    for name in (LEADER, WORKER):
        del sim.pods[name]
    _group_terminating(sim, MARKER_GROUP)
    src, tgt, _, _, _ = run_pair(sim)
    assert tgt is not None
    assert tgt.operation is not None
    assert tgt.operation.waiting == PODGROUP_TERMINATING
    assert src is not None
    assert src.operation is not None
    assert src.operation.deadline is None


def test_source_clock_restarts_once_the_marker_is_released() -> None:
    """Go: ome-projects/ome 4dfb96b1 ``escalation/deadline.go`` ``ReconcileGatedDeadlines`` ("released
    with a parked (zero) deadline -> RESTART: now+timeout"), the other half of the two parking cases
    above: the replacement's member is placed, the marker's hold ends, and the source's parked clock
    restarts a full window from this pass. Failed before the fix (ours never parked it)."""
    sim = gang_surge_pair()
    src, tgt = R.load_rows(sim.status)
    assert src.operation is not None
    parked = replace(src, operation=replace(src.operation, deadline=None))
    sim.status["instanceStatuses"] = [parked.to_dict(), tgt.to_dict()]
    after, marker, _, _, _ = run_pair(sim)
    assert marker is not None
    assert marker.operation is not None
    assert marker.operation.waiting is None
    assert after is not None
    assert after.operation is not None
    assert after.operation.deadline == sim.now + TIMEOUT


def test_gang_reading_skips_surge_source() -> None:
    """Go: same file, TestEscalation_GangReadingSkipsSurgeSource: both halves' PodGroups are being
    collected; the source (serving its own group) takes no wait, the marker (whose members are not
    created yet) waits ``PodGroupTerminating``."""
    sim = gang_surge_pair()
    for name in (LEADER, WORKER):
        del sim.pods[name]
    _group_terminating(sim, SOURCE_GROUP)
    _group_terminating(sim, MARKER_GROUP)
    src, tgt, _, out, _ = run_pair(sim)
    assert src is not None
    assert src.operation is not None
    assert src.operation.waiting is None
    assert tgt is not None
    assert tgt.operation is not None
    assert tgt.operation.waiting == PODGROUP_TERMINATING
    assert _warnings(out) == []


SOURCE_READINGS = [
    (step, reading)
    for step in (R.STEP_SURGE, R.STEP_SURGE_DRAIN)
    for reading in (
        "the name is being collected",
        "the name is held by another controller",
        "the scheduler failed the group",
    )
]


@pytest.mark.parametrize(("step", "reading"), SOURCE_READINGS, ids=[f"{s}/{r}" for s, r in SOURCE_READINGS])
def test_gang_readings_on_a_surge_source(step: str, reading: str) -> None:
    """Go: same file, TestEscalation_GangReadingsOnASurgeSource, entries ``<step>/<reading>`` (the
    scheduler's ``Failed`` phase since goKD: ours reads it for the PodGroup reset,
    ``planner/gang.py`` ``reset_failed_pod_group``): a source is never judged on its own group, so it keeps ``Updating``,
    its step and an unparked clock, with no Warning and no block. Go passes no replacement pods; ours
    keeps the replacement's members as the pair's pass created them, because at ``SurgeDrain`` a
    replacement with no members is a lost one (``ops/update_gang.go`` ``rebuildLostReplacement``, the
    ops pass, not this escalation reading)."""
    sim = gang_surge_pair()
    if reading.startswith("the name is being collected"):
        _group_terminating(sim, SOURCE_GROUP)
    elif reading.startswith("the scheduler failed"):
        _group_failed(sim, SOURCE_GROUP)
    else:
        _group_foreign(sim, SOURCE_GROUP)
    src, _, before, out, book = run_pair(sim, source_step=step)
    assert src is not None
    assert src.operation is not None
    assert src.phase == R.UPDATING
    assert src.operation.step == step
    assert src.operation.waiting is None
    assert before.operation is not None
    assert src.operation.deadline == before.operation.deadline
    assert _warnings(out) == []
    assert book.blocks == {}


WEDGED = [
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "CrashLoopBackOff",
    "RunContainerError",
]


def _wedge(reason: str) -> tuple[R.Row | None, R.Row | None, Out]:
    sim = gang_surge_pair(stuck=timedelta(seconds=1))
    for name in (LEADER, WORKER):
        _set_status(sim, name, _waiting(sim, reason, timedelta(minutes=1)))
    src, tgt, _, out, _ = run_pair(sim)
    return src, tgt, out


@pytest.mark.parametrize("reason", WEDGED)
def test_wedged_gang_replacement_fails_the_marker(reason: str) -> None:
    """Go: same file, TestEscalation_WedgedGangReplacementFailsBothHalvesOfThePair, entry ``reason``,
    the marker's half: a replacement gang wedged in a terminal waiting reason past the stuck-pod grace
    ends the attempt: the marker is Failed with its operation kept (ours: marked
    ``GangSurgeTargetCleanup`` for the abandon) and ``lastFailure.reason`` the wedged pod's reason."""
    _, tgt, out = _wedge(reason)
    assert tgt is not None
    assert tgt.operation is not None
    assert tgt.phase == R.FAILED
    assert tgt.last_failure is not None
    assert tgt.last_failure["reason"] == reason
    (warning,) = [w for w in _warnings(out) if "escalated to Phase=Failed" in w]
    # Go TestEscalateStuckPodFailures_GangSurgeAttributedToSource: the one Warning is the source's
    # Instance (idx 0), naming the wedged replacement pod.
    assert "instance=0 escalated" in warning
    assert f'pod="{LEADER}"' in warning or f'pod="{WORKER}"' in warning


@pytest.mark.parametrize("reason", WEDGED)
def test_wedged_gang_replacement_fails_the_source(reason: str) -> None:
    """Go: same file, TestEscalation_WedgedGangReplacementFailsBothHalvesOfThePair, entry ``reason``,
    the source's half: Failed, its operation preserved for the abandon path (and, as Go's
    ``TestEscalateStuckPodFailures_GangSurgeAttributedToSource`` has it, the wedged replacement's
    diagnostics on the source). Failed before (ours kept the source Updating and abandoned from the
    marker's cleanup step on the next pass); fixed in ``planner/gang_ops.py`` ``step_gang_surge``."""
    src, _, _ = _wedge(reason)
    assert src is not None
    assert src.operation is not None
    assert src.operation.step == R.STEP_SURGE
    assert src.phase == R.FAILED
    assert src.last_failure is not None
    assert src.last_failure["reason"] == reason


def test_wedged_gang_replacement_is_abandoned_and_the_source_keeps_serving() -> None:
    """What the Failed source leads to (Go ``ops/update_gang.go`` ``abandonFailedGangSurge``, which the
    Failed-with-operation source routes into): the next passes tear the replacement down, say
    ``GangSurgeAbandoned``, and the source returns to Ready on its running revision, its pods never
    touched. Driven in the simulated world to the end."""
    sim = gang_surge_pair(stuck=timedelta(seconds=1))
    sim.behaviour["vllm:v2"] = "imagepull"
    for name in (LEADER, WORKER):
        del sim.pods[name]
    running = R.load_rows(sim.status)[0].running_revision
    d = Driver(sim)
    d.run(lambda s: [r["index"] for r in s.rows()] == [0] and s.rows()[0]["phase"] == R.READY)
    (row,) = R.load_rows(sim.status)
    assert row.running_revision == running
    assert any(e.event_reason == "GangSurgeAbandoned" for e in sim.events)
    source_pods = {"llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"}
    assert not [
        a for _, a in d.log if type(a).__name__ == "DeletePod" and getattr(a, "name", "") in source_pods
    ]


@pytest.mark.parametrize("marker_step", [R.STEP_GANG_SURGE_TARGET, R.STEP_GANG_SURGE_TARGET_CLEANUP])
def test_terminating_marker_pod_ends_nothing(marker_step: str) -> None:
    """Go: same file, TestEscalation_TerminatingMarkerPodEndsNothing, entry ``marker_step``: a marker
    member stuck Terminating (in ``ContainerCreating`` for an hour, past a one-second stuck grace) is
    not a wedge: the marker stays Creating with its operation and its deadline, and nothing is said."""
    sim = gang_surge_pair(stuck=timedelta(seconds=1))
    _set_status(sim, LEADER, _waiting(sim, "ContainerCreating", timedelta(hours=1)), deleting=True)
    del sim.pods[WORKER]
    _, tgt, _, out, _ = run_pair(sim, marker_step=marker_step)
    before = R.load_rows(sim.status)[1]
    assert tgt is not None
    assert tgt.operation is not None
    assert tgt.phase == R.CREATING
    assert before.operation is not None
    assert tgt.operation.deadline == before.operation.deadline
    assert _warnings(out) == []


def test_gang_failed_reading_leaves_the_surge_marker_untouched() -> None:
    """Go: same file, TestEscalation_GangFailedReadingLeavesTheSurgeMarkerUntouched: the replacement
    group's ``Failed`` phase is reset by the PodGroup pass (``planner/gang.py``
    ``reset_failed_pod_group``), not a verdict on the attempt: the marker stays ``Creating`` with no
    waiting token, no ``lastFailure``, its deadline running, no block and no Warning. Go's replacement
    members are Pending; ours are the ones the pair's pass created."""
    sim = gang_surge_pair()
    _group_failed(sim, MARKER_GROUP)
    _, tgt, _, out, book = run_pair(sim)
    before = R.load_rows(sim.status)[1]
    assert tgt is not None
    assert tgt.operation is not None
    assert before.operation is not None
    assert (tgt.phase, tgt.operation.waiting, tgt.last_failure) == (R.CREATING, None, None), GO
    assert tgt.operation.deadline == before.operation.deadline, GO
    assert book.blocks == {}, GO
    assert _warnings(out) == [], GO
