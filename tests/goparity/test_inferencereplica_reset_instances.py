"""OME's ``inferencereplica/reset_instances_test.go``: answering ``ome.io/reset-instances``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/reset_instances_test.go`` @ 4dfb96b1
(the listed version of four stored), over ``reset_instances.go`` (``consumeResetInstancesRequest``,
``parseResetInstancesValue``). Go runs the mailbox against a fake client seeded with ``resetIR``'s five
rows and ``resetPods``; here the same rows and pods go to :func:`omereconcile.planner.reset.answer_reset`
(which Instances are reset, which are skipped and why, the annotation's removal, the events) and
:func:`~omereconcile.planner.reset.step_reset` (the pods deleted, then the row left ``Failed`` with no
operation, its ``lastFailure``, incarnation and running revision kept). Ours journals the reset on the
row before deleting (Go clears the operation after the deletes): the end shape is the same. The
context is a real one, built from a simulated replica carrying the annotation.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from omereconcile.actions import DeletePod
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.out import Out
from omereconcile.planner.reset import RESET_KEY, ResetAnswer, answer_reset, parse_reset_value, step_reset
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.world import DesiredRevision, PodCondition, PodView
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/reset_instances_test.go @ 4dfb96b1"
REV_A, REV_B = "llama-pool-engine-aaaaaaaa", "llama-pool-engine-bbbbbbbb"
LAST_FAILURE = {"podName": "llama-pool-engine-1-worker-0", "reason": "OOMKilled", "exitCode": 137}


def _ctx(value: str | None) -> Ctx:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=5))
    if value is not None:
        sim.annotate(RESET_KEY, value)
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _op(op_type: str, step: str, target: str = "") -> R.Operation:
    return R.Operation(f"{op_type.lower()}-op", op_type, step, target, T0, deadline=T0, last_progress_at=T0)


def _rows(update_owner: str = "Update") -> list[R.Row]:
    """Go's ``resetIR``: 0 Ready; 1 Failed behind a Restart (with a lastFailure); 2 Failed behind a
    Create; 3 Failed behind an Update (rollout-owned); 4 Failed behind a Restart, still serving."""
    return [
        R.Row(index=0, phase=R.READY, running_revision=REV_A),
        R.Row(
            index=1,
            incarnation=2,
            phase=R.FAILED,
            running_revision=REV_A,
            operation=_op("Restart", "Recreate"),
            last_failure=LAST_FAILURE,
        ),
        R.Row(index=2, phase=R.FAILED, operation=_op(R.OP_CREATE, R.STEP_CREATE_PODS, REV_A)),
        R.Row(
            index=3, phase=R.FAILED, running_revision=REV_A, operation=_op(update_owner, "WaitReady", REV_B)
        ),
        R.Row(index=4, phase=R.FAILED, running_revision=REV_A, operation=_op("Restart", "Drain")),
    ]


def _pod(index: int, runner: str = "default", serving: bool = False, phase: str = "Running") -> PodView:
    name = f"llama-pool-engine-{index}-{runner}-0"
    gate = PodCondition(c.SERVING_GATE, "True" if serving else "False")
    return PodView(
        name=name,
        uid=f"uid-{name}",
        resource_version="1",
        labels={c.LABEL_INSTANCE_INDEX: str(index)},
        phase=phase,
        conditions=(gate,),
    )


def _pods() -> dict[int, list[PodView]]:
    """Go's ``resetPods``: a serving pod at 0, a leader+worker gang at 1, a Failed pod at 2, a Running
    pod at 3 and a pod still serving at 4."""
    return {
        0: [_pod(0, serving=True)],
        1: [_pod(1, "leader"), _pod(1, "worker")],
        2: [_pod(2, phase="Failed")],
        3: [_pod(3)],
        4: [_pod(4, serving=True)],
    }


def _answer(value: str | None, rows: list[R.Row] | None = None) -> tuple[Ctx, ResetAnswer]:
    ctx = _ctx(value)
    return ctx, answer_reset(ctx, rows if rows is not None else _rows(), _pods())


def _reset(answer: ResetAnswer) -> list[int]:
    return [r.index for r in answer.rows if r.operation is not None and r.operation.reason == "Reset"]


def _events(answer: ResetAnswer, reason: str) -> list[str]:
    return [e.message for e in answer.events if e.event_reason == reason]


def _assert_reset_end(ctx: Ctx, answer: ResetAnswer, index: int, before: R.Row) -> None:
    """Go ``assertInstanceReset``: every pod deleted, then the operation cleared, ``Failed`` kept with
    its lastFailure, incarnation and running revision."""
    row = next(r for r in answer.rows if r.index == index)
    out = Out(ctx.now)
    step_reset(ctx, row, _pods()[index], out)
    deleted = sorted(a.name for a in out.actions if isinstance(a, DeletePod))
    assert deleted == sorted(p.name for p in _pods()[index])
    answered = _ctx(None)  # the annotation is gone once the answer landed
    end = step_reset(answered, row, [], Out(answered.now))
    assert end.operation is None
    assert (end.phase, end.last_failure, end.incarnation, end.running_revision) == (
        R.FAILED,
        before.last_failure,
        before.incarnation,
        before.running_revision,
    )


def _untouched(answer: ResetAnswer, *indices: int) -> None:
    before = {r.index: r for r in _rows()}
    after = {r.index: r for r in answer.rows}
    for i in indices:
        assert after[i] == before[i], i


def test_all_resets_every_failed_instance() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reset_instances_test.go @ 4dfb96b1,
    TestConsumeResetInstances_All_ResetsEveryFailedInstance: ``all`` resets the Failed Instances
    behind a Restart and a Create (1, 2); the Ready one is untouched and not reported; the
    rollout-owned (3) and still-serving (4) ones share one skip event; the annotation is consumed."""
    ctx, answer = _answer("all")
    assert _reset(answer) == [1, 2]
    rows = {r.index: r for r in _rows()}
    _assert_reset_end(ctx, answer, 1, rows[1])
    _assert_reset_end(ctx, answer, 2, rows[2])
    _untouched(answer, 0, 3, 4)
    assert answer.remove is not None
    (done,) = _events(answer, "InstancesReset")
    assert "instance(s) 1,2 " in done
    assert "operator request" in done
    (skip,) = _events(answer, "InstancesResetSkipped")
    assert "3 (owned by Update)" in skip
    assert "4 (still serving)" in skip
    assert "0 (" not in skip


