"""The webhook's self-managed serving certificate (``omereconcile run --cert-secret NAME``).

The reconciler keeps a CA and a serving certificate in a Secret of its namespace, rotates them before
they expire, writes the pair where the webhook server reads it (``--webhook-cert``/``--webhook-key``,
re-read on change by :class:`omereconcile.server.tlsfiles.CertificateFiles`) and keeps the ``caBundle`` of every
webhook of its ValidatingWebhookConfiguration equal to the CA. No chart or manifest carries a key, so
``helm template`` and ``kustomize build`` give the same output every time.

As Gatekeeper's cert-controller does it (open-policy-agent/cert-controller, ``pkg/rotator/rotator.go``,
``CertRotator.refreshCertIfNeeded``, ``refreshCerts``, ``injectCertToWebhook``): the Secret exists first
(the chart or ``deploy/`` creates it empty, so no ``create`` permission is needed), keys ``ca.crt``,
``ca.key``, ``tls.crt``, ``tls.key``; a CA lives 10 years and a serving certificate one year, both are
replaced 90 days before they expire, both start an hour in the past (clock skew); the CA is replaced
when it does not load or does not match its key, the serving certificate when it is not signed by the
CA, does not match its key or lacks a DNS name. The Secret is written with an update carrying its
``resourceVersion``, so replicas racing at start agree on one CA: the loser of the race gets a Conflict,
reads again and uses the winner's. Every replica runs the rotator (the webhook is served by standbys
too), not only the leader (cert-controller's ``RequireLeaderElection: false``). Unlike cert-controller,
which waits for the kubelet to refresh a mounted Secret volume, each replica writes the files itself from
the Secret it read, so a new certificate is served within one check period. Keys are ECDSA P-256 (the
API server accepts them; cert-controller uses RSA 2048). When the CA changes, the caBundle carries the
previous CA beside the new one (:func:`ca_bundle`), so pods still serving the previous pair stay trusted,
and the new CA is injected before its pair is served (cert-controller's order differs: it writes the
Secret, the kubelet refreshes the volume, and its webhook reconciler injects the CA alone).
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from omereconcile.cluster.kube import ApiError, Conflict, Kube

__all__ = [
    "CA_VALIDITY",
    "LOOKAHEAD",
    "SERVER_VALIDITY",
    "Bundle",
    "CertRotator",
    "ca_bundle",
    "dns_names",
    "issue",
    "needs_refresh",
]

log = logging.getLogger("omereconcile.certs")

CA_VALIDITY = dt.timedelta(days=3650)
SERVER_VALIDITY = dt.timedelta(days=365)
LOOKAHEAD = dt.timedelta(days=90)
_BACKDATE = dt.timedelta(hours=1)
KEYS = ("ca.crt", "ca.key", "tls.crt", "tls.key")
_VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
_STRATEGIC = "application/strategic-merge-patch+json"


@dataclass(frozen=True, slots=True)
class Bundle:
    """PEM bytes of the CA and the serving pair, as the Secret holds them."""

    ca_crt: bytes
    ca_key: bytes
    tls_crt: bytes
    tls_key: bytes

    def data(self) -> dict[str, str]:
        """The Secret's ``data`` (base64)."""
        raw = dict(zip(KEYS, (self.ca_crt, self.ca_key, self.tls_crt, self.tls_key), strict=True))
        return {k: base64.b64encode(v).decode() for k, v in raw.items()}

    @classmethod
    def from_data(cls, data: Mapping[str, str] | None) -> Bundle:
        """From a Secret's ``data``; a missing or undecodable key is empty bytes (then refreshed)."""
        out: list[bytes] = []
        for key in KEYS:
            try:
                out.append(base64.b64decode((data or {}).get(key) or "", validate=True))
            except ValueError:
                out.append(b"")
        return cls(*out)


