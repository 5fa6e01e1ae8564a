"""OME's ``workload/evidence/stuckpod_test.go``: when a parked container is stuck, and a crash loop.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/stuckpod_test.go`` @ 58a57f25 (the
version that carries ``TestPodStuckInTerminalWaiting_MeasuresFromTheWaitingEpisode`` and
``TestWaitingEpisodeStart``), over ``evidence/stuckpod.go``, the newest of its three stored versions
(the one with ``WaitingEpisodeStart``). Go's ``PodStuckInTerminalWaiting(pod, now, grace)`` is ours
:func:`omereconcile.planner.podstate.stuck_container` (the reason, and the instant the grace counts
from) with the grace compared as ``planner/steps.py`` compares it; ``FirstCrashLoopingPod`` is
:func:`~omereconcile.planner.podstate.crash_loop_failure` (a record, or None). Pods are built as the
API returns them and read through :meth:`PodView.from_dict`, as the planner reads them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import RecordEvent, WriteStatus
from omereconcile.planner import plan
from omereconcile.planner.podstate import crash_loop_failure, stuck_container, waiting_episode_start
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/evidence/stuckpod_test.go @ 58a57f25"
NOW = T0 + timedelta(hours=2)


def _pod(
    *,
    name: str = "p",
    age: timedelta | None = None,
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    deleting: bool = False,
    phase: str = "Running",
) -> PodView:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}"}
    if age is not None:
        meta["creationTimestamp"] = format_time(NOW - age)
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    status: dict[str, Any] = {"phase": phase, "containerStatuses": containers or []}
    if init:
        status["initContainerStatuses"] = init
    if conditions:
        status["conditions"] = conditions
    return PodView.from_dict({"metadata": meta, "status": status})


def _waiting(reason: str, **extra: Any) -> dict[str, Any]:
    return {"name": "main", "state": {"waiting": {"reason": reason}}, **extra}


def _stuck(pod: PodView, grace: timedelta) -> tuple[str, bool]:
    """Go ``PodStuckInTerminalWaiting``: (reason, true) once parked for the grace."""
    found = stuck_container(pod)
    if found is None or NOW - found.since < grace:
        return "", False
    return found.reason, True


TERMINAL_WAITING: list[tuple[str, PodView, bool, str]] = [
    (
        "pod with empty CreationTimestamp returns (false, '')",
        _pod(containers=[_waiting("ImagePullBackOff")]),
        False,
        "",
    ),
    (
        "within grace: not stuck",
        _pod(age=timedelta(seconds=1), containers=[_waiting("ImagePullBackOff")]),
        False,
        "",
    ),
    (
        "past grace, terminal reason: stuck",
        _pod(age=timedelta(seconds=10), containers=[_waiting("ImagePullBackOff")]),
        True,
        "ImagePullBackOff",
    ),
    (
        "past grace, transient reason: not stuck",
        _pod(age=timedelta(seconds=10), containers=[_waiting("ContainerCreating")]),
        False,
        "",
    ),
    (
        "init container stuck counts too",
        _pod(age=timedelta(seconds=10), init=[_waiting("ImagePullBackOff")]),
        True,
        "ImagePullBackOff",
    ),
    (
        "past grace, CrashLoopBackOff: stuck",
        _pod(age=timedelta(seconds=10), containers=[_waiting("CrashLoopBackOff")]),
        True,
        "CrashLoopBackOff",
    ),
    (
        "past grace, RunContainerError: stuck",
        _pod(age=timedelta(seconds=10), containers=[_waiting("RunContainerError")]),
        True,
        "RunContainerError",
    ),
    (
        "past grace, CreateContainerError: stuck",
        _pod(age=timedelta(seconds=10), containers=[_waiting("CreateContainerError")]),
        True,
        "CreateContainerError",
    ),
]


@pytest.mark.parametrize(
    ("name", "pod", "stuck", "reason"), TERMINAL_WAITING, ids=[c[0] for c in TERMINAL_WAITING]
)
def test_pod_stuck_in_terminal_waiting(name: str, pod: PodView, stuck: bool, reason: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/evidence/stuckpod_test.go @ 58a57f25,
    TestPodStuckInTerminalWaiting, entry ``name`` (grace 2 s): only a terminal kubelet waiting reason,
    regular or init, past the grace; never a pod without a creation stamp. (The "nil pod" entry has no
    counterpart: the planner's pod lists hold no null.)"""
    assert _stuck(pod, timedelta(seconds=2)) == (reason, stuck)


