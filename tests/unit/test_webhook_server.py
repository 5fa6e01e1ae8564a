"""The webhook's HTTPS server under hostile clients: every attack is bounded and answered in its own words.

Each test runs a real TLS server on 127.0.0.1 with short deadlines and a small pool, and speaks raw bytes
over TLS so it can send what no well-behaved client would.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from omereconcile.server.webhook import PATH, AdmissionServer, ServerLimits
from testbed.pki import CertificateAuthority, pem_to_der, presented_certificate
from testbed.secretvolume import project_secret

LIMITS = ServerLimits(
    workers=4, queue=16, handshake_timeout=1.0, request_timeout=1.5, write_timeout=1.0, max_body=64 * 1024
)


def _allow(review: dict[str, Any]) -> dict[str, Any]:
    uid = review["request"]["uid"]
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": True},
    }


def good_review(uid: str = "u-1") -> bytes:
    return json.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": uid}}
    ).encode()


def post(body: bytes, *, ctype: str | None = "application/json", length: int | None = None) -> bytes:
    head = f"POST {PATH} HTTP/1.1\r\nHost: localhost\r\n"
    if ctype is not None:
        head += f"Content-Type: {ctype}\r\n"
    head += f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    return head.encode() + body


class Served:
    def __init__(self, srv: AdmissionServer, ca: CertificateAuthority) -> None:
        self.srv = srv
        self.ca_pem = ca.cert_pem.decode()
        self.ctx = ssl.create_default_context(cadata=self.ca_pem)

    def tls(self, timeout: float = 5.0, *, tls12: bool = False) -> ssl.SSLSocket:
        """A client connection; ``tls12`` for tests that poll it, since TLS 1.3 servers send session
        tickets after the handshake, which would make the socket readable before any answer."""
        ctx = self.ctx
        if tls12:
            ctx = ssl.create_default_context(cadata=self.ca_pem)
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        raw = socket.create_connection(("127.0.0.1", self.srv.port), timeout=timeout)
        return ctx.wrap_socket(raw, server_hostname="localhost")

    def exchange(self, data: bytes, timeout: float = 5.0) -> tuple[int, dict[str, Any]]:
        with self.tls(timeout) as tls:
            tls.sendall(data)
            return read_response(tls)


def read_response(tls: ssl.SSLSocket) -> tuple[int, dict[str, Any]]:
    buf = b""
    while True:
        chunk = tls.recv(65536)
        if not chunk:
            break
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def _closed_by_server(sock: socket.socket | ssl.SSLSocket, within: float) -> float:
    """Seconds until the server closed ``sock`` (reads whatever it sent first)."""
    start = time.monotonic()
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionError, ssl.SSLError):
        pass
    return time.monotonic() - start


def disconnects(caplog: pytest.LogCaptureFixture, count: int) -> list[logging.LogRecord]:
    """The disconnect lines, once ``count`` of them are logged (the worker logs after the client sees the close)."""
    deadline = time.monotonic() + 30
    while True:
        gone = [r for r in caplog.records if r.getMessage() == "webhook client disconnected"]
        if len(gone) >= count or time.monotonic() > deadline:
            return gone
        time.sleep(0.05)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[CertificateAuthority, Path, Path]:
    ca = CertificateAuthority("webhook-test-ca")
    crt, key = ca.issue(
        "localhost", dns_names=("localhost",), ip_addresses=("127.0.0.1",), server=True
    ).write(tmp_path_factory.mktemp("tls"), "tls")
    return ca, crt, key


def _serving(pki: tuple[CertificateAuthority, Path, Path], limits: ServerLimits) -> Iterator[Served]:
    ca, crt, key = pki
    srv = AdmissionServer(
        _allow, cert_file=crt, key_file=key, host="127.0.0.1", port=0, limits=limits
    ).start()
    try:
        yield Served(srv, ca)
    finally:
        srv.stop()


@pytest.fixture
def served(pki: tuple[CertificateAuthority, Path, Path]) -> Iterator[Served]:
    yield from _serving(pki, LIMITS)


@pytest.fixture
def held(pki: tuple[CertificateAuthority, Path, Path]) -> Iterator[Served]:
    """A server whose deadlines outlast any test, so a held connection stays held."""
    yield from _serving(
        pki,
        ServerLimits(workers=4, queue=16, handshake_timeout=60, request_timeout=60, max_body=64 * 1024),
    )


def test_a_good_review_is_answered(served: Served) -> None:
    code, body = served.exchange(post(good_review("abc")))
    assert code == 200
    assert body["response"] == {"uid": "abc", "allowed": True}


def still_open(sock: socket.socket | ssl.SSLSocket) -> bool:
    """Whether the server has neither answered nor closed ``sock``: nothing to read (nothing consumed)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return not poller.poll(0)


