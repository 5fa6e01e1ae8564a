"""OME's ``workload/status/announced_test.go``: the row's ``announced`` record of once-only messages.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/announced_test.go`` @ 58a57f25 (the newer
of two stored versions, 11,258 characters, read whole; dcfb4135 is its first 6,970, the same nine tests
without ``TestAnnounceRepairWaiting_RecordsOncePerParkedAttempt``), over ``status/announced.go``
@ 4dfb96b1 (read whole): ``markAnnounced``, ``Announced``, ``announcementMarker`` and the episode rules.
Ours: :func:`omereconcile.planner.rows.mark_announced` and :func:`~omereconcile.planner.rows.announced`
on the planner's :class:`~omereconcile.planner.rows.Row`, the record a pass writes through
``planner/status.py`` ``settle_announcements`` (its callers: ``RepairRevisionGone``, pinned by
``test_workload_ops_restart.py``'s ``test_restart_holds_when_the_stamped_revision_is_gone``, and
``MaybeNoGangScheduler``, pinned below through the planner). The other ten cases (the per-row writer's
seam and ``AnnounceRepairWaiting``) are listed in ``docs/goparity.md`` with why.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from omereconcile.planner.rows import (
    CREATING,
    READY,
    Operation,
    Row,
    announced,
    mark_announced,
)
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/announced_test.go @ 58a57f25"
# Go's test constants: a standing reason and an attempt-scoped one (announced.go ``scopes``).
STANDING = "GangSplitRisk"
ATTEMPT = "PodGroupReset"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _op(op_id: str) -> Operation:
    return Operation(id=op_id, type="Create", step="CreatePods", target_revision="r", started_at=T0)


def _mark(row: Row, reason: str) -> tuple[Row, bool]:
    """Go ``markAnnounced(row, reason)``: the row after the call, and whether it recorded."""
    marked = mark_announced(row, reason)
    return (row, False) if marked is None else (marked, True)


def test_delivers_once_per_operation() -> None:
    """Go: TestAnnounce_DeliversOncePerOperation: an attempt-scoped message is recorded once per
    operation; a second delivery in the same episode is refused; one message's marker does not answer
    for another, and a different message is a second marker."""
    row = Row(index=0, phase=CREATING, operation=_op("create-0-1"))
    row, first = _mark(row, ATTEMPT)
    assert first, GO
    row, second = _mark(row, ATTEMPT)
    assert not second, GO
    assert announced(row, ATTEMPT), GO
    assert not announced(row, "DrainOverdue"), GO
    row, other = _mark(row, "DrainOverdue")
    assert other, GO
    assert len(row.announced) == 2, GO


def test_forgets_the_attempt_it_replaced() -> None:
    """Go: TestAnnounce_ForgetsTheAttemptItReplaced: a new operation is a new attempt episode; the old
    marker stops answering, the same message is delivered again, and the write collects the ended
    episode's marker."""
    row, _ = _mark(Row(index=0, phase=CREATING, operation=_op("create-0-1")), ATTEMPT)
    row = Row(index=0, phase=CREATING, operation=_op("update-0-2"), announced=row.announced)
    assert not announced(row, ATTEMPT), GO
    row, again = _mark(row, ATTEMPT)
    assert again, GO
    assert row.announced == (f"{ATTEMPT}@update-0-2",), GO


def test_standing_message_outlives_the_attempt() -> None:
    """Go: TestAnnounce_StandingMessageOutlivesTheAttempt: a standing message keys on the incarnation
    (``<reason>@#1``); an attempt concluding or opening neither re-delivers it nor drops its marker
    (an attempt-scoped write's prune keeps it), and only a rebuild (a new incarnation) starts a fresh
    episode, leaving the live attempt's marker and the new incarnation's."""
    row = Row(index=0, incarnation=1, phase=CREATING, operation=_op("create-0-1"))
    row, first = _mark(row, STANDING)
    assert first, GO
    assert row.announced[0] == f"{STANDING}@#1", GO
    row = Row(index=0, incarnation=1, phase=READY, announced=row.announced)  # the attempt concludes
    assert announced(row, STANDING), GO
    row = Row(index=0, incarnation=1, phase=READY, operation=_op("update-0-2"), announced=row.announced)
    row, attempt = _mark(row, ATTEMPT)
    assert attempt, GO
    assert announced(row, STANDING), (GO, row.announced)
    row = Row(index=0, incarnation=2, phase=READY, operation=_op("update-0-2"), announced=row.announced)
    assert not announced(row, STANDING), GO
    row, told = _mark(row, STANDING)
    assert told, GO
    assert len(row.announced) == 2, (GO, row.announced)


def test_attempt_message_with_no_operation_keys_on_incarnation() -> None:
    """Go: TestAnnounce_AttemptMessageWithNoOperationKeysOnIncarnation: an attempt-scoped message on a
    row with no operation keys on the incarnation (``<reason>@#3``), so a rebuilt Instance is told
    again."""
    row, first = _mark(Row(index=0, phase=READY, incarnation=3), ATTEMPT)
    assert first, GO
    assert row.announced[0] == f"{ATTEMPT}@#3", GO
    row = Row(index=0, phase=READY, incarnation=4, announced=row.announced)
    assert not announced(row, ATTEMPT), GO


def test_the_record_round_trips_through_the_status_row() -> None:
    """The record is the row's ``announced`` list (Go ``InstanceStatus.Announced``,
    ``json:"announced,omitempty"``): read back as written, and absent when empty. Not a Go case."""
    row, _ = _mark(Row(index=0, phase=READY, incarnation=3), ATTEMPT)
    written: dict[str, Any] = row.to_dict()
    assert written["announced"] == [f"{ATTEMPT}@#3"]
    assert Row.from_dict(written).announced == row.announced
    assert "announced" not in Row(index=0).to_dict()


def _gang_driver() -> tuple[Sim, Driver]:
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    return sim, driver


def _advisories(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "MaybeNoGangScheduler"]


def test_the_gang_scheduler_advisory_is_said_once_per_incarnation_of_its_row() -> None:
    """Through the planner: Go ``gang/gang.go`` @ 4dfb96b1 ``EnsurePodGroupsWithState`` announces
    ``MaybeNoGangScheduler`` (a standing message) on the row of the first Instance whose PodGroup the
    pass ensured, so a gang under the default scheduler is warned once, the marker
    ``MaybeNoGangScheduler@#<incarnation>`` stays on row 0 across later passes (and a restarted
    reconciler, which reads it back from the status), and a rebuild of Instance 0 (a new incarnation)
    is told again. Not a Go case of this file; its rule."""
    sim, driver = _gang_driver()
    assert len(_advisories(sim)) == 1, GO
    row0 = sim.rows()[0]
    # The gang also carries GangSplitRisk's marker (no topologyKey): another standing message.
    assert f"MaybeNoGangScheduler@#{row0['incarnation']}" in row0["announced"], GO
    for _ in range(3):
        driver.one_pass()
    assert len(_advisories(sim)) == 1, GO
    Driver(sim).one_pass()  # a restarted reconciler reads the record back from the status
    assert len(_advisories(sim)) == 1, GO
    del sim.pods["llama-pool-engine-0-worker-0"]  # a lost member: the gang is rebuilt whole
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    assert sim.rows()[0]["incarnation"] > row0["incarnation"], GO
    assert len(_advisories(sim)) == 2, GO
