"""``helm upgrade`` from chart 0.1.0 (a CA generated at install, its certificate in a kubernetes.io/tls
Secret, the CA rendered into the caBundle) to this chart's self-managed certificate, with the chart's
``failurePolicy: Fail``, while the API server sends real admissions through the webhook's Service. The
upgrade keeps the live caBundle (the chart renders it back), the new reconciler issues its own CA and
injects it beside the one the old pods still serve, and no write in the window is refused for want of a
webhook: the old pod and the new one answer by turns, then the new one alone.

The image stands in for both pods: with chart 0.1.0's arguments and certificate files (the old pod), then
with this chart's (the new one). testbed/egress.py routes the Service to them, as its endpoints."""

from __future__ import annotations

import base64
from pathlib import Path

from admissions import HOOK, AdmissionLoop, admit_once, invalid
from container import ContainerReconciler, build_image, readable, release_container, webhook_port
from cryptography import x509
from helpers import example_replica
from test_helm import CHART, helm_binary, image_values, run_helm
from test_helm import release_ns as release_ns  # the fixture, shared
from test_helm_crd_upgrade import previous_chart

from testbed.testing import Cluster

SERVICE = "rel-omereconcile-webhook"
OLD_SECRET, NEW_SECRET = "rel-omereconcile-webhook-cert", "rel-omereconcile-webhook-server-cert"
VWC = (
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/rel-omereconcile-inferencereplica"
)


def _bundle(cluster: Cluster) -> list[x509.Certificate]:
    ca = cluster.raw.get(VWC)["webhooks"][0]["clientConfig"].get("caBundle", "")
    return x509.load_pem_x509_certificates(base64.b64decode(ca)) if ca else []


def test_upgrade_from_chart_0_1_0_to_the_self_managed_certificate_refuses_no_write(
    cluster: Cluster, namespace: str, release_ns: str, tmp_path: Path
) -> None:
    helm, image = helm_binary(), build_image()
    values = image_values(image, namespace)
    egress = cluster.cp.egress
    assert egress is not None
    old_chart = previous_chart(tmp_path / "previous")
    install = run_helm(
        helm, cluster, "install", "rel", str(old_chart), "-n", release_ns, "--skip-crds", *values
    )
    old: ContainerReconciler | None = None
    new: ContainerReconciler | None = None
    cluster_ip = ""
    try:
        assert install.returncode == 0, install.stderr
        cluster.kubectl(
            "create", "configmap", "inferenceservice-config", "-n", release_ns,
            "--from-literal=inferenceReplica={}",
        )  # fmt: skip
        # The old pod: chart 0.1.0's arguments, its Secret's certificate mounted where 0.1.0 mounts it.
        old_ca_b64 = cluster.raw.get(VWC)["webhooks"][0]["clientConfig"]["caBundle"]
        secret = cluster.raw.get(f"/api/v1/namespaces/{release_ns}/secrets/{OLD_SECRET}")
        assert secret["data"]["ca.crt"] == old_ca_b64
        certs = tmp_path / "old-certs"
        certs.mkdir()
        for key in ("tls.crt", "tls.key"):
            (certs / key).write_bytes(base64.b64decode(secret["data"][key]))
        readable(certs)
        manifest = run_helm(helm, cluster, "get", "manifest", "rel", "-n", release_ns).stdout
        old = release_container(cluster, image, manifest, release_ns, tmp_path / "old", cert_dir=certs)
        old_port = webhook_port(old)
        cluster_ip = cluster.cp.route_service(release_ns, SERVICE, 443, old_port)
        probe = example_replica(namespace)
        probe["metadata"]["name"] = "admission-probe"
        assert admit_once(cluster.raw, probe, refused=False) == "answered"
        assert admit_once(cluster.raw, invalid(probe), refused=True) == "answered"

        loop_raw = cluster.cp.raw()
        with AdmissionLoop(loop_raw, probe) as loop:
            old.wait("admissions before the upgrade", lambda: len(loop) >= 4, timeout=60)
            upgrade = run_helm(
                helm, cluster, "upgrade", "rel", str(CHART), "-n", release_ns, *values,
                "--set", "crds.enabled=false",
                "--set", "webhook.certificate.selfManaged.checkPeriodSeconds=2",
            )  # fmt: skip
            assert upgrade.returncode == 0, upgrade.stderr
            # The Deployment rolls: a new pod starts beside the old one, both endpoints of the Service.
            manifest = run_helm(helm, cluster, "get", "manifest", "rel", "-n", release_ns).stdout
            new = release_container(cluster, image, manifest, release_ns, tmp_path / "new")
            new_port = webhook_port(new)

            def injected() -> list[x509.Certificate] | None:
                data = cluster.raw.get(f"/api/v1/namespaces/{release_ns}/secrets/{NEW_SECRET}").get("data")
                bundle = _bundle(cluster)
                if not data or not bundle:
                    return None
                ca = x509.load_pem_x509_certificate(base64.b64decode(data["ca.crt"]))
                return bundle if bundle[0] == ca else None

            bundle = new.wait("the new CA injected", injected, timeout=60)
            cluster.cp.route_service(release_ns, SERVICE, 443, old_port, new_port)
            both = len(loop)
            new.wait("admissions while both pods serve", lambda: len(loop) >= both + 8, timeout=60)
            # The old pod leaves the endpoints and stops; the new one answers alone.
            cluster.cp.route_service(release_ns, SERVICE, 443, new_port)
            old.stop()
            alone = len(loop)
            new.wait("admissions after the old pod", lambda: len(loop) >= alone + 4, timeout=60)
        loop_raw.api_client.close()  # type: ignore[no-untyped-call]
        print("\n" + loop.report("helm upgrade 0.1.0 -> self-managed certificate (failurePolicy Fail)"))
        assert not loop.failures(), loop.failures()[:3]
        # The caBundle after the upgrade: the new CA, then chart 0.1.0's, which the old pod served.
        old_ca = x509.load_pem_x509_certificate(base64.b64decode(old_ca_b64))
        assert bundle[1:] == [old_ca], bundle
        assert _bundle(cluster) == bundle
        hook = cluster.raw.get(VWC)["webhooks"][0]
        assert (hook["name"], hook["failurePolicy"]) == (HOOK, "Fail")
        assert cluster.kubectl("get", "secret", OLD_SECRET, "-n", release_ns, check=False).returncode != 0
    finally:
        for rec in (old, new):
            if rec is not None:
                rec.stop()
        uninstall = run_helm(helm, cluster, "uninstall", "rel", "-n", release_ns)
        if cluster_ip:
            egress.unroute(cluster_ip, 443)
    assert uninstall.returncode == 0, uninstall.stderr
