"""The cluster network as kube-apiserver reaches it: an HTTP CONNECT proxy on a Unix socket, named as the
``cluster`` egress in the API server's EgressSelectorConfiguration (what Konnectivity's HTTP-CONNECT mode
serves on control planes that cannot route to Service addresses themselves).

kube-apiserver calls a webhook registered by Service at the Service's ClusterIP
(k8s.io/apiserver ``pkg/util/proxy/transport.go`` ``ResolveCluster``, used unless
``--enable-aggregator-routing``) and dials it with the ``cluster`` egress dialer
(``pkg/util/webhook/authentication.go``, ``NewDefaultAuthenticationInfoResolverWrapper``), sending
``CONNECT <clusterIP>:<port>`` here (``pkg/server/egressselector/egress_selector.go``). No kube-proxy runs in
the testbed, so this proxy is the Service's routing: :meth:`ClusterEgress.route` sends a ClusterIP and port
to the loopback address a server of the test listens on. A Service address with no route is refused (the
API server reports it as it reports an unreachable Service); any other address is dialed directly, as it
would be without the egress configuration.
"""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import socket
import socketserver
import tempfile
import threading
from collections import Counter
from pathlib import Path

import yaml

__all__ = ["ClusterEgress"]

_MAX_HEAD = 8192


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    """Copy until EOF or an error, then half-close ``dst`` so the other side sees the end."""
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


class ClusterEgress:
    """The proxy; :meth:`start` it before kube-apiserver and pass :meth:`config_file`'s path to
    ``--egress-selector-config-file``."""

    def __init__(self, service_cidr: str) -> None:
        self.service_network = ipaddress.ip_network(service_cidr)
        self._dir: Path | None = None  # made by start(), short: a socket path has ~100 bytes
        self._routes: dict[tuple[str, int], list[tuple[str, int]]] = {}
        self._turn = 0
        self._lock = threading.Lock()
        # CONNECTs by the address asked for, and how each ended: "routed", "refused", "direct".
        self.tunnels: Counter[tuple[str, int, str]] = Counter()
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None

    def route(self, ip: str, port: int, *to: tuple[str, int]) -> None:
        """Send the API server's connections to ``ip:port`` (a ClusterIP) to the addresses ``to`` in
        turn, as kube-proxy spreads them over a Service's endpoints; a new call replaces them."""
        with self._lock:
            self._routes[(ip, port)] = list(to)

    def unroute(self, ip: str, port: int) -> None:
        with self._lock:
            self._routes.pop((ip, port), None)

    def count(self, ip: str, port: int, outcome: str = "routed") -> int:
        """How many CONNECTs to ``ip:port`` ended as ``outcome`` so far."""
        with self._lock:
            return self.tunnels[(ip, port, outcome)]

    @property
    def socket_path(self) -> Path:
        assert self._dir is not None, "start() first"
        return self._dir / "cluster.sock"

    def config_file(self, path: Path) -> Path:
        """Write the EgressSelectorConfiguration that sends the ``cluster`` egress here (after start())."""
        doc = {
            "apiVersion": "apiserver.k8s.io/v1beta1",
            "kind": "EgressSelectorConfiguration",
            "egressSelections": [
                {
                    "name": "cluster",
                    "connection": {
                        "proxyProtocol": "HTTPConnect",
                        "transport": {"uds": {"udsName": str(self.socket_path)}},
                    },
                }
            ],
        }
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    def _target(self, host: str, port: int) -> tuple[tuple[str, int] | None, str]:
        with self._lock:
            routes = self._routes.get((host, port))
            self._turn += 1
            routed = routes[self._turn % len(routes)] if routes else None
        if routed is not None:
            return routed, "routed"
        try:
            in_services = ipaddress.ip_address(host) in self.service_network
        except ValueError:
            in_services = False
        return (None, "refused") if in_services else ((host, port), "direct")

    def start(self) -> ClusterEgress:
        """Listen (once; a second call is a no-op)."""
        if self._server is not None:
            return self
        self._dir = Path(tempfile.mkdtemp(prefix="tb-egress-"))
        egress = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                client: socket.socket = self.request
                head = b""
                while b"\r\n\r\n" not in head and len(head) < _MAX_HEAD:
                    chunk = client.recv(4096)
                    if not chunk:
                        return
                    head += chunk
                method, _, rest = head.split(b"\r\n", 1)[0].decode(errors="replace").partition(" ")
                authority = rest.split(" ", 1)[0]
                host, _, port_s = authority.rpartition(":")
                host = host.strip("[]")
                if method != "CONNECT" or not port_s.isdigit():
                    client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                    return
                target, outcome = egress._target(host, int(port_s))
                with egress._lock:
                    egress.tunnels[(host, int(port_s), outcome)] += 1
                upstream: socket.socket | None = None
                if target is not None:
                    with contextlib.suppress(OSError):
                        upstream = socket.create_connection(target, timeout=5)
                if upstream is None:
                    client.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
                    return
                upstream.settimeout(None)
                with upstream:
                    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
                    back.start()
                    _pipe(client, upstream)
                    back.join()

        class _Server(socketserver.ThreadingUnixStreamServer):
            daemon_threads = True

        self._server = _Server(str(self.socket_path), _Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="cluster-egress", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