def test_an_idle_connection_blocks_nobody(held: Served) -> None:
    with socket.create_connection(("127.0.0.1", held.srv.port)) as idle:
        time.sleep(0.2)  # accepted and handed to a worker
        assert held.exchange(post(good_review()))[0] == 200
        assert still_open(idle)  # the review did not wait for the idle connection to go


def test_an_idle_connection_is_closed_at_the_handshake_deadline(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="omereconcile.webhook")
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", served.srv.port)) as idle:
        _closed_by_server(idle, within=30)
    assert time.monotonic() - start > LIMITS.handshake_timeout - 0.2  # not before its deadline
    gone = disconnects(caplog, 1)
    assert [(r.phase, r.why) for r in gone] == [("handshake", "not finished within 1s")]  # type: ignore[attr-defined]
    assert all(r.exc_info is None for r in caplog.records)


def test_slowloris_blocks_nobody(held: Served) -> None:
    slow = [held.tls(tls12=True) for _ in range(2)]
    try:
        for tls in slow:
            tls.sendall(post(good_review())[:20])  # a request that never ends
        for i in range(6):
            assert held.exchange(post(good_review(f"g{i}")))[0] == 200
        assert all(still_open(tls) for tls in slow)
    finally:
        for tls in slow:
            tls.close()


def test_slowloris_is_cut_at_the_request_deadline(served: Served) -> None:
    start = time.monotonic()
    with served.tls(tls12=True) as tls:
        for byte in post(good_review()):  # one byte every 0.1 s, each well inside any per-read timeout
            if not still_open(tls):
                break
            tls.sendall(bytes([byte]))
            time.sleep(0.1)
        code, body = read_response(tls)
    assert (code, body) == (408, {"error": "the request did not arrive within 1.5s"})
    assert time.monotonic() - start > LIMITS.request_timeout - 0.2  # the whole request's deadline


def test_a_huge_body_is_refused_with_413_before_a_byte_of_it_is_read(served: Served) -> None:
    with served.tls() as tls:
        tls.sendall(post(b"", length=20 * 1024 * 1024))  # declares 20 MB and sends none of it
        code, body = read_response(tls)
    assert code == 413
    assert body == {"error": "the request body is 20971520 bytes; the webhook accepts at most 65536"}


def test_a_huge_body_actually_sent_still_gets_its_413(served: Served) -> None:
    # Reading while another thread writes one SSL socket can fail on the client's side under load
    # (OpenSSL: "cipher operation failed"), a fault of the test's two threads, not of the server: such a
    # try is repeated on a new connection, and every answer read must be the 413.
    for attempt in range(3):
        try:
            code = _huge_body_answer(served)
        except ssl.SSLError as exc:
            if attempt == 2 or "CIPHER_OPERATION_FAILED" not in str(exc):
                raise
            continue
        assert code == 413
        return


def _huge_body_answer(served: Served) -> int:
    with served.tls() as tls:
        tls.sendall(post(b"", length=1024 * 1024))
        sender = threading.Thread(target=lambda: _send_quietly(tls, b"x" * (1024 * 1024)), daemon=True)
        sender.start()
        try:
            code, _ = read_response(tls)
        finally:
            # The socket closes when the block ends: the sender must be done with it first (a write on
            # an SSL socket another thread has closed is a use-after-free in the ssl module: a segfault).
            # The server closes the connection after its 413, so the sender's write ends either way.
            sender.join(timeout=30)
            assert not sender.is_alive(), "the sender still writes after the 413"
    return int(code)


