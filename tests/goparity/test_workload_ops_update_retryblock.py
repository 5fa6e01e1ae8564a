"""OME's ``workload/ops/update_retryblock_test.go``: the RetryBlock gate on the Update trigger, the
block writer, and the prune on promote.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_retryblock_test.go`` @ ae683e3f
(34,431 characters, the one stored version, read whole), over ``ops/update.go``
``DetectUpdateTriggerWithPods`` and ``flipRetryBlockOnAttemptStart``, ``recordUpdateFailureInRetryBlock``
(``types/retryblock_writer.go``) and the promote helpers. The gate cases run one pure planner pass
(``planner.plan``) over the simulated world: one Instance Ready on the old revision, a new roll target,
the replica's ``status.retryBlocks`` seeded. The writer cases call ``planner/retry.py``
``RetryBook.failure`` (the writer), the attribution case ``workload_caused``, the prune cases
``RetryBook.promoted``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.actions import Plan, RecordEvent, WriteStatus
from omereconcile.planner import plan
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook, workload_caused
from omereconcile.planner.rows import RetryBlock
from omereconcile.settings import RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, format_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f"
# The newest text of a test this file carries, where ``update_test.go`` @ 58a57f25 changed it.
GO_NEWEST = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_test.go @ 58a57f25"
T0 = datetime.fromisoformat("2026-07-23T12:00:00+00:00")


def _rolling(replicas: int = 1) -> World:
    """Go's ``retryGateFixture``: Ready on the old revision, a roll target with another image."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    sim.image = "vllm:v2"
    world = sim.observe()
    return replace(world, now=world.now.replace(microsecond=0))


def _target(world: World) -> str:
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return desired.name


def _seed(world: World, blocks: list[dict[str, Any]], rows: list[dict[str, Any]] | None = None) -> World:
    status = dict(world.replica.status)
    status["retryBlocks"] = blocks
    if rows is not None:
        status["instanceStatuses"] = rows
    return replace(world, replica=replace(world.replica, status=status))


def _block(world: World, target: str, state: str, next_in: float | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "targetRevision": target,
        "state": state,
        "attemptsStarted": 1,
        "firstFailureAt": format_time(world.now - timedelta(minutes=5)),
        "lastFailureAt": format_time(world.now - timedelta(minutes=1)),
        "reason": "ImagePullBackOff",
    }
    if next_in is not None:
        block["nextRetryAt"] = format_time(world.now + timedelta(seconds=next_in))
    return block


def _status(out: Plan) -> dict[str, Any]:
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    return dict(written[-1].status) if written else {}


def _row0(out: Plan, world: World) -> dict[str, Any]:
    rows = _status(out).get("instanceStatuses") or world.replica.status["instanceStatuses"]
    return dict(next(r for r in rows if r["index"] == 0))


def _started(out: Plan, world: World) -> bool:
    """The trigger fired: Instance 0 carries an Update toward the roll target."""
    op = _row0(out, world).get("operation") or {}
    return op.get("type") == "Update" and op.get("targetRevision") == _target(world)


def _blocks(out: Plan, world: World) -> dict[str, dict[str, Any]]:
    status = _status(out) or dict(world.replica.status)
    return {b["targetRevision"]: b for b in status.get("retryBlocks", [])}


def test_held_denies() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_RetryBlockHeld_Denies: a Held block for the current target denies the trigger
    with no wake-up and no block write; the Instance stays Ready."""
    world = _rolling()
    world = _seed(world, [_block(world, _target(world), "Held")])
    out = plan(world)
    assert not _started(out, world), GO
    assert _row0(out, world)["phase"] == "Ready"
    assert out.requeue_after is None
    assert _blocks(out, world)[_target(world)]["state"] == "Held"


def test_backoff_not_due_denies_with_requeue() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_RetryBlockBackoffNotDue_DeniesWithRequeue: a Backoff not yet due denies and wakes
    the pass exactly when it falls due (37 s)."""
    world = _rolling()
    world = _seed(world, [_block(world, _target(world), "Backoff", next_in=37)])
    out = plan(world)
    assert not _started(out, world), GO
    assert out.requeue_after == 37, GO


