"""The row's ``announced`` record on the real control plane: a once-only Warning is said once per episode.

A gang under the default scheduler on a cluster that has the PodGroup CRD gets OME's
``MaybeNoGangScheduler`` advisory. The newest Go (ome-projects/ome ``workload/gang/gang.go`` @ 4dfb96b1
``EnsurePodGroupsWithState``, ``workload/status/announced.go`` @ 4dfb96b1 ``Announce``) says it once per
incarnation of the first gang's row, recorded on that row as ``MaybeNoGangScheduler@#<incarnation>``:
not again on later passes, not again after the reconciler restarts, and again once that Instance is
rebuilt. The API server keeps the record (the row schema declares ``announced``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers import apply, events, live_pods, replica
from reconciler_proc import Reconciler

from testbed.testing import Cluster, gang_replica

ADVISORY = "MaybeNoGangScheduler"


def _said(cluster: Cluster, ns: str) -> int:
    """How many times the advisory reached the API (the event correlator folds a repeat into count)."""
    return sum(int(e.get("count") or 1) for e in events(cluster, ns) if e.get("reason") == ADVISORY)


def _row0(cluster: Cluster, ns: str) -> dict[str, Any]:
    rows = (replica(cluster, ns).get("status") or {}).get("instanceStatuses") or []
    return next((r for r in rows if r.get("index") == 0), {})


def _observed(cluster: Cluster, ns: str) -> bool:
    obj = replica(cluster, ns)
    return (obj.get("status") or {}).get("observedGeneration") == obj["metadata"]["generation"]


def _settled(cluster: Cluster, ns: str, incarnation: int) -> bool:
    st = replica(cluster, ns).get("status") or {}
    rows = st.get("instanceStatuses") or []
    return (
        st.get("readyReplicas") == 1
        and len(rows) == 1
        and rows[0].get("incarnation") == incarnation
        and not rows[0].get("operation")
    )


def test_the_gang_scheduler_advisory_is_said_once_per_incarnation_across_restarts(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    # No schedulerName: the default kube-scheduler places the gang's pods one by one.
    apply(cluster, gang_replica("llama-pool", namespace, "engine:v1", gpus=1, replicas=1))
    rec.wait("the gang Ready", lambda: _settled(cluster, namespace, 1), timeout=120)
    rec.wait("the advisory said", lambda: _said(cluster, namespace) >= 1, timeout=30)
    # Row 0 also records GangSplitRisk (no topologyKey), another once-per-incarnation Warning.
    assert f"{ADVISORY}@#1" in (_row0(cluster, namespace).get("announced") or [])

    # A restarted reconciler reads the record back: nothing is said again.
    rec.stop()
    again = reconcilers()
    # A spec edit that rolls nothing: the new reconciler's pass writes the status (observedGeneration).
    cluster.raw.patch(
        f"/apis/ome.io/v1beta1/namespaces/{namespace}/inferencereplicas/llama-pool",
        {"spec": {"minReadySeconds": 1}},
    )
    again.wait(
        "a status write by the new reconciler",
        lambda: any(
            r.get("msg") == "plan" and "WriteStatus" in (r.get("actions") or []) for r in again.lines()
        ),
        timeout=60,
    )
    again.wait("the edit observed", lambda: _observed(cluster, namespace), timeout=30)
    assert _settled(cluster, namespace, 1)
    assert _said(cluster, namespace) == 1

    # A rebuilt Instance is a new episode: told again, and the record names the new incarnation.
    cluster.kubectl("delete", "pod", "-n", namespace, "llama-pool-engine-0-worker-0", "--wait=false")
    again.wait("the gang rebuilt at incarnation 2", lambda: _settled(cluster, namespace, 2), timeout=120)
    again.wait("the advisory said again", lambda: _said(cluster, namespace) == 2, timeout=30)
    assert f"{ADVISORY}@#2" in (_row0(cluster, namespace).get("announced") or [])
    assert f"{ADVISORY}@#1" not in (_row0(cluster, namespace).get("announced") or [])
    assert len(live_pods(cluster, namespace)) == 2
