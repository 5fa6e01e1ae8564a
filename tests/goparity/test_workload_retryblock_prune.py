"""OME's ``workload/escalation/retryblock_prune_test.go``, through the pure planner in the sim.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/retryblock_prune_test.go`` @
4dfb96b1 (``retryblock_prune.go`` @ 4dfb96b1). Go records which blocks ``MutateRetryBlock`` is asked
to remove; here blocks are seeded into the sim's status, one planner pass runs, and the blocks the
pass writes back are read. No ``lifecycle.retryBlockHistoryLimit`` is set, so nothing else prunes.
``TestPruneSupersededRetryBlocks_NoSeamNoOp`` (a nil adapter seam) has no counterpart.
"""

from __future__ import annotations

from typing import Any

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged, rolled_back

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/retryblock_prune_test.go @ 4dfb96b1"
AT = "2025-01-01T00:00:00Z"


def _block(rev: str, state: str) -> dict[str, Any]:
    return {
        "targetRevision": rev,
        "state": state,
        "attemptsStarted": 1,
        "firstFailureAt": AT,
        "lastFailureAt": AT,
        "reason": "CrashLoopBackOff",
    }


def _ready_sim() -> tuple[Sim, Driver, str]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver, str(sim.status["currentRevision"])


def _kept(sim: Sim) -> list[str]:
    return [b["targetRevision"] for b in sim.status.get("retryBlocks") or []]


def test_multi_stale_batch_and_reconcile_prunes_superseded_block() -> None:
    """Go: ome-projects/ome …/retryblock_prune_test.go @ 4dfb96b1,
    TestPruneSupersededRetryBlocks_MultiStaleBatch and TestReconcile_PrunesSupersededRetryBlock: every
    stale block goes in one pass whatever its state; the current revision's stays."""
    sim, driver, current = _ready_sim()
    sim.status["retryBlocks"] = [
        _block("own-engine-stale001", "Held"),
        _block(current, "Backoff"),
        _block("own-engine-stale002", "Backoff"),
        _block("own-engine-stale003", "RetryInProgress"),
    ]
    driver.one_pass()
    assert _kept(sim) == [current]


def test_keep_set_matrix() -> None:
    """Go: ome-projects/ome …/retryblock_prune_test.go @ 4dfb96b1, TestPruneSupersededRetryBlocks_KeepSetMatrix:
    blocks naming the current revision, the update revision and the roll target (a rollback pin,
    also the in-flight operation's target) stay; one naming none of them goes."""
    sim, driver, v1 = _ready_sim()
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == v2)
    sim.update_spec(pacing={"rollbackToRevision": v1})
    driver.run(lambda s: any((r.get("operation") or {}).get("targetRevision") == v1 for r in s.rows()))
    sim.status["retryBlocks"] = [
        _block(v2, "Held"),
        _block(v1, "Held"),
        _block("own-engine-stale001", "Held"),
    ]
    driver.one_pass()
    assert sorted(_kept(sim)) == sorted([v1, v2])
    driver.run(lambda s: rolled_back(s, v1))


def test_paused_no_superseded_prune() -> None:
    """Go: ome-projects/ome …/retryblock_prune_test.go @ 4dfb96b1, TestReconcile_Paused_NoSupersededPrune."""
    sim, driver, _ = _ready_sim()
    sim.update_spec(paused=True)
    driver.one_pass()
    sim.status["retryBlocks"] = [_block("own-engine-stale001", "Held")]
    driver.one_pass()
    assert _kept(sim) == ["own-engine-stale001"]


def test_teardown_no_superseded_prune() -> None:
    """Go: ome-projects/ome …/retryblock_prune_test.go @ 4dfb96b1, TestReconcile_Teardown_NoSupersededPrune."""
    sim, driver, _ = _ready_sim()
    sim.status["retryBlocks"] = [_block("own-engine-stale001", "Held")]
    sim.delete_replica()
    driver.one_pass()
    assert sim.replica is not None
    assert _kept(sim) == ["own-engine-stale001"]
