"""Prometheus metrics with controller-runtime's names, and the /metrics, /healthz, /readyz server.

Counters are pre-created for every result label (controller-runtime's ``initMetrics``) so dashboards
never see a missing series. Nothing is labelled per object (no pod or replica names).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTROLLER", "RESULTS", "Metrics", "ProbeServer", "send"]

CONTROLLER = "inferencereplica"
RESULTS = ("success", "error", "requeue", "requeue_after")


class Metrics:
    """One registry per process (tests build their own)."""

    def __init__(self, registry: CollectorRegistry | None = None, controller: str = CONTROLLER) -> None:
        r = self.registry = registry or CollectorRegistry(auto_describe=True)
        self.controller = controller
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=r,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=r,
        )
        self.terminal_errors = Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            ["controller"],
            registry=r,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ["controller"],
            registry=r,
        )
        self.max_workers = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ["controller"],
            registry=r,
        )
        wq = ["name", "controller"]
        self.depth = Gauge("workqueue_depth", "Current depth of workqueue", wq, registry=r)
        self.adds = Counter(
            "workqueue_adds_total", "Total number of adds handled by workqueue", wq, registry=r
        )
        self.retries = Counter(
            "workqueue_retries_total", "Total number of retries handled by workqueue", wq, registry=r
        )
        self.queue_duration = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            wq,
            buckets=(0.001, 0.01, 0.1, 1, 10, 100),
            registry=r,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            wq,
            buckets=(0.001, 0.01, 0.1, 1, 10, 100),
            registry=r,
        )
        self.api_requests = Counter(
            "omereconcile_api_requests_total",
            "API requests made by the reconciler, by verb, resource and HTTP code",
            ["verb", "resource", "code"],
            registry=r,
        )
        self.watch_relists = Counter(
            "omereconcile_watch_relists_total",
            "Relists of a watched resource, by reason (initial, gone: 410, error)",
            ["resource", "reason"],
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.",
            ["name"],
            registry=r,
        )
        self.shard_ranges = Gauge(
            "omereconcile_shard_ranges",
            "Hash ranges of a sharded reconciler: 1 while this process may act on the range (Lease held and "
            "renewed within the renew deadline), 0 otherwise; no series when not sharded",
            ["range"],
            registry=r,
        )
        self.watched_objects = Gauge(
            "omereconcile_watched_objects",
            "Objects held in this process's watch caches, by resource (sharded: only the ranges it holds)",
            ["resource"],
            registry=r,
        )
        self.received_bytes = Gauge(
            "omereconcile_api_received_bytes",
            "Response bytes received from the API server since the process started (lists, watch streams, "
            "reads); sharded with the gate on, about 1/N of a single process's for the built-in kinds",
            registry=r,
        )
        for result in RESULTS:
            self.reconcile_total.labels(controller, result).inc(0)
        self.reconcile_errors.labels(controller).inc(0)
        self.terminal_errors.labels(controller).inc(0)
        self.active_workers.labels(controller).set(0)
        for m in (self.adds, self.retries):
            m.labels(controller, controller).inc(0)
        self.depth.labels(controller, controller).set(0)

    def exposition(self) -> bytes:
        return bytes(generate_latest(self.registry))


class _HTTPServer6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


def send(handler: BaseHTTPRequestHandler, code: int, body: bytes, ctype: str) -> None:
    """The whole response: status, Content-Type, Content-Length, body."""
    handler.send_response(code)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class ProbeServer:
    """HTTP on ``addr``: ``/healthz`` (the loop made progress recently), ``/readyz``, and ``/metrics``
    without authentication when ``serve_metrics`` (``run --metrics-on-probe-port``; the default server
    is :mod:`omereconcile.server.secure_metrics`)."""

    def __init__(
        self,
        metrics: Metrics,
        host: str,
        port: int,
        *,
        healthy: Callable[[], bool] = lambda: True,
        ready: Callable[[], bool] = lambda: True,
        serve_metrics: bool = True,
    ) -> None:
        self.metrics = metrics
        self.serve_metrics = serve_metrics
        self._healthy = healthy
        self._ready = ready
        self._cache: dict[str, tuple[float, bool]] = {}
        self._lock = threading.Lock()
        server = self

        class _H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics" and server.serve_metrics:
                    body, ctype, code = server.metrics.exposition(), CONTENT_TYPE_LATEST, 200
                elif path in ("/healthz", "/readyz"):
                    ok = server._probe(path)
                    body, ctype, code = (b"ok" if ok else b"not ok"), "text/plain", 200 if ok else 500
                else:
                    body, ctype, code = b"not found", "text/plain", 404
                send(self, code, body, ctype)

            def log_message(self, format: str, *args: Any) -> None:
                return

        server_cls = _HTTPServer6 if ":" in host else ThreadingHTTPServer  # --probe-addr [::]:8081
        self._httpd: ThreadingHTTPServer = server_cls((host, port), _H)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="probes", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def _probe(self, path: str) -> bool:
        # Cached for a second so a burst of probes cannot pile up on the checks.
        with self._lock:
            now = time.monotonic()
            hit = self._cache.get(path)
            if hit is not None and now - hit[0] < 1.0:
                return hit[1]
            ok = bool(self._healthy() if path == "/healthz" else self._ready())
            self._cache[path] = (now, ok)
            return ok

    def start(self) -> ProbeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