@pytest.mark.parametrize(
    "next_in",
    [
        pytest.param(-1, id="TestDetectUpdate_RetryBlockDue_AllowsWithoutFlip"),
        pytest.param(0, id="TestDetectUpdate_RetryBlockDueBoundaryExact"),
    ],
)
def test_due_backoff_allows(next_in: float) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_RetryBlockDue_AllowsWithoutFlip and TestDetectUpdate_RetryBlockDueBoundaryExact:
    a Backoff past (or exactly at) ``nextRetryAt`` is due: the trigger fires with no wake-up. (Go's
    gate writes nothing and the attempt stamp flips the block; ours does both in the one pass, so the
    flip is asserted with ``FlipsBackoffOnAttemptStart`` below.)"""
    world = _rolling()
    world = _seed(world, [_block(world, _target(world), "Backoff", next_in=next_in)])
    out = plan(world)
    assert _started(out, world), GO


def _updating(world: World, index: int) -> dict[str, Any]:
    target = _target(world)
    row = dict(next(r for r in world.replica.status["instanceStatuses"] if r["index"] == index))
    row.update(
        phase="Updating",
        targetRevision=target,
        operation={
            "id": f"update-{index}",
            "type": "Update",
            "step": "Surge",
            "targetRevision": target,
            "startedAt": format_time(world.now),
            "lastProgressAt": format_time(world.now),
        },
    )
    return row


def test_in_progress_denies_second_attempt() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_RetryBlockInProgress_DeniesSecondAttempt: while an authorized attempt is in
    flight (another Instance's Update at the target), a second fresh trigger is denied."""
    world = _rolling(replicas=2)
    rows = [dict(world.replica.status["instanceStatuses"][0]), _updating(world, 1)]
    world = _seed(world, [_block(world, _target(world), "RetryInProgress")], rows)
    out = plan(world)
    assert not _started(out, world), GO


def test_in_progress_leaked_self_heals() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_RetryBlockInProgressLeaked_SelfHeals: RetryInProgress with no attempt in flight
    is a leaked authorization, treated as due: the trigger fires."""
    world = _rolling()
    world = _seed(world, [_block(world, _target(world), "RetryInProgress")])
    assert _started(plan(world), world), GO


def test_new_revision_passes_gate() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_NewRevisionPassesGate: a Held block for another (older) revision never gates the
    new target: a corrective revision rolls."""
    world = _rolling()
    world = _seed(world, [_block(world, "llama-pool-engine-0ther0ne", "Held")])
    assert _started(plan(world), world), GO


def test_failed_continuation_passes_gate() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_FailedContinuationPassesGate: a Failed Instance still carrying its Update (at
    step Surge) toward the target is a continuation and proceeds whatever the block: a Held block
    does not freeze it (ours: the pass keeps the operation and acts on it, creating its surge pod)."""
    world = _rolling()
    row = _updating(world, 0)
    row["phase"] = "Failed"
    world = _seed(world, [_block(world, _target(world), "Held")], [row])
    out = plan(world)
    op = _row0(out, world).get("operation") or {}
    assert (op.get("type"), op.get("targetRevision")) == ("Update", _target(world)), GO
    created = [a for a in out.actions if type(a).__name__ == "CreatePod"]
    assert [a.name for a in created] == ["llama-pool-engine-0-default-1"], GO  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "seeded",
    [
        pytest.param(True, id="existing Backoff block flips to RetryInProgress"),
        pytest.param(False, id="no block records nothing"),
    ],
)
def test_attempt_start_flips_backoff(seeded: bool) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestPatchSurgingForUpdate_FlipsBackoffOnAttemptStart (both subtests): the attempt's start flips
    an existing due Backoff block to RetryInProgress; with no block, nothing is recorded."""
    world = _rolling()
    target = _target(world)
    world = _seed(world, [_block(world, target, "Backoff", next_in=-1)] if seeded else [])
    out = plan(world)
    assert _started(out, world)
    blocks = _blocks(out, world)
    if seeded:
        assert blocks[target]["state"] == "RetryInProgress", GO
        assert blocks[target]["attemptsStarted"] == 1
    else:
        assert target not in blocks, GO


# -- the writer ------------------------------------------------------------------------------------

POLICY = RetryPolicy(
    max_attempts=3, initial_delay=timedelta(minutes=1), max_delay=timedelta(minutes=30), multiplier=2
)


def _book(policy: RetryPolicy | None, *blocks: RetryBlock) -> RetryBook:
    return RetryBook({b.target_revision: b for b in blocks}, "prod/llama-70b", "engine", policy)


def _held_warnings(out: Out) -> list[str]:
    return [e.message for e in out.events if isinstance(e, RecordEvent) and e.event_reason == "RetryHeld"]


