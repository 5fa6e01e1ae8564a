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
import queue
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omereconcile.cluster.kube import ApiError, Kube, NotFound
from omereconcile.cluster.observe import build_catalog, fetch_catalog_objects, paths
from omereconcile.server.tlsfiles import CertificateFiles
from omereconcile.server.webhook_http import (
    Gone,
    Refused,
    content_length,
    handshake,
    linger_close,
    read_body,
    read_head,
    write_json,
)
from omerender.admission import (
    CONFIG_KEY,
    IdentityConfigError,
    admission_review_response,
    parse_identity_config,
    request_from_review,
    review,
)
from omerender.catalog import Catalog, ControllerIdentity

__all__ = ["PATH", "READY_PATH", "AdmissionServer", "ClusterReader", "ServerLimits", "parse_review"]

PATH = "/validate-ome-io-v1beta1-inferencereplica"
READY_PATH = "/readyz"  # GET over TLS: what the readiness check dials
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
        namespaces: Sequence[str] | None = None,
    ) -> None:
        self.kube = kube
        # The watched namespaces (``run --namespace``), or None for every one. A one-namespace install's
        # RBAC lets it list namespaced models and runtimes there only, and its webhook configuration
        # sends it that namespace's replicas only (a namespaceSelector); cluster-scoped kinds are listed
        # cluster-wide either way.
        self.namespaces = list(namespaces) if namespaces else None
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
                cat = build_catalog(fetch_catalog_objects(self.kube, self.namespaces))
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
        # The error is the cause Go's controllerIdentity wraps: the ConfigMap read's, or the block's.
        try:
            cm = self.kube.get(paths.configmap(self.ome_namespace, self.config_name))
        except NotFound:
            return None, f'configmaps "{self.config_name}" not found'
        except ApiError as exc:
            return None, exc.message or str(exc)
        data = cm.get("data")
        try:
            return parse_identity_config(data.get(CONFIG_KEY) if isinstance(data, dict) else None), None
        except IdentityConfigError as exc:
            return None, str(exc)

    def handle(self, body: dict[str, Any]) -> dict[str, Any]:
        identity, error = self.identity()
        request = request_from_review(body, identity=identity, identity_error=error)
        decision = review(request, self.catalog())
        return admission_review_response(body, decision)


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What one client can cost the webhook.

    ``workers`` bounds the connections served at once (each slow client holds one until its deadline),
    ``queue`` the accepted connections waiting for a worker, and ``backlog`` the kernel's queue behind
    them (the API server's connects wait there instead of failing). ``max_body`` is twice the API
    server's 3 MiB request limit, since an UPDATE review carries the object and the old object;
    ``body_budget`` caps the body bytes read and decoded at once, so the worst case of every worker
    holding a maximal body cannot take the process past its memory limit.
    """

    workers: int = 64
    queue: int = 256
    backlog: int = 1024
    handshake_timeout: float = 5.0
    request_timeout: float = 10.0
    write_timeout: float = 5.0
    max_body: int = 6 * 1024 * 1024
    body_budget: int = 24 * 1024 * 1024


class _ByteBudget:
    """Body bytes in flight across workers; a request waits for room until its own deadline."""

    def __init__(self, total: int) -> None:
        self._free = total
        self._cond = threading.Condition()

    def acquire(self, n: int, deadline: float) -> bool:
        with self._cond:
            while self._free < n:
                left = deadline - time.monotonic()
                if left <= 0 or not self._cond.wait(left):
                    if self._free >= n:
                        break
                    return False
            self._free -= n
            return True

    def release(self, n: int) -> None:
        with self._cond:
            self._free += n
            self._cond.notify_all()


def parse_review(body: bytes) -> dict[str, Any]:
    """The AdmissionReview in ``body``, or :class:`Refused` (400) saying what is wrong with it.

    Only a review with a ``request`` object and a non-empty string ``uid`` is reviewed: an answer must
    echo the uid, and the API server discards one that does not.
    """
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):  # undecodable bytes, bad syntax, nesting, huge integers
        raise Refused(400, "the request body is not valid JSON; send an AdmissionReview") from None
    if not isinstance(doc, dict):
        raise Refused(400, "the request body must be a JSON object: an AdmissionReview")
    request = doc.get("request")
    if not isinstance(request, dict):
        raise Refused(400, "the AdmissionReview has no request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise Refused(400, "the AdmissionReview's request has no uid")
    return doc


def _peer(sock: socket.socket) -> str:
    try:
        host, port = sock.getpeername()[:2]
    except OSError:
        return "unknown"
    return f"{host}:{port}"


class AdmissionServer:
    """HTTPS on ``host:port``; ``port=0`` picks a free one.

    An acceptor thread only accepts; a fixed pool of ``limits.workers`` threads does the TLS handshake,
    reads the request and answers, each step under its deadline (``webhook_http``). The certificate is
    re-read when its files change (``tlsfiles``). ``GET /readyz`` answers ``ok`` so :meth:`answers`
    can prove end to end that the TLS port serves.
    """

    def __init__(
        self,
        handle: Callable[[dict[str, Any]], dict[str, Any]],
        *,
        cert_file: str | Path,
        key_file: str | Path,
        host: str = "0.0.0.0",
        port: int = 9443,
        limits: ServerLimits = ServerLimits(),
    ) -> None:
        self.handle = handle
        self.limits = limits
        self.certificate = CertificateFiles(cert_file, key_file)
        self._budget = _ByteBudget(limits.body_budget)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET  # --webhook-addr [::]:9443
        self._sock = socket.create_server((host, port), family=family, backlog=limits.backlog)
        self._sock.settimeout(0.5)  # the acceptor wakes to notice stop()
        self._address: tuple[str, int] = self._sock.getsockname()[:2]
        self._pending: queue.Queue[socket.socket | None] = queue.Queue(maxsize=limits.queue)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._accept, name="webhook-accept", daemon=True)]
        self._threads += [
            threading.Thread(target=self._work, name=f"webhook-{i}", daemon=True)
            for i in range(limits.workers)
        ]

    @property
    def port(self) -> int:
        return int(self._address[1])

    def start(self) -> AdmissionServer:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._threads[0].join(timeout=2)
        self._sock.close()
        while True:  # connections accepted but never served
            try:
                conn = self._pending.get_nowait()
            except queue.Empty:
                break
            if conn is not None:
                conn.close()
        for _ in self._threads[1:]:  # then one stop sign per worker, taken after its current client
            try:
                self._pending.put(None, timeout=1)
            except queue.Full:
                break

    def answers(self, timeout: float = 2.0) -> bool:
        """Whether the TLS port completes a handshake and answers ``GET /readyz`` within ``timeout``.

        controller-runtime's webhook ``Server.StartedChecker`` dials the port with TLS the same way; this
        also waits for the answer, so a pool that cannot take a connection counts as not ready.
        """
        host = self._address[0]
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # proves the port serves TLS, not who it is
        try:
            with (
                socket.create_connection((host, self.port), timeout=timeout) as raw,
                ctx.wrap_socket(raw) as tls,
            ):
                tls.sendall(b"GET " + READY_PATH.encode() + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
                return tls.recv(64).startswith(b"HTTP/1.1 200 ")
        except (OSError, ssl.SSLError):
            return False

    # -- threads --------------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.05)  # EMFILE and friends: back off rather than spin
                continue
            while True:  # a full queue leaves the rest in the kernel's backlog
                try:
                    self._pending.put(conn, timeout=0.5)
                    break
                except queue.Full:
                    if self._stop.is_set():
                        conn.close()
                        return

    def _work(self) -> None:
        while True:
            conn = self._pending.get()
            if conn is None:
                return
            peer = _peer(conn)
            try:
                self._serve(conn, peer)
            except Gone as gone:
                log.info(
                    "webhook client disconnected", extra={"peer": peer, "phase": gone.phase, "why": gone.why}
                )
                conn.close()
            except Exception:  # a bug: keep the worker, log it with its trace, drop the connection
                log.exception("webhook connection failed", extra={"peer": peer})
                conn.close()

    def _serve(self, conn: socket.socket, peer: str) -> None:
        lim = self.limits
        tls = handshake(conn, self.certificate.context(), lim.handshake_timeout)
        deadline = time.monotonic() + lim.request_timeout
        try:
            code, answer = self._exchange(tls, deadline)
        except Refused as refused:
            log.info(
                "webhook request refused",
                extra={"peer": peer, "code": refused.code, "error": refused.message},
            )
            try:
                write_json(tls, refused.code, {"error": refused.message}, lim.write_timeout)
            finally:
                linger_close(tls)
            return
        except BaseException:
            tls.close()
            raise
        try:
            write_json(tls, code, answer, lim.write_timeout)
        finally:
            tls.close()

    def _exchange(self, tls: ssl.SSLSocket, deadline: float) -> tuple[int, dict[str, Any]]:
        lim = self.limits
        request = read_head(tls, deadline, lim.request_timeout)
        if request.method == "GET" and request.path == READY_PATH:
            return 200, {"status": "ok"}
        if request.path != PATH:
            raise Refused(404, f"no webhook at {request.path[:200]}; the InferenceReplica webhook is {PATH}")
        if request.method != "POST":
            raise Refused(405, f"{request.method[:20]} is not served; the webhook takes POST")
        ctype = request.headers.get("Content-Type")
        if ctype is None or request.headers.get_content_type() != "application/json":
            raise Refused(415, "Content-Type must be application/json")
        length = content_length(request, lim.max_body)
        if not self._budget.acquire(length, deadline):
            raise Refused(503, "the webhook is busy with other large reviews; retry")
        try:
            body = read_body(tls, request, length, deadline, lim.request_timeout)
            return 200, self._review(body)
        finally:
            self._budget.release(length)

    def _review(self, body: bytes) -> dict[str, Any]:
        doc = parse_review(body)
        uid = doc["request"]["uid"]
        try:
            out = self.handle(doc)
        except Exception:  # a bug in the rules or the reader: its trace goes to the log, not the client
            log.exception("webhook review failed", extra={"uid": uid})
            raise Refused(500, "the webhook failed to review this request; its log has the details") from None
        resp = out.get("response") or {}
        log.info(
            "admission",
            extra={
                "uid": resp.get("uid"),
                "allowed": resp.get("allowed"),
                "denial": (resp.get("status") or {}).get("message"),
            },
        )
        return out
