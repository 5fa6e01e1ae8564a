"""The admission webhook of ``omereconcile run``, registered on the API server with deploy/'s
ValidatingWebhookConfiguration (pointed at the process by URL), rejecting the seed's table through kubectl."""

from __future__ import annotations

import base64
import contextlib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from helpers import REPO, example_replica, kubectl_stdin, replica
from reconciler_proc import Reconciler

from testbed.pki import CertificateAuthority, pem_to_der, presented_certificate
from testbed.secretvolume import project_secret
from testbed.testing import Cluster

VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
HOOK = "inferencereplica.ome-webhook-server.validator"


@contextlib.contextmanager
def registered(cluster: Cluster, port: int, ca_pem: bytes) -> Iterator[str]:
    docs = list(yaml.safe_load_all((REPO / "deploy" / "base" / "webhook.yaml").read_text()))
    vwc: dict[str, Any] = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    name = f"{vwc['metadata']['name']}-test"
    vwc["metadata"] = {"name": name}
    path = vwc["webhooks"][0]["clientConfig"]["service"]["path"]
    vwc["webhooks"][0]["clientConfig"] = {
        "url": f"https://127.0.0.1:{port}{path}",
        "caBundle": base64.b64encode(ca_pem).decode(),
    }
    cluster.raw.post(VWC, vwc)
    try:
        yield name
    finally:
        cluster.raw.delete(f"{VWC}/{name}")


def server_cert(tmp: Path) -> tuple[bytes, Path, Path]:
    ca = CertificateAuthority("omereconcile-webhook-ca")
    crt, key = ca.issue(
        "localhost", dns_names=("localhost",), ip_addresses=("127.0.0.1",), server=True
    ).write(tmp, "tls")
    return ca.cert_pem, Path(crt), Path(key)


def _create(cluster: Cluster, obj: dict[str, Any]) -> tuple[int, str]:
    proc = kubectl_stdin(cluster, yaml.safe_dump(obj), "apply", check=False)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def test_webhook_rejects_four_rows_of_the_seed_table_through_kubectl(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, tmp_path: Path
) -> None:
    ca_pem, crt, key = server_cert(tmp_path)
    rec = reconcilers("--webhook-cert", str(crt), "--webhook-key", str(key), "--webhook-addr", "127.0.0.1:0")
    port = rec.wait(
        "the webhook to listen",
        lambda: next((int(r["port"]) for r in rec.lines() if r.get("msg") == "webhook listening"), None),
        timeout=20,
    )
    prefix = f"InferenceReplica {namespace}/"
    rows: list[tuple[str, dict[str, Any], str]] = [
        (
            "parent-ref",
            {"parentRef": {"name": "chat"}},
            "spec.parentRef is set by the InferenceService controller on the replicas it projects; "
            "omit it on a standalone InferenceReplica",
        ),
        (
            "pinned",
            {"modelRef": None, "runtimeRef": {"name": "vllm-llama-3-2-1b-instruct", "autoSync": False}},
            "spec.runtimeRef.autoSync=false and spec.runtimeRef.revision are not honored on an "
            "InferenceReplica; the live runtime renders",
        ),
        (
            "hpa",
            {"autoscaler": {"class": "HPA", "maxReplicas": 4}},
            'spec.autoscaler.class "HPA" creates no scaler on a standalone InferenceReplica; target the '
            "scale subresource with your own HorizontalPodAutoscaler or ScaledObject, or use class "
            '"External"',
        ),
        (
            "nested-min-ready",
            {"lifecycle": {"minReadySeconds": 30}},
            "spec.lifecycle.minReadySeconds is not read on an InferenceReplica; set spec.minReadySeconds",
        ),
    ]
    with registered(cluster, port, ca_pem):
        probe = example_replica(namespace, lifecycle={"minReadySeconds": 30})
        probe["metadata"]["name"] = "probe"
        rec.wait(
            "the API server to call the webhook",
            lambda: HOOK in _create(cluster, probe)[1],
            timeout=30,
        )
        for name, spec, message in rows:
            obj = example_replica(namespace, **spec)
            obj["metadata"]["name"] = name
            obj["spec"] = {k: v for k, v in obj["spec"].items() if v is not None}
            code, out = _create(cluster, obj)
            assert code != 0, f"{name} was admitted: {out}"
            assert f'admission webhook "{HOOK}" denied the request: {prefix}{name}: {message}' in out, out
        # The seed's own example is admitted, and the reconciler's finalizer write passes the webhook.
        code, out = _create(cluster, example_replica(namespace))
        assert code == 0, out
        assert out == "inferencereplica.ome.io/llama-pool created"
        rec.wait(
            "the finalizer (a metadata-only update through the webhook)",
            lambda: "ome.io/ir-teardown" in (replica(cluster, namespace)["metadata"].get("finalizers") or []),
        )
        # Immutable for every writer: a change of spec.component.
        obj = example_replica(namespace, component="decoder")
        code, out = _create(cluster, obj)
        assert code != 0
        assert f"{prefix}llama-pool: spec.component is immutable" in out
    admission = [r for r in rec.lines() if r.get("msg") == "admission"]
    assert any(r.get("allowed") is False for r in admission)


