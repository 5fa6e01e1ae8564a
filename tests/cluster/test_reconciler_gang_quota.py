"""A ResourceQuota on ``nvidia.com/gpu`` smaller than a gang: the member the quota refuses waits as
``QuotaExceeded`` (clock parked, announced once, nothing failed) and the gang comes up whole once the
quota is raised."""

from __future__ import annotations

import time
from collections.abc import Callable

from helpers import apply, events, live_pods, serving
from reconciler_proc import Reconciler
from test_reconciler_gang import _gang_pods, _groups, _settled, _wait_gpus_free
from test_reconciler_quota import _blocked, _quota, _quota_enforced, _row, _waiting_on_quota

from testbed.controlplane import COSCHEDULER_NAME
from testbed.testing import Cluster, gang_replica


def test_a_gpu_quota_smaller_than_the_gang_holds_it_then_releases_it_when_raised(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    _wait_gpus_free(cluster, namespace)
    _quota(cluster, namespace, 4)  # room for the leader (4 GPUs), not for its worker
    rec = reconcilers()
    rec.wait("the quota enforced", lambda: _quota_enforced(cluster, namespace, 4), timeout=60)
    gang = gang_replica(
        "llama-pool",
        namespace,
        "engine:v1",
        gpus=4,
        scheduler=COSCHEDULER_NAME,
        lifecycle={"instanceReadyTimeout": "15s"},
    )
    apply(cluster, gang)
    op = _waiting_on_quota(rec, cluster, namespace, 0)
    assert "deadline" not in op  # the clock is parked
    time.sleep(25)  # well past the 15 s deadline: still waiting, never failed, announced once
    row = _row(cluster, namespace, 0)
    assert row["operation"]["waiting"] == "QuotaExceeded", row
    assert "lastFailure" not in row
    (blocked,) = _blocked(cluster, namespace)
    assert blocked["message"].startswith("OMENative component=engine instance=0 waiting on capacity: ")
    assert "InstanceFailed" not in {e.get("reason") for e in events(cluster, namespace)}
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == ["llama-pool-engine-0-leader-0"]

    _quota(cluster, namespace, 8)
    rec.wait("the raised quota enforced", lambda: _quota_enforced(cluster, namespace, 8), timeout=60)
    rec.wait("the gang Ready", lambda: _settled(cluster, namespace), timeout=180)
    assert [p["metadata"]["name"] for p in live_pods(cluster, namespace)] == _gang_pods(0)
    assert all(serving(p) for p in live_pods(cluster, namespace))
    assert _groups(cluster, namespace) == ["llama-pool-engine-0"]
    assert len(_blocked(cluster, namespace)) == 1
