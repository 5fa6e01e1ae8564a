"""Session-wide real control plane + fake GPU kubelet for tests under tests/cluster.

Binaries come from testbed/build.sh; if they cannot be built the fixture errors with the build output,
so a broken toolchain shows up red instead of as a silently skipped suite.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

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
