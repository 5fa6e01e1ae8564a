"""OME's ``workload/holds/pause_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/pause_test.go`` @ 4dfb96b1 (the one
stored version; ``pause.go`` @ dcfb4135). Go applies the pause authority to seeded rows and reads
each row's ``operation.waiting``; here the rows are seeded into the sim's status beside live pods,
one planner pass runs, and the ``waiting`` the pass writes is read. ``OwnerMigrate`` has no
counterpart (the planner journals no Migrate operation).
"""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/pause_test.go @ 4dfb96b1"


def _op(op_id: str, type_: str, step: str, rev: str, waiting: str = "") -> dict[str, Any]:
    op: dict[str, Any] = {
        "id": op_id,
        "type": type_,
        "step": step,
        "targetRevision": rev,
        "startedAt": "2025-01-01T00:00:00Z",
    }
    if waiting:
        op["waiting"] = waiting
    return op


def _seeded(pause_mode: str, held_waiting: str = "") -> tuple[Sim, Driver]:
    """Go's build(): 0 an Update in flight, 1 a Delete draining, 2 idle Ready, 3 a committed Create,
    4 a Restart at Drain; every row backed by its live pod."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=5))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 5)
    rev = sim.status["currentRevision"]
    sim.update_spec(replicas=4, paused=True, pauseMode=pause_mode)
    rows = {r["index"]: r for r in sim.status["instanceStatuses"]}
    rows[0].update(phase="Updating", operation=_op("update-0", "Update", "Surge", rev, held_waiting))
    rows[1].update(phase="Deleting", operation=_op("delete-1", "Delete", "Drain", ""))
    rows[3].update(phase="Creating", operation=_op("create-3", "Create", "CreatePods", rev))
    # The Restart is at its Drain step: its row is one incarnation past the pod it drains (a Restart
    # whose pod already carries the row's incarnation has drained and recreated, and promotes).
    rows[4].update(
        phase="Restarting",
        incarnation=rows[4]["incarnation"] + 1,
        operation=_op("restart-4", "Restart", "Drain", rev),
    )
    return sim, driver


def _waiting(sim: Sim, index: int) -> str:
    row = next((r for r in sim.rows() if r["index"] == index), None)
    return str(((row or {}).get("operation") or {}).get("waiting") or "")


def test_paused_records_the_hold() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/pause_test.go @ 4dfb96b1,
    TestPause_RecordsAndReleasesTheHold, "paused records the hold": the Update is held; the Delete,
    the idle row, the committed Create and the Restart (standard pause) carry no token."""
    sim, driver = _seeded("Recover")
    driver.one_pass()
    assert [_waiting(sim, i) for i in range(5)] == ["Paused", "", "", "", ""]


def test_a_frozen_pause_holds_the_repair_too() -> None:
    """Go: … pause_test.go @ 4dfb96b1, TestPause_RecordsAndReleasesTheHold, "a frozen pause holds
    the repair too": the Restart is held, the committed Create still is not."""
    sim, driver = _seeded("Freeze")
    driver.one_pass()
    assert (_waiting(sim, 4), _waiting(sim, 3)) == ("Paused", "")


def test_another_authority_keeps_the_row() -> None:
    """Go: … pause_test.go @ 4dfb96b1, TestPause_RecordsAndReleasesTheHold, "another authority keeps
    the row": a quota-held attempt keeps the quota token under a pause."""
    sim, driver = _seeded("Recover", held_waiting="QuotaExceeded")
    driver.one_pass()
    assert _waiting(sim, 0) == "QuotaExceeded"


def test_unpause_releases_the_hold() -> None:
    """Go: … pause_test.go @ 4dfb96b1, TestPause_RecordsAndReleasesTheHold, "unpause releases the
    hold": the pause token is cleared once the pause is lifted."""
    sim, driver = _seeded("Recover", held_waiting="Paused")
    sim.update_spec(paused=False)
    driver.one_pass()
    assert _waiting(sim, 0) == ""


def test_a_pause_the_owner_does_not_hold_keeps_the_token_it_left() -> None:
    """Go: … pause_test.go @ 4dfb96b1, TestPause_RecordsAndReleasesTheHold, "a pause the owner does
    not hold keeps the token it left": a committed Create carrying the episode's token keeps it while
    the pause is in force."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    rev = sim.status["currentRevision"]
    sim.update_spec(paused=True)
    row = sim.status["instanceStatuses"][0]
    row.update(phase="Creating", operation=_op("create-0", "Create", "CreatePods", rev, "Paused"))
    sim.pods.pop("llama-pool-engine-0-default-0")  # the set is still being made: no promotion this pass
    driver.one_pass()
    assert sim.rows()[0]["phase"] == "Creating"
    assert _waiting(sim, 0) == "Paused"


@pytest.mark.parametrize(
    ("owner", "freeze", "held"),
    [
        ("None", False, False),
        ("Delete", False, False),
        ("Create", False, False),
        ("Restart", False, False),
        ("Restart", True, True),
        ("Update", False, True),
    ],
)
def test_pause_held_operation_owners(owner: str, freeze: bool, held: bool) -> None:
    """Go: … pause_test.go @ 4dfb96b1, TestPauseHeldOperation_Owners (6 of its 7 entries; OwnerMigrate
    has no counterpart): which owners a pause stands in front of, read as the token one pass writes."""
    sim, driver = _seeded("Freeze" if freeze else "Recover")
    index = {"None": 2, "Delete": 1, "Create": 3, "Restart": 4, "Update": 0}[owner]
    driver.one_pass()
    assert (_waiting(sim, index) == "Paused") is held
