"""OME's ``workload/ops/terminal_recycle_external_test.go``: a dead pod holding its name, recycled.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go`` @ 58a57f25
(38,263 characters, read whole: the largest of its four stored versions; ``terminal_recycle_test.go`` @
ae683e3f is its early text), over ``ops/terminal_recycle.go`` ``recycleTerminalPods`` (ours:
``planner/steps.py`` ``recycle_terminal``). By 58a57f25 the file also carries
``terminal_pods_test.go``'s tests (counted in that row). Go runs ``Create``/``Restart`` on a fake
client seeded with a row and a dead pod; ours runs planner passes over the simulated world with the
pod's phase replaced, or one pure pass (``planner.plan``) over a seeded observation.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import DeletePod, Plan, WriteStatus
from omereconcile.planner import plan
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import gang_names, lost_gang_member
from omereconcile.settings import RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @ 58a57f25"
POD0 = "llama-pool-engine-0-default-0"


def _kill(sim: Sim, name: str, phase: str = "Failed", reason: str = "UnexpectedAdmissionError") -> None:
    """Go's ``rejectedPod`` / ``succeededPod``: the pod ended, its conditions gone."""
    pod = sim.pods[name]
    pod.behaviour = "never"
    st = pod.obj["status"]
    st.update(phase=phase, reason=reason if phase == "Failed" else "Completed")
    st["conditions"] = []
    st["containerStatuses"] = []


def _creating_sim(workers: int = 0) -> tuple[Sim, Driver]:
    """A replica whose first pod the kubelet refuses at admission, observed by the Create attempt."""
    sim = Sim()
    sim.workers = workers
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    for _ in range(10):
        driver.one_pass()
        if POD0 in sim.pods or "llama-pool-engine-0-leader-0" in sim.pods:
            break
        sim.advance(0.5)
    return sim, driver


def test_create_recycles_terminal_pod_then_recreates() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_RecyclesTerminalPodThenRecreates: the Create attempt deletes the dead occupant
    of its name (nothing created that pass), counts the recycle (``retryCount`` 1), keeps the pod's
    admission reason on ``lastFailure`` and records ``TerminalPodRecycled`` naming the pod; the name
    is rebuilt once the delete is observed, and that create is not another recycle."""
    sim, driver = _creating_sim()
    uid = sim.pods[POD0].obj["metadata"]["uid"]
    _kill(sim, POD0)
    sim.advance(0.5)
    p = driver.one_pass()
    assert any(isinstance(a, DeletePod) and a.name == POD0 for a in p.actions), GO
    assert not any(type(a).__name__ == "CreatePod" for a in p.actions), GO
    row = sim.rows()[0]
    op = row["operation"]
    assert (row["phase"], op["type"], op.get("retryCount")) == ("Creating", "Create", 1), (GO, row)
    assert (row["lastFailure"]["podName"], row["lastFailure"]["reason"]) == (
        POD0,
        "UnexpectedAdmissionError",
    ), GO
    assert any(e.event_reason == "TerminalPodRecycled" and POD0 in e.message for e in sim.events), GO
    driver.run(lambda s: POD0 in s.pods and s.pods[POD0].obj["metadata"]["uid"] != uid)
    assert sim.rows()[0]["operation"].get("retryCount") == 1, GO


def _seeded(retry_count: int, since: float, deadline_in: float, phase: str = "Failed") -> tuple[World, Sim]:
    """Go's ``creatingStatusWithRecycles``: a Creating row whose attempt recycled ``retry_count`` times,
    the last ``since`` seconds ago, its deadline ``deadline_in`` seconds away; a dead pod holding the
    name."""
    sim, _ = _creating_sim()
    _kill(sim, POD0, phase)
    world = sim.observe()
    now = world.now.replace(microsecond=0)
    world = replace(world, now=now)
    status = dict(world.replica.status)
    row = dict(status["instanceStatuses"][0])
    row.update(
        phase="Creating",
        operation={
            "id": "create-0-1",
            "type": "Create",
            "step": "CreatePods",
            "targetRevision": row.get("targetRevision") or row.get("runningRevision"),
            "retryCount": retry_count,
            "startedAt": format_time(now - timedelta(hours=1)),
            "lastProgressAt": format_time(now - timedelta(seconds=since)),
            "deadline": format_time(now + timedelta(seconds=deadline_in)),
        },
    )
    if not retry_count:
        row["operation"].pop("retryCount")
    status["instanceStatuses"] = [row]
    return replace(world, replica=replace(world.replica, status=status)), sim


def _recycled(out: Plan) -> bool:
    return any(isinstance(a, DeletePod) and a.name == POD0 for a in out.actions)


def _op_after(out: Plan, world: World) -> dict[str, Any]:
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    rows = (written[-1].status if written else world.replica.status)["instanceStatuses"]
    return dict(rows[0].get("operation") or {})


LADDER = RetryPolicy(
    max_attempts=5, initial_delay=timedelta(seconds=20), max_delay=timedelta(minutes=1), multiplier=2
)


@pytest.mark.parametrize(
    ("recycles", "delay"),
    [
        pytest.param(1, 20, id="after 1 recycles"),
        pytest.param(2, 40, id="after 2 recycles"),
        pytest.param(3, 60, id="after 3 recycles"),
        pytest.param(4, 60, id="after 4 recycles"),
    ],
)
def test_create_recycle_paced_by_retry_ladder(recycles: int, delay: int) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_RecyclePacedByRetryLadder (each entry): repeated recycles in one attempt follow
    the update retry ladder (20 s x 2^(n-1), capped at 1 min) from the previous recycle: one second
    early nothing is recycled and ``retryCount`` stays; at the delay the pod is recycled, the count
    moves to n+1 and ``lastProgressAt`` anchors the next delay."""
    early, _ = _seeded(recycles, delay - 1, 3600)
    early = replace(early, settings=replace(early.settings, update_retry=LADDER))
    out = plan(early)
    assert not _recycled(out), GO
    assert _op_after(out, early).get("retryCount") == recycles, GO
    due, _ = _seeded(recycles, delay, 3600)
    due = replace(due, settings=replace(due.settings, update_retry=LADDER))
    out = plan(due)
    assert _recycled(out), GO
    op = _op_after(out, due)
    assert op.get("retryCount") == recycles + 1, GO
    assert op.get("lastProgressAt") == format_time(due.now), GO


