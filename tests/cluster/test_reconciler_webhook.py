"""The admission webhook of ``omereconcile run``, registered on the API server with deploy/'s
ValidatingWebhookConfiguration (pointed at the process by URL), rejecting the seed's table through kubectl."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml
from helpers import REPO, example_replica, kubectl_stdin, replica
from reconciler_proc import Reconciler

from testbed.pki import CertificateAuthority
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
