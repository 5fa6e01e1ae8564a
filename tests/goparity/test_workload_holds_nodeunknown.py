"""OME's ``workload/holds/nodeunknown_test.go``: a name a silent node holds parks the attempt (``NodeUnknown``).

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/nodeunknown_test.go`` @ 58a57f25 (the newer
of two stored versions: it holds the other's text plus the three withdrawn-Ready subtests), over
``holds/nodeunknown.go`` @ 58a57f25 (``reportNodeUnknown``, ``targets``, ``singlePodSurgeInFlight``) and
``evidence/terminating.go`` @ 58a57f25 (``SilentKubeletTargetPods``, ``ReadSilentPod``,
``SilentPodHeld``). Go runs the hold pass over a store of one row and the pods at its target names; ours
is :func:`omereconcile.planner.holds.node_unknown_hold` on the row and the step's pods (the caller passes
the pods at the names the step creates), with the Nodes read from the watch's view
(``World.nodes``) instead of a live reader and ``lifecycle.forceDelete`` from the operator settings.
The subtests that turn on which names a step asks for run through the planner in the simulated world
(a SurgeThenDrain replacement on a node that stops reporting, a scale-down victim on one).
"""

from __future__ import annotations

import copy
from datetime import timedelta

from omereconcile.actions import ForceDeletePod
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.holds import NODE_UNKNOWN, node_unknown_hold
from omereconcile.planner.out import Out
from omereconcile.settings import ForceDeletePolicy, OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import NodeView, PodCondition, PodView
from omerender import constants as c
from tests.goparity.reconciler_world import INSTANCE_READY_TIMEOUT, creating_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/nodeunknown_test.go @ 58a57f25"
TARGET = "llama-pool-engine-0-default-0"
# Go's policy: OverdueSlack one minute, NodeUnreachableThreshold five.
POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(minutes=1), node_unreachable_threshold=timedelta(minutes=5)
)


def _ctx(policy: ForceDeletePolicy | None = None, nodes: dict[str, NodeView | None] | None = None) -> Ctx:
    settings = OperatorSettings(instance_ready_timeout=INSTANCE_READY_TIMEOUT, force_delete=policy)
    ctx = one_replica_ctx(settings, nodes=nodes)
    assert ctx.pod_name(0, 0) == TARGET
    return ctx


def _quiet(name: str, node: str) -> PodView:
    """Go's ``quietPod``: phase Unknown on ``node``."""
    return PodView(name, f"uid-{name}", "1", {}, phase="Unknown", node_name=node, creation_timestamp=T0)


def _withdrawn(name: str, node: str) -> PodView:
    """Go's ``withdrawnPod``: Running, ContainersReady and the serving gate True, Ready withdrawn."""
    gate = "ome.io/serving"
    conds = (
        PodCondition("ContainersReady", "True"),
        PodCondition(gate, "True"),
        PodCondition("Ready", "False"),
    )
    return PodView(
        name,
        f"uid-{name}",
        "1",
        {},
        phase="Running",
        conditions=conds,
        node_name=node,
        readiness_gates=(gate,),
        creation_timestamp=T0,
    )


def _node(name: str, ready: str, age: timedelta) -> NodeView:
    """Go's ``nodeReader``: one Node whose Ready condition has had ``ready`` for ``age``."""
    return NodeView(name, ready=ready, ready_since=T0 - age)


def _hold(ctx: Ctx, row: R.Row, pods: list[PodView]) -> tuple[R.Row, Out]:
    out = Out(ctx.now)
    return node_unknown_hold(ctx, row, pods, out), out


def test_records_the_wait_on_the_held_name() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/nodeunknown_test.go @ 58a57f25,
    TestNodeUnknown_HoldsATargetNameASilentNodeKeeps, "records the wait on the held name": the row
    waits on ``NodeUnknown`` (clock parked) and ``lastFailure`` names the pod and its node."""
    row, _ = _hold(_ctx(), creating_row(), [_quiet(TARGET, "node-a")])
    assert row.operation is not None
    assert row.operation.waiting == NODE_UNKNOWN
    assert row.operation.deadline is None
    assert row.last_failure is not None
    assert row.last_failure["podName"] == TARGET
    assert "node-a" in row.last_failure["message"]


def test_a_name_the_sweep_frees_this_pass_is_not_a_wait() -> None:
    """Go: same file and test, "a name the sweep frees this pass is not a wait": no Node behind the pod
    (node death: NodeGone) under a force-delete policy: the pod is force-deleted this pass and the row
    is left as it was (no token, no write)."""
    row = creating_row()
    held, out = _hold(_ctx(POLICY, nodes={}), row, [_quiet(TARGET, "node-gone")])
    assert held == row
    assert [a.name for a in out.actions if isinstance(a, ForceDeletePod)] == [TARGET]


def test_a_withdrawn_ready_on_a_node_that_stopped_reporting_is_a_wait() -> None:
    """Go: same file and test, "a withdrawn Ready on a node that stopped reporting is a wait": Ready
    Unknown for one minute (younger than the five-minute threshold) holds the name."""
    nodes: dict[str, NodeView | None] = {"node-dying": _node("node-dying", "Unknown", timedelta(minutes=1))}
    row, out = _hold(_ctx(POLICY, nodes), creating_row(), [_withdrawn(TARGET, "node-dying")])
    assert row.operation is not None
    assert row.operation.waiting == NODE_UNKNOWN
    assert not any(isinstance(a, ForceDeletePod) for a in out.actions)


def test_a_withdrawn_ready_on_a_node_posting_ready_is_not_a_wait() -> None:
    """Go: same file and test, "a withdrawn Ready on a node posting Ready is the kubelet's lag, not a
    wait": the row is left as it was."""
    nodes: dict[str, NodeView | None] = {"node-live": _node("node-live", "True", timedelta(hours=1))}
    row = creating_row()
    held, _ = _hold(_ctx(POLICY, nodes), row, [_withdrawn(TARGET, "node-live")])
    assert held == row