def dns_names(service: str, namespace: str) -> list[str]:
    """The names the API server may dial the webhook Service by."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _same_key(cert: x509.Certificate, key_pem: bytes) -> bool:
    key = serialization.load_pem_private_key(key_pem, password=None)
    pub = serialization.PublicFormat.SubjectPublicKeyInfo
    enc = serialization.Encoding.DER
    return bool(cert.public_key().public_bytes(enc, pub) == key.public_key().public_bytes(enc, pub))


def _fresh(cert: x509.Certificate, now: dt.datetime) -> bool:
    return cert.not_valid_before_utc <= now and now + LOOKAHEAD < cert.not_valid_after_utc


def _valid_ca(b: Bundle, now: dt.datetime) -> bool:
    try:
        ca = x509.load_pem_x509_certificate(b.ca_crt)
        constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints).value
        return constraints.ca and _fresh(ca, now) and _same_key(ca, b.ca_key)
    except (ValueError, TypeError, x509.ExtensionNotFound):
        return False


def _valid_server(b: Bundle, dns: list[str], now: dt.datetime) -> bool:
    try:
        ca = x509.load_pem_x509_certificate(b.ca_crt)
        leaf = x509.load_pem_x509_certificate(b.tls_crt)
        leaf.verify_directly_issued_by(ca)
        sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        return (
            set(dns) <= set(sans.get_values_for_type(x509.DNSName))
            and _fresh(leaf, now)
            and _same_key(leaf, b.tls_key)
        )
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False


def needs_refresh(b: Bundle, dns: list[str], now: dt.datetime) -> str | None:
    """Why the Secret's certificates must be reissued (``"ca"``: the CA too, ``"server"``), or None."""
    if not _valid_ca(b, now):
        return "ca"
    if not _valid_server(b, dns, now):
        return "server"
    return None


def _new_ca(name: str, now: dt.datetime) -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + CA_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def _new_server(ca_crt: bytes, ca_key: bytes, dns: list[str], now: dt.datetime) -> tuple[bytes, bytes]:
    ca = x509.load_pem_x509_certificate(ca_crt)
    signer = serialization.load_pem_private_key(ca_key, password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns[2])]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(min(now + SERVER_VALIDITY, ca.not_valid_after_utc))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in dns]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(signer, hashes.SHA256())  # type: ignore[arg-type]
    )
    return cert.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def issue(
    current: Bundle, dns: list[str], now: dt.datetime, ca_name: str = "omereconcile-webhook-ca"
) -> Bundle | None:
    """The bundle to write instead of ``current``, or None when ``current`` is good for now."""
    why = needs_refresh(current, dns, now)
    if why is None:
        return None
    ca_crt, ca_key = _new_ca(ca_name, now) if why == "ca" else (current.ca_crt, current.ca_key)
    tls_crt, tls_key = _new_server(ca_crt, ca_key, dns, now)
    return Bundle(ca_crt, ca_key, tls_crt, tls_key)


def ca_bundle(ca_crt: bytes, live_b64: str | None, now: dt.datetime) -> bytes:
    """The caBundle to inject: the CA, then the newest other CA of the ``live`` caBundle that is still
    valid, if any. Carrying that one previous CA keeps a webhook pod still serving a certificate of it
    (the old pods of a rollout, or an install whose certificate came from another CA, e.g. chart 0.1.0's)
    trusted until it is replaced; it leaves the bundle at the next CA change or when it expires.
    Gatekeeper's cert-controller injects the CA alone (``injectCert``); this is where it differs."""
    try:
        live = x509.load_pem_x509_certificates(base64.b64decode(live_b64 or "", validate=True))
    except ValueError:
        live = []
    own = x509.load_pem_x509_certificate(ca_crt)
    for cert in live:
        try:
            is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        except x509.ExtensionNotFound:
            is_ca = False
        if is_ca and cert != own and cert.not_valid_before_utc <= now < cert.not_valid_after_utc:
            return ca_crt + cert.public_bytes(serialization.Encoding.PEM)
    return ca_crt


