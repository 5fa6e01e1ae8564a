"""Status while pods go wrong, and lost nodes: every status write of these scenarios is checked by the
driver's status-truth invariant (``omereconcile/simulate/status_truth.py``), and each rule of
``planner/nodedeath.py`` and the ``NodeUnknown`` hold is pinned here."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import WriteStatus
from omereconcile.planner.nodedeath import node_death, stuck_terminating
from omereconcile.settings import ForceDeletePolicy, OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError
from omereconcile.world import NodeView, PodView

POD0, POD1 = "llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"
POLICY = ForceDeletePolicy(
    overdue_slack=timedelta(seconds=10), node_unreachable_threshold=timedelta(seconds=30)
)


def _two_instances(settings: OperatorSettings | None = None) -> tuple[Sim, Driver]:
    """Instance 0 on ``sim-node``, Instance 1 on ``sim-node-b``, both Ready."""
    sim = Sim(settings=settings) if settings is not None else Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: s.status.get("readyReplicas") == 1)
    sim.node_objs["sim-node"]["spec"]["unschedulable"] = True
    sim.update_spec(replicas=2)
    driver.run(lambda s: s.status.get("readyReplicas") == 2 and not any(r.get("operation") for r in s.rows()))
    sim.node_objs["sim-node"]["spec"].pop("unschedulable")
    assert (sim.node_of(POD0), sim.node_of(POD1)) == ("sim-node", "sim-node-b")
    return sim, driver


def _passes(sim: Sim, driver: Driver, seconds: float, step: float = 5.0) -> list[dict[str, Any]]:
    """Run passes for ``seconds`` of sim time; every status the passes wrote, in order."""
    seen: list[dict[str, Any]] = []
    t = 0.0
    while t < seconds:
        p = driver.one_pass()
        seen += [dict(a.status) for a in p.actions if isinstance(a, WriteStatus)]
        sim.advance(step)
        t += step
    return seen


def _ready(status: dict[str, Any]) -> tuple[str, str, str]:
    cond = next(cd for cd in status["conditions"] if cd["type"] == "Ready")
    return cond["status"], cond["reason"], cond["message"]


def _row(status: dict[str, Any], index: int) -> tuple[Any, ...]:
    row = next(r for r in status["instanceStatuses"] if r["index"] == index)
    return row["phase"], row["podCount"], row["servingPodCount"]


def test_a_silent_node_leaves_the_row_ready_and_the_instance_counted_ready_not_serving() -> None:
    """Go ``CountReadyPods`` counts ContainersReady, which the node controller leaves alone, and
    ``CountServingPods`` drops the pod; no phase rule moves a Ready row that still has its pod."""
    sim, driver = _two_instances()
    sim.silence_node("sim-node")
    writes = _passes(sim, driver, 60)
    assert writes, "the serving count moved: a status write was due"
    for st in writes:
        assert _row(st, 0) == ("Ready", 1, 0)
        # availability is EndpointSlice membership, and the headless Service publishes not-ready addresses
        assert (st["readyReplicas"], st["servingReplicas"], st["availableReplicas"]) == (2, 1, 2)
        assert _ready(st) == ("True", "AllInstancesReady", "2/2 Instances Ready")
    assert POD0 in sim.pods
    assert not sim.pods[POD0].obj["metadata"].get("deletionTimestamp")


def test_a_terminating_pod_keeps_its_row_ready_until_it_is_gone() -> None:
    """Go ``planUnbackedDemotions``: a Terminating pod still counts as live. A pod deleted on a silent
    node stays Terminating with ContainersReady True: the row stays Ready with that pod's counts, so no
    status claims a ready Instance beside a Pending row (the stale condition of a lost Instance)."""
    sim, driver = _two_instances()
    sim.silence_node("sim-node")
    sim.user_delete(POD0)
    writes = _passes(sim, driver, 60)
    for st in writes:
        assert _row(st, 0) == ("Ready", 1, 0)
        assert _ready(st) == ("True", "AllInstancesReady", "2/2 Instances Ready")
    assert sim.rows()[0]["phase"] == "Ready"


def test_without_the_terminating_rule_the_invariant_catches_the_stale_condition(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The invariant is what fails when a pass demotes a row its Terminating pod still counts as ready."""
    from omereconcile.planner import instances

    sim, driver = _two_instances()
    sim.silence_node("sim-node")
    sim.user_delete(POD0)
    real = instances._step_idle

    def demote_on_terminating(ctx: Any, row: Any, pods: Any, out: Any) -> Any:
        live = [p for p in pods if not p.terminating]
        if row.phase == "Ready" and pods and not live:
            return instances.demote(ctx, row, out)
        return real(ctx, row, pods, out)

    monkeypatch.setattr(instances, "_step_idle", demote_on_terminating)
    with pytest.raises(InvariantError, match="row 0 is Pending yet its ready pods count it"):
        _passes(sim, driver, 20)


