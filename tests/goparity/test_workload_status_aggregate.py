"""OME's ``workload/status/aggregate_test.go``: the counters and the promotion gate of the status.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/aggregate_test.go`` @ 4dfb96b1 (the
listed version of four stored). Go's ``InstanceMeetsThreshold``, ``DesiredFor``, ``RolloutComplete``
and ``ReachedDesiredShape`` are ours in :mod:`omereconcile.planner.counters` (``meets_threshold``,
``desired_for``) and :mod:`omereconcile.planner.status` (``_rollout_complete``, and ``_staged`` for a
non-zero partition). Which tests of the file have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.counters import desired_for, instance_counters, meets_threshold
from omereconcile.planner.status import _rollout_complete, _staged
from omereconcile.world import Endpoints, PodCondition, PodView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/aggregate_test.go @ 4dfb96b1"

THRESHOLD = [
    ("all observed satisfying (no plan info)", 2, 2, 0, True),
    ("fewer observed satisfying than total (no plan info)", 2, 1, 0, False),
    ("no pods observed", 0, 0, 1, False),
    ("surge: satisfying < observed but >= desired", 2, 1, 1, True),
    ("surge: satisfying matches desired exactly", 3, 2, 2, True),
    ("surge: satisfying short of desired", 3, 1, 2, False),
]


@pytest.mark.parametrize(
    ("name", "observed", "sat", "desired", "want"), THRESHOLD, ids=[t[0] for t in THRESHOLD]
)
def test_instance_meets_threshold(name: str, observed: int, sat: int, desired: int, want: bool) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/aggregate_test.go @ 4dfb96b1,
    TestInstanceMeetsThreshold, entry ``name``: surge-tolerant; without plan info every pod must satisfy."""
    assert meets_threshold(observed, sat, desired) is want


def test_desired_for() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/aggregate_test.go @ 4dfb96b1,
    TestDesiredFor: the plan's count for a planned index, else the observed count (nil map too)."""
    m = {0: 2, 1: 3}
    assert desired_for(m, 0, 7) == 2
    assert desired_for(m, 99, 7) == 7
    assert desired_for(None, 0, 7) == 7


def _ready(rev: str, phase: str = R.READY) -> R.Row:
    return R.Row(index=0, phase=phase, running_revision=rev)


def test_rollout_complete() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/aggregate_test.go @ 4dfb96b1,
    TestRolloutComplete: every Instance Ready on the target promotes; a Creating one, a stale
    runningRevision or no Instance at all keeps currentRevision."""
    rev = "isvc-engine-aaaaaaaa"
    assert _rollout_complete([_ready(rev), _ready(rev)], rev)
    assert not _rollout_complete([_ready(rev, R.CREATING), _ready(rev)], rev)
    assert not _rollout_complete([_ready("isvc-engine-bbbbbbbb")], rev)
    assert not _rollout_complete([], rev)


def _shape(rows: list[R.Row], update: str, partition: int, replicas: int) -> bool:
    return _rollout_complete(rows, update) if partition == 0 else _staged(rows, update, partition, replicas)


def test_reached_desired_shape() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/aggregate_test.go @ 4dfb96b1,
    TestReachedDesiredShape: 8 Instances at partition 2 reach the shape with 6 Ready on the new
    revision and 2 Ready on the old; partition 0 wants all 8 new; a held Instance not Ready is not the
    shape; at partition 0 the shape is RolloutComplete."""
    new, old = "isvc-engine-newaaaaa", "isvc-engine-oldbbbbb"
    staged = [_ready(new)] * 6 + [_ready(old)] * 2
    assert _shape(staged, new, 2, 8)
    assert not _shape(staged, new, 0, 8)
    degraded = [*staged[:7], _ready(old, R.UPDATING)]
    assert not _shape(degraded, new, 2, 8)
    all_new = [_ready(new), _ready(new)]
    assert _rollout_complete(all_new, new) == _shape(all_new, new, 0, 2)


def _ready_pod(name: str, ready_at: datetime) -> PodView:
    """A pod whose only condition is PodReady True since ``ready_at`` (Go's ``readyPod``)."""
    return PodView(
        name=name,
        uid=f"uid-{name}",
        resource_version="1",
        labels={},
        phase="Running",
        conditions=(PodCondition("Ready", "True", ready_at),),
    )


def _rotation(*names: str) -> Endpoints:
    """The EndpointSlices listing ``names`` ready and serving (Go's ``inRotation`` set)."""
    endpoints = [
        {"targetRef": {"kind": "Pod", "name": n}, "conditions": {"ready": True, "serving": True}}
        for n in names
    ]
    return Endpoints.from_slices([{"endpoints": endpoints}])


def _count(pods: list[PodView], rotation: Endpoints, min_ready: int, now: datetime) -> tuple[int, timedelta]:
    """Go ``CountAvailablePods``: the available pods and the wake (the earliest pending window's rest)."""
    c = instance_counters(pods, rotation, timedelta(seconds=min_ready), now)
    wake = c.next_available_at - now if c.next_available_at is not None else timedelta(0)
    return c.available_pod_count, wake


def test_count_available_pods_min_ready_seconds_window() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/aggregate_test.go @ 4dfb96b1,
    TestCountAvailablePods_MinReadySecondsWindow: EndpointSlice rotation always, the Ready-age window
    only under ``minReadySeconds``; the wake is the earliest in-rotation pod's remaining window, none
    for a pod rotation will not admit by time alone; Ready counts ContainersReady, not PodReady.
    Ours is ``planner/counters.py`` ``instance_counters`` (``CountersForInstance``), whose
    ``next_available_at`` is Go's ``NextAvailableIn`` as an instant."""
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    aged = _ready_pod("aged", now - timedelta(seconds=30))
    fresh = _ready_pod("fresh", now - timedelta(seconds=5))
    out = _ready_pod("out", now - timedelta(seconds=30))
    pods = [aged, fresh, out]
    rotation = _rotation("aged", "fresh")
    assert _count(pods, rotation, 0, now) == (2, timedelta(0))  # zero window: membership alone
    assert _count(pods, rotation, 20, now) == (1, timedelta(seconds=15))  # the fresh pod in 15s
    assert _count([fresh, out], _rotation("out"), 20, now) == (1, timedelta(0))  # no wake off rotation
    assert _count(pods, rotation, 20, now + timedelta(seconds=15)) == (2, timedelta(0))
    c = instance_counters(pods, rotation, timedelta(seconds=20), now)
    assert (c.available_pod_count, c.ready_pod_count, c.next_available_at) == (
        1,
        0,
        now + timedelta(seconds=15),
    )
