"""OME's ``workload/ops/demote_test.go``: the truth pass demotes an unbacked Ready Instance.

Go: sgl-project/ome ``pkg/controller/v1beta1/workload/ops/demote_test.go`` @ 1b71f4a8 (one stored
version, read whole), over ``ops/demote.go`` ``DemoteUnbackedInstances`` @ 1b71f4a8; the newest
ome-projects text moves the row rule into ``workload/status`` ``DemoteUnbacked`` (same precondition:
``Ready`` with no operation, else a no-op) and keeps the ``InstanceDemoted`` Warning and its words in
``ops``. Go hands the function two selections; here the two rows are seeded in the sim with their pods
gone and one pass runs (ours selects and demotes in the same pass: ``planner/instances.py``,
``steps.demote``).
"""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "sgl-project/ome pkg/controller/v1beta1/workload/ops/demote_test.go @ 1b71f4a8"


def test_demote_unbacked_instances() -> None:
    """Go: sgl-project/ome pkg/controller/v1beta1/workload/ops/demote_test.go @ 1b71f4a8,
    TestDemoteUnbackedInstances: Instance 0, Ready with no operation and no live pod, goes Pending with
    its incarnation and running revision kept, and an ``InstanceDemoted`` Warning says why; Instance 1,
    Ready under an Update, is left to its operation (the fresh-row guard)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    rev = sim.status["currentRevision"]
    rows = {r["index"]: r for r in sim.status["instanceStatuses"]}
    rows[0]["incarnation"] = 3
    rows[1]["operation"] = {
        "id": "u-1",
        "type": "Update",
        "step": "Surge",
        "targetRevision": rev,
        "startedAt": "2025-01-01T00:00:00Z",
    }
    sim.pods.pop("llama-pool-engine-0-default-0")
    sim.pods.pop("llama-pool-engine-1-default-0")

    driver.one_pass()
    after = {r["index"]: r for r in sim.rows()}
    assert after[0]["phase"] == "Pending", GO
    assert (after[0]["incarnation"], after[0]["runningRevision"]) == (3, rev), GO
    assert after[1]["phase"] == "Ready", GO
    assert after[1]["operation"]["id"] == "u-1", GO
    demoted = [e for e in sim.events if e.event_reason == "InstanceDemoted"]
    assert [(e.type, e.message) for e in demoted] == [
        ("Warning", "Instance 0 (component=engine) demoted Ready→Pending: no live pods back the Ready phase")
    ], GO
