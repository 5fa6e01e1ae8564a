"""The webhook's serving certificate, read from files and re-read when they change.

A Secret mounted as a volume is rotated by the kubelet with an atomic symlink swap (``..data`` points at
a new timestamped folder), and cert-manager or an operator rotates the Secret well before expiry. The
server must pick the new pair up without a restart, as controller-runtime's ``certwatcher.CertWatcher``
does (``pkg/certwatcher/certwatcher.go``: ``ReadCertificate`` keeps serving the previous pair when the new
one does not load, so a half-written rotation never takes the webhook down).

Change detection is by ``stat`` of both paths, following symlinks (inode, size, mtime), checked at most
once per ``check_every`` seconds from the accept path, so no watcher thread and no inotify are needed.
"""

from __future__ import annotations

import logging
import os
import ssl
import threading
import time
from pathlib import Path

__all__ = ["CertificateFiles"]

log = logging.getLogger("omereconcile.webhook")

_Stamp = tuple[tuple[int, int, int], tuple[int, int, int]]


def _stamp(cert: Path, key: Path) -> _Stamp:
    def one(path: Path) -> tuple[int, int, int]:
        st = os.stat(path)  # follows the ..data symlink of a Secret volume
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    return (one(cert), one(key))


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A TLS 1.2+ server context for HTTP/1.1 holding the pair (raises ``ssl.SSLError``/``OSError``)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.load_cert_chain(str(cert), str(key))
    return ctx


class CertificateFiles:
    """The current :class:`ssl.SSLContext` for a certificate and key on disk.

    The first load happens in the constructor and raises: a webhook without a certificate must not start.
    Later loads that fail (a missing file, a key that does not match the certificate mid-rotation) are
    logged once per attempt and the previous pair keeps serving.
    """

    def __init__(self, cert_file: str | Path, key_file: str | Path, *, check_every: float = 1.0) -> None:
        self.cert_file = Path(cert_file)
        self.key_file = Path(key_file)
        self.check_every = check_every
        self._lock = threading.Lock()
        self._loaded = _stamp(self.cert_file, self.key_file)
        self._context = server_context(self.cert_file, self.key_file)
        self._failed: _Stamp | None = None
        self._checked = time.monotonic()
        self.reloads = 0

    def context(self) -> ssl.SSLContext:
        with self._lock:
            now = time.monotonic()
            if now - self._checked >= self.check_every:
                self._checked = now
                self._maybe_reload()
            return self._context

    def _maybe_reload(self) -> None:
        try:
            stamp = _stamp(self.cert_file, self.key_file)
        except OSError as exc:
            log.warning(
                "webhook certificate unreadable; serving the previous one",
                extra={"cert": str(self.cert_file), "error": exc.strerror or type(exc).__name__},
            )
            return
        if stamp == self._loaded or stamp == self._failed:
            return
        try:
            ctx = server_context(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            self._failed = stamp
            reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or type(exc).__name__
            log.warning(
                "webhook certificate reload failed; serving the previous one",
                extra={"cert": str(self.cert_file), "error": str(reason)},
            )
            return
        self._context, self._loaded, self._failed = ctx, stamp, None
        self.reloads += 1
        log.info("webhook certificate reloaded", extra={"cert": str(self.cert_file)})
