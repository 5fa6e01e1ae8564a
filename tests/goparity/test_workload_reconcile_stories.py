"""OME's root ``reconcile_test.go``-like file of 612,458 characters: its closed-loop stories.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, a ``workload_test`` package file of 612,458
characters whose path and commit the index does not name (found by content, read whole; a 156,970-
character earlier text holds 54 of its 149 tests). Go drives ``workload.Reconcile`` pass after pass
against a fake client with a kubelet model (its ``recoveryHarness``); here the replica is applied to
the simulated world and planner passes run (``omereconcile.simulate``), or the planner function that
holds Go's rule is called on the rows Go's test builds. Which of the file's 290 new cases are ported,
not mappable or not yet ported is in docs/goparity.md ("The reconciler tier").
"""

from __future__ import annotations

import copy
import dataclasses
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.actions import CreatePod, DeletePod, WriteStatus
from omereconcile.planner import plan
from omereconcile.planner import rows as R
from omereconcile.planner.plan_indices import instance_plan_indices, scale_down_extras
from omereconcile.planner.retry import HELD_STATE, RetryBlock, RetryBook
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omerender import constants as c
from tests.goparity.reconciler_world import instances_on_own_nodes
from tests.goparity.test_workload_reconcile_part1 import _HARNESS_LADDER as HARNESS_LADDER
from tests.goparity.test_workload_reconcile_part1 import _crash_pod

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ (reconcile_test, 612,458 characters)"
T = datetime(2026, 1, 1)


def _pod(index: int) -> str:
    return f"llama-pool-engine-{index}-default-0"


def _ready(replicas: int, **spec: Any) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def _row(sim: Sim, index: int) -> dict[str, Any] | None:
    return next((r for r in sim.rows() if int(r["index"]) == index), None)


def _all_ready(sim: Sim, n: int) -> bool:
    rows = sim.rows()
    return (
        len(rows) == n
        and all(r.get("phase") == "Ready" and not r.get("operation") for r in rows)
        and len([p for p in sim.pods.values() if not p.obj["metadata"].get("deletionTimestamp")]) == n
    )


def test_scale_down_retires_the_ready_row_on_a_held_revision_first() -> None:
    """Go: … reconcile_test (612,458 characters), TestReconcile_ScaleDownRetiresTheReadyRowOnAHeldRevisionFirst:
    one Instance Ready on the pushed revision, whose ladder holds, the other Ready on the running
    revision; scaled to one, the plan keeps the running revision's row and the scale-down retires the
    pushed one whatever its index (``instance_plan_indices``' rank of a row on a failing revision)."""
    running, pushed = "llama-70b-engine-aaaaaaaa", "llama-70b-engine-bbbbbbbb"
    rows = [
        R.Row(index=0, phase=R.READY, running_revision=pushed, pod_count=1, serving_pod_count=1),
        R.Row(index=1, phase=R.READY, running_revision=running, pod_count=1, serving_pod_count=1),
    ]
    book = RetryBook({pushed: RetryBlock(pushed, HELD_STATE, 3, T, T, None, "x")}, "prod/llama-70b", "engine")
    plan = instance_plan_indices(rows, 1, book)
    assert plan == [1]
    assert scale_down_extras(rows, plan) == [0]


def test_pause_unbacked_ready_instance_demotes_to_pending() -> None:
    """Go: … TestPause_UnbackedReadyInstanceDemotesToPending: the pod of a converged Instance is
    deleted while the replica is paused. No pass recreates it, and the row falls back to Pending with
    no operation rather than keep claiming Ready, across passes; once the pause clears the Instance
    comes back Ready."""
    sim, driver = _ready(1)
    sim.update_spec(paused=True)
    del sim.pods[_pod(0)]
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None
    assert row["phase"] == "Pending"
    assert not row.get("operation")
    driver.one_pass()
    assert sim.live_pods() == []
    row = _row(sim, 0)
    assert row is not None
    assert row["phase"] == "Pending"
    sim.update_spec(paused=False)
    driver.run(lambda s: _all_ready(s, 1))