def test_first_stuck_pod_for_instance_skips_deleting_pods() -> None:
    """Go: same file, TestFirstStuckPodForInstance_SkipsDeletingPods: a pod being deleted is no
    evidence (ours: ``stuck_container`` reads none), one with no waiting container neither; the first
    stuck pod is named with its reason; with none stuck there is none."""
    grace = timedelta(seconds=2)
    pods = [
        _pod(
            name="deleting",
            age=timedelta(seconds=10),
            deleting=True,
            containers=[_waiting("ImagePullBackOff")],
        ),
        _pod(name="ok", age=timedelta(seconds=10), containers=[{"name": "main", "state": {}}]),
        _pod(name="stuck", age=timedelta(seconds=10), containers=[_waiting("ImagePullBackOff")]),
    ]
    first = next(((p.name, r) for p in pods for r, s in [_stuck(p, grace)] if s), None)
    assert first == ("stuck", "ImagePullBackOff")
    assert not any(_stuck(p, grace)[1] for p in pods[1:2])


CRASHED = {"terminated": {"exitCode": 1, "reason": "Error"}}
CLEAN = {"terminated": {"exitCode": 0, "reason": "Completed"}}
RUNNING = {"running": {}}
CRASH_LOOP: list[tuple[str, dict[str, Any], bool]] = [
    ("parked in CrashLoopBackOff", _waiting("CrashLoopBackOff"), True),
    (
        "running between two crashes",
        {"name": "main", "state": RUNNING, "restartCount": 2, "lastState": CRASHED},
        True,
    ),
    ("exited non-zero, restart pending", {"name": "main", "state": CRASHED}, True),
    (
        "restarted and ready again",
        {"name": "main", "ready": True, "state": RUNNING, "restartCount": 2, "lastState": CRASHED},
        False,
    ),
    ("clean restart", {"name": "main", "state": RUNNING, "restartCount": 1, "lastState": CLEAN}, False),
    ("running, never restarted", {"name": "main", "state": RUNNING}, False),
    ("waiting on an image pull", _waiting("ImagePullBackOff"), False),
]


@pytest.mark.parametrize(("name", "status", "want"), CRASH_LOOP, ids=[c[0] for c in CRASH_LOOP])
def test_first_crash_looping_pod_reads_both_faces(name: str, status: dict[str, Any], want: bool) -> None:
    """Go: same file, TestFirstCrashLoopingPod_ReadsBothFacesOfTheLoop, entry ``name``: parked in
    CrashLoopBackOff, or running again after a non-zero exit, or just exited non-zero, is a crash
    loop; recovered, clean or never-restarted containers and an image pull are not. Ours records it
    under the reason ``CrashLoopBackOff`` or the exit's own (``Error``), as ``PodTerminationWithReason``."""
    record = crash_loop_failure([_pod(containers=[status])], NOW)
    assert (record is not None) is want


def test_a_pod_on_its_way_out_is_no_crash_loop_evidence() -> None:
    """Go: same function, its last assertion: a deleting pod parked in CrashLoopBackOff is not the
    attempt's evidence. (Its other trailing assertion, a crash on another revision, is scoped by the
    caller here: the planner hands ``crash_loop_failure`` the attempt's own pods.)"""
    assert crash_loop_failure([_pod(deleting=True, containers=[_waiting("CrashLoopBackOff")])], NOW) is None