def test_a_deleted_pod_on_a_live_node_is_replaced_once_gone() -> None:
    """The whole sequence Go publishes: Ready with the terminating pod's counts, then Creating once it
    is gone (unpaused, Go's Create pass rebuilds the Instance and re-stamps its phase in the pass that
    finds the pod gone, ``workload/plan_decision.go`` ``Plan``; before issue 37's goY ours published
    ``Pending`` for one pass first), then Ready again."""
    sim, driver = _two_instances()
    start = len(driver.log)
    sim.user_delete(POD0)
    _passes(sim, driver, 1, step=0.5)
    driver.run(lambda s: s.status.get("readyReplicas") == 2 and not any(r.get("operation") for r in s.rows()))
    seen: list[tuple[Any, ...]] = []
    for _, act in driver.log[start:]:
        if isinstance(act, WriteStatus):
            row0 = _row(dict(act.status), 0)
            if not seen or seen[-1][0] != row0:
                seen.append((row0, _ready(dict(act.status))[:2]))
    mismatch = ("False", "ReplicaCountMismatch")  # 1/2 serving, floor 2 (no maxUnavailable)
    assert seen == [
        (("Ready", 1, 0), mismatch),  # Terminating (this kubelet stops the containers at once)
        (("Creating", 0, 0), mismatch),  # gone: rebuilt in the same pass
        (("Creating", 1, 0), ("True", "AllInstancesReady")),  # ContainersReady counts as ready
        (("Ready", 1, 1), ("True", "AllInstancesReady")),
    ]


def _creating_on_a_node_that_goes_silent(settings: OperatorSettings) -> tuple[Sim, Driver]:
    sim = Sim(settings=settings, ready_delay=30.0)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: POD0 in s.pods and bool(s.node_of(POD0)))
    sim.silence_node(sim.node_of(POD0))
    return sim, driver


# A threshold no test reaches: the pod's node is silent but not yet proven dead, so the name is held.
PATIENT = ForceDeletePolicy(overdue_slack=timedelta(hours=1), node_unreachable_threshold=timedelta(hours=1))


def test_a_create_whose_pod_sits_on_a_silent_node_waits_node_unknown_past_its_deadline() -> None:
    settings = OperatorSettings(instance_ready_timeout=timedelta(seconds=60), force_delete=PATIENT)
    sim, driver = _creating_on_a_node_that_goes_silent(settings)
    _passes(sim, driver, 180)
    row = sim.rows()[0]
    assert row["phase"] == "Creating"
    assert row["operation"]["waiting"] == "NodeUnknown"
    assert "deadline" not in row["operation"]
    assert row["lastFailure"]["reason"] == "NodeUnknown"
    assert row["lastFailure"]["podName"] == POD0
    assert row["lastFailure"]["message"] == (
        f"NodeUnknown: pod {POD0} is on node sim-node (Ready=Unknown, unreachable taint); its kubelet has "
        "stopped reporting, so the name is held rather than recycled"
    )
    assert "InstanceFailed" not in sim.event_reasons()
    assert POD0 in sim.pods  # the node is not dead long enough: nothing is force-deleted
    assert "PodForceDeleted" not in sim.event_reasons()


