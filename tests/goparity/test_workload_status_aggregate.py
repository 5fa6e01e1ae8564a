"""OME's ``workload/status/aggregate_test.go``: the counters and the promotion gate of the status.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/aggregate_test.go`` @ 4dfb96b1 (the
listed version of four stored). Go's ``InstanceMeetsThreshold``, ``DesiredFor``, ``RolloutComplete``
and ``ReachedDesiredShape`` are ours in :mod:`omereconcile.planner.counters` (``meets_threshold``,
``desired_for``) and :mod:`omereconcile.planner.status` (``_rollout_complete``, and ``_staged`` for a
non-zero partition). Which tests of the file have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.counters import desired_for, meets_threshold
from omereconcile.planner.status import _rollout_complete, _staged

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
