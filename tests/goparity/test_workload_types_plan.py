"""OME's ``workload/types/plan_test.go`` and ``source_test.go`` / ``types_test.go``.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/plan_test.go`` @ 4dfb96b1 (``DeadlineAt``,
``InstancePlan.TotalPods``, ``AllocateSurgeIndex``), each file the one stored version, read whole.
Ours: ``Ctx.deadline_from``, ``Ctx.pods_per_instance`` and ``planner/gang_ops.py`` ``surge_index_for``.
Not mappable: ``TestComponentPlanTopologyKeyForInstance`` (per-Instance topology keys ours does not
plan), ``source_test.go``'s ``Instance`` lookup (Go aliasing of the observed row) and ``types_test.go``'s
``AdapterPublished`` (a Go accessor of two row counters, nil-safe).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import build_context
from omereconcile.planner.gang_ops import surge_index_for
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision
from tests.goparity.reconciler_world import one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/plan_test.go @ 4dfb96b1"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("timeout", "want"),
    [
        (timedelta(minutes=30), NOW + timedelta(minutes=30)),
        (timedelta(0), None),
        (timedelta(minutes=-1), None),
    ],
)
def test_deadline_at(timeout: timedelta, want: datetime | None) -> None:
    """Go: plan_test.go @ 4dfb96b1, TestDeadlineAt: a configured window gives start plus the window; a
    zero or negative one gives no deadline, never one at or before the start. (The negative window
    failed before: ours gave a deadline a minute before the start.)"""
    ctx = replace(one_replica_ctx(), ready_timeout=timeout)
    assert ctx.deadline_from(NOW) == want


def test_total_pods_sums_every_runner() -> None:
    """Go: plan_test.go @ 4dfb96b1, TestInstancePlanTotalPodsSumsEveryRunner: a leader and four workers
    are five pods. (Go's runner-less plan has no counterpart: a replica with no runner is refused.)"""
    sim = Sim(workers=4)
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    assert build_context(world, desired, desired.name, None).pods_per_instance == 5


def test_allocate_surge_index_excludes_claimed_slots() -> None:
    """Go: plan_test.go @ 4dfb96b1, TestAllocateSurgeIndexExcludesClaimedSlots: the lowest index free of
    both the rows and the slots in-flight surges claimed; 0 for no rows; a hole below the highest
    index is still the lowest free."""
    claim = R.Operation("update-0", R.OP_UPDATE, R.STEP_SURGE, "rev", T0, surge_index=1)
    assert surge_index_for([R.Row(index=0, operation=claim), R.Row(index=2)], set()) == 3
    assert surge_index_for([], set()) == 0
    assert surge_index_for([R.Row(index=1)], set()) == 0
