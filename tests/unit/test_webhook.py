"""The webhook server: AdmissionReview over HTTPS, OME's rules, identity and catalog from the cluster."""

from __future__ import annotations

import json
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from omereconcile.cluster.kube import NotFound
from omereconcile.server.webhook import PATH, AdmissionServer, ClusterReader
from testbed.pki import CertificateAuthority


class FakeKube:
    def __init__(self, configmap: dict[str, Any] | None) -> None:
        self.configmap = configmap
        self.gets = 0

    def get(self, path: str, **q: Any) -> dict[str, Any]:
        self.gets += 1
        if "/configmaps/" in path:
            if self.configmap is None:
                raise NotFound(404, "NotFound", "not found")
            return self.configmap
        raise AssertionError(path)

    def list(self, path: str, **q: Any) -> dict[str, Any]:
        return {"items": []}


def _review(spec: dict[str, Any], user: str = "alice") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "req-1",
            "operation": "CREATE",
            "namespace": "demo",
            "name": "pool",
            "userInfo": {"username": user, "groups": []},
            "object": {
                "apiVersion": "ome.io/v1beta1",
                "kind": "InferenceReplica",
                "metadata": {"name": "pool", "namespace": "demo"},
                "spec": {"component": "engine", **spec},
            },
        },
    }


def _reader(cm: dict[str, Any] | None) -> ClusterReader:
    return ClusterReader(FakeKube(cm), ome_namespace="ome")  # type: ignore[arg-type]


def test_a_standalone_rule_denies_with_omes_message() -> None:
    out = _reader({"data": {}}).handle(
        _review({"modelRef": {"name": "m"}, "lifecycle": {"minReadySeconds": 5}})
    )
    resp = out["response"]
    assert resp["uid"] == "req-1"
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 403
    assert resp["status"]["message"] == (
        "InferenceReplica demo/pool: spec.lifecycle.minReadySeconds is not read on an InferenceReplica; "
        "set spec.minReadySeconds"
    )


def test_a_missing_configmap_fails_creates_with_500() -> None:
    resp = _reader(None).handle(_review({"modelRef": {"name": "m"}}))["response"]
    assert resp["allowed"] is False
    assert resp["status"]["code"] == 500
    assert (
        resp["status"]["message"]
        == 'load inferenceReplica config: configmaps "inferenceservice-config" not found'
    )


def test_invalid_identity_json_fails_creates_with_500() -> None:
    resp = _reader({"data": {"inferenceReplica": "{"}}).handle(_review({"modelRef": {"name": "m"}}))[
        "response"
    ]
    assert resp["status"]["code"] == 500


def test_configured_identity_makes_the_controller_a_controller() -> None:
    ident = json.dumps({"controllerIdentity": {"usernames": ["system:serviceaccount:ome:ome-controller"]}})
    reader = _reader({"data": {"inferenceReplica": ident}})
    # The controller creates only the replicas it projects: a standalone create by it is denied.
    resp = reader.handle(
        _review({"modelRef": {"name": "m"}}, user="system:serviceaccount:ome:ome-controller")
    )
    assert resp["response"]["allowed"] is False
    assert "creates only the replicas it projects" in resp["response"]["status"]["message"]
    assert reader.handle(_review({"modelRef": {"name": "m"}}))["response"]["allowed"] is True


def test_identity_is_cached_between_requests() -> None:
    kube = FakeKube({"data": {}})
    reader = ClusterReader(kube, ome_namespace="ome", cache_ttl=60)  # type: ignore[arg-type]
    reader.handle(_review({"modelRef": {"name": "m"}}))
    reader.handle(_review({"modelRef": {"name": "m"}}))
    assert kube.gets == 1


def test_a_one_namespace_reader_lists_namespaced_kinds_there_only() -> None:
    # A one-namespace install may list models and runtimes in its namespace only (its RBAC); listing
    # them cluster-wide was refused, and every review then went without its runtime checks.
    listed: list[str] = []

    class Recording(FakeKube):
        def list(self, path: str, **q: Any) -> dict[str, Any]:
            listed.append(path)
            return {"items": []}

    reader = ClusterReader(Recording({"data": {}}), ome_namespace="ome", namespaces=["inference"])  # type: ignore[arg-type]
    assert reader.catalog() is not None
    namespaced = [p for p in listed if "/namespaces/" in p]
    assert namespaced, listed
    assert all("/namespaces/inference/" in p for p in namespaced), listed
    assert any("clusterservingruntimes" in p and "/namespaces/" not in p for p in listed), listed


def test_https_round_trip(tmp_path: Path) -> None:
    ca = CertificateAuthority("test-ca")
    crt, key = ca.issue(
        "localhost", dns_names=("localhost",), ip_addresses=("127.0.0.1",), server=True
    ).write(tmp_path, "tls")
    srv = AdmissionServer(
        _reader({"data": {}}).handle, cert_file=crt, key_file=key, host="127.0.0.1", port=0
    ).start()
    try:
        ctx = ssl.create_default_context(cadata=ca.cert_pem.decode())
        req = urllib.request.Request(
            f"https://127.0.0.1:{srv.port}{PATH}",
            data=json.dumps(_review({"modelRef": {"name": "m"}})).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
            body = json.loads(r.read())
        assert body["kind"] == "AdmissionReview"
        assert body["response"]["allowed"] is True
        bad = urllib.request.Request(f"https://127.0.0.1:{srv.port}/other", data=b"{}")
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(bad, context=ctx, timeout=5)
        assert info.value.code == 404
        info.value.close()
    finally:
        srv.stop()


def test_the_deployments_readiness_probe_outlasts_the_tls_dial() -> None:
    # /readyz dials the webhook over TLS for up to answers()'s timeout; a shorter probe timeout would
    # take a healthy pod out of the webhook Service whenever the dial is slow.
    import inspect

    import yaml

    deployment = next(
        d
        for d in yaml.safe_load_all(
            (Path(__file__).parents[2] / "deploy" / "base" / "deployment.yaml").read_text()
        )
        if d and d["kind"] == "Deployment"
    )
    probe = deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    dial = inspect.signature(AdmissionServer.answers).parameters["timeout"].default
    assert probe["httpGet"] == {"path": "/readyz", "port": "probes"}
    assert probe["timeoutSeconds"] > dial
    # The Secret volume of the cert-manager and existing-secret modes (the self-managed mode writes files).
    patch = (Path(__file__).parents[2] / "deploy" / "components" / "secret-volume" / "patch.yaml").read_text()
    cert = next(op["value"] for op in yaml.safe_load(patch) if op["value"].get("name") == "webhook-cert")
    assert "subPath" not in cert  # a subPath mount never sees a rotated Secret
