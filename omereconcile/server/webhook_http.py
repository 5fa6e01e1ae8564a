"""One HTTP/1.1 exchange on an accepted connection, every step under a deadline.

The webhook serves one request per connection (``Connection: close``), so a client that keeps a
connection open holds nothing once its answer is written. Each step is bounded: the TLS handshake by
``handshake_timeout`` in total (not per packet, so a client trickling a ClientHello is cut off too), the
request head and body by ``request_timeout`` in total, the head by :data:`MAX_HEAD` bytes, the body by
``max_body`` bytes, refused from ``Content-Length`` before a byte of it is read.

Every refusal is a :class:`Refused` with the HTTP status and the webhook's own words; every way a client
can go away is a :class:`Gone` with the phase it went away in. Neither carries Python exception text.
"""

from __future__ import annotations

import http.client
import io
import json
import select
import socket
import ssl
import time
from dataclasses import dataclass
from email.message import Message
from typing import Any, Final

__all__ = [
    "MAX_HEAD",
    "Gone",
    "Refused",
    "Request",
    "handshake",
    "linger_close",
    "read_body",
    "read_head",
    "write_json",
]

MAX_HEAD: Final = 16 * 1024  # request line plus headers; the API server sends well under 1 KiB
_CHUNK: Final = 64 * 1024

_REASONS: Final = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class Refused(Exception):
    """An answer given without reviewing: ``code`` and a message in the webhook's words."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Gone(Exception):
    """The client went away or never spoke: ``phase`` is handshake, head, body or response."""

    def __init__(self, phase: str, why: str) -> None:
        super().__init__(f"{phase}: {why}")
        self.phase = phase
        self.why = why


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    headers: Message
    leftover: bytes  # body bytes that arrived with the head


def _remaining(deadline: float) -> float:
    return deadline - time.monotonic()


def _ssl_why(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, str) and reason:
        return reason.lower().replace("_", " ")
    if isinstance(exc, ConnectionError | ssl.SSLEOFError | ssl.SSLZeroReturnError):
        return "connection closed"
    return "TLS error"


def handshake(sock: socket.socket, ctx: ssl.SSLContext, timeout: float) -> ssl.SSLSocket:
    """The server side of the TLS handshake, finished within ``timeout`` seconds in total or :class:`Gone`."""
    deadline = time.monotonic() + timeout
    sock.setblocking(False)
    try:
        tls = ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
    except OSError as exc:  # the peer reset before a byte was read
        raise Gone("handshake", _ssl_why(exc)) from None
    try:
        _finish_handshake(tls, deadline, timeout)
    except Gone:
        tls.close()  # the wrapped socket owns the descriptor now
        raise
    tls.setblocking(True)
    return tls


def _finish_handshake(tls: ssl.SSLSocket, deadline: float, timeout: float) -> None:
    poller = select.poll()  # not select(): descriptors past 1024 are normal under load
    poller.register(tls, select.POLLIN)
    while True:
        try:
            tls.do_handshake()
            return
        except ssl.SSLWantReadError:
            poller.modify(tls, select.POLLIN)
        except ssl.SSLWantWriteError:
            poller.modify(tls, select.POLLOUT)
        except (ssl.SSLError, OSError) as exc:
            raise Gone("handshake", _ssl_why(exc)) from None
        left = _remaining(deadline)
        if left <= 0 or not poller.poll(left * 1000):
            raise Gone("handshake", f"not finished within {timeout:g}s")


def _recv(tls: ssl.SSLSocket, deadline: float, phase: str, timeout: float) -> bytes:
    left = _remaining(deadline)
    if left <= 0:
        raise Refused(408, f"the request did not arrive within {timeout:g}s")
    tls.settimeout(left)
    try:
        data = tls.recv(_CHUNK)
    except TimeoutError:
        raise Refused(408, f"the request did not arrive within {timeout:g}s") from None
    except (ssl.SSLError, OSError) as exc:
        raise Gone(phase, _ssl_why(exc)) from None
    if not data:
        raise Gone(phase, "connection closed")
    return data


def read_head(tls: ssl.SSLSocket, deadline: float, timeout: float) -> Request:
    """The request line and headers (at most :data:`MAX_HEAD` bytes) before ``deadline``."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        if len(buf) > MAX_HEAD:
            raise Refused(431, f"the request line and headers exceed {MAX_HEAD} bytes")
        buf += _recv(tls, deadline, "head", timeout)
    head, _, leftover = buf.partition(b"\r\n\r\n")
    if len(head) > MAX_HEAD:
        raise Refused(431, f"the request line and headers exceed {MAX_HEAD} bytes")
    line, _, fields = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise Refused(400, "the request line is not HTTP/1.x")
    try:
        headers = http.client.parse_headers(io.BytesIO(fields + b"\r\n\r\n"))
    except http.client.HTTPException:
        raise Refused(431, "the request carries too many headers") from None
    return Request(parts[0], parts[1].split("?", 1)[0], headers, leftover)


