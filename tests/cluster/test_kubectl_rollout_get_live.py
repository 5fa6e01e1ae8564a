"""``kubectl ome rollout get`` through the real kubectl, on a roll with a held Instance, a silent node
and a pause.

A settled two-Instance ``SurgeThenDrain`` pool (``maxSurge: 1``) is changed to an image the fake kubelet
cannot pull. The controller runs with its own ``inferenceservice-config`` in the test's namespace
(``lifecycle.stuckPodGracePeriod: 2s``, no ``updateRetry``): the surged pod's ``ImagePullBackOff`` is a
workload-caused failure and, with no retry policy, the first one holds the revision (``rolloutHold.gate:
Held``), leaving Instance 0 parked. Then the node of Instance 1's pod stops reporting, and while
``rollout get --watch`` follows (piped: appended snapshots) the roll is paused.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from helpers import IREP, SURGE_ONE, delete_replicas
from kubectl_plugin import Follower, kubectl_ome

from omereconcile.cluster.kube import Kube
from omereconcile.controller import Controller
from testbed.testing import Cluster, replica_settled, runners_replica, wait_for


def _v2(pod: dict[str, Any]) -> bool:
    return any(c.get("image") == "engine:v2" for c in pod["spec"]["containers"])


def _pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    return list(cluster.raw.get(f"/api/v1/namespaces/{namespace}/pods")["items"])


def test_rollout_get_shows_the_held_instance_the_silent_node_and_the_pause(
    cluster: Cluster, namespace: str
) -> None:
    ns = ["-n", namespace]
    cluster.raw.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "inferenceservice-config", "namespace": namespace},
            "data": {"lifecycle": json.dumps({"stuckPodGracePeriod": "2s"})},
        },
    )
    cluster.kubelet.fail_image_pull(_v2, namespace)
    silenced: list[str] = []
    kube = Kube.from_kubeconfig(cluster.cp.kubeconfig)
    ctrl = Controller(
        kube, namespaces=[namespace], ome_namespace=namespace, resync_period=3600, watch_timeout=20
    )
    ctrl.start()
    try:
        path = f"{IREP.format(ns=namespace)}/pool"
        cluster.raw.post(
            IREP.format(ns=namespace),
            runners_replica("pool", namespace, "engine:v1", replicas=2, lifecycle=SURGE_ONE),
        )
        wait_for("the pool settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
        obj = cluster.raw.get(path)
        v1 = obj["status"]["currentRevision"]
        obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
        cluster.raw.put(path, obj)
        held = wait_for(
            "v2 held",
            lambda: (
                ((o := cluster.raw.get(path))["status"].get("rolloutHold") or {}).get("gate") == "Held" and o
            ),
            timeout=90,
        )
        v2 = held["status"]["updateRevision"]
        one = next(
            p
            for p in _pods(cluster, namespace)
            if p["metadata"]["labels"].get("ome.io/instance-index") == "1"
        )
        node = one["spec"]["nodeName"]
        silenced.append(node)
        cluster.kubelet.silence_node(node)

        # -- one look: the hold, the silent node under Instance 1's pod, the revisions.
        got = kubectl_ome(cluster, "rollout", "get", "ir/pool", *ns)
        assert got.returncode == 0, got.stderr
        text = got.stdout
        assert "\x1b[" not in text  # piped: no colour
        assert "Status:      Held\n" in text
        assert (
            f"Hold:        Held: update to {v2} held after 1 failed attempt(s): ImagePullBackOff\n" in text
        ), text
        assert f"node {node} (Unknown,unreachable)" in text
        assert "ETA:" not in text  # held: the Hold line says it does not finish by itself
        assert f"revision 1 {v1} [current]" in text
        doc = json.loads(kubectl_ome(cluster, "rollout", "get", "ir/pool", *ns, "-o", "json").stdout)
        assert doc["kind"] == "RolloutTreeReport"
        tree = doc["content"]
        assert tree["replica"]["hold"]["gate"] == "Held"
        zero = tree["instances"][0]
        assert (zero["phase"], zero["targetRevision"], zero["lastFailure"]["reason"]) == (
            "Failed",
            v2,
            "ImagePullBackOff",
        )
        assert "InstanceFailed" in [e["reason"] for e in zero["warningEvents"]]  # the controller's, under it
        by_pod = {p["name"]: (i["index"], p) for i in tree["instances"] for p in i["pods"]}
        assert by_pod[one["metadata"]["name"]][0] == 1
        assert by_pod[one["metadata"]["name"]][1]["nodeState"] == "Unknown,unreachable"
        revisions = {r["name"]: r for r in tree["revisions"]}
        assert revisions[v2]["roles"] == ["update"]
        assert revisions[v1]["roles"] == ["current"]

        # -- --watch piped: snapshots appended; the pause shows up in a later one.
        # The pause once the first snapshot is drawn (a fixed 4 s sleep raced the plugin's start-up).
        follower = Follower(cluster, "rollout", "get", "ir/pool", *ns, "--watch", "--timeout", "12s")
        wait_for("the first --watch snapshot", lambda: "Paused:" in follower.output(), timeout=60)
        for _ in range(5):  # the controller writes status often: a 409 here is a retry, not a failure
            o = cluster.raw.get(path)
            o["spec"]["paused"] = True
            try:
                cluster.raw.put(path, o)
                break
            except Exception:
                time.sleep(0.5)
        proc = follower.wait(60)
        assert proc.returncode == 0, proc.stderr
        snapshots = proc.stdout.split("\n\nName:")
        assert len(snapshots) >= 2, proc.stdout
        assert "Paused:      no" in snapshots[0]
        assert "Paused:      yes (Recover)" in snapshots[-1]
        assert len(snapshots) <= 12 * 4 + 1  # at most 4 redraws a second
        print(proc.stdout.split("\n\nName:")[0])  # the capture for the closing note (-s shows it)
        if os.environ.get("ROLLOUT_GET_CAPTURE"):  # the whole --watch output, for the closing note
            Path(os.environ["ROLLOUT_GET_CAPTURE"]).write_text(proc.stdout)
    finally:
        for name in silenced:
            cluster.kubelet.revive_node(name)
        cluster.kubelet.heal(_v2, namespace)
        delete_replicas(cluster, namespace)
        ctrl.stop()
