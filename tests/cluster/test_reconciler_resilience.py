"""The reconciler process under faults: SIGKILL mid-rollout and a restart; a watch resumed from a compacted
resourceVersion (410) handled by relisting."""

from __future__ import annotations

import collections
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from helpers import IREP, apply, example_replica, live_pods, pods, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_rollout import RUNTIME, namespaced_runtime, ready_on

from testbed.testing import Cluster


class PodLedger:
    """Watches the namespace's pods and counts creations per name; also the lowest serving count."""

    def __init__(self, cluster: Cluster, ns: str) -> None:
        self.cluster, self.ns = cluster, ns
        self.added: collections.Counter[str] = collections.Counter()
        self.min_serving: int | None = None
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._watch, daemon=True),
            threading.Thread(target=self._poll, daemon=True),
        ]

    def _watch(self) -> None:
        path = f"/api/v1/namespaces/{self.ns}/pods"
        rv = self.cluster.raw.get(path)["metadata"]["resourceVersion"]
        while not self._stop.is_set():
            for ev in self.cluster.raw.watch(path, resource_version=rv, timeout_seconds=2):
                if ev.get("type") == "ADDED":
                    self.added[ev["object"]["metadata"]["name"]] += 1
                if ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    rv = ev["object"]["metadata"]["resourceVersion"]

    def _poll(self) -> None:
        while not self._stop.is_set():
            items = pods(self.cluster, self.ns)
            n = len({p["metadata"]["labels"]["ome.io/instance-index"] for p in items if serving(p)})
            self.min_serving = n if self.min_serving is None else min(self.min_serving, n)
            time.sleep(0.05)

    def __enter__(self) -> PodLedger:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(5)


def test_sigkill_mid_rollout_then_restart_finishes_with_no_lost_or_duplicate_pod(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, namespaced_runtime(namespace))
    spec: dict[str, Any] = {
        "replicas": 3,
        "minReadySeconds": 2,
        "runtimeRef": {"name": RUNTIME, "kind": "ServingRuntime"},
        "lifecycle": {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}},
    }
    apply(cluster, example_replica(namespace, **spec))
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)

    with PodLedger(cluster, namespace) as ledger:
        apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.2"))

        def mid_rollout() -> bool:
            st = replica(cluster, namespace)["status"]
            done = sum(
                1
                for r in st.get("instanceStatuses") or []
                if r.get("activeOrdinal") == 1 and not r.get("operation")
            )
            in_flight = any(r.get("operation") for r in st.get("instanceStatuses") or [])
            return done >= 1 and in_flight

        rec.wait("one Instance rolled and the next in flight", mid_rollout, timeout=60, interval=0.05)
        rec.kill()
        assert not rec.alive()
        killed_at = {p["metadata"]["name"] for p in live_pods(cluster, namespace)}
        time.sleep(1)
        assert {p["metadata"]["name"] for p in live_pods(cluster, namespace)} == killed_at  # nobody acts
        rec2 = reconcilers()
        rec2.wait(
            "the rollout to finish after the restart",
            lambda: (
                ready_on(cluster, namespace)
                and replica(cluster, namespace)["status"]["updateRevision"].rsplit("-", 1)[-1]
                == {
                    p["metadata"]["labels"]["ome.io/revision-hash"] for p in live_pods(cluster, namespace)
                }.pop()
            ),
            timeout=90,
        )
    live = [p["metadata"]["name"] for p in live_pods(cluster, namespace)]
    assert live == [f"llama-pool-engine-{i}-default-1" for i in range(3)]
    # Every new pod was created exactly once, across both processes.
    assert {n: c for n, c in ledger.added.items() if c != 1} == {}
    assert set(ledger.added) == set(live)
    assert ledger.min_serving is not None
    assert ledger.min_serving >= 3, f"serving fell to {ledger.min_serving}"
    rows = replica(cluster, namespace)["status"]["instanceStatuses"]
    assert [(r["index"], r["incarnation"], r["phase"]) for r in rows] == [(i, 1, "Ready") for i in range(3)]


def test_watch_resumed_from_a_compacted_resource_version_relists_on_410(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, example_replica(namespace))
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    before = sum(
        1 for r in rec.lines() if r.get("msg") == "relisting" and r.get("resource") == "inferencereplicas"
    )

    # Freeze the process past its watch timeout (20 s) and the API server's compaction window: when it
    # resumes, its watches restart from resourceVersions etcd no longer has and get 410 Gone.
    os.kill(rec.pid, signal.SIGSTOP)
    try:
        time.sleep(25)
        # A change made while the reconciler cannot see it: only a relist can find it.
        cluster.raw.patch(f"{IREP.format(ns=namespace)}/llama-pool", {"spec": {"replicas": 2}})
    finally:
        os.kill(rec.pid, signal.SIGCONT)

    def relisted() -> bool:
        return (
            any(
                r.get("msg") == "relisting"
                and r.get("resource") == "inferencereplicas"
                and r.get("reason") == "gone"
                for r in rec.lines()[-400:]
            )
            and sum(
                1
                for r in rec.lines()
                if r.get("msg") == "relisting" and r.get("resource") == "inferencereplicas"
            )
            > before
        )

    rec.wait("a relist of inferencereplicas after 410 Gone", relisted, timeout=30)
    rec.wait(
        "the scale-up made while frozen",
        lambda: (
            [p["metadata"]["name"] for p in live_pods(cluster, namespace) if serving(p)]
            == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"]
        ),
        timeout=60,
    )