def test_a_withdrawn_ready_is_not_read_without_a_policy() -> None:
    """Go: same file and test, "a withdrawn Ready is not read without a policy": with no
    ``lifecycle.forceDelete`` the withdrawn-Ready shape is no evidence, whatever its node says (here the
    node the watch shows has stopped reporting)."""
    nodes: dict[str, NodeView | None] = {"node-a": _node("node-a", "Unknown", timedelta(minutes=1))}
    row = creating_row()
    held, _ = _hold(_ctx(None, nodes), row, [_withdrawn(TARGET, "node-a")])
    assert held == row


def test_released_once_the_name_is_free() -> None:
    """Go: same file and test, "released once the name is free": no pod holds the name any more, so the
    token goes (and ours re-arms a full window)."""
    ctx = _ctx()
    row, _ = _hold(ctx, creating_row(NODE_UNKNOWN), [])
    assert row.operation is not None
    assert row.operation.waiting is None
    assert row.operation.deadline == ctx.now + timedelta(minutes=5)


# -- through the planner, in the simulated world -------------------------------------------------------
SOURCE, SURGE = "llama-pool-engine-0-default-0", "llama-pool-engine-0-default-1"


def _converged_on_sim_node(replicas: int = 1) -> tuple[Sim, Driver]:
    """A converged replica whose Instances live on ``sim-node`` (and, for a second, ``sim-node-b``);
    ``sim-node`` is then cordoned so a new pod lands on ``sim-node-b``."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(seconds=120)))
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.node_objs["sim-node"]["spec"]["unschedulable"] = True
    if replicas > 1:
        sim.update_spec(replicas=replicas)
        driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def _quiet_node(sim: Sim, node: str) -> None:
    """The node stops reporting and its pods read as Go's ``quietPod`` (phase ``Unknown``): the shape
    ``evidence.SilentKubeletTargetPods`` reads with or without ``lifecycle.forceDelete``. Without a
    policy a Running pod whose Ready the node controller withdrew is no evidence (the withdrawn-Ready
    subtests above), and these Go subtests run with none."""
    sim.silence_node(node)
    for pod in sim.pods.values():
        if pod.obj["spec"].get("nodeName") == node:
            pod.obj["status"]["phase"] = "Unknown"


def _revive(sim: Sim, node: str) -> None:
    """The kubelet reports again: its pods' phase back to ``Running``, then the node Ready."""
    for pod in sim.pods.values():
        if pod.obj["spec"].get("nodeName") == node and pod.obj["status"].get("phase") == "Unknown":
            pod.obj["status"]["phase"] = "Running"
    sim.revive_node(node)


def _passes(sim: Sim, driver: Driver, n: int, step: float = 5.0) -> None:
    for _ in range(n):
        driver.one_pass()
        sim.advance(step)


