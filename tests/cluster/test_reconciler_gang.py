"""Multi-pod (gang) Instances on the real control plane with the Coscheduling gang scheduler and the fake
kubelet (4 nodes x 8 GPUs): a leader and a worker per Instance, one PodGroup each, rolled by SurgeThenDrain.

Two 8-GPU pods per Instance take two whole nodes, so two serving gangs fill the four nodes and leave no
room for a surge: the roll test gives each pod 4 GPUs (two pods share a node) and the capacity tests use
one Instance of two 8-GPU pods, where a second node pair decides whether the replacement gang fits.
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from helpers import IREP, apply, events, live_pods, pods, recorded, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_rollout import ServingMonitor

from testbed.controlplane import COSCHEDULER_NAME
from testbed.testing import Cluster, gang_replica, wait_for

PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"
GPU = "nvidia.com/gpu"
HOSTNAME = "kubernetes.io/hostname"


def _gang(ns: str, image: str, *, gpus: int, replicas: int) -> dict[str, Any]:
    return gang_replica("llama-pool", ns, image, gpus=gpus, replicas=replicas, scheduler=COSCHEDULER_NAME)


def _groups(cluster: Cluster, ns: str) -> list[str]:
    items = cluster.raw.get(PODGROUPS.format(ns=ns))["items"]
    return sorted(g["metadata"]["name"] for g in items if not g["metadata"].get("deletionTimestamp"))


def _names(cluster: Cluster, ns: str) -> list[str]:
    return [p["metadata"]["name"] for p in live_pods(cluster, ns)]


def _gang_pods(*indices: int) -> list[str]:
    return sorted(f"llama-pool-engine-{i}-{r}-0" for i in indices for r in ("leader", "worker"))


def _settled(cluster: Cluster, ns: str, image: str | None = None) -> bool:
    obj = replica(cluster, ns)
    st = obj.get("status") or {}
    ready = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), {})
    rows = st.get("instanceStatuses") or []
    ok = (
        ready.get("status") == "True"
        and st.get("currentRevision") == st.get("updateRevision")
        and len(rows) == obj["spec"]["replicas"]
        and all(not r.get("operation") for r in rows)
    )
    if ok and image is not None:
        ok = all(p["spec"]["containers"][0]["image"] == image for p in live_pods(cluster, ns))
    return ok


def _set_image(cluster: Cluster, ns: str, image: str) -> None:
    runners = replica(cluster, ns)["spec"]["runners"]
    for r in runners:
        r["template"]["spec"]["containers"][0]["image"] = image
    cluster.raw.patch(f"{IREP.format(ns=ns)}/llama-pool", {"spec": {"runners": runners}})


def _wait_gpus_free(cluster: Cluster, namespace: str) -> None:
    """Earlier tests' pods may still hold GPUs; the capacity these tests reason about must be theirs."""

    def free() -> bool:
        for p in cluster.raw.get("/api/v1/pods")["items"]:
            if p["metadata"]["namespace"] == namespace or not p["spec"].get("nodeName"):
                continue
            if (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            if any(GPU in (ct.get("resources") or {}).get("limits", {}) for ct in p["spec"]["containers"]):
                return False
        return True

    wait_for("no other test's pod holds GPUs", free, timeout=90)


def _writes(rec: Reconciler) -> int:
    """The reconciler's own API writes so far, from its metrics (every verb but reads and watches)."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{rec.probe_port()}/metrics", timeout=5) as resp:
        text = resp.read().decode()
    total = 0
    for line in text.splitlines():
        m = re.match(r"omereconcile_api_requests_total\{(.*)\} ([0-9.e+]+)$", line)
        if m and not re.search(r'verb="(GET|LIST|WATCH)"', m.group(1)):
            total += int(float(m.group(2)))
    return total


def test_two_gangs_roll_to_a_new_image_with_the_serving_floor_held(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=4, replicas=2))
    rec.wait("two gangs Ready", lambda: _settled(cluster, namespace), timeout=120)
    assert _names(cluster, namespace) == _gang_pods(0, 1)
    assert _groups(cluster, namespace) == ["llama-pool-engine-0", "llama-pool-engine-1"]
    group = cluster.raw.get(f"{PODGROUPS.format(ns=namespace)}/llama-pool-engine-0")
    assert group["spec"]["minMember"] == 2
    assert group["metadata"]["ownerReferences"][0]["kind"] == "InferenceReplica"
    leader = next(p for p in live_pods(cluster, namespace) if p["metadata"]["name"].endswith("-0-worker-0"))
    env = {e["name"]: e.get("value") for e in leader["spec"]["containers"][0]["env"]}
    assert env["OME_INSTANCE_POD_RANK"] == "1"
    assert env["OME_INSTANCE_POD_COUNT"] == "2"
    st = replica(cluster, namespace)["status"]
    assert (st["readyReplicas"], st["servingReplicas"]) == (2, 2)

    writes0 = _writes(rec)
    started = time.monotonic()
    with ServingMonitor(cluster, namespace, size=2) as mon:
        _set_image(cluster, namespace, "engine:v2")
        rec.wait("both gangs on v2", lambda: _settled(cluster, namespace, "engine:v2"), timeout=240)
    elapsed = time.monotonic() - started
    writes = _writes(rec) - writes0
    # The figures the closing note reports (printed with -s).
    print(
        f"\ngang roll: 2 Instances x 2 pods in {elapsed:.1f}s; reconciler API writes {writes} = {writes / 2:.1f}/Instance"
    )
    assert mon.minimum is not None
    assert mon.minimum >= 2, f"whole gangs serving fell to {mon.minimum}\n{rec.tail()}"
    assert {"llama-pool-engine-0-leader-0", "llama-pool-engine-2-leader-0"} <= mon.names
    rows = replica(cluster, namespace)["status"]["instanceStatuses"]
    assert all((r["incarnation"], r["phase"]) == (1, "Ready") for r in rows)
    indices = sorted(r["index"] for r in rows)
    assert _names(cluster, namespace) == _gang_pods(*indices)
    assert _groups(cluster, namespace) == [f"llama-pool-engine-{i}" for i in indices]
    recorded(cluster, namespace, "RecreateUpdateCompleted", times=2)


def _free_node(cluster: Cluster, namespace: str) -> str:
    used = {p["spec"].get("nodeName") for p in live_pods(cluster, namespace)}
    return next(n for n in cluster.kubelet.node_names if n not in used)


def _filler(node: str) -> dict[str, Any]:
    """An ordinary pod taking a whole 8-GPU node."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"filler-{node}"},
        "spec": {
            "containers": [{"name": "x", "image": "filler:1", "resources": {"limits": {GPU: "8"}}}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
                        ]
                    }
                }
            },
            "terminationGracePeriodSeconds": 0,
        },
    }


