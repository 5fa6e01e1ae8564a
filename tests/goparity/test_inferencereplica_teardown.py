"""OME's ``inferencereplica/teardown_test.go``, through the planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/teardown_test.go`` @ ae43378d (60,546
characters, read whole; the index holds five versions, the one listed is followed), over
``inferencereplica/teardown.go``. Go drives ``Reconciler.Reconcile`` on a Terminating replica against a
fake client; here the replica is deleted in the sim and planner passes run (``planner/teardown.py``).
The operator's ``lifecycle`` ConfigMap is ``settings_from_configmap``. Go's requeue values at the
executor's poll interval, its metric series, its list counts, the migration ledger of a parent
InferenceService and client failure injection have no counterpart; ``docs/goparity.md`` lists them.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from omereconcile.actions import DeleteService, RecordEvent, RemoveFinalizer, WriteStatus
from omereconcile.planner import plan
from omereconcile.settings import ForceDeletePolicy, OperatorSettings, settings_from_configmap
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d"
POD0 = "llama-pool-engine-0-default-0"


def _lifecycle(value: dict[str, Any]) -> OperatorSettings:
    return settings_from_configmap({"lifecycle": json.dumps(value)})


def _settled(settings: OperatorSettings | None = None) -> tuple[Sim, Driver]:
    sim = Sim(settings=settings) if settings is not None else Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _warnings(sim: Sim, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == reason]


def _finalized(sim: Sim) -> bool:
    return sim.replica is not None and c.TEARDOWN_FINALIZER in sim.replica["metadata"]["finalizers"]


def _orphan(sim: Sim, index: int) -> None:
    """A live pod of the replica at ``index`` with no Instance row (Go's ``podForIR`` with no status):
    Instance 0's pod moved to ``index``, its row dropped."""
    pod = sim.pods.pop(POD0)
    name = f"llama-pool-engine-{index}-default-0"
    pod.obj["metadata"]["name"] = name
    pod.obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX] = str(index)
    sim.pods[name] = pod
    sim.status["instanceStatuses"] = []


def test_reconcile_adds_teardown_finalizer() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestReconcile_AddsTeardownFinalizer: the first pass of a fresh replica adds the teardown
    finalizer."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    Driver(sim).one_pass()
    assert _finalized(sim)


def test_teardown_no_finalizer_leaves_pods_to_gc() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_NoFinalizer_LeavesPodsToGC: a Terminating replica holding only a foreign finalizer is
    a clean no-op; its pod is not deleted."""
    sim, driver = _settled()
    assert sim.replica is not None
    sim.replica["metadata"]["finalizers"] = ["keep-for-test"]
    sim.delete_replica()
    p = driver.one_pass()
    assert p.actions == ()
    assert p.requeue_after is None
    assert "deletionTimestamp" not in sim.pods[POD0].obj["metadata"]


def test_teardown_dispatches_deletes_retains_finalizer() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_DispatchesDeletes_RetainsFinalizer: the Instance is stamped Deleting, its pod is
    deleted gracefully, and while the pod survives Terminating (its node stopped reporting here) the
    finalizer holds and ``TeardownBlocked`` says why: a bounded selector, the finalizer, the manual
    escape, no deadline configured, and no pod name."""
    sim, driver = _settled()
    sim.silence_node(sim.node_of(POD0))
    sim.delete_replica()
    for _ in range(4):
        driver.one_pass()
        sim.advance(1)
    assert "deletionTimestamp" in sim.pods[POD0].obj["metadata"]
    assert _finalized(sim)
    assert [r["phase"] for r in sim.rows()] == ["Deleting"]
    blocked = _warnings(sim, "TeardownBlocked")
    assert blocked
    for want in (
        "selector:",
        c.TEARDOWN_FINALIZER,
        "manual escape",
        "no lifecycle.teardown.deadline configured",
    ):
        assert want in blocked[-1]
    assert POD0 not in blocked[-1]


def test_teardown_status_commits_before_finalizer_completion() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_StatusCommitsRequeueBeforeFinalizerCompletion: a podless Ready Instance's row goes in a
    status write of its own; the pass that lifts the finalizer (and deletes the headless Service)
    writes no row, and no earlier pass deletes the Service. Go's immediate requeues are the
    executor's."""
    sim, driver = _settled()
    sim.pods.clear()
    sim.delete_replica()
    for _ in range(6):
        if sim.replica is None:
            break
        driver.one_pass()
    assert sim.replica is None
    final = [p for p in driver.plans if any(isinstance(a, RemoveFinalizer) for a in p.actions)]
    assert len(final) == 1
    assert not any(isinstance(a, WriteStatus) and a.status.get("instanceStatuses") for a in final[0].actions)
    deleting = [p for p in driver.plans if any(isinstance(a, DeleteService) for a in p.actions)]
    assert deleting == final


def test_teardown_invalid_deadline_config_warns_invalid() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_InvalidDeadlineConfig_WarnsInvalid: ``teardown.deadline: "30"`` (no unit) holds the
    finalizer strictly, and the one ``TeardownBlocked`` says the deadline is configured but invalid,
    and why, instead of claiming none is configured."""
    sim, driver = _settled(_lifecycle({"teardown": {"deadline": "30"}}))
    _orphan(sim, 4)
    sim.silence_node(sim.node_of("llama-pool-engine-4-default-0"))
    sim.delete_replica()
    driver.one_pass()
    assert _finalized(sim)
    (msg,) = _warnings(sim, "TeardownBlocked")
    assert "configured but invalid" in msg
    assert "missing unit" in msg
    assert "no lifecycle.teardown.deadline configured" not in msg


def test_teardown_statusless_orphan_blocks_completion() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_StatuslessOrphanBlocksCompletion: a live pod of the replica with no Instance row
    blocks the finalizer; one ``TeardownBlocked`` with the selector and no pod name."""
    sim, driver = _settled()
    _orphan(sim, 7)
    sim.silence_node(sim.node_of("llama-pool-engine-7-default-0"))
    sim.delete_replica()
    driver.one_pass()
    assert _finalized(sim)
    (msg,) = _warnings(sim, "TeardownBlocked")
    assert "selector:" in msg
    assert "llama-pool-engine-7-default-0" not in msg