def test_explicit_list_resets_only_named() -> None:
    """Go: same file, TestConsumeResetInstances_ExplicitList_ResetsOnlyNamed: ``2`` resets Instance 2
    alone; Instance 1 keeps its pods and its operation; no skip event."""
    ctx, answer = _answer("2")
    assert _reset(answer) == [2]
    _assert_reset_end(ctx, answer, 2, _rows()[2])
    _untouched(answer, 1)
    (done,) = _events(answer, "InstancesReset")
    assert "instance(s) 2 " in done
    assert _events(answer, "InstancesResetSkipped") == []
    assert answer.remove is not None


def test_repair_owned_targets_reset() -> None:
    """Go: same file, TestConsumeResetInstances_RepairOwnedTargets_Reset: a Restart's and a Create's
    parked attempts (1, 2) are both reset, in one event, with no skip."""
    ctx, answer = _answer("1,2")
    assert _reset(answer) == [1, 2]
    rows = _rows()
    _assert_reset_end(ctx, answer, 1, rows[1])
    _assert_reset_end(ctx, answer, 2, rows[2])
    assert ["instance(s) 1,2 " in m for m in _events(answer, "InstancesReset")] == [True]
    assert _events(answer, "InstancesResetSkipped") == []


def test_serving_target_skip_consumed() -> None:
    """Go: same file, TestConsumeResetInstances_ServingTarget_SkipConsumed: a Failed Instance with a
    pod still serving is left as it was; the annotation is consumed; the skip names it."""
    _, answer = _answer("4")
    assert _reset(answer) == []
    _untouched(answer, 4)
    assert answer.remove is not None
    assert _events(answer, "InstancesReset") == []
    (skip,) = _events(answer, "InstancesResetSkipped")
    assert "4 (still serving)" in skip


@pytest.mark.parametrize("owner", ["Update", "Migrate"])
def test_rollout_owned_target_skip_consumed(owner: str) -> None:
    """Go: same file, TestConsumeResetInstances_RolloutOwnedTarget_SkipConsumed, subtest ``owner``: a
    Failed Instance parked behind an Update or a Migrate is skipped with its owner named."""
    rows = _rows(update_owner=owner)
    _, answer = _answer("3", rows)
    assert _reset(answer) == []
    assert [r for r in answer.rows if r.index == 3] == [rows[3]]
    assert answer.remove is not None
    (skip,) = _events(answer, "InstancesResetSkipped")
    assert f"3 (owned by {owner})" in skip


