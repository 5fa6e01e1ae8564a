"""The validating admission webhook over HTTPS: ``POST /validate-ome-io-v1beta1-inferencereplica``.

The rules are ``omerender.admission``'s (``request_from_review`` → ``review`` →
``admission_review_response``); this module only serves them. The webhook's reader is the cluster:
runtimes and InferenceServices for the runtime and name-collision checks, and the controller identity
from the ``inferenceReplica`` key of the ``inferenceservice-config`` ConfigMap (a missing ConfigMap or an
unparseable block makes creates and spec changes fail with 500, as OME does). Both are cached for
``cache_ttl`` seconds so a burst of writes does not become a burst of lists.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from omereconcile.kube import ApiError, Kube, NotFound
from omereconcile.observe import build_catalog, fetch_catalog_objects, paths
from omereconcile.settings import SettingsError, settings_from_configmap
from omerender.admission import admission_review_response, request_from_review, review
from omerender.catalog import Catalog, ControllerIdentity

__all__ = ["PATH", "AdmissionServer", "ClusterReader"]

PATH = "/validate-ome-io-v1beta1-inferencereplica"
log = logging.getLogger("omereconcile.webhook")


class ClusterReader:
    """The webhook's view of the cluster, cached briefly."""

    def __init__(
        self,
        kube: Kube,
        *,
        ome_namespace: str,
        config_name: str = "inferenceservice-config",
        cache_ttl: float = 2.0,
    ) -> None:
        self.kube = kube
        self.ome_namespace = ome_namespace
        self.config_name = config_name
        self.cache_ttl = cache_ttl
        self._lock = threading.Lock()
        self._catalog: tuple[float, Catalog] | None = None
        self._identity: tuple[float, ControllerIdentity | None, str | None] | None = None

    def catalog(self) -> Catalog | None:
        with self._lock:
            now = time.monotonic()
            if self._catalog is not None and now - self._catalog[0] < self.cache_ttl:
                return self._catalog[1]
            try:
                cat = build_catalog(fetch_catalog_objects(self.kube))
            except ApiError as exc:
                log.warning(
                    "webhook reader failed; runtime and collision checks skipped", extra={"error": str(exc)}
                )
                return None
            self._catalog = (now, cat)
            return cat

    def identity(self) -> tuple[ControllerIdentity | None, str | None]:
        with self._lock:
            now = time.monotonic()
            if self._identity is not None and now - self._identity[0] < self.cache_ttl:
                return self._identity[1], self._identity[2]
            ident, err = self._read_identity()
            self._identity = (now, ident, err)
            return ident, err

    def _read_identity(self) -> tuple[ControllerIdentity | None, str | None]:
        where = f"ConfigMap {self.ome_namespace}/{self.config_name}"
        try:
            cm = self.kube.get(paths.configmap(self.ome_namespace, self.config_name))
        except NotFound:
            return None, f"{where} not found"
        except ApiError as exc:
            return None, f"{where}: {exc}"
        raw = (cm.get("data") or {}).get("inferenceReplica")
        if raw is None:
            return None, None
        try:
            json.loads(raw)
        except ValueError as exc:
            return None, f"{where} key inferenceReplica: invalid JSON: {exc}"
        try:
            return settings_from_configmap({"inferenceReplica": raw}).controller_identity, None
        except SettingsError as exc:
            return None, f"{where} key inferenceReplica: {exc}"

    def handle(self, body: dict[str, Any]) -> dict[str, Any]:
        identity, error = self.identity()
        request = request_from_review(body, identity=identity, identity_error=error)
        decision = review(request, self.catalog())
        return admission_review_response(body, decision)


class AdmissionServer:
    """HTTPS on ``host:port`` with the given certificate; ``port=0`` picks a free one."""

    def __init__(
        self,
        handle: Callable[[dict[str, Any]], dict[str, Any]],
        *,
        cert_file: str | Path,
        key_file: str | Path,
        host: str = "0.0.0.0",
        port: int = 9443,
    ) -> None:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(str(cert_file), str(key_file))

        class _H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path.split("?", 1)[0] != PATH:
                    self._send(404, {"error": f"no webhook at {self.path}"})
                    return
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(length) or b"{}")
                    if not isinstance(body, dict):
                        raise ValueError("AdmissionReview must be a JSON object")
                    out = handle(body)
                except Exception as exc:  # a malformed review is the caller's error, not a crash
                    log.warning("admission request failed", extra={"error": repr(exc)})
                    self._send(400, {"error": str(exc)})
                    return
                resp = out.get("response") or {}
                log.info(
                    "admission",
                    extra={
                        "uid": resp.get("uid"),
                        "allowed": resp.get("allowed"),
                        "denial": (resp.get("status") or {}).get("message"),
                    },
                )
                self._send(200, out)

            def _send(self, code: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._httpd = ThreadingHTTPServer((host, port), _H)
        self._httpd.daemon_threads = True
        self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="webhook", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> AdmissionServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
