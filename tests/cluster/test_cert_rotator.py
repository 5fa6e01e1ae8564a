"""The self-managed webhook certificate (``run --cert-secret``) on the test control plane, under
deploy/'s RBAC: the reconciler fills the empty Secret, injects the CA into the webhook configuration,
serves the pair for the Service's name, and repairs each thing it owns when it goes stale: a serving
certificate from another CA, a CA that no longer matches its key, a caBundle someone removed."""

from __future__ import annotations

import base64
import copy
import socket
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from cryptography import x509
from helpers import REPO, kubectl_stdin
from reconciler_proc import Reconciler

from omereconcile.server.certrotator import Bundle, dns_names, issue
from testbed.testing import Cluster

SECRET, VWC, SERVICE = (
    "omereconcile-webhook-server-cert",
    "omereconcile-inferencereplica",
    "omereconcile-webhook",
)
VWC_PATH = f"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/{VWC}"
SECRET_PATH = f"/api/v1/namespaces/ome/secrets/{SECRET}"


@pytest.fixture
def registration(cluster: Cluster, reconciler_kubeconfig: object) -> Iterator[None]:
    """deploy/'s empty Secret, the certificate RBAC, and its webhook configuration, made harmless here:
    it selects no namespace and ignores failures."""
    component = REPO / "deploy" / "components" / "self-managed-cert"
    cluster.kubectl("apply", "-f", str(component / "rbac.yaml"))
    cluster.kubectl("delete", "secret", SECRET, "-n", "ome", "--ignore-not-found")  # start empty
    cluster.kubectl("apply", "-f", str(component / "secret.yaml"))
    docs = yaml.safe_load_all((REPO / "deploy" / "base" / "webhook.yaml").read_text())
    vwc: dict[str, Any] = copy.deepcopy(
        next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    )
    vwc["webhooks"][0]["failurePolicy"] = "Ignore"
    vwc["webhooks"][0]["namespaceSelector"] = {"matchLabels": {"omerender.test/no-such": "namespace"}}
    cluster.kubectl("delete", "validatingwebhookconfiguration", VWC, "--ignore-not-found")
    kubectl_stdin(cluster, yaml.safe_dump(vwc), "create")
    yield
    cluster.kubectl("delete", "validatingwebhookconfiguration", VWC, "--ignore-not-found")


def _peer(port: int, ca_b64: str) -> x509.Certificate:
    """The certificate served on ``port``, verified as the API server verifies it."""
    ctx = ssl.create_default_context(cadata=base64.b64decode(ca_b64).decode())
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        ctx.wrap_socket(raw, server_hostname=f"{SERVICE}.ome.svc") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der)


def test_the_reconciler_issues_injects_serves_and_repairs_its_certificate(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], registration: None, tmp_path: Any
) -> None:
    rec = reconcilers(
        "--webhook-cert", str(tmp_path / "certs" / "tls.crt"),
        "--webhook-key", str(tmp_path / "certs" / "tls.key"),
        "--webhook-addr", "127.0.0.1:0",
        "--cert-secret", SECRET,
        "--cert-service", SERVICE,
        "--cert-webhook-config", VWC,
        "--cert-check-period", "1",
    )  # fmt: skip
    port = rec.wait(
        "the webhook to listen",
        lambda: next((int(r["port"]) for r in rec.lines() if r.get("msg") == "webhook listening"), None),
        timeout=60,
    )

    def state() -> tuple[Bundle, str]:
        data = cluster.raw.get(SECRET_PATH).get("data")
        ca = cluster.raw.get(VWC_PATH)["webhooks"][0]["clientConfig"].get("caBundle", "")
        return Bundle.from_data(data), ca

    def settled() -> tuple[Bundle, str] | None:
        bundle, ca = state()
        # The Secret's CA first in the caBundle (then the previous CA, once the CA has changed).
        injected = bundle.ca_crt and base64.b64decode(ca).startswith(bundle.ca_crt)
        return (bundle, ca) if injected else None

    first, ca = rec.wait("the CA in the Secret and the caBundle", settled, timeout=30)
    served = _peer(port, ca)
    assert served.serial_number == x509.load_pem_x509_certificate(first.tls_crt).serial_number
    assert f"{SERVICE}.ome.svc" in served.extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    ).value.get_values_for_type(x509.DNSName)

    # A serving pair from another CA: reissued under the same CA, served without a restart.
    other = issue(Bundle(b"", b"", b"", b""), dns_names(SERVICE, "ome"), served.not_valid_before_utc)
    assert other is not None
    cluster.raw.patch(
        SECRET_PATH,
        {
            "data": {
                "tls.crt": base64.b64encode(other.tls_crt).decode(),
                "tls.key": base64.b64encode(other.tls_key).decode(),
            }
        },
    )

    def reissued() -> x509.Certificate | None:
        bundle, now_ca = state()
        if bundle.ca_crt != first.ca_crt or bundle.tls_crt in (first.tls_crt, other.tls_crt):
            return None
        try:
            peer = _peer(port, now_ca)
        except ssl.SSLError:
            return None
        return (
            peer
            if peer.serial_number == x509.load_pem_x509_certificate(bundle.tls_crt).serial_number
            else None
        )

    second = rec.wait("a new serving certificate under the same CA", reissued, timeout=30)
    assert second.serial_number != served.serial_number

    # The caBundle removed (e.g. by a tool that re-applied the configuration): injected again.
    vwc = cluster.raw.get(VWC_PATH)
    del vwc["webhooks"][0]["clientConfig"]["caBundle"]
    cluster.raw.put(VWC_PATH, vwc)
    rec.wait("the caBundle injected again", settled, timeout=30)

    # A CA that does not match its key: a new CA, a new pair, the new CA injected and served.
    cluster.raw.patch(SECRET_PATH, {"data": {"ca.key": base64.b64encode(other.ca_key).decode()}})

    def new_ca() -> tuple[Bundle, str] | None:
        got = settled()
        return got if got is not None and got[0].ca_crt != first.ca_crt else None

    third, third_ca = rec.wait("a new CA, injected", new_ca, timeout=30)
    # The previous CA stays in the caBundle beside it: a replica still serving its pair stays trusted.
    assert base64.b64decode(third_ca) == third.ca_crt + first.ca_crt

    def verified() -> x509.Certificate | None:
        try:
            return _peer(port, third_ca)
        except ssl.SSLError:  # the previous pair, until the files are re-read
            return None

    rec.wait("the pair of the new CA served", verified, timeout=30)
    issued = [r for r in rec.lines() if r.get("msg") == "webhook certificate issued"]
    assert [r.get("ca") for r in issued] == [True, False, True], issued
    print(
        f"\ncertificate issued {len(issued)} times (CA, serving pair, CA); caBundle injected each time the CA changed or was removed"
    )
