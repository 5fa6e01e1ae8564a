"""OME's ``workload/escalation/budget_test.go``: the in-flight anchors of the rollout budgets.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/budget_test.go`` @ 4dfb96b1
(``budget.go`` @ 4dfb96b1, the newest of its three stored versions). ``TestCurrentSurgeInFlight`` and
``TestCurrentUnavailableInFlight`` are ported entry by entry onto
:func:`omereconcile.planner.rollout._in_flight`, the prior-pass anchor the planner projects each
fresh start against. Go counts InstanceStatuses; here they are :class:`Row` objects. Which of the
file's other tests have no counterpart, and why, is in ``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.budgets import resolve_budget
from omereconcile.planner.rollout import _in_flight
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision

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


# PerComponentMax{Surge,Unavailable}Budget: ours is :func:`omereconcile.planner.budgets.resolve_budget`
# (Go's BudgetNoLimit is None). Entries: (name, value, replicas, want).
NO_LIMIT = None
SURGE_INT: list[tuple[str, int | str | None, int, int | None]] = [
    ("nil RollingUpdate returns BudgetNoLimit", None, 4, NO_LIMIT),
    ("nil MaxSurge returns BudgetNoLimit", None, 4, NO_LIMIT),
    ("MaxSurge=1 returns 1 regardless of replicas", 1, 5, 1),
    ("MaxSurge=0 returns 0 (no surge allowed by this layer)", 0, 5, 0),
    ("negative MaxSurge clamps to 0 (defensive)", -3, 5, 0),
    ("MaxSurge=N permitted larger than replicas", 10, 3, 10),
]
SURGE_PCT: list[tuple[str, int | str | None, int, int | None]] = [
    ("25% on 4 replicas → 1 (ceil)", "25%", 4, 1),
    ("25% on 8 replicas → 2", "25%", 8, 2),
    ("50% on 10 replicas → 5", "50%", 10, 5),
    ("100% on 4 replicas → 4 (capped at total)", "100%", 4, 4),
    ("0% on N replicas → 0", "0%", 10, 0),
    ("33% on 6 replicas → 2 (ceil of 1.98)", "33%", 6, 2),
    ("1% on 1 replica → 1 (ceil of 0.01)", "1%", 1, 1),
    ("25% on 0 replicas → 0 (zero base)", "25%", 0, 0),
    ("150% clamps to 100% → equals replicas", "150%", 5, 5),
]
UNAVAILABLE_INT: list[tuple[str, int | str | None, int, int | None]] = [
    ("nil RollingUpdate returns BudgetNoLimit", None, 4, NO_LIMIT),
    ("nil MaxUnavailable returns BudgetNoLimit", None, 4, NO_LIMIT),
    ("MaxUnavailable=2 returns 2", 2, 5, 2),
    ("MaxUnavailable=0 returns 0", 0, 5, 0),
]
UNAVAILABLE_PCT: list[tuple[str, int | str | None, int, int | None]] = [
    ("25% on 4 replicas → 1 (exact)", "25%", 4, 1),
    ("33% on 6 replicas → 2 (ceil of 1.98)", "33%", 6, 2),
    ("1% on 1 replica → 1 (ceil of 0.01)", "1%", 1, 1),
    ("0% on N replicas → 0", "0%", 10, 0),
]
BUDGET_TABLES = [
    ("TestPerComponentMaxSurgeBudget_Integer", SURGE_INT),
    ("TestPerComponentMaxSurgeBudget_Percent", SURGE_PCT),
    ("TestPerComponentMaxUnavailableBudget_Integer", UNAVAILABLE_INT),
    ("TestPerComponentMaxUnavailableBudget_Percent", UNAVAILABLE_PCT),
]
BUDGET_CASES = [(test, *entry) for test, table in BUDGET_TABLES for entry in table]


@pytest.mark.parametrize(
    ("test", "name", "value", "replicas", "want"),
    BUDGET_CASES,
    ids=[f"{c[0]}/{c[1]}" for c in BUDGET_CASES],
)
def test_per_component_budget(
    test: str, name: str, value: int | str | None, replicas: int, want: int | None
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    ``test``, entry ``name``: an integer is itself (floored at 0, never capped), a percentage rounds
    up and is capped at the replica count, unset is no cap. "150% clamps to 100%" failed before this
    port (ours resolved 8 surge slots for 5 Instances)."""
    assert resolve_budget(value, replicas) == want


# The dispatcher tests: Go calls ``workload.Reconcile`` once on hand-made InstanceStatuses and counts
# which indices it mutated; here a converged replica in the sim rolls to a new image and one pass of
# the planner shows which Instances it started (a row carrying an Update operation).