def content_length(request: Request, max_body: int) -> int:
    """The declared body size, refused when absent, malformed or above ``max_body`` (nothing read yet)."""
    if request.headers.get("Transfer-Encoding") is not None:
        raise Refused(411, "send the AdmissionReview with a Content-Length, not a chunked body")
    values = request.headers.get_all("Content-Length") or []
    if not values:
        raise Refused(400, "the request has no body; send an AdmissionReview")
    if len(set(values)) != 1 or not values[0].strip().isdigit():
        raise Refused(400, "Content-Length must be one decimal number")
    length = int(values[0].strip())
    if length > max_body:
        raise Refused(413, f"the request body is {length} bytes; the webhook accepts at most {max_body}")
    if length == 0:
        raise Refused(400, "the request has no body; send an AdmissionReview")
    return length


def read_body(tls: ssl.SSLSocket, request: Request, length: int, deadline: float, timeout: float) -> bytes:
    """Exactly ``length`` body bytes before ``deadline`` (bytes past them are ignored)."""
    parts = [request.leftover[:length]]
    got = len(parts[0])
    while got < length:
        data = _recv(tls, deadline, "body", timeout)
        parts.append(data[: length - got])
        got += len(parts[-1])
    return b"".join(parts)


def write_json(tls: ssl.SSLSocket, code: int, obj: Any, timeout: float) -> None:
    """The whole response, ``Connection: close``, within ``timeout`` seconds or :class:`Gone`."""
    body = json.dumps(obj, separators=(",", ":")).encode()
    head = (
        f"HTTP/1.1 {code} {_REASONS.get(code, 'Error')}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    tls.settimeout(timeout)
    try:
        tls.sendall(head + body)
    except TimeoutError:
        raise Gone("response", f"not read within {timeout:g}s") from None
    except (ssl.SSLError, OSError) as exc:
        raise Gone("response", _ssl_why(exc)) from None


def linger_close(sock: socket.socket, seconds: float = 0.5, cap: int = 1 << 20) -> None:
    """Close after the client has read the answer: stop writing, then discard what it still sends.

    Closing with unread bytes in the receive queue makes the kernel send a reset, which can destroy a
    413 before the client reads it (Go's ``net/http`` lingers the same way, ``closeWriteAndWait``).
    Bounded by ``seconds`` and ``cap`` bytes, and nothing is kept.
    """
    deadline = time.monotonic() + seconds
    try:
        sock.shutdown(socket.SHUT_WR)
        drained = 0
        while drained < cap:
            left = _remaining(deadline)
            if left <= 0:
                break
            sock.settimeout(left)
            data = sock.recv(_CHUNK)
            if not data:
                break
            drained += len(data)
    except (OSError, ValueError):
        pass  # the peer is gone either way; closing is all that is left
    finally:
        sock.close()
