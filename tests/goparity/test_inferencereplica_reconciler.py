"""OME's ``inferencereplica/reconciler_test.go``, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/reconciler_test.go`` @ ae43378d (the
newest stored version of the test; the reconciler it drives is ``reconciler.go`` @ 4dfb96b1 and
``status.go`` @ 4dfb96b1). Go runs ``Reconciler.Reconcile`` against a fake client seeded with status
rows and pods; here :class:`omereconcile.simulate.cluster.Sim` holds the objects and
:class:`omereconcile.simulate.driver.Driver` runs passes of :func:`omereconcile.planner.plan` and
applies their actions. Go's replica ``llama-engine`` with parent ``llama`` is the sim's
``llama-pool`` (pod and Service names carry the prefix the render gives it). Which test functions
have no counterpart, and why, is in ``docs/goparity.md`` ("The reconciler tier").
"""

from __future__ import annotations

import copy
from datetime import timedelta

from omereconcile.actions import RecordEvent
from omereconcile.planner import plan
from omereconcile.planner.plan_indices import scale_down_rank
from omereconcile.planner.retry import HELD_STATE, RetryBlock, RetryBook
from omereconcile.planner.rows import READY, Row
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import T0, UID, Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d"
PREFIX = "llama-pool-engine"


def _sim(replicas: int) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    return sim, Driver(sim)


def _settle(sim: Sim, driver: Driver, ready: int) -> None:
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == ready)


def test_reconcile_create_materializes_pods() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_Create_MaterializesPods: a new replica with replicas=2 creates one pod per Instance,
    named ``<prefix>-<index>-default-0``, each controller-owned by the InferenceReplica; status carries
    replicas 2, observedGeneration, the three-label selector and an updateRevision."""
    sim, driver = _sim(2)
    driver.run(lambda s: len(s.live_pods()) == 2)
    assert sorted(sim.live_pods()) == [f"{PREFIX}-0-default-0", f"{PREFIX}-1-default-0"]
    for name in sim.live_pods():
        refs = sim.pods[name].obj["metadata"]["ownerReferences"]
        assert len(refs) == 1
        assert (refs[0]["kind"], refs[0]["controller"]) == ("InferenceReplica", True)
        assert refs[0]["uid"] == sim.replica["metadata"]["uid"]
    st = sim.status
    assert st["replicas"] == 2
    assert st["observedGeneration"] == sim.replica["metadata"]["generation"]
    for label in ("component=engine", "ome.io/inferenceservice=llama-pool", "ome.io/managed-by=OMENative"):
        assert label in st["labelSelector"]
    assert (
        st["labelSelector"].count("=") == 3
    )  # plus the runner term, a set-based `in` (status.go @ 8263d0c7)
    assert st["updateRevision"]


def test_reconcile_create_also_creates_headless_service() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_Create_AlsoCreatesHeadlessService: the first pass also makes the headless Service:
    ClusterIP None, publishNotReadyAddresses, the selector trio, controller-owned by the replica."""
    sim, driver = _sim(2)
    driver.run(lambda s: s.service is not None)
    svc = sim.service
    assert svc is not None
    assert svc["metadata"]["name"] == f"{PREFIX}-headless"
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["selector"] == {
        "ome.io/inferenceservice": "llama-pool",
        "component": "engine",
        "ome.io/managed-by": "OMENative",
    }
    refs = svc["metadata"]["ownerReferences"]
    assert [(r["kind"], r["uid"], r["controller"]) for r in refs] == [
        ("InferenceReplica", sim.replica["metadata"]["uid"], True)
    ]