def test_gang_surge_with_one_node_free_holds_unschedulable_then_completes(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=8, replicas=1))
    rec.wait("the gang Ready", lambda: _settled(cluster, namespace), timeout=120)
    serving_uids = {p["metadata"]["name"]: p["metadata"]["uid"] for p in live_pods(cluster, namespace)}
    node = _free_node(cluster, namespace)
    pods_path = f"/api/v1/namespaces/{namespace}/pods"
    cluster.raw.post(pods_path, _filler(node))
    wait_for("filler bound", lambda: cluster.raw.get(f"{pods_path}/filler-{node}")["spec"].get("nodeName"))

    _set_image(cluster, namespace, "engine:v2")

    def parked() -> dict[str, Any] | None:
        rows = replica(cluster, namespace)["status"].get("instanceStatuses") or []
        return next((r for r in rows if (r.get("operation") or {}).get("waiting") == "Unschedulable"), None)

    row = rec.wait("the replacement gang parked as Unschedulable", parked, timeout=90)
    assert row["index"] == 1
    assert row["operation"]["step"] == "GangSurgeTarget"
    time.sleep(5)
    # The serving gang is untouched: same pods, still serving; no member of the replacement is bound.
    live = {p["metadata"]["name"]: p for p in live_pods(cluster, namespace)}
    assert {n: live[n]["metadata"]["uid"] for n in serving_uids} == serving_uids
    assert all(serving(live[n]) for n in serving_uids)
    assert not any(p["spec"].get("nodeName") for n, p in live.items() if n.startswith("llama-pool-engine-1-"))
    assert replica(cluster, namespace)["status"]["servingReplicas"] == 1

    cluster.raw.delete(f"{pods_path}/filler-{node}")
    rec.wait("the roll to complete", lambda: _settled(cluster, namespace, "engine:v2"), timeout=180)
    assert _names(cluster, namespace) == _gang_pods(1)
    assert _groups(cluster, namespace) == ["llama-pool-engine-1"]


