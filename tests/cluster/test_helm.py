"""charts/omereconcile with helm built from the module proxy (testbed/helm.sh): lint, server-side
dry-run of the rendered chart, and a real install watching one namespace, under whose RBAC the
reconciler completes a roll."""

from __future__ import annotations

import base64
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import padding
from helpers import REPO, apply, delete_replicas, drop_finalizers, example_replica, kubectl_stdin, replica
from reconciler_proc import Reconciler
from test_reconciler_rollout import RUNTIME, namespaced_runtime, ready_on

from testbed.testing import Cluster

CHART = REPO / "charts" / "omereconcile"
KUBE_VERSION = "1.36.3"  # the test control plane's; the chart asks for >= 1.30


@pytest.fixture(scope="module")
def helm() -> str:
    path = os.environ.get("HELM")
    if not path:
        proc = subprocess.run(
            ["bash", str(REPO / "testbed" / "helm.sh")], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"testbed/helm.sh failed:\n{proc.stderr[-4000:]}"
        path = proc.stdout.strip().splitlines()[-1].split("=", 1)[1]
    return path


def run_helm(helm: str, cluster: Cluster | None, *args: str) -> subprocess.CompletedProcess[str]:
    kube = ["--kubeconfig", str(cluster.cp.kubeconfig)] if cluster else []
    return subprocess.run([helm, *args, *kube], capture_output=True, text=True, check=False, timeout=300)


def test_helm_lint_and_the_values_schema(helm: str) -> None:
    for extra in ([], ["--set", "watchNamespace=inference"], ["--set", "networkPolicy.enabled=false"]):
        proc = run_helm(helm, None, "lint", str(CHART), *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 chart(s) linted, 0 chart(s) failed" in proc.stdout
    bad = run_helm(helm, None, "lint", str(CHART), "--set", "replicaCount=0")
    assert bad.returncode != 0
    assert "replicaCount" in bad.stdout + bad.stderr
    bad = run_helm(helm, None, "lint", str(CHART), "--set", "webhook.failurePolicy=Maybe")
    assert bad.returncode != 0
    assert "failurePolicy" in bad.stdout + bad.stderr


@pytest.mark.parametrize("watch", [False, True], ids=["cluster-wide", "one-namespace"])
def test_helm_template_passes_server_side_dry_run(
    helm: str, cluster: Cluster, namespace: str, watch: bool
) -> None:
    extra = ["--set", f"watchNamespace={namespace}"] if watch else []
    tpl = run_helm(
        helm,
        None,
        "template",
        "dry",
        str(CHART),
        "-n",
        namespace,
        "--include-crds",
        "--kube-version",
        KUBE_VERSION,
        *extra,
    )
    assert tpl.returncode == 0, tpl.stderr
    docs = [d for d in yaml.safe_load_all(tpl.stdout) if d]
    kinds = {d["kind"] for d in docs}
    assert {"CustomResourceDefinition", "Deployment", "ValidatingWebhookConfiguration", "Secret"} <= kinds
    assert {"NetworkPolicy", "PodDisruptionBudget", "ClusterRole", "Role", "RoleBinding"} <= kinds
    out = kubectl_stdin(cluster, tpl.stdout, "apply", "--server-side", "--dry-run=server")
    assert len(out.stdout.splitlines()) == len(docs), out.stdout


@pytest.fixture
def release_ns(cluster: Cluster) -> Iterator[str]:
    name = f"rel-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", name)
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false")


def test_helm_install_one_namespace_generates_the_certificate_and_its_rbac_completes_a_roll(
    helm: str,
    cluster: Cluster,
    reconciler_kubeconfig: Path,
    namespace: str,
    release_ns: str,
    tmp_path: Path,
) -> None:
    # The API server cannot reach a Service here, so the registration is made non-blocking for the roll
    # (what it admits is tested against the container and the process elsewhere).
    values = [
        "--set", f"watchNamespace={namespace}",
        "--set", "image.repository=localhost/omereconcile",
        "--set", "webhook.failurePolicy=Ignore",
        "--set", "webhook.timeoutSeconds=1",
    ]  # fmt: skip
    # The API server's EndpointSlice for the kubernetes Service, as its lease endpoint reconciler writes it
    # (the testbed runs with --endpoint-reconciler-type=none; a loopback address is not allowed in a
    # slice, so a documentation address stands for the control plane); the chart's NetworkPolicy reads it.
    slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
    cluster.raw.post(
        slices,
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "kubernetes", "labels": {"kubernetes.io/service-name": "kubernetes"}},
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["192.0.2.10"]}],
            "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
        },
    )
    install = run_helm(helm, cluster, "install", "rel", str(CHART), "-n", release_ns, *values)
    cluster.raw.delete(f"{slices}/kubernetes")
    rec: Reconciler | None = None
    try:
        assert install.returncode == 0, install.stderr
        assert "STATUS: deployed" in install.stdout

        def get(kind: str, name: str, ns: str | None = release_ns) -> dict[str, object]:
            args = ["get", kind, name, "-o", "yaml", *(["-n", ns] if ns else [])]
            return dict(yaml.safe_load(cluster.kubectl(*args).stdout))

        # The generated certificate: for the webhook Service, signed by the caBundle the API server trusts.
        secret = get("secret", "rel-omereconcile-webhook-cert")
        data = secret["data"]
        assert isinstance(data, dict)
        leaf = x509.load_pem_x509_certificate(base64.b64decode(data["tls.crt"]))
        vwc = get("validatingwebhookconfiguration", "rel-omereconcile-inferencereplica", None)
        hook = vwc["webhooks"][0]  # type: ignore[index]
        ca = x509.load_pem_x509_certificate(base64.b64decode(hook["clientConfig"]["caBundle"]))
        ca.public_key().verify(  # type: ignore[union-attr,call-arg]
            leaf.signature, leaf.tbs_certificate_bytes, padding.PKCS1v15(), leaf.signature_hash_algorithm
        )
        sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert f"rel-omereconcile-webhook.{release_ns}.svc" in sans.get_values_for_type(x509.DNSName)
        assert hook["clientConfig"]["service"] == {
            "name": "rel-omereconcile-webhook",
            "namespace": release_ns,
            "path": "/validate-ome-io-v1beta1-inferencereplica",
            "port": 443,
        }
        assert hook["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
        # The NetworkPolicy admits the API server's own addresses (read from the kubernetes Service).
        netpol = get("networkpolicy", "rel-omereconcile")
        webhook_rule = netpol["spec"]["ingress"][0]  # type: ignore[index]
        assert [p["ipBlock"]["cidr"] for p in webhook_rule["from"]] == ["192.0.2.10/32"]
        # An upgrade keeps the certificate.
        upgrade = run_helm(helm, cluster, "upgrade", "rel", str(CHART), "-n", release_ns, *values)
        assert upgrade.returncode == 0, upgrade.stderr
        assert get("secret", "rel-omereconcile-webhook-cert")["data"] == data

        # The reconciler under the chart's ServiceAccount and RBAC, watching the one namespace.
        cluster.kubectl(
            "create",
            "configmap",
            "inferenceservice-config",
            "-n",
            release_ns,
            "--from-literal=inferenceReplica={}",
        )
        kubeconfig = cluster.cp.service_account_kubeconfig(release_ns, "rel-omereconcile", create=False)
        rec = Reconciler(
            kubeconfig,
            tmp_path / "reconciler.log",
            [
                "--namespace",
                namespace,
                "--ome-namespace",
                release_ns,
                "--leader-elect",
                "--watch-timeout",
                "20",
            ],
        ).start()
        apply(cluster, namespaced_runtime(namespace))
        apply(cluster, example_replica(namespace, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"}))
        rec.wait("Ready on the first revision", lambda: ready_on(cluster, namespace), timeout=90)
        first = replica(cluster, namespace)["status"]["updateRevision"]
        apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.2"))
        rec.wait(
            "the roll to the new revision",
            lambda: (
                replica(cluster, namespace)["status"].get("updateRevision") != first
                and ready_on(cluster, namespace)
            ),
            timeout=120,
        )
        forbidden = [r for r in rec.lines() if "forbidden" in str(r).lower()]
        assert not forbidden, forbidden[:3]
    finally:
        if rec is not None and rec.alive():
            delete_replicas(cluster, namespace)
        if rec is not None:
            rec.stop()
        drop_finalizers(cluster, namespace)
        uninstall = run_helm(helm, cluster, "uninstall", "rel", "-n", release_ns)
    assert uninstall.returncode == 0, uninstall.stderr
    gone = cluster.kubectl(
        "get", "validatingwebhookconfiguration", "rel-omereconcile-inferencereplica", check=False
    )
    assert gone.returncode != 0


def test_a_user_secret_replaces_the_generated_certificate(helm: str) -> None:
    ca_pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    common = ["template", "rel", str(CHART), "-n", "ome", "--kube-version", KUBE_VERSION]
    mine = ["--set", "webhook.certificate.secretName=my-webhook-tls"]
    proc = run_helm(helm, None, *common, *mine, "--set-string", f"webhook.certificate.caBundle={ca_pem}")
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert not [d for d in docs if d["kind"] == "Secret"]  # the chart creates none
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    volumes = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}
    assert volumes["webhook-cert"]["secret"]["secretName"] == "my-webhook-tls"
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    assert base64.b64decode(vwc["webhooks"][0]["clientConfig"]["caBundle"]).decode() == ca_pem
    # Without the CA (and no cluster to read the Secret's ca.crt from) the chart says what to set.
    proc = run_helm(helm, None, *common, *mine)
    assert proc.returncode != 0
    assert (
        "webhook.certificate.caBundle: set it to the PEM of the CA that signed Secret ome/my-webhook-tls"
        in proc.stderr
    )