def test_reconcile_scale_up_adds_pods() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_ScaleUp_AddsPods: a Ready replica grown from 1 to 2 adds Instance 1's pod beside
    Instance 0's, which is not recreated."""
    sim, driver = _sim(1)
    _settle(sim, driver, 1)
    uid0 = sim.pods[f"{PREFIX}-0-default-0"].obj["metadata"]["uid"]
    sim.update_spec(replicas=2)
    driver.run(lambda s: len(s.live_pods()) == 2)
    assert sorted(sim.live_pods()) == [f"{PREFIX}-0-default-0", f"{PREFIX}-1-default-0"]
    assert sim.pods[f"{PREFIX}-0-default-0"].obj["metadata"]["uid"] == uid0


def test_reconcile_scale_down_deletes_excess_instances() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_ScaleDown_DeletesExcessInstances: two Ready Instances, replicas=1: Instance 1 (the
    highest index of equal rank) is deleted. Go admits the Delete in one pass and deletes in the next;
    the planner journals the Delete and takes the pod out in the same pass (gate first, then delete)."""
    sim, driver = _sim(2)
    _settle(sim, driver, 2)
    sim.update_spec(replicas=1)
    driver.run(lambda s: converged(s) and s.status.get("replicas") == 1)
    assert sim.live_pods() == [f"{PREFIX}-0-default-0"]


def test_reconcile_scale_down_highest_index_victims() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_ScaleDownTwoThousandUsesOneAuthoritativePodList (its victim-choice assertion, at a
    size the sim runs in a second: 5 -> 2): rows of equal rank lose their highest indices. Its pod-list
    counts and the ``ScaleDownPodBatchSize`` wave are the executor's, not mapped."""
    sim, driver = _sim(5)
    _settle(sim, driver, 5)
    sim.update_spec(replicas=2)
    driver.one_pass()
    assert sorted(r["index"] for r in sim.rows() if r["phase"] == "Deleting") == [2, 3, 4]


def test_reconcile_status_aggregator_rolls_up_counters() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_StatusAggregator_RollsUpCounters: two Ready Instances and one whose pod never gets
    ready publish replicas 3, readyReplicas 2, servingReplicas 2."""
    sim, driver = _sim(2)
    _settle(sim, driver, 2)
    sim.behaviour["vllm:never"] = "never"
    sim.image = "vllm:never"
    sim.update_spec(replicas=3, pacing={"partition": 3})
    driver.run(lambda s: len(s.live_pods()) == 3)
    for _ in range(3):
        driver.one_pass()
        sim.advance(2)
    st = sim.status
    assert (st["replicas"], st["readyReplicas"], st["servingReplicas"]) == (3, 2, 2)


def test_scale_down_rank_is_read_from_the_rows() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan.go @ 4dfb96b1, scaleDownRank (the
    function the reconciler tests' victim choice rests on): a Held revision ranks a serving row 2."""
    book = RetryBook(
        {"r": RetryBlock("r", HELD_STATE, 1, T0, T0, None, "ImagePullBackOff")}, "ns/n", "engine"
    )
    row = Row(index=0, phase=READY, running_revision="r", pod_count=1, serving_pod_count=1)
    assert scale_down_rank(row, book) == 2


def test_reconcile_deletion_timestamp_no_op() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_DeletionTimestamp_NoOp: a replica that is Terminating without the teardown finalizer
    (only a foreign ``keep-for-test`` one) is a clean no-op: no action, no requeue; background GC owns
    the children. Ours: ``plan_teardown``'s first branch."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    assert sim.replica is not None
    sim.replica["metadata"]["finalizers"] = ["keep-for-test"]
    sim.delete_replica()
    driver = Driver(sim)
    p = driver.one_pass()
    assert p.actions == ()
    assert p.requeue_after is None
    assert sim.replica is not None
    assert sim.replica["metadata"]["finalizers"] == ["keep-for-test"]
    assert sim.live_pods() == []


