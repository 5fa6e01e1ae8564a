"""OME's ``workload/escalation/budget_test.go``: the in-flight anchors of the rollout budgets.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/budget_test.go`` @ 4dfb96b1
(``budget.go`` @ 4dfb96b1, the newest of its three stored versions). ``TestCurrentSurgeInFlight`` and
``TestCurrentUnavailableInFlight`` are ported entry by entry onto
:func:`omereconcile.planner.rollout._in_flight`, the prior-pass anchor the planner projects each
fresh start against. Go counts InstanceStatuses; here they are :class:`Row` objects. Which of the
file's other tests have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.rollout import _in_flight
from omereconcile.simulate.cluster import T0

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1"


def _row(index: int, phase: str = R.READY, step: str | None = None, op: str = R.OP_UPDATE) -> R.Row:
    operation = None if step is None else R.Operation(f"op-{index}", op, step, "target", T0)
    return R.Row(index=index, phase=phase, operation=operation)


SURGE_CASES: list[tuple[str, list[R.Row], int]] = [
    ("empty", [], 0),
    ("no operation", [_row(0)], 0),
    ("one Surge step", [_row(0, R.UPDATING, "Surge")], 1),
    ("one SurgeDrain step", [_row(0, R.UPDATING, "SurgeDrain")], 1),
    ("one SurgeDrainSettle step", [_row(0, R.UPDATING, "SurgeDrainSettle")], 1),
    (
        "two surge variants and one in-place skipped",
        [
            _row(0, R.UPDATING, "Surge"),
            _row(1, R.UPDATING, "SurgeDrain"),
            _row(2, R.UPDATING, "InPlace"),
            _row(3, R.UPDATING, "Drain"),
        ],
        2,
    ),
]

UNAVAILABLE_CASES: list[tuple[str, list[R.Row], int]] = [
    ("empty", [], 0),
    ("Ready not counted", [_row(0)], 0),
    ("Updating + InPlace counted", [_row(0, R.UPDATING, "InPlace")], 1),
    ("Updating + Drain counted", [_row(0, R.UPDATING, "Drain")], 1),
    ("Updating + Surge skipped (no offline pod)", [_row(0, R.UPDATING, "Surge")], 0),
    ("Updating + SurgeDrain skipped", [_row(0, R.UPDATING, "SurgeDrain")], 0),
    ("Updating + SurgeDrainSettle skipped", [_row(0, R.UPDATING, "SurgeDrainSettle")], 0),
    ("Updating without Operation counted (defensive)", [_row(0, R.UPDATING)], 1),
    ("Failed update + Drain remains counted while retrying", [_row(0, R.FAILED, "Drain")], 1),
    ("Failed update + InPlace remains counted while retrying", [_row(0, R.FAILED, "InPlace")], 1),
    ("Failed update + Surge skipped because source remains online", [_row(0, R.FAILED, "Surge")], 0),
    ("Failed restart is outside the update budget", [_row(0, R.FAILED, "Drain", R.OP_RESTART)], 0),
    ("Failed without an operation is outside the in-flight budget", [_row(0, R.FAILED)], 0),
]


@pytest.mark.parametrize(("name", "rows", "want"), SURGE_CASES, ids=[c[0] for c in SURGE_CASES])
def test_current_surge_in_flight(name: str, rows: list[R.Row], want: int) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestCurrentSurgeInFlight, entry ``name``: only the surge steps hold an extra pod alive."""
    assert _in_flight(rows, surge=True) == want


@pytest.mark.parametrize(("name", "rows", "want"), UNAVAILABLE_CASES, ids=[c[0] for c in UNAVAILABLE_CASES])
def test_current_unavailable_in_flight(name: str, rows: list[R.Row], want: int) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestCurrentUnavailableInFlight, entry ``name``: Updating rows off the surge steps, and Failed rows
    whose Update operation is kept for the retry (the two "Failed update" entries failed before this
    port: the planner counted Updating rows only)."""
    assert _in_flight(rows, surge=False) == want
