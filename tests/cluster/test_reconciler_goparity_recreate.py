"""A ``RecreatePod`` roll on the real control plane, as OME's Go journals it (issue 37, goKD).

A settled two-Instance ``RecreatePod`` pool rolls to a new image while a watch records every status the
API server shows. Go keeps the recreate's operation at step ``Drain`` through its delete, rebuild and
promote (ome-projects/ome ``workload/ops/update_recreate.go`` @ 58a57f25 ``recreateUpdate``: the
phases are told apart by the pods), and the promote clears the row's ``targetRevision``
(``workload/status/decision.go`` @ 8263d0c7 ``ReadyOnRevisionMutation``). Before: the step turned
``CreatePods`` once the old pod was gone, and a Ready row kept ``targetRevision`` equal to its running
revision. Two more (goR2): a recreate retargeted mid-roll rebuilds at the next incarnation, and a
rebuilt pod that ended is waited out to the operation deadline.
"""

from __future__ import annotations

from typing import Any

from helpers import IREP, StatusWatch, events, live_pods, roll_pool, running_controller

from testbed.testing import Cluster, replica_settled, runners_replica, wait_for

RECREATE = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}


def test_a_recreate_roll_stays_at_drain_and_the_promote_clears_the_target(
    cluster: Cluster, namespace: str
) -> None:
    with running_controller(cluster, namespace) as (ctrl, _kube):
        path = f"{IREP.format(ns=namespace)}/pool"
        pool = runners_replica("pool", namespace, "engine:v1", replicas=2, lifecycle=RECREATE)
        cluster.raw.post(IREP.format(ns=namespace), pool)
        wait_for("the pool settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
        wait_for("the queue to drain", ctrl.queue.idle, timeout=30)
        with StatusWatch(cluster, namespace, "pool") as watch:
            roll_pool(cluster, path, timeout=120)
        statuses = watch.since(0)
        final = cluster.raw.get(path)["status"]
    v2 = final["currentRevision"]
    steps: dict[int, list[str]] = {}
    for st in statuses:
        for row in st.get("instanceStatuses") or []:
            op = row.get("operation") or {}
            if op.get("type") == "Update" and op.get("targetRevision") == v2:
                seen = steps.setdefault(row["index"], [])
                if not seen or seen[-1] != op["step"]:
                    seen.append(op["step"])
    assert steps == {0: ["Drain"], 1: ["Drain"]}, steps
    rows = final["instanceStatuses"]
    assert [(r["phase"], r["runningRevision"], r.get("targetRevision")) for r in rows] == [
        ("Ready", v2, None),
        ("Ready", v2, None),
    ], rows
    print("recreate roll: steps seen per Instance", steps, "final rows", rows)


def _on_v2(pod: dict[str, Any]) -> bool:
    return any(ct.get("image") == "engine:v2" for ct in pod["spec"]["containers"])


def _incarnation(pod: dict[str, Any]) -> str:
    return str(pod["metadata"]["labels"]["ome.io/instance-incarnation"])


def test_a_recreate_retargeted_mid_roll_rebuilds_at_the_next_incarnation(
    cluster: Cluster, namespace: str
) -> None:
    """Go ``status.StampRecreating`` (``workload/status/decision.go``, its skip-write guard holds only
    at the same target; issue 37, goR2): a single-pod RecreatePod roll to ``engine:v2`` whose rebuilt
    pod (incarnation 2) never turns ready is edited to ``engine:v3`` mid-roll. The move is a new
    attempt: the v2 pod is deleted, the v3 pod comes up at incarnation 3 and is promoted, and the
    operation it ran under is a new one, its reason ``revision <v1> -> <v3>``. Before: ours rebuilt
    at incarnation 2 under the old operation (reason ``revision <v1> -> <v2>``). (Its id is not read:
    Go's ``update-<index>-<unix seconds>`` can repeat within a second.)"""
    cluster.kubelet.never_ready(_on_v2)
    try:
        with running_controller(cluster, namespace):
            path = f"{IREP.format(ns=namespace)}/pool"
            pool = runners_replica("pool", namespace, "engine:v1", replicas=1, lifecycle=RECREATE)
            cluster.raw.post(IREP.format(ns=namespace), pool)
            wait_for("the pool settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
            obj = cluster.raw.get(path)
            obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
            cluster.raw.put(path, obj)
            wait_for(
                "the rebuilt pod at incarnation 2 on engine:v2",
                lambda: (
                    [p for p in live_pods(cluster, namespace, "pool") if _on_v2(p) and _incarnation(p) == "2"]
                    or None
                ),
                timeout=60,
            )
            obj = cluster.raw.get(path)
            obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v3"
            cluster.raw.put(path, obj)
            with StatusWatch(cluster, namespace, "pool") as watch:
                wait_for(
                    "the pool settled on engine:v3",
                    lambda: (
                        replica_settled(o := cluster.raw.get(path))
                        and o["status"]["instanceStatuses"][0].get("runningRevision")
                        == o["status"]["updateRevision"]
                        and not any(_on_v2(p) for p in live_pods(cluster, namespace, "pool"))
                    ),
                    timeout=120,
                )
            statuses = watch.since(0)
            (pod,) = live_pods(cluster, namespace, "pool")
            row = cluster.raw.get(path)["status"]["instanceStatuses"][0]
    finally:
        cluster.kubelet.heal(_on_v2)
    assert pod["spec"]["containers"][0]["image"] == "engine:v3"
    assert (_incarnation(pod), row["incarnation"]) == ("3", 3), (pod["metadata"]["labels"], row)
    v3 = row["runningRevision"]
    reasons = {
        (r.get("operation") or {}).get("reason")
        for st in statuses
        for r in st.get("instanceStatuses") or []
        if (r.get("operation") or {}).get("targetRevision") == v3
    }
    assert reasons, statuses
    assert all(str(why).endswith(f"-> {v3}") for why in reasons), reasons
    print(
        "retargeted recreate: pod",
        pod["metadata"]["name"],
        "incarnation",
        row["incarnation"],
        "reasons",
        reasons,
    )


def test_a_recreate_waits_out_a_rebuilt_pod_that_ended(cluster: Cluster, namespace: str) -> None:
    """Go ``ops/update_recreate.go`` ``recreateUpdate`` (it recycles only a pod the kubelet refused to
    admit; issue 37, goR2): a single-pod RecreatePod roll whose rebuilt pod (incarnation 2, never
    ready) ends ``Succeeded`` leaves it standing, records no ``TerminalPodRecycled``, and is ended by
    its operation deadline (``instanceReadyTimeout: 20s``): the Instance ``Failed`` with
    ``DeadlineExceeded``. Before: ours deleted the dead pod at once and rebuilt it."""
    lifecycle = {**RECREATE, "instanceReadyTimeout": "20s"}
    cluster.kubelet.never_ready(_on_v2)
    try:
        with running_controller(cluster, namespace):
            path = f"{IREP.format(ns=namespace)}/pool"
            pool = runners_replica("pool", namespace, "engine:v1", replicas=1, lifecycle=lifecycle)
            cluster.raw.post(IREP.format(ns=namespace), pool)
            wait_for("the pool settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
            obj = cluster.raw.get(path)
            obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
            cluster.raw.put(path, obj)
            (pod,) = wait_for(
                "the rebuilt pod at incarnation 2 on engine:v2",
                lambda: (
                    [p for p in live_pods(cluster, namespace, "pool") if _on_v2(p) and _incarnation(p) == "2"]
                    or None
                ),
                timeout=60,
            )
            name = pod["metadata"]["name"]
            cluster.raw.patch(
                f"/api/v1/namespaces/{namespace}/pods/{name}/status",
                {"status": {"phase": "Succeeded"}},
                content_type="application/merge-patch+json",
            )
            row = wait_for(
                "the deadline to fail the Instance",
                lambda: next(
                    (
                        r
                        for r in cluster.raw.get(path)["status"]["instanceStatuses"]
                        if r["phase"] == "Failed"
                    ),
                    None,
                ),
                timeout=90,
            )
            still = [
                p
                for p in live_pods(cluster, namespace, "pool")
                if p["metadata"]["uid"] == pod["metadata"]["uid"]
            ]
            reasons = [e["reason"] for e in events(cluster, namespace, "pool")]
    finally:
        cluster.kubelet.heal(_on_v2)
    assert "TerminalPodRecycled" not in reasons, reasons
    assert still, "the dead rebuilt pod was deleted before the deadline"
    assert "Deadline" in str((row.get("lastFailure") or {}).get("reason")), row
    print("terminal rebuilt pod: row", row["phase"], row.get("lastFailure"))
