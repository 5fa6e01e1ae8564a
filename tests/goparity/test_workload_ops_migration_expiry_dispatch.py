"""OME's ``workload/migration_expiry_dispatch_test.go``: the one case with a counterpart.

Go: sgl-project/ome ``pkg/controller/v1beta1/workload/migration_expiry_dispatch_test.go`` @ eb2686d2
(one stored version, 7,034 characters, read whole), over ``ExtraInstanceIndices`` (sgl-project, the
``workload`` package's plan helpers: every observed row no ``InstancePlan`` covers, minus, on the
ordinary scale-down pass, a ``Migrating`` source and a ``Migrate``-pinned surge). Ours:
``planner/plan_indices.py`` ``scale_down_extras`` and the pass's scale-down. Its three dispatcher
tests (``ExpiryBeforeDrive``, ``ExpiryRunsUnderModeNever``, ``NotYetExpiredRecordNotConsumed``) drive a
Manual migration record through ``workload.Reconcile``; a standalone replica accepts no migration
request and runs no expiry pass, so they are counted as not mappable in ``docs/goparity.md``.
"""

from __future__ import annotations

from omereconcile.planner import rows as R
from omereconcile.planner.plan_indices import scale_down_extras
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "sgl-project/ome pkg/controller/v1beta1/workload/migration_expiry_dispatch_test.go @ eb2686d2"


def test_unpinned_surge_is_the_sole_extra() -> None:
    """Go: sgl-project/ome pkg/controller/v1beta1/workload/migration_expiry_dispatch_test.go @ eb2686d2,
    TestExtraInstanceIndices_UnpinnedSurgeIsExtra: a plan covering only Instance 0, a Ready 0 and a
    Creating 1 whose operation was cleared: 1 is the one scale-down extra."""
    rows = [R.Row(index=0, phase=R.READY), R.Row(index=1, phase=R.CREATING)]
    assert scale_down_extras(rows, [0]) == [1], GO


def test_unpinned_surge_is_torn_down_by_the_scale_down() -> None:
    """Go: … migration_expiry_dispatch_test.go @ eb2686d2, TestExtraInstanceIndices_UnpinnedSurgeIsExtra,
    in a pass: the Creating row left with no operation at an index the spec no longer covers is
    retired by the ordinary Delete (its pod drained and deleted, the row removed); the covered
    Instance 0 is never touched."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.update_spec(replicas=1)
    row = next(r for r in sim.status["instanceStatuses"] if r["index"] == 1)
    row["phase"] = R.CREATING
    assert "operation" not in row
    driver.one_pass()
    phases = {r["index"]: (r["phase"], (r.get("operation") or {}).get("type")) for r in sim.rows()}
    assert phases == {0: (R.READY, None), 1: (R.DELETING, R.OP_DELETE)}, GO
    driver.run(lambda s: converged(s) and len(s.rows()) == 1)
    assert [r["index"] for r in sim.rows()] == [0], GO
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"], GO
