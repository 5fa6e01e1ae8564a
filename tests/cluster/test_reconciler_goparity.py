"""The reconciler's Go-parity classes (issue 37) on the real control plane: a rollback naming no
revision, which Instance a scale-down keeps, and what a Recover pause repairs. Each expectation is
OME's Go (cited per test); the planner rules are pinned in the sim tier, these show them on a cluster."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from helpers import IREP, apply, events, example_replica, live_pods, recorded, replica
from reconciler_proc import Reconciler
from test_reconciler_rollout import RUNTIME, _patch, namespaced_runtime
from test_status_truth import _node, _one_more_elsewhere, silenced  # noqa: F401 (the fixture)

from testbed.controlplane import COSCHEDULER_NAME
from testbed.testing import Cluster, gang_replica

POD = "llama-pool-engine-{}-default-0"


def _settled(cluster: Cluster, ns: str, n: int) -> bool:
    st = replica(cluster, ns).get("status") or {}
    rows = st.get("instanceStatuses") or []
    return (
        len(rows) == n
        and all(r["phase"] == "Ready" and not r.get("operation") for r in rows)
        and st.get("servingReplicas") == n
    )


def _settled_at(cluster: Cluster, ns: str, incarnation: int) -> bool:
    """One Ready Instance at ``incarnation``, with no operation, serving: read from one status."""
    st = replica(cluster, ns).get("status") or {}
    rows = st.get("instanceStatuses") or []
    return [(r["phase"], r.get("operation"), r.get("incarnation")) for r in rows] == [
        ("Ready", None, incarnation)
    ] and st.get("servingReplicas") == 1


def _rows(cluster: Cluster, ns: str) -> list[dict[str, Any]]:
    return list((replica(cluster, ns).get("status") or {}).get("instanceStatuses") or [])


def test_rollback_to_a_missing_revision_rolls_to_the_spec_without_an_event(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go inferencereplica/reconciler.go @ 4dfb96b1, Reconcile's canary-rollback block: a name that
    resolves to no ControllerRevision is "nothing to roll back to; proceed normally": no event."""
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=1))
    rec.wait("Ready", lambda: _settled(cluster, namespace, 1), timeout=60)
    _patch(cluster, namespace, {"pacing": {"rollbackToRevision": "llama-pool-engine-deadbeef"}})
    rec.wait(
        "the generation observed",
        lambda: (
            replica(cluster, namespace)["status"].get("observedGeneration")
            == replica(cluster, namespace)["metadata"]["generation"]
        ),
    )
    time.sleep(2)
    assert _settled(cluster, namespace, 1)
    reasons = sorted({e["reason"] for e in events(cluster, namespace)})
    print("events after the rollback pin:", reasons)
    assert "RollbackRevisionNotFound" not in reasons


def test_scale_down_keeps_the_serving_instance(
    cluster: Cluster,
    reconcilers: Callable[..., Reconciler],
    namespace: str,
    silenced: list[str],  # noqa: F811
) -> None:
    """Go workload/plan.go @ 4dfb96b1 instancePlanIndices / scaleDownRank / keepsPreference: a Ready
    Instance whose pod left rotation (its node stopped reporting) ranks below a serving one, so 2 -> 1
    retires Instance 0 and keeps Instance 1."""
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=1))
    rec.wait("Instance 0 Ready", lambda: _settled(cluster, namespace, 1), timeout=60)
    node_a = _node(cluster, namespace, POD.format(0))
    _one_more_elsewhere(cluster, rec, namespace, 2, [node_a])
    rec.wait("2 Instances Ready", lambda: _settled(cluster, namespace, 2), timeout=60)
    silenced.append(node_a)
    cluster.kubelet.silence_node(node_a)
    rec.wait(
        "Instance 0 out of rotation",
        lambda: any(r["index"] == 0 and r.get("servingPodCount") == 0 for r in _rows(cluster, namespace)),
    )
    cluster.kubectl("scale", "inferencereplica", "llama-pool", "-n", namespace, "--replicas=1")

    def retired() -> list[int] | None:
        rows = _rows(cluster, namespace)
        gone = [i for i in (0, 1) if i not in {r["index"] for r in rows}]
        going = [r["index"] for r in rows if r["phase"] == "Deleting"]
        return sorted(gone + going) or None

    chosen = rec.wait("an Instance retired", retired)
    print("retired after 2 -> 1 with Instance 0 out of rotation:", chosen)
    assert chosen == [0]
    assert POD.format(1) in [p["metadata"]["name"] for p in live_pods(cluster, namespace)]


