"""``helm upgrade`` from the previous chart version (0.1.0, whose CRDs sat in ``crds/``, which Helm
installs once and never upgrades) to this one (CRDs as templates, ``crds.keep``), over an older
InferenceReplica CRD: after the documented one-time adoption the upgrade replaces the CRD, the replica
made under the old one survives with its uid, the new field is served, and uninstalling keeps both."""

from __future__ import annotations

import copy
import subprocess
import tarfile
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO, example_replica, kubectl_stdin, replica
from test_helm import CHART, helm_binary, run_helm
from test_helm import release_ns as release_ns  # the fixture, shared

from testbed.testing import Cluster

# The commit that released chart 0.1.0 (the last before its CRDs became templates).
PREVIOUS = "62c3de3a8d11a947b41765acff9445483bf24681"
IR_CRD = "inferencereplicas.ome.io"
NEW_FIELD = "pacing"  # in the current CRD, absent from the "older" one


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()


def previous_chart(into: Path) -> Path:
    """charts/omereconcile at PREVIOUS (with schemas/ and deploy/, which its links point into)."""
    proc = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", PREVIOUS, "charts", "schemas", "deploy"],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, (
        f"git archive {PREVIOUS}: {proc.stderr.decode()[-500:]} (a full clone is needed)"
    )
    with tarfile.open(fileobj=BytesIO(proc.stdout)) as tar:
        tar.extractall(into, filter="tar")
    chart = into / "charts" / "omereconcile"
    assert "version: 0.1.0" in (chart / "Chart.yaml").read_text()
    return chart


def older_crd() -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load(
        (REPO / "schemas" / "crds" / "ome.io_inferencereplicas.yaml").read_text()
    )
    old = copy.deepcopy(crd)
    for version in old["spec"]["versions"]:
        del version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][NEW_FIELD]
    return old


def _ome_crds(cluster: Cluster) -> list[str]:
    names = cluster.kubectl("get", "crd", "-o", "name").stdout.split()
    return [n for n in names if n.endswith(".ome.io")]


def test_upgrade_from_the_previous_chart_updates_the_crds_and_keeps_the_replicas(
    helm: str, cluster: Cluster, namespace: str, release_ns: str, tmp_path: Path
) -> None:
    old_chart = previous_chart(tmp_path / "previous")
    # The cluster as chart 0.1.0 left it, back when the InferenceReplica CRD had no spec.pacing.
    (old_chart / "crds" / "ome.io_inferencereplicas.yaml").unlink()
    (old_chart / "crds" / "ome.io_inferencereplicas.yaml").write_text(yaml.safe_dump(older_crd()))
    kubectl_stdin(cluster, yaml.safe_dump(older_crd()), "apply", "--server-side", "--force-conflicts")
    values = [
        "--set", f"watchNamespace={namespace}",
        "--set", "webhook.failurePolicy=Ignore",
        "--set", "webhook.timeoutSeconds=1",
    ]  # fmt: skip
    try:
        install = run_helm(helm, cluster, "install", "rel", str(old_chart), "-n", release_ns, *values)
        assert install.returncode == 0, install.stderr
        status = next((line for line in install.stdout.splitlines() if line.startswith("STATUS:")), "")
        print(f"\n$ helm install rel <chart 0.1.0> over the older CRD -> {status}")
        first = cluster.kubectl("get", "crd", IR_CRD, "-o", "jsonpath={.metadata.resourceVersion}").stdout

        # A replica made under the old CRD; the new field is not known to it yet.
        kubectl_stdin(cluster, yaml.safe_dump(example_replica(namespace)), "apply")
        uid = replica(cluster, namespace)["metadata"]["uid"]
        paced = example_replica(namespace, **{NEW_FIELD: {"partition": 1}})
        paced["metadata"]["name"] = "paced"
        refused = kubectl_stdin(cluster, yaml.safe_dump(paced), "apply", check=False)
        assert refused.returncode != 0, refused.stdout
        assert f'unknown field "spec.{NEW_FIELD}"' in refused.stderr, refused.stderr
        print(f"under the 0.1.0 CRD: {refused.stderr.strip().splitlines()[-1]}")

        # The one-time adoption (charts/omereconcile/README.md), then the upgrade.
        for crd in _ome_crds(cluster):
            cluster.kubectl("label", crd, "app.kubernetes.io/managed-by=Helm", "--overwrite")
            cluster.kubectl(
                "annotate",
                crd,
                "meta.helm.sh/release-name=rel",
                f"meta.helm.sh/release-namespace={release_ns}",
                "--overwrite",
            )
        upgrade = run_helm(helm, cluster, "upgrade", "rel", str(CHART), "-n", release_ns, *values)
        assert upgrade.returncode == 0, upgrade.stderr
        history = run_helm(helm, cluster, "history", "rel", "-n", release_ns).stdout
        print("$ helm history rel\n" + history.rstrip())
        assert "omereconcile-0.1.0" in history
        assert "omereconcile-0.2.0" in history

        crd = yaml.safe_load(cluster.kubectl("get", "crd", IR_CRD, "-o", "yaml").stdout)
        assert crd["metadata"]["resourceVersion"] != first
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        assert NEW_FIELD in schema
        assert replica(cluster, namespace)["metadata"]["uid"] == uid  # the existing replica survived
        kubectl_stdin(cluster, yaml.safe_dump(paced), "apply")
        served = replica(cluster, namespace, "paced")["spec"][NEW_FIELD]
        assert served == {"partition": 1}
        print(
            f"after helm upgrade: CRD {IR_CRD} updated, replica llama-pool kept (uid {uid}), spec.{NEW_FIELD} served: {served}"
        )

        uninstall = run_helm(helm, cluster, "uninstall", "rel", "-n", release_ns)
        assert uninstall.returncode == 0, uninstall.stderr
        assert "kept due to the resource policy" in uninstall.stdout + uninstall.stderr
        assert cluster.kubectl("get", "crd", IR_CRD, check=False).returncode == 0
        assert replica(cluster, namespace)["metadata"]["uid"] == uid
        print("after helm uninstall: the CRDs and both replicas remain (helm.sh/resource-policy: keep)")
    finally:
        # Leave the shared control plane's CRDs as the testbed installed them.
        for crd in _ome_crds(cluster):
            cluster.kubectl("label", crd, "app.kubernetes.io/managed-by-", check=False)
            cluster.kubectl(
                "annotate",
                crd,
                "meta.helm.sh/release-name-",
                "meta.helm.sh/release-namespace-",
                "helm.sh/resource-policy-",
                check=False,
            )
        cluster.kubectl(
            "apply", "--server-side", "--force-conflicts", "--field-manager=testbed",
            "-f", str(REPO / "schemas" / "crds" / "ome.io_inferencereplicas.yaml"),
        )  # fmt: skip
        run_helm(helm, cluster, "uninstall", "rel", "-n", release_ns)
