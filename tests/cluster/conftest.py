"""Session-wide real control plane + fake GPU kubelet for tests under tests/cluster.

Binaries come from testbed/build.sh; if they cannot be built the fixture errors with the build output,
so a broken toolchain shows up red instead of as a silently skipped suite.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import delete_replicas, drop_finalizers
from reconciler_proc import Reconciler

from testbed.testing import Cluster, running_cluster

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.cluster)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    # Logs, certs and etcd data live in pytest's temp dir, which keeps the last few runs for post-mortems.
    with running_cluster(tmp_path_factory.mktemp("controlplane"), nodes=4) as c:
        yield c


@pytest.fixture
def namespace(cluster: Cluster) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:8]}"
    cluster.raw.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    yield name
    cluster.raw.delete(f"/api/v1/namespaces/{name}")


# -- the reconciler under its own ServiceAccount (added for tests/cluster/test_reconciler_*.py) -------------

OME_NAMESPACE = "ome"
CONFIG_NAME = "inferenceservice-config"
REPO = HERE.parents[1]
MODEL_NODE_LABEL = "models.ome.io/clusterbasemodel.llama-3-2-1b-instruct"
IREP_PATH = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"


@pytest.fixture(scope="session")
def reconciler_kubeconfig(cluster: Cluster) -> Path:
    """deploy/'s namespace, ServiceAccount and RBAC applied; the operator ConfigMap and the example catalog
    in place (the model Ready through its status subresource); a TokenRequest kubeconfig for the SA."""
    import yaml

    deploy = REPO / "deploy" / "base"
    cluster.kubectl(
        "apply",
        "-f",
        str(deploy / "namespace.yaml"),
        "-f",
        str(deploy / "serviceaccount.yaml"),
        "-f",
        str(deploy / "rbac.yaml"),
    )
    # A short stuck-pod grace so failure tests escalate a stuck pod quickly (the manager has none), and
    # the retry ladder OME's chart configures (without it a crash loop is retried at once, unpaced).
    lifecycle = {
        "stuckPodGracePeriod": "3s",
        "updateRetry": {"maxAttempts": 3, "initialDelay": "1m", "maxDelay": "30m", "multiplier": 2.0},
    }
    cluster.kubectl(
        "create",
        "configmap",
        CONFIG_NAME,
        "-n",
        OME_NAMESPACE,
        "--from-literal=inferenceReplica={}",
        f"--from-literal=lifecycle={json.dumps(lifecycle)}",
    )
    cluster.kubectl("apply", "-f", str(REPO / "examples" / "catalog"))
    # What OME's model agent does on the nodes holding the weights: the rendered pods select on it.
    cluster.kubectl("label", "nodes", "--all", "--overwrite", f"{MODEL_NODE_LABEL}=Ready")
    for f in sorted((REPO / "examples" / "catalog").glob("*.yaml")):
        doc = yaml.safe_load(f.read_text())
        if doc.get("status"):
            cluster.raw.patch(
                f"/apis/ome.io/v1beta1/{doc['kind'].lower()}s/{doc['metadata']['name']}/status",
                {"status": doc["status"]},
            )
    return cluster.cp.service_account_kubeconfig(OME_NAMESPACE, "omereconcile", create=False)


@pytest.fixture
def reconcilers(
    cluster: Cluster, reconciler_kubeconfig: Path, namespace: str, tmp_path: Path
) -> Iterator[Callable[..., Reconciler]]:
    """Start reconcilers watching the test namespace; on teardown, delete the namespace's replicas while
    one still runs (so finalizers lift), then stop them all."""
    started: list[Reconciler] = []

    def start(*args: str, leader_elect: bool = False) -> Reconciler:
        extra = ["--namespace", namespace, "--ome-namespace", OME_NAMESPACE, "--watch-timeout", "20"]
        if not leader_elect:
            extra.append("--no-leader-elect")
        rec = Reconciler(reconciler_kubeconfig, tmp_path / f"reconciler-{len(started)}.log", [*extra, *args])
        started.append(rec.start())
        return rec

    yield start

    try:
        if any(r.alive() for r in started):
            delete_replicas(cluster, namespace)
    finally:
        for r in started:
            r.stop()
        drop_finalizers(cluster, namespace)