def test_crash_looping_worker_abandons_the_gang_surge_and_the_old_gang_keeps_serving(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=8, replicas=1))
    rec.wait("the gang Ready", lambda: _settled(cluster, namespace), timeout=120)
    v1 = replica(cluster, namespace)["status"]["currentRevision"]
    source = {p["metadata"]["name"]: p["metadata"]["uid"] for p in live_pods(cluster, namespace)}
    cluster.kubelet.crash_loop("llama-pool-engine-1-worker-0", namespace)
    try:
        with ServingMonitor(cluster, namespace, size=2) as mon:
            _set_image(cluster, namespace, "engine:v2")

            def abandoned() -> bool:
                st = replica(cluster, namespace)["status"]
                rows = st.get("instanceStatuses") or []
                return (
                    any(e["reason"] == "GangSurgeAbandoned" for e in events(cluster, namespace))
                    and len(rows) == 1
                    and not _names(cluster, namespace)[2:]
                    and _groups(cluster, namespace) == ["llama-pool-engine-0"]
                )

            rec.wait("the gang surge abandoned", abandoned, timeout=120)
    finally:
        cluster.kubelet.heal("llama-pool-engine-1-worker-0", namespace)
    assert mon.minimum == 1, f"the old gang stopped serving\n{rec.tail()}"
    st = replica(cluster, namespace)["status"]
    row = st["instanceStatuses"][0]
    assert (row["index"], row["phase"], row["runningRevision"]) == (0, "Ready", v1)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in live_pods(cluster, namespace)} == source
    ev = next(e for e in events(cluster, namespace) if e["reason"] == "GangSurgeAbandoned")
    assert ev["type"] == "Warning"
    assert "abandoned failed gang surge (surge-index=1)" in ev["message"]
    assert st["retryBlocks"][0]["reason"] == "CrashLoopBackOff"


def _split_risk(cluster: Cluster, namespace: str, count: int = 1) -> list[dict[str, Any]]:
    """The GangSplitRisk Warnings once one has been counted ``count`` times: a pass records its events
    after its status write, so a read right after the status settles can come a few ms early."""

    def found() -> list[dict[str, Any]] | None:
        got = [e for e in events(cluster, namespace) if e["reason"] == "GangSplitRisk"]
        return got if any(e.get("count", 1) >= count for e in got) else None

    return wait_for(f"a GangSplitRisk Warning counted {count} time(s)", found, timeout=30)


