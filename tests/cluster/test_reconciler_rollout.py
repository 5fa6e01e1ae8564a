"""Rollouts on the real control plane: a runtime image change rolls with SurgeThenDrain and the serving
count never drops below the floor."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Any

import yaml
from helpers import (
    IREP,
    REPO,
    StatusWatch,
    apply,
    condition,
    events,
    example_replica,
    live_pods,
    pods,
    replica,
    serving,
)
from reconciler_proc import Reconciler

from testbed.testing import Cluster

RUNTIME = "vllm-llama-local"
URL_ENV = {"name": "URL", "value": "http://models.example/?a=1&b=<2>é"}


def namespaced_runtime(namespace: str, image: str = "docker.io/vllm/vllm-openai:v0.9.0.1") -> dict[str, Any]:
    """The example ClusterServingRuntime as a ServingRuntime of the test namespace (tests may change it)."""
    doc: dict[str, Any] = yaml.safe_load(
        (REPO / "examples" / "catalog" / "vllm-llama-3-2-1b-instruct.yaml").read_text()
    )
    doc["kind"] = "ServingRuntime"
    doc["metadata"] = {"name": RUNTIME, "namespace": namespace}
    doc["spec"]["engineConfig"]["runner"]["image"] = image
    return doc


class ServingMonitor:
    """Polls the pods and records the lowest number of Instances serving: ``size`` pods of the Instance
    Ready with the gate True (a gang of ``size`` serves only whole)."""

    def __init__(self, cluster: Cluster, namespace: str, size: int = 1) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.size = size
        self.minimum: int | None = None
        self.samples = 0
        self.names: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            items = pods(self.cluster, self.namespace)
            per = Counter(p["metadata"]["labels"]["ome.io/instance-index"] for p in items if serving(p))
            whole = sum(1 for n in per.values() if n >= self.size)
            self.names.update(p["metadata"]["name"] for p in items)
            self.minimum = whole if self.minimum is None else min(self.minimum, whole)
            self.samples += 1
            time.sleep(0.05)

    def __enter__(self) -> ServingMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def ready_on(cluster: Cluster, ns: str, revision: str | None = None) -> bool:
    obj = replica(cluster, ns)
    st = obj.get("status") or {}
    ok = condition(obj, "Ready").get("status") == "True" and st.get("currentRevision") == st.get(
        "updateRevision"
    )
    ok = ok and all(not r.get("operation") for r in st.get("instanceStatuses") or [])
    return ok and (revision is None or st.get("updateRevision") == revision)


def test_runtime_image_change_rolls_instance_0_to_ordinal_1_without_dropping_below_the_floor(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, namespaced_runtime(namespace))
    apply(
        cluster,
        example_replica(namespace, replicas=2, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}),
    )
    rec.wait("Ready on the first revision", lambda: ready_on(cluster, namespace), timeout=60)
    first = replica(cluster, namespace)["status"]["updateRevision"]
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == [
        "llama-pool-engine-0-default-0",
        "llama-pool-engine-1-default-0",
    ]

    with ServingMonitor(cluster, namespace) as mon:
        # A live change of the runtime: nothing on the replica changes, the render does.
        apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.2"))
        rec.wait(
            "a new revision to be rolled out",
            lambda: (
                replica(cluster, namespace)["status"].get("updateRevision") != first
                and ready_on(cluster, namespace)
            ),
            timeout=120,
        )
    # The monitor must have watched the roll itself, not just its ends: it saw both the first pods and
    # their replacements (a count of samples would depend on how fast the machine is).
    assert mon.samples >= 2
    assert {"llama-pool-engine-0-default-0", "llama-pool-engine-0-default-1"} <= mon.names, mon.names
    assert mon.minimum is not None
    assert mon.minimum >= 2, f"serving fell to {mon.minimum} (floor 2)\n{rec.tail()}"
    live = live_pods(cluster, namespace)
    assert [p["metadata"]["name"] for p in live] == [
        "llama-pool-engine-0-default-1",
        "llama-pool-engine-1-default-1",
    ]
    for p in live:
        assert p["spec"]["containers"][0]["image"] == "docker.io/vllm/vllm-openai:v0.9.2"
        assert p["metadata"]["labels"]["ome.io/instance-incarnation"] == "1"  # SurgeThenDrain keeps it
    st = replica(cluster, namespace)["status"]
    assert {r["activeOrdinal"] for r in st["instanceStatuses"]} == {1}
    assert mon.names >= {"llama-pool-engine-0-default-0", "llama-pool-engine-0-default-1"}
    revisions = cluster.raw.get(f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions")["items"]
    assert sorted(r["metadata"]["name"] for r in revisions) == sorted([first, st["updateRevision"]])


def _patch(cluster: Cluster, ns: str, spec: dict[str, Any]) -> None:
    cluster.raw.patch(f"{IREP.format(ns=ns)}/llama-pool", {"spec": spec})


def _images(cluster: Cluster, ns: str) -> dict[str, str]:
    return {
        p["metadata"]["labels"]["ome.io/instance-index"]: p["spec"]["containers"][0]["image"]
        for p in live_pods(cluster, ns)
    }


def test_pause_partition_and_rollback_hold_and_release(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    v1, v2 = "docker.io/vllm/vllm-openai:v0.9.0.1", "docker.io/vllm/vllm-openai:v0.9.2"
    apply(cluster, namespaced_runtime(namespace, image=v1))
    apply(
        cluster,
        example_replica(namespace, replicas=2, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}),
    )
    rec.wait("Ready on v1", lambda: ready_on(cluster, namespace), timeout=60)
    first = replica(cluster, namespace)["status"]["updateRevision"]

    # Paused: a new revision is minted but nothing rolls.
    _patch(cluster, namespace, {"paused": True})
    apply(cluster, namespaced_runtime(namespace, image=v2))
    rec.wait("a new updateRevision", lambda: replica(cluster, namespace)["status"]["updateRevision"] != first)
    time.sleep(3)
    assert _images(cluster, namespace) == {"0": v1, "1": v1}
    assert replica(cluster, namespace)["status"]["currentRevision"] == first

    # Partition 1 and unpaused: Instance 1 rolls, Instance 0 is held; Ready says Staged.
    _patch(cluster, namespace, {"paused": False, "pacing": {"partition": 1}})

    def staged() -> dict[str, Any] | None:
        cond = condition(replica(cluster, namespace), "Ready")
        return cond if cond.get("reason") == "Staged" else None

    cond = rec.wait("Ready=True Staged", staged, timeout=60)
    assert cond["status"] == "True"
    second = replica(cluster, namespace)["status"]["updateRevision"]
    assert (
        cond["message"] == f"Staged at partition 1: 1/2 Instances on {second}, 1 held on the prior revision"
    )
    assert _images(cluster, namespace) == {"0": v1, "1": v2}

    # Partition released: Instance 0 follows.
    _patch(cluster, namespace, {"pacing": {"partition": 0}})
    rec.wait(
        "both on v2",
        lambda: ready_on(cluster, namespace, second) and _images(cluster, namespace) == {"0": v2, "1": v2},
        timeout=60,
    )

    # Roll back to the first revision by name: every Instance returns to v1, rebuilt from the stored revision.
    # Go publishes against the spec's revision while the pin stands (inferencereplica/reconciler.go hands
    # specTarget to the status writers): updateRevision stays `second`, the currentRevision that named it
    # is withdrawn once a row runs `first` (CurrentRevisionFor), and Ready reads a rollout in flight. The
    # rows say when the roll back is done. Every status the watch shows is checked.
    with StatusWatch(cluster, namespace) as watch:
        _patch(cluster, namespace, {"pacing": {"partition": 0, "rollbackToRevision": first}})

        def rolled_back() -> bool:
            rows = replica(cluster, namespace)["status"].get("instanceStatuses") or []
            return len(rows) == 2 and all(
                r["phase"] == "Ready" and r.get("runningRevision") == first and not r.get("operation")
                for r in rows
            )

        rec.wait(
            "both back on v1", lambda: _images(cluster, namespace) == {"0": v1, "1": v1} and rolled_back()
        )
        time.sleep(1)
    assert any(r.get("runningRevision") == first for st in watch.seen for r in st["instanceStatuses"])
    for st in watch.seen:
        assert st["updateRevision"] == second
        if any(r.get("runningRevision") == first for r in st["instanceStatuses"]):
            ready = next(c for c in st["conditions"] if c["type"] == "Ready")
            assert "currentRevision" not in st
            # status.go @ 8263d0c7 recordCurrentRevisionWithdrawal: the withdrawal is on record.
            withdrawn = next(c for c in st["conditions"] if c["type"] == "CurrentRevisionWithdrawn")
            assert (withdrawn["status"], withdrawn["reason"]) == ("True", "InstanceOffRevision")
            assert (ready["status"], ready["reason"], ready["message"]) == (
                "Unknown",
                "RolloutInProgress",
                f"Rolling out {second} ({st['updatedReadyReplicas']}/2 Instances on target)",
            )
    final = replica(cluster, namespace)["status"]
    assert (final["updatedReplicas"], final["updatedReadyReplicas"], final["readyReplicas"]) == (0, 0, 2)
    for p in live_pods(cluster, namespace):
        assert p["metadata"]["labels"]["ome.io/revision-hash"] == first.rsplit("-", 1)[-1]


def test_min_ready_seconds_paces_the_drain(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    min_ready = 5
    apply(cluster, namespaced_runtime(namespace))
    apply(
        cluster,
        example_replica(
            namespace, minReadySeconds=min_ready, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}
        ),
    )
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    old_name = "llama-pool-engine-0-default-0"
    t_change = time.monotonic()
    apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.2"))
    new_ready_at: float | None = None
    old_gate_off_at: float | None = None
    ready_since = gate_off_since = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and old_gate_off_at is None:
        by_name = {p["metadata"]["name"]: p for p in pods(cluster, namespace)}
        new = by_name.get("llama-pool-engine-0-default-1")
        if new_ready_at is None and new is not None and serving(new):
            new_ready_at = time.monotonic()
            ready_since = condition(new, "Ready").get("lastTransitionTime") or ""
        old = by_name.get(old_name)
        if old is None or condition(old, "ome.io/serving").get("status") == "False":
            old_gate_off_at = time.monotonic()
            gate_off_since = (
                "" if old is None else condition(old, "ome.io/serving").get("lastTransitionTime") or ""
            )
        time.sleep(0.1)
    assert new_ready_at is not None, rec.tail()
    assert old_gate_off_at is not None, rec.tail()
    # The old pod leaves rotation only once the new one has been Ready for minReadySeconds, and not much
    # later: the reconciler requeues at that instant. Measured on the conditions' own timestamps (whole
    # seconds, the clock the reconciler judges by) when both were seen; else on this poll's clock, which
    # sees either change up to a poll late under load (allow a second and a half).
    if ready_since and gate_off_since:
        waited = (parse_time(gate_off_since) - parse_time(ready_since)).total_seconds()
        low = float(min_ready)
    else:
        waited, low = old_gate_off_at - new_ready_at, min_ready - 1.5
    assert low <= waited <= min_ready + 4.0, f"drained {waited:.1f}s after the new pod was Ready"
    assert old_gate_off_at - t_change < 30
    rec.wait("converged", lambda: ready_on(cluster, namespace), timeout=30)


def test_a_change_of_an_ancestor_runtime_re_renders_and_rolls_the_replica(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()

    def runtime(name: str, engine: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": namespace}
        if parent:
            meta["annotations"] = {"ome.io/inherit-from": parent}
        return {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ServingRuntime",
            "metadata": meta,
            "spec": {"engineConfig": engine},
        }

    apply(cluster, runtime("base", {"runner": {"name": "ome-container", "image": "engine:v1"}}))
    apply(
        cluster,
        runtime(
            "child",
            # Characters Go and Python escape differently must not look like a revision collision.
            {"runner": {"name": "ome-container", "env": [{"name": "LEVEL", "value": "2"}, URL_ENV]}},
            "base",
        ),
    )
    obj = example_replica(namespace, runtimeRef={"name": "child", "kind": "ServingRuntime"})
    del obj["spec"]["modelRef"]
    apply(cluster, obj)
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    (pod,) = live_pods(cluster, namespace)
    assert pod["spec"]["containers"][0]["image"] == "engine:v1"
    assert {"name": "LEVEL", "value": "2"} in pod["spec"]["containers"][0]["env"]
    assert URL_ENV in pod["spec"]["containers"][0]["env"]
    time.sleep(1.0)  # a few more passes over the stored revision
    st = replica(cluster, namespace)["status"]
    assert not st.get("collisionCount"), st
    revisions = cluster.raw.get(f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions")["items"]
    assert [r["metadata"]["name"] for r in revisions] == [st["updateRevision"]]

    # Only the parent changes; the replica names the child.
    apply(cluster, runtime("base", {"runner": {"name": "ome-container", "image": "engine:v2"}}))
    rec.wait(
        "the replica rolled to the parent's new image",
        lambda: (
            [p["spec"]["containers"][0]["image"] for p in live_pods(cluster, namespace)] == ["engine:v2"]
            and ready_on(cluster, namespace)
        ),
        timeout=60,
    )
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == ["llama-pool-engine-0-default-1"]


def test_a_crash_looping_surge_fails_the_instance_keeps_the_old_pod_serving_and_a_fix_rolls_on(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, namespaced_runtime(namespace))
    apply(cluster, example_replica(namespace, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}))
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    surge = "llama-pool-engine-0-default-1"
    cluster.kubelet.crash_loop(surge, namespace)
    try:
        with ServingMonitor(cluster, namespace) as mon:
            apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:broken"))

            def failed() -> dict[str, Any] | None:
                rows = replica(cluster, namespace)["status"].get("instanceStatuses") or []
                return rows[0] if rows and rows[0].get("phase") == "Failed" else None

            row = rec.wait("Instance 0 Failed", failed, timeout=60)
            assert row["lastFailure"]["reason"] == "CrashLoopBackOff"
            obj = replica(cluster, namespace)
            assert condition(obj, "Ready")["reason"] == "InstanceFailed"
            assert condition(obj, "RolloutStalled")["status"] == "True"
            warnings = rec.wait(
                "an InstanceFailed Warning",
                lambda: [e for e in events(cluster, namespace) if e["reason"] == "InstanceFailed"],
            )
            # escalation/disposition.go: a crash loop is branch 3, which blames no pod.
            assert warnings[0]["message"].startswith(
                f"InferenceReplica {namespace}/llama-pool component=engine instance=0 escalated to "
                'Phase=Failed (pod=""): CrashLoopBackOff: attempt disposed terminal (no workload-caused '
                "evidence, relocation unavailable)"
            )
            # The old pod never left rotation.
            assert [p["metadata"]["name"] for p in live_pods(cluster, namespace) if serving(p)] == [
                "llama-pool-engine-0-default-0"
            ]
        assert mon.minimum == 1
    finally:
        cluster.kubelet.heal(surge, namespace)
    # A corrected revision rolls with no manual step.
    apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.3"))
    rec.wait(
        "the fixed revision rolled",
        lambda: (
            [p["spec"]["containers"][0]["image"] for p in live_pods(cluster, namespace)]
            == ["docker.io/vllm/vllm-openai:v0.9.3"]
            and ready_on(cluster, namespace)
        ),
        timeout=90,
    )


def parse_time(text: str) -> datetime:
    """An RFC 3339 timestamp of the API (``2026-12-06T20:00:00Z``)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