def test_reconcile_gang_scale_down_waits_for_pod_group_absence() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_GangScaleDownWaitsForPodGroupAbsence: two Ready leader+worker gangs, each with its
    PodGroup (minMember 2), scaled to one. The extra Instance's pods are deleted first and its PodGroup
    only after them; its status row outlives the PodGroup delete and goes in a later pass, once the
    PodGroup is observed absent; Instance 0's PodGroup is untouched. Go's pod-delete budget
    (``ScaleDownPodBatchSize`` 2) and its pass-by-pass requeue values are the executor's, not mapped."""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    _settle(sim, driver, 2)
    pg0 = sim.pod_groups["llama-pool-engine-0"]["metadata"]["uid"]
    sim.update_spec(replicas=1)
    pg_delete_pass: int | None = None
    row_gone_pass: int | None = None
    for n in range(200):
        p = driver.one_pass()
        names = [getattr(a, "name", "") for a in p.actions if type(a).__name__ == "DeletePodGroup"]
        if "llama-pool-engine-1" in names:
            assert not [x for x in sim.pods if x.startswith(f"{PREFIX}-1-")], (
                "PodGroup deleted before its pods"
            )
            pg_delete_pass = n
        row_present = any(r["index"] == 1 for r in sim.rows())
        if pg_delete_pass is not None and row_gone_pass is None and not row_present:
            row_gone_pass = n
        if row_gone_pass is not None and converged(sim):
            break
        sim.advance(1)
    assert pg_delete_pass is not None
    assert row_gone_pass is not None
    assert row_gone_pass > pg_delete_pass  # the row waits for a fresh observation of absence
    assert sorted(sim.pod_groups) == ["llama-pool-engine-0"]
    assert sim.pod_groups["llama-pool-engine-0"]["metadata"]["uid"] == pg0
    assert sorted(sim.live_pods()) == [f"{PREFIX}-0-leader-0", f"{PREFIX}-0-worker-0"]


def test_reconcile_multi_to_single_pod_group_cleanup_gates_workload() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_MultiToSinglePodGroupCleanupGatesWorkload: a single-pod replica (teardown finalizer
    already on) finds a PodGroup of its own, without labels, at Instance 0's name (left from a gang
    plan). No row and no pod may appear while that PodGroup exists; it is put into deletion; once it
    is gone, Create is admitted. Go's authoritative-LIST counts and poll interval are not mapped."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.one_pass()  # the teardown finalizer, as in Go's fixture
    assert sim.replica is not None
    sim.pod_groups["llama-pool-engine-0"] = {
        "kind": "PodGroup",
        "metadata": {
            "name": "llama-pool-engine-0",
            "namespace": sim.replica["metadata"]["namespace"],
            "uid": "stale-pg",
            "ownerReferences": [{"kind": "InferenceReplica", "uid": UID, "controller": True}],
        },
        "spec": {"minMember": 2},
    }
    for _ in range(20):
        driver.one_pass()
        if "llama-pool-engine-0" not in sim.pod_groups:
            break
        assert sim.rows() == []
        assert sim.pods == {}
        sim.advance(1)
    assert "llama-pool-engine-0" not in sim.pod_groups
    driver.one_pass()
    assert [(r["index"], r["phase"]) for r in sim.rows()] == [(0, "Creating")]


