"""OME's ``workload/status/decision_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/decision_test.go`` @ 8263d0c7, the newest
of three stored versions (4dfb96b1, 6,946 characters; 8263d0c7, 32,626, its text plus the
attempt-ending, parked-attempt, restart and ladder stamps; the middle one was not read: the newest
contains the oldest); ``decision.go``
``DemoteUnbacked``, ``StampFailed``, ``StampFailedKeepingOperation``, ``StampRestarting`` and
``entryStampAttemptStarted`` (``decision.go`` @ 8263d0c7, 36,330 characters, read whole). Go applies
each stamp to a hand-built row through its per-row writer; here the stamps with a whole-replica
counterpart are driven in the simulated world (or one pure planner pass over its observation with
the status seeded): what the row reads once a pass made that decision. The other cases are listed in
``docs/goparity.md`` (per-row writer guards that the planner, which writes the whole status under the
replica's resourceVersion, does not have; the parked Update attempt and the spent Restart kept on a
Failed row, which it does not write; the crash-loop park it does not build).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import Plan, WriteStatus
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7"
POD0 = "llama-pool-engine-0-default-0"


def test_demote_unbacked_keeps_everything_but_the_phase() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestDemoteUnbacked_KeepsARowAnOperationClaimed (its first half: the second, a row an operation
    claimed between selection and write, is a per-row writer guard): a Ready row with no operation
    whose pods are all gone is written ``Pending`` with its incarnation and running revision kept.
    ``DemoteUnbacked`` is the truth pass's write, which Go's ``Plan`` selects only while paused
    (unpaused, the Create pass rebuilds the row in the same pass), so the replica is paused first."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    sim.update_spec(paused=True)
    driver.one_pass()
    before = dict(sim.rows()[0])
    assert before["phase"] == "Ready"
    sim.pods.pop(POD0)  # gone at once, as a force-deleted pod is
    driver.one_pass()
    row = sim.rows()[0]
    assert row["phase"] == "Pending"
    assert (row["incarnation"], row["runningRevision"]) == (before["incarnation"], before["runningRevision"])
    assert "operation" not in row
    assert sim.rows()[1]["phase"] == "Ready"


def _ready(**spec: Any) -> tuple[Sim, Driver]:
    sim = Sim(workers=int(spec.pop("workers", 0)))
    sim.apply_replica(base_replica(replicas=1, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _until(sim: Sim, driver: Driver, done: Any, step: float = 1.0, passes: int = 600) -> None:
    for _ in range(passes):
        driver.one_pass()
        if done(sim.rows()[0]):
            return
        sim.advance(step)
    raise AssertionError(f"never reached: {sim.rows()[0]}")


def test_stamp_failed_ends_the_attempt_with_its_record() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestStampFailed_NeverResurrectsAnEmptySlot (its first two calls; the appended empty slot is a
    per-row writer guard): an Instance whose Update attempt fails is written ``Failed`` with the
    operation cleared and the failure on ``lastFailure`` in the same write, and a later pass that
    decides the same failure writes nothing new (the record, its time included, is kept). Driven: a
    RecreatePod roll to an image that cannot be pulled, no retry policy (the first failure holds)."""
    sim, driver = _ready(lifecycle={"updateStrategy": {"type": "RecreatePod"}})
    sim.behaviour["vllm:bad"] = "imagepull"
    sim.image = "vllm:bad"
    _until(sim, driver, lambda r: r["phase"] != "Ready")
    assert sim.rows()[0]["phase"] == "Updating"
    _until(sim, driver, lambda r: r["phase"] == "Failed")
    row = sim.rows()[0]
    assert "operation" not in row, GO
    assert row["lastFailure"]["reason"] == "ImagePullBackOff", GO
    for _ in range(5):
        sim.advance(5)
        driver.one_pass()
    again = sim.rows()[0]
    assert again["phase"] == "Failed", GO
    assert "operation" not in again, GO
    assert again["lastFailure"] == row["lastFailure"], GO