def _secret_files(cluster: Cluster, namespace: str, name: str) -> dict[str, bytes]:
    secret = cluster.raw.get(f"/api/v1/namespaces/{namespace}/secrets/{name}")
    return {key: base64.b64decode(value) for key, value in secret["data"].items()}


def _tls_secret(namespace: str, name: str, cert_pem: bytes, key_pem: bytes) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": base64.b64encode(cert_pem).decode(),
            "tls.key": base64.b64encode(key_pem).decode(),
        },
    }


def test_a_rotated_certificate_secret_is_served_without_a_restart(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, tmp_path: Path
) -> None:
    """The Deployment mounts Secret omereconcile-webhook-cert; rotating it must not need a restart.

    The Secret lives on the test control plane and its data reaches the process as the kubelet delivers
    it (a new generation behind ``..data``); the API server keeps calling the webhook across the swap.
    """
    ca = CertificateAuthority("omereconcile-webhook-ca")
    first, second = (
        ca.issue("localhost", dns_names=("localhost",), ip_addresses=("127.0.0.1",), server=True)
        for _ in range(2)
    )
    name = "omereconcile-webhook-cert"
    path = f"/api/v1/namespaces/{namespace}/secrets"
    cluster.raw.post(path, _tls_secret(namespace, name, first.cert_pem, first.key_pem))
    volume = tmp_path / "serving-certs"
    project_secret(volume, _secret_files(cluster, namespace, name), 1)
    rec = reconcilers(
        "--webhook-cert",
        str(volume / "tls.crt"),
        "--webhook-key",
        str(volume / "tls.key"),
        "--webhook-addr",
        "127.0.0.1:0",
    )
    port = rec.wait(
        "the webhook to listen",
        lambda: next((int(r["port"]) for r in rec.lines() if r.get("msg") == "webhook listening"), None),
        timeout=20,
    )
    probes = rec.probe_port()

    def ready() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{probes}/readyz", timeout=5) as resp:
                return resp.status == 200
        except urllib.error.HTTPError as exc:
            exc.close()
            return False

    assert presented_certificate("127.0.0.1", port) == pem_to_der(first.cert_pem)
    with registered(cluster, port, ca.cert_pem):
        denied = example_replica(namespace, lifecycle={"minReadySeconds": 30})
        rec.wait(
            "the API server to call the webhook", lambda: HOOK in _create(cluster, denied)[1], timeout=30
        )
        assert rec.wait("/readyz (a TLS dial of the webhook)", lambda: ready() or None, timeout=10)

        cluster.raw.put(f"{path}/{name}", _tls_secret(namespace, name, second.cert_pem, second.key_pem))
        project_secret(volume, _secret_files(cluster, namespace, name), 2)
        rec.wait(
            "the rotated certificate to be served",
            lambda: presented_certificate("127.0.0.1", port) == pem_to_der(second.cert_pem) or None,
            timeout=15,
        )
        code, out = _create(cluster, denied)  # the API server verifies the new pair against its caBundle
        assert code != 0
        assert f'admission webhook "{HOOK}" denied the request' in out, out
        assert ready()
    assert rec.alive(), rec.tail()
    assert any(r.get("msg") == "webhook certificate reloaded" for r in rec.lines()), rec.tail()
