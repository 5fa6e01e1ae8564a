"""OME's ``workload/ops/create_retryblock_test.go``: the RetryBlock gate on the Create pass.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/create_retryblock_test.go`` @ ae683e3f
(12,515 characters, the one stored version, read whole), over ``ops/create.go`` ``Create``
(``allowCreateForMissingInstance``) and ``evaluateRetryBlockGate``. A create disposed by its deadline
leaves the Instance ``Failed`` with no operation: a fresh start, which without the gate would
re-materialize pods at the same bad revision forever. The gate applies only to such fresh starts
(and to an index with no status row) and only when a block for the create's target exists. Go runs
``Create`` against a fake client with the block list seeded; ours is one pure planner pass
(``planner.plan``) over the simulated world's observation with the replica's ``status.retryBlocks``
and ``instanceStatuses`` seeded and no pods standing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

from omereconcile.actions import CreatePod, Plan, RecordEvent, WriteStatus
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f"


def _world(replicas: int, rows: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> World:
    """A converged replica of ``replicas`` Instances whose status is replaced by ``rows`` and
    ``blocks``, with no pod standing (the disposed create's pods are gone)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    world = sim.observe()
    status = dict(world.replica.status)
    status["instanceStatuses"] = rows
    status["retryBlocks"] = blocks
    # Status times have whole seconds; the pass runs on one too, as a real clock's would round.
    now = world.now.replace(microsecond=0)
    return replace(world, now=now, pods=(), replica=replace(world.replica, status=status))


def _target(world: World) -> str:
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return desired.name


def _disposed(index: int, target: str) -> dict[str, Any]:
    """Go's ``disposedFreshStart``: Failed with no operation."""
    return {
        "index": index,
        "incarnation": 1,
        "phase": "Failed",
        "targetRevision": target,
        "runningRevision": target,
    }


def _block(
    world: World, target: str, state: str, attempts: int = 1, next_in: float | None = None
) -> dict[str, Any]:
    block: dict[str, Any] = {
        "targetRevision": target,
        "state": state,
        "attemptsStarted": attempts,
        "firstFailureAt": format_time(world.now - timedelta(minutes=5)),
        "lastFailureAt": format_time(world.now - timedelta(minutes=1)),
        "reason": "ImagePullBackOff",
    }
    if next_in is not None:
        block["nextRetryAt"] = format_time(world.now + timedelta(seconds=next_in))
    return block


def _creates(out: Plan) -> list[str]:
    return [a.name for a in out.actions if isinstance(a, CreatePod)]


def _status(out: Plan) -> dict[str, Any] | None:
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    return dict(written[-1].status) if written else None


def _rows(out: Plan) -> list[dict[str, Any]]:
    status = _status(out)
    return list((status or {}).get("instanceStatuses", []))


def _blocks(out: Plan) -> dict[str, dict[str, Any]]:
    status = _status(out)
    return {b["targetRevision"]: b for b in (status or {}).get("retryBlocks", [])}


def _with(world: World, rows: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> World:
    status = dict(world.replica.status)
    status["instanceStatuses"] = rows
    status["retryBlocks"] = blocks
    return replace(world, replica=replace(world.replica, status=status))


def test_held_block_denies_a_fresh_start() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_RetryBlockHeld_DeniesFreshStart: a Held block for the target denies re-materializing a
    disposed fresh start, pass after pass: no pod, the row left Failed with no operation, no requeue
    (Held has no time bound) and no second RetryHeld Warning."""
    world = _world(1, [], [])
    target = _target(world)
    world = _with(world, [_disposed(0, target)], [_block(world, target, "Held")])
    for _ in range(2):
        out = plan(world)
        assert _creates(out) == [], GO
        rows = _rows(out) or [_disposed(0, target)]
        assert [(r["phase"], r.get("operation")) for r in rows] == [("Failed", None)], GO
        assert out.requeue_after is None
        assert "RetryHeld" not in [a.event_reason for a in out.actions if isinstance(a, RecordEvent)]


def test_held_block_denies_a_scale_up_with_no_status() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_NoStatusHeldBlock_Denied: a Held block also gates an Instance with no status row:
    scaling up onto a held revision would materialize the same wedged pods."""
    world = _world(1, [], [])
    target = _target(world)
    world = _with(world, [], [_block(world, target, "Held")])
    out = plan(world)
    assert _creates(out) == [], GO
    assert out.requeue_after is None


def test_block_for_another_revision_allows() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_RetryBlockOtherRevision_Allows: a block for a different revision does not gate the
    create toward the current target: one pod, the row Creating, the block untouched."""
    world = _world(1, [], [])
    target = _target(world)
    other = _block(world, "llama-pool-engine-0ther0ne", "Held")
    world = _with(world, [_disposed(0, target)], [other])
    out = plan(world)
    assert len(_creates(out)) == 1, GO
    assert [r["phase"] for r in _rows(out)] == ["Creating"]
    assert target not in _blocks(out)


def test_backoff_not_due_requeues_at_next_retry() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_RetryBlockBackoffNotDue_Requeues: a Backoff not yet due denies the create and wakes the
    pass exactly when it falls due (37 s), the block untouched."""
    world = _world(1, [], [])
    target = _target(world)
    block = _block(world, target, "Backoff", next_in=37)
    world = _with(world, [_disposed(0, target)], [block])
    out = plan(world)
    assert _creates(out) == [], GO
    assert out.requeue_after == 37, GO
    assert _blocks(out).get(target, block)["state"] == "Backoff"


def test_backoff_due_allows_and_flips() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_RetryBlockBackoffDue_AllowsAndFlips: a due Backoff lets the create start (one pod, the
    row Creating) and the attempt flips the block to RetryInProgress."""
    world = _world(1, [], [])
    target = _target(world)
    world = _with(world, [_disposed(0, target)], [_block(world, target, "Backoff", next_in=-1)])
    out = plan(world)
    assert len(_creates(out)) == 1, GO
    assert [r["phase"] for r in _rows(out)] == ["Creating"]
    assert _blocks(out)[target]["state"] == "RetryInProgress", GO


def test_new_instance_with_no_block_is_unaffected() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_NewInstanceNoBlock_Unaffected: a new Instance (no row, no block) is created as before
    the gate existed, and its start records no block."""
    world = _world(1, [], [])
    target = _target(world)
    out = plan(world)
    assert len(_creates(out)) == 1, GO
    assert [r["phase"] for r in _rows(out)] == ["Creating"]
    assert target not in _blocks(out)


def test_retry_in_progress_live_denies() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_retryblock_test.go @ ae683e3f,
    TestCreate_RetryBlockInProgressLive_Denies: while an authorized attempt is in flight (Instance 1's
    live Create), a disposed fresh start (Instance 0) stays denied: exactly one attempt at a time."""
    world = _world(2, [], [])
    target = _target(world)
    creating = {
        "index": 1,
        "incarnation": 1,
        "phase": "Creating",
        "targetRevision": target,
        "operation": {
            "id": "create-1",
            "type": "Create",
            "step": "CreatePods",
            "targetRevision": target,
            "startedAt": format_time(world.now),
            "lastProgressAt": format_time(world.now),
        },
    }
    world = _with(world, [_disposed(0, target), creating], [_block(world, target, "RetryInProgress")])
    out = plan(world)
    assert not [n for n in _creates(out) if "-engine-0-" in n], GO
