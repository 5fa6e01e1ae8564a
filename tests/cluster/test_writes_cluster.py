"""On a real API server: a roll writes the status once per step, the held-back counts catch up on their
own, and a repeated event is one Event with a count."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import pytest
from helpers import count_answers, roll_pool, running_controller, settled_surge_pool

from omereconcile.cluster.executor import Executor
from omereconcile.cluster.kube import Kube
from omereconcile.controller import Controller
from testbed.testing import Cluster, wait_for

N = 3


@pytest.fixture
def controller(cluster: Cluster, namespace: str) -> Iterator[tuple[Controller, Kube]]:
    with running_controller(cluster, namespace) as running:
        yield running


def _counts_match_rows(obj: dict[str, object]) -> bool:
    st = obj.get("status") or {}
    assert isinstance(st, dict)
    rows = st.get("instanceStatuses") or []
    return (
        st.get("replicas") == N
        and st.get("readyReplicas") == N
        and st.get("availableReplicas") == N
        and st.get("updatedReadyReplicas") == N
        and all(r.get("podCount") == 1 and r.get("availablePodCount") == 1 for r in rows)
    )


def test_a_surge_roll_writes_its_journal_once_per_step_and_the_counts_catch_up(
    cluster: Cluster, namespace: str, controller: tuple[Controller, Kube]
) -> None:
    ctrl, kube = controller
    answered = count_answers(kube)
    path = settled_surge_pool(cluster, ctrl, namespace, N)
    counts0, held0, released0 = Counter(kube.write_counts()), ctrl.coalescer.held, ctrl.coalescer.released
    answered.clear()

    roll_pool(cluster, path, timeout=180)
    # Nothing else happens now: the counts held back by the last passes still reach the API.
    wait_for("the counts published", lambda: _counts_match_rows(cluster.raw.get(path)), timeout=30)
    time.sleep(1.0)
    writes = Counter(kube.write_counts()) - counts0
    landed = answered[("PUT", "inferencereplicas/status", 200)]
    released = ctrl.coalescer.released - released0
    # Per Instance: the operation started, changed step to SurgeDrain, ended. On top of those, only the
    # count-only writes whose window ran out (a step longer than 5 s on a loaded machine), and the pass
    # that observes the new generation if it runs before the first operation starts.
    assert 3 * N <= landed <= 3 * N + released + 1, (landed, released, writes)
    assert ctrl.coalescer.held - held0 > 0  # counts were held back, not written on every change
    # The pod writes are unchanged: a create, a serve and a hold gate patch, a delete per Instance
    # (more only when a stale read meets a precondition and the pass is replanned).
    assert writes["POST pods"] >= N
    assert writes["PATCH pods/status"] >= 2 * N
    assert writes["DELETE pods"] >= N


def test_a_repeated_event_is_one_event_with_a_count(cluster: Cluster, namespace: str) -> None:
    kube = Kube.from_kubeconfig(cluster.cp.kubeconfig)
    replica = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "pool", "namespace": namespace, "uid": "3f1c", "resourceVersion": "1"},
    }
    ex = Executor(kube, reporting_instance="test-host")
    for _ in range(3):
        ex.record_event(replica, "Warning", "InstanceFailed", "OMENative engine/0 failed: CrashLoopBackOff")
        time.sleep(1.1)  # lastTimestamp has a resolution of one second
    events = [
        e
        for e in cluster.raw.get(f"/api/v1/namespaces/{namespace}/events")["items"]
        if e["involvedObject"]["name"] == "pool"
    ]
    assert len(events) == 1
    (ev,) = events
    assert ev["count"] == 3
    assert ev["lastTimestamp"] > ev["firstTimestamp"]
    assert ev["reason"] == "InstanceFailed"