def test_without_force_delete_a_silent_node_is_no_evidence_and_the_create_runs_its_deadline() -> None:
    """Go ``evidence.SilentKubeletTargetPods`` (ome-projects/ome ``holds/nodeunknown_test.go`` @ 58a57f25,
    "a withdrawn Ready is not read without a policy"): with ``lifecycle.forceDelete`` off, a pod whose
    Ready the node controller withdrew is no evidence (only phase ``Unknown`` is, which no Kubernetes
    1.36 component sets), so the Create is never parked on ``NodeUnknown``: its deadline runs out and
    the Instance is failed, the pod left where it is."""
    settings = OperatorSettings(instance_ready_timeout=timedelta(seconds=60))
    sim, driver = _creating_on_a_node_that_goes_silent(settings)
    for _ in range(20):
        driver.one_pass()
        sim.advance(5)
        assert (sim.rows()[0].get("operation") or {}).get("waiting") != "NodeUnknown"
    assert "InstanceFailed" in sim.event_reasons()
    assert "PodForceDeleted" not in sim.event_reasons()


def test_the_hold_goes_when_the_node_reports_again_and_the_deadline_is_rearmed() -> None:
    settings = OperatorSettings(instance_ready_timeout=timedelta(seconds=60), force_delete=PATIENT)
    sim, driver = _creating_on_a_node_that_goes_silent(settings)
    _passes(sim, driver, 30)
    assert sim.rows()[0]["operation"]["waiting"] == "NodeUnknown"
    sim.revive_node("sim-node")
    driver.one_pass()
    op = sim.rows()[0]["operation"]
    assert "waiting" not in op
    assert op["deadline"] == (sim.now + timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    driver.run(lambda s: s.rows()[0]["phase"] == "Ready")
    assert sim.node_of(POD0) == "sim-node"  # the same pod: nothing was recycled


def test_force_delete_frees_the_held_name_and_the_instance_comes_up_elsewhere() -> None:
    settings = OperatorSettings(instance_ready_timeout=timedelta(seconds=60), force_delete=POLICY)
    sim, driver = _creating_on_a_node_that_goes_silent(settings)
    silenced = sim.now
    driver.run(lambda s: s.rows()[0]["phase"] == "Ready", limit=300)
    warnings = [e for e in sim.events if e.event_reason == "PodForceDeleted"]
    assert [(e.type, e.message) for e in warnings] == [
        (
            "Warning",
            f"OMENative component=engine instance=0: force-deleted pod {POD0} held in phase Unknown on "
            "node sim-node (evidence=node-unreachable-taint)",
        )
    ]
    deleted_at = next(t for t, a in driver.log if type(a).__name__ == "ForceDeletePod")
    assert deleted_at >= silenced + POLICY.node_unreachable_threshold
    assert sim.node_of(POD0) == "sim-node-b"
    assert sim.rows()[0].get("operation") is None


def _stuck_deletion(settings: OperatorSettings, finalizers: bool = False) -> tuple[Sim, Driver]:
    sim, driver = _two_instances(settings)
    if finalizers:
        sim.pods[POD0].obj["metadata"]["finalizers"] = ["example.com/hold"]
    sim.silence_node("sim-node")
    sim.user_delete(POD0)
    return sim, driver


def test_a_stuck_terminating_pod_on_a_dead_node_is_force_deleted_and_replaced() -> None:
    sim, driver = _stuck_deletion(OperatorSettings(force_delete=POLICY))
    deadline = sim.now + timedelta(seconds=sim.delete_grace)
    driver.run(
        lambda s: POD0 in s.pods and s.node_of(POD0) == "sim-node-b" and s.rows()[0]["phase"] == "Ready"
    )
    forced = [(t, a) for t, a in driver.log if type(a).__name__ == "ForceDeletePod"]
    assert len(forced) == 1
    t, _ = forced[0]
    assert t > deadline + POLICY.overdue_slack
    assert t >= sim.now - timedelta(hours=1)  # sanity: a time of this run
    (warning,) = [e for e in sim.events if e.event_reason == "PodForceDeleted"]
    assert warning.type == "Warning"
    assert warning.message.startswith(
        f"OMENative component=engine instance=0: force-deleted stuck-Terminating pod {POD0} on node sim-node "
        "(evidence=node-unreachable-taint, "
    )
    assert warning.message.endswith(" past the pod's own deletion deadline)")
    # Go recordForceDeleteLedgerEntry: a terminal ForceDelete row keyed by the pod's UID, written after
    # the delete it records.
    (row,) = sim.ledger_entries()
    assert (row["requestUUID"], row["reason"], row["outcome"], row["fromNode"], row["sourceInstance"]) == (
        forced[0][1].uid,  # type: ignore[attr-defined]
        "ForceDelete",
        "force-delete-unreachable",
        "sim-node",
        0,
    )
    kinds = [type(a).__name__ for _, a in driver.log]
    assert kinds.index("WriteLedger") > kinds.index("ForceDeletePod")


@pytest.mark.parametrize("case", ["off by default", "finalizers"])
def test_no_force_delete_off_by_default_or_for_a_pod_with_finalizers(case: str) -> None:
    policy = None if case == "off by default" else POLICY
    sim, driver = _stuck_deletion(OperatorSettings(force_delete=policy), finalizers=case == "finalizers")
    _passes(sim, driver, 300, step=10)
    assert sim.pods[POD0].obj["metadata"].get("deletionTimestamp")
    assert "PodForceDeleted" not in sim.event_reasons()
    assert sim.rows()[0]["phase"] == "Ready"  # the Terminating pod still backs it
    blocked = [e.message for e in sim.events if e.event_reason == "PodDeleteBlockedByFinalizer"]
    if policy is None:
        assert blocked == []
        return
    # Go reportFinalizerBlockedPod: one Warning for the pod's lifetime, the ledger row its marker.
    (message,) = blocked
    assert message.startswith(f"OMENative component=engine instance=0: pod {POD0} is ")
    assert message.endswith(
        " past its own deletion deadline but pinned by finalizers [example.com/hold]; OME never strips "
        "another controller's finalizer — the finalizer owner must resolve it"
    )
    (row,) = sim.ledger_entries()
    assert (row["reason"], row["outcome"]) == ("ForceDelete", "finalizer-report")


def _pod(node: str | None = "n1", deleting: bool = True, finalizers: tuple[str, ...] = ()) -> PodView:
    return PodView(
        name="p",
        uid="u",
        resource_version="1",
        labels={},
        phase="Running",
        node_name=node,
        deletion_timestamp=T0 if deleting else None,
        finalizers=finalizers,
    )


def test_the_node_evidence_rules() -> None:
    later = T0 + timedelta(seconds=100)
    dead = NodeView("n1", ready="Unknown", ready_since=T0, unreachable_since=(T0,))
    assert stuck_terminating({"n1": dead}, _pod(), None, later).kind == "not-configured"
    assert stuck_terminating({"n1": dead}, _pod(), POLICY, T0 + timedelta(seconds=10)).kind == "within-grace"
    assert (
        stuck_terminating({"n1": dead}, _pod(finalizers=("f",)), POLICY, later).kind == "foreign-finalizers"
    )
    assert stuck_terminating({"n1": dead}, _pod(node=None), POLICY, later).kind == "unscheduled"
    assert stuck_terminating(None, _pod(), POLICY, later).kind == "node-read-error"
    assert stuck_terminating({"n1": None}, _pod(), POLICY, later).kind == "node-gone"
    assert stuck_terminating({"n1": dead}, _pod(), POLICY, later).kind == "node-unreachable-taint"
    not_ready = NodeView("n1", ready="False", ready_since=T0)
    assert node_death({"n1": not_ready}, _pod(), POLICY, later).kind == "node-not-ready"
    young = node_death({"n1": dead}, _pod(), POLICY, T0 + timedelta(seconds=20))
    assert (young.kind, young.requeue_at) == ("node-not-dead-long-enough", T0 + timedelta(seconds=30))
    # A node posting Ready=True vetoes a lingering taint: a dead node cannot post it.
    back = NodeView("n1", ready="True", ready_since=T0, unreachable_since=(T0,))
    assert node_death({"n1": back}, _pod(), POLICY, later).kind == "node-healthy"


def test_force_delete_settings_are_off_by_default_and_both_required() -> None:
    from omereconcile.settings import SettingsError, settings_from_configmap

    assert settings_from_configmap({}).force_delete is None
    both = {"forceDelete": {"overdueSlack": "1m", "nodeUnreachableThreshold": "5m"}}
    assert settings_from_configmap({"lifecycle": json.dumps(both)}).force_delete == ForceDeletePolicy(
        timedelta(minutes=1), timedelta(minutes=5)
    )
    half = {"forceDelete": {"overdueSlack": "1m"}}
    with pytest.raises(SettingsError, match=r"lifecycle\.forceDelete\.nodeUnreachableThreshold is required"):
        settings_from_configmap({"lifecycle": json.dumps(half)})
