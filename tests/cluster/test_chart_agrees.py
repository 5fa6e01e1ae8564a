"""The chart and ``deploy/`` install the same reconciler: rendered side by side (``helm template`` of
release ``omereconcile`` in namespace ``ome``, ``kubectl kustomize``), the Deployment's pod, the RBAC and
the webhook objects agree in every certificate mode, up to the chart's extra labels. Neither needs a
cluster: helm and kubectl run offline."""

from __future__ import annotations

import copy
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import REPO
from test_helm import CHART, helm_binary, run_helm

Doc = dict[str, Any]
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

# kustomize folder -> the chart values that select the same certificate mode
MODES: dict[str, list[str]] = {
    "deploy": [],
    "deploy/cert-manager": ["--set", "webhook.certificate.mode=certManager"],
    "deploy/existing-secret": [
        "--set", "webhook.certificate.mode=secret",
        "--set", "webhook.certificate.secretName=omereconcile-webhook-cert",
        "--set-string", f"webhook.certificate.caBundle={CA_PEM}",
    ],
    "deploy/sharded": ["--set", "replicaCount=3"],
}  # fmt: skip


@pytest.fixture(scope="module")
def helm() -> str:
    return helm_binary()


@pytest.fixture(scope="module")
def kubectl() -> str:
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    if not assets:
        proc = subprocess.run(
            ["bash", str(REPO / "testbed" / "build.sh")], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stderr[-4000:]
        assets = proc.stdout.strip().splitlines()[-1].split("=", 1)[1]
    return str(Path(assets) / "kubectl")


def _by_key(docs: list[Doc]) -> dict[tuple[str, str], Doc]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs if d}


def _plain(doc: Doc) -> Doc:
    """The object without what only the chart adds: its labels and helm's annotations."""
    out = copy.deepcopy(doc)
    out["metadata"].pop("labels", None)
    annotations = out["metadata"].get("annotations") or {}
    annotations.pop("helm.sh/resource-policy", None)
    if not annotations:
        out["metadata"].pop("annotations", None)
    return out


def _pod(deploy: Doc) -> Doc:
    pod = copy.deepcopy(deploy["spec"]["template"])
    pod["metadata"].pop("labels")
    return pod


def _render(helm: str, kubectl: str, folder: str, values: list[str]) -> tuple[list[Doc], list[Doc]]:
    chart = run_helm(helm, None, "template", "omereconcile", str(CHART), "-n", "ome", *values)
    assert chart.returncode == 0, chart.stderr
    kust = subprocess.run(
        [kubectl, "kustomize", str(REPO / folder)], capture_output=True, text=True, check=False
    )
    assert kust.returncode == 0, kust.stderr
    return [d for d in yaml.safe_load_all(chart.stdout) if d], [
        d for d in yaml.safe_load_all(kust.stdout) if d
    ]


@pytest.mark.parametrize("folder", list(MODES))
def test_chart_and_kustomize_agree(helm: str, kubectl: str, folder: str) -> None:
    chart_docs, kust_docs = _render(helm, kubectl, folder, MODES[folder])
    chart, kust = _by_key(chart_docs), _by_key(kust_docs)
    # The same objects, but the Namespace (the chart installs into one: helm -n NS --create-namespace).
    assert set(chart) == set(kust) - {("Namespace", "ome")}
    key = ("Deployment", "omereconcile")
    assert _pod(chart[key]) == _pod(kust[key])
    assert chart[key]["spec"]["replicas"] == kust[key]["spec"]["replicas"]
    for kind, name in sorted(chart):
        if kind == "Deployment":
            continue
        ours, theirs = _plain(chart[kind, name]), _plain(kust[kind, name])
        if kind in ("Service", "NetworkPolicy", "PodDisruptionBudget"):
            # The chart also selects by app.kubernetes.io/instance (one release among several).
            for obj in (ours, theirs):
                obj["spec"].pop("selector", None)
                obj["spec"].pop("podSelector", None)
        if kind == "ValidatingWebhookConfiguration" and folder == "deploy/existing-secret":
            # Your CA: a value of the chart, an edit of deploy/existing-secret/cabundle.yaml.
            assert ours["webhooks"][0]["clientConfig"].pop("caBundle")
            assert theirs["webhooks"][0]["clientConfig"].pop("caBundle") == ""
        assert ours == theirs, f"{kind}/{name} differs between the chart and {folder}/"


def test_a_single_replica_has_no_disruption_budget(helm: str) -> None:
    proc = run_helm(
        helm, None, "template", "omereconcile", str(CHART), "-n", "ome", "--set", "replicaCount=1"
    )
    assert proc.returncode == 0, proc.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(proc.stdout) if d]
    assert "PodDisruptionBudget" not in kinds
    assert "Deployment" in kinds
