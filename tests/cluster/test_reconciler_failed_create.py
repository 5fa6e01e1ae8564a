"""A first create that never becomes ready, on the real control plane (issue 37): the attempt ends at its
deadline with the pod still standing, and the retry is the update's recreate, as OME's newest Go routes
such a row (ome-projects/ome ``workload/ops/update.go`` @ 58a57f25 ``evaluateUpdateTriggerPods``: an
unhealthy pod set on the target "takes the ordinary roll"; ``SurgeHasNoSource``: an Instance never
promoted has no source a surge could keep, so the roll rebuilds it in place)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conftest import CONFIG_NAME, OME_NAMESPACE
from helpers import apply, events, example_replica, live_pods, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster

POD = "llama-pool-engine-0-default-0"
CONFIG = f"/api/v1/namespaces/{OME_NAMESPACE}/configmaps/{CONFIG_NAME}"


def _row(cluster: Cluster, namespace: str) -> dict[str, Any]:
    rows = replica(cluster, namespace).get("status", {}).get("instanceStatuses") or [{}]
    return dict(rows[0])


def test_a_first_create_that_never_becomes_ready_is_retried_by_a_recreate(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    """The pod runs but never becomes ready, so the Create's deadline disposes the row ``Failed`` (no
    running revision, ``lastFailure`` ContainersNotReady, the pod left standing) and the revision's
    retry block backs off. The retry is an Update recreate: Normal
    ``RecreateUpdateStarted`` naming no running revision, the row at incarnation 2, the unready pod
    taken out of rotation and deleted, and its successor (healed) serving at incarnation 2. Before,
    the retry was a fresh Create (``Recycle``) at incarnation 1, with no ``RecreateUpdateStarted``."""
    original = cluster.raw.get(CONFIG)["data"]["lifecycle"]
    lifecycle = json.loads(original)
    lifecycle["instanceReadyTimeout"] = "10s"
    cluster.raw.patch(CONFIG, {"data": {"lifecycle": json.dumps(lifecycle)}})
    try:
        rec = reconcilers()
        cluster.kubelet.never_ready(POD, namespace)
        apply(cluster, example_replica(namespace, replicas=1))
        first = rec.wait("the first pod", lambda: next(iter(live_pods(cluster, namespace)), None))
        uid0 = first["metadata"]["uid"]
        # The Failed row waits out the revision's Backoff (a minute under the suite's retry policy): the
        # retry is read as the first attempt carrying the failure.
        retry = rec.wait(
            "the retry opened after the deadline",
            lambda: (r := _row(cluster, namespace)).get("lastFailure") and r.get("operation") and r,
            timeout=120,
        )
        print("the retry:", retry)
        rev = replica(cluster, namespace)["status"]["updateRevision"]
        assert (retry["operation"]["type"], retry["incarnation"]) == ("Update", 2), retry
        assert not retry.get("runningRevision"), retry
        cluster.kubelet.heal(POD, namespace)
        rec.wait(
            "Ready on the revision",
            lambda: (
                (r := _row(cluster, namespace)).get("phase") == "Ready" and r.get("runningRevision") == rev
            ),
            timeout=90,
        )
        (pod,) = live_pods(cluster, namespace)
        assert pod["metadata"]["uid"] != uid0
        assert pod["metadata"]["labels"]["ome.io/instance-incarnation"] == "2"
        started = [e["message"] for e in events(cluster, namespace) if e["reason"] == "RecreateUpdateStarted"]
        assert started == [
            f"OMENative component=engine instance=0 recreate (revision  -> {rev}, incarnation=2)"
        ]
    finally:
        cluster.kubelet.clear_behaviors()
        cluster.raw.patch(CONFIG, {"data": {"lifecycle": original}})
