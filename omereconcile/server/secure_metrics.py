"""``/metrics`` over HTTPS, for callers the API server authenticates and authorizes.

As controller-runtime's secure metrics serving does (``pkg/metrics/server``, ``SecureServing: true``
with ``filters.WithAuthenticationAndAuthorization``): the bearer token of each request is checked with a
TokenReview (``authentication.k8s.io/v1``), then the user it names with a SubjectAccessReview
(``authorization.k8s.io/v1``) for the non-resource URL ``/metrics`` and the request's verb in lower case
(``get``). No token or an invalid one: 401; a user not allowed: 403. Answers are cached as
controller-runtime's delegating authenticator and authorizer cache them (tokens 1 minute; allowed 5
minutes, denied 30 seconds), keyed by a hash of the token, so a scrape every few seconds costs two API
requests per minute at most. Without a certificate of its own (``--metrics-cert-dir``) the server makes a
self-signed one at start, as controller-runtime does; scrapers skip verification or trust it explicitly.

Plain HTTP without either check is served only when asked for (``--no-metrics-secure``). The TLS
handshake runs in the request's own thread with a deadline, so a client that never completes one holds
only its thread.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from omereconcile.cluster.kube import ApiError, Kube
from omereconcile.metrics import Metrics, send

__all__ = ["MetricsServer", "ReviewAuthorizer", "self_signed"]

log = logging.getLogger("omereconcile.metrics")

PATH = "/metrics"
_AUTHN_TTL = 60.0
_ALLOWED_TTL = 300.0
_DENIED_TTL = 30.0
_HANDSHAKE_SECONDS = 10.0

# (HTTP status, reason for the log and the body)
Verdict = tuple[int, str]


class ReviewAuthorizer:
    """TokenReview then SubjectAccessReview for one request's bearer token, with cached answers."""

    def __init__(self, kube: Kube, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.kube = kube
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], tuple[float, Verdict]] = {}
        self.reviews = 0  # API requests made, for tests and the log

    def check(self, authorization: str | None, verb: str) -> Verdict:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return 401, "no bearer token"
        key = (hashlib.sha256(token.strip().encode()).hexdigest(), verb)
        now = self._clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]
        verdict, ttl = self._review(token.strip(), verb)
        if ttl:
            with self._lock:
                if len(self._cache) > 1024:  # bounded: drop what expired, else everything
                    self._cache = {k: v for k, v in self._cache.items() if v[0] > now}
                    if len(self._cache) > 1024:
                        self._cache.clear()
                self._cache[key] = (now + ttl, verdict)
        return verdict

    def _review(self, token: str, verb: str) -> tuple[Verdict, float]:
        try:
            self.reviews += 1
            tr = self.kube.post(
                "/apis/authentication.k8s.io/v1/tokenreviews",
                {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}},
            )
            status = tr.get("status") or {}
            if not status.get("authenticated"):
                return (401, "token not authenticated"), _AUTHN_TTL
            user = status.get("user") or {}
            spec: dict[str, Any] = {
                "user": user.get("username", ""),
                "groups": user.get("groups") or [],
                "nonResourceAttributes": {"path": PATH, "verb": verb},
            }
            if user.get("uid"):
                spec["uid"] = user["uid"]
            if user.get("extra"):
                spec["extra"] = user["extra"]
            self.reviews += 1
            sar = self.kube.post(
                "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec},
            )
        except ApiError as exc:  # not cached: the next scrape asks again
            log.warning("metrics authorization failed", extra={"error": str(exc)[:300]})
            return (500, "authorization unavailable"), 0.0
        if (sar.get("status") or {}).get("allowed"):
            return (200, "allowed"), _ALLOWED_TTL
        return (403, f"{spec['user']} may not {verb} {PATH}"), _DENIED_TTL


def self_signed(directory: Path, host: str = "omereconcile-metrics") -> tuple[Path, Path]:
    """A self-signed serving pair written to ``directory`` (controller-runtime makes one the same way
    when no certificate is given): ECDSA P-256, one year."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=365))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(host), x509.DNSName("localhost")]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    crt, pem = directory / "tls.crt", directory / "tls.key"
    crt.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    pem.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    pem.chmod(0o600)
    return crt, pem


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    tls: ssl.SSLContext | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(_HANDSHAKE_SECONDS)
        try:
            # wrap_socket takes the descriptor over: the TLS socket is the one to close.
            tls = self.tls.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return  # a failed or abandoned handshake: nothing to answer
        try:
            super().finish_request(tls, client_address)
        finally:
            tls.close()


class _Server6(_Server):
    address_family = socket.AF_INET6


class MetricsServer:
    """``/metrics`` on its own address: HTTPS with ``authorizer`` (secure), or plain HTTP when it is None
    and ``cert_file`` is None (the explicit opt-in)."""

    def __init__(
        self,
        metrics: Metrics,
        host: str,
        port: int,
        *,
        authorizer: ReviewAuthorizer | None,
        cert_file: Path | None = None,
        key_file: Path | None = None,
    ) -> None:
        self.metrics = metrics
        self.authorizer = authorizer
        owner = self

        class _H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] != PATH:
                    send(self, 404, b"not found", "text/plain")
                    return
                if owner.authorizer is not None:
                    code, reason = owner.authorizer.check(self.headers.get("Authorization"), "get")
                    if code != 200:
                        send(self, code, reason.encode(), "text/plain")
                        return
                send(self, 200, owner.metrics.exposition(), CONTENT_TYPE_LATEST)

            def log_message(self, format: str, *args: Any) -> None:
                return

        server_cls = _Server6 if ":" in host else _Server
        self._httpd: _Server = server_cls((host, port), _H)
        if cert_file is not None and key_file is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.minimum_version = ssl.TLSVersion.TLSv1_2
            ctx.load_cert_chain(str(cert_file), str(key_file))
            self._httpd.tls = ctx
        self.secure = self._httpd.tls is not None
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="metrics", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def serve(
    metrics: Metrics,
    kube: Kube,
    host: str,
    port: int,
    *,
    secure: bool,
    cert_dir: str | None,
) -> MetricsServer:
    """The server ``omereconcile run`` starts: secure with the given or a self-signed certificate."""
    if not secure:
        return MetricsServer(metrics, host, port, authorizer=None).start()
    if cert_dir:
        crt, key = Path(cert_dir) / "tls.crt", Path(cert_dir) / "tls.key"
    else:
        crt, key = self_signed(Path(tempfile.mkdtemp(prefix="omereconcile-metrics-")))
    return MetricsServer(
        metrics, host, port, authorizer=ReviewAuthorizer(kube), cert_file=crt, key_file=key
    ).start()