def test_recover_pause_does_not_rebuild_a_lost_single_pod_instance(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go workload/plan_decision.go Plan + ops/create.go CreateCommittedIndices (a paused Component
    creates only what a committed create started) and PauseModeRecover (repair is the RestartPolicy,
    None for a single-pod Instance): a deleted pod is not recreated until the unpause."""
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=1))
    rec.wait("Ready", lambda: _settled(cluster, namespace, 1), timeout=60)
    _patch(cluster, namespace, {"paused": True, "pauseMode": "Recover"})
    rec.wait(
        "the pause observed",
        lambda: (
            replica(cluster, namespace)["status"].get("observedGeneration")
            == replica(cluster, namespace)["metadata"]["generation"]
        ),
    )
    uid = live_pods(cluster, namespace)[0]["metadata"]["uid"]
    cluster.kubectl("delete", "pod", POD.format(0), "-n", namespace, "--wait=true")
    # The loss seen first (how soon depends on the machine's load), then 4 s of passes to rebuild in.
    rec.wait("the loss seen", lambda: [r["phase"] for r in _rows(cluster, namespace)] == ["Pending"])
    time.sleep(4)
    names = [p["metadata"]["name"] for p in live_pods(cluster, namespace) if p["metadata"]["uid"] != uid]
    phases = [r["phase"] for r in _rows(cluster, namespace)]
    print("4 s after the loss was seen under pauseMode Recover: pods", names, "rows", phases)
    assert (names, phases) == ([], ["Pending"])
    _patch(cluster, namespace, {"paused": False})
    rec.wait("rebuilt on unpause", lambda: _settled(cluster, namespace, 1), timeout=60)


def test_a_stale_pod_group_of_a_single_pod_instance_goes_before_the_pod(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go inferencereplica/reconciler.go reconcileStaleSinglePodGroups (reconciler_test.go @ ae43378d
    TestReconcile_MultiToSinglePodGroupCleanupGatesWorkload): a PodGroup of the replica's at a
    single-pod Instance's name, with no pod referencing it and no label (Go finds it by owner UID),
    is deleted before the pod is created. Before issue 37's observation fix the pod was created
    beside it: ``omereconcile/cluster/observe.py`` listed PodGroups only for a gang replica, by label."""
    apply(cluster, example_replica(namespace, replicas=1))
    ir = replica(cluster, namespace)
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": "llama-pool-engine-0",
            "namespace": namespace,
            "ownerReferences": [
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "InferenceReplica",
                    "name": ir["metadata"]["name"],
                    "uid": ir["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"minMember": 2},
    }
    apply(cluster, group)
    path = f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{namespace}/podgroups"
    seen: list[tuple[list[str], list[str]]] = []
    rec = reconcilers()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        groups = [g["metadata"]["name"] for g in cluster.raw.get(path)["items"]]
        pods = [p["metadata"]["name"] for p in live_pods(cluster, namespace)]
        if not seen or seen[-1] != (groups, pods):
            seen.append((groups, pods))
        if pods and _settled(cluster, namespace, 1):
            break
        time.sleep(0.2)
    print("PodGroups and pods as the passes went:", seen)
    rec.wait("Ready", lambda: _settled(cluster, namespace, 1), timeout=60)
    # The group went before any pod existed, and was not recreated for the single pod.
    assert all(not (groups and pods) for groups, pods in seen), seen
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == [POD.format(0)]


def test_a_scale_down_refuses_an_owned_pod_without_a_valid_instance_index(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go inferencereplica/reconciler.go scaleDownPodObservationRequired / invalidInstanceIndexPodCount
    (reconciler_test.go @ ae43378d TestReconcile_ScaleDownMalformedOwnedPodFailsBeforeLifecycleEffects):
    while a pod the replica controls carries no valid ome.io/instance-index, 2 -> 1 deletes nothing
    and writes no Delete; the refusal is said in a Warning; once that pod is gone the scale-down runs.
    Before issue 37's third round the pod was left out of every Instance and Instance 1 was deleted."""
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=2))
    rec.wait("2 Instances Ready", lambda: _settled(cluster, namespace, 2), timeout=60)
    ir = replica(cluster, namespace)
    src = next(p for p in live_pods(cluster, namespace) if p["metadata"]["name"] == POD.format(1))
    labels = dict(src["metadata"]["labels"])
    labels["ome.io/instance-index"] = "not-an-index"
    stray = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "llama-pool-engine-stray",
            "namespace": namespace,
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "InferenceReplica",
                    "name": ir["metadata"]["name"],
                    "uid": ir["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "ome-container", "image": src["spec"]["containers"][0]["image"]}]},
    }
    apply(cluster, stray)
    cluster.kubectl("scale", "inferencereplica", "llama-pool", "-n", namespace, "--replicas=1")
    rec.wait(
        "the refusal said",
        lambda: any(e["reason"] == "InvalidInstanceIndex" for e in events(cluster, namespace)),
        timeout=30,
    )
    time.sleep(2)
    names = sorted(p["metadata"]["name"] for p in live_pods(cluster, namespace))
    phases = [r["phase"] for r in _rows(cluster, namespace)]
    message = next(e["message"] for e in events(cluster, namespace) if e["reason"] == "InvalidInstanceIndex")
    print("with the stray pod:", names, phases, message)
    assert POD.format(0) in names
    assert POD.format(1) in names
    assert phases == ["Ready", "Ready"]
    cluster.kubectl("delete", "pod", "llama-pool-engine-stray", "-n", namespace, "--wait=true")
    rec.wait("scaled to 1", lambda: _settled(cluster, namespace, 1), timeout=60)


def test_the_scale_subresource_selects_one_pod_per_gang_instance(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go inferencereplica/status.go @ 8263d0c7 irLabelSelectorString (status_test.go
    TestIRLabelSelectorStringMatchesOnePodPerInstance): the selector an HPA reads from the scale
    subresource matches one pod per Instance, the leader of a gang, so two leader+worker Instances
    count as two, not four."""
    rec = reconcilers()
    apply(
        cluster,
        gang_replica("llama-pool", namespace, "engine:v1", gpus=1, replicas=2, scheduler=COSCHEDULER_NAME),
    )
    rec.wait(
        "both gangs' pods and a published selector",
        lambda: (
            len(live_pods(cluster, namespace)) == 4
            and bool((replica(cluster, namespace).get("status") or {}).get("labelSelector"))
        ),
        timeout=120,
    )
    scale = cluster.raw.get(IREP.format(ns=namespace) + "/llama-pool/scale")
    selector = scale["status"]["selector"]
    print("scale subresource selector:", selector)
    matched = cluster.raw.get(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)["items"]
    assert sorted(p["metadata"]["name"] for p in matched) == [
        "llama-pool-engine-0-leader-0",
        "llama-pool-engine-1-leader-0",
    ]


def test_a_create_under_way_when_the_pause_comes_is_not_failed_while_paused(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go inferencereplica/status.go @ 8263d0c7 reconcileHeldDeadlines ("pausing holds every in-flight
    Instance") with the escalation pass skipping a paused Component (status_test.go
    TestAggregateStatus_PausedInstance_DeadlineParkedAndRearmed): a committed Create whose container
    starts crash-looping after the pause keeps its attempt, with no failure recorded and no deadline;
    healed and unpaused, it comes up."""
    rec = reconcilers()
    cluster.kubelet.never_ready(POD.format(0), namespace)
    apply(cluster, example_replica(namespace, replicas=1))
    rec.wait(
        "the create under way",
        lambda: (
            any(
                r.get("phase") == "Creating" and (r.get("operation") or {}).get("type") == "Create"
                for r in _rows(cluster, namespace)
            )
            and bool(live_pods(cluster, namespace))
        ),
        timeout=60,
    )
    _patch(cluster, namespace, {"paused": True, "pauseMode": "Recover"})
    rec.wait(
        "the pause observed",
        lambda: (
            replica(cluster, namespace)["status"].get("observedGeneration")
            == replica(cluster, namespace)["metadata"]["generation"]
        ),
    )
    cluster.kubelet.crash_loop(POD.format(0), namespace)
    time.sleep(10)  # past the 3 s stuck-pod grace the suite's operator settings configure
    (row,) = _rows(cluster, namespace)
    print("10 s into a crash loop under the pause:", row)
    assert (row["phase"], row["operation"]["type"]) == ("Creating", "Create")
    assert "lastFailure" not in row
    assert "deadline" not in row["operation"]
    cluster.kubelet.heal(POD.format(0), namespace)
    _patch(cluster, namespace, {"paused": False})
    rec.wait("Ready after the unpause", lambda: _settled(cluster, namespace, 1), timeout=60)


def test_a_lost_single_pod_instance_is_restarted_under_recreate_instance_on_pod_restart(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go ops/restart.go DetectRestartTriggerWithPods (a demoted single-pod row, types.DemotedReady,
    is read as Ready: "pod count 0 below desired 1") and Restart; the restart pass runs under a
    standard pause (workload/plan_decision.go Plan, plan_decision_test.go
    TestPlan_Paused_RepairRunsFleetChangesDoNot @ 4dfb96b1): under RecreateInstanceOnPodRestart a
    deleted pod is rebuilt by a Restart at the next incarnation while paused (Recover). Before: it was
    rebuilt through Create at the same incarnation, with no RestartTriggered, as a gang's is not."""
    rec = reconcilers()
    apply(
        cluster,
        example_replica(namespace, replicas=1, lifecycle={"restartPolicy": "RecreateInstanceOnPodRestart"}),
    )
    rec.wait("Ready", lambda: _settled(cluster, namespace, 1), timeout=60)
    _patch(cluster, namespace, {"paused": True, "pauseMode": "Recover"})
    rec.wait(
        "the pause observed",
        lambda: (
            replica(cluster, namespace)["status"].get("observedGeneration")
            == replica(cluster, namespace)["metadata"]["generation"]
        ),
    )
    cluster.kubectl("delete", "pod", POD.format(0), "-n", namespace, "--wait=true")
    # One read for both: settled, then the incarnation from a second read, once passed on the old
    # Ready row (incarnation 1) read just before the Restart's status write (incarnation 2).
    rec.wait("restarted while paused", lambda: _settled_at(cluster, namespace, 2), timeout=60)
    reasons = [e["reason"] for e in recorded(cluster, namespace, "RestartTriggered", "RestartCompleted")]
    print("restart under pauseMode Recover: events", reasons)
    assert replica(cluster, namespace)["spec"]["paused"] is True


def test_a_recreate_paused_between_its_delete_and_its_recreate_gets_its_pod(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go workload/plan_decision.go Plan (the newest stored version): "an attempt already in flight
    still runs the step it is on to that step's boundary ... a pause never leaves an Instance mid-step
    — dark between a delete and its recreate"; ops/update_recreate.go recreateUpdate @ ae683e3f has no
    pause check. A RecreatePod update whose old pod is Terminating (held by a finalizer) when
    ``pauseMode: Freeze`` lands recreates the pod on the new revision while still paused. Before: the
    Instance had no pod until the unpause."""
    rec = reconcilers()
    v1, v2 = "docker.io/vllm/vllm-openai:v0.9.0.1", "docker.io/vllm/vllm-openai:v0.9.2"
    apply(cluster, namespaced_runtime(namespace, image=v1))
    lifecycle = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    apply(
        cluster,
        example_replica(
            namespace, replicas=1, lifecycle=lifecycle, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}
        ),
    )
    rec.wait("Ready on v1", lambda: _settled(cluster, namespace, 1), timeout=60)
    pod_path = f"/api/v1/namespaces/{namespace}/pods/{POD.format(0)}"
    cluster.raw.patch(pod_path, {"metadata": {"finalizers": ["test.ome.io/hold"]}})
    apply(cluster, namespaced_runtime(namespace, image=v2))

    def old_pod_terminating() -> bool:
        pod = cluster.raw.get(pod_path)
        op = (_rows(cluster, namespace) or [{}])[0].get("operation") or {}
        return bool(pod["metadata"].get("deletionTimestamp")) and op.get("type") == "Update"

    rec.wait("the recreate deleted the old pod", old_pod_terminating, timeout=60)
    _patch(cluster, namespace, {"paused": True, "pauseMode": "Freeze"})
    rec.wait(
        "the pause observed",
        lambda: (
            replica(cluster, namespace)["status"].get("observedGeneration")
            == replica(cluster, namespace)["metadata"]["generation"]
        ),
    )
    cluster.raw.patch(pod_path, {"metadata": {"finalizers": None}})

    def recreated_on_v2() -> bool:
        pods = live_pods(cluster, namespace)
        return (
            _settled(cluster, namespace, 1)
            and [p["spec"]["containers"][0]["image"] for p in pods] == [v2]
            and _rows(cluster, namespace)[0]["runningRevision"]
            == replica(cluster, namespace)["status"]["updateRevision"]
        )

    rec.wait("recreated on v2 while paused", recreated_on_v2, timeout=60)
    assert replica(cluster, namespace)["spec"]["paused"] is True
    print("recreate under pauseMode Freeze: rows", _rows(cluster, namespace))