def test_first_failure_backs_off() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestRecordUpdateFailure_FirstFailureBacksOff: the first failure creates the block: one attempt,
    Backoff, ``nextRetryAt`` = now + initial delay, both failure times now, the reason kept, no
    warning."""
    book, out = _book(POLICY), Out(T0)
    book.failure("rev-bad", "ImagePullBackOff", T0, out)
    b = book.blocks["rev-bad"]
    assert (b.state, b.attempts_started, b.next_retry_at) == ("Backoff", 1, T0 + timedelta(minutes=1)), GO
    assert (b.first_failure_at, b.last_failure_at, b.reason) == (T0, T0, "ImagePullBackOff")
    assert _held_warnings(out) == []


def test_second_wave_counts() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestRecordUpdateFailure_SecondWaveCounts: the authorized retry (RetryInProgress) failed: a new
    wave, two attempts, Backoff for initial delay x multiplier, the first failure time kept, the
    reason refreshed."""
    first = T0 - timedelta(minutes=10)
    prev = RetryBlock("rev-bad", "RetryInProgress", 1, first, first, None, "old evidence")
    book, out = _book(POLICY, prev), Out(T0)
    book.failure("rev-bad", "ImagePullBackOff", T0, out)
    b = book.blocks["rev-bad"]
    assert (b.state, b.attempts_started, b.next_retry_at) == ("Backoff", 2, T0 + timedelta(minutes=2)), GO
    assert (b.first_failure_at, b.reason) == (first, "ImagePullBackOff")
    assert _held_warnings(out) == []


def test_same_wave_refresh_only() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestRecordUpdateFailure_SameWaveRefreshOnly: a sibling's failure in the same wave finds the block
    Backoff: the evidence is refreshed (reason, last failure time), no attempt is added and
    ``nextRetryAt`` is kept."""
    nxt, first = T0 - timedelta(seconds=30), T0 - timedelta(seconds=90)
    prev = RetryBlock("rev-bad", "Backoff", 1, first, first, nxt, "first instance failed")
    book, out = _book(POLICY, prev), Out(T0)
    book.failure("rev-bad", "ErrImagePull", T0, out)
    b = book.blocks["rev-bad"]
    assert (b.attempts_started, b.next_retry_at, b.last_failure_at) == (1, nxt, T0), GO
    assert b.reason == "ErrImagePull"
    assert _held_warnings(out) == []


def test_exhaustion_holds() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestRecordUpdateFailure_ExhaustionHolds: the third counted wave exhausts three attempts: Held,
    no ``nextRetryAt``, one RetryHeld Warning naming three attempts and the reason; a later failure
    against the Held block refreshes the evidence only, with no second Warning."""
    prev = RetryBlock("rev-bad", "RetryInProgress", 2, T0, T0, None, "")
    book, out = _book(POLICY, prev), Out(T0)
    book.failure("rev-bad", "InvalidImageName", T0, out)
    b = book.blocks["rev-bad"]
    assert (b.state, b.attempts_started, b.next_retry_at) == ("Held", 3, None), GO
    warnings = _held_warnings(out)
    assert len(warnings) == 1, GO
    assert "rev-bad held after 3 failed attempt(s) (last failure: InvalidImageName)" in warnings[0]
    later = T0 + timedelta(minutes=1)
    book.failure("rev-bad", "ImagePullBackOff", later, out)
    held = book.blocks["rev-bad"]
    assert (held.state, held.attempts_started, held.reason) == ("Held", 3, "ImagePullBackOff"), GO
    assert len(_held_warnings(out)) == 1


def test_nil_policy_holds_first_failure() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestRecordUpdateFailure_NilPolicyHoldsFirstFailure: with no policy the first failure holds (one
    attempt, no ``nextRetryAt``) and warns once naming one attempt."""
    book, out = _book(None), Out(T0)
    book.failure("rev-bad", "ImagePullBackOff", T0, out)
    b = book.blocks["rev-bad"]
    assert (b.state, b.attempts_started, b.next_retry_at) == ("Held", 1, None), GO
    warnings = _held_warnings(out)
    assert len(warnings) == 1
    assert "after 1 failed attempt(s)" in warnings[0]


def test_empty_target_is_a_no_op() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestRecordUpdateFailure_UnwiredNoOp: an empty target revision records nothing. (Its other half,
    a nil ``MutateRetryBlock`` closure, is Go's adapter shape: ours has no unwired writer.)"""
    book, out = _book(POLICY), Out(T0)
    book.failure("", "ImagePullBackOff", T0, out)
    assert book.blocks == {}, GO
    assert (out.actions, out.events) == ([], [])


