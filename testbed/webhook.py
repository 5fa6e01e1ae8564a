"""Serve a validating admission webhook from this process and register it with the test API server.

The handler is a plain callable: it receives the AdmissionReview request as a dict and returns the
`response` dict (`allowed`, optional `status`/`warnings`); `uid` is filled in when missing. `allow()` and
`deny()` build the common answers.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from testbed.pki import CertificateAuthority
from testbed.rawkube import JSON, RawKube, status_of

Handler = Callable[[JSON], JSON]

PROBE_ANNOTATION = "testbed.omerender.dev/webhook-probe"
PROBE_MESSAGE = "testbed webhook probe"
_VWC_PATH = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def allow(warnings: list[str] | None = None) -> JSON:
    resp: JSON = {"allowed": True}
    if warnings:
        resp["warnings"] = warnings
    return resp


def deny(message: str, code: int = 403, reason: str = "Forbidden") -> JSON:
    return {"allowed": False, "status": {"code": code, "message": message, "reason": reason}}


class WebhookServer:
    """HTTPS server on a free loopback port, with a cert for IP:127.0.0.1 and DNS:localhost."""

    def __init__(self, handler: Handler, *, path: str = "/validate") -> None:
        self.handler = handler
        self.path = path
        self._ca = CertificateAuthority("testbed-webhook-ca")
        self.ca_pem = self._ca.cert_pem
        self._dir = Path(tempfile.mkdtemp(prefix="testbed-webhook-"))
        crt, key = self._ca.issue(
            "localhost", dns_names=("localhost",), ip_addresses=("127.0.0.1",), server=True
        ).write(self._dir, "tls")
        self._ssl = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._ssl.load_cert_chain(str(crt), str(key))
        self._probe_token = uuid.uuid4().hex
        self._probe_seen = threading.Event()
        self.requests: list[JSON] = []  # every AdmissionReview request seen (probes excluded)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._registered: str | None = None
        self._raw: RawKube | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "start() first"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}{self.path}"

    def start(self) -> WebhookServer:
        server = self

        class _Req(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    review = json.loads(self.rfile.read(length) or b"{}")
                    out = server._review(review)
                    body = json.dumps(out).encode()
                    self.send_response(200)
                except Exception as exc:  # a handler bug must surface as a webhook error, not hang
                    body = json.dumps({"error": repr(exc)}).encode()
                    self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output quiet

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Req)
        httpd.daemon_threads = True
        httpd.socket = self._ssl.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        self._thread = threading.Thread(target=httpd.serve_forever, name="testbed-webhook", daemon=True)
        self._thread.start()
        return self

    def _review(self, review: JSON) -> JSON:
        request: JSON = review.get("request") or {}
        obj = request.get("object") or {}
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if annotations.get(PROBE_ANNOTATION) == self._probe_token:
            self._probe_seen.set()
            response = deny(PROBE_MESSAGE)
        else:
            self.requests.append(request)
            response = dict(self.handler(request))
        response.setdefault("uid", request.get("uid", ""))
        return {
            "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
            "kind": "AdmissionReview",
            "response": response,
        }

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.unregister()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> WebhookServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ registration

    def register(
        self,
        raw: RawKube,
        *,
        name: str = "testbed-validator.ome.io",
        config_name: str | None = None,
        rules: list[JSON] | None = None,
        namespace_selector: JSON | None = None,
        failure_policy: str = "Fail",
    ) -> str:
        """Create (or replace) a ValidatingWebhookConfiguration pointing at this server; returns its name."""
        cfg_name = config_name or f"testbed-{uuid.uuid4().hex[:8]}"
        hook: JSON = {
            "name": name,
            "clientConfig": {"url": self.url, "caBundle": base64.b64encode(self.ca_pem).decode()},
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": failure_policy,
            "timeoutSeconds": 5,
            "rules": rules
            or [
                {
                    "apiGroups": ["ome.io"],
                    "apiVersions": ["*"],
                    "resources": ["inferencereplicas"],
                    "operations": ["CREATE", "UPDATE"],
                    "scope": "Namespaced",
                }
            ],
        }
        if namespace_selector is not None:
            hook["namespaceSelector"] = namespace_selector
        body = {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": cfg_name},
            "webhooks": [hook],
        }
        with contextlib.suppress(Exception):
            raw.delete(f"{_VWC_PATH}/{cfg_name}")
        raw.post(_VWC_PATH, body)
        self._registered = cfg_name
        self._raw = raw
        return cfg_name

    def unregister(self) -> None:
        if self._registered and self._raw is not None:
            try:
                self._raw.delete(f"{_VWC_PATH}/{self._registered}")
            except Exception as exc:
                if status_of(exc) != 404:
                    raise
        self._registered = None

    def wait_active(self, raw: RawKube, namespace: str = "default", timeout: float = 30.0) -> None:
        """Block until the API server calls this webhook (registration is eventually consistent).

        Probes with dry-run creates of an InferenceReplica carrying a private annotation; the server answers
        those itself (deny) without calling the handler, so nothing is persisted and the handler sees only
        real requests. Requires the default rules (ome.io inferencereplicas CREATE).
        """
        probe = {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {
                "generateName": "webhook-probe-",
                "annotations": {PROBE_ANNOTATION: self._probe_token},
            },
            "spec": {"component": "engine", "replicas": 0},
        }
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            self._probe_seen.clear()
            try:
                raw.post(
                    f"/apis/ome.io/v1beta1/namespaces/{namespace}/inferencereplicas", probe, dryRun="All"
                )
                last = "probe admitted (webhook not called yet)"
            except Exception as exc:
                last = repr(exc)
                if PROBE_MESSAGE in str(getattr(exc, "body", "") or exc):
                    return
            time.sleep(0.2)
        raise TimeoutError(f"webhook {self.url} not active after {timeout}s: {last}")
