"""/metrics of a running reconciler over HTTPS, against the real API server: no token 401, a token whose
user may not get /metrics 403, a token bound to the metrics-reader ClusterRole 200 (deploy/base/metrics.yaml
grants the reconciler the TokenReview and SubjectAccessReview it makes)."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable

import yaml
from helpers import REPO, kubectl_stdin
from reconciler_proc import Reconciler

from testbed.testing import Cluster


def _token(cluster: Cluster, namespace: str, name: str) -> str:
    cluster.kubectl("create", "serviceaccount", name, "-n", namespace)
    tr = cluster.raw.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
    )
    return str(tr["status"]["token"])


def _scrape(port: int, token: str | None) -> tuple[int, str]:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # self-signed, as a ServiceMonitor's insecureSkipVerify
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(f"https://127.0.0.1:{port}/metrics", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10, context=ctx) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_secure_metrics_scraped_with_and_without_a_token(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    cluster.kubectl("apply", "-f", str(REPO / "deploy" / "base" / "metrics.yaml"))
    reader, stranger = _token(cluster, namespace, "scraper"), _token(cluster, namespace, "stranger")
    binding = f"metrics-reader-{uuid.uuid4().hex[:8]}"
    kubectl_stdin(
        cluster,
        yaml.safe_dump(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": binding},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "omereconcile-metrics-reader",
                },
                "subjects": [{"kind": "ServiceAccount", "name": "scraper", "namespace": namespace}],
            }
        ),
        "apply",
    )
    try:
        rec = reconcilers("--metrics-bind-address", "127.0.0.1:0")
        port = rec.wait(
            "the metrics server",
            lambda: next((int(r["port"]) for r in rec.lines() if r.get("msg") == "metrics listening"), None),
            timeout=30,
        )
        assert next(r for r in rec.lines() if r.get("msg") == "metrics listening")["secure"] is True
        code, body = _scrape(port, None)
        assert (code, body) == (401, "no bearer token")
        code, body = _scrape(port, "not-a-token")
        assert (code, body) == (401, "token not authenticated")
        code, body = _scrape(port, stranger)
        assert code == 403, body
        assert body == f"system:serviceaccount:{namespace}:stranger may not get /metrics"
        code, body = _scrape(port, reader)
        assert code == 200, body
        assert 'controller_runtime_reconcile_total{controller="inferencereplica",result="success"}' in body
        print(
            f"\nscrape without a token: 401; as a stranger: 403; with metrics-reader: 200 ({len(body)} bytes)"
        )
    finally:
        cluster.kubectl("delete", "clusterrolebinding", binding, "--ignore-not-found")
