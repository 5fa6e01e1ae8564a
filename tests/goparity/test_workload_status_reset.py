"""OME's ``workload/status/reset_test.go``: which parked attempts an operator reset clears.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/status/reset_test.go`` @ 8263d0c7, the newest of
three stored versions (dcfb4135, 5,050 characters; 58a57f25, 7,952: the same plus
``TestCloseSpentRepair``; 8263d0c7, 11,127: the same plus three ``TestClearFailedInstanceOperation``
entries for a parked Update attempt, ``TestResetOwnsOperation_ParkedUpdateAttempt`` and
``TestResetOwnsRow_RecreateEndedByTheGangVerdict``), over ``reset.go`` (``ResetOwnsOperation``,
``ClearFailedInstanceOperation``). Go applies the clearing mutation to one hand-built row; here the
same row (index 3, no live pod) goes to :func:`omereconcile.planner.reset.answer_reset` under
``ome.io/reset-instances: "3"`` and, when it is reset, :func:`~omereconcile.planner.reset.step_reset`
once the annotation is gone: cleared means the row ends ``Failed`` with no operation and its
``lastFailure`` and incarnation kept; refused means the row is left exactly as it was and the skip
names why. A "fresh-empty slot" (a row with no phase) cannot be read from our status, so it is the
index with no row.

Not ported here, not mappable (``docs/goparity.md``): the two seam-error cases (Go's ``MutateInstance``
adapter failing); the newest version's parked-Update shapes (three table entries and the two new
functions: the planner writes no Update attempt at step ``Parked`` and no ``PodGroupOwnershipConflict``
verdict, so no such row exists to reset); and ``TestCloseSpentRepair`` (6 entries: the planner clears
the operation when it fails an Instance, so no ``Failed`` row keeps a spent ``Restart`` to close).
"""

from __future__ import annotations

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.out import Out
from omereconcile.planner.reset import RESET_KEY, answer_reset, step_reset
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision, PodView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/status/reset_test.go @ 8263d0c7"
FAILURE = {"podName": "engine-3-0", "reason": "OOMKilled"}


def _ctx(annotated: bool) -> Ctx:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=4))
    if annotated:
        sim.annotate(RESET_KEY, "3")
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _parked(op_type: str) -> R.Operation:
    return R.Operation("op-3-1", op_type, "WaitReady", "", T0, deadline=T0)


def _cleared(row: R.Row | None) -> tuple[bool, str]:
    """(cleared, the skip event's text) for ``row`` at index 3 under a reset of 3."""
    rows = [row] if row is not None else []
    answer = answer_reset(_ctx(True), rows, {3: []})
    skip = " ".join(e.message for e in answer.events if e.event_reason == "InstancesResetSkipped")
    if row is None:
        return False, skip
    (journaled,) = answer.rows
    if journaled == row:
        return False, skip
    answered = _ctx(False)
    end = step_reset(answered, journaled, [], Out(answered.now))
    assert end.operation is None
    assert (end.phase, end.last_failure, end.incarnation) == (R.FAILED, row.last_failure, row.incarnation)
    return True, skip


@pytest.mark.parametrize(
    ("name", "row", "cleared", "why"),
    [
        (
            "failed with preserved Restart clears it",
            R.Row(index=3, incarnation=2, phase=R.FAILED, operation=_parked("Restart"), last_failure=FAILURE),
            True,
            "",
        ),
        (
            "failed with preserved Create clears it",
            R.Row(index=3, incarnation=1, phase=R.FAILED, operation=_parked("Create"), last_failure=FAILURE),
            True,
            "",
        ),
        (
            "failed with preserved Update is refused",
            R.Row(index=3, phase=R.FAILED, operation=_parked("Update"), last_failure=FAILURE),
            False,
            "3 (owned by Update)",
        ),
        (
            "failed with preserved Migrate is refused",
            R.Row(index=3, phase=R.FAILED, operation=_parked("Migrate")),
            False,
            "3 (owned by Migrate)",
        ),
        (
            "failed with preserved Delete is refused",
            R.Row(index=3, phase=R.FAILED, operation=_parked("Delete")),
            False,
            "3 (owned by Delete)",
        ),
        (
            "failed without operation writes nothing",
            R.Row(index=3, phase=R.FAILED, last_failure=FAILURE),
            False,
            "3 (nothing to reset)",
        ),
        (
            "non-failed with operation writes nothing",
            R.Row(index=3, phase=R.RESTARTING, operation=_parked("Restart")),
            False,
            "3 (Phase=Restarting)",
        ),
        ("fresh-empty slot writes nothing", None, False, "3 (no such instance)"),
    ],
)
def test_clear_failed_instance_operation(name: str, row: R.Row | None, cleared: bool, why: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/status/reset_test.go @ 8263d0c7,
    TestClearFailedInstanceOperation, entry ``name``: only a repair-owned operation (Create, Restart)
    of a Failed Instance is cleared; every other shape is left as it was."""
    got, skip = _cleared(row)
    assert got is cleared, name
    assert why in skip
    if cleared:
        assert skip == ""


def test_reset_owns_operation() -> None:
    """Go: … reset_test.go @ 8263d0c7, TestResetOwnsOperation: no operation, Create and Restart are
    reset-owned; Update, Migrate and Delete are not (read as which Failed rows a reset takes: a row
    with no operation and no pod has nothing to reset, so it is given a pod to delete)."""
    for op_type in ("Create", "Restart"):
        assert _cleared(R.Row(index=3, phase=R.FAILED, operation=_parked(op_type)))[0], op_type
    for op_type in ("Update", "Migrate", "Delete"):
        assert not _cleared(R.Row(index=3, phase=R.FAILED, operation=_parked(op_type)))[0], op_type
    name = "llama-pool-engine-3-default-0"
    pod = PodView(name=name, uid=f"uid-{name}", resource_version="1", labels={}, phase="Failed")
    answer = answer_reset(_ctx(True), [R.Row(index=3, phase=R.FAILED)], {3: [pod]})
    (row,) = answer.rows
    assert row.operation is not None
    assert row.operation.reason == "Reset"