def test_unpause_empty_index_is_materialized_like_a_pending_row() -> None:
    """Go: … TestUnpause_EmptyIndexIsMaterializedLikeAPendingRow: a paused pass materializes no index
    (no row, no pod); clearing the pause lets the Create pass materialize it to Ready."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, paused=True))
    driver = Driver(sim)
    driver.one_pass()
    driver.one_pass()
    assert _row(sim, 0) is None
    assert sim.live_pods() == []
    sim.update_spec(paused=False)
    driver.run(lambda s: _all_ready(s, 1))


@pytest.mark.parametrize("serving", [True, False], ids=["serving on", "serving off"])
def test_ready_row_serving_gate_flips_stamp_no_transition(serving: bool) -> None:
    """Go: … TestReadyRow_ServingGateFlipsStampNoTransition (each entry): the serving gate is the
    load balancer's rotation, not the Instance lifecycle; a pod's gate flipped on or off leaves the
    converged row Ready with no operation, at the same incarnation and running revision."""
    sim, driver = _ready(1)
    before = copy.deepcopy(_row(sim, 0))
    assert before is not None
    conds = sim.pods[_pod(0)].obj["status"]["conditions"]
    for cond in conds:
        if cond["type"] == c.SERVING_GATE:
            cond["status"] = "True" if serving else "False"
    sim.tick()
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None
    assert row["phase"] == "Ready"
    assert not row.get("operation")
    assert row["incarnation"] == before["incarnation"]
    assert row.get("runningRevision") == before.get("runningRevision")


NODES = ("node-0", "node-1", "node-2", "node-3")


def _four_on_own_nodes() -> tuple[Sim, Driver]:
    """Four Ready single-pod Instances, Instance i on ``node-i``."""
    return instances_on_own_nodes(NODES)


@pytest.mark.parametrize(
    ("down", "removed", "kept"),
    [
        pytest.param(1, [1], [0, 2, 3], id="single pod/down by one"),
        pytest.param(2, [1, 3], [0, 2], id="single pod/down by two"),
    ],
)
def test_scale_down_removes_the_instance_on_a_cordoned_node_first(
    down: int, removed: list[int], kept: list[int]
) -> None:
    """Go: … TestScaleDown_RemovesTheInstanceOnACordonedNodeFirst, the single-pod entries: four
    healthy Instances each on a node of its own, the node under Instance 1 cordoned. A scale-down by
    one removes Instance 1, not the highest index; by two, Instance 1 and then the highest index. The
    survivors keep the pods they had, nothing lands on the cordoned node, and the rows settle at the
    new count."""
    sim, driver = _four_on_own_nodes()
    uids = {i: sim.pods[_pod(i)].obj["metadata"]["uid"] for i in kept}
    sim.node_objs["node-1"]["spec"]["unschedulable"] = True
    sim.update_spec(replicas=4 - down)
    driver.run(lambda s: _all_ready(s, 4 - down))
    assert sorted(int(r["index"]) for r in sim.rows()) == kept
    for i in removed:
        assert _pod(i) not in sim.pods
    for i in kept:
        assert sim.pods[_pod(i)].obj["metadata"]["uid"] == uids[i]
    assert all(sim.node_of(name) != "node-1" for name in sim.pods)


def _leaves_rotation(sim: Sim, name: str, fault: str) -> None:
    """The pod keeps running and leaves rotation: its readiness probe fails (the runner never turns
    ready again: the sim's ``pending`` behaviour, no terminal waiting reason), or it crash-loops."""
    pod = sim.pods[name]
    pod.behaviour = "pending" if fault == "readiness probe fails" else "crash"
    pod.restarted_at = sim.now
    sim.tick()


@pytest.mark.parametrize("fault", ["readiness probe fails", "crash-loops under policy None"])
@pytest.mark.parametrize(
    ("down", "removed", "kept"),
    [pytest.param(1, [0], [1, 2, 3], id="down by one"), pytest.param(2, [0, 3], [1, 2], id="down by two")],
)
@pytest.mark.parametrize("gang", [False, True], ids=["single pod", "gang leader"])
def test_scale_down_removes_the_instance_that_serves_nothing_first(
    gang: bool, down: int, removed: list[int], kept: list[int], fault: str
) -> None:
    """Go: … TestScaleDown_RemovesTheInstanceThatServesNothingFirst (each entry): four Instances at
    rest under restart policy None with a stuck-pod grace no pass reaches; a pod of Instance 0 (the
    leader of a gang) leaves rotation while its row stays Ready. A scale-down by one removes Instance
    0, not the healthy Instance 3; by two, Instance 0 and then Instance 3. The survivors keep the pods
    they had, nothing is rebuilt, and the rows settle at the new count."""
    sim = Sim(workers=1 if gang else 0)  # no stuck-pod grace configured: no pass reaches one
    sim.apply_replica(base_replica(replicas=4, lifecycle={"restartPolicy": "None"}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 4)
    prefix = "llama-pool-engine-{}-"
    before = {
        i: sorted(p.obj["metadata"]["uid"] for n, p in sim.pods.items() if n.startswith(prefix.format(i)))
        for i in kept
    }
    victim = "llama-pool-engine-0-leader-0" if gang else _pod(0)
    _leaves_rotation(sim, victim, fault)
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None
    assert row["phase"] == "Ready"
    assert (row.get("servingPodCount") or 0) < (row.get("podCount") or 0)
    sim.update_spec(replicas=4 - down)
    per = 2 if gang else 1
    driver.run(
        lambda s: (
            len(s.rows()) == 4 - down
            and all(r.get("phase") == "Ready" and not r.get("operation") for r in s.rows())
            and len([p for p in s.pods.values() if not p.obj["metadata"].get("deletionTimestamp")])
            == (4 - down) * per
        )
    )
    assert sorted(int(r["index"]) for r in sim.rows()) == kept
    for i in kept:
        now = sorted(p.obj["metadata"]["uid"] for n, p in sim.pods.items() if n.startswith(prefix.format(i)))
        assert now == before[i]


# -- what a pause lets finish and what it withholds -----------------------------------------------


def _op(op_id: str, type_: str, step: str, rev: str) -> dict[str, Any]:
    return {
        "id": op_id,
        "type": type_,
        "step": step,
        "targetRevision": rev,
        "startedAt": "2025-01-01T00:00:00Z",
    }


def _gang_creating(paused: bool, running: str | None) -> tuple[Sim, Driver, str]:
    """Go ``newRestartScaleTestFixture`` with a Create at CreatePods on a two-pod Instance: a gang
    Ready on v1 whose row is rewound to a committed Create with its worker not yet made (restart
    policy None: the Create pass owns a partial set). ``running``: the row's running revision (""
    for a first materialization). Returns the sim, its driver and the pinned revision."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": "None"}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    pinned = sim.status["currentRevision"]
    row = sim.status["instanceStatuses"][0]
    row.update(phase="Creating", operation=_op("create-0", "Create", "CreatePods", pinned))
    if running is None:
        row.pop("runningRevision", None)
    else:
        row["runningRevision"] = running
    del sim.pods["llama-pool-engine-0-worker-0"]
    sim.update_spec(paused=paused)
    return sim, driver, pinned


def test_paused_completes_the_open_recreate() -> None:
    """Go: … TestReconcile_PausedCompletesTheOpenRecreate: a RecreatePod update already at its Drain
    step, its pod drained, finishes under a pause: the pod is recreated at its own name. The seeded
    operation carries the strategy ours always journals; Go's carries none and reads the plan's (a
    Drain-step Update with no strategy recorded makes ours create at the surge slot: see
    docs/goparity.md)."""
    sim, driver = _ready(1, lifecycle={"updateStrategy": {"type": "RecreatePod"}})
    rev = sim.status["currentRevision"]
    row = sim.status["instanceStatuses"][0]
    row.update(
        phase="Updating",
        incarnation=row["incarnation"] + 1,
        operation={**_op("update-0", "Update", "Drain", rev), "strategy": "RecreatePod"},
    )
    del sim.pods[_pod(0)]
    sim.update_spec(paused=True)
    driver.one_pass()
    assert sim.live_pods() == [_pod(0)]


def test_paused_completes_the_committed_create() -> None:
    """Go: … TestReconcile_PausedCompletesTheCommittedCreate: a Create that committed finishes the
    set it started under a pause (the missing member is made), while an index that never opened one
    stays empty: no pod, no row."""
    sim, driver, _ = _gang_creating(paused=True, running="")
    sim.update_spec(replicas=2)
    driver.one_pass()
    assert "llama-pool-engine-0-worker-0" in sim.pods
    assert not any(n.startswith("llama-pool-engine-1-") for n in sim.pods)
    assert _row(sim, 1) is None


def test_paused_leaves_a_superseded_create_alone() -> None:
    """Go: … TestReconcile_PausedLeavesASupersededCreateAlone: a revision edit arriving mid-pause does
    not reach a half-built first materialization: the attempt keeps its identity and pin and no pod is
    built for the edited revision. Unpaused, the pass retires the attempt and opens a fresh one."""
    sim, driver, pinned = _gang_creating(paused=True, running=None)
    sim.image = "vllm:v2"  # the edit: a new image renders a new revision
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None
    assert row["operation"]["id"] == "create-0"
    assert row["operation"]["targetRevision"] == pinned
    assert sorted(sim.pods) == ["llama-pool-engine-0-leader-0"]
    sim.update_spec(paused=False)
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None
    assert (row.get("operation") or {}).get("id") != "create-0"


def test_paused_finishes_a_create_it_would_not_retire() -> None:
    """Go: … TestReconcile_PausedFinishesACreateItWouldNotRetire, "a serving Instance rebuilding a lost
    member": an Instance promoted once (running revision set) rebuilding a lost member under a Create
    keeps its attempt whatever the target says; under a pause the set is finished at the pinned
    revision, the attempt is not replaced and nothing is announced."""
    sim, driver, pinned = _gang_creating(paused=True, running=None)
    row = sim.status["instanceStatuses"][0]
    row["runningRevision"] = pinned
    sim.image = "vllm:v2"
    events = len(sim.events)
    driver.one_pass()
    assert "llama-pool-engine-0-worker-0" in sim.pods
    worker = sim.pods["llama-pool-engine-0-worker-0"].obj
    assert worker["metadata"]["labels"][c.LABEL_REVISION_HASH] == pinned.rsplit("-", 1)[-1]
    row0 = _row(sim, 0)
    assert row0 is not None
    assert row0["operation"]["id"] == "create-0"
    assert row0["operation"]["targetRevision"] == pinned
    assert [e.event_reason for e in sim.events[events:]] == []


@pytest.mark.parametrize(
    ("arrange", "pods"),
    [("pod ready", 1), ("pod serving on", 1), ("pod serving off", 1), ("pod deleted", 0)],
    ids=["pod ready", "pod serving on", "pod serving off", "pod deleted"],
)
def test_pending_row_pod_observations_are_inert(arrange: str, pods: int) -> None:
    """Go: … TestPendingRow_PodObservationsAreInert (each entry): a Pending row under a pause holds no
    operation and claims no pods; its pod turning ready, entering or leaving rotation, or going away
    reaches nothing: the pass creates and deletes no pod and leaves the row Pending with no operation.
    Go forces the Pending phase onto a row whose pod is Ready; the sim's status-truth check refuses
    that seeded status, so the pass is planned on the world directly and its actions are read."""
    sim, _ = _ready(1)
    sim.update_spec(paused=True)
    sim.status["instanceStatuses"][0]["phase"] = "Pending"
    if arrange == "pod deleted":
        del sim.pods[_pod(0)]
    elif arrange != "pod ready":
        for cond in sim.pods[_pod(0)].obj["status"]["conditions"]:
            if cond["type"] == c.SERVING_GATE:
                cond["status"] = "True" if arrange == "pod serving on" else "False"
    sim.tick()
    actions = plan(sim.observe()).actions
    assert not [a for a in actions if isinstance(a, (CreatePod, DeletePod))]
    writes = [a for a in actions if isinstance(a, WriteStatus)]
    rows = writes[-1].status["instanceStatuses"] if writes else sim.rows()
    assert len(rows) == 1
    assert rows[0]["phase"] == "Pending"
    assert not rows[0].get("operation")
    assert len(sim.live_pods()) == pods


def _gangs_at_rest(sim: Sim, n: int) -> bool:
    rows = sim.rows()
    return (
        len(rows) == n
        and all(r.get("phase") == "Ready" and not r.get("operation") for r in rows)
        and len(sim.live_pods()) == 2 * n
    )


def _four_gangs_every_pod_on_its_own_node() -> tuple[Sim, Driver]:
    """Four Ready gangs (a leader and a worker each), every pod on a node of its own: Instance i's
    leader on ``node-2i``, its worker bound to ``node-2i+1`` by hand (the sim binds a pass's pods to one
    node; Go's node model spreads them one per node)."""
    sim = Sim(workers=1)
    template = sim.node_objs["sim-node"]
    sim.node_objs = {}
    for k in range(8):
        node = copy.deepcopy(template)
        node["metadata"]["name"] = f"node-{k}"
        sim.node_objs[f"node-{k}"] = node
    driver = Driver(sim)
    for count in range(1, 5):
        for name, obj in sim.node_objs.items():
            obj["spec"]["unschedulable"] = name != f"node-{2 * (count - 1)}"
        if count == 1:
            sim.apply_replica(base_replica(replicas=1))
        else:
            sim.update_spec(replicas=count)
        driver.run(lambda s, n=count: converged(s) and _gangs_at_rest(s, n))
        sim.pods[f"llama-pool-engine-{count - 1}-worker-0"].obj["spec"]["nodeName"] = f"node-{2 * count - 1}"
    for obj in sim.node_objs.values():
        obj["spec"].pop("unschedulable", None)
    return sim, driver


@pytest.mark.parametrize(
    ("down", "removed", "kept"),
    [pytest.param(1, [1], [0, 2, 3], id="down by one"), pytest.param(2, [1, 3], [0, 2], id="down by two")],
)
def test_scale_down_removes_the_gang_whose_worker_is_on_a_cordoned_node_first(
    down: int, removed: list[int], kept: list[int]
) -> None:
    """Go: … TestScaleDown_RemovesTheInstanceOnACordonedNodeFirst, the gang-worker entries: four gangs,
    every pod on a node of its own, and the node under Instance 1's worker (only) cordoned. A
    scale-down by one removes Instance 1, not the highest index; by two, Instance 1 and then the
    highest index. The survivors keep the pods they had, nothing is left on the cordoned node, and the
    rows settle at the new count."""
    sim, driver = _four_gangs_every_pod_on_its_own_node()
    cordoned = sim.node_of("llama-pool-engine-1-worker-0")
    assert [n for n in sim.pods if sim.node_of(n) == cordoned] == ["llama-pool-engine-1-worker-0"]
    uids = {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items() if int(n.split("-")[3]) in kept}
    sim.node_objs[cordoned]["spec"]["unschedulable"] = True
    sim.update_spec(replicas=4 - down)
    driver.run(lambda s: _gangs_at_rest(s, 4 - down))
    assert sorted(int(r["index"]) for r in sim.rows()) == kept, GO
    for i in removed:
        assert not [n for n in sim.pods if f"-engine-{i}-" in n], GO
    assert {n: p.obj["metadata"]["uid"] for n, p in sim.pods.items()} == uids, GO
    assert all(sim.node_of(name) != cordoned for name in sim.pods), GO


def _gang_with_an_open_repair(**lifecycle: Any) -> tuple[Sim, Driver, int, str]:
    """Go ``loseRunner(0, "worker")`` then ``run(5, repairInFlight)``: one Ready gang under
    RecreateInstanceOnPodRestart whose worker is gone; the Restart it opens is in flight."""
    sim = Sim(workers=1)
    sim.apply_replica(
        base_replica(replicas=1, lifecycle={"restartPolicy": "RecreateInstanceOnPodRestart", **lifecycle})
    )
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and _gangs_at_rest(s, 1))
    row = _row(sim, 0)
    assert row is not None
    before, running = row["incarnation"], row["runningRevision"]
    del sim.pods["llama-pool-engine-0-worker-0"]
    sim.tick()
    for _ in range(5):
        driver.one_pass()
        row = _row(sim, 0)
        assert row is not None
        if (row.get("operation") or {}).get("type") == "Restart":
            break
        sim.advance(1)
    assert (row.get("operation") or {}).get("type") == "Restart", GO
    return sim, driver, before, running


def _repaired_above(sim: Sim, incarnation: int) -> bool:
    row = _row(sim, 0)
    return (
        row is not None
        and row["phase"] == "Ready"
        and not row.get("operation")
        and row["incarnation"] > incarnation
        and len(sim.live_pods()) == 2
    )


def _images(sim: Sim) -> set[str]:
    return {p.obj["spec"]["containers"][0]["image"] for p in sim.pods.values()}


def test_pause_freeze_lifted_over_a_crash_loop_opens_the_repair_at_once() -> None:
    """Go: … TestPauseFreeze_LiftedOverACrashLoop_OpensTheRepairAtOnce (not mappable before goJ: ours had
    no crash-loop repair of an operation-free Ready row): one single-pod Instance under restart policy
    None (the harness's stuck-pod grace of 30 s); a Freeze lands, then its pod is pointed at an image
    that crashes at start. Four frozen passes outlive the grace: no RestartTriggered, the crash-looping
    pod untouched, the row with no operation at its incarnation. The first pass after the lift records
    one RestartTriggered (Go ``readCrashLoopRepair`` reads the same wedge; ours
    ``planner/restart.py`` ``op_less_crash_loop_repair``); the repair rebuilds the Instance to Ready at
    a higher incarnation, still recording v1, its pod labelled and rendered from v1, repaired once."""
    sim = Sim(
        settings=OperatorSettings(stuck_pod_grace_period=timedelta(seconds=30), update_retry=HARNESS_LADDER)
    )
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": "None"}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    row = _row(sim, 0)
    assert row is not None
    before, running = row["incarnation"], row["runningRevision"]
    crashed = sim.pods[_pod(0)].obj["metadata"]["uid"]

    sim.update_spec(paused=True, pauseMode="Freeze")
    _crash_pod(sim, _pod(0))
    for _ in range(4):
        driver.one_pass()
        sim.advance(10)
        sim.tick()
    assert sim.event_reasons().count("RestartTriggered") == 0, GO
    assert [sim.pods[n].obj["metadata"]["uid"] for n in sim.live_pods()] == [crashed], GO
    row = _row(sim, 0)
    assert row is not None
    assert (row.get("operation"), row["incarnation"]) == (None, before), GO

    sim.update_spec(paused=None, pauseMode=None)
    driver.one_pass()
    assert sim.event_reasons().count("RestartTriggered") == 1, GO

    def repaired(s: Sim) -> bool:
        r = _row(s, 0)
        return (
            r is not None
            and r["phase"] == "Ready"
            and not r.get("operation")
            and r["incarnation"] > before
            and len(s.live_pods()) == 1
        )

    driver.run(repaired, limit=600)
    row = _row(sim, 0)
    assert row is not None
    assert row["runningRevision"] == running, GO
    pod = sim.pods[sim.live_pods()[0]].obj
    assert pod["metadata"]["labels"][c.LABEL_REVISION_HASH] == running.rsplit("-", 1)[-1], GO
    assert pod["spec"]["containers"][0]["image"] == "vllm:v1", GO
    assert sim.event_reasons().count("RestartTriggered") == 1, GO


def test_pause_freeze_lands_on_an_open_gang_restart_the_repair_finishes_under_it() -> None:
    """Go: … TestPauseFreeze_LandsOnAnOpenGangRestart_TheRepairFinishesUnderIt: a Freeze that lands on
    a gang whose Restart is open does not strand it: the repair runs on under the freeze until the
    gang is Ready at the next incarnation on its running revision, with one RestartTriggered; lifting
    the freeze changes nothing (no second repair, the same incarnation, settled)."""
    sim, driver, before, running = _gang_with_an_open_repair()
    sim.update_spec(paused=True, pauseMode="Freeze")
    driver.run(lambda s: _repaired_above(s, before), limit=600)
    row = _row(sim, 0)
    assert row is not None
    assert row["runningRevision"] == running, GO
    assert _images(sim) == {"vllm:v1"}, GO
    repaired = row["incarnation"]
    assert sim.event_reasons().count("RestartTriggered") == 1, GO
    sim.update_spec(paused=None, pauseMode=None)
    for _ in range(4):
        driver.one_pass()
        sim.advance(5)
    row = _row(sim, 0)
    assert row is not None
    assert (row["phase"], row.get("operation"), row["incarnation"]) == ("Ready", None, repaired), GO
    assert converged(sim), GO
    assert sim.event_reasons().count("RestartTriggered") == 1, GO


def test_pause_lands_on_an_open_gang_restart_a_push_during_the_hold_rolls_it_after_the_unpause() -> None:
    """Go: … TestPause_LandsOnAnOpenGangRestart_APushDuringTheHoldRollsItAfterTheUnpause: SurgeThenDrain
    (maxSurge 1, maxUnavailable 1); a pause lands on the gang's open Restart and a fix is pushed during
    the hold. The repair finishes under the pause at the revision the gang was running, the pushed
    image reaches no pod until the unpause, and the unpause rolls the gang to the fix with no second
    repair (one RestartTriggered in all)."""
    sim, driver, before, running = _gang_with_an_open_repair(
        updateStrategy={"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}
    )
    sim.update_spec(paused=True)
    sim.image = "vllm:v2"
    driver.run(lambda s: _repaired_above(s, before), limit=600)
    row = _row(sim, 0)
    assert row is not None
    assert row["runningRevision"] == running, GO
    assert _images(sim) == {"vllm:v1"}, GO
    for _ in range(3):
        driver.one_pass()
        sim.advance(5)
    assert _images(sim) == {"vllm:v1"}, GO
    assert sim.event_reasons().count("RestartTriggered") == 1, GO
    sim.update_spec(paused=None)
    fixed = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and _gangs_at_rest(s, 1) and s.status.get("currentRevision") == fixed)
    assert _images(sim) == {"vllm:v2"}, GO
    assert sim.event_reasons().count("RestartTriggered") == 1, GO


def _teardown_passes(sim: Sim, driver: Driver, n: int) -> list[list[Any]]:
    """Up to ``n`` passes of a replica being deleted, a few seconds apart; each pass's actions."""
    out: list[list[Any]] = []
    for _ in range(n):
        if sim.replica is None:
            break
        out.append(list(driver.one_pass().actions))
        sim.advance(5)
    return out


def test_teardown_deletes_every_observed_instance() -> None:
    """Go: … TestReconcile_Teardown_DeletesEveryObservedInstance: three Ready Instances while the plan
    covers only index 0 and a new target is pushed. The deletion's first pass admits all three,
    the planned one included, to a Delete (rows ``Deleting``) with no pod deleted; the next deletes
    every pod; then the rows go. No pass creates a pod (neither the Update nor the Create pass runs)."""
    sim, driver = _ready(3)
    sim.update_spec(replicas=1)
    sim.image = "vllm:v2"
    sim.delete_replica()
    passes = _teardown_passes(sim, driver, 6)
    rows = [
        (int(r["index"]), r["phase"], (r.get("operation") or {}).get("type"))
        for r in _rows_written(passes[0])
    ]
    assert rows == [(i, "Deleting", "Delete") for i in range(3)], GO
    assert not [a for a in passes[0] if isinstance(a, DeletePod)], GO
    assert sorted(a.name for a in passes[1] if isinstance(a, DeletePod)) == [_pod(i) for i in range(3)], GO
    assert not [a for p in passes for a in p if isinstance(a, CreatePod)], GO
    assert sim.replica is None, GO
    assert sim.live_pods() == [], GO


def _rows_written(actions: list[Any]) -> list[dict[str, Any]]:
    writes = [a for a in actions if isinstance(a, WriteStatus)]
    return list(writes[-1].status.get("instanceStatuses") or []) if writes else []


def test_teardown_no_instances_no_pods_clean_return() -> None:
    """Go: … TestReconcile_Teardown_NoInstancesNoPods_CleanReturn: nothing observed and nothing live:
    the deletion writes no Instance row and touches no pod; ours then releases the finalizer at once
    (Go leaves completion to its caller)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, paused=True))
    driver = Driver(sim)
    driver.one_pass()
    assert sim.rows() == []
    assert sim.live_pods() == []
    sim.delete_replica()
    passes = _teardown_passes(sim, driver, 3)
    for actions in passes:
        assert _rows_written(actions) == [], GO
        assert not [a for a in actions if isinstance(a, (CreatePod, DeletePod))], GO
    assert sim.replica is None


@pytest.mark.xfail(
    strict=True,
    reason="known difference: Go (the 612,458-character reconcile_test, "
    "TestReconcile_Teardown_PodlessInstances_RemovedAndDone) durably admits podless rows to a Delete "
    "in one pass and removes them in the next; ours (planner/teardown.py) removes rows with no pod "
    "left in the deletion's first pass, which has no pod write to order the admission before",
)
def test_teardown_podless_instances_removed_and_done() -> None:
    """Go: … TestReconcile_Teardown_PodlessInstances_RemovedAndDone: rows 0 (Ready) and 1 (Deleting)
    with no pods: an admission pass writes both rows under Delete, a removal pass removes both, and
    a verification pass finds nothing to do."""
    sim, driver = _ready(2)
    for name in list(sim.pods):
        del sim.pods[name]
    sim.rows()[1]["phase"] = "Deleting"
    sim.delete_replica()
    passes = _teardown_passes(sim, driver, 4)
    rows = [
        (int(r["index"]), r["phase"], (r.get("operation") or {}).get("type"))
        for r in _rows_written(passes[0])
    ]
    assert rows == [(0, "Deleting", "Delete"), (1, "Deleting", "Delete")], GO
    assert _rows_written(passes[1]) == [], GO


def test_teardown_ignores_paused() -> None:
    """Go: … TestReconcile_Teardown_IgnoresPaused: a pause does not hold a deletion's Delete: the
    first pass admits the Instance (its pod untouched), the next deletes the pod."""
    sim, driver = _ready(1)
    sim.update_spec(paused=True)
    driver.one_pass()
    sim.delete_replica()
    passes = _teardown_passes(sim, driver, 4)
    rows = [
        (int(r["index"]), r["phase"], (r.get("operation") or {}).get("type"))
        for r in _rows_written(passes[0])
    ]
    assert rows == [(0, "Deleting", "Delete")], GO
    assert not [a for a in passes[0] if isinstance(a, DeletePod)], GO
    assert [a.name for a in passes[1] if isinstance(a, DeletePod)] == [_pod(0)], GO
    assert sim.replica is None, GO


def test_rollback_over_surge_resumed_manager_closes_the_abandoned_surge() -> None:
    """Go: … TestRollbackOverSurge_ResumedManagerClosesTheAbandonedSurge: two single-pod Instances under
    SurgeThenDrain (maxSurge 1), deletes lingering Terminating for ten minutes and the abandoned
    replacement deleted on a 30-second grace (``lifecycle.abandonedReplacementGrace``). A push whose
    replacement never becomes ready opens a surge on Instance 0 only; re-applying the starting
    revision deletes the replacement in the next pass (still Terminating, the row still Updating
    pinned to the pushed revision, one Instance counted updated). A manager resumed with nothing in
    memory (a fresh driver) closes the surge once the replacement is gone: both rows Ready with no
    operation, both counted updated, no pod of the pushed revision left."""
    sim = Sim(delete_grace=600)
    sim.settings = dataclasses.replace(sim.settings, abandoned_replacement_grace=timedelta(seconds=30))
    sim.behaviour["vllm:stuck"] = "never"
    sim.apply_replica(
        base_replica(
            replicas=2,
            lifecycle={"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}},
        )
    )
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    starting = sim.status["currentRevision"]
    surge = "llama-pool-engine-0-default-1"

    def image(name: str) -> str:
        return str(sim.pods[name].obj["spec"]["containers"][0]["image"])

    sim.image = "vllm:stuck"
    pushed = sim.render().name  # type: ignore[union-attr]
    for _ in range(10):
        driver.one_pass()
        sim.advance(5)
        if any(image(n) == "vllm:stuck" for n in sim.live_pods()):
            break
    assert surge in sim.live_pods(), GO
    assert image(surge) == "vllm:stuck", GO
    assert "llama-pool-engine-1-default-1" not in sim.pods, GO

    sim.image = "vllm:v1"
    driver.one_pass()
    terminating = [n for n, p in sim.pods.items() if p.obj["metadata"].get("deletionTimestamp")]
    assert terminating == [surge], GO
    row = _row(sim, 0)
    assert row is not None
    assert (row["phase"], row["operation"]["targetRevision"]) == ("Updating", pushed), GO
    assert sim.status.get("updatedReplicas") == 1, GO

    resumed = Driver(sim)
    for _ in range(10):
        sim.advance(5)
        resumed.one_pass()
        if converged(sim) and all(not r.get("operation") for r in sim.rows()):
            break
    assert [(r["phase"], r.get("operation")) for r in sim.rows()] == [("Ready", None), ("Ready", None)], GO
    assert sim.status.get("currentRevision") == starting, GO
    assert sim.status.get("updatedReplicas") == 2, GO
    assert not [n for n in sim.live_pods() if image(n) == "vllm:stuck"], GO