def test_a_surging_row_asks_for_the_surge_ordinal() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/nodeunknown_test.go @ 58a57f25,
    TestNodeUnknown_HoldsTheSurgeOrdinalOfASinglePodRow, "a surging row asks for the surge ordinal":
    a SurgeThenDrain replacement (ordinal 1) on a node that stops reporting parks the Surge step on
    ``NodeUnknown``, naming the replacement."""
    sim, driver = _converged_on_sim_node()
    sim.behaviour["vllm:v2"] = "never"  # the replacement never becomes ready: the row stays at Surge
    sim.image = "vllm:v2"
    driver.run(
        lambda s: SURGE in s.pods and s.pods[SURGE].obj["spec"].get("nodeName") == "sim-node-b", limit=60
    )
    _quiet_node(sim, "sim-node-b")
    _passes(sim, driver, 10)
    row = sim.rows()[0]
    assert (row["operation"]["step"], row["operation"].get("waiting")) == ("Surge", NODE_UNKNOWN)
    assert "deadline" not in row["operation"]
    assert row["lastFailure"]["podName"] == SURGE


def test_the_surge_ordinal_is_asked_for_through_the_drain_step() -> None:
    """Go: same file, TestNodeUnknown_HoldsTheSurgeOrdinalOfASinglePodRow, "the surge ordinal is asked
    for through the drain step": the replacement's node stops reporting once the row is at SurgeDrain;
    the row waits on ``NodeUnknown`` naming it (clock parked). Failed before (ours ran the SurgeDrain
    step past its deadline with no token and nothing on ``lastFailure``), fixed by Go's ``targets``
    (``planner/surge.py``). Once the node reports again the token goes and the roll completes."""
    sim, driver = _converged_on_sim_node()
    sim.image = "vllm:v2"
    driver.run(lambda s: (s.rows()[0].get("operation") or {}).get("step") == "SurgeDrain", limit=120)
    _quiet_node(sim, "sim-node-b")
    _passes(sim, driver, 40)  # 200 s: past the 120 s window
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["step"], row["operation"].get("waiting")) == (
        "Updating",
        "SurgeDrain",
        NODE_UNKNOWN,
    )
    assert "deadline" not in row["operation"]
    assert row["lastFailure"]["podName"] == SURGE
    _revive(sim, "sim-node-b")
    driver.run(lambda s: converged(s) and s.live_pods() == [SURGE])
    assert "InstanceFailed" not in sim.event_reasons()


def test_a_teardown_row_is_left_to_delete_batch() -> None:
    """Go: same file, TestNodeUnknown_HoldsATargetNameASilentNodeKeeps, "a teardown row is left to
    DeleteBatch": 2 -> 1 while Instance 1's node has stopped reporting; the Delete row never carries
    ``NodeUnknown``."""
    sim, driver = _converged_on_sim_node(replicas=2)
    assert sim.node_of("llama-pool-engine-1-default-0") == "sim-node-b"
    # Uncordon sim-node: a scale-down retires an Instance on a cordoned node first (Go cordon.go).
    sim.node_objs["sim-node"]["spec"].pop("unschedulable")
    _quiet_node(sim, "sim-node-b")
    sim.update_spec(replicas=1)
    seen: list[tuple[str, str]] = []
    for _ in range(10):
        driver.one_pass()
        sim.advance(5)
        seen += [
            (r["phase"], str((r.get("operation") or {}).get("waiting") or ""))
            for r in sim.rows()
            if r["index"] == 1
        ]
    assert ("Deleting", "") in seen
    assert all(waiting != NODE_UNKNOWN for _, waiting in seen)


def _creating_with_a_stray_on_a_silent_node() -> tuple[Sim, Driver]:
    """Go's ``creatingRow`` with ``quietPod("…-default-1")``: a Create whose pod at ordinal 0 never
    becomes ready, and a pod of the Instance at ordinal 1 (a name no step of a Create asks for) on a
    node that stops reporting."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(seconds=120)))
    sim.behaviour["vllm:v1"] = "never"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: SOURCE in s.pods and bool(s.node_of(SOURCE)), limit=30)
    stray = copy.deepcopy(sim.pods[SOURCE].obj)
    stray["metadata"].update(name=SURGE, uid="stray-uid")
    stray["metadata"]["labels"][c.LABEL_POD_ORDINAL] = "1"
    stray["spec"]["nodeName"] = "sim-node-b"
    sim.pods[SURGE] = SimPod(stray, sim.now, "never")
    _quiet_node(sim, "sim-node-b")
    return sim, driver


def test_a_name_the_plan_does_not_ask_for_holds_nothing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/nodeunknown_test.go @ 58a57f25,
    TestNodeUnknown_HoldsATargetNameASilentNodeKeeps, "a name the plan does not ask for holds nothing":
    the Create row never waits on ``NodeUnknown`` for the stray (ours deletes it, as a pod in no slot)."""
    sim, driver = _creating_with_a_stray_on_a_silent_node()
    for _ in range(10):
        driver.one_pass()
        sim.advance(5)
        op = sim.rows()[0]["operation"]
        assert (op["type"], op.get("waiting")) == ("Create", None)


def test_a_row_that_is_not_surging_asks_for_the_active_ordinal_only() -> None:
    """Go: same file, TestNodeUnknown_HoldsTheSurgeOrdinalOfASinglePodRow, "a row that is not surging
    asks for the active ordinal only" (Go's fixture is the one above: a Create row and a silent pod at
    ordinal 1): no ``NodeUnknown``, and the deadline keeps running (the attempt's own pod is judged)."""
    sim, driver = _creating_with_a_stray_on_a_silent_node()
    _passes(sim, driver, 3)
    op = sim.rows()[0]["operation"]
    assert op.get("waiting") is None
    assert "deadline" in op
