"""OME's ``workload/status/gangsurge_test.go``: how the source of an abandoned gang surge is reset.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/gangsurge_test.go`` @ 8263d0c7 (19,096
characters; its 17 older cases are per-row writer fences of the source/replacement pair, listed in
``docs/goparity.md``), over ``status/decision.go`` ``AbandonedSurgeSourceMutation`` (@ 8263d0c7, read
whole). Go applies the reset to a hand-built pair through its writer; here one pure planner pass
(``planner.plan``) runs over the simulated world's observation of a leader+worker Instance, its status
seeded with Go's pair: the source ``Updating`` under a gang surge at ``Surge`` that names replacement
index 2, whose marker row is already at ``GangSurgeTargetCleanup`` with no member left
(``planner/gang_ops.py`` ``_abandon``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from omereconcile.actions import RecordEvent, WriteStatus
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/gangsurge_test.go @ 8263d0c7"


def test_never_promoted_source_ends_failed() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/gangsurge_test.go @ 8263d0c7,
    TestResetGangSurgeSourceAndRemoveMarker_NeverPromotedSourceEndsFailed: the reset of an abandoned
    gang surge whose source never ran a revision writes the fresh-start ``Failed`` shape — no
    operation, no target, no running revision, the recorded failure kept — and removes the
    replacement's marker in the same write; ``Ready`` would count capacity nothing promoted. Failed
    before: ours wrote ``Pending`` aimed at the roll target."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"updateStrategy": {"type": "SurgeThenDrain"}}))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    target = desired.name
    at = world.replica.status["instanceStatuses"][0]["readySince"]
    failure = {"reason": "PodGroupOwnershipConflict", "message": "PodGroup held by another owner", "time": at}
    source: dict[str, Any] = {
        "index": 0,
        "incarnation": 1,
        "phase": "Updating",
        "targetRevision": target,
        "lastFailure": failure,
        "operation": {
            "id": "gang-update-0",
            "type": "Update",
            "step": "Surge",
            "targetRevision": target,
            "startedAt": at,
            "surgeIndex": 2,
        },
    }
    marker: dict[str, Any] = {
        "index": 2,
        "incarnation": 1,
        "phase": "Creating",
        "targetRevision": target,
        "operation": {
            "id": "gang-update-target-2",
            "type": "Update",
            "step": "GangSurgeTargetCleanup",
            "targetRevision": target,
            "startedAt": at,
        },
    }
    status = {**world.replica.status, "instanceStatuses": [source, marker]}
    world = replace(world, replica=replace(world.replica, status=status))
    out = plan(world)
    written = [a for a in out.actions if isinstance(a, WriteStatus)][-1].status
    rows = {r["index"]: r for r in written["instanceStatuses"]}
    assert 2 not in rows, GO  # the cleanup marker goes with the reset
    row = rows[0]
    assert row["phase"] == "Failed", GO
    assert "operation" not in row, GO
    assert not row.get("runningRevision"), GO
    assert not row.get("targetRevision"), GO
    assert row["lastFailure"] == failure, GO
    # The seeded rows carry no ``announced`` record, so the pass also announces the gang-scheduler
    # advisory on row 0 (gang/gang.go EnsurePodGroupsWithState); Go's test drives the stamp alone.
    events = [a.event_reason for a in out.actions if isinstance(a, RecordEvent)]
    assert [e for e in events if e != "MaybeNoGangScheduler"] == ["GangSurgeAbandoned"], (GO, events)
