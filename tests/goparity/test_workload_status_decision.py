"""OME's ``workload/status/decision_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/decision_test.go`` @ 8263d0c7, the newest
of three stored versions (4dfb96b1, 6,946 characters; 8263d0c7, 32,626, its text plus the
attempt-ending, parked-attempt, restart and ladder stamps; the middle one was not read: the newest
contains the oldest); ``decision.go``
``DemoteUnbacked``. Go applies each stamp to a hand-built row through its per-row writer; here the one
stamp with a whole-replica counterpart is driven: a Ready Instance whose pod is gone. The other cases
are listed in ``docs/goparity.md`` (per-row writer guards that the planner, which writes the whole
status under the replica's resourceVersion, does not have; the parked Update attempt, which it does
not write; and stamps not yet ported).
"""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7"
POD0 = "llama-pool-engine-0-default-0"


def test_demote_unbacked_keeps_everything_but_the_phase() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestDemoteUnbacked_KeepsARowAnOperationClaimed (its first half: the second, a row an operation
    claimed between selection and write, is a per-row writer guard): a Ready row with no operation
    whose pods are all gone is written ``Pending`` with its incarnation and running revision kept."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    before = dict(sim.rows()[0])
    assert before["phase"] == "Ready"
    sim.pods.pop(POD0)  # gone at once, as a force-deleted pod is
    driver.one_pass()
    row = sim.rows()[0]
    assert row["phase"] == "Pending"
    assert (row["incarnation"], row["runningRevision"]) == (before["incarnation"], before["runningRevision"])
    assert "operation" not in row
    assert sim.rows()[1]["phase"] == "Ready"
