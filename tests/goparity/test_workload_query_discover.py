"""OME's ``workload/query/discover_test.go``: terminal pods and runtime readiness.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/query/discover_test.go`` @ dcfb4135 (the listed one
of two stored versions, all 16,900 characters read), over ``query/discover.go`` (``IsTerminalPod``,
``AllPodsRuntimeReady``). Ours: :attr:`omereconcile.world.PodView.ended` and ``containers_ready`` (a
pod that ended never reads ContainersReady, whatever stale condition it carries), as the gang bring-up
reads a set (``planner/gang_ops.py``: every standing pod ContainersReady).

``TestPodSetPromotable`` (``PodSetPromotable``: the bar every Ready stamp shares, a non-empty set with
no terminal pod, every pod ContainersReady and PodReady for ``minReadySeconds``, and the remaining wait)
is driven through the planner: a replica's first pass opens its Create and creates its pods, the pods
are given the conditions of Go's case, and the next pass is planned (ours reads the bar per pod through
``podstate.ladder`` in ``steps.bring_up`` and ``gang.bring_up_gang``); 9 of its entries are mapped.

Not mappable (15): the live listing helpers (``LiveListPodsForInstance``, ``LiveListPodsForComponent``,
``LiveOldPodsClearedForRecreate`` ×5, ``AllTerminating``, ``ListOMENativePodsByName`` ×3: reads and a
field index; a pass of ours reads its pods once), ``IsTerminalPod``'s nil entry,
``ExcludeTerminalPods`` (a slice helper; ours filters inline), and ``TestPodSetPromotable``'s two
extra-predicate entries (a Go function argument; its one caller, the in-place roll's runtime-image
confirmation, is ``update_inplace_test.go``'s).

The newest stored version (25,957 characters, no commit named; dcfb4135's tests plus four) adds 23
cases: ``TestPodSetFullyServing_TerminalPodDisqualifies`` (6) and
``TestPodSetFullyServing_SkipsAPodTheSurgeDrained`` (7) on
:func:`omereconcile.planner.podstate.fully_serving`, ``TestPromoteBars_DeletingPodIsGone`` (2) through the
planner's promote pass; not mappable (8): ``TestPodSetReadyAndServing_RequiresReadyAndTheGate`` (neither
the function nor a caller is in the index; ours has no set-level rotation reading).
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from omereconcile.actions import WriteStatus
from omereconcile.planner import gate as gate_writers
from omereconcile.planner.podstate import fully_serving
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver
from omereconcile.world import Endpoints, PodCondition, PodView, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/query/discover_test.go @ dcfb4135"


def _pod(name: str, phase: str, ready: bool) -> PodView:
    """Go's ``podInPhase``: ``ready`` stamps ContainersReady True (stale on a terminal pod)."""
    conds = (PodCondition("ContainersReady", "True"),) if ready else ()
    return PodView(name, f"uid-{name}", "1", {}, phase=phase, conditions=conds)


@pytest.mark.parametrize(
    ("entry", "phase", "ready", "terminal"),
    [
        ("unset phase", "", False, False),
        ("pending", "Pending", False, False),
        ("running", "Running", True, False),
        ("unknown", "Unknown", False, False),
        ("failed", "Failed", False, True),
        ("succeeded", "Succeeded", False, True),
    ],
)
def test_is_terminal_pod(entry: str, phase: str, ready: bool, terminal: bool) -> None:
    """Go: discover_test.go @ dcfb4135, TestIsTerminalPod, each entry but "nil"."""
    assert _pod("p", phase, ready).ended is terminal, entry


READY = _pod("ready", "Running", True)


@pytest.mark.parametrize(
    ("entry", "pods", "want"),
    [
        ("empty", [], False),
        ("all ready", [READY, _pod("ready-2", "Running", True)], True),
        ("one not ready", [READY, _pod("booting", "Running", False)], False),
        ("failed with stale ready condition", [READY, _pod("dead", "Failed", True)], False),
        ("succeeded with stale ready condition", [_pod("done", "Succeeded", True)], False),
        ("only terminal", [_pod("dead", "Failed", False)], False),
    ],
)
def test_a_terminal_pod_is_never_runtime_ready(entry: str, pods: list[PodView], want: bool) -> None:
    """Go: discover_test.go @ dcfb4135, TestAllPodsRuntimeReady_TerminalPodNeverReady, each entry: a set
    is runtime-ready when it has pods and every one is ContainersReady; a Failed or Succeeded pod never
    is, even with a stale ContainersReady condition."""
    assert (bool(pods) and all(p.containers_ready for p in pods)) is want, entry


# TestPodSetPromotable, through the planner: a replica's first pass opens the Create and creates its
# pods; the pods are then given the conditions Go's case builds and one more pass is planned.