def _write_atomic(path: Path, data: bytes) -> bool:
    """Replace ``path`` with ``data`` in one rename; False when it already holds exactly that."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


class CertRotator:
    """Keeps Secret ``namespace/secret``, the two files and the webhook configuration's caBundle in step."""

    def __init__(
        self,
        kube: Kube,
        *,
        namespace: str,
        secret: str,
        service: str,
        webhook_config: str,
        cert_file: str | Path,
        key_file: str | Path,
        check_every: float = 60.0,
        inject_settle: float = 1.0,
        now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.secret = secret
        self.webhook_config = webhook_config
        self.dns = dns_names(service, namespace)
        self.cert_file = Path(cert_file)
        self.key_file = Path(key_file)
        self.check_every = check_every
        self.inject_settle = inject_settle
        self._now = now
        self._sleep = sleep
        self.rotations = 0
        self._thread: threading.Thread | None = None

    @property
    def _secret_path(self) -> str:
        return f"/api/v1/namespaces/{self.namespace}/secrets/{self.secret}"

    def sync(self) -> Bundle:
        """One pass: reissue when needed, write the files, inject the CA. Raises :class:`ApiError`."""
        for _ in range(5):
            obj = self.kube.get(self._secret_path)
            current = Bundle.from_data(obj.get("data"))
            fresh = issue(current, self.dns, self._now())
            if fresh is None:
                break
            body: dict[str, Any] = dict(obj)
            body["data"] = {**(obj.get("data") or {}), **fresh.data()}
            try:
                self.kube.put(self._secret_path, body)
            except Conflict:
                continue  # another replica wrote first: use what it wrote
            self.rotations += 1
            log.info(
                "webhook certificate issued",
                extra={
                    "secret": f"{self.namespace}/{self.secret}",
                    "ca": needs_refresh(current, self.dns, self._now()) == "ca",
                },
            )
            current = fresh
            break
        else:
            raise ApiError(
                409, "Conflict", f"Secret {self.namespace}/{self.secret} kept changing under five writes"
            )
        # The CA into the caBundle before its pair is served: the previous CA stays beside it, so the pair
        # served now is verified before and after. The API server reads webhook configurations through an
        # informer, so a changed caBundle gets a moment to arrive there first.
        if self._inject(current.ca_crt):
            self._sleep(self.inject_settle)
        # The key first: a reload that sees the new key with the old certificate fails and keeps serving
        # the previous pair; the certificate's rename a moment later completes the new one.
        _write_atomic(self.key_file, current.tls_key)
        _write_atomic(self.cert_file, current.tls_crt)
        return current

    def _inject(self, ca_crt: bytes) -> bool:
        """Put the CA (and the previous one, :func:`ca_bundle`) in every webhook's caBundle; True when
        that changed one."""
        vwc = self.kube.get(_VWC + self.webhook_config)
        patches: list[dict[str, Any]] = []
        for h in vwc.get("webhooks") or []:
            live = (h.get("clientConfig") or {}).get("caBundle")
            want = base64.b64encode(ca_bundle(ca_crt, live, self._now())).decode()
            if live != want:
                patches.append({"name": h["name"], "clientConfig": {"caBundle": want}})
        if not patches:
            return False
        # Strategic merge: webhooks merge by name, so only their caBundle changes.
        self.kube.patch(_VWC + self.webhook_config, {"webhooks": patches}, content_type=_STRATEGIC)
        log.info(
            "webhook caBundle injected",
            extra={"webhook_config": self.webhook_config, "webhooks": [p["name"] for p in patches]},
        )
        return True

    def ensure(self, stop: threading.Event, *, retry: float = 2.0) -> bool:
        """Sync until it succeeds (True) or ``stop`` is set (False): the webhook cannot start without it."""
        while not stop.is_set():
            try:
                self.sync()
                return True
            except (ApiError, OSError) as exc:
                log.warning("webhook certificate not ready; retrying", extra={"error": str(exc)[:300]})
            stop.wait(retry)
        return False

    def start(self, stop: threading.Event) -> CertRotator:
        """Check every ``check_every`` seconds in a daemon thread until ``stop`` is set."""

        def loop() -> None:
            while not stop.wait(self.check_every):
                try:
                    self.sync()
                except (ApiError, OSError) as exc:
                    log.warning("webhook certificate check failed", extra={"error": str(exc)[:300]})

        self._thread = threading.Thread(target=loop, name="cert-rotator", daemon=True)
        self._thread.start()
        return self
