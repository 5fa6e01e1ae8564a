"""The admission webhook under attack, against its own yardstick measured in the same run.

The server runs in its own process (so its memory is its own and the clients do not share its
interpreter) with the default ``ServerLimits`` and the real review pipeline on the seed's replica. Two
bursts of 100 concurrent CREATE reviews, each on its own TLS connection:

1. yardstick: the burst alone;
2. attacked: the burst while one idle TCP connection (never starts TLS) and 50 slowloris clients (TLS
   done, then one header byte every 0.5 s) hold workers.

Prints each burst's latencies (max, p50), the ratio attacked/yardstick, whether every review was answered
within 1 s, and the server's RSS: idle, and its peak (``VmHWM``) after the attack. Asserts nothing.

    python benchmarks/bench_webhook.py
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PATH = "/validate-ome-io-v1beta1-inferencereplica"
GOOD = 100
SLOW = 50


def serve(cert: str, key: str) -> None:
    """The server process: the real rules, a reader with no cluster behind it."""
    from omereconcile.server.webhook import AdmissionServer, ClusterReader

    class NoCluster:
        def get(self, path: str, **q: Any) -> dict[str, Any]:
            return {"data": {}}

        def list(self, path: str, **q: Any) -> dict[str, Any]:
            return {"items": []}

    reader = ClusterReader(NoCluster(), ome_namespace="ome", cache_ttl=3600)  # type: ignore[arg-type]
    srv = AdmissionServer(reader.handle, cert_file=cert, key_file=key, host="127.0.0.1", port=0).start()
    print(srv.port, flush=True)
    sys.stdin.read()  # until the parent closes the pipe
    srv.stop()


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _review_body(i: int) -> bytes:
    replica = yaml.safe_load((ROOT / "examples/llama-pool.yaml").read_text())
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": f"bench-{i}",
            "operation": "CREATE",
            "namespace": "llama-demo",
            "name": "llama-pool",
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "object": replica,
        },
    }
    body = json.dumps(review).encode()
    head = f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def _one_review(
    port: int, ctx: ssl.SSLContext, data: bytes, start: threading.Event, out: list[float]
) -> None:
    start.wait()
    t0 = time.perf_counter()
    with (
        socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
        ctx.wrap_socket(raw, server_hostname="localhost") as tls,
    ):
        tls.sendall(data)
        buf = b""
        while chunk := tls.recv(65536):
            buf += chunk
    assert buf.startswith(b"HTTP/1.1 200 "), buf[:80]
    assert b'"allowed":true' in buf, buf[-200:]
    out.append(time.perf_counter() - t0)


def burst(port: int, ctx: ssl.SSLContext) -> list[float]:
    start, out = threading.Event(), list[float]()
    threads = [
        threading.Thread(target=_one_review, args=(port, ctx, _review_body(i), start, out))
        for i in range(GOOD)
    ]
    for t in threads:
        t.start()
    time.sleep(0.2)
    start.set()
    for t in threads:
        t.join()
    if len(out) != GOOD:
        raise SystemExit(f"only {len(out)} of {GOOD} reviews were answered")
    return out


def _slowloris(port: int, ctx: ssl.SSLContext, stop: threading.Event, held: list[ssl.SSLSocket]) -> None:
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    tls = ctx.wrap_socket(raw, server_hostname="localhost")
    held.append(tls)
    for byte in f"POST {PATH} HTTP/1.1\r\nHost: x\r\n".encode():
        if stop.wait(0.5):
            return
        try:
            tls.sendall(bytes([byte]))
        except OSError:
            return


def main() -> None:
    from testbed.pki import CertificateAuthority

    ca = CertificateAuthority("bench-ca")
    tmp = Path(tempfile.mkdtemp())
    crt, key = ca.issue("localhost", dns_names=("localhost",), server=True).write(tmp, "tls")
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(crt), str(key)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    ctx = ssl.create_default_context(cadata=ca.cert_pem.decode())
    try:
        burst(port, ctx)  # warm-up: imports, caches
        time.sleep(0.5)
        idle_rss = _kib(proc.pid, "VmRSS")
        yardstick = burst(port, ctx)

        stop, held = threading.Event(), list[ssl.SSLSocket]()
        idle = socket.create_connection(("127.0.0.1", port))
        attackers = [
            threading.Thread(target=_slowloris, args=(port, ctx, stop, held), daemon=True)
            for _ in range(SLOW)
        ]
        for t in attackers:
            t.start()
        time.sleep(1.5)  # every attacker holds a worker now
        attacked = burst(port, ctx)
        held_at_end = len(held)
        stop.set()
        idle.close()
        for tls in held:
            tls.close()
        peak_rss = _kib(proc.pid, "VmHWM")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)

    def line(name: str, xs: list[float]) -> str:
        return f"{name:<34} max {max(xs) * 1000:7.1f} ms   p50 {statistics.median(xs) * 1000:7.1f} ms"

    print(f"{GOOD} concurrent CREATE reviews of the seed's replica, one TLS connection each")
    print(line("yardstick (no attackers)", yardstick))
    print(line(f"attacked ({SLOW} slowloris + 1 idle)", attacked))
    print(f"ratio attacked/yardstick (max)      {max(attacked) / max(yardstick):.2f}x")
    print(f"every review answered within 1 s    {'yes' if max(attacked) < 1.0 else 'NO'}")
    print(f"slowloris connections held          {held_at_end}")
    print(f"server RSS idle                     {idle_rss / 1024:.1f} MiB")
    print(
        f"server peak RSS (VmHWM)             {peak_rss / 1024:.1f} MiB (+{(peak_rss - idle_rss) / 1024:.1f} MiB)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2], sys.argv[3])
    else:
        main()