def _created(workers: int, window: int) -> Sim:
    """A replica of one Instance (a gang of ``1 + workers`` pods when ``workers``) with
    ``minReadySeconds`` = ``window``, after the pass that opened its Create and created its pods."""
    sim = Sim(workers=workers)
    spec: dict[str, Any] = {"replicas": 1}
    if window:
        spec["minReadySeconds"] = window
    sim.apply_replica(base_replica(**spec))
    driver = Driver(sim)
    while len(sim.pods) < 1 + workers:
        driver.one_pass()
    assert sim.rows()[0]["phase"] == "Creating"
    return sim


def _promote_pod(
    base: PodView,
    containers_ready: bool,
    ready_ago: float | None,
    phase: str = "Running",
    deleting: bool = False,
) -> PodView:
    """Go ``promotePod``: ``containers_ready`` stamps ContainersReady; ``ready_ago`` (seconds before
    now) stamps PodReady at that instant, None leaves it off. A PodReady pod carries the serving gate
    (the kubelet folds the readiness gate into Ready, Go's comment on the bar) and is listed ready by
    its Service's EndpointSlice, as a pod in rotation is; the pod keeps its name, labels and
    incarnation."""
    obj: dict[str, Any] = {
        "metadata": {
            "name": base.name,
            "namespace": "llama-demo",
            "uid": base.uid,
            "resourceVersion": "1",
            "labels": dict(base.labels),
            "creationTimestamp": format_time(NOW_PROMOTE - timedelta(minutes=5)),
        },
        "status": {"phase": phase, "conditions": []},
    }
    if deleting:
        obj["metadata"]["deletionTimestamp"] = format_time(NOW_PROMOTE)
        obj["metadata"]["finalizers"] = ["example.com/termination"]
    conds = obj["status"]["conditions"]
    if containers_ready:
        conds.append({"type": "ContainersReady", "status": "True"})
        conds.append({"type": c.SERVING_GATE, "status": "True"})
    if ready_ago is not None:
        at = format_time(NOW_PROMOTE - timedelta(seconds=ready_ago))
        conds.append({"type": "Ready", "status": "True", "lastTransitionTime": at})
    return PodView.from_dict(obj)


NOW_PROMOTE = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)  # Go promoteNow


def _promote_pass(
    sim: Sim,
    shapes: list[tuple[bool, float | None, str]],
    at: float = 0.0,
    deleting: frozenset[int] = frozenset(),
) -> tuple[bool, float | None]:
    """Plan one pass over the created pods given ``shapes`` (ContainersReady, PodReady seconds ago,
    phase), ``at`` seconds after Go's ``promoteNow``: whether it promotes the Instance (the row it
    writes is Ready) and the pass's requeue."""
    from omereconcile.planner import plan

    world = sim.observe()
    bases = sorted(world.pods, key=lambda p: p.name)
    pods = tuple(
        _promote_pod(b, cr, ago, ph, i in deleting)
        for i, (b, (cr, ago, ph)) in enumerate(zip(bases, shapes, strict=True))
    )
    listed = [p for p in pods if p.ready and not p.terminating]
    endpoints = Endpoints.from_slices(
        [
            {
                "endpoints": [
                    {
                        "targetRef": {"kind": "Pod", "name": p.name},
                        "conditions": {"ready": True, "serving": True},
                    }
                    for p in listed
                ]
            }
        ]
    )
    now = NOW_PROMOTE + timedelta(seconds=at)
    # The row's attempt began with its pods, well inside its deadline.
    status = dict(world.replica.status)
    rows = [dict(r) for r in status["instanceStatuses"]]
    op = dict(rows[0]["operation"])
    op["startedAt"] = format_time(NOW_PROMOTE - timedelta(minutes=5))
    op.pop("deadline", None)
    rows[0]["operation"] = op
    status["instanceStatuses"] = rows
    world = replace(
        world, pods=pods, endpoints=endpoints, now=now, replica=replace(world.replica, status=status)
    )
    out = plan(world)
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    row = written[-1].status["instanceStatuses"][0] if written else rows[0]
    return row["phase"] == "Ready", out.requeue_after


@pytest.mark.parametrize("window", [pytest.param(0, id="no window"), pytest.param(20, id="under a window")])
def test_an_empty_set_is_never_promotable(window: int) -> None:
    """Go: discover_test.go @ dcfb4135, TestPodSetPromotable, "empty set is never promotable" and "…
    under a window either": an Instance whose pods are all gone is never promoted."""
    sim = _created(workers=0, window=window)
    sim.pods.clear()
    promoted, _ = _promote_pass(sim, [])
    assert not promoted, GO