def _served_then_parked(reason: str, broke_ago: timedelta, age: timedelta = timedelta(hours=1)) -> PodView:
    """Go's ``servedThenParkedPod``: containers ready until ``broke_ago``, then parked in ``reason``."""
    broke = format_time(NOW - broke_ago)
    long_ago = format_time(NOW - timedelta(hours=1))
    return _pod(
        name="engine-0-default-0",
        age=age,
        conditions=[
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": long_ago},
            {"type": "ContainersReady", "status": "False", "lastTransitionTime": broke},
            {"type": "Ready", "status": "False", "lastTransitionTime": broke},
        ],
        containers=[
            {
                "name": "main",
                "restartCount": 1,
                "state": {"waiting": {"reason": reason}},
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": broke}},
            }
        ],
    )


EPISODE: list[tuple[str, PodView, bool]] = [
    ("old pod, broke five seconds ago", _served_then_parked("CrashLoopBackOff", timedelta(seconds=5)), False),
    ("old pod, broke at the grace", _served_then_parked("CrashLoopBackOff", timedelta(seconds=30)), True),
    ("old pod, broke before the grace", _served_then_parked("CrashLoopBackOff", timedelta(minutes=2)), True),
    (
        "old pod, never ready",
        _pod(
            age=timedelta(hours=1),
            conditions=[
                {
                    "type": "ContainersReady",
                    "status": "False",
                    "lastTransitionTime": format_time(NOW - timedelta(hours=1)),
                }
            ],
            containers=[_waiting("CrashLoopBackOff")],
        ),
        True,
    ),
    (
        "old pod, no conditions reported",
        _pod(age=timedelta(hours=1), containers=[_waiting("ImagePullBackOff")]),
        True,
    ),
    (
        "young pod, broke five seconds ago",
        _served_then_parked("CrashLoopBackOff", timedelta(seconds=5), age=timedelta(seconds=10)),
        False,
    ),
]


@pytest.mark.parametrize(("name", "pod", "stuck"), EPISODE, ids=[c[0] for c in EPISODE])
def test_pod_stuck_measures_from_the_waiting_episode(name: str, pod: PodView, stuck: bool) -> None:
    """Go: same file, TestPodStuckInTerminalWaiting_MeasuresFromTheWaitingEpisode, entry ``name``
    (grace 30 s), its ``stuck`` column: a pod that served and then broke is stuck only once the grace
    has passed since the break. "Old pod, broke five seconds ago" failed before this port (ours
    counted from the pod's creation, so it escalated on the first pass that saw the crash). The
    ``wedged`` and ``grace left`` columns are the repair's reading (``PodWedgedPastGrace``,
    ``TerminalWaitingGraceLeft``), which the planner does not have."""
    assert _stuck(pod, timedelta(seconds=30))[1] is stuck


def test_waiting_episode_start() -> None:
    """Go: same file, TestWaitingEpisodeStart: the break of a pod that served, the creation of one
    that never did, the creation when its containers are ready, none without a creation stamp."""
    served = _served_then_parked("CrashLoopBackOff", timedelta(seconds=5))
    assert waiting_episode_start(served) == NOW - timedelta(seconds=5)
    assert waiting_episode_start(_pod(age=timedelta(minutes=1))) == NOW - timedelta(minutes=1)
    ready = _pod(
        age=timedelta(hours=1),
        conditions=[
            {
                "type": "ContainersReady",
                "status": "True",
                "lastTransitionTime": format_time(NOW - timedelta(seconds=5)),
            }
        ],
    )
    assert waiting_episode_start(ready) == NOW - timedelta(hours=1)
    assert waiting_episode_start(_pod()) is None


GO_NEWEST = (
    "ome-projects/ome pkg/controller/v1beta1/workload/evidence/stuckpod_test.go, the 24,811-character "
    "stored version (58a57f25's 17,404 plus four tests; its commit is not named by the index)"
)


