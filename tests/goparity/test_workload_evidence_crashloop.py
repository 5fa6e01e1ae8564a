"""OME's ``workload/evidence/crashloop_test.go``: the roll's ordering reading of a pod set.

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
ours has no such reading. Which other cases have none, and why, is in ``docs/goparity.md``.

Pods are built as the API returns them, with the shapes of Go's ``helpers_external_test.go``
(``servingPod``, ``runningNotReadyPod``, 4dfb96b1) and the test's own ``crashLoopPod``. The newest
helper file, which defines ``unreadyAfterServingPod``, is not stored: its shape is read from the tests'
words — a promoted pod (serving gate True, as a promoted break leaves it) whose containers stopped
being ready at ``since``, so Ready is False.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner.rollout import _out_of_rotation
from omereconcile.planner.rows import Row
from omereconcile.simulate.cluster import T0
from omereconcile.world import PodView, format_time
from omerender import constants as c

GO = (
    "ome-projects/ome pkg/controller/v1beta1/workload/evidence/crashloop_test.go (newest stored version, "
    "27,302 characters) TestPodSetOutOfRotation"
)
NOW = T0 + timedelta(hours=2)
HASH = "abc123"


def _pod(
    name: str,
    conditions: list[dict[str, Any]],
    container: dict[str, Any],
    *,
    created: datetime,
    runner: str | None = None,
    phase: str = "Running",
    deleting: bool = False,
) -> PodView:
    labels = {c.LABEL_REVISION_HASH: HASH, **({c.LABEL_RUNNER: runner} if runner else {})}
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "labels": labels}
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


def crash_loop(name: str, age: timedelta) -> PodView:
    """The test's ``crashLoopPod``: Running, its container parked in CrashLoopBackOff since ``age`` ago."""
    main = {"name": "main", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    return _pod(name, [], main, created=NOW - age)


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
