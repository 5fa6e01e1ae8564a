"""The webhook's HTTPS server under the generator: every generated review (the case's objects are the
cluster the webhook reads) and every malformed body is answered with 200 (an admission response) or
400, never 500, and the server still answers ``/readyz`` after all of them.

``OMERENDER_FUZZ_REVIEWS`` sets the number of reviews (default 2,000 in CI; 100,000 in the long mode:
``OMERENDER_FUZZ_REVIEWS=100000 nice python3 -m pytest tests/fuzz/test_webhook_server.py -q -s``). The
test prints the reviews' time and the process's resident memory (the server runs in it) after the first
tenth and at the end; past the first tenth (caches and imports warm) it may grow by at most
:data:`GROWTH_LIMIT`, so a per-review leak fails the long mode.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from omereconcile.server.webhook import PATH, AdmissionServer, ClusterReader, ServerLimits
from testbed.pki import CertificateAuthority
from tests.fuzz.generate import generate
from tests.fuzz.harness import _documents, _Kube

REVIEWS = int(os.environ.get("OMERENDER_FUZZ_REVIEWS", "2000"))
SEED = int(os.environ.get("OMERENDER_FUZZ_SEED", "0"))
GROWTH_LIMIT = 64 * 1024 * 1024
MALFORMED = [
    b"",
    b"{",
    b"[]",
    b"null",
    b'{"request": []}',
    b'{"request": {"uid": 1}}',
    b'{"request": {"uid": ""}}',
    b"[" * 100_000 + b"]" * 100_000,
    b'{"request": {"uid": "u", "object": ' + b"9" * 5000 + b"}}",
    b'{"request": {"uid": "u", "object": "\\ud800"}}',
    b"\xff\xfe\x00",
    b'{"request": {"uid": "u", "object": {"kind": "InferenceReplica", "spec": {"runners": [{"template": 1}]}}}}',
]


class _Cluster:
    """The reader's cluster, swapped per review: the current case's objects."""

    def __init__(self) -> None:
        self.kube = _Kube([])

    def get(self, path: str, **q: Any) -> dict[str, Any]:
        return self.kube.get(path, **q)

    def list(self, path: str, **q: Any) -> dict[str, Any]:
        return self.kube.list(path, **q)


CLUSTER = _Cluster()
READER = ClusterReader(CLUSTER, ome_namespace="ome", cache_ttl=0)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdmissionServer, ssl.SSLContext]]:
    ca = CertificateAuthority("fuzz-ca")
    crt, key = ca.issue("localhost", dns_names=("localhost",), server=True).write(
        tmp_path_factory.mktemp("tls"), "tls"
    )
    srv = AdmissionServer(
        READER.handle, cert_file=crt, key_file=key, host="127.0.0.1", port=0, limits=ServerLimits(workers=2)
    ).start()
    try:
        yield srv, ssl.create_default_context(cadata=ca.cert_pem.decode())
    finally:
        srv.stop()


def _post(port: int, ctx: ssl.SSLContext, body: bytes) -> tuple[int, bytes]:
    head = f"POST {PATH} HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    with (
        socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        tls.sendall(head.encode() + body)
        buf = b""
        while chunk := tls.recv(65536):
            buf += chunk
    status, _, rest = buf.partition(b"\r\n\r\n")
    return int(status.split(b" ", 2)[1]), rest


def _reviews(tmp: Path) -> Iterator[tuple[str, list[Any], bytes]]:
    index = 0
    while True:
        case = generate(SEED, index)
        index += 1
        docs = _documents(case, tmp)
        if not docs:
            continue
        request = {"uid": f"fuzz-{index}", "operation": "CREATE", "userInfo": {"username": "alice"}}
        try:
            body = json.dumps({"kind": "AdmissionReview", "request": {**request, "object": docs[0]}}).encode()
        except (ValueError, TypeError, RecursionError):
            continue
        yield f"seed {SEED} index {index - 1}: {case.describe()}", docs[1:], body


def _resident() -> int:
    """This process's resident set in bytes (the server's threads run in it)."""
    with open("/proc/self/status") as status:
        line = next(ln for ln in status if ln.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def test_every_review_is_an_admission_response_or_a_400_and_the_server_keeps_serving(
    server: tuple[AdmissionServer, ssl.SSLContext], tmp_path: Path
) -> None:
    srv, ctx = server
    for body in MALFORMED:
        code, answer = _post(srv.port, ctx, body)
        assert code in (200, 400), (body[:80], answer[:300])
    reviews = _reviews(tmp_path)
    began, warm = time.monotonic(), _resident()
    for count in range(REVIEWS):
        if count == REVIEWS // 10:
            warm = _resident()
        what, cluster, body = next(reviews)
        CLUSTER.kube = _Kube(cluster)
        code, answer = _post(srv.port, ctx, body)
        assert code in (200, 400), f"{code} {answer[:300]!r}\n{what}"
        if code == 200:
            response = json.loads(answer)["response"]
            assert response["uid"] == json.loads(body)["request"]["uid"]
            assert isinstance(response["allowed"], bool)
    seconds, end = time.monotonic() - began, _resident()
    print(
        f"{REVIEWS} reviews in {seconds:.0f}s ({REVIEWS / seconds:.0f}/s); resident memory "
        f"{warm / 2**20:.0f} MiB after the first tenth, {end / 2**20:.0f} MiB at the end"
    )
    assert end - warm <= GROWTH_LIMIT, f"grew {(end - warm) / 2**20:.0f} MiB after the first tenth"
    assert srv.answers(timeout=5)