def test_a_worker_deleted_by_hand_recreates_the_whole_gang(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=8, replicas=1))
    rec.wait("the gang Ready", lambda: _settled(cluster, namespace), timeout=120)
    # No spec.topologyKey and no podAffinity of the user's: the worker may land in another topology
    # domain than its leader, said once for the Instance (Go maybeWarnGangSplitRisk).
    assert [(e["type"], e.get("count", 1)) for e in _split_risk(cluster, namespace)] == [("Warning", 1)]
    assert "Set spec.topologyKey" in _split_risk(cluster, namespace)[0]["message"]
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in live_pods(cluster, namespace)}
    cluster.kubectl("delete", "pod", "-n", namespace, "llama-pool-engine-0-worker-0", "--wait=false")

    def restarted() -> bool:
        rows = replica(cluster, namespace)["status"].get("instanceStatuses") or []
        return bool(rows) and rows[0]["incarnation"] == 2 and _settled(cluster, namespace)

    rec.wait("the whole gang recreated at incarnation 2", restarted, timeout=120)
    after = {p["metadata"]["name"]: p for p in live_pods(cluster, namespace)}
    assert sorted(after) == sorted(before)
    for name, pod in after.items():
        assert pod["metadata"]["uid"] != before[name], f"{name} was not recreated"
        assert pod["metadata"]["labels"]["ome.io/instance-incarnation"] == "2"
    recorded(cluster, namespace, "RestartTriggered", "RestartCompleted")
    # The rebuild at incarnation 2 is a new episode: the advisory once more (the same Event, counted).
    assert [e.get("count", 1) for e in _split_risk(cluster, namespace, count=2)] == [2]

    # Teardown: the gang's pods, then its PodGroup, then the finalizer.
    cluster.raw.delete(f"{IREP.format(ns=namespace)}/llama-pool")
    rec.wait(
        "the replica gone",
        lambda: not cluster.raw.get(IREP.format(ns=namespace))["items"],
        timeout=60,
    )
    assert pods(cluster, namespace) == []
    assert _groups(cluster, namespace) == []


class Ledger:
    """Counts every ADDED pod and PodGroup in the namespace, across reconciler processes."""

    def __init__(self, cluster: Cluster, ns: str) -> None:
        self.cluster, self.ns = cluster, ns
        self.added: Counter[str] = Counter()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._watch, args=(f"/api/v1/namespaces/{ns}/pods",), daemon=True),
            threading.Thread(target=self._watch, args=(PODGROUPS.format(ns=ns),), daemon=True),
        ]

    def _watch(self, path: str) -> None:
        rv = self.cluster.raw.get(path)["metadata"]["resourceVersion"]
        kind = "podgroup" if "podgroups" in path else "pod"
        while not self._stop.is_set():
            for ev in self.cluster.raw.watch(path, resource_version=rv, timeout_seconds=2):
                if ev.get("type") == "ADDED":
                    self.added[f"{kind}/{ev['object']['metadata']['name']}"] += 1
                if ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    rv = ev["object"]["metadata"]["resourceVersion"]

    def __enter__(self) -> Ledger:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(5)


def test_sigkill_during_a_gang_surge_then_restart_finishes_with_nothing_lost_or_duplicated(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=8, replicas=1))
    rec.wait("the gang Ready", lambda: _settled(cluster, namespace), timeout=120)
    with Ledger(cluster, namespace) as ledger, ServingMonitor(cluster, namespace, size=2) as mon:
        _set_image(cluster, namespace, "engine:v2")
        rec.wait(
            "the replacement gang's pods created",
            lambda: (
                {"llama-pool-engine-1-leader-0", "llama-pool-engine-1-worker-0"}
                <= set(_names(cluster, namespace))
            ),
            timeout=60,
            interval=0.05,
        )
        rec.kill()
        frozen = _names(cluster, namespace)
        time.sleep(1)
        assert _names(cluster, namespace) == frozen  # nobody acts while no reconciler runs
        rec2 = reconcilers()
        rec2.wait(
            "the roll to finish after the restart",
            lambda: _settled(cluster, namespace, "engine:v2"),
            timeout=180,
        )
    assert _names(cluster, namespace) == _gang_pods(1)
    assert _groups(cluster, namespace) == ["llama-pool-engine-1"]
    assert {k: n for k, n in ledger.added.items() if n != 1} == {}
    assert set(ledger.added) == {
        "pod/llama-pool-engine-1-leader-0",
        "pod/llama-pool-engine-1-worker-0",
        "podgroup/llama-pool-engine-1",
    }
    assert mon.minimum == 1


