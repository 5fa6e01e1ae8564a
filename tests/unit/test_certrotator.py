"""The self-managed webhook certificate's rules: when the CA and the serving pair are (re)issued."""

from __future__ import annotations

import base64
import datetime as dt
import ssl
from pathlib import Path
from typing import Any

from cryptography import x509

from omereconcile.server.certrotator import (
    CA_VALIDITY,
    LOOKAHEAD,
    SERVER_VALIDITY,
    Bundle,
    CertRotator,
    ca_bundle,
    dns_names,
    issue,
    needs_refresh,
)

NOW = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
DNS = dns_names("omereconcile-webhook", "ome")


def _first() -> Bundle:
    fresh = issue(Bundle(b"", b"", b"", b""), DNS, NOW)
    assert fresh is not None
    return fresh


def test_an_empty_secret_gets_a_ca_and_a_serving_pair_for_the_service() -> None:
    b = _first()
    assert needs_refresh(b, DNS, NOW) is None
    assert issue(b, DNS, NOW) is None  # nothing to do: the Secret is left alone
    leaf = x509.load_pem_x509_certificate(b.tls_crt)
    ca = x509.load_pem_x509_certificate(b.ca_crt)
    leaf.verify_directly_issued_by(ca)
    sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == [
        "omereconcile-webhook",
        "omereconcile-webhook.ome",
        "omereconcile-webhook.ome.svc",
        "omereconcile-webhook.ome.svc.cluster.local",
    ]
    assert leaf.not_valid_after_utc - NOW == SERVER_VALIDITY
    assert ca.not_valid_after_utc - NOW == CA_VALIDITY
    assert Bundle.from_data(b.data()) == b


def test_the_pair_loads_into_a_tls_server_context(tmp_path: Path) -> None:
    b = _first()
    (tmp_path / "tls.crt").write_bytes(b.tls_crt)
    (tmp_path / "tls.key").write_bytes(b.tls_key)
    ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")


def test_the_serving_pair_is_renewed_within_the_lookahead_under_the_same_ca() -> None:
    b = _first()
    before = SERVER_VALIDITY - LOOKAHEAD - dt.timedelta(days=1)
    assert needs_refresh(b, DNS, NOW + before) is None
    later = NOW + SERVER_VALIDITY - LOOKAHEAD + dt.timedelta(days=1)
    assert needs_refresh(b, DNS, later) == "server"
    renewed = issue(b, DNS, later)
    assert renewed is not None
    assert (renewed.ca_crt, renewed.ca_key) == (b.ca_crt, b.ca_key)  # the caBundle stays valid
    assert renewed.tls_crt != b.tls_crt


def test_the_ca_is_replaced_when_it_expires_soon_or_does_not_match_its_key() -> None:
    b = _first()
    assert needs_refresh(b, DNS, NOW + CA_VALIDITY - LOOKAHEAD + dt.timedelta(days=1)) == "ca"
    other = _first()
    assert needs_refresh(Bundle(b.ca_crt, other.ca_key, b.tls_crt, b.tls_key), DNS, NOW) == "ca"
    assert needs_refresh(Bundle(b"garbage", b.ca_key, b.tls_crt, b.tls_key), DNS, NOW) == "ca"


def test_a_pair_from_another_ca_or_for_another_service_or_with_a_wrong_key_is_reissued() -> None:
    b, other = _first(), _first()
    assert needs_refresh(Bundle(b.ca_crt, b.ca_key, other.tls_crt, other.tls_key), DNS, NOW) == "server"
    assert needs_refresh(Bundle(b.ca_crt, b.ca_key, b.tls_crt, other.tls_key), DNS, NOW) == "server"
    assert needs_refresh(b, dns_names("renamed", "ome"), NOW) == "server"
    assert Bundle.from_data({"ca.crt": "%%%"}).ca_crt == b""


def _b64(*pems: bytes) -> str:
    return base64.b64encode(b"".join(pems)).decode()


def test_the_ca_bundle_carries_the_one_previous_ca_still_valid() -> None:
    new, old, older = _first(), _first(), _first()
    assert ca_bundle(new.ca_crt, None, NOW) == new.ca_crt  # a fresh install: the CA alone
    assert ca_bundle(new.ca_crt, _b64(new.ca_crt), NOW) == new.ca_crt
    # The CA changed: the one it replaces stays trusted beside it, and the result is stable.
    carried = ca_bundle(new.ca_crt, _b64(old.ca_crt), NOW)
    assert carried == new.ca_crt + old.ca_crt
    assert ca_bundle(new.ca_crt, _b64(carried), NOW) == carried
    # At the next change the newest previous CA is carried and the older one leaves.
    assert ca_bundle(older.ca_crt, _b64(carried), NOW) == older.ca_crt + new.ca_crt
    # An expired CA, a serving certificate and garbage are never carried.
    assert ca_bundle(new.ca_crt, _b64(old.ca_crt), NOW + CA_VALIDITY) == new.ca_crt
    assert ca_bundle(new.ca_crt, _b64(old.tls_crt), NOW) == new.ca_crt
    assert ca_bundle(new.ca_crt, "not base64!", NOW) == new.ca_crt


class _Kube:
    """The Secret and the webhook configuration the rotator reads and writes, in memory."""

    def __init__(self, cert_file: Path, ca_b64: str) -> None:
        self.objects: dict[str, dict[str, Any]] = {
            "secret": {"metadata": {"name": "s"}},
            "vwc": {"webhooks": [{"name": "h", "clientConfig": {"caBundle": ca_b64}}]},
        }
        self.cert_file = cert_file
        self.served_at_injection: bytes | None = None

    def _key(self, path: str) -> str:
        return "secret" if "/secrets/" in path else "vwc"

    def get(self, path: str) -> dict[str, Any]:
        return self.objects[self._key(path)]

    def put(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.objects[self._key(path)] = body
        return body

    def patch(self, path: str, body: dict[str, Any], content_type: str = "") -> dict[str, Any]:
        self.served_at_injection = self.cert_file.read_bytes() if self.cert_file.exists() else b""
        hook = self.objects["vwc"]["webhooks"][0]
        hook["clientConfig"]["caBundle"] = body["webhooks"][0]["clientConfig"]["caBundle"]
        return self.objects["vwc"]


def test_a_new_ca_is_injected_beside_the_previous_one_before_its_pair_is_served(tmp_path: Path) -> None:
    previous = _first()
    kube = _Kube(tmp_path / "tls.crt", _b64(previous.ca_crt))
    slept: list[float] = []
    rotator = CertRotator(
        kube,  # type: ignore[arg-type]
        namespace="ome",
        secret="s",
        service="omereconcile-webhook",
        webhook_config="v",
        cert_file=tmp_path / "tls.crt",
        key_file=tmp_path / "tls.key",
        now=lambda: NOW,
        sleep=slept.append,
    )
    issued = rotator.sync()
    assert kube.served_at_injection == b""  # nothing of the new CA was served before the caBundle had it
    bundle = kube.objects["vwc"]["webhooks"][0]["clientConfig"]["caBundle"]
    assert bundle == _b64(issued.ca_crt, previous.ca_crt)
    assert (tmp_path / "tls.crt").read_bytes() == issued.tls_crt
    assert slept == [rotator.inject_settle]
    # At rest: no write, no pause.
    kube.served_at_injection = None
    assert rotator.sync() == issued
    assert (kube.served_at_injection, slept) == (None, [rotator.inject_settle])