def test_stamp_failed_keeping_operation_on_an_expired_restart() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestStampFailedKeepingOperation_KeepsTheOperationOnTheRow (its first call; the no-op calls on an
    already-Failed row, a concluded row and an appended slot are per-row writer guards): the deadline
    backstop writes ``Failed`` with the operation left in place, so an operator reading the row sees
    what was in flight when the clock ran out. Driven: a leader+worker Instance under
    ``instanceReadyTimeout: 2m`` loses its worker, and the rebuilt worker never becomes ready. Was a
    strict xfail (ours cleared the operation, ``steps.fail``); fixed by Go's rule in goY
    (``steps.check_failure`` keeps a Restart's operation; the row is then a spent repair,
    ``planner/restart.py``)."""
    sim, driver = _ready(workers=1, lifecycle={"instanceReadyTimeout": "2m"})
    sim.worker_behaviour[sim.image] = "never"
    sim.pods.pop(next(n for n in sim.pods if "-worker-" in n))
    _until(sim, driver, lambda r: r["phase"] == "Restarting")
    _until(sim, driver, lambda r: r["phase"] == "Failed", step=10)
    row = sim.rows()[0]
    assert row["lastFailure"], GO
    assert (row.get("operation") or {}).get("type") == "Restart", GO


def test_stamp_restarting_over_a_ready_row_starts_the_retry_count_at_zero() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestStampRestarting_ContinuesASpentRepairsRetryCount, row 1 (the two others are rows the planner
    never writes: a Failed row keeping its spent Restart, and one keeping an Update): a Restart opened
    on a Ready row is ``Restarting`` at the next incarnation under a ``Restart`` operation whose retry
    count starts at zero. Driven: a leader+worker Instance (its default restart policy recreates the
    whole Instance) loses its worker."""
    sim, driver = _ready(workers=1)
    before = sim.rows()[0]
    sim.pods.pop(next(n for n in sim.pods if "-worker-" in n))
    _until(sim, driver, lambda r: r["phase"] != "Ready")
    row = sim.rows()[0]
    assert row["phase"] == "Restarting", GO
    assert row["incarnation"] == before["incarnation"] + 1, GO
    op = row["operation"]
    assert op["type"] == "Restart", GO
    assert op.get("retryCount", 0) == 0, GO