def _wedged_for(age: timedelta) -> PodView:
    """Go's ``wedgedFor`` in ``TestPodStuckInTerminalWaitingSince``: created an hour ago, ContainersReady
    False since ``age`` ago, its container parked in CrashLoopBackOff."""
    return _pod(
        age=timedelta(hours=1),
        containers=[_waiting("CrashLoopBackOff")],
        conditions=[
            {"type": "ContainersReady", "status": "False", "lastTransitionTime": format_time(NOW - age)}
        ],
    )


@pytest.mark.parametrize(
    ("name", "pod", "stuck"),
    [
        (
            "episode younger than the floor: measured from the episode",
            _wedged_for(timedelta(seconds=5)),
            False,
        ),
        ("zero floor: measured from the episode", _wedged_for(timedelta(minutes=10)), True),
    ],
)
def test_pod_stuck_since_a_floor_that_does_not_move_the_episode(name: str, pod: PodView, stuck: bool) -> None:
    """``TestPodStuckInTerminalWaitingSince``, the 2 of its 4 entries where the floor leaves the
    measure at the waiting episode (Go's effective start is the later of the episode and the floor):
    ours always measures from the episode, the grace one minute. The 2 entries where an older episode
    is measured from a later floor are not ported: Go's callers of ``…Since`` (which instant an
    attempt passes as the floor) are not in the index."""
    assert _stuck(pod, timedelta(minutes=1)) == (("CrashLoopBackOff", True) if stuck else ("", False)), (
        f"{GO_NEWEST}: {name}"
    )


# TestAttemptStuckPods_RestartIsJudgedOnItsOwnIncarnation (the newest stored version, 24,811
# characters): Go asks ``evidence.AttemptStuckPods`` which pods an attempt is judged on; ours scopes
# them where the gang's attempt reads its evidence (``planner/gang.py`` ``bring_up_gang``: the members at
# the row's incarnation). One pure planner pass over a leader+worker Instance whose row is journaled
# ``Restarting`` at incarnation 2 (a Restart at ``CreatePods`` with an hour of deadline left), its
# worker wedged in ``CrashLoopBackOff`` for ten minutes (past the one-minute stuck-pod grace).
NEWEST = (
    "ome-projects/ome pkg/controller/v1beta1/workload/evidence/stuckpod_test.go (newest stored, 24,811 chars)"
)


def _restart_pass(worker_incarnation: int | None) -> tuple[dict[str, Any], list[str]]:
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.advance(3600)
    world = sim.observe()
    now = world.now

    def labelled(pod: PodView, incarnation: int | None) -> PodView:
        labels = dict(pod.labels)
        labels.pop(c.LABEL_INSTANCE_INCARNATION, None)
        if incarnation is not None:
            labels[c.LABEL_INSTANCE_INCARNATION] = str(incarnation)
        return replace(pod, labels=labels)

    def wedged(pod: PodView) -> PodView:
        broke = now - timedelta(minutes=10)
        return replace(
            pod,
            containers=tuple(
                replace(ct, waiting_reason="CrashLoopBackOff", waiting=True, running=False, ready=False)
                for ct in pod.containers
            ),
            conditions=tuple(
                replace(cd, status="False", last_transition_time=broke)
                if cd.type in ("ContainersReady", "Ready")
                else cd
                for cd in pod.conditions
            ),
        )

    leader = next(p for p in world.pods if "-leader-" in p.name)
    worker = next(p for p in world.pods if "-worker-" in p.name)
    pods = (labelled(leader, 2), wedged(labelled(worker, worker_incarnation)))
    row = dict(world.replica.status["instanceStatuses"][0])
    row.update(
        phase="Restarting",
        incarnation=2,
        operation={
            "id": "restart-0-1",
            "type": "Restart",
            "step": "CreatePods",
            "targetRevision": row["runningRevision"],
            "startedAt": format_time(now - timedelta(seconds=30)),
            "deadline": format_time(now + timedelta(hours=1)),
        },
    )
    status = {**world.replica.status, "instanceStatuses": [row]}
    world = replace(world, pods=pods, replica=replace(world.replica, status=status))
    out = plan(world)
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    after = written[-1].status["instanceStatuses"][0] if written else row
    return dict(after), [a.event_reason for a in out.actions if isinstance(a, RecordEvent)]