def test_create_recycle_without_policy_is_immediate() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_RecycleWithoutPolicyIsImmediate: with no retry policy there is no ladder: the
    sixth recycle happens on the next pass (``retryCount`` 6)."""
    world, _ = _seeded(5, 0, 3600)
    world = replace(world, settings=replace(world.settings, update_retry=None))
    out = plan(world)
    assert _recycled(out), GO
    assert _op_after(out, world).get("retryCount") == 6, GO


def test_create_recycle_refused_past_deadline() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_RecycleRefusedPastDeadline: past the attempt's deadline nothing is recycled
    (escalation owns the attempt) and ``retryCount`` stays 0."""
    world, _ = _seeded(0, 3600, -1)
    out = plan(world)
    assert not _recycled(out), GO
    assert not _op_after(out, world).get("retryCount"), GO


@pytest.mark.parametrize(
    "phase", [pytest.param("Failed", id="failed pod"), pytest.param("Succeeded", id="succeeded pod")]
)
def test_create_fresh_start_recycles_terminal_pod_on_failed_row(phase: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_FreshStartRecyclesTerminalPodOnFailedRow (each subtest): a Failed row with no
    operation is a fresh start for Create: the dead pod holding its name is recycled, the row is
    committed as a Create attempt, and the next pass rebuilds the name with a live pod."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    uid = sim.pods[POD0].obj["metadata"]["uid"]
    _kill(sim, POD0, phase)
    assert sim.replica is not None
    row = sim.replica["status"]["instanceStatuses"][0]
    row["phase"] = "Failed"
    row.pop("operation", None)
    p = driver.one_pass()
    assert any(isinstance(a, DeletePod) and a.name == POD0 for a in p.actions), (GO, p.actions)
    row = sim.rows()[0]
    assert (row["phase"], (row.get("operation") or {}).get("type")) == ("Creating", "Create"), (GO, row)
    driver.run(lambda s: POD0 in s.pods and s.pods[POD0].obj["metadata"]["uid"] != uid)
    assert sim.pods[POD0].obj["status"].get("phase") != phase, GO


def test_create_recycles_whole_terminal_gang_together() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_RecyclesWholeTerminalGangTogether: a gang whose every member died is total
    loss for Create: both members are deleted in one pass (``retryCount`` 1, the incarnation kept) and
    recreated together afterwards, fresh, at the same incarnation."""
    sim, driver = _creating_sim(workers=1)
    members = ["llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"]
    for _ in range(10):
        if all(m in sim.pods for m in members):
            break
        sim.advance(0.5)
        driver.one_pass()
    incarnation = sim.rows()[0]["incarnation"]
    for m in members:
        _kill(sim, m)
    sim.advance(0.5)
    p = driver.one_pass()
    deleted = sorted(a.name for a in p.actions if isinstance(a, DeletePod))
    assert deleted == members, (GO, deleted)
    row = sim.rows()[0]
    assert ((row.get("operation") or {}).get("retryCount"), row["incarnation"]) == (1, incarnation), (GO, row)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    for m in members:
        assert sim.pods[m].obj["metadata"]["labels"]["ome.io/instance-incarnation"] == str(incarnation), GO


def _restarting_with_dead_pod(phase: str, reason: str) -> tuple[Sim, Driver, str]:
    """Go's ``assertRestartRecyclesDeadPod`` fixture: a Restarting row at incarnation 2 whose Restart
    operation (step ``Drain``) already replaced the old pod; the new-incarnation pod holding the name
    died. Returns the sim, its driver and the dead pod's uid."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    assert sim.replica is not None
    now = format_time(sim.now)
    row = sim.replica["status"]["instanceStatuses"][0]
    row.update(
        incarnation=2,
        phase="Restarting",
        operation={
            "id": "restart-0-1",
            "type": "Restart",
            "step": "Drain",
            "reason": "x",
            "targetRevision": row.get("runningRevision"),
            "startedAt": now,
            "lastProgressAt": now,
            "deadline": format_time(sim.now + timedelta(hours=1)),
        },
    )
    sim.pods[POD0].obj["metadata"]["labels"]["ome.io/instance-incarnation"] = "2"
    _kill(sim, POD0, phase, reason)
    return sim, driver, sim.pods[POD0].obj["metadata"]["uid"]


@pytest.mark.parametrize(
    ("phase", "reason"),
    [
        pytest.param("Failed", "UnexpectedAdmissionError", id="TerminalNewIncarnationPod"),
        pytest.param("Succeeded", "", id="SucceededNewIncarnationPod"),
        pytest.param("Failed", "Evicted", id="EvictedNewIncarnationPod"),
    ],
)
def test_restart_recycles_dead_new_incarnation_pod(phase: str, reason: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestRestart_RecyclesTerminalNewIncarnationPod, TestRestart_RecyclesSucceededNewIncarnationPod
    and TestRestart_RecyclesEvictedNewIncarnationPod (``assertRestartRecyclesDeadPod``): Restart's
    rebuild deletes the dead new-incarnation pod and stays in flight (Restarting, incarnation 2, the
    Restart operation with ``retryCount`` 1; a refused pod's reason on ``lastFailure``), and the name
    is rebuilt with one live pod at the same incarnation."""
    sim, driver, uid = _restarting_with_dead_pod(phase, reason)
    p = driver.one_pass()
    assert any(isinstance(a, DeletePod) and a.name == POD0 for a in p.actions), (GO, p.actions)
    row = sim.rows()[0]
    op = row.get("operation") or {}
    assert (row["phase"], row["incarnation"], op.get("type"), op.get("retryCount")) == (
        "Restarting",
        2,
        "Restart",
        1,
    ), (GO, row)
    if reason == "UnexpectedAdmissionError":
        assert (row.get("lastFailure") or {}).get("reason") == reason, (GO, row)
    driver.run(lambda s: POD0 in s.pods and s.pods[POD0].obj["metadata"]["uid"] != uid)
    pod = sim.pods[POD0].obj
    assert pod["metadata"]["labels"]["ome.io/instance-incarnation"] == "2", GO
    assert pod["status"].get("phase") not in ("Failed", "Succeeded"), GO


def _after(world: World, out: Plan) -> World:
    """The world the next pass reads when the pass's status write landed and the pods did not move
    (the same dead object observed again)."""
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    if not written:
        return world
    return replace(world, replica=replace(world.replica, status=written[-1].status))


@pytest.mark.parametrize(
    ("phase", "reason"),
    [
        pytest.param("Failed", "UnexpectedAdmissionError", id="failed pod"),
        pytest.param("Succeeded", "", id="succeeded pod"),
    ],
)
def test_restart_terminal_pod_reobserved_keeps_phase_and_step(phase: str, reason: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestRestart_TerminalPodReobservedKeepsPhaseAndStep (each subtest): the recycle writes no
    phase and no step, so the same dead pod observed again after it lands on a row still Restarting,
    the same attempt at the same step and incarnation, not finished."""
    sim, _, _ = _restarting_with_dead_pod(phase, reason)
    world = sim.observe()
    first = plan(world)
    assert _recycled(first), GO
    recycled = _after(world, first)
    again = _after(recycled, plan(recycled))
    before = recycled.replica.status["instanceStatuses"][0]
    after = again.replica.status["instanceStatuses"][0]
    assert after["phase"] == before["phase"] == "Restarting", (GO, after)
    assert (after["operation"]["id"], after["operation"]["step"]) == (
        before["operation"]["id"],
        before["operation"]["step"],
    ), (GO, after)
    assert after["incarnation"] == before["incarnation"] == 2, GO


@pytest.mark.parametrize(
    "phase", [pytest.param("Failed", id="failed pod"), pytest.param("Succeeded", id="succeeded pod")]
)
def test_create_terminal_pod_reobserved_after_the_fresh_start_writes_no_phase(phase: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_TerminalPodReobservedAfterTheFreshStartWritesNoPhase (each subtest): once the
    fresh start has claimed a Failed row for Create, the same dead pod observed again writes no phase:
    the row stays Creating under its Create attempt and ``lastFailure`` is unchanged."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    _kill(sim, POD0, phase)
    assert sim.replica is not None
    row = sim.replica["status"]["instanceStatuses"][0]
    row["phase"] = "Failed"
    row.pop("operation", None)
    world = sim.observe()
    claimed = _after(world, plan(world))
    c_row = claimed.replica.status["instanceStatuses"][0]
    assert (c_row["phase"], (c_row.get("operation") or {}).get("type")) == ("Creating", "Create"), (GO, c_row)
    again = _after(claimed, plan(claimed))
    a_row = again.replica.status["instanceStatuses"][0]
    assert (a_row["phase"], (a_row.get("operation") or {}).get("type")) == ("Creating", "Create"), (GO, a_row)
    assert a_row.get("lastFailure") == c_row.get("lastFailure"), (GO, a_row, c_row)


def test_create_recycles_succeeded_terminal_pod() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_RecyclesSucceededTerminalPod: a Succeeded pod holding the name is recycled
    like a Failed one (deleted, nothing created that pass, the row Creating under its Create attempt at
    ``retryCount`` 1); the same dead pod observed again ten seconds later, inside the ladder's first
    delay (20 s), is neither recycled nor replaced and the count stays 1. Ours: one pure pass over the
    simulated world's observation, then one over the world its status write left, the pod unmoved."""
    sim, _ = _creating_sim()
    _kill(sim, POD0, "Succeeded")
    world = sim.observe()
    world = replace(world, settings=replace(world.settings, update_retry=LADDER))
    first = plan(world)
    assert _recycled(first), (GO, first.actions)
    assert not any(type(a).__name__ == "CreatePod" for a in first.actions), GO
    row = _after(world, first).replica.status["instanceStatuses"][0]
    op = row.get("operation") or {}
    assert (row["phase"], op.get("type"), op.get("retryCount")) == ("Creating", "Create", 1), (GO, row)
    later = _after(world, first)
    later = replace(later, now=later.now + timedelta(seconds=10))
    second = plan(later)
    assert not _recycled(second), (GO, second.actions)
    assert not any(type(a).__name__ == "CreatePod" for a in second.actions), GO
    assert _op_after(second, later).get("retryCount") == 1, GO


@pytest.mark.parametrize(
    "unusable",
    [
        pytest.param("foreign", id="PodGroup name owned by another controller"),
        pytest.param("terminating", id="PodGroup of ours terminating"),
        pytest.param("failed", id="PodGroup of ours the gang scheduler marked Failed"),
    ],
)
def test_create_terminal_member_recycled_while_gang_blocked(unusable: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestCreate_TerminalMemberRecycledWhileGangBlocked: a gang whose PodGroup name is unusable
    withholds new members, but a dead member still holding its stable name is deleted regardless (the
    group's phase derives from its members; nothing else in the pass would remove it), and nothing is
    created against the unusable name. Go seeds a ``GangStateFailed`` observation (``BlocksPods``), which
    ours reads since goW's PodGroup reset (a ``Failed`` group of ours withholds members, and a dead
    member on its name holds the reset back); the other states that withhold members here are the two
    other ``_ensure_pod_group`` reports: a group of that name controlled by another owner
    (``PodGroupNameInUse``) and a group of ours still terminating (``PodGroupTerminating``). All three
    are one case of Go's."""
    sim, driver = _creating_sim(workers=1)
    members = ["llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"]
    for _ in range(10):
        if all(m in sim.pods for m in members):
            break
        sim.advance(0.5)
        driver.one_pass()
    group = sim.pod_groups["llama-pool-engine-0"]
    if unusable == "foreign":
        group["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": "other",
                "uid": "someone-else",
                "controller": True,
            }
        ]
    elif unusable == "failed":
        group["status"] = {"phase": "Failed", "failed": 2}
    else:
        group["metadata"]["deletionTimestamp"] = format_time(sim.now)
    for m in members:
        _kill(sim, m)
    world = sim.observe()
    out = plan(world)
    deleted = sorted(a.name for a in out.actions if isinstance(a, DeletePod))
    assert deleted == members, (GO, out.actions)
    assert not any(type(a).__name__ == "CreatePod" for a in out.actions), (GO, out.actions)
    gone = replace(_after(world, out), pods=())
    again = plan(gone)
    assert not any(type(a).__name__ == "CreatePod" for a in again.actions), (GO, again.actions)


def _pending_ctx_and_row(workers: int) -> tuple[Ctx, R.Row]:
    """Go's ``pending(podCount)``: a Pending row (a demoted Ready row) whose published ``podCount`` is
    the gang's size, running and target the current revision, no operation."""
    sim = Sim(workers=workers)
    spec: dict[str, Any] = {}
    if not workers:
        spec["lifecycle"] = {"restartPolicy": "RecreateInstanceOnPodRestart"}
    sim.apply_replica(base_replica(replicas=1, **spec))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    assert ctx.restart_policy == "RecreateInstanceOnPodRestart"
    row = R.Row(
        index=0,
        phase=R.PENDING,
        pod_count=workers + 1,
        running_revision=ctx.target,
        target_revision=ctx.target,
    )
    return ctx, row


@pytest.mark.parametrize(
    ("phases", "want"),
    [
        pytest.param(("Failed", "Running"), True, id="failed member leaves a survivor"),
        pytest.param(("Succeeded", "Running"), True, id="succeeded member leaves a survivor"),
        pytest.param(("Failed",), False, id="single-pod row has no survivor"),
    ],
)
def test_detect_restart_trigger_pending_row_with_terminal_member(phases: tuple[str, ...], want: bool) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_external_test.go @
    58a57f25, TestDetectRestartTrigger_PendingRowWithTerminalMember (each subtest): a Pending row is a
    demoted Ready row, its recorded ``podCount`` the proof the gang was once complete, so a terminal
    member with a live survivor is member loss and the rebuild fires ("gang member lost"); a
    single-pod Pending row has no survivor and stays with Create. Go asks
    ``DetectRestartTriggerWithPods``; ours the below-Ready branch, ``planner/gang.py``
    ``lost_gang_member``, over the simulated world's pods with their phases replaced."""
    ctx, row = _pending_ctx_and_row(workers=len(phases) - 1)
    pods = {p.name: p for p in ctx.world.pods}
    names = gang_names(ctx, 0) if len(phases) > 1 else [POD0]
    views = [replace(pods[n], phase=ph) for n, ph in zip(names, phases, strict=True)]
    reason = lost_gang_member(ctx, row, views)
    if want:
        assert reason is not None, GO
        assert "gang member lost" in reason, (GO, reason)
    else:
        assert reason is None, (GO, reason)