def test_stamp_restart_revision_records_the_revision_an_open_repair_rebuilds_at() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestStampRestartRevision_OnlyAnOpenRepairRecordsIt, row 0 (rows 1-3 are the stamp's guards against
    rows another pass owns): the running revision of a ``Restarting`` row is moved to the revision its
    repair rebuilds at, written before the first pod of the rebuild. Its caller (``ops/restart.go``
    ``rebuildFollowsTarget``) records the roll target when the open repair has created no pod yet and
    the row is off a target the roll could start on. Driven: a leader+worker Instance loses its worker
    (a Restart opens), the image changes while the old pods drain; the rebuilt pods are the target's,
    the row names the target once the rebuild starts, and the Instance is Ready on it with no second
    roll. Failed before: ours rebuilt the gang at the old revision, then surged it to the target."""
    sim, driver = _ready(workers=1)
    old = sim.rows()[0]["runningRevision"]
    sim.pods.pop(next(n for n in sim.pods if "-worker-" in n))
    driver.one_pass()
    assert sim.rows()[0]["phase"] == "Restarting"
    sim.image = "vllm:v2"
    steps: list[tuple[str, str | None, str]] = []
    for _ in range(120):
        driver.one_pass()
        row = sim.rows()[0]
        step = (row["phase"], (row.get("operation") or {}).get("type"), row.get("runningRevision", ""))
        if not steps or steps[-1] != step:
            steps.append(step)
        if converged(sim) and row["phase"] == "Ready" and row.get("runningRevision") != old:
            break
        sim.advance(1)
    target = str(sim.status["updateRevision"])
    assert target != old
    assert ("Restarting", "Restart", target) in steps, (GO, steps)
    assert all(kind != "Update" for _, kind, _ in steps), (GO, steps)
    row = sim.rows()[0]
    assert (row["phase"], row["runningRevision"], row["incarnation"]) == ("Ready", target, 2), GO
    hashes = {p.obj["metadata"]["labels"]["ome.io/revision-hash"] for p in sim.pods.values()}
    assert hashes == {target.rsplit("-", 1)[-1]}, (GO, hashes)


# TestEntryStamps_LadderFlipFollowsTheAttempt: each Update entry stamp (surge, recreate, in-place) x
# three timings. ``opened_ago`` 0: the pass opens the attempt; otherwise the attempt in flight opened
# that long before the pass. ``due_in``: when the Backoff block falls due, relative to the pass.
STAMPS = [
    pytest.param("SurgeThenDrain", "Surge", id="surge"),
    pytest.param("RecreatePod", "Drain", id="recreate"),
    pytest.param("InPlaceIfPossible", "InPlace", id="in-place"),
]
TIMINGS = [
    pytest.param(0, -1, True, id="the pass that opens the attempt flips the due block"),
    pytest.param(5, -10, True, id="an attempt opened once the block was due lands the owed flip"),
    pytest.param(600, 20, False, id="an attempt open since before the failure leaves the block in Backoff"),
]


def _written(out: Plan, world: World) -> dict[str, Any]:
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    return dict(written[-1].status) if written else dict(world.replica.status)


@pytest.mark.parametrize(("strategy", "step"), STAMPS)
@pytest.mark.parametrize(("opened_ago", "due_in", "flips"), TIMINGS)
def test_entry_stamps_ladder_flip_follows_the_attempt(
    strategy: str, step: str, opened_ago: int, due_in: int, flips: bool
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/decision_test.go @ 8263d0c7,
    TestEntryStamps_LadderFlipFollowsTheAttempt (each stamp x each case; ``decision.go``
    ``entryStampAttemptStarted``): the pass that opens an Update attempt flips a due ``Backoff`` block
    to ``RetryInProgress``; a later pass of an attempt opened once the block was due lands that flip;
    a later pass of an attempt open since before the block's failure starts nothing on the ladder. A
    stamp counts no failure. One pure planner pass over a single-pod Instance rolling v1 to v2, the
    row (when in flight) journaled with the attempt's start moved back and the block seeded."""
    sim, driver = _ready(lifecycle={"updateStrategy": {"type": strategy}})
    sim.image = "vllm:v2"
    if opened_ago:
        driver.one_pass()  # the attempt opens
    world = sim.observe()
    world = replace(world, now=world.now.replace(microsecond=0))
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    target = desired.name
    status = dict(world.replica.status)
    rows = [dict(r) for r in status["instanceStatuses"]]
    if opened_ago:
        op = dict(rows[0]["operation"])
        assert (op["type"], op["step"], op["targetRevision"]) == ("Update", step, target)
        opened = format_time(world.now - timedelta(seconds=opened_ago))
        rows[0]["operation"] = {**op, "startedAt": opened, "lastProgressAt": opened}
    failed = format_time(world.now - timedelta(minutes=1))
    status["instanceStatuses"] = rows
    status["retryBlocks"] = [
        {
            "targetRevision": target,
            "state": "Backoff",
            "attemptsStarted": 1,
            "firstFailureAt": failed,
            "lastFailureAt": failed,
            "nextRetryAt": format_time(world.now + timedelta(seconds=due_in)),
            "reason": "CrashLoopBackOff",
        }
    ]
    world = replace(world, replica=replace(world.replica, status=status))
    after = _written(plan(world), world)
    row = next(r for r in after["instanceStatuses"] if r["index"] == 0)
    assert (row["operation"]["type"], row["operation"]["step"]) == ("Update", step)
    block = next(b for b in after["retryBlocks"] if b["targetRevision"] == target)
    assert (block["state"] == "RetryInProgress") is flips, (GO, block)
    assert block["attemptsStarted"] == 1, GO
