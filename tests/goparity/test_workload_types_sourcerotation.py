"""OME's ``workload/types/sourcerotation_test.go`` and ``conditions_test.go``.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/sourcerotation_test.go`` @ dcfb4135 and
``types/conditions_test.go`` @ dcfb4135 (each the one stored version, read whole). Ours: ``planner/surge.py``
``source_rotation_hold`` (the ``SourceUnrouted`` report and its record, Go's
``SourceUnroutedTermination``) and the condition words ``planner/status.py`` writes.
``TestOperationSourceUnrouted`` is a Go predicate on the token (ours compares the token inline): not
mappable. The migration-policy identifiers of ``TestConditionIdentifiersKeepTheirWireValues``
(``MigrationPolicyUnconfigured``, ``MigrationCapacity*``) are conditions of a migrating owner, which a
standalone replica never writes; its gang-scheduling identifiers are asserted.
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.planner.status import GANG_SCHEDULING_UNAVAILABLE
from omereconcile.planner.surge import SOURCE_UNROUTED, source_rotation_hold
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time
from tests.goparity.test_workload_holds_sourcerotation import SOURCE, _ctx, _source, _surging

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/sourcerotation_test.go @ dcfb4135"


def test_source_unrouted_does_not_park_the_deadline() -> None:
    """Go: sourcerotation_test.go @ dcfb4135, TestSourceUnroutedDoesNotParkTheDeadline: the token names
    a workload getting worse, not an outside wait, so the attempt's deadline keeps running."""
    row = source_rotation_hold(_ctx(), _surging(), [_source(serving=False)])
    assert row.operation is not None
    assert row.operation.waiting == SOURCE_UNROUTED
    assert row.operation.deadline == T0 + timedelta(minutes=5)


def test_the_source_unrouted_record_is_stable_across_observations() -> None:
    """Go: sourcerotation_test.go @ dcfb4135, TestSourceUnroutedTerminationIsStableAcrossObservations: the
    record names the token and the pod, its moment is the pod's creation (not the pass), and two
    observations give the same record. (Go's nil pod has no counterpart.)"""
    first = source_rotation_hold(_ctx(), _surging(), [_source(serving=False)]).last_failure
    second = source_rotation_hold(_ctx(), _surging(), [_source(serving=False)]).last_failure
    assert first is not None
    assert first == second
    assert (first["reason"], first["podName"]) == (SOURCE_UNROUTED, SOURCE)
    assert first["time"] == format_time(T0)
    assert SOURCE in str(first["message"])


def test_condition_identifiers_keep_their_wire_values() -> None:
    """Go: conditions_test.go @ dcfb4135, TestConditionIdentifiersKeepTheirWireValues (the gang-scheduling
    identifiers): the condition type and both reasons, as a replica's status carries them."""
    assert GANG_SCHEDULING_UNAVAILABLE == "GangSchedulingUnavailable"
    reasons = set()
    for gang_scheduling in (True, False):
        sim = Sim(workers=1, gang_scheduling=gang_scheduling)
        sim.apply_replica(base_replica(replicas=1))
        Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
        cond = sim.condition(GANG_SCHEDULING_UNAVAILABLE)
        assert cond is not None
        reasons.add(cond["reason"])
    assert reasons == {"GangSchedulingAvailable", "PodGroupCRDNotInstalled"}