def test_containers_ready_without_pod_ready_is_below_the_bar() -> None:
    """Go: TestPodSetPromotable, "ContainersReady without PodReady is below the bar"."""
    promoted, _ = _promote_pass(_created(workers=0, window=0), [(True, None, "Running")])
    assert not promoted, GO


def test_pod_ready_with_no_window_clears_the_bar() -> None:
    """Go: TestPodSetPromotable, "PodReady with no window clears the bar"."""
    promoted, _ = _promote_pass(_created(workers=0, window=0), [(True, 1, "Running")])
    assert promoted, GO


def test_inside_the_window_the_pass_wakes_for_the_remainder() -> None:
    """Go: TestPodSetPromotable, "inside the window reports the remainder": Ready 5 s into a 20 s window
    is not promoted, and the pass asks to be woken in 15 s, when the next pass promotes it."""
    sim = _created(workers=0, window=20)
    promoted, wake = _promote_pass(sim, [(True, 5, "Running")])
    assert not promoted, GO
    assert wake == 15.0, GO
    assert not _promote_pass(sim, [(True, 5, "Running")], at=14)[0], GO
    assert _promote_pass(sim, [(True, 5, "Running")], at=15)[0], GO


def test_the_set_waits_for_the_last_pod_to_clear_the_window() -> None:
    """Go: TestPodSetPromotable, "the remainder is the last pod to clear the window": pods Ready 15 s and
    5 s into a 20 s window hold the set until the later one clears it, 15 s on. Go reports that
    remainder once; ours wakes at each pod's window (5 s, then 15 s), and only the second pass
    promotes."""
    sim = _created(workers=1, window=20)
    shapes = [(True, 15, "Running"), (True, 5, "Running")]
    promoted, wake = _promote_pass(sim, shapes)
    assert not promoted, GO
    assert wake is not None, GO
    assert wake <= 15.0, GO
    assert not _promote_pass(sim, shapes, at=14)[0], GO
    assert _promote_pass(sim, shapes, at=15)[0], GO


def test_an_elapsed_window_clears_the_bar_at_the_exact_boundary() -> None:
    """Go: TestPodSetPromotable, "elapsed window clears the bar at the exact boundary": Ready 20 s ago
    under a 20 s window is promoted."""
    promoted, _ = _promote_pass(_created(workers=0, window=20), [(True, 20, "Running")])
    assert promoted, GO


def test_one_pod_short_of_pod_ready_holds_the_whole_set() -> None:
    """Go: TestPodSetPromotable, "one pod short of PodReady holds the whole set with no remainder": a
    gang with one member Ready and one only ContainersReady is not promoted, however long the pass
    waits (Go reports no remainder; ours still wakes when the Ready member's window closes, a pass
    that promotes nothing)."""
    sim = _created(workers=1, window=20)
    shapes = [(True, 1, "Running"), (True, None, "Running")]
    assert not _promote_pass(sim, shapes)[0], GO
    assert not _promote_pass(sim, shapes, at=60)[0], GO


def test_a_terminal_pod_is_never_promotable() -> None:
    """Go: TestPodSetPromotable, "a terminal pod is never promotable": a Succeeded pod still carrying
    Ready and ContainersReady does not promote its Instance."""
    promoted, _ = _promote_pass(_created(workers=0, window=0), [(True, 1, "Succeeded")])
    assert not promoted, GO


# The newest stored version of discover_test.go (25,957 characters; the index names no commit for it):
# dcfb4135's tests unchanged plus the four below, 23 cases.
GO_NEWEST = (
    "ome-projects/ome pkg/controller/v1beta1/workload/query/discover_test.go (newest stored, 25,957 chars)"
)


@pytest.mark.parametrize("window", [pytest.param(0, id="no window"), pytest.param(20, id="under a window")])
@pytest.mark.parametrize(
    ("entry", "workers", "deleting"),
    [
        ("the only pod is being deleted", 0, frozenset({0})),
        ("one member of the set is being deleted", 1, frozenset({1})),
    ],
)
def test_a_pod_being_deleted_is_gone_for_the_promote_bars(
    entry: str, workers: int, deleting: frozenset[int], window: int
) -> None:
    """Go: the newest discover_test.go, TestPromoteBars_DeletingPodIsGone, each entry: a pod with a
    deletion timestamp, however long it has been Ready and ContainersReady, is left out of the set the
    bars judge, so a set short because of it is not promoted (Go's ``AllPodsRuntimeReady`` false and
    ``PodSetPromotable`` false under no window and a 20 s one). Through the planner: one pass over the
    created pods, every one Ready a minute ago. Go's "no remainder" (wait 0) is not asserted: ours wakes
    for other reasons a pass may have (a terminating pod's sweep)."""
    sim = _created(workers=workers, window=window)
    shapes = [(True, 60.0, "Running")] * (1 + workers)
    promoted, _ = _promote_pass(sim, shapes, deleting=deleting)
    assert not promoted, (GO_NEWEST, entry)


