"""The in-place strategies on the real control plane: an ``InPlaceIfPossible`` image bump keeps every pod
(name, UID, node) and the serving floor; ``InPlaceOnly`` with an env change stalls with Go's Warning and
touches no pod. The fake kubelet restarts a container whose image changes, as a real one does."""

from __future__ import annotations

import time
from typing import Any

from helpers import IREP, events, live_pods, recorded, roll_pool, running_controller
from test_reconciler_rollout import ServingMonitor

from testbed.testing import Cluster, replica_settled, runners_replica, wait_for

NAME = "llama-pool"  # the ServingMonitor's prefix


def _lifecycle(type_: str) -> dict[str, Any]:
    return {"updateStrategy": {"type": type_, "rollingUpdate": {"maxUnavailable": 1}}}


def _settle(cluster: Cluster, namespace: str, type_: str, replicas: int) -> str:
    path = f"{IREP.format(ns=namespace)}/{NAME}"
    obj = runners_replica(NAME, namespace, "engine:v1", replicas=replicas, lifecycle=_lifecycle(type_))
    cluster.raw.post(IREP.format(ns=namespace), obj)
    wait_for("the replica settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
    return path


def _identity(cluster: Cluster, namespace: str) -> dict[str, tuple[str, str, str]]:
    return {
        p["metadata"]["name"]: (p["metadata"]["uid"], p["spec"]["nodeName"], p["metadata"]["resourceVersion"])
        for p in live_pods(cluster, namespace)
    }


def test_in_place_if_possible_image_bump_keeps_every_pod_and_the_floor(
    cluster: Cluster, namespace: str
) -> None:
    with running_controller(cluster, namespace):
        path = _settle(cluster, namespace, "InPlaceIfPossible", 3)
        before = _identity(cluster, namespace)
        with ServingMonitor(cluster, namespace) as mon:
            roll_pool(cluster, path, timeout=120)  # engine:v1 -> engine:v2, an image-only change
        after = _identity(cluster, namespace)
        assert {n: v[:2] for n, v in after.items()} == {n: v[:2] for n, v in before.items()}
        for p in live_pods(cluster, namespace):
            assert p["spec"]["containers"][0]["image"] == "engine:v2"
            assert p["status"]["containerStatuses"][0]["image"] == "engine:v2"
            assert p["status"]["containerStatuses"][0]["restartCount"] == 1  # the kubelet's restart
            assert p["metadata"]["labels"]["ome.io/instance-incarnation"] == "1"
            assert "internal.ome.io/in-place-image-transition" not in (p["metadata"].get("annotations") or {})
        assert mon.samples >= 2
        assert mon.minimum is not None
        assert mon.minimum >= 2, f"serving fell to {mon.minimum} (floor 2)"
        got = recorded(
            cluster, namespace, "InPlaceUpdateStarted", "InPlaceUpdateCompleted", name=NAME, times=3
        )
        reasons = [e["reason"] for e in got]
        assert reasons.count("InPlaceUpdateStarted") == 3
        assert reasons.count("InPlaceUpdateCompleted") == 3


def test_in_place_only_with_an_env_change_stalls_and_touches_no_pod(cluster: Cluster, namespace: str) -> None:
    with running_controller(cluster, namespace):
        path = _settle(cluster, namespace, "InPlaceOnly", 2)
        before = _identity(cluster, namespace)
        first = cluster.raw.get(path)["status"]["currentRevision"]
        obj = cluster.raw.get(path)
        obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["env"] = [
            {"name": "MODE", "value": "b"}
        ]
        cluster.raw.put(path, obj)
        warning = wait_for(
            "the InPlaceUpdateNotPossible Warning",
            lambda: next(
                (e for e in events(cluster, namespace, NAME) if e["reason"] == "InPlaceUpdateNotPossible"),
                None,
            ),
            timeout=60,
        )
        assert warning["type"] == "Warning"
        assert warning["message"] == (
            "OMENative component=engine instance=0 rejected update: "
            "InPlaceOnly strategy but diff exceeds container images"
        )
        time.sleep(3)  # several passes' worth: nothing may move
        st = cluster.raw.get(path)["status"]
        assert st["updateRevision"] != first
        assert st["currentRevision"] == first
        assert [(r["phase"], r["runningRevision"], r.get("operation")) for r in st["instanceStatuses"]] == [
            ("Ready", first, None)
        ] * 2
        assert _identity(cluster, namespace) == before  # same pods, not even a gate write


def _on_v2(pod: dict[str, Any]) -> bool:
    return any(ct.get("image") == "engine:v2" for ct in pod["spec"]["containers"])


def test_in_place_pod_evicted_under_the_patch_is_recycled_then_recreated(
    cluster: Cluster, namespace: str
) -> None:
    """OME's newest ``inPlaceUpdate`` (``ops/update_inplace.go``, ``recycleTerminalTargets`` then
    ``StampRecreateFromInPlace``): a pod evicted while its in-place patch converges is recycled first
    (deleted, Warning ``TerminalPodRecycled``, the dead pod on ``lastFailure``) with the row still at
    step InPlace and incarnation 1; only once it is gone does the roll re-resolve to a recreate, within
    the same attempt (its id kept), and the replacement comes up at incarnation 2. The v2 image is
    never ready here, so the patch cannot finish before the eviction."""
    cluster.kubelet.never_ready(_on_v2)
    try:
        with running_controller(cluster, namespace):
            path = _settle(cluster, namespace, "InPlaceIfPossible", 1)
            obj = cluster.raw.get(path)
            obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
            cluster.raw.put(path, obj)
            (pod,) = wait_for(
                "the pod patched in place to engine:v2",
                lambda: [p for p in live_pods(cluster, namespace) if _on_v2(p)] or None,
                timeout=60,
            )
            row = cluster.raw.get(path)["status"]["instanceStatuses"][0]
            assert (row["operation"]["step"], row["incarnation"]) == ("InPlace", 1)
            attempt = row["operation"]["id"]
            name = pod["metadata"]["name"]
            cluster.raw.patch(
                f"/api/v1/namespaces/{namespace}/pods/{name}/status",
                {
                    "status": {
                        "phase": "Failed",
                        "reason": "Evicted",
                        "message": "The node was low on memory.",
                    }
                },
                content_type="application/merge-patch+json",
            )
            recreated = wait_for(
                "the replacement at incarnation 2",
                lambda: next(
                    (
                        p
                        for p in live_pods(cluster, namespace)
                        if p["metadata"]["labels"]["ome.io/instance-incarnation"] == "2"
                    ),
                    None,
                ),
                timeout=60,
            )
            assert recreated["metadata"]["uid"] != pod["metadata"]["uid"]
            row = cluster.raw.get(path)["status"]["instanceStatuses"][0]
            assert (row["incarnation"], row["operation"]["id"]) == (2, attempt)
            assert row["lastFailure"]["podName"] == name  # the recycle's record of the dead pod
            reasons = [e["reason"] for e in sorted(events(cluster, namespace, NAME), key=_when)]
            assert "TerminalPodRecycled" in reasons
            assert "InPlaceUpdateNotPossible" in reasons
            assert reasons.index("TerminalPodRecycled") < reasons.index("InPlaceUpdateNotPossible")
    finally:
        cluster.kubelet.heal(_on_v2)


def _when(event: dict[str, Any]) -> int:
    """The order the API server stored the events in (their timestamps are to the second)."""
    return int(event["metadata"]["resourceVersion"])
