"""charts/omereconcile with helm built from the module proxy (testbed/helm.sh, whose default Kubernetes
version is the control plane's, so no test passes --kube-version): lint, byte-identical templates in
every certificate mode, server-side dry-run of the rendered chart, and a real install watching one
namespace with the built image running under the chart's ServiceAccount and RBAC: it issues its own
webhook certificate, injects the CA, completes a roll, and keeps all of it through an upgrade and a CA
rotation while the API server calls it through its Service with the chart's failurePolicy (Fail)."""

from __future__ import annotations

import base64
import hashlib
import os
import ssl
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from admissions import HOOK, AdmissionLoop, admit_once, invalid
from container import ContainerReconciler, build_image, release_container, webhook_port
from cryptography import x509
from helpers import (
    REPO,
    apply,
    delete_replicas,
    drop_finalizers,
    example_replica,
    kubectl_stdin,
    replica,
)
from test_reconciler_rollout import RUNTIME, namespaced_runtime, ready_on

from testbed.pki import presented_certificate
from testbed.rawkube import JSON_PATCH
from testbed.testing import Cluster

CHART = REPO / "charts" / "omereconcile"
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
MODES: dict[str, list[str]] = {
    "selfManaged": [],
    "certManager": ["--set", "webhook.certificate.mode=certManager"],
    "secret": [
        "--set", "webhook.certificate.mode=secret",
        "--set", "webhook.certificate.secretName=my-webhook-tls",
        "--set-string", f"webhook.certificate.caBundle={CA_PEM}",
    ],
}  # fmt: skip