def _gated(
    name: str,
    *,
    phase: str = "Running",
    containers_ready: bool = True,
    pod_ready: bool = False,
    gate: str | None = "True",
    writers: tuple[tuple[str, str], ...] = (),
    deleting: bool = False,
) -> PodView:
    """A pod as Go's ``conditionedPod`` / ``admittedPod`` / ``rotationPod`` / ``gated`` build it: the
    conditions True as asked, the ``ome.io/serving`` gate at ``gate`` with its writers' message."""
    conds: list[dict[str, Any]] = []
    if containers_ready:
        conds.append({"type": "ContainersReady", "status": "True"})
    if gate is not None:
        message = json.dumps([{"userAgent": u, "key": k} for u, k in writers], separators=(",", ":"))
        conds.append({"type": c.SERVING_GATE, "status": gate, "message": message if writers else ""})
    if pod_ready:
        conds.append({"type": "Ready", "status": "True"})
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"}
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW_PROMOTE)
        meta["finalizers"] = ["example.com/termination"]
        conds = []  # Go deletingPod clears the conditions
    return PodView.from_dict({"metadata": meta, "status": {"phase": phase, "conditions": conds}})


SERVING = _gated("serving")


@pytest.mark.parametrize(
    ("entry", "pods", "desired", "want"),
    [
        ("healthy set", [SERVING], 1, True),
        ("failed pod with stale healthy conditions", [_gated("dead", phase="Failed")], 1, False),
        ("succeeded pod with stale healthy conditions", [_gated("done", phase="Succeeded")], 1, False),
        (
            "serving sibling does not cover a failed member",
            [SERVING, _gated("dead", phase="Failed")],
            1,
            False,
        ),
        (
            "deleting pod is still excluded, not disqualifying",
            [SERVING, _gated("draining", deleting=True)],
            1,
            True,
        ),
        ("nothing expected proves nothing", [SERVING], 0, False),
    ],
)
def test_pod_set_fully_serving_terminal_pod_disqualifies(
    entry: str, pods: list[PodView], desired: int, want: bool
) -> None:
    """Go: the newest discover_test.go, TestPodSetFullyServing_TerminalPodDisqualifies, each entry, on
    :func:`omereconcile.planner.podstate.fully_serving` (Go ``query.PodSetFullyServing``, which the
    escalation's failed-while-serving guard and the admission of a rolled Instance read)."""
    assert fully_serving(pods, desired) is want, (GO_NEWEST, entry)


SURGE = (gate_writers.SURGE_DRAIN, "update-surge-drain-0-1")
DELETE = (gate_writers.DELETE_DRAIN, "0")


@pytest.mark.parametrize(
    ("entry", "pods", "want"),
    [
        (
            "surge-drained source beside a serving replacement",
            [_gated("source", gate="False", writers=(SURGE,)), _gated("replacement")],
            True,
        ),
        (
            "deleting source beside a serving replacement",
            [_gated("source", deleting=True), _gated("replacement")],
            True,
        ),
        (
            "surge-drained source alone covers nothing",
            [_gated("source", gate="False", writers=(SURGE,))],
            False,
        ),
        (
            "surge-drained source beside a terminal replacement",
            [_gated("source", gate="False", writers=(SURGE,)), _gated("replacement", phase="Failed")],
            False,
        ),
        (
            "surge-drained source beside a replacement not yet in rotation",
            [_gated("source", gate="False", writers=(SURGE,)), _gated("replacement", gate="False")],
            False,
        ),
        (
            "source another writer holds beside a serving replacement",
            [_gated("source", gate="False", writers=(DELETE,)), _gated("replacement")],
            False,
        ),
        (
            "source held by the surge drain and another writer",
            [_gated("source", gate="False", writers=(DELETE, SURGE)), _gated("replacement")],
            True,
        ),
    ],
)
def test_pod_set_fully_serving_skips_a_pod_the_surge_drained(
    entry: str, pods: list[PodView], want: bool
) -> None:
    """Go: the newest discover_test.go, TestPodSetFullyServing_SkipsAPodTheSurgeDrained, each entry
    (desired 1): a pod the surge's own drain holds out of rotation is skipped like a deleting one — it
    neither disqualifies a set whose replacement serves nor covers the slot; a hold by another writer
    alone is not the surge's drain. Two entries failed before (ours disqualified the drained source) and
    pass by Go's rule (``planner/podstate.py`` ``fully_serving``)."""
    assert fully_serving(pods, 1) is want, (GO_NEWEST, entry)