def test_attempt_stuck_pods_restart_is_judged_on_its_own_incarnation() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/evidence/stuckpod_test.go (the newest
    stored version), TestAttemptStuckPods_RestartIsJudgedOnItsOwnIncarnation, its Restart half: a
    Restart at incarnation 2 is judged on the rebuilt pods, never on the set of incarnation 1 it drains
    (a wedge there is the repair's reason, not its failure). The old worker wedged past the grace
    leaves the Restart running; the rebuilt worker wedged the same way fails it (``InstanceFailed``,
    ``CrashLoopBackOff`` on ``lastFailure``)."""
    row, events = _restart_pass(1)
    assert row["phase"] == "Restarting", (NEWEST, row)
    assert "InstanceFailed" not in events, NEWEST
    row, events = _restart_pass(2)
    assert row["phase"] == "Failed", (NEWEST, row)
    assert row["lastFailure"]["reason"] == "CrashLoopBackOff", NEWEST
    assert "InstanceFailed" in events, NEWEST


def test_attempt_stuck_pods_unlabelled_pod_stays_in_scope() -> None:
    """Go: same test, its "unlabelled" pod: a pod that carries no incarnation label stays in a
    Restart's scope, so wedged past the grace it fails the Restart. Failed before (ours dropped the pod
    from the Instance, so nothing judged it); passes by Go's rule (goO2): a Restart that finds such a
    pod refuses to go on (``ops/restart.go`` @ ae683e3f ``Restart``, ``FoundOrphan``) and its attempt
    is judged with the pod in scope (``evidence.AttemptStuckPods``): ``planner/instances.py``
    ``_refuse_orphans``."""
    row, events = _restart_pass(None)
    assert row["phase"] == "Failed", (NEWEST, row)
    assert "InstanceFailed" in events, NEWEST


def test_a_restart_warns_found_orphan_and_leaves_the_pod() -> None:
    """Not a Go entry (not counted): the rule of ``ops/restart.go`` @ ae683e3f ``Restart`` read whole
    where it meets an "unknown" pod of ``query.PartitionPodsByIncarnation``: one ``FoundOrphan``
    Warning per such pod, in Go's words, and nothing deleted or created while it stands (here the
    unlabelled worker is healthy, so the Restart goes on running)."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    world = sim.observe()
    worker = next(p for p in world.pods if "-worker-" in p.name)
    labels = {k: v for k, v in worker.labels.items() if k != c.LABEL_INSTANCE_INCARNATION}
    pods = tuple(replace(p, labels=labels) if p is worker else p for p in world.pods)
    row = dict(world.replica.status["instanceStatuses"][0])
    now = world.now
    row.update(
        phase="Restarting",
        incarnation=2,
        operation={
            "id": "restart-0-1",
            "type": "Restart",
            "step": "Drain",
            "targetRevision": row["runningRevision"],
            "startedAt": format_time(now - timedelta(seconds=30)),
            "deadline": format_time(now + timedelta(hours=1)),
        },
    )
    status = {**world.replica.status, "instanceStatuses": [row]}
    out = plan(replace(world, pods=pods, replica=replace(world.replica, status=status)))
    warnings = [a for a in out.actions if isinstance(a, RecordEvent) and a.event_reason == "FoundOrphan"]
    assert [(w.type, w.message) for w in warnings] == [
        (
            "Warning",
            f"OMENative component=engine instance=0 found orphan pod llama-demo/{worker.name} without "
            "ome.io/instance-incarnation; refusing to delete",
        )
    ]
    assert not [a for a in out.actions if type(a).__name__ in ("DeletePod", "CreatePod")]