@pytest.mark.parametrize(
    ("reason", "charged"),
    [
        ("ImagePullBackOff", True),
        ("ErrImagePull", True),
        ("InvalidImageName", True),
        ("CreateContainerConfigError", True),
        ("DeadlineExceeded", False),
        ("CrashLoopBackOff", False),
        ("RunContainerError", False),
        ("", False),
    ],
)
def test_instance_failure_workload_caused(reason: str, charged: bool) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestInstanceFailureWorkloadCaused (each entry): only a reason in the workload-caused set charges
    the ladder; an elapsed deadline, an ambiguous kubelet reason and missing evidence do not."""
    assert workload_caused(reason) is charged, GO


def test_promote_prunes_block() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestPatchReadyOnRevision_PrunesBlock and TestPatchReadyOnRevisionWithOrdinal_PrunesBlock (one
    rule, ours has one promote): an Instance promoted Ready on a revision removes that revision's
    block, and only that one."""
    keep = RetryBlock("rev-other", "Held", 1, T0, T0, None, "x")
    book = _book(POLICY, RetryBlock("rev-bad", "RetryInProgress", 1, T0, T0, None, "x"), keep)
    assert book.promoted("rev-bad"), GO
    assert list(book.blocks) == ["rev-other"]


def test_backfill_adopts_runtime_ready_pods() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_retryblock_test.go @ ae683e3f,
    TestDetectUpdate_BackfillAdoptsRuntimeReadyPods: a deadline-disposed row (Failed, no operation,
    no ``runningRevision``) beside a due Backoff block, whose pod matches the target and is
    runtime-ready, is adopted: no update is triggered, the row is Ready running the target, and the
    target's block is pruned (success at the revision is real proof here). Failed before: ours
    started a surge of the Instance onto the revision it already ran, and flipped the block."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    world = sim.observe()
    world = replace(world, now=world.now.replace(microsecond=0))
    target = _target(world)
    disposed = {"index": 0, "incarnation": 1, "phase": "Failed"}
    world = _seed(world, [_block(world, target, "Backoff", next_in=-1)], [disposed])
    out = plan(world)
    row = _row0(out, world)
    assert not _started(out, world), GO
    assert (row["phase"], row.get("runningRevision")) == ("Ready", target), GO
    assert target not in _blocks(out, world), GO


def _waiting(sim: Sim, reason: str) -> bool:
    for p in sim.pods.values():
        for cs in p.obj["status"].get("containerStatuses") or []:
            if ((cs.get("state") or {}).get("waiting") or {}).get("reason") == reason:
                return True
    return False


@pytest.mark.parametrize(
    ("behaviour", "reason"), [("imagepull", "ImagePullBackOff"), ("crash", "CrashLoopBackOff")]
)
def test_backfill_refuses_wedged_pods(behaviour: str, reason: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_test.go @ 58a57f25,
    TestDetectUpdate_BackfillRefusesWedgedPods (each t.Run: ImagePullBackOff, CrashLoopBackOff): a
    deadline-disposed create (Failed, no operation, no ``runningRevision``) beside a due Backoff block,
    whose pod carries the target revision but waits in a kubelet reason, is NOT adopted (no Ready
    stamp, no ``runningRevision`` backfilled, the block not pruned) and is NOT left alone either: "a
    wedged pod on the target revision must take the ordinary retry roll" (trigger true, no wait).

    This is the newest text: ``update_retryblock_test.go`` @ ae683e3f (the only stored version of that
    file, its tests folded into ``update_test.go`` since) asserted no trigger for the same shape,
    after the older ``evaluateUpdateTriggerPods`` that left unproven pods alone; the newest
    ``ops/update.go`` (58a57f25, read whole) sends them to the roll. Go calls the detector alone and
    checks that it wrote nothing (the block's flip "belongs to attempt-stamp time"); ours runs the
    whole pass, so the attempt the trigger opens is read off the plan: an Update toward the target,
    a recreate (``SurgeHasNoSource``: incarnation 2, step ``Drain``), the row not Ready, no
    ``runningRevision``, and the target's block kept (flipped to ``RetryInProgress`` by the stamp,
    never pruned). Before, ours started no Update and rebuilt the row through Create (``Recycle``)."""
    sim = Sim(behaviour={"vllm:v1": behaviour})
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).run(lambda s: _waiting(s, reason), limit=120)
    world = sim.observe()
    world = replace(world, now=world.now.replace(microsecond=0))
    target = _target(world)
    disposed = {"index": 0, "incarnation": 1, "phase": "Failed"}
    world = _seed(world, [_block(world, target, "Backoff", next_in=-1)], [disposed])
    out = plan(world)
    row = _row0(out, world)
    assert _started(out, world), (GO_NEWEST, row)
    assert (row["incarnation"], row["operation"]["step"]) == (2, "Drain"), (GO_NEWEST, row)
    assert row["phase"] != "Ready", GO_NEWEST
    assert not row.get("runningRevision"), GO_NEWEST
    assert _blocks(out, world)[target]["state"] == "RetryInProgress", GO_NEWEST  # kept, not pruned
