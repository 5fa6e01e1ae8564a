"""The tests the newest stored ``workload/escalation/budget_test.go`` adds to the counted 4dfb96b1.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/budget_test.go``, the 49,846-character
version (the index names no commit for it; read whole). Its first 49 cases are 4dfb96b1's, counted and
ported in ``test_workload_escalation_budget.py``; sgl-project/ome ``workload/budget_test.go`` @ 1b71f4a8
holds those same 49 in the old ``workload`` package. This file ports the new ones:

- ``TestTerminatingSurgeInFlight`` (12 entries) on :func:`omereconcile.planner.admission.extra_pod_surge`,
  Go's ``escalation.ExtraPodSurgeInFlight``: the extra pods the API still lists hold surge slots;
- ``TestCurrentUnavailableInFlight_ParkedAttemptHoldsNoSlot`` "an attempt in flight still holds its
  slot" on the budget anchor ``planner/rollout.py`` ``_in_flight``.

Not mappable (listed in docs/goparity.md): the four Parked entries of that test (the planner parks no
attempt: no ``Parked`` step is ever written, as for ``escalation/parked_test.go``) and
``TestReconcile_FailedRestart_RecreateAnswersThePlanGate`` (a rollout group's plan gate; a standalone
replica has none).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.admission import extra_pod_surge
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.rollout import _in_flight
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision, PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go (49,846 characters)"

NOW = T0
WITHIN = NOW + timedelta(seconds=30)
ELAPSED = NOW - timedelta(seconds=1)
GANG = (("leader", 0), *(("worker", i) for i in range(7)))  # leader 1 + worker 7: 8 pods


def _ctx(gang: bool) -> Ctx:
    """A pass under SurgeThenDrain with a capped ``maxSurge`` (``planUpdateSelection`` computes the
    extra pods only then; Go's test calls ``ExtraPodSurgeInFlight`` directly), at Go's ``now``."""
    sim = Sim()
    sim.apply_replica(
        base_replica(
            replicas=2,
            lifecycle={"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}},
        )
    )
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    return replace(ctx, now=NOW, gang_slots=GANG if gang else ())


def _pod(index: int, ordinal: int, deadline: datetime | None = None, rev: str = "priorrev") -> PodView:
    """Go ``terminatingSurgePod`` (Terminating until ``deadline`` when given, else live) and
    ``liveSurgePod`` (``rev`` the revision hash a disposed attempt's replacement carries). Go's
    ``enginePod`` base carries the prior revision's hash."""
    meta: dict[str, Any] = {
        "name": f"llama-70b-engine-{index}-default-0-{ordinal}",
        "uid": f"uid-{index}-{ordinal}",
        "labels": {
            c.LABEL_INSTANCE_INDEX: str(index),
            c.LABEL_POD_ORDINAL: str(ordinal),
            c.LABEL_REVISION_HASH: rev,
        },
    }
    if deadline is not None:
        meta["deletionTimestamp"] = format_time(deadline)
    return PodView.from_dict({"metadata": meta, "status": {"phase": "Running"}})


def _gang_pods(index: int, n: int, deadline: datetime | None = None) -> list[PodView]:
    return [_pod(index, i, deadline) for i in range(n)]


def _ready(index: int) -> R.Row:
    return R.Row(index=index, phase=R.READY, running_revision="prior-rev")


def _failed(index: int) -> R.Row:
    """A disposed row names its revision in full, so its pods' hashes read against it."""
    return R.Row(index=index, phase=R.FAILED, running_revision="llama-70b-engine-priorrev")


def _surge_step(index: int, step: str, surge_index: int | None = None) -> R.Row:
    op = R.Operation(f"op-{index}", R.OP_UPDATE, step, "target", T0, surge_index=surge_index)
    return R.Row(index=index, phase=R.UPDATING, running_revision="prior-rev", operation=op)


def _name(index: int, ordinal: int) -> str:
    return f"llama-70b-engine-{index}-default-0-{ordinal}"


# (name, gang, rows, pods by index, rolled, slots, terminating, live, live slots by index, wake)
Case = tuple[
    str,
    bool,
    list[R.Row],
    dict[int, list[PodView]],
    list[int],
    int,
    list[str],
    list[str],
    dict[int, int],
    datetime | None,
]
CASES: list[Case] = [
    (
        "an abandoned replacement draining beside its serving source holds one slot",
        False,
        [_ready(0), R.Row(index=1, phase=R.FAILED, running_revision="prior-rev")],
        {0: [_pod(0, 0)], 1: [_pod(1, 0), _pod(1, 1, WITHIN)]},
        [],
        1,
        [_name(1, 1)],
        [],
        {},
        WITHIN,
    ),
    (
        "a replacement past its deletion deadline stops counting",
        False,
        [_ready(0), _ready(1)],
        {0: [_pod(0, 0)], 1: [_pod(1, 0), _pod(1, 1, ELAPSED)]},
        [],
        0,
        [],
        [],
        {},
        None,
    ),
    (
        "a replacement a disposed attempt left alive beside its source holds one slot, attributed to its Instance",
        False,
        [_ready(0), _failed(1)],
        {0: [_pod(0, 0)], 1: [_pod(1, 0), _pod(1, 1, rev="crash-rev")]},
        [],
        1,
        [],
        [_name(1, 1)],
        {1: 1},
        None,
    ),
    (
        "a live extra pod beside a Terminating one counts with it, and only the Terminating one sets the wake",
        False,
        [_ready(0), _failed(1)],
        {0: [_pod(0, 0)], 1: [_pod(1, 0), _pod(1, 1, WITHIN), _pod(1, 2, rev="crash-rev")]},
        [],
        2,
        [_name(1, 1)],
        [_name(1, 2)],
        {1: 1},
        WITHIN,
    ),
    (
        "the live pods of an index the plan does not own are the scale-down's, not the budget's",
        False,
        [_ready(0), _ready(1)],
        {0: [_pod(0, 0)], 1: [_pod(1, 0)], 5: [_pod(5, 0)]},
        [],
        0,
        [],
        [],
        {},
        None,
    ),
    (
        "a gang's live extra pods count in whole Instances",
        True,
        [_ready(0), _failed(1)],
        {
            0: _gang_pods(0, 8),
            1: [*_gang_pods(1, 8), _pod(1, 8, rev="crash-rev"), _pod(1, 9, rev="crash-rev")],
        },
        [],
        1,
        [],
        [_name(1, 8), _name(1, 9)],
        {1: 1},
        None,
    ),
    (
        "a source draining under its own surge step is charged by the step, not again here",
        False,
        [_ready(0), _surge_step(1, "SurgeDrain")],
        {0: [_pod(0, 0)], 1: [_pod(1, 0, WITHIN), _pod(1, 1)]},
        [],
        0,
        [],
        [],
        {},
        None,
    ),
    (
        "a gang source's pinned replacement index is charged by the source's step",
        True,
        [_surge_step(0, "Surge", surge_index=2), _ready(1)],
        {0: _gang_pods(0, 8), 1: _gang_pods(1, 8), 2: _gang_pods(2, 8, WITHIN)},
        [],
        0,
        [],
        [],
        {},
        None,
    ),
    (
        "an Instance already charged as rolled but not serving is not charged again",
        False,
        [_ready(0), R.Row(index=1, phase=R.READY, running_revision="target-rev")],
        {0: [_pod(0, 0)], 1: [_pod(1, 0), _pod(1, 1, WITHIN)]},
        [1],
        0,
        [],
        [],
        {},
        None,
    ),
    (
        "a pod set torn down in place holds nothing",
        False,
        [_ready(0), R.Row(index=1, phase=R.RESTARTING, running_revision="prior-rev")],
        {0: [_pod(0, 0)], 1: [_pod(1, 0, WITHIN)]},
        [],
        0,
        [],
        [],
        {},
        None,
    ),
    (
        "every pod of an index the plan does not own is extra while it drains",
        False,
        [_ready(0), _ready(1)],
        {0: [_pod(0, 0)], 1: [_pod(1, 0)], 5: [_pod(5, 0, WITHIN)]},
        [],
        1,
        [_name(5, 0)],
        [],
        {},
        WITHIN,
    ),
    (
        "a gang's extra pods count in whole Instances, and the first deadline is the wake",
        True,
        [_ready(0), _ready(1)],
        {
            0: [*_gang_pods(0, 8), _gang_pods(0, 8, WITHIN + timedelta(minutes=1))[7]],
            1: _gang_pods(1, 8),
            3: _gang_pods(3, 3, WITHIN),
        },
        [],
        2,
        [_name(0, 7), _name(3, 0), _name(3, 1), _name(3, 2)],
        [],
        {},
        WITHIN,
    ),
]


@pytest.mark.parametrize(
    ("name", "gang", "rows", "pods", "rolled", "slots", "terminating", "live", "by_index", "wake"),
    CASES,
    ids=[case[0] for case in CASES],
)
def test_terminating_surge_in_flight(
    name: str,
    gang: bool,
    rows: list[R.Row],
    pods: dict[int, list[PodView]],
    rolled: list[int],
    slots: int,
    terminating: list[str],
    live: list[str],
    by_index: dict[int, int],
    wake: datetime | None,
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go (49,846
    characters), TestTerminatingSurgeInFlight, entry ``name``: what a Component's extra pods hold
    against its surge budget (``ExtraPodSurgeInFlight``): a Terminating pod inside its deletion grace
    and a live pod a disposed attempt left behind, in slots of an Instance's pod count; the buckets a
    surge step, its pinned index or a rolled Instance already charge are skipped; the earliest
    deletion deadline is when the pass wakes."""
    got = extra_pod_surge(_ctx(gang), rows, pods, rolled)
    assert got.slots == slots
    assert list(got.terminating) == terminating
    assert list(got.live) == live
    assert dict(got.live_slots_by_index) == by_index
    assert got.next_release == wake


def test_an_attempt_in_flight_still_holds_its_slot() -> None:
    """Go: … escalation/budget_test.go (49,846 characters),
    TestCurrentUnavailableInFlight_ParkedAttemptHoldsNoSlot, entry "an attempt in flight still holds
    its slot": an Updating row at its Drain step counts against ``maxUnavailable``. The four Parked
    entries are not mappable (the planner writes no Parked step)."""
    op = R.Operation("op-0", R.OP_UPDATE, "Drain", "rev-b", T0)
    assert _in_flight([R.Row(index=0, phase=R.UPDATING, operation=op)], surge=False) == 1