def test_a_drifted_pod_group_is_patched_back_and_an_ownerless_one_is_never_adopted(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """Go ``workload/podgroup/podgroup.go`` @ dcfb4135 ``EnsurePodGroupForPodsFromObservation``: a group
    of ours whose owned fields drifted is updated (labels, minMember; an annotation it does not own is
    kept), and a group at an Instance's name with no controller reference, or another owner's, is a
    conflict (``ControlledByUID``), never adopted. Before issue 37's fix the drift stayed, the
    ownerless group was taken as ours, and the other owner's was not even observed: for both the
    gang's pods were created against a group that was not the replica's."""
    _wait_gpus_free(cluster, namespace)
    path = PODGROUPS.format(ns=namespace)
    # A group with the replica's labels but no owner at Instance 1's name, there before the replica
    # (left by a tool that copied the labels, not the owner).
    labels = {"ome.io/inferenceservice": "llama-pool", "component": "engine", "ome.io/instance-index": "1"}
    cluster.raw.post(
        path,
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "llama-pool-engine-1", "namespace": namespace, "labels": labels},
            "spec": {"minMember": 5},
        },
    )
    # And one another owner (a ConfigMap) controls at Instance 2's name, with the same labels.
    owner = cluster.raw.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other-owner"}},
    )
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "other-owner", "uid": owner["metadata"]["uid"]}
    cluster.raw.post(
        path,
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {
                "name": "llama-pool-engine-2",
                "namespace": namespace,
                "labels": {**labels, "ome.io/instance-index": "2"},
                "ownerReferences": [{**ref, "controller": True}],
            },
            "spec": {"minMember": 5},
        },
    )
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=4, replicas=3))

    def refused(index: int) -> bool:
        rows = replica(cluster, namespace).get("status", {}).get("instanceStatuses") or []
        row = next((r for r in rows if r["index"] == index), {})
        return (row.get("lastFailure") or {}).get("reason") == "PodGroupNameInUse"

    rec.wait("Instance 1 refused on the ownerless PodGroup", lambda: refused(1), timeout=120)
    rec.wait("Instance 2 refused on the other owner's PodGroup", lambda: refused(2), timeout=60)
    gang0 = {"llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"}

    def instance0_serving() -> bool:
        return gang0 <= {p["metadata"]["name"] for p in live_pods(cluster, namespace) if serving(p)}

    rec.wait("Instance 0 serving", instance0_serving, timeout=120)
    assert not [
        n
        for n in _names(cluster, namespace)
        if n.startswith(("llama-pool-engine-1-", "llama-pool-engine-2-"))
    ]
    ownerless = cluster.raw.get(f"{path}/llama-pool-engine-1")
    assert "ownerReferences" not in ownerless["metadata"]
    assert ownerless["spec"]["minMember"] == 5
    foreign = cluster.raw.get(f"{path}/llama-pool-engine-2")
    assert [r["uid"] for r in foreign["metadata"]["ownerReferences"]] == [ref["uid"]]
    assert foreign["spec"]["minMember"] == 5

    # Instance 0's group drifts by hand; a replica edit wakes a pass (PodGroups are not watched).
    cluster.raw.patch(
        f"{path}/llama-pool-engine-0",
        {
            "metadata": {"labels": {"stale": "true"}, "annotations": {"example.com/preserve": "yes"}},
            "spec": {"minMember": 99},
        },
    )
    cluster.kubectl("annotate", "-n", namespace, "inferencereplica", "llama-pool", "example.com/poke=1")

    def healed() -> bool:
        g = cluster.raw.get(f"{path}/llama-pool-engine-0")
        return g["spec"]["minMember"] == 2 and "stale" not in (g["metadata"].get("labels") or {})

    rec.wait("the drifted PodGroup patched back", healed, timeout=60)
    group = cluster.raw.get(f"{path}/llama-pool-engine-0")
    print("Instance 0's PodGroup after the pass:", group["metadata"].get("labels"), group["spec"])
    assert group["metadata"]["annotations"]["example.com/preserve"] == "yes"
    assert group["metadata"]["labels"]["ome.io/instance-index"] == "0"
    # Once in line, later passes leave it alone (no patch every pass).
    cluster.kubectl(
        "annotate", "-n", namespace, "inferencereplica", "llama-pool", "example.com/poke=2", "--overwrite"
    )
    time.sleep(3)
    again = cluster.raw.get(f"{path}/llama-pool-engine-0")
    assert again["metadata"]["resourceVersion"] == group["metadata"]["resourceVersion"]
