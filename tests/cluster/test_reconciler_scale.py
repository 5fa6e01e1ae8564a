"""Scale-down drains before it deletes; RecreatePod keeps the pod name, bumps the incarnation and holds the floor."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from helpers import GATE, IREP, apply, condition, example_replica, live_pods, ready_row, replica
from reconciler_proc import Reconciler
from test_reconciler_lifecycle import _watch_pods
from test_reconciler_rollout import RUNTIME, ServingMonitor, namespaced_runtime, ready_on

from testbed.testing import Cluster


def test_scale_down_drains_the_highest_index_before_deleting_it(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, example_replica(namespace, replicas=2))
    rec.wait(
        "2 2 2 2",
        lambda: ready_row(cluster, namespace) == ["llama-pool", "engine", "2", "2", "2", "2"],
        timeout=60,
    )
    seen: list[dict[str, Any]] = []
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_pods, args=(cluster, namespace, seen, stop), daemon=True)
    watcher.start()
    try:
        cluster.kubectl("scale", "inferencereplica", "llama-pool", "-n", namespace, "--replicas=1")
        rec.wait(
            "1 1 1 1",
            lambda: (
                ready_row(cluster, namespace) == ["llama-pool", "engine", "1", "1", "1", "1"]
                and [p["metadata"]["name"] for p in live_pods(cluster, namespace)]
                == ["llama-pool-engine-0-default-0"]
            ),
            timeout=60,
        )
        # The table reads the API directly; the watch delivers the same deletion a moment later, and
        # once stopped it may end its current 2 s window before that moment.
        rec.wait(
            "the watch to see a deletion",
            lambda: any(e["object"]["metadata"].get("deletionTimestamp") for e in list(seen)),
            timeout=10,
        )
    finally:
        stop.set()
        watcher.join(10)
    deleting = [e["object"] for e in seen if e["object"]["metadata"].get("deletionTimestamp")]
    assert {p["metadata"]["name"] for p in deleting} == {"llama-pool-engine-1-default-0"}
    gate = condition(deleting[0], GATE)
    # OME's multi-writer gate: NotReady with the JSON list of holds, here the scale-down's own.
    assert (gate["status"], gate["reason"]) == ("False", "NotReady")
    assert json.loads(gate["message"]) == [{"userAgent": "Delete-drain", "key": "1"}]
    served = [e["object"] for e in seen if e["object"]["metadata"]["name"] == "llama-pool-engine-0-default-0"]
    kept = condition(served[-1] if served else live_pods(cluster, namespace)[0], GATE)
    assert (kept["status"], kept["reason"], kept.get("message", "")) == ("True", "Serving", "")
    assert [r["index"] for r in replica(cluster, namespace)["status"]["instanceStatuses"]] == [0]


def test_recreate_pod_keeps_the_name_bumps_the_incarnation_and_holds_the_floor(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    apply(cluster, namespaced_runtime(namespace))
    strategy = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    apply(
        cluster,
        example_replica(
            namespace, replicas=2, lifecycle=strategy, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}
        ),
    )
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    first = {p["metadata"]["name"]: p["metadata"]["uid"] for p in live_pods(cluster, namespace)}
    with ServingMonitor(cluster, namespace) as mon:
        apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.2"))
        rec.wait(
            "rolled",
            lambda: (
                ready_on(cluster, namespace)
                and all(
                    p["spec"]["containers"][0]["image"].endswith("v0.9.2")
                    for p in live_pods(cluster, namespace)
                )
                and len(live_pods(cluster, namespace)) == 2
            ),
            timeout=90,
        )
    live = live_pods(cluster, namespace)
    assert [p["metadata"]["name"] for p in live] == list(first)  # same names: ordinal 0
    assert all(p["metadata"]["uid"] != first[p["metadata"]["name"]] for p in live)  # new pods
    assert [p["metadata"]["labels"]["ome.io/instance-incarnation"] for p in live] == ["2", "2"]
    assert mon.minimum is not None
    assert mon.minimum >= 1, f"serving fell to {mon.minimum} with maxUnavailable 1 of 2"
    path = f"{IREP.format(ns=namespace)}/llama-pool"
    assert [r["incarnation"] for r in cluster.raw.get(path)["status"]["instanceStatuses"]] == [2, 2]
