"""OME's ``workload/plan_decision_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/plan_decision_test.go`` @ 4dfb96b1 (75,240
characters, read whole; sgl-project/ome holds an older-era copy at bb4fa1ee). Go's ``Plan`` returns a
``Decision``: which passes run (scale-down, restart, migration, update, create, demote) and which
Instances each selects. Ours has no Decision object: a case asserts what the selection does to the
rows and pods after one planner pass, or, for the partition hold, calls ``rollout.partition_held``,
the hold the pass applies. The action order of a Decision, its migration selections, its client
failure injection and its internal flags (``StartingFresh``, ``CoordGateExempt``) have no
counterpart; ``docs/goparity.md`` lists them.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import WriteStatus
from omereconcile.planner import plan
from omereconcile.planner import rows as R
from omereconcile.planner.context import build_context
from omereconcile.planner.plan_indices import instance_plan_indices, scale_down_extras
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rollout import partition_held
from omereconcile.planner.rows import Operation, Row
from omereconcile.simulate.cluster import T0, Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, format_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1"
TARGET = "llama-70b-engine-newtarget"


def _up(n: int, workers: int = 0, **spec: Any) -> tuple[Sim, Driver]:
    sim = Sim(workers=workers)
    sim.apply_replica(base_replica(replicas=n, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == n)
    return sim, driver


def _phases(sim: Sim) -> dict[int, str]:
    return {r["index"]: r["phase"] for r in sim.rows()}


def _op_type(sim: Sim, index: int) -> str | None:
    row = next(r for r in sim.rows() if r["index"] == index)
    return (row.get("operation") or {}).get("type")


def test_scale_down_selects_extras() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_ScaleDown_SelectsExtras: Instance 1, which the plan (one replica) no longer covers, is
    the scale-down's; a converged replica selects nothing."""
    sim, driver = _up(2)
    sim.update_spec(replicas=1)
    driver.one_pass()
    assert _phases(sim) == {0: "Ready", 1: "Deleting"}
    sim, driver = _up(1)
    driver.one_pass()
    assert _phases(sim) == {0: "Ready"}
    assert _op_type(sim, 0) is None


def test_delete_owned_desired_index_finishes_before_recreate() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_DeleteOwnedDesiredIndexFinishesBeforeRecreate: an Instance a Delete owns at an index the
    plan wants again (scaled 2 → 1 → 2) finishes its delete; no other index is opened meanwhile, and
    the index is recreated once the delete is done. (Before: ours opened Instance 2 beside the
    draining Instance 1, a third pod for a two-replica spec.)"""
    sim, driver = _up(2)
    sim.update_spec(replicas=1)
    driver.one_pass()
    sim.update_spec(replicas=2)
    driver.one_pass()
    assert _phases(sim) == {0: "Ready", 1: "Deleting"}
    assert _op_type(sim, 1) == "Delete"
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    assert sorted(_phases(sim)) == [0, 1]


def test_create_always_planned_unless_paused() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Create_AlwaysPlannedUnlessPaused: a paused replica creates no Instance; unpaused, the
    create pass materializes it."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, paused=True))
    driver = Driver(sim)
    for _ in range(3):
        driver.one_pass()
    assert sim.rows() == []
    assert sim.live_pods() == []
    sim.update_spec(paused=None)
    driver.run(lambda s: bool(s.rows()))
    assert _op_type(sim, 0) == "Create"


def _prior(index: int, phase: str = R.READY, running: str = "prior-rev") -> Row:
    return Row(index=index, phase=phase, running_revision=running)


def test_update_held_by_partition() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_HeldByPartition: with partition 1 Instance 0 is held and 1 rolls; once Instance 0
    is mid-update (``Updating``) it is never held and the hold falls to Instance 1."""
    assert partition_held([_prior(0), _prior(1)], 1, TARGET) == {0}
    assert partition_held([_prior(0, R.UPDATING), _prior(1)], 1, TARGET) == {1}


def _partition(**spec: Any) -> int:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2, **spec))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None).partition


def _rolling(partition: int) -> dict[str, Any]:
    return {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"partition": partition}}}


