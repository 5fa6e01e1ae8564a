"""A gang's PodGroup that the gang scheduler marked ``Failed`` is reset on the real control plane (issue
37, goKD).

Go: ome-projects/ome ``workload/gang/gang.go`` @ 4dfb96b1 ``EnsurePodGroupsWithState``: the scheduler's
``Failed`` verdict is absorbing (its controller stops reconciling the group), so the pass deletes the
group, records a Warning ``PodGroupReset`` with the scheduler's count, leaves the Instance's row alone,
and the next pass builds a fresh group under the same name. Before, ours read no PodGroup phase: the
gang stayed behind a group the scheduler no longer admits, and nothing said so.

The test control plane runs the Coscheduling scheduler but no PodGroup status controller, so the verdict
is written on the group's status by hand, as that controller would; PodGroups are not watched (Go's
watch ignores status changes too), so a replica edit wakes the pass.
"""

from __future__ import annotations

from collections.abc import Callable

from helpers import apply, events, live_pods, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_gang import PODGROUPS, _gang, _settled, _wait_gpus_free

from testbed.testing import Cluster

GROUP = "llama-pool-engine-0"
GANG = {"llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"}


def test_a_failed_pod_group_is_reset_and_the_gang_keeps_serving(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    rec = reconcilers()
    apply(cluster, _gang(namespace, "engine:v1", gpus=4, replicas=1))
    rec.wait("the gang settled", lambda: _settled(cluster, namespace, "engine:v1"), timeout=120)
    group_path = f"{PODGROUPS.format(ns=namespace)}/{GROUP}"
    before = cluster.raw.get(group_path)
    row_before = replica(cluster, namespace)["status"]["instanceStatuses"][0]

    status = {"status": {"phase": "Failed", "failed": 1}}
    try:
        cluster.raw.patch(f"{group_path}/status", status)
    except Exception:  # a CRD without the status subresource takes status on the object itself
        cluster.raw.patch(group_path, status)
    assert cluster.raw.get(group_path)["status"]["phase"] == "Failed"
    cluster.kubectl("annotate", "-n", namespace, "inferencereplica", "llama-pool", "example.com/poke=1")

    def reset_said() -> list[str]:
        return [e["message"] for e in events(cluster, namespace) if e.get("reason") == "PodGroupReset"]

    (message,) = rec.wait("the PodGroupReset Warning", reset_said, timeout=60)
    assert message == (
        f"OMENative component=engine: deleting PodGroup {GROUP} so the gang can be admitted again "
        f"(PodGroup {GROUP} reported phase Failed: 1 of 2 members failed)"
    )

    def rebuilt() -> bool:
        try:
            group = cluster.raw.get(group_path)
        except Exception:
            return False
        return group["metadata"]["uid"] != before["metadata"]["uid"] and not group["metadata"].get(
            "deletionTimestamp"
        )

    rec.wait("the group rebuilt under the same name", rebuilt, timeout=60)
    group = cluster.raw.get(group_path)
    assert (group.get("status") or {}).get("phase") != "Failed"
    assert group["spec"]["minMember"] == 2
    assert {p["metadata"]["name"] for p in live_pods(cluster, namespace) if serving(p)} >= GANG
    row = replica(cluster, namespace)["status"]["instanceStatuses"][0]
    keys = ("phase", "incarnation", "runningRevision", "operation", "lastFailure")
    assert {k: row.get(k) for k in keys} == {k: row_before.get(k) for k in keys}
    print("PodGroup reset:", message, "row", row)
