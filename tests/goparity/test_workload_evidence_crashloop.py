"""OME's ``workload/evidence/crashloop_test.go``: the roll's ordering reading of a pod set and the
crash-loop wedge of an operation-free ``Ready`` row.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/evidence/crashloop_test.go``, the newest of its
three stored versions (27,302 characters; the index names no commit for it: 4dfb96b1 holds the first,
4,673 characters, and a second holds 15,663), against the newest stored ``crashloop.go`` (10,186
characters, also unnamed; ``CrashLoopWedge``, ``CrashLoopWedgedPodOn``, ``PodSetServesNothing``,
``PodSetOutOfRotation``, ``PodSetDarkOnReadiness``, ``PodSetUnavailableOnParkedMember``,
``podOnRevision``, read whole).

Mapped: ``TestPodSetOutOfRotation`` (11 entries), Go's ``PodSetOutOfRotation``, on ours
``planner/rollout.py`` ``_out_of_rotation`` for a row that is not ``Failed`` (the update order puts
such Instances first, Go's ``OutOfRotation`` mark of ``planUpdateSelection``). The test's companion
assertion (a set that serves nothing by ``PodSetServesNothing`` is out of rotation) has no counterpart:
ours has no such reading. Mapped since goJ (24), with the op-less crash-loop repair: the wedge of an
operation-free ``Ready`` row and its grace left (``TestCrashLoopWedge_*`` but its "no row at all" entry
and ``UnreadyPastTheGraceIsAWedge``, ``TestCrashLoopWedgedPodOn_*``, ``TestTerminalWaitingGraceLeft``), on
ours ``planner/restart.py`` ``crash_loop_wedged_pod_on`` and ``terminal_waiting_grace_left``. Which other
cases have none, and why, is in ``docs/goparity.md``.

Pods are built as the API returns them, with the shapes of Go's ``helpers_external_test.go``
(``servingPod``, ``runningNotReadyPod``, 4dfb96b1) and the test's own ``crashLoopPod``. The newest
helper file, which defines ``unreadyAfterServingPod``, is not stored: its shape is read from the tests'
words — a promoted pod (serving gate True, as a promoted break leaves it) whose containers stopped
being ready at ``since``, so Ready is False.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.restart import crash_loop_wedged_pod_on, terminal_waiting_grace_left, wedge_reason
from omereconcile.planner.rollout import _out_of_rotation
from omereconcile.planner.rows import Operation, Row
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision, PodView, format_time
from omerender import constants as c

GO = (
    "ome-projects/ome pkg/controller/v1beta1/workload/evidence/crashloop_test.go (newest stored version, "
    "27,302 characters) TestPodSetOutOfRotation"
)
GO_WEDGE = (
    "ome-projects/ome pkg/controller/v1beta1/workload/evidence/crashloop_test.go (newest stored version, "
    "27,302 characters) TestCrashLoopWedge_* / TestCrashLoopWedgedPodOn_* / TestTerminalWaitingGraceLeft"
)
NOW = T0 + timedelta(hours=2)
HASH = "abc123"


def _pod(
    name: str,
    conditions: list[dict[str, Any]],
    container: dict[str, Any],
    *,
    created: datetime | None,
    runner: str | None = None,
    phase: str = "Running",
    deleting: bool = False,
    hash_: str = HASH,
) -> PodView:
    labels = {c.LABEL_REVISION_HASH: hash_, **({c.LABEL_RUNNER: runner} if runner else {})}
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "labels": labels}
    if created is not None:
        meta["creationTimestamp"] = format_time(created)
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return PodView.from_dict(
        {
            "metadata": meta,
            "spec": {"readinessGates": [{"conditionType": c.SERVING_GATE}]},
            "status": {"phase": phase, "conditions": conditions, "containerStatuses": [container]},
        }
    )


def serving(name: str, runner: str | None = None) -> PodView:
    """Go ``servingPod``: containers running and ready, ContainersReady, Ready and the gate True."""
    conds = [
        {"type": t, "status": "True", "lastTransitionTime": format_time(NOW - timedelta(hours=1))}
        for t in ("ContainersReady", "Ready", c.SERVING_GATE)
    ]
    main = {"name": "main", "ready": True, "state": {"running": {}}}
    return _pod(name, conds, main, created=NOW - timedelta(hours=1), runner=runner)


def running_not_ready(name: str, since: datetime, runner: str | None = None) -> PodView:
    """Go ``runningNotReadyPod``: Running, its container running and not ready, ContainersReady False."""
    conds = [{"type": "ContainersReady", "status": "False", "lastTransitionTime": format_time(since)}]
    main = {"name": "main", "ready": False, "state": {"running": {}}}
    return _pod(name, conds, main, created=since - timedelta(minutes=1), runner=runner)


def unready_after_serving(
    name: str, since: datetime, runner: str | None = None, deleting: bool = False
) -> PodView:
    """Go ``unreadyAfterServingPod`` (shape read from the tests' words): promoted — its serving gate
    True — and its containers not ready since ``since``, so Ready False."""
    conds = [
        {"type": "ContainersReady", "status": "False", "lastTransitionTime": format_time(since)},
        {"type": "Ready", "status": "False", "lastTransitionTime": format_time(since)},
        {
            "type": c.SERVING_GATE,
            "status": "True",
            "lastTransitionTime": format_time(since - timedelta(hours=1)),
        },
    ]
    main = {"name": "main", "ready": False, "state": {"running": {}}}
    return _pod(name, conds, main, created=since - timedelta(hours=1), runner=runner, deleting=deleting)


def crash_loop(name: str, age: timedelta, hash_: str = HASH, *, stamped: bool = True) -> PodView:
    """The test's ``crashLoopPod``: Running, its container parked in CrashLoopBackOff since ``age`` ago,
    labelled with revision hash ``hash_`` (``stamped`` False: no creation stamp)."""
    main = {"name": "main", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    return _pod(name, [], main, created=NOW - age if stamped else None, hash_=hash_)


def terminal(name: str) -> PodView:
    """The test's terminal pod: phase Failed."""
    return _pod(name, [], {"name": "main", "state": {}}, created=NOW - timedelta(hours=1), phase="Failed")


INSIDE = NOW - timedelta(seconds=30)
PAST = NOW - timedelta(minutes=2)

CASES: list[tuple[str, list[PodView], bool]] = [
    ("unready inside the grace", [unready_after_serving("engine-0-default-0", INSIDE)], True),
    ("unready past the grace", [unready_after_serving("engine-0-default-0", PAST)], True),
    ("never promoted", [running_not_ready("engine-0-default-0", PAST)], True),
    ("crash-looping pod", [crash_loop("engine-0-default-0", timedelta(minutes=10))], True),
    ("terminal pod", [terminal("engine-0-default-0")], True),
    ("serving pod", [serving("engine-0-default-0")], False),
    (
        "unready beside a serving pod",
        [unready_after_serving("engine-0-default-0", INSIDE), serving("engine-0-default-1")],
        False,
    ),
    (
        "leader unready inside the grace beside a serving worker",
        [
            unready_after_serving("engine-0-leader-0", INSIDE, runner=c.RUNNER_LEADER),
            serving("engine-0-worker-0", runner=c.RUNNER_WORKER),
        ],
        True,
    ),
    (
        "worker unready beside a serving leader",
        [
            serving("engine-0-leader-0", runner=c.RUNNER_LEADER),
            unready_after_serving("engine-0-worker-0", PAST, runner=c.RUNNER_WORKER),
        ],
        False,
    ),
    ("only a deleting pod", [unready_after_serving("engine-0-default-0", PAST, deleting=True)], False),
    ("no pods", [], False),
]


@pytest.mark.parametrize(("name", "pods", "want"), CASES, ids=[c_[0] for c_ in CASES])
def test_pod_set_out_of_rotation(name: str, pods: list[PodView], want: bool) -> None:
    """``TestPodSetOutOfRotation``: no routed pod in rotation now, whatever the reason and for however
    long, is out of rotation; a serving pod keeps the set in rotation; a gang reads its routed members
    (its leader) alone; only deleting pods, or none, is not out of rotation."""
    row = Row(index=0, phase="Ready")
    assert _out_of_rotation(row, pods) is want, f"{GO}: {name}"


# -- the crash-loop wedge of an operation-free Ready row (mapped since goJ) ------------------------------
#
# Go: the same file's ``TestCrashLoopWedge_NamesAStuckPodOnTheCurrentRevision``,
# ``TestCrashLoopWedge_FullyServingSetIsNeverAWedge``, ``TestCrashLoopWedge_ReportsTheGraceLeftOnAParkedPod``,
# ``TestCrashLoopWedgedPodOn_ReadsTheRowAgainstTheRevisionItRuns`` and ``TestTerminalWaitingGraceLeft``,
# over ``crashloop.go`` ``CrashLoopWedge`` / ``CrashLoopWedgedPod`` / ``CrashLoopWedgedPodOn`` and
# ``evidence/stuckpod.go`` (12,631 characters) ``PodWedgedPastGrace`` / ``TerminalWaitingGraceLeft``.
# Ours: ``planner/restart.py`` ``crash_loop_wedged_pod_on`` (the parked shape the op-less crash-loop repair
# reads, Go's ``unreadyIsWedge`` false) and ``terminal_waiting_grace_left``. ``CrashLoopWedge`` is
# ``CrashLoopWedgedPodOn`` on the current revision with the promoted-then-unready shape admitted; none of
# the entries below holds a pod of that shape (a pod that never served is no unready wedge either), so the
# parked reading answers them all. ``CLREVISION`` is Go's ``clRevision`` (its hash ``HASH``).

CLREVISION = f"engine-{HASH}"
PUSHED = "engine-def456"


def _wedge_ctx(grace: timedelta, pods_per_instance: int = 1) -> Ctx:
    """Go ``crashLoopInput``: the fake clock at ``NOW`` and the stuck-pod grace ``grace``; a single-pod
    Component, or a leader+worker one for ``expected`` 2."""
    sim = Sim(workers=pods_per_instance - 1)
    sim.apply_replica(base_replica(replicas=1))
    world = replace(sim.observe(), now=NOW, settings=OperatorSettings(stuck_pod_grace_period=grace))
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    assert ctx.pods_per_instance == pods_per_instance
    return ctx


READY = Row(index=0, phase="Ready")
WEDGED = crash_loop("engine-0-default-0", timedelta(minutes=10))


def _deleting_crash_loop(age: timedelta) -> PodView:
    main = {"name": "main", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    return _pod("engine-0-default-0", [], main, created=NOW - age, deleting=True)


WEDGE_CASES: list[tuple[str, timedelta, Row, list[PodView], bool]] = [
    ("Ready row, wedged pod on the current revision", timedelta(minutes=1), READY, [WEDGED], True),
    ("unset grace disables the shape", timedelta(0), READY, [WEDGED], False),
    ("still inside the grace", timedelta(hours=1), READY, [WEDGED], False),
    (
        "an operation in flight owns the row",
        timedelta(minutes=1),
        Row(index=0, phase="Ready", operation=Operation("op", "Update", "Surge", "", NOW)),
        [WEDGED],
        False,
    ),
    (
        "a row that is not Ready is some other pass's",
        timedelta(minutes=1),
        Row(index=0, phase="Pending"),
        [WEDGED],
        False,
    ),
    (
        "an off-revision wedge is a leftover the escalation owns",
        timedelta(minutes=1),
        READY,
        [crash_loop("engine-0-default-0", timedelta(minutes=10), "deadbeef")],
        False,
    ),
    (
        "a deleting pod is on its way out",
        timedelta(minutes=1),
        READY,
        [_deleting_crash_loop(timedelta(minutes=10))],
        False,
    ),
]


@pytest.mark.parametrize(
    ("name", "grace", "row", "pods", "want"), WEDGE_CASES, ids=[w[0] for w in WEDGE_CASES]
)
def test_crash_loop_wedge_names_a_stuck_pod_on_the_current_revision(
    name: str, grace: timedelta, row: Row, pods: list[PodView], want: bool
) -> None:
    """``TestCrashLoopWedge_NamesAStuckPodOnTheCurrentRevision`` (7 of its 8 entries; "no row at all"
    is not mappable: ours' reading takes a row): a Ready row with no operation holding a pod of the
    current revision parked past the grace (from its creation) is a wedge, named for the repair's
    reason and with no grace left; no grace configured, a pod inside the grace, an operation in flight,
    a row below Ready, a pod of another revision and a deleting pod are none."""
    wedged, left = crash_loop_wedged_pod_on(_wedge_ctx(grace), row, pods, CLREVISION)
    assert (wedged is not None) is want, f"{GO_WEDGE}: {name}"
    if wedged is not None:
        assert wedge_reason(*wedged), f"{GO_WEDGE}: a wedge must name itself for the repair's reason"
        assert left == timedelta(0), f"{GO_WEDGE}: a wedge past the grace reports grace left"


def test_crash_loop_wedge_fully_serving_set_is_never_a_wedge() -> None:
    """``TestCrashLoopWedge_FullyServingSetIsNeverAWedge``: a serving pod whose sidecar is parked in
    CrashLoopBackOff is no wedge: the Instance answers traffic."""
    pod = serving("engine-0-default-0")
    main = {"name": "main", "ready": True, "state": {"running": {}}}
    sidecar = {"name": "sidecar", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    conds = [
        {"type": t, "status": "True", "lastTransitionTime": format_time(NOW - timedelta(hours=1))}
        for t in ("ContainersReady", "Ready", c.SERVING_GATE)
    ]
    pod = PodView.from_dict(
        {
            "metadata": {
                "name": pod.name,
                "uid": "uid-serving",
                "labels": {c.LABEL_REVISION_HASH: HASH},
                "creationTimestamp": format_time(NOW - timedelta(hours=1)),
            },
            "spec": {"readinessGates": [{"conditionType": c.SERVING_GATE}]},
            "status": {"phase": "Running", "conditions": conds, "containerStatuses": [main, sidecar]},
        }
    )
    wedged, _ = crash_loop_wedged_pod_on(_wedge_ctx(timedelta(minutes=1)), READY, [pod], CLREVISION)
    assert wedged is None, GO_WEDGE


def _not_ready_running(age: timedelta) -> PodView:
    """The test's ``notReady``: ``crashLoopPod`` with its container running instead (never served)."""
    return _pod("engine-0-default-0", [], {"name": "main", "state": {"running": {}}}, created=NOW - age)


GRACE_LEFT_CASES: list[tuple[str, int, list[PodView], timedelta]] = [
    (
        "ten seconds into a minute",
        1,
        [crash_loop("engine-0-default-0", timedelta(seconds=10))],
        timedelta(seconds=50),
    ),
    (
        "gang, leader older",
        2,
        [
            crash_loop("engine-0-leader-0", timedelta(seconds=40)),
            crash_loop("engine-0-worker-0", timedelta(seconds=10)),
        ],
        timedelta(seconds=20),
    ),
    (
        "gang, worker older",
        2,
        [
            crash_loop("engine-0-leader-0", timedelta(seconds=10)),
            crash_loop("engine-0-worker-0", timedelta(seconds=40)),
        ],
        timedelta(seconds=20),
    ),
    (
        "gang, one member past the grace",
        2,
        [
            crash_loop("engine-0-leader-0", timedelta(seconds=10)),
            crash_loop("engine-0-worker-0", timedelta(minutes=2)),
        ],
        timedelta(0),
    ),
    ("running, not yet ready", 1, [_not_ready_running(timedelta(seconds=10))], timedelta(0)),
    (
        "off-revision leftover",
        1,
        [crash_loop("engine-0-default-0", timedelta(seconds=10), "deadbeef")],
        timedelta(0),
    ),
    ("deleting pod", 1, [_deleting_crash_loop(timedelta(seconds=10))], timedelta(0)),
]


@pytest.mark.parametrize(
    ("name", "expected", "pods", "want"), GRACE_LEFT_CASES, ids=[g[0] for g in GRACE_LEFT_CASES]
)
def test_crash_loop_wedge_reports_the_grace_left_on_a_parked_pod(
    name: str, expected: int, pods: list[PodView], want: timedelta
) -> None:
    """``TestCrashLoopWedge_ReportsTheGraceLeftOnAParkedPod`` (grace one minute): a parked pod inside the
    grace is no wedge yet and the reading says how long until it is; a gang reports the earliest grace
    end among its parked members; a pod merely not ready, an off-revision leftover, a deleting pod and
    a wedge already past the grace report none."""
    _, left = crash_loop_wedged_pod_on(_wedge_ctx(timedelta(minutes=1), expected), READY, pods, CLREVISION)
    assert left == want, f"{GO_WEDGE}: {name}"


@pytest.mark.parametrize(
    ("name", "hash_", "want"),
    [
        ("pod on the revision the row runs", "def456", True),
        ("pod on the current revision the roll replaced", HASH, False),
        ("pod on a revision the Component does not know", "other", False),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v else "",
)
def test_crash_loop_wedged_pod_on_reads_the_row_against_the_revision_it_runs(
    name: str, hash_: str, want: bool
) -> None:
    """``TestCrashLoopWedgedPodOn_ReadsTheRowAgainstTheRevisionItRuns``: a row the roll promoted onto a
    pushed revision, read against the revision it runs, holds a wedge only in a pod of that revision;
    and the plain reading, on the current revision, finds no wedge in the pushed pod (a wedge no counted
    crash is behind is the escalation's)."""
    ctx = _wedge_ctx(timedelta(minutes=1))
    row = Row(index=0, phase="Ready", running_revision=PUSHED)
    pod = crash_loop("engine-0-default-0", timedelta(minutes=10), hash_)
    wedged, _ = crash_loop_wedged_pod_on(ctx, row, [pod], PUSHED)
    assert (wedged is not None) is want, f"{GO_WEDGE}: {name}"
    pushed = crash_loop("engine-0-default-0", timedelta(minutes=10), "def456")
    assert crash_loop_wedged_pod_on(ctx, row, [pushed], CLREVISION)[0] is None, GO_WEDGE


@pytest.mark.parametrize(
    ("name", "pod", "want"),
    [
        ("inside the grace", crash_loop("engine-0-default-0", timedelta(seconds=10)), timedelta(seconds=50)),
        ("at the grace end", crash_loop("engine-0-default-0", timedelta(minutes=1)), timedelta(0)),
        ("past the grace", crash_loop("engine-0-default-0", timedelta(minutes=2)), timedelta(0)),
        (
            "no creation stamp",
            crash_loop("engine-0-default-0", timedelta(seconds=10), stamped=False),
            timedelta(0),
        ),
        ("serving", serving("engine-0-default-0"), timedelta(0)),
        ("no pod", None, timedelta(0)),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_terminal_waiting_grace_left(name: str, pod: PodView | None, want: timedelta) -> None:
    """``TestTerminalWaitingGraceLeft`` (grace one minute): the grace left counts from the pod's
    creation, is zero once past, and needs both a terminal waiting reason and a creation stamp."""
    assert terminal_waiting_grace_left(pod, NOW, timedelta(minutes=1)) == want, f"{GO_WEDGE}: {name}"
