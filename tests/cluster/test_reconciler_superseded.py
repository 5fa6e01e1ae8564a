"""A target that moves during a surge, on the real control plane: the two ways a rollout could drop
traffic (deleting a serving replacement without taking it out of rotation, and deleting an Instance's
only serving pod) do not happen; the serving floor is polled throughout."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers import GATE, apply, condition, events, example_replica, live_pods, pods, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_rollout import RUNTIME, ServingMonitor, namespaced_runtime, ready_on

from testbed.testing import Cluster

SOURCE = "llama-pool-engine-0-default-0"
REPLACEMENT = "llama-pool-engine-0-default-1"
V1, V2, V3 = (f"docker.io/vllm/vllm-openai:{t}" for t in ("v0.9.0.1", "v0.9.2", "v0.9.3"))
# The window each test acts in: a pod in rotation but not yet Available (minReadySeconds). The test
# sees the pod serving (polled every 0.25 s) and applies the next runtime; the reconciler's pass on it
# must land inside the window. Measured under two busy loops on the shared 2 cores: 1.2-2.1 s, so 15 s
# leaves a sevenfold margin. Each roll waits the window out once or twice: 30 s made these tests 62 s.
MIN_READY = 15
# The source-gone test's window spans a reconciler stop and a fresh process's start-up (up to 15 s
# measured under load): it keeps the 30 s it had.
MIN_READY_ACROSS_A_RESTART = 30


class UnroutedFirstMonitor(ServingMonitor):
    """Also records every pod seen terminating while its serving gate was still True: a delete that
    skipped taking the pod out of rotation first."""

    def __init__(self, cluster: Cluster, namespace: str, ignore: frozenset[str] = frozenset()) -> None:
        super().__init__(cluster, namespace)
        self.ignore = ignore  # uids the test deleted itself
        self.deleted_in_rotation: set[str] = set()

    def _run(self) -> None:
        while not self._stop.is_set():
            items = pods(self.cluster, self.namespace)
            for p in items:
                meta = p["metadata"]
                in_rotation = condition(p, GATE).get("status") == "True"
                if meta.get("deletionTimestamp") and in_rotation and meta["uid"] not in self.ignore:
                    self.deleted_in_rotation.add(meta["name"])
            indices = {p["metadata"]["labels"]["ome.io/instance-index"] for p in items if serving(p)}
            self.names.update(p["metadata"]["name"] for p in items)
            self.minimum = len(indices) if self.minimum is None else min(self.minimum, len(indices))
            self.samples += 1
            self._stop.wait(0.05)


def _row(cluster: Cluster, ns: str) -> dict[str, Any]:
    rows = (replica(cluster, ns).get("status") or {}).get("instanceStatuses") or [{}]
    return dict(rows[0])


def _surge_serving_at_step_surge(
    cluster: Cluster, rec: Reconciler, ns: str, min_ready: int = MIN_READY
) -> str:
    """v1 Ready, then v2 rolling until its replacement is in rotation but, held by ``min_ready``
    (minReadySeconds), still at step Surge beside the source. Returns the v2 revision."""
    apply(cluster, namespaced_runtime(ns, image=V1))
    apply(
        cluster,
        example_replica(
            ns, minReadySeconds=min_ready, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}
        ),
    )
    rec.wait("Ready on v1", lambda: ready_on(cluster, ns), timeout=90)
    apply(cluster, namespaced_runtime(ns, image=V2))

    def replacement_serving() -> dict[str, Any] | None:
        by_name = {p["metadata"]["name"]: p for p in live_pods(cluster, ns)}
        new = by_name.get(REPLACEMENT)
        op = _row(cluster, ns).get("operation") or {}
        return op if new is not None and serving(new) and op.get("step") == "Surge" else None

    op = rec.wait("the v2 replacement in rotation at step Surge", replacement_serving, timeout=60)
    return str(op["targetRevision"])


def test_superseded_surge_takes_its_serving_replacement_out_of_rotation_before_deleting_it(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    v2 = _surge_serving_at_step_surge(cluster, rec, namespace)
    with UnroutedFirstMonitor(cluster, namespace) as mon:
        apply(cluster, namespaced_runtime(namespace, image=V3))
        rec.wait(
            "rolled to v3",
            lambda: (
                ready_on(cluster, namespace)
                and [p["spec"]["containers"][0]["image"] for p in live_pods(cluster, namespace)] == [V3]
            ),
            timeout=150,
        )
    assert mon.samples > 10
    assert mon.minimum == 1, f"serving fell to {mon.minimum} (floor 1)\n{rec.tail()}"
    assert mon.deleted_in_rotation == set(), rec.tail()
    abandoned = [e["message"] for e in events(cluster, namespace) if e["reason"] == "SurgeAbandoned"]
    v3 = replica(cluster, namespace)["status"]["updateRevision"]
    assert abandoned == [
        f"OMENative component=engine instance=0 abandoned superseded surge to {v2}; re-surging toward {v3}"
    ]


def test_superseded_surge_whose_source_is_gone_keeps_and_promotes_the_only_serving_pod(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    v2 = _surge_serving_at_step_surge(cluster, rec, namespace, MIN_READY_ACROSS_A_RESTART)
    # With the reconciler stopped, the source is lost and the spec moves on: the next reconciler
    # finds a superseded surge whose Ready replacement is all that stands.
    rec.stop()
    (source,) = [p for p in live_pods(cluster, namespace) if p["metadata"]["name"] == SOURCE]
    (kept,) = [p for p in live_pods(cluster, namespace) if p["metadata"]["name"] == REPLACEMENT]
    cluster.kubectl("delete", "pod", SOURCE, "-n", namespace, "--wait=true")
    apply(cluster, namespaced_runtime(namespace, image=V3))
    with UnroutedFirstMonitor(cluster, namespace, ignore=frozenset({source["metadata"]["uid"]})) as mon:
        rec = reconcilers()
        promoted = rec.wait(
            "the replacement promoted on its own revision",
            lambda: (lambda r: r if r.get("runningRevision") == v2 else None)(_row(cluster, namespace)),
            timeout=60,
        )
        assert promoted["activeOrdinal"] == 1
        assert any(p["metadata"]["uid"] == kept["metadata"]["uid"] for p in live_pods(cluster, namespace)), (
            "the only serving pod was deleted"
        )
        rec.wait(
            "rolled on to v3",
            lambda: (
                ready_on(cluster, namespace)
                and [p["spec"]["containers"][0]["image"] for p in live_pods(cluster, namespace)] == [V3]
            ),
            timeout=150,
        )
    assert mon.samples > 10
    assert mon.minimum == 1, f"serving fell to {mon.minimum} (floor 1)\n{rec.tail()}"
    assert mon.deleted_in_rotation == set(), rec.tail()
    reasons = [e["reason"] for e in events(cluster, namespace)]
    assert "SurgeAbandoned" not in reasons
    completed = [e["message"] for e in events(cluster, namespace) if e["reason"] == "RecreateUpdateCompleted"]
    assert (
        f"OMENative component=engine instance=0 surge to revision {v2} complete (activeOrdinal=1)"
        in completed
    )


def _create_in_rotation_not_yet_available(cluster: Cluster, rec: Reconciler, ns: str) -> str:
    """A new replica whose first pod is in rotation but held short of Available by minReadySeconds,
    so its Create attempt is still open. Returns the revision the attempt is pinned to."""
    apply(cluster, namespaced_runtime(ns, image=V1))
    apply(
        cluster,
        example_replica(
            ns, minReadySeconds=MIN_READY, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}
        ),
    )

    def creating_in_rotation() -> dict[str, Any] | None:
        by_name = {p["metadata"]["name"]: p for p in live_pods(cluster, ns)}
        pod = by_name.get(SOURCE)
        op = _row(cluster, ns).get("operation") or {}
        return op if pod is not None and serving(pod) and op.get("type") == "Create" else None

    op = rec.wait("the first pod in rotation with its Create still open", creating_in_rotation, timeout=60)
    return str(op["targetRevision"])


def test_superseded_create_one_promote_away_finishes_then_surges_without_dropping_traffic(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    v1 = _create_in_rotation_not_yet_available(cluster, rec, namespace)
    with UnroutedFirstMonitor(cluster, namespace) as mon:
        apply(cluster, namespaced_runtime(namespace, image=V2))
        rec.wait(
            "the attempt finished on its own revision",
            lambda: _row(cluster, namespace).get("runningRevision") == v1,
            timeout=90,
        )
        rec.wait(
            "rolled on to v2 by a surge",
            lambda: (
                ready_on(cluster, namespace)
                and [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == [REPLACEMENT]
            ),
            timeout=150,
        )
    assert mon.samples > 10
    assert mon.minimum == 1, f"serving fell to {mon.minimum} (floor 1)\n{rec.tail()}"
    assert mon.deleted_in_rotation == set(), rec.tail()
    assert "CreateAttemptSuperseded" not in [e["reason"] for e in events(cluster, namespace)]


def test_superseded_create_takes_a_gate_true_pod_out_of_rotation_before_deleting_it(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    v1 = _create_in_rotation_not_yet_available(cluster, rec, namespace)

    def on_v1(pod: dict[str, Any]) -> bool:
        return bool(pod["spec"]["containers"][0]["image"] == V1)

    # The v1 container stops being ready while its gate is still True: not one promote away.
    cluster.kubelet.never_ready(on_v1, namespace)
    try:
        rec.wait(
            "the v1 pod not ContainersReady",
            lambda: all(
                condition(p, "ContainersReady").get("status") != "True" for p in live_pods(cluster, namespace)
            ),
            timeout=30,
        )
        with UnroutedFirstMonitor(cluster, namespace) as mon:
            apply(cluster, namespaced_runtime(namespace, image=V2))
            rec.wait(
                "ready on v2",
                lambda: (
                    ready_on(cluster, namespace)
                    and [p["spec"]["containers"][0]["image"] for p in live_pods(cluster, namespace)] == [V2]
                ),
                timeout=150,
            )
    finally:
        cluster.kubelet.clear_behaviors()
    assert mon.samples > 10
    assert mon.deleted_in_rotation == set(), rec.tail()
    v2 = replica(cluster, namespace)["status"]["updateRevision"]
    retired = [e["message"] for e in events(cluster, namespace) if e["reason"] == "CreateAttemptSuperseded"]
    assert retired == [
        f"OMENative component=engine instance=0 retired the Create attempt pinned to {v1} and restarted it at {v2}"
    ]
