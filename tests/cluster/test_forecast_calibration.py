"""Calibration of the rollout forecast against the real thing: the same replica and change, rolled by the
reconciler on the test control plane with the fake kubelet's start-up delay and deletion delay equal to
the forecast's start-up and shutdown. The forecast's steps and peak extra pods must equal what the
cluster showed (its serving floor too), and its duration must be within 25% of the measured one.

What the cluster showed is sampled every 50 ms by a thread: every pod of the replica (terminating ones
included, as they still hold their GPUs), and the update operations in the replica's status (a step is a
status write that opens new ones). A step and a pod's life both last seconds, so polling sees them all.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import yaml
from helpers import REPO, apply, example_replica, pods, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_rollout import RUNTIME, namespaced_runtime, ready_on

from omereconcile.forecast import Forecast, forecast
from omerender.catalog import Catalog
from omerender.diff import diff_replicas
from omerender.models import InferenceReplica, parse_object
from testbed.testing import Cluster

# Seconds from a pod's start to Ready, in the fake kubelet and in the forecast: long enough that the
# reconciler's reaction time on a busy machine stays small beside it.
STARTUP = 12.0
SHUTDOWN = 1.0  # seconds from a pod's deletion until it is gone
INSTANCES = 3
V1, V2 = "docker.io/vllm/vllm-openai:v0.9.0.1", "docker.io/vllm/vllm-openai:v0.9.2"


class RollWatch:
    """Samples the replica's pods and status until stopped: peak pods, steps, fewest serving."""

    def __init__(self, cluster: Cluster, namespace: str, target: Callable[[], str | None]) -> None:
        self.cluster, self.namespace, self.target = cluster, namespace, target
        self.peak_pods = 0
        self.steps = 0
        self.floor: int | None = None
        self.seen_ops: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            items = pods(self.cluster, self.namespace)
            self.peak_pods = max(self.peak_pods, len(items))
            up = len({p["metadata"]["labels"]["ome.io/instance-index"] for p in items if serving(p)})
            self.floor = up if self.floor is None else min(self.floor, up)
            target = self.target()
            rows = (replica(self.cluster, self.namespace).get("status") or {}).get("instanceStatuses") or []
            new = {
                op["id"]
                for op in (r.get("operation") or {} for r in rows)
                if op.get("type") == "Update" and target and op.get("targetRevision") == target
            } - self.seen_ops
            if new:
                self.seen_ops |= new
                self.steps += 1
            time.sleep(0.05)

    def __enter__(self) -> RollWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@contextmanager
def kubelet_timing(cluster: Cluster) -> Iterator[None]:
    """The fake kubelet at the forecast's start-up and shutdown, restored for the session's other tests."""
    kubelet = cluster.kubelet
    saved = kubelet.ready_delay, kubelet.deletion_delay
    kubelet.ready_delay, kubelet.deletion_delay = STARTUP, SHUTDOWN
    try:
        yield
    finally:
        kubelet.ready_delay, kubelet.deletion_delay = saved


def _forecast(namespace: str, ir: dict[str, Any]) -> Forecast:
    catalog = [yaml.safe_load(p.read_text()) for p in sorted((REPO / "examples" / "catalog").glob("*.yaml"))]
    before_objs = [*catalog, namespaced_runtime(namespace, image=V1)]
    after_objs = [*catalog, namespaced_runtime(namespace, image=V2)]
    rep = parse_object(InferenceReplica, copy.deepcopy(ir))
    key = (namespace, rep.metadata.name)
    diffs = diff_replicas(
        {key: rep}, {key: rep}, Catalog.from_objects(before_objs), Catalog.from_objects(after_objs)
    )
    return forecast(
        diffs, {key: rep}, {key: rep}, after_objs, startup_seconds=STARTUP, shutdown_seconds=SHUTDOWN
    )


@pytest.mark.parametrize(
    "strategy",
    [
        {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 2}},
        {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}},
    ],
    ids=["surge-2", "recreate-1"],
)
def test_forecast_matches_the_roll_on_the_cluster(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, strategy: dict[str, Any]
) -> None:
    ir = example_replica(
        namespace,
        replicas=INSTANCES,
        runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"},
        lifecycle={"updateStrategy": strategy},
    )
    predicted = _forecast(namespace, ir)
    (fc,) = predicted.replicas

    with kubelet_timing(cluster):
        rec = reconcilers()
        apply(cluster, namespaced_runtime(namespace, image=V1))
        apply(cluster, ir)
        rec.wait("Ready on the first revision", lambda: ready_on(cluster, namespace), timeout=120)
        first = replica(cluster, namespace)["status"]["updateRevision"]

        def target() -> str | None:
            rev = (replica(cluster, namespace).get("status") or {}).get("updateRevision")
            return rev if rev != first else None

        with RollWatch(cluster, namespace, target) as watch:
            started = time.monotonic()
            apply(cluster, namespaced_runtime(namespace, image=V2))
            rec.wait(
                "the new revision rolled out",
                lambda: target() is not None and ready_on(cluster, namespace),
                timeout=300,
                interval=0.05,
            )
            measured = time.monotonic() - started

    real_peak = watch.peak_pods - INSTANCES
    figures = (
        f"{strategy['type']}: forecast steps {fc.steps}, peak +{fc.peak_extra_pods}, floor {fc.floor}, "
        f"{fc.duration:.1f}s | cluster steps {watch.steps}, peak +{real_peak}, floor {watch.floor}, "
        f"{measured:.1f}s"
    )
    print(figures)
    assert fc.completes, figures
    assert fc.replaced == INSTANCES, figures
    assert fc.steps == watch.steps, figures
    assert fc.peak_extra_pods == real_peak, figures
    assert fc.floor == watch.floor, figures
    assert abs(fc.duration - measured) <= 0.25 * measured, figures