def _send_quietly(tls: ssl.SSLSocket, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the server may close before all of it is sent
        tls.sendall(data)


@pytest.mark.parametrize(
    ("data", "code", "message"),
    [
        (post(good_review(), ctype="text/plain"), 415, "Content-Type must be application/json"),
        (post(good_review(), ctype=None), 415, "Content-Type must be application/json"),
        (post(b""), 400, "the request has no body; send an AdmissionReview"),
        (
            f"POST {PATH} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n".encode(),
            400,
            "the request has no body; send an AdmissionReview",
        ),
        (
            f"POST {PATH} HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode(),
            411,
            "send the AdmissionReview with a Content-Length, not a chunked body",
        ),
        (post(b"", length=-1), 400, "Content-Length must be one decimal number"),
        (
            post(b'{"request": {"uid": "x"}'),
            400,
            "the request body is not valid JSON; send an AdmissionReview",
        ),
        (post(b"[" * 50_000), 400, "the request body is not valid JSON; send an AdmissionReview"),
        (post(b"\xff\xfe{}"), 400, "the request body is not valid JSON; send an AdmissionReview"),
        (post(b"1" * 5000), 400, "the request body is not valid JSON; send an AdmissionReview"),
        (post(b"[]"), 400, "the request body must be a JSON object: an AdmissionReview"),
        (post(b"{}"), 400, "the AdmissionReview has no request"),
        (post(b'{"request": null}'), 400, "the AdmissionReview has no request"),
        (post(b'{"request": {}}'), 400, "the AdmissionReview's request has no uid"),
        (post(b'{"request": {"uid": ""}}'), 400, "the AdmissionReview's request has no uid"),
        (post(b'{"request": {"uid": 7}}'), 400, "the AdmissionReview's request has no uid"),
        (
            f"GET {PATH} HTTP/1.1\r\n\r\n".encode(),
            405,
            "GET is not served; the webhook takes POST",
        ),
        (
            b"POST /mutate HTTP/1.1\r\n\r\n",
            404,
            f"no webhook at /mutate; the InferenceReplica webhook is {PATH}",
        ),
        (b"HELLO\r\n\r\n", 400, "the request line is not HTTP/1.x"),
        (
            b"POST / HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n",
            431,
            "the request line and headers exceed 16384 bytes",
        ),
    ],
    ids=[
        "wrong-content-type",
        "no-content-type",
        "empty-body",
        "no-content-length",
        "chunked",
        "bad-content-length",
        "garbage-json",
        "deep-nesting",
        "not-utf8",
        "huge-integer",
        "not-an-object",
        "no-request",
        "null-request",
        "no-uid",
        "empty-uid",
        "non-string-uid",
        "wrong-method",
        "wrong-path",
        "not-http",
        "huge-head",
    ],
)
def test_bad_requests_get_the_webhooks_words(served: Served, data: bytes, code: int, message: str) -> None:
    assert served.exchange(data) == (code, {"error": message})


def test_disconnects_are_one_log_line_each_without_a_trace(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="omereconcile.webhook")
    socket.create_connection(("127.0.0.1", served.srv.port)).close()  # before the handshake
    with served.tls() as tls:  # mid-head
        tls.sendall(b"POST " + PATH.encode())
    with served.tls() as tls:  # mid-body
        tls.sendall(post(b'{"request":', length=500))
    assert served.exchange(post(good_review()))[0] == 200
    gone = disconnects(caplog, 3)
    assert sorted(r.phase for r in gone) == ["body", "handshake", "head"]  # type: ignore[attr-defined]
    assert all(r.why == "connection closed" or r.phase == "handshake" for r in gone)  # type: ignore[attr-defined]
    assert all(r.exc_info is None for r in caplog.records)


def test_a_failing_review_is_a_500_in_the_webhooks_words(
    pki: tuple[CertificateAuthority, Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    ca, crt, key = pki

    def broken(review: dict[str, Any]) -> dict[str, Any]:
        raise KeyError("secret internals")

    srv = AdmissionServer(
        broken, cert_file=crt, key_file=key, host="127.0.0.1", port=0, limits=LIMITS
    ).start()
    try:
        code, body = Served(srv, ca).exchange(post(good_review()))
    finally:
        srv.stop()
    assert (code, body) == (
        500,
        {"error": "the webhook failed to review this request; its log has the details"},
    )


def test_many_concurrent_reviews_are_all_answered_while_the_pool_is_partly_held(served: Served) -> None:
    held = [served.tls() for _ in range(2)]  # two workers wait on these until the request deadline
    try:
        with ThreadPoolExecutor(max_workers=20) as pool:
            codes = list(pool.map(lambda i: served.exchange(post(good_review(f"c{i}")))[0], range(40)))
        assert codes == [200] * 40
    finally:
        for tls in held:
            tls.close()


def test_answers_proves_the_tls_port_serves(pki: tuple[CertificateAuthority, Path, Path]) -> None:
    _, crt, key = pki
    srv = AdmissionServer(_allow, cert_file=crt, key_file=key, host="127.0.0.1", port=0, limits=LIMITS)
    assert srv.answers(timeout=0.5) is False  # bound but not serving: the handshake never comes
    srv.start()
    assert srv.answers(timeout=30) is True
    srv.stop()
    assert srv.answers(timeout=0.5) is False


# -- certificate rotation -----------------------------------------------------------------------------


def _wait(what: str, check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def serves(port: int, pem: bytes) -> bool:
    return presented_certificate("127.0.0.1", port) == pem_to_der(pem)


def test_a_rotated_secret_is_served_without_a_restart_and_a_broken_one_is_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="omereconcile.webhook")
    ca = CertificateAuthority("rotating-ca")
    first, second = (
        ca.issue("localhost", dns_names=("localhost",), ip_addresses=("127.0.0.1",), server=True)
        for _ in range(2)
    )
    folder = tmp_path / "serving-certs"
    project_secret(folder, {"tls.crt": first.cert_pem, "tls.key": first.key_pem}, 1)
    srv = AdmissionServer(
        _allow,
        cert_file=folder / "tls.crt",
        key_file=folder / "tls.key",
        host="127.0.0.1",
        port=0,
        limits=LIMITS,
    ).start()
    try:
        assert serves(srv.port, first.cert_pem)
        project_secret(folder, {"tls.crt": second.cert_pem, "tls.key": second.key_pem}, 2)
        _wait("the rotated certificate", lambda: serves(srv.port, second.cert_pem))
        assert Served(srv, ca).exchange(post(good_review()))[0] == 200
        # A rotation caught half-way (the new certificate with the old key) keeps the working pair.
        project_secret(folder, {"tls.crt": first.cert_pem, "tls.key": second.key_pem}, 3)
        _wait(  # each connection is a chance to notice the change
            "the failed reload to be logged",
            lambda: (
                serves(srv.port, second.cert_pem)
                and any("reload failed" in r.getMessage() for r in caplog.records)
            ),
        )
        assert serves(srv.port, second.cert_pem)
        assert srv.certificate.reloads == 1
    finally:
        srv.stop()


def test_body_bytes_in_flight_are_capped_and_a_waiting_review_goes_on_once_room_frees(
    pki: tuple[CertificateAuthority, Path, Path],
) -> None:
    ca, crt, key = pki
    limits = ServerLimits(workers=4, request_timeout=30, max_body=64 * 1024, body_budget=64 * 1024)
    srv = AdmissionServer(
        _allow, cert_file=crt, key_file=key, host="127.0.0.1", port=0, limits=limits
    ).start()
    served = Served(srv, ca)
    body = good_review() + b" " * (10_000 - len(good_review()))
    answers: list[tuple[int, dict[str, Any]]] = []
    try:
        hog = served.tls()
        hog.sendall(post(b"{", length=60_000))  # reserves 60 000 of the 65 536 bytes, sends one
        time.sleep(0.3)
        waiter = threading.Thread(target=lambda: answers.append(served.exchange(post(body), timeout=30)))
        waiter.start()
        waiter.join(timeout=1.0)
        assert answers == []  # 10 000 more bytes do not fit while the hog holds its reservation
        hog.close()  # the hog goes away: its reservation is released
        waiter.join(timeout=30)
        assert answers == [(200, _allow(json.loads(body)))]
    finally:
        srv.stop()