def test_mixed_targets_resets_valid_skips_rest() -> None:
    """Go: same file, TestConsumeResetInstances_MixedTargets_ResetsValidSkipsRest: `` 1, 0 ,42,1``
    resets 1 once; 0 (Ready) and 42 (no Instance) share one skip event; 2 is untouched."""
    ctx, answer = _answer(" 1, 0 ,42,1")
    assert _reset(answer) == [1]
    _assert_reset_end(ctx, answer, 1, _rows()[1])
    _untouched(answer, 0, 2)
    (done,) = _events(answer, "InstancesReset")
    assert "instance(s) 1 " in done
    (skip,) = _events(answer, "InstancesResetSkipped")
    assert "0 (Phase=Ready)" in skip
    assert "42 (no such instance)" in skip


def test_non_failed_target_skip_consumed() -> None:
    """Go: same file, TestConsumeResetInstances_NonFailedTarget_SkipConsumed: a Ready target is left
    exactly as it was, no status change, the annotation consumed, the skip says why."""
    _, answer = _answer("0")
    assert answer.rows == _rows()
    assert answer.remove is not None
    assert _events(answer, "InstancesReset") == []
    (skip,) = _events(answer, "InstancesResetSkipped")
    assert "0 (Phase=Ready)" in skip


def test_all_with_no_failed_skip_consumed() -> None:
    """Go: same file, TestConsumeResetInstances_AllWithNoFailed_SkipConsumed: ``all`` with no Failed
    Instance changes nothing, says so in one skip event, and consumes the annotation."""
    _, answer = _answer("all", _rows()[:1])
    assert answer.rows == _rows()[:1]
    assert answer.remove is not None
    assert _events(answer, "InstancesReset") == []
    (skip,) = _events(answer, "InstancesResetSkipped")
    assert "none is Failed" in skip


@pytest.mark.parametrize("value", ["", "1,x", "-1", "1,,2", "ALL"])
def test_malformed_value_warning_consumed(value: str) -> None:
    """Go: same file, TestConsumeResetInstances_MalformedValue_WarningConsumed, subtest ``value``:
    nothing reset or written, one Warning ``InstancesResetRejected`` naming the value, the annotation
    consumed, no reset event."""
    _, answer = _answer(value)
    assert answer.rows == _rows()
    assert answer.remove is not None
    (warning,) = [e for e in answer.events if e.event_reason == "InstancesResetRejected"]
    assert warning.type == "Warning"
    assert _events(answer, "InstancesReset") == []


def test_crash_before_consume_redelivery_is_no_op() -> None:
    """Go: same file, TestConsumeResetInstances_CrashBeforeConsume_RedeliveryIsNoOp: after a pass that
    reset Instance 1 but could not remove the annotation, the redelivery deletes nothing, writes no
    status, reports no second reset, and skips 1 as "nothing to reset". Failed before (ours answered the
    redelivery as the same reset, its events following the removal); passes by Go's rule
    (``reset_instances.go`` @ ae683e3f: the events before the consume; ``resetInstances``: nothing
    deleted and no operation cleared is "nothing to reset"; ours reads its journal as the operation Go
    already cleared)."""
    ctx, first = _answer("1")
    journaled = first.rows
    again = answer_reset(ctx, journaled, {**_pods(), 1: []})
    assert again.rows == journaled  # no status write
    assert _events(again, "InstancesReset") == []
    (skip,) = _events(again, "InstancesResetSkipped")
    assert "1 (nothing to reset)" in skip


def test_no_annotation_no_op() -> None:
    """Go: same file, TestConsumeResetInstances_NoAnnotation_NoOp: no annotation, no write, no event."""
    _, answer = _answer(None)
    assert answer.rows == _rows()
    assert answer.remove is None
    assert answer.events == []


ACCEPTED: Sequence[tuple[str, tuple[bool, list[int]]]] = [
    (" all ", (True, [])),
    ("13, 14,13,0", (False, [13, 14, 0])),
]
REJECTED = ["", " ", ",", "1,", "1,,2", "x", "-1", "1.5", "ALL", "all,1", "99999999999"]


def test_parse_reset_instances_value() -> None:
    """Go: same file, TestParseResetInstancesValue: ``all`` (trimmed) and a list whose duplicates
    collapse in first-seen order are accepted; every listed bad shape is rejected."""
    for value, want in ACCEPTED:
        assert parse_reset_value(value) == want
    for bad in REJECTED:
        assert isinstance(parse_reset_value(bad), str), bad