def test_teardown_invalid_owned_pod_index_blocks_all_effects() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_InvalidOwnedPodIndexBlocksAllEffects: an owned pod whose instance-index label is
    malformed refuses every teardown effect: no pod or PodGroup delete, no status write, the
    finalizer kept (Go returns an error; ours records the refusal as a Warning and does nothing
    else)."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    leader = "llama-pool-engine-0-leader-0"
    sim.pods[leader].obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX] = "malformed"
    sim.delete_replica()
    # One pass, planned on the observation directly: the sim's driver cannot read the malformed label.
    p = plan(sim.observe())
    assert [type(a).__name__ for a in p.actions] == ["RecordEvent"]
    (event,) = p.actions
    assert isinstance(event, RecordEvent)
    assert event.event_reason == "InvalidInstanceIndex"
    assert f"without a valid {c.LABEL_INSTANCE_INDEX} label" in event.message


def test_teardown_statusless_pod_group_delete_waits_for_next_observation() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_StatuslessPodGroupDeleteWaitsForNextObservation: a PodGroup of ours with no pod and
    no row is deleted; the pass that deletes it keeps the finalizer, and the next pass, which observes
    it absent, releases the replica."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.pods.clear()
    sim.status["instanceStatuses"] = []
    sim.delete_replica()
    p = driver.one_pass()
    assert [type(a).__name__ for a in p.actions if type(a).__name__ == "DeletePodGroup"] == ["DeletePodGroup"]
    assert "llama-pool-engine-0" not in sim.pod_groups
    assert _finalized(sim)
    driver.one_pass()
    assert sim.replica is None


def test_teardown_complete_deletes_service_and_finalizer() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_Complete_DeletesServiceAndFinalizer: with no live pod the Deleting row is removed,
    then the headless Service is deleted and the finalizer lifts; the replica is gone. (Its metric
    gauges are not mapped.)"""
    sim, driver = _settled()
    assert sim.service is not None
    sim.pods.clear()
    sim.status["instanceStatuses"][0]["phase"] = "Deleting"
    sim.delete_replica()
    for _ in range(4):
        if sim.replica is None:
            break
        driver.one_pass()
    assert sim.replica is None
    assert sim.service is None


def test_teardown_deadline_schedules_exact_wake() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_DeadlineSchedulesExactWakeWithoutPollInterval: ten minutes into a 30-minute
    teardown deadline with a survivor, the pass asks to be woken when the deadline passes, twenty
    minutes on (Go adds a nanosecond to land strictly past it; status times have whole seconds)."""
    sim, driver = _settled(_lifecycle({"teardown": {"deadline": "30m"}}))
    _orphan(sim, 3)
    sim.silence_node(sim.node_of("llama-pool-engine-3-default-0"))
    sim.delete_replica()
    sim.advance(600)
    p = driver.one_pass()
    assert p.requeue_after is not None
    assert abs(p.requeue_after - timedelta(minutes=20).total_seconds()) <= 1


def test_teardown_deadline_exceeded_warns_and_releases() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_DeadlineExceeded_WarnsAndReleases: an hour into a 30-minute deadline with a survivor,
    one ``TeardownDeadlineExceeded`` (the selector, background GC, the manual escape, no pod name) and
    the finalizer released, nothing else: the pod is left to the garbage collector."""
    sim, _ = _settled(_lifecycle({"teardown": {"deadline": "30m"}}))
    _orphan(sim, 3)
    sim.silence_node(sim.node_of("llama-pool-engine-3-default-0"))
    sim.delete_replica()
    sim.advance(3600)
    # Planned on the observation directly: the sim's driver flags the pod the release leaves behind.
    p = plan(sim.observe())
    assert p.requeue_after is None
    assert [type(a).__name__ for a in p.actions] == ["RecordEvent", "RemoveFinalizer"]
    event = p.actions[0]
    assert isinstance(event, RecordEvent)
    assert event.event_reason == "TeardownDeadlineExceeded"
    msg = event.message
    for want in ("selector:", "background GC", "manual escape"):
        assert want in msg
    assert "llama-pool-engine-3-default-0" not in msg


def test_teardown_force_delete_escalation_unwedges_dead_node_pod() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown_test.go @ ae43378d,
    TestTeardown_ForceDeleteEscalation_UnwedgesDeadNodePod: with ``lifecycle.forceDelete`` set, a pod
    wedged Terminating on a node that is gone is force-deleted during the teardown (one
    ``PodForceDeleted``) and the teardown completes. (The ledger row's owner is the replica here
    always: a standalone replica has no parent.)"""
    policy = ForceDeletePolicy(
        overdue_slack=timedelta(minutes=2), node_unreachable_threshold=timedelta(minutes=5)
    )
    sim, driver = _settled(OperatorSettings(force_delete=policy))
    node = sim.node_of(POD0)
    sim.silence_node(node)
    sim.delete_replica()
    for _ in range(3):
        driver.one_pass()
        sim.advance(1)
    assert "deletionTimestamp" in sim.pods[POD0].obj["metadata"]
    sim.delete_node(node)
    sim.advance(600)
    for _ in range(6):
        if sim.replica is None:
            break
        driver.one_pass()
    assert POD0 not in sim.pods
    assert len(_warnings(sim, "PodForceDeleted")) == 1
    assert sim.replica is None