def helm_binary() -> str:
    """HELM when scripts/test.sh built it, else testbed/helm.sh now (cached)."""
    path = os.environ.get("HELM")
    if not path:
        proc = subprocess.run(
            ["bash", str(REPO / "testbed" / "helm.sh")], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, f"testbed/helm.sh failed:\n{proc.stderr[-4000:]}"
        path = proc.stdout.strip().splitlines()[-1].split("=", 1)[1]
    return path


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()


def run_helm(helm: str, cluster: Cluster | None, *args: str) -> subprocess.CompletedProcess[str]:
    kube = ["--kubeconfig", str(cluster.cp.kubeconfig)] if cluster else []
    return subprocess.run([helm, *args, *kube], capture_output=True, text=True, check=False, timeout=300)


def test_helm_defaults_to_the_control_planes_kubernetes_version(helm: str, tmp_path: Path) -> None:
    """testbed/helm.sh links helm with the control plane's minor (helm's own default is v1.20)."""
    gomod = (REPO / "testbed" / "go" / "go.mod").read_text()
    minor = next(
        line.split()[2] for line in gomod.splitlines() if line.startswith("require k8s.io/kubernetes ")
    )
    (tmp_path / "templates").mkdir()
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: kv\nversion: 0.1.0\n")
    (tmp_path / "templates" / "kv.yaml").write_text("v: {{ .Capabilities.KubeVersion.Version }}\n")
    proc = run_helm(helm, None, "template", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"v: {'.'.join(minor.split('.')[:2])}.0" in proc.stdout


def test_helm_lint_and_the_values_schema(helm: str) -> None:
    extras = (
        [],
        ["--set", "watchNamespace=inference"],
        ["--set", "networkPolicy.enabled=false"],
        ["--set", "replicaCount=1"],
        ["--set", "replicaCount=3"],
        ["--set", "sharding.enabled=false"],
        ["--set", f"image.digest=sha256:{'a' * 64}"],
        *MODES.values(),
    )
    for extra in extras:
        proc = run_helm(helm, None, "lint", str(CHART), *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "1 chart(s) linted, 0 chart(s) failed" in proc.stdout
    for bad, word in (
        ("replicaCount=0", "replicaCount"),
        ("sharding.shards=1", "shards"),
        ("webhook.failurePolicy=Maybe", "failurePolicy"),
        ("webhook.certificate.mode=random", "mode"),
        ("image.digest=latest", "digest"),
        ("imagePullSecret=x", "imagePullSecret"),
    ):
        proc = run_helm(helm, None, "lint", str(CHART), "--set", bad)
        assert proc.returncode != 0, bad
        assert word in proc.stdout + proc.stderr


@pytest.mark.parametrize("mode", list(MODES))
def test_helm_template_is_byte_identical_and_holds_no_key(helm: str, mode: str) -> None:
    """GitOps tools render the chart on every sync: the same values must give the same bytes."""
    args = ["template", "omereconcile", str(CHART), "-n", "ome", *MODES[mode]]
    first, second = run_helm(helm, None, *args), run_helm(helm, None, *args)
    assert first.returncode == 0, first.stderr
    digests = [hashlib.sha256(p.stdout.encode()).hexdigest() for p in (first, second)]
    print(
        f"\nhelm template ({mode}) | sha256sum: {digests[0]}\nhelm template ({mode}) | sha256sum: {digests[1]}"
    )
    assert digests[0] == digests[1]
    assert "PRIVATE KEY" not in first.stdout
    docs = [d for d in yaml.safe_load_all(first.stdout) if d]
    assert not [d for d in docs if d["kind"] == "Secret" and d.get("data")]
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    assert ("caBundle" in vwc["webhooks"][0]["clientConfig"]) == (mode == "secret")
    kinds = {d["kind"] for d in docs}
    assert ("Certificate" in kinds) == (mode == "certManager")
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    args_ = deploy["spec"]["template"]["spec"]["containers"][0]["args"]
    assert ("--cert-secret=omereconcile-webhook-server-cert" in args_) == (mode == "selfManaged")


@pytest.mark.parametrize("watch", [False, True], ids=["cluster-wide", "one-namespace"])
def test_helm_template_passes_server_side_dry_run(
    helm: str, cluster: Cluster, namespace: str, watch: bool
) -> None:
    extra = ["--set", f"watchNamespace={namespace}"] if watch else []
    tpl = run_helm(helm, None, "template", "dry", str(CHART), "-n", namespace, *extra)
    assert tpl.returncode == 0, tpl.stderr
    docs = [d for d in yaml.safe_load_all(tpl.stdout) if d]
    kinds = {d["kind"] for d in docs}
    assert {"CustomResourceDefinition", "Deployment", "ValidatingWebhookConfiguration", "Secret"} <= kinds
    assert {"NetworkPolicy", "PodDisruptionBudget", "ClusterRole", "Role", "RoleBinding"} <= kinds
    crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    assert len(crds) == 7
    assert all(d["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for d in crds)
    out = kubectl_stdin(cluster, tpl.stdout, "apply", "--server-side", "--dry-run=server")
    assert len(out.stdout.splitlines()) == len(docs), out.stdout


def image_values(image: str, namespace: str) -> list[str]:
    """helm values for a release that watches ``namespace`` and runs the built ``image`` (never pulled)."""
    repository, _, tag = image.rpartition(":")
    return [
        "--set", f"watchNamespace={namespace}",
        "--set", f"image.repository={repository}",
        "--set", f"image.tag={tag}",
        "--set", "image.pullPolicy=Never",
    ]  # fmt: skip


@pytest.fixture
def release_ns(cluster: Cluster) -> Iterator[str]:
    name = f"rel-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", name)
    yield name
    cluster.kubectl("delete", "namespace", name, "--wait=false")


def test_helm_install_upgrade_uninstall_with_the_image_running_a_self_managed_certificate(
    helm: str,
    cluster: Cluster,
    reconciler_kubeconfig: Path,
    namespace: str,
    release_ns: str,
    tmp_path: Path,
) -> None:
    image = build_image()
    # The chart's own failurePolicy (Fail) and timeout: the API server calls the webhook through its
    # Service, whose ClusterIP the testbed's cluster egress routes to the container (kube-proxy's part,
    # testbed/egress.py). The CRDs exist already (the testbed's); test_helm_crd_upgrade.py installs them
    # with the chart.
    values = [
        *image_values(image, namespace),
        "--set", "webhook.certificate.selfManaged.checkPeriodSeconds=2",
        "--set", "crds.enabled=false",
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
    rec: ContainerReconciler | None = None
    secret_name, vwc_name = "rel-omereconcile-webhook-server-cert", "rel-omereconcile-inferencereplica"
    service, cluster_ip = "rel-omereconcile-webhook", ""
    service_dns = f"{service}.{release_ns}.svc"
    secret_path = f"/api/v1/namespaces/{release_ns}/secrets/{secret_name}"
    egress = cluster.cp.egress
    assert egress is not None, "the testbed's control plane routes Services through its cluster egress"
    try:
        assert install.returncode == 0, install.stderr
        assert "STATUS: deployed" in install.stdout
        assert "Webhook certificate: selfManaged" in install.stdout  # NOTES.txt

        def get(kind: str, name: str, ns: str | None = release_ns) -> dict[str, object]:
            args = ["get", kind, name, "-o", "yaml", *(["-n", ns] if ns else [])]
            return dict(yaml.safe_load(cluster.kubectl(*args).stdout))

        # As installed: an empty Secret and no caBundle (the chart renders neither).
        assert not get("secret", secret_name).get("data")
        hook = get("validatingwebhookconfiguration", vwc_name, None)["webhooks"][0]  # type: ignore[index]
        assert "caBundle" not in hook["clientConfig"]
        assert hook["failurePolicy"] == "Fail"  # the chart's default, not overridden here
        assert hook["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
        netpol = get("networkpolicy", "rel-omereconcile")
        webhook_rule = netpol["spec"]["ingress"][0]  # type: ignore[index]
        assert [p["ipBlock"]["cidr"] for p in webhook_rule["from"]] == ["192.0.2.10/32"]
        # Until a webhook answers, the chart's failurePolicy refuses InferenceReplica writes.
        valid = example_replica(namespace, runtimeRef={"name": RUNTIME, "kind": "ServingRuntime"})
        probe = {**valid, "metadata": {"name": "admission-probe", "namespace": namespace}}
        unanswered = admit_once(cluster.raw, probe, refused=False)
        assert f'failed calling webhook "{HOOK}"' in unanswered, unanswered

        # The image, run as the Deployment runs it: its args, its ServiceAccount's token (so the chart's
        # RBAC is what authorizes it), a read-only root with /tmp writable. Only the listen addresses
        # change (host network, shared with other tests).
        manifest = run_helm(helm, cluster, "get", "manifest", "rel", "-n", release_ns).stdout
        deploy = next(d for d in yaml.safe_load_all(manifest) if d and d["kind"] == "Deployment")
        container = deploy["spec"]["template"]["spec"]["containers"][0]
        assert container["image"] == image
        cluster.kubectl(
            "create", "configmap", "inferenceservice-config", "-n", release_ns,
            "--from-literal=inferenceReplica={}",
        )  # fmt: skip
        rec = release_container(cluster, image, manifest, release_ns, tmp_path)
        port = webhook_port(rec)
        cluster_ip = cluster.cp.route_service(release_ns, service, 443, port)

        def injected() -> tuple[dict[str, str], str] | None:
            data = get("secret", secret_name).get("data") or {}
            hook = get("validatingwebhookconfiguration", vwc_name, None)["webhooks"][0]  # type: ignore[index]
            ca = hook["clientConfig"].get("caBundle")
            return (data, ca) if ca and isinstance(data, dict) and ca == data.get("ca.crt") else None

        data, ca_b64 = rec.wait("the certificate in the Secret and the caBundle", injected, timeout=30)
        assert sorted(data) == ["ca.crt", "ca.key", "tls.crt", "tls.key"]
        leaf = x509.load_pem_x509_certificate(base64.b64decode(data["tls.crt"]))
        sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert service_dns in sans.get_values_for_type(x509.DNSName)
        # Secure metrics in the image: HTTPS, and no answer without a token.
        mport = next(int(r["port"]) for r in rec.lines() if r.get("msg") == "metrics listening")
        insecure = ssl.create_default_context()
        insecure.check_hostname, insecure.verify_mode = False, ssl.CERT_NONE
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(f"https://127.0.0.1:{mport}/metrics", timeout=10, context=insecure)
        assert denied.value.code == 401

        apply(cluster, namespaced_runtime(namespace))
        # The API server itself calls the webhook (caBundle, the Service's name, its ClusterIP): the
        # valid replica is admitted and the invalid one refused with the webhook's own message.
        first_answers = [
            admit_once(cluster.raw, probe, refused=False),
            admit_once(cluster.raw, invalid(probe), refused=True),
        ]
        assert first_answers == ["answered", "answered"], first_answers
        assert egress.count(cluster_ip, 443) >= 1, egress.tunnels
        apply(cluster, valid)
        rec.wait("Ready on the first revision", lambda: ready_on(cluster, namespace), timeout=90)
        first = replica(cluster, namespace)["status"]["updateRevision"]

        # An upgrade that changes the webhook configuration keeps the certificate and the caBundle: the
        # chart never renders the Secret's data and renders the caBundle the cluster holds, so helm's
        # three-way merge keeps both. Then the CA rotates (the Secret emptied: within its check period
        # the rotator issues a new CA and pair, injects the new CA beside the old one, then serves the
        # new pair). Admissions keep working throughout: every request sent through the API server from
        # before the upgrade to after the new pair is served gets the webhook's own answer.
        served_before = presented_certificate("127.0.0.1", port)
        loop_raw = cluster.cp.raw()
        with AdmissionLoop(loop_raw, probe) as loop:
            rec.wait("admissions before the upgrade", lambda: len(loop) >= 4, timeout=60)
            upgrade = run_helm(
                helm,
                cluster,
                "upgrade",
                "rel",
                str(CHART),
                "-n",
                release_ns,
                *values,
                "--set",
                "webhook.timeoutSeconds=8",
            )
            after = len(loop)
            rec.wait("admissions after the upgrade", lambda: len(loop) >= after + 4, timeout=60)
            cluster.raw.patch(
                secret_path, [{"op": "replace", "path": "/data", "value": {}}], content_type=JSON_PATCH
            )
            rec.wait(
                "the pair of the new CA served",
                lambda: presented_certificate("127.0.0.1", port) != served_before,
                timeout=60,
            )
            after = len(loop)
            rec.wait("admissions after the rotation", lambda: len(loop) >= after + 4, timeout=60)
        loop_raw.api_client.close()  # type: ignore[no-untyped-call]
        counts = loop.counts()
        print(
            f"\n{loop.report('helm upgrade + CA rotation (failurePolicy Fail)')}; "
            f"API server tunnels to the Service {cluster_ip}:443: {egress.count(cluster_ip, 443)}"
        )
        assert not loop.failures(), loop.failures()[:3]
        assert counts["valid answered"] >= 4, counts
        assert counts["invalid answered"] >= 4, counts
        assert upgrade.returncode == 0, upgrade.stderr
        hook = get("validatingwebhookconfiguration", vwc_name, None)["webhooks"][0]  # type: ignore[index]
        assert (hook["timeoutSeconds"], hook["failurePolicy"]) == (8, "Fail")
        rotated = get("secret", secret_name)["data"]
        assert isinstance(rotated, dict)
        assert rotated["ca.crt"] != data["ca.crt"]
        # The new CA, then the one it replaced (still trusted for a replica serving its pair).
        new_ca, old_ca = (base64.b64decode(rotated["ca.crt"]), base64.b64decode(ca_b64))
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == new_ca + old_ca

        apply(cluster, namespaced_runtime(namespace, image="docker.io/vllm/vllm-openai:v0.9.2"))
        rec.wait(
            "the roll to the new revision",
            lambda: (
                replica(cluster, namespace)["status"].get("updateRevision") != first
                and ready_on(cluster, namespace)
            ),
            timeout=120,
        )
        # With watchNamespace the webhook reads namespaced models and runtimes in that namespace only,
        # as the one-namespace RBAC allows: every request is authorized and no review skips its checks.
        forbidden = [r for r in rec.lines() if "forbidden" in str(r).lower()]
        assert not forbidden, forbidden[:3]
        skipped = [
            r
            for r in rec.lines()
            if r.get("msg") == "webhook reader failed; runtime and collision checks skipped"
        ]
        assert not skipped, skipped[:3]
    finally:
        if rec is not None and rec.alive():
            delete_replicas(cluster, namespace)
        if rec is not None:
            rec.stop()
        # Uninstall first: with failurePolicy Fail and the webhook gone, lifting a finalizer (an update)
        # would be refused while the webhook configuration remains.
        uninstall = run_helm(helm, cluster, "uninstall", "rel", "-n", release_ns)
        if cluster_ip:
            egress.unroute(cluster_ip, 443)
        drop_finalizers(cluster, namespace)
    assert uninstall.returncode == 0, uninstall.stderr
    for kind, name, ns in (
        ("validatingwebhookconfiguration", vwc_name, None),
        ("secret", secret_name, release_ns),
        ("clusterrole", "rel-omereconcile-webhook-server-cert", None),
    ):
        gone = cluster.kubectl("get", kind, name, *(["-n", ns] if ns else []), check=False)
        assert gone.returncode != 0, (kind, name)


def test_mode_secret_uses_your_secret_and_ca(helm: str) -> None:
    common = ["template", "rel", str(CHART), "-n", "ome"]
    proc = run_helm(helm, None, *common, *MODES["secret"])
    assert proc.returncode == 0, proc.stderr
    docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
    assert not [d for d in docs if d["kind"] == "Secret"]  # the chart creates none
    deploy = next(d for d in docs if d["kind"] == "Deployment")
    volumes = {v["name"]: v for v in deploy["spec"]["template"]["spec"]["volumes"]}
    assert volumes["webhook-cert"]["secret"]["secretName"] == "my-webhook-tls"
    vwc = next(d for d in docs if d["kind"] == "ValidatingWebhookConfiguration")
    assert base64.b64decode(vwc["webhooks"][0]["clientConfig"]["caBundle"]).decode() == CA_PEM
    # Without the CA, or without the Secret's name, the chart says what to set.
    proc = run_helm(
        helm,
        None,
        *common,
        "--set",
        "webhook.certificate.mode=secret",
        "--set",
        "webhook.certificate.secretName=my-webhook-tls",
    )
    assert proc.returncode != 0
    assert (
        "webhook.certificate.caBundle: with mode secret, set it to the PEM of the CA that signed Secret ome/my-webhook-tls"
        in proc.stderr
    )
    proc = run_helm(helm, None, *common, "--set", "webhook.certificate.mode=secret")
    assert proc.returncode != 0
    assert (
        "webhook.certificate.secretName: with mode secret, name your kubernetes.io/tls Secret" in proc.stderr
    )


def test_values_operators_expect_reach_the_pod(helm: str) -> None:
    values = {
        "image": {"digest": "sha256:" + "b" * 64},
        "imagePullSecrets": [{"name": "regcred"}],
        "podAnnotations": {"example.com/team": "serving"},
        "podLabels": {"team": "serving"},
        "priorityClassName": "system-cluster-critical",
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}
        ],
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
        "nodeSelector": {"pool": "system"},
        "affinity": {"nodeAffinity": {}},
        "extraArgs": ["--concurrency=4"],
        "extraEnv": [{"name": "EXTRA", "value": "1"}],
    }
    (path := Path(os.environ.get("TMPDIR", "/tmp")) / f"values-{uuid.uuid4().hex[:8]}.yaml").write_text(
        yaml.safe_dump(values)
    )
    try:
        proc = run_helm(helm, None, "template", "rel", str(CHART), "-n", "ome", "-f", str(path))
    finally:
        path.unlink()
    assert proc.returncode == 0, proc.stderr
    deploy = next(d for d in yaml.safe_load_all(proc.stdout) if d and d["kind"] == "Deployment")
    pod = deploy["spec"]["template"]
    spec = pod["spec"]
    assert spec["containers"][0]["image"] == "ghcr.io/ome/omereconcile@sha256:" + "b" * 64
    assert spec["imagePullSecrets"] == values["imagePullSecrets"]
    assert pod["metadata"]["annotations"] == values["podAnnotations"]
    assert pod["metadata"]["labels"]["team"] == "serving"
    assert pod["metadata"]["labels"]["app.kubernetes.io/name"] == "omereconcile"
    for key in ("priorityClassName", "topologySpreadConstraints", "tolerations", "nodeSelector", "affinity"):
        assert spec[key] == values[key], key
    assert spec["containers"][0]["args"][-1] == "--concurrency=4"
    assert spec["containers"][0]["env"][-1] == {"name": "EXTRA", "value": "1"}


def test_service_monitor_and_the_plain_http_opt_in(helm: str) -> None:
    common = ["template", "rel", str(CHART), "-n", "ome"]
    proc = run_helm(helm, None, *common, "--set", "metrics.serviceMonitor.enabled=true")
    assert proc.returncode == 0, proc.stderr
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(proc.stdout) if d}
    monitor = docs["ServiceMonitor", "rel-omereconcile"]
    (endpoint,) = monitor["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["scheme"]) == ("https-metrics", "https")
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    service = docs["Service", "rel-omereconcile-metrics"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert ("ClusterRole", "rel-omereconcile-metrics-auth") in docs
    assert ("ClusterRole", "rel-omereconcile-metrics-reader") in docs
    # Plain HTTP only when asked for: the flag, no review RBAC, no HTTPS scheme.
    proc = run_helm(
        helm, None, *common, "--set", "metrics.secure=false", "--set", "metrics.serviceMonitor.enabled=true"
    )
    assert proc.returncode == 0, proc.stderr
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(proc.stdout) if d}
    args = docs["Deployment", "rel-omereconcile"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--no-metrics-secure" in args
    assert ("ClusterRole", "rel-omereconcile-metrics-auth") not in docs
    (endpoint,) = docs["ServiceMonitor", "rel-omereconcile"]["spec"]["endpoints"]
    assert endpoint["port"] == "http-metrics"
    assert "scheme" not in endpoint