def _converged(replicas: int, lifecycle: dict[str, Any], workers: int = 0) -> tuple[Sim, Driver]:
    sim = Sim(workers=workers) if workers else Sim()
    sim.apply_replica(base_replica(replicas=replicas, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def _new_image(sim: Sim) -> str:
    sim.image = "vllm:v2"
    rendered = sim.render()
    assert isinstance(rendered, DesiredRevision)
    return rendered.name


def _started(sim: Sim) -> dict[int, dict[str, Any]]:
    """Rows that carry an Update operation, by index (the source rows of a surge, not its target)."""
    return {
        r["index"]: r["operation"]
        for r in sim.rows()
        if r.get("operation", {}).get("type") == "Update" and r["operation"].get("step") != "GangSurgeTarget"
    }


def test_reconcile_per_component_max_surge_denies_at_budget() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestReconcile_PerComponentMaxSurge_DeniesAtBudget: three Instances, ``maxSurge: 1``, Instance 0
    already at step Surge from a prior pass: Instances 1 and 2 are not started and the pass asks to
    be woken again."""
    sim, driver = _converged(3, {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    _new_image(sim)
    driver.one_pass()
    assert list(_started(sim)) == [0]
    assert _started(sim)[0]["step"] == "Surge"
    plan = driver.one_pass()
    assert list(_started(sim)) == [0]
    assert plan.requeue_after is not None  # no hold is published while Instance 0's surge runs


def test_reconcile_per_component_max_surge_allows_within_budget() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestReconcile_PerComponentMaxSurge_AllowsWithinBudget: three Ready Instances on the prior
    revision, ``maxSurge: 1``, nothing in flight: exactly one Instance is started this pass."""
    sim, driver = _converged(3, {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}})
    _new_image(sim)
    driver.one_pass()
    assert len(_started(sim)) == 1


def test_reconcile_per_component_budget_percent_form() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestReconcile_PerComponentBudget_PercentForm: ``maxSurge: 25%`` on four Instances is a budget of
    1, so exactly one fresh start."""
    sim, driver = _converged(4, {"updateStrategy": {"rollingUpdate": {"maxSurge": "25%"}}})
    _new_image(sim)
    driver.one_pass()
    assert len(_started(sim)) == 1


def test_reconcile_failed_update_holds_max_unavailable_budget() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestReconcile_FailedUpdateHoldsMaxUnavailableBudget (the two-replica outage regression):
    RecreatePod with ``maxUnavailable: 1`` on two Instances; the first update's replacement never
    serves, the update fails and is retried: through the failure, the backoff and every retry, the
    other Instance keeps its pod and is not started. It failed before this port: ours dropped the
    failed Update from the budget, so the first retry took Instance 1 down beside Instance 0. The retry
    is an Update, as Go's is (its "preserved Update/Drain operation" retries; the update trigger reads a
    Failed row off the target as Ready, ``ops/update.go`` ``evaluateUpdateTriggerFast``); ours retried
    through Create's recycle (``Creating``) until ``rollout._failed_row_rolls``."""
    lc = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim, driver = _converged(2, lc)
    sim.behaviour["vllm:v2"] = "crash"
    _new_image(sim)
    driver.one_pass()
    assert list(_started(sim)) == [0]
    sim.advance(0.5)
    other = "llama-pool-engine-1-default-0"
    uid = sim.pods[other].obj["metadata"]["uid"]
    phases: list[str] = []
    end = sim.now + timedelta(minutes=10)
    while sim.now < end:
        plan = driver.one_pass()
        rows = {r["index"]: r for r in sim.rows()}
        if not phases or phases[-1] != rows[0]["phase"]:
            phases.append(rows[0]["phase"])
        assert rows[1]["phase"] == "Ready", rows[1]
        assert "operation" not in rows[1], rows[1]
        assert sim.pods[other].obj["metadata"]["uid"] == uid
        assert sim.pods[other].gone_at is None
        sim.advance(plan.requeue_after or 5)
    retries = sum(1 for a, b in pairwise(phases) if (a, b) == ("Failed", "Updating"))
    assert retries >= 2, phases  # it failed and was retried, more than once


def test_reconcile_concurrent_gang_surge_distinct_indices() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/escalation/budget_test.go @ 4dfb96b1,
    TestReconcile_ConcurrentGangSurge_DistinctIndices: three leader+worker gangs, ``maxSurge: 2``: two
    gangs start a surge in the same pass, each at its own surge index, none of them a steady index."""
    sim, driver = _converged(3, {"updateStrategy": {"rollingUpdate": {"maxSurge": 2}}}, workers=1)
    _new_image(sim)
    driver.one_pass()
    stamped = {i: op["surgeIndex"] for i, op in _started(sim).items()}
    assert len(stamped) >= 2, stamped
    assert all(s >= 3 for s in stamped.values()), stamped
    assert len(set(stamped.values())) == len(stamped), stamped
