"""A ``RecreatePod`` roll on the real control plane, as OME's Go journals it (issue 37, goKD).

A settled two-Instance ``RecreatePod`` pool rolls to a new image while a watch records every status the
API server shows. Go keeps the recreate's operation at step ``Drain`` through its delete, rebuild and
promote (ome-projects/ome ``workload/ops/update_recreate.go`` @ 58a57f25 ``recreateUpdate``: the
phases are told apart by the pods), and the promote clears the row's ``targetRevision``
(``workload/status/decision.go`` @ 8263d0c7 ``ReadyOnRevisionMutation``). Before: the step turned
``CreatePods`` once the old pod was gone, and a Ready row kept ``targetRevision`` equal to its running
revision.
"""

from __future__ import annotations

from helpers import IREP, StatusWatch, roll_pool, running_controller

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
