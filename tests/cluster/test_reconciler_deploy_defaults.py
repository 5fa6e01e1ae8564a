"""The operator's `deploy` defaults in the live inferenceservice-config reach the reconciler's pods, and the
ControllerRevision it writes is the one omerender predicts offline from the same ConfigMap."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
import yaml
from helpers import REPO, apply, example_replica, live_pods, replica
from reconciler_proc import Reconciler

from omerender import Catalog, InferenceReplica, parse_object, preview
from testbed.testing import Cluster

CONFIG_PATH = "/api/v1/namespaces/ome/configmaps/inferenceservice-config"  # made by conftest
DEPLOY = json.dumps({"defaultDeploymentMode": "RawDeployment", "terminationGracePeriodSeconds": 321})


@pytest.fixture
def deploy_defaults(cluster: Cluster, reconciler_kubeconfig: object) -> Iterator[None]:
    """The session's ConfigMap with a `deploy` key for this test only (a merge-patch null removes it)."""
    cluster.raw.patch(CONFIG_PATH, {"data": {"deploy": DEPLOY}})
    try:
        yield
    finally:
        cluster.raw.patch(CONFIG_PATH, {"data": {"deploy": None}})


def test_deploy_defaults_reach_the_pods_and_the_predicted_revision(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, deploy_defaults: None
) -> None:
    rec = reconcilers()
    apply(cluster, example_replica(namespace))
    pod = rec.wait("the pod to be created", lambda: (p := live_pods(cluster, namespace)) and p[0], timeout=60)
    assert pod["spec"]["terminationGracePeriodSeconds"] == 321

    catalog_docs = [
        yaml.safe_load(f.read_text()) for f in sorted((REPO / "examples" / "catalog").glob("*.yaml"))
    ]
    live_config = cluster.raw.get(CONFIG_PATH)
    live = parse_object(InferenceReplica, replica(cluster, namespace))
    predicted = preview(live, Catalog.from_objects([*catalog_docs, live_config])).revision.name
    revisions = cluster.raw.get(f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions")["items"]
    assert [r["metadata"]["name"] for r in revisions] == [predicted], rec.tail()
    without = preview(live, Catalog.from_objects(catalog_docs)).revision.name
    assert without != predicted  # the default is part of the hashed pod spec