@pytest.mark.parametrize(
    ("spec", "rolled"),
    [
        pytest.param({"pacing": {"partition": 1}}, [1], id="pacing holds with no user partition"),
        pytest.param(
            {"pacing": {"partition": 0}, "lifecycle": _rolling(1)},
            [0, 1],
            id="pacing 0 releases over user partition",
        ),
        pytest.param({"pacing": {}, "lifecycle": _rolling(1)}, [1], id="nil pacing defers to user partition"),
    ],
)
def test_update_pacing_partition_precedence(spec: dict[str, Any], rolled: list[int]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_PacingPartitionPrecedence (each entry): the pacing partition wins, an explicit
    pacing 0 releases every Instance over the user's, an unset one defers to
    ``rollingUpdate.partition``. The Instances that roll are those the hold leaves."""
    held = partition_held([_prior(0), _prior(1)], _partition(**spec), TARGET)
    assert [i for i in (0, 1) if i not in held] == rolled


def test_update_partition_holds_count_on_sparse_indices() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_PartitionHoldsCountOnSparseIndices: on indices {1, 2} partition 1 holds the
    lowest (1), not "indices below 1"; partition 2 holds both."""
    rows = [_prior(1), _prior(2)]
    assert partition_held(rows, 1, TARGET) == {1}
    assert partition_held(rows, 2, TARGET) == {1, 2}


def test_update_partition_hold_survives_gang_surge_reindex() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_PartitionHoldSurvivesGangSurgeReindex: the promoted replacement landed at index 0
    on the target; the canary at index 1 stays held (no update)."""
    assert partition_held([_prior(0, running=TARGET), _prior(1)], 1, TARGET) == {1}


@pytest.mark.parametrize("entry", ["surge toward the current target", "target moved on mid-surge"])
def test_live_surge_untouched_by_cleanup(entry: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_LiveSurgeUntouchedByCleanup (both entries; the roll target does not enter the plan): a
    live gang surge pair at one replica is not scaled down, neither half. (Its continuation half is
    the gang surge's own step, pinned in ``tests/sim/test_gang_surge.py``.)"""
    pinned = TARGET
    rows = [
        Row(
            index=0,
            phase=R.UPDATING,
            running_revision="llama-70b-engine-priorrev",
            operation=Operation("u-0", R.OP_UPDATE, R.STEP_SURGE, pinned, T0, surge_index=1),
        ),
        Row(
            index=1,
            phase=R.CREATING,
            operation=Operation("u-1", R.OP_UPDATE, R.STEP_GANG_SURGE_TARGET, pinned, T0),
        ),
    ]
    indices = instance_plan_indices(rows, 1, RetryBook({}, "prod/llama-70b", "engine"))
    assert indices == [0, 1]
    assert scale_down_extras(rows, indices) == []


def test_determinism_identical_inputs() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Determinism_IdenticalInputs: two plans over one observation are equal, on a pass that
    scales down, rebuilds a lost Instance and rolls the rest."""
    sim, _ = _up(3)
    sim.update_spec(replicas=2)
    sim.image = "vllm:v2"
    sim.pods.pop("llama-pool-engine-1-default-0")
    world = sim.observe()
    first, second = plan(world), plan(world)
    assert first == second
    assert first.actions


def _unbacked(paused: bool, freeze: bool = False, **spec: Any) -> tuple[Sim, Driver]:
    """One Ready Instance whose pods are gone, with no operation (Go's ``unbacked``)."""
    sim, driver = _up(1, **spec)
    if paused:
        sim.update_spec(paused=True, pauseMode="Freeze" if freeze else None)
        driver.one_pass()
    sim.pods.clear()
    return sim, driver


@pytest.mark.parametrize(
    ("freeze", "entry"), [(True, "frozen pause still tells the truth"), (False, "plain pause demotes")]
)
def test_demote_unbacked_ready_instance_while_paused(freeze: bool, entry: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Demote_UnbackedReadyInstances, "frozen pause still tells the truth" and "plain pause
    demotes": a Ready Instance with no pod and no operation stops being reported Ready, and nothing is
    created while paused (a single-pod Instance, restart policy None)."""
    sim, driver = _unbacked(True, freeze)
    driver.one_pass()
    assert _phases(sim) == {0: "Pending"}
    assert sim.live_pods() == []


def test_demote_live_pods_veto() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Demote_UnbackedReadyInstances, "live pods veto the demotion": a paused Ready Instance
    whose pod stands stays Ready."""
    sim, driver = _up(1)
    sim.update_spec(paused=True)
    driver.one_pass()
    driver.one_pass()
    assert _phases(sim) == {0: "Ready"}


def test_demote_in_flight_operation_keeps_ownership() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Demote_UnbackedReadyInstances, "an in-flight Operation keeps ownership": a paused
    Instance carrying an Update operation, its pod gone, is not demoted by the truth reading; the
    operation stays on the row."""
    sim, driver = _unbacked(True)
    row = sim.status["instanceStatuses"][0]
    row.update(
        operation={
            "id": "u-1",
            "type": "Update",
            "step": "Surge",
            "targetRevision": sim.status["currentRevision"],
            "startedAt": "2026-01-01T00:00:00Z",
        },
        phase="Updating",
    )
    driver.one_pass()
    assert _phases(sim) != {0: "Pending"}
    assert _op_type(sim, 0) == "Update"


def test_demote_non_ready_phases_are_never_touched() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Demote_UnbackedReadyInstances, "non-Ready phases are never touched": a paused Pending
    Instance with no pod stays Pending, and nothing is created."""
    sim, driver = _unbacked(True)
    sim.status["instanceStatuses"][0]["phase"] = "Pending"
    driver.one_pass()
    assert _phases(sim) == {0: "Pending"}
    assert sim.live_pods() == []


def test_demote_unpaused_leaves_the_correction_to_create() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Demote_UnbackedReadyInstances, "unpaused leaves the correction to Create": unpaused, no
    demotion; the pass that finds the pod gone creates it again. Was a strict xfail (ours published
    the row ``Pending`` with ``InstanceDemoted`` first and rebuilt it one pass later); fixed by Go's
    rule (``workload/plan_decision.go`` ``Plan``, ``ops/create.go`` ``createFilteredBatched``;
    ``planner/rollout.py`` ``_unbacked_ready``)."""
    sim, driver = _unbacked(False)
    driver.one_pass()
    assert _phases(sim) == {0: "Creating"}
    assert "InstanceDemoted" not in sim.event_reasons()  # Go's Decision holds no Demote unpaused
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]


def test_demote_recreate_instance_components_never_demote() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Demote_UnbackedReadyInstances, "RecreateInstance components never demote": paused, the
    restart pass owns the recovery, in the pass that finds the pod gone (the newest ``Plan`` selects
    restarts "ahead of the truth pass"). Was a strict xfail (ours published the row ``Pending`` first
    and started the Restart one pass later); fixed in ``restart.demoted_ready_restarts``."""
    sim, driver = _unbacked(True, lifecycle={"restartPolicy": "RecreateInstanceOnPodRestart"})
    driver.one_pass()
    assert _phases(sim) != {0: "Pending"}
    assert _op_type(sim, 0) == "Restart"


# -- the restart pass --------------------------------------------------------------------------------

RECREATE_INSTANCE = {"restartPolicy": "RecreateInstanceOnPodRestart"}


def _op(sim: Sim, index: int) -> dict[str, Any]:
    row = next(r for r in sim.rows() if r["index"] == index)
    return dict(row.get("operation") or {})


@pytest.mark.parametrize("policy", ["RecreateInstanceOnPodRestart", "None"])
def test_restart_selects_triggered_instances(policy: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Restart_SelectsTriggeredInstances: of two Ready single-pod Instances, the one that lost
    its pod is the restart pass's, with the trigger's reason; the healthy one is not. Without
    ``RecreateInstanceOnPodRestart`` no Restart is planned (the loss is Create's). The Restart starts
    in the pass that finds the pod gone, as Go's restart selection reads the row as observed (Ready)
    before any demotion (before: one pass later, after a ``Pending`` pass; earlier still, ours rebuilt
    it through Create under either policy, no Restart)."""
    sim, driver = _up(2, lifecycle={"restartPolicy": policy})
    sim.pods.pop("llama-pool-engine-1-default-0")
    driver.one_pass()
    assert _phases(sim)[0] == "Ready"
    assert _op_type(sim, 0) is None
    if policy == "None":
        assert _op_type(sim, 1) != "Restart"
        assert "RestartTriggered" not in sim.event_reasons()
        return
    assert _phases(sim)[1] == "Restarting"
    assert _op(sim, 1)["type"] == "Restart"
    assert _op(sim, 1)["reason"] == "pod count 0 below desired 1"
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    assert [r["incarnation"] for r in sim.rows()] == [1, 2]


def _gang_decision(sim: Sim) -> tuple[object, ...]:
    """What a pass decides: the pod writes, and each row's phase and operation."""
    p = plan(sim.observe())
    writes = tuple(
        a for a in p.actions if not isinstance(a, WriteStatus) and type(a).__name__ != "RecordEvent"
    )
    status = next((a.status for a in p.actions if isinstance(a, WriteStatus)), sim.status)
    rows = tuple(
        (
            r["index"],
            r["phase"],
            (r.get("operation") or {}).get("type"),
            (r.get("operation") or {}).get("step"),
        )
        for r in status["instanceStatuses"]
    )
    return writes, rows


@pytest.mark.parametrize(
    ("partial", "counts"),
    [
        pytest.param(
            True, (2, 2, ["sim-node", "sim-node-b"]), id="persisted observation leads partial live gang"
        ),
        pytest.param(False, (1, 1, ["sim-node"]), id="persisted observation trails complete live gang"),
    ],
)
def test_removable_inline_fields_do_not_change_decision(
    partial: bool, counts: tuple[int, int, list[str]]
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_RemovableInlineFieldsDoNotChangeDecision (each entry): a leader+worker Instance under
    ``RecreateInstanceOnPodRestart`` with a roll pending; the row's inline ``readyPodCount``,
    ``scheduledPodCount`` and ``nodesOccupied`` (stale either way) change nothing in the pass. A
    partial live gang is restarted; a complete one is rolled, not restarted."""
    sim, driver = _up(1, workers=1, lifecycle=RECREATE_INSTANCE)
    sim.image = "vllm:v2"
    if partial:
        sim.pods.pop("llama-pool-engine-0-worker-0")
    without = _gang_decision(sim)
    ready, scheduled, nodes = counts
    sim.status["instanceStatuses"][0].update(
        readyPodCount=ready, scheduledPodCount=scheduled, nodesOccupied=nodes
    )
    assert _gang_decision(sim) == without
    driver.one_pass()
    assert _op_type(sim, 0) == ("Restart" if partial else "Update")


# -- the update pass ---------------------------------------------------------------------------------


def _seed_op(sim: Sim, index: int, phase: str, **op: Any) -> None:
    row = next(r for r in sim.status["instanceStatuses"] if r["index"] == index)
    row.update(phase=phase, operation={"startedAt": "2026-01-01T00:00:00Z", **op})


def test_update_selects_triggered_instances() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_SelectsTriggeredInstances: Instance 0 on the prior revision starts fresh,
    Instance 1 mid-update continues its own attempt, Instance 2 already on the target is not
    touched; with no rollingUpdate both budgets are uncapped (0 starts beside 1's attempt). With no
    roll target (the spec's revision is what runs) no update is planned."""
    sim, driver = _up(3, lifecycle=_rolling(2))
    sim.image = "vllm:v2"
    driver.run(
        lambda s: (
            all(r["phase"] == "Ready" and not r.get("operation") for r in s.rows())
            and s.rows()[2]["runningRevision"] != s.rows()[0]["runningRevision"]
        )
    )
    target = sim.rows()[2]["runningRevision"]
    sim.update_spec(lifecycle=None)
    _seed_op(sim, 1, "Updating", id="update-1-seeded", type="Update", step="Surge", targetRevision=target)
    driver.one_pass()
    assert (_op_type(sim, 0), _op(sim, 0)["targetRevision"]) == ("Update", target)
    assert _op(sim, 0)["id"] != "update-1-seeded"
    assert _op(sim, 1)["id"] == "update-1-seeded"
    assert _op_type(sim, 2) is None
    sim, driver = _up(3)
    driver.one_pass()
    assert [_op_type(sim, i) for i in range(3)] == [None, None, None]


def test_update_retry_block_wait() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_RetryBlockWait: a Backoff RetryBlock on the target not due for 30 s denies the
    fresh start, and the pass wakes when it is due."""
    sim, driver = _up(1)
    sim.image = "vllm:v2"
    target = sim.observe().render
    assert isinstance(target, DesiredRevision)
    wake = sim.now.replace(microsecond=0) + timedelta(seconds=30)
    sim.status["retryBlocks"] = [
        {
            "targetRevision": target.name,
            "state": "Backoff",
            "attemptsStarted": 1,
            "firstFailureAt": format_time(sim.now),
            "lastFailureAt": format_time(sim.now),
            "nextRetryAt": format_time(wake),
            "reason": "seeded",
        }
    ]
    p = driver.one_pass()
    assert _op_type(sim, 0) is None
    assert p.requeue_after == (wake - sim.now).total_seconds()


def test_update_adopt_revision() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_AdoptRevision: a Ready row with no running revision whose runtime-ready pod
    carries the target's hash is stamped on the target (no roll); the same pod not runtime-ready is
    proof of nothing, and the row takes the ordinary roll."""
    sim, driver = _up(1)
    target = sim.rows()[0]["runningRevision"]
    del sim.status["instanceStatuses"][0]["runningRevision"]
    driver.one_pass()
    assert (_phases(sim)[0], sim.rows()[0].get("runningRevision"), _op_type(sim, 0)) == (
        "Ready",
        target,
        None,
    )
    sim, driver = _up(1)
    del sim.status["instanceStatuses"][0]["runningRevision"]
    pod = sim.pods["llama-pool-engine-0-default-0"].obj
    for cond in pod["status"]["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "False"
    driver.one_pass()
    assert _op_type(sim, 0) == "Update"


def test_update_cleanup_only_roll_back_wreckage() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Update_CleanupOnly_RollBackWreckage, its single-pod halves: a Failed row already on the
    target (the corrective roll-back) with a live pod of a third revision beside its own has the
    stray cleaned and is not started fresh (no Update attempt); with only its own pod nothing is
    selected. (Go's gang half, a Failed source whose preserved gang-surge operation names a
    superseded revision, is not ported here.)"""
    sim, driver = _up(1)
    sim.status["instanceStatuses"][0]["phase"] = "Failed"
    own = sim.pods["llama-pool-engine-0-default-0"].obj
    alien = json.loads(json.dumps(own))
    # Go names it ``<pod>-alien`` beside the row's pod; here it takes ordinal 1 (the sim, as the API
    # server's names do, holds one pod per slot).
    alien["metadata"]["name"] = "llama-pool-engine-0-default-1"
    alien["metadata"]["uid"] = "alien-uid"
    alien["metadata"]["labels"][c.LABEL_REVISION_HASH] = "deadrev1"
    alien["metadata"]["labels"][c.LABEL_POD_ORDINAL] = "1"
    sim.pods[alien["metadata"]["name"]] = SimPod(alien, sim.now, "ok")
    for _ in range(4):
        driver.one_pass()
        sim.advance(5)
    assert "llama-pool-engine-0-default-1" not in sim.live_pods()
    assert "llama-pool-engine-0-default-0" in sim.live_pods()
    assert _op_type(sim, 0) != "Update"
    sim, driver = _up(1)
    sim.status["instanceStatuses"][0]["phase"] = "Failed"
    driver.one_pass()
    assert _op_type(sim, 0) is None
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]


# -- the pause matrices ------------------------------------------------------------------------------


def _target(sim: Sim) -> str:
    render = sim.observe().render
    assert isinstance(render, DesiredRevision)
    return render.name


def _seed(sim: Sim, index: int, phase: str, incarnation: int = 1, **op: Any) -> None:
    row = next(r for r in sim.status["instanceStatuses"] if r["index"] == index)
    row.update(phase=phase, incarnation=incarnation)
    if op:
        row["operation"] = {"startedAt": "2026-01-01T00:00:00Z", **op}


def _pause(sim: Sim, mode: str | None) -> None:
    if mode is None:
        return
    sim.update_spec(paused=True, pauseMode=mode)


def _all_passes(mode: str | None, policy: str = "RecreateInstanceOnPodRestart") -> tuple[Sim, Driver, str]:
    """Go's all-passes fixture as far as ours has it: Instance 0 lost its pod and runs the prior
    revision (restart and update triggers), Instance 1 is an extra (scale-down); no migration."""
    sim, driver = _up(2, lifecycle={"restartPolicy": policy})
    prior = sim.rows()[0]["runningRevision"]
    sim.update_spec(replicas=1)
    _pause(sim, mode)
    sim.image = "vllm:v2"
    sim.pods.pop("llama-pool-engine-0-default-0")
    return sim, driver, prior


def test_paused_standard_pause_plans_scale_down_and_repair_only() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_RepairRunsFleetChangesDoNot, "standard pause plans scale-down and repair only":
    the extra drains, Instance 0 is repaired by a Restart at the revision it ran, nothing rolls and
    nothing is created. (Ours starts the Restart on the second pass: see
    ``test_restart_selects_triggered_instances``.)"""
    sim, driver, prior = _all_passes("Recover")
    driver.one_pass()
    driver.one_pass()
    assert _op_type(sim, 1) == "Delete"
    assert (_op_type(sim, 0), _op(sim, 0)["targetRevision"]) == ("Restart", prior)
    assert not any(_op_type(sim, r["index"]) == "Update" for r in sim.rows())
    assert sorted(r["index"] for r in sim.rows()) == [0, 1]


def test_paused_frozen_pause_truncates_after_scale_down() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_RepairRunsFleetChangesDoNot, "frozen pause truncates after scale-down": the
    extra drains and nothing else is planned: no repair, no roll, no create. (Go's Decision also
    holds no Demote for a RecreateInstanceOnPodRestart Instance; its status publication demotes the
    row all the same, ``DemotableReady`` in ``status.go`` and ``status_test.go``'s "restart-owned pod
    loss publishes Pending", so the published phase, Pending, is not where they differ.)"""
    sim, driver, _ = _all_passes("Freeze")
    driver.one_pass()
    driver.one_pass()
    assert _op_type(sim, 1) == "Delete"
    assert _op_type(sim, 0) is None
    assert "llama-pool-engine-0-default-0" not in sim.live_pods()


def test_paused_restart_policy_none_plans_truth_but_no_repair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_RepairRunsFleetChangesDoNot, "standard pause with RestartPolicy None plans truth
    but no repair": the extra drains and Instance 0 is demoted (the extra is the scale-down's, not
    demoted); nothing repairs, rolls or creates."""
    sim, driver, _ = _all_passes("Recover", policy="None")
    driver.one_pass()
    driver.one_pass()
    assert _op_type(sim, 1) == "Delete"
    assert (_phases(sim)[0], _op_type(sim, 0)) == ("Pending", None)
    assert "llama-pool-engine-0-default-0" not in sim.live_pods()


def test_paused_unpause_restores_the_full_pipeline() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_RepairRunsFleetChangesDoNot, "unpause restores escalation and the full pipeline":
    unpaused, the same world scales down, rebuilds and rolls: one Instance, Ready on the new revision."""
    sim, driver, prior = _all_passes(None)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1 and len(s.rows()) == 1)
    assert sim.rows()[0]["runningRevision"] != prior


def _open_attempts(mode: str | None, committed_create: bool = True) -> tuple[Sim, Driver]:
    """Go's build() of TestPlan_Paused_AdvancesInFlightAttemptsOnly: 0 a recreate Update at Drain
    whose old pod is gone, 1 idle Ready on the prior revision (backed), 2 a committed Create at the
    target with no pod yet (or no row at all)."""
    sim, driver = _up(3)
    sim.image = "vllm:v2"
    target = _target(sim)
    _pause(sim, mode)
    _seed(
        sim,
        0,
        "Updating",
        2,
        id="update-0",
        type="Update",
        step="Drain",
        targetRevision=target,
        strategy="RecreatePod",
    )
    sim.pods.pop("llama-pool-engine-0-default-0")
    sim.pods.pop("llama-pool-engine-2-default-0")
    if committed_create:
        _seed(sim, 2, "Creating", id="create-2", type="Create", step="CreatePods", targetRevision=target)
    else:
        sim.status["instanceStatuses"] = [r for r in sim.status["instanceStatuses"] if r["index"] != 2]
        driver = Driver(sim)  # a status that never held the row (the driver's watch starts here)
    return sim, driver


def test_paused_selects_the_open_attempts_only() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_AdvancesInFlightAttemptsOnly, "paused selects the open attempts only": the open
    Update stays the same attempt (a continuation, never a fresh start), the idle Instance is not
    started, the committed Create goes on (its pod is created). Whether the held Update's step moves
    is the pause hold's (``holds/pause_test.go``), not asserted here."""
    sim, driver = _open_attempts("Recover")
    driver.one_pass()
    assert _op(sim, 0)["id"] == "update-0"
    assert _op_type(sim, 1) is None
    assert "llama-pool-engine-2-default-0" in sim.live_pods()


def test_paused_no_committed_create_means_no_create_pass() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_AdvancesInFlightAttemptsOnly, "no committed create means no Create pass": the
    index with no row stays empty while paused."""
    sim, driver = _open_attempts("Recover", committed_create=False)
    driver.one_pass()
    assert 2 not in _phases(sim)
    assert "llama-pool-engine-2-default-0" not in sim.live_pods()


def test_paused_unpause_restores_the_fresh_start() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_Paused_AdvancesInFlightAttemptsOnly, "unpause restores the fresh start": unpaused,
    Instance 1 starts fresh and Instance 0 keeps its attempt."""
    sim, driver = _open_attempts(None)
    driver.one_pass()
    assert _op(sim, 0)["id"] == "update-0"
    assert _op_type(sim, 1) == "Update"


def _open_repair(mode: str, with_open: bool = True) -> tuple[Sim, Driver]:
    """Go's build() of TestPlan_PauseFreeze_AdvancesOpenRepairOnly: 0 a Restart at Drain (its pod
    gone), 1 Ready with no pod (a fresh pod-loss trigger); RecreateInstanceOnPodRestart, paused."""
    sim, driver = _up(2, lifecycle=RECREATE_INSTANCE)
    rev = sim.rows()[0]["runningRevision"]
    _pause(sim, mode)
    sim.pods.clear()
    if with_open:
        _seed(sim, 0, "Restarting", 2, id="restart-0", type="Restart", step="Drain", targetRevision=rev)
    else:
        sim.status["instanceStatuses"] = [r for r in sim.status["instanceStatuses"] if r["index"] != 0]
        driver = Driver(sim)  # a status that never held the row (the driver's watch starts here)
    return sim, driver


def test_pause_freeze_drives_the_open_repair_only() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesOpenRepairOnly, "frozen pause drives the open repair only": the
    open Restart keeps its attempt; the fresh pod loss starts no repair."""
    sim, driver = _open_repair("Freeze")
    driver.one_pass()
    driver.one_pass()
    assert _op(sim, 0)["id"] == "restart-0"
    assert _op_type(sim, 1) is None


def test_pause_freeze_with_nothing_open_plans_no_repair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesOpenRepairOnly, "frozen pause with nothing open plans no repair"."""
    sim, driver = _open_repair("Freeze", with_open=False)
    driver.one_pass()
    driver.one_pass()
    assert _op_type(sim, 1) is None
    assert sim.live_pods() == []


def test_pause_standard_keeps_repairing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesOpenRepairOnly, "standard pause keeps repairing": both the open
    repair and the fresh one are driven (ours starts the fresh one on the second pass), and both
    Instances come back."""
    sim, driver = _open_repair("Recover")
    driver.one_pass()
    driver.one_pass()
    assert (_op(sim, 0)["id"], _op_type(sim, 1)) == ("restart-0", "Restart")
    driver.run(lambda s: s.status.get("readyReplicas") == 2)


def _open_rolls(mode: str | None) -> tuple[Sim, Driver]:
    """Go's build() of TestPlan_PauseFreeze_AdvancesTheOpenRollOnly: 0 a recreate mid-gap (old pod
    gone), 1 an in-place patch mid-flight, 2 idle Ready on the prior revision (backed)."""
    sim, driver = _up(3)
    sim.image = "vllm:v2"
    target = _target(sim)
    _pause(sim, mode)
    op = {"type": "Update", "targetRevision": target}
    _seed(sim, 0, "Updating", 2, id="update-Drain", step="Drain", strategy="RecreatePod", **op)
    _seed(sim, 1, "Updating", 1, id="update-InPlace", step="InPlace", strategy="InPlaceIfPossible", **op)
    sim.pods.pop("llama-pool-engine-0-default-0")
    return sim, driver


def test_pause_freeze_drives_both_open_rolls_and_starts_nothing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesTheOpenRollOnly, "frozen pause drives both open rolls and starts
    nothing": both attempts stay (continuations, never restamped), the idle Instance is not started."""
    sim, driver = _open_rolls("Freeze")
    driver.one_pass()
    assert (_op(sim, 0)["id"], _op(sim, 1)["id"]) == ("update-Drain", "update-InPlace")
    assert _op_type(sim, 2) is None


def test_pause_unpause_adds_the_fresh_start_and_leaves_the_open_rolls_alone() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesTheOpenRollOnly, "unpause adds the fresh start and leaves the open
    rolls alone"."""
    sim, driver = _open_rolls(None)
    driver.one_pass()
    assert (_op(sim, 0)["id"], _op(sim, 1)["id"]) == ("update-Drain", "update-InPlace")
    assert _op_type(sim, 2) == "Update"


def _open_drain(mode: str | None) -> tuple[Sim, Driver]:
    """Go's build() of TestPlan_PauseFreeze_AdvancesTheOpenDrain: 0 a surge at SurgeDrain (its
    replacement at ordinal 1 up on the target), 1 idle Ready on the prior revision (backed)."""
    sim, driver = _up(2)
    sim.image = "vllm:v2"
    driver.run(lambda s: _op(s, 0).get("step") == "SurgeDrain" if s.rows() else False, limit=600)
    _pause(sim, mode)
    for r in sim.status["instanceStatuses"]:
        if r["index"] == 1:
            r.pop("operation", None)
            r["phase"] = "Ready"
    for name in [n for n in sim.pods if n.startswith("llama-pool-engine-1-") and not n.endswith("-0")]:
        sim.pods.pop(name)
    return sim, driver


def test_pause_freeze_drives_the_open_drain_and_starts_nothing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesTheOpenDrain, "frozen pause drives the open drain and starts
    nothing": the drain stays the same attempt, the idle Instance is not started."""
    sim, driver = _open_drain("Freeze")
    before = _op(sim, 0)["id"]
    driver.one_pass()
    assert _op(sim, 0)["id"] == before
    assert _op_type(sim, 1) is None


def test_pause_unpause_adds_the_fresh_start_and_leaves_the_drain_alone() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_decision_test.go @ 4dfb96b1,
    TestPlan_PauseFreeze_AdvancesTheOpenDrain, "unpause adds the fresh start and leaves the drain
    alone"."""
    sim, driver = _open_drain(None)
    before = _op(sim, 0)["id"]
    driver.one_pass()
    assert _op(sim, 0).get("id") in (before, None)
    assert _op_type(sim, 1) == "Update"
