"""Metric names and pre-created series, as controller-runtime exposes them."""

from __future__ import annotations

import urllib.request

from omereconcile.metrics import Metrics, ProbeServer


def test_reconcile_counters_exist_for_every_result_before_any_reconcile() -> None:
    text = Metrics().exposition().decode()
    for result in ("success", "error", "requeue", "requeue_after"):
        assert (
            f'controller_runtime_reconcile_total{{controller="inferencereplica",result="{result}"}} 0.0'
            in text
        )
    for name in (
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_terminal_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds",
        "controller_runtime_active_workers",
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_retries_total",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
    ):
        assert f"# TYPE {name}" in text, name


def test_probe_server_serves_metrics_and_probes() -> None:
    healthy = {"ok": True}
    srv = ProbeServer(Metrics(), "127.0.0.1", 0, healthy=lambda: healthy["ok"], ready=lambda: True).start()
    try:
        base = f"http://127.0.0.1:{srv.port}"
        with urllib.request.urlopen(base + "/healthz", timeout=5) as r:
            assert (r.status, r.read()) == (200, b"ok")
        with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
            assert b"controller_runtime_reconcile_total" in r.read()
    finally:
        srv.stop()
