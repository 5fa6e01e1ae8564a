"""``kubectl ome diff -f`` against live replicas, run the way kubectl runs plugins.

Two replicas of the example model, each on its own namespaced copy of the example runtime, created by
the reconciler (so their ControllerRevisions are live); a file bumping one runtime's image names exactly
the replica on it as rolling from its live revision, and the other as unchanged.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from helpers import REPO, apply, example_replica
from kubectl_plugin import kubectl_ome
from reconciler_proc import Reconciler

from testbed.testing import Cluster

RUNTIME_FILE = REPO / "examples" / "catalog" / "vllm-llama-3-2-1b-instruct.yaml"


def runtime(namespace: str, name: str, image: str) -> dict[str, Any]:
    doc: dict[str, Any] = copy.deepcopy(yaml.safe_load(RUNTIME_FILE.read_text()))
    doc["kind"] = "ServingRuntime"
    doc["metadata"] = {"name": name, "namespace": namespace}
    doc["spec"]["engineConfig"]["runner"]["image"] = image
    return doc


def replica(namespace: str, name: str, runtime_name: str) -> dict[str, Any]:
    """The example replica, named ``name``, on the namespaced runtime ``runtime_name``."""
    doc = example_replica(namespace, runtimeRef={"name": runtime_name, "kind": "ServingRuntime"})
    doc["metadata"]["name"] = name
    return doc


def live_revision(cluster: Cluster, namespace: str, name: str, rec: Reconciler) -> str:
    """The replica's ControllerRevision, once the reconciler has created it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        obj = cluster.raw.get(f"/apis/ome.io/v1beta1/namespaces/{namespace}/inferencereplicas/{name}")
        rev = (obj.get("status") or {}).get("updateRevision")
        if rev:
            stored = cluster.raw.get(f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions/{rev}")
            return str(stored["metadata"]["name"])
        time.sleep(0.3)
    raise AssertionError(f"{name}: no updateRevision after 30s\n{rec.tail()}")


def test_diff_of_a_runtime_image_bump_names_the_replica_on_it(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str, tmp_path: Path
) -> None:
    rec = reconcilers()
    image = "docker.io/vllm/vllm-openai:v0.9.0.1"
    apply(cluster, [runtime(namespace, "rt-a", image), runtime(namespace, "rt-b", image)])
    apply(cluster, [replica(namespace, "pool-a", "rt-a"), replica(namespace, "pool-b", "rt-b")])
    old_a = live_revision(cluster, namespace, "pool-a", rec)
    old_b = live_revision(cluster, namespace, "pool-b", rec)

    changed = tmp_path / "changed"
    changed.mkdir()
    # Without a namespace: kubectl apply -n puts it in -n's namespace, and so does the diff.
    bumped = runtime(namespace, "rt-a", "docker.io/vllm/vllm-openai:v0.9.1")
    del bumped["metadata"]["namespace"]
    (changed / "rt-a.yaml").write_text(yaml.safe_dump(bumped))

    diff = kubectl_ome(cluster, "diff", "-f", str(changed), "-n", namespace, "--show-unchanged")
    assert diff.returncode == 1, diff.stderr
    heads = [ln for ln in diff.stdout.splitlines() if ln.startswith(f"{namespace}/")]
    assert len(heads) == 2, diff.stdout
    assert heads[0].startswith(f"{namespace}/pool-a: rolls {old_a} -> "), diff.stdout
    new_a = heads[0].split(" -> ")[1]
    assert new_a != old_a
    assert heads[1] == f"{namespace}/pool-b: unchanged", diff.stdout
    assert (
        '.image: "docker.io/vllm/vllm-openai:v0.9.0.1" -> "docker.io/vllm/vllm-openai:v0.9.1"' in diff.stdout
    )
    assert f"ServingRuntime {namespace}/rt-a configured" in diff.stdout

    # Only rolls: --fail-on blocks passes; -o json, read from stdin, says the same.
    quiet = kubectl_ome(cluster, "diff", "-f", str(changed), "-n", namespace, "--fail-on", "blocks")
    assert quiet.returncode == 0, quiet.stderr
    piped = kubectl_ome(
        cluster, "diff", "-f", "-", "-n", namespace, "-o", "json", stdin=yaml.safe_dump(bumped)
    )
    assert piped.returncode == 1, piped.stderr
    doc = json.loads(piped.stdout)
    verdicts = {
        (r["name"], r["status"], r["before"]["revision"], r["after"]["revision"]) for r in doc["replicas"]
    }
    assert verdicts == {("pool-a", "rolls", old_a, new_a), ("pool-b", "unchanged", old_b, old_b)}

    # --forecast: the roll's cost against the live nodes (the fake kubelet's GPU nodes) completes.
    cost = kubectl_ome(cluster, "diff", "-f", str(changed), "-n", namespace, "--forecast")
    assert cost.returncode == 1, cost.stderr
    assert "total: rolls 1 replica / 1 Instance" in cost.stdout
    assert "forecast: rolls 1 replica" in cost.stderr
