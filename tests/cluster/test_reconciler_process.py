"""The process around the loop: metrics and probes, JSON logs, the ``plan`` dry-run, leader election."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from helpers import IREP, REPO, apply, example_replica, live_pods, replica, serving
from reconciler_proc import Reconciler
from test_reconciler_rollout import ready_on

from testbed.testing import Cluster

LEASE = "/apis/coordination.k8s.io/v1/namespaces/ome/leases/omereconcile-leader"


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read().decode()


def _metric(text: str, metric: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(metric):
            continue
        head, _, value = line.rpartition(" ")
        if head.split("{", 1)[0] != metric:
            continue
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            return float(value)
    return None


def test_metrics_probes_and_json_logs(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    port = rec.probe_port()
    apply(cluster, example_replica(namespace))
    rec.wait("Ready", lambda: ready_on(cluster, namespace), timeout=60)
    assert _get(port, "/healthz") == (200, "ok")
    assert _get(port, "/readyz") == (200, "ok")
    code, text = _get(port, "/metrics")
    assert code == 200
    ctrl = {"controller": "inferencereplica"}
    for result in ("success", "error", "requeue", "requeue_after"):
        assert _metric(text, "controller_runtime_reconcile_total", result=result, **ctrl) is not None, result
    assert (_metric(text, "controller_runtime_reconcile_total", result="success", **ctrl) or 0) >= 1
    assert _metric(text, "controller_runtime_reconcile_errors_total", **ctrl) is not None
    assert (_metric(text, "controller_runtime_reconcile_time_seconds_count", **ctrl) or 0) >= 1
    assert _metric(text, "workqueue_depth", name="inferencereplica") is not None
    assert (_metric(text, "workqueue_adds_total", name="inferencereplica") or 0) >= 1
    assert _metric(text, "workqueue_retries_total", name="inferencereplica") is not None
    assert (_metric(text, "omereconcile_watch_relists_total", resource="pods", reason="initial") or 0) >= 1
    assert (
        _metric(text, "omereconcile_api_requests_total", verb="POST", resource="pods", code="201") or 0
    ) >= 1
    assert "llama-pool" not in text  # no per-object labels

    lines = [ln for ln in rec.log_path.read_text().splitlines() if ln.strip()]
    records = [json.loads(ln) for ln in lines]  # every line is one JSON object
    plans = [r for r in records if r.get("msg") == "plan"]
    assert plans
    for r in plans:
        assert r["namespace"] == namespace
        assert r["replica"] == "llama-pool"
        assert len(r["reconcile_id"]) == 36
    applied = [r for r in records if r.get("msg") == "applied" and r.get("action") == "CreatePod"]
    assert applied[0]["target"] == "llama-pool-engine-0-default-0"
    assert applied[0]["reconcile_id"] in {p["reconcile_id"] for p in plans}

    # SIGTERM: a graceful stop with exit code 0.
    assert rec.stop() == 0
    assert rec.lines()[-1]["msg"] == "stopped"


def test_plan_dry_run_prints_the_next_actions_without_acting(
    cluster: Cluster, reconciler_kubeconfig: Path, namespace: str
) -> None:
    apply(cluster, example_replica(namespace))
    before = replica(cluster, namespace)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "omereconcile",
            "plan",
            "--kubeconfig",
            str(reconciler_kubeconfig),
            "llama-pool",
            "-n",
            namespace,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == f"InferenceReplica {namespace}/llama-pool (dry run; nothing was changed)"
    assert out[1].startswith("spec renders: llama-pool-engine-")
    assert out[2] == "add the teardown finalizer"
    assert (
        out[3] == "  AddFinalizer ome.io/ir-teardown: teardown needs the finalizer before anything is created"
    )
    after = replica(cluster, namespace)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert live_pods(cluster, namespace) == []
    cluster.raw.delete(f"{IREP.format(ns=namespace)}/llama-pool")


def _holder(cluster: Cluster) -> str:
    return str((cluster.raw.get(LEASE).get("spec") or {}).get("holderIdentity") or "")


def test_leader_election_standby_takes_over_and_a_leader_that_loses_the_lease_exits(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    a = reconcilers(leader_elect=True)
    a.wait("a to lead", lambda: any(r.get("msg") == "became leader" for r in a.lines()), timeout=40)
    b = reconcilers(leader_elect=True)
    b.wait("b to wait", lambda: any(r.get("msg") == "waiting for the lease" for r in b.lines()), timeout=20)
    apply(cluster, example_replica(namespace))
    a.wait("Ready under a", lambda: ready_on(cluster, namespace), timeout=60)
    assert not any(r.get("msg") == "became leader" for r in b.lines())
    assert not any(r.get("msg") == "plan" for r in b.lines())  # the standby never acts

    # The leader dies without releasing: b takes over once the lease expires (15 s) and reconciles.
    a.kill()
    b.wait("b to lead", lambda: any(r.get("msg") == "became leader" for r in b.lines()), timeout=40)
    cluster.raw.patch(f"{IREP.format(ns=namespace)}/llama-pool", {"spec": {"replicas": 2}})
    b.wait(
        "the scale-up under b",
        lambda: len([p for p in live_pods(cluster, namespace) if serving(p)]) == 2,
        timeout=60,
    )

    # Someone else takes the lease from b: b must exit (non-zero) rather than run on as a stale leader.
    lease = cluster.raw.get(LEASE)
    now = datetime.now(UTC)
    lease["spec"].update(
        {
            "holderIdentity": "intruder",
            "renewTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "acquireTime": now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "leaseDurationSeconds": 15,
        }
    )
    cluster.raw.put(LEASE, lease)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and b.alive():
        time.sleep(0.2)
    assert not b.alive(), b.tail()
    assert b.proc is not None
    assert b.proc.returncode == 1
    assert any(r.get("msg") == "leader election lost" for r in b.lines())
    # Leave the lease free for later tests.
    lease = cluster.raw.get(LEASE)
    lease["spec"].update(
        {
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "renewTime": (now - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }
    )
    cluster.raw.put(LEASE, lease)


def test_sigterm_releases_the_lease_so_the_standby_leads_at_once(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    a = reconcilers(leader_elect=True)
    a.wait("a to lead", lambda: any(r.get("msg") == "became leader" for r in a.lines()), timeout=40)
    b = reconcilers(leader_elect=True)
    b.wait("b to wait", lambda: any(r.get("msg") == "waiting for the lease" for r in b.lines()), timeout=20)
    t0 = time.monotonic()
    assert a.stop() == 0
    assert any(r.get("msg") == "lease released" for r in a.lines())
    b.wait("b to lead", lambda: any(r.get("msg") == "became leader" for r in b.lines()), timeout=10)
    assert time.monotonic() - t0 < 10  # well under the 15 s lease: no expiry wait
    apply(cluster, example_replica(namespace))
    b.wait("Ready under b", lambda: ready_on(cluster, namespace), timeout=60)