def test_reconcile_multi_to_single_pod_group_retains_live_instance_without_group_label() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_MultiToSinglePodGroupRetainsLiveInstanceWithoutGroupLabel: a Ready single-pod
    Instance whose pod carries no PodGroup label keeps the PodGroup of ours at its name (its index
    is the conservative evidence the group may still be in use), and the pod stays."""
    sim, driver = _sim(1)
    _settle(sim, driver, 1)
    assert sim.replica is not None
    pod = f"{PREFIX}-0-default-0"
    assert c.LABEL_POD_GROUP not in sim.pods[pod].obj["metadata"]["labels"]
    sim.pod_groups["llama-pool-engine-0"] = {
        "kind": "PodGroup",
        "metadata": {
            "name": "llama-pool-engine-0",
            "namespace": sim.replica["metadata"]["namespace"],
            "uid": "live-pg",
            "ownerReferences": [{"kind": "InferenceReplica", "uid": UID, "controller": True}],
        },
        "spec": {"minMember": 2},
    }
    for _ in range(3):
        driver.one_pass()
        sim.advance(1)
    assert sim.pod_groups["llama-pool-engine-0"]["metadata"]["uid"] == "live-pg"
    assert sim.live_pods() == [pod]


def test_reconcile_scale_down_malformed_owned_pod_fails_before_lifecycle_effects() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_ScaleDownMalformedOwnedPodFailsBeforeLifecycleEffects (Go's rule:
    ``reconciler.go`` ``scaleDownPodObservationRequired`` and ``invalidInstanceIndexPodCount``, the
    version carrying ``requiresAuthoritativePodGroupInventory``): two Ready Instances scaled to one,
    beside an owned pod whose ``ome.io/instance-index`` is ``not-an-index``: the pass fails closed,
    no status write, no pod gated or deleted (ours: ``planner/snapshot.py``; it failed before: the
    planner left the pod out of every Instance and scaled down; Go returns an error, ours records a
    Warning saying the count, the label and the fix). The plan is taken straight from the planner: the sim's
    invariant checker cannot hold a pod without a numeric index."""
    sim, driver = _sim(2)
    _settle(sim, driver, 2)
    src = sim.pods[f"{PREFIX}-1-default-0"]
    obj = copy.deepcopy(src.obj)
    obj["metadata"].update(name=f"{PREFIX}-7-default-0", uid="orphan-uid")
    obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX] = "not-an-index"
    sim.pods[obj["metadata"]["name"]] = SimPod(
        obj, sim.now, "ok", ready_at=src.ready_at, started_at=src.started_at
    )
    sim.update_spec(replicas=1)
    p = plan(sim.observe())
    (event,) = p.actions  # no status write, no gate, no delete: only the refusal, said
    assert isinstance(event, RecordEvent)
    assert (event.type, event.event_reason) == ("Warning", "InvalidInstanceIndex")
    assert "1 UID-owned component pod(s)" in event.message
    assert c.LABEL_INSTANCE_INDEX in event.message
    assert obj["metadata"]["name"] not in event.message  # bounded: no pod names
    # Once the pod carries a valid index (here: it is gone), the scale-down proceeds.
    del sim.pods[obj["metadata"]["name"]]
    assert any(type(a).__name__ == "WriteStatus" for a in plan(sim.observe()).actions)


def test_a_steady_replica_ignores_a_malformed_owned_pod() -> None:
    """Go: reconciler.go ``scaleDownPodObservationRequired``: the refusal is the scale-down's only; a
    replica with nothing to scale down plans on (the malformed pod stays out of every Instance)."""
    sim, driver = _sim(2)
    _settle(sim, driver, 2)
    src = sim.pods[f"{PREFIX}-1-default-0"]
    obj = copy.deepcopy(src.obj)
    obj["metadata"].update(name=f"{PREFIX}-7-default-0", uid="orphan-uid")
    obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX] = "not-an-index"
    sim.pods[obj["metadata"]["name"]] = SimPod(
        obj, sim.now, "ok", ready_at=src.ready_at, started_at=src.started_at
    )
    sim.update_spec(replicas=3)
    assert any(type(a).__name__ == "CreatePod" for a in plan(sim.observe()).actions)


