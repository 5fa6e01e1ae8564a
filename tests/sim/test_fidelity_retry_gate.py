"""A revision's retry ladder admits one attempt at a time (Go ``evaluateRetryBlockGate``)."""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged


def _op(sim: Sim, index: int) -> dict[str, object]:
    row = next(r for r in sim.rows() if r["index"] == index)
    return dict(row.get("operation") or {})


def _block_state(sim: Sim) -> str:
    return next((str(b.get("state")) for b in sim.status.get("retryBlocks") or []), "")


def test_a_retry_in_progress_admits_no_second_fresh_start() -> None:
    """``evaluateRetryBlockGate``: with the target's block ``RetryInProgress`` and an attempt at it in
    flight (``anyInFlightUpdateAt``), a fresh start is denied, whatever the budget. Instance 0,
    released by the partition while Instance 1's retry runs, waits until that attempt ends."""
    sim = Sim()
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    sim.update_spec(replicas=2, pacing={"partition": 1})
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    driver.floor = lambda s: 1
    sim.behaviour["vllm:v2"] = "crash"
    sim.image = "vllm:v2"
    # Instance 1 rolls and fails; its retry starts once the backoff is due.
    driver.run(
        lambda s: _block_state(s) == "RetryInProgress" and _op(s, 1).get("type") == "Update", limit=1800
    )
    retry_id = _op(sim, 1)["id"]
    sim.update_spec(pacing={"partition": 0})
    started_meanwhile: list[object] = []

    def instance_0_waits(s: Sim) -> None:
        if _op(s, 1).get("id") == retry_id and _op(s, 0):
            started_meanwhile.append(_op(s, 0))

    driver.extra_checks.append(instance_0_waits)
    driver.run(lambda s: _op(s, 1).get("id") != retry_id, limit=1800)
    assert started_meanwhile == []