def test_teardown_refuses_a_malformed_owned_pod() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/teardown.go @ dcfb4135 (the
    ``invalidInstanceIndexPodCount`` guard: "refusing teardown effects"): a replica being deleted
    beside an owned pod with no valid ``ome.io/instance-index`` deletes nothing and says why."""
    sim, driver = _sim(1)
    _settle(sim, driver, 1)
    src = sim.pods[f"{PREFIX}-0-default-0"]
    obj = copy.deepcopy(src.obj)
    obj["metadata"].update(name=f"{PREFIX}-7-default-0", uid="orphan-uid")
    del obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX]
    sim.pods[obj["metadata"]["name"]] = SimPod(
        obj, sim.now, "ok", ready_at=src.ready_at, started_at=src.started_at
    )
    sim.delete_replica()
    (event,) = plan(sim.observe()).actions
    assert isinstance(event, RecordEvent)
    assert event.event_reason == "InvalidInstanceIndex"
    assert "refusing teardown effects" in event.message


def test_reconcile_multi_to_single_pod_group_rejects_malformed_owned_pod_index() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_MultiToSinglePodGroupRejectsMalformedOwnedPodIndex: a Ready single-pod Instance
    whose pod carries a malformed ``ome.io/instance-index`` (and no PodGroup label), beside a PodGroup
    of ours at Instance 0's name: the stale-group pass fails closed and the group is not deleted.
    It failed before: ours left the pod out of Instance 0, found the group unused and deleted it.
    Planner only, as the malformed-pod scale-down test above."""
    sim, driver = _sim(1)
    _settle(sim, driver, 1)
    assert sim.replica is not None
    pod = sim.pods[f"{PREFIX}-0-default-0"]
    pod.obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX] = "malformed"
    sim.pod_groups["llama-pool-engine-0"] = {
        "kind": "PodGroup",
        "metadata": {
            "name": "llama-pool-engine-0",
            "namespace": sim.replica["metadata"]["namespace"],
            "uid": "stale-pg",
            "ownerReferences": [{"kind": "InferenceReplica", "uid": UID, "controller": True}],
        },
        "spec": {"minMember": 2},
    }
    (event,) = plan(sim.observe()).actions  # no DeletePodGroup, no status write
    assert isinstance(event, RecordEvent)
    assert event.event_reason == "InvalidInstanceIndex"
    assert "refusing stale-PodGroup cleanup effects" in event.message


def test_gang_cleanup_retains_the_marker_until_its_pod_group_is_absent() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/reconciler_test.go @ ae43378d,
    TestReconcile_GangCleanupRetainsStatusUntilPodGroupAbsent (the same test in a newer stored version,
    215,360 characters, also accepts a Pending source where Go's fixture gives it no pods): a gang surge
    whose target was retired (the spec moved back) is cleaned up — its replacement's PodGroup is
    deleted, and while a finalizer keeps that group Terminating the cleanup marker row stays, pass after
    pass; once the group is gone the marker is removed and the source is reset in the same write (no
    operation, Ready: ours has its pods). The sim's PodGroup with a finalizer stays Terminating until
    ``release_pod_group``."""
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(minutes=30), stuck_pod_grace_period=timedelta(seconds=60)
    )
    sim = Sim(settings=settings, workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _settle(sim, driver, 1)
    sim.behaviour["vllm:v2"] = "never"
    sim.image = "vllm:v2"
    driver.one_pass()
    marker_group = f"{PREFIX}-1"
    assert [(r["index"], r["operation"]["step"]) for r in sim.rows()] == [
        (0, "Surge"),
        (1, "GangSurgeTarget"),
    ]
    sim.pod_groups[marker_group]["metadata"]["finalizers"] = ["example.com/hold"]
    sim.image = "vllm:v1"  # the surge's target is retired
    for _ in range(6):
        driver.one_pass()
        sim.advance(5)
        assert 1 in [r["index"] for r in sim.rows()], "the marker went before its PodGroup was absent"
    assert sim.pod_groups[marker_group]["metadata"].get("deletionTimestamp"), (
        "the PodGroup delete was not issued"
    )
    assert (sim.rows()[1]["operation"]["step"]) == "GangSurgeTargetCleanup"
    sim.release_pod_group(marker_group)
    driver.one_pass()
    rows = sim.rows()
    assert [r["index"] for r in rows] == [0]
    assert "operation" not in rows[0]
    assert rows[0]["phase"] == "Ready"
