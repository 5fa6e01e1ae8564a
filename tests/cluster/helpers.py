"""Small helpers shared by the reconciler cluster tests (kubectl with stdin, tables, conditions, pods)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

from testbed.testing import Cluster

REPO = Path(__file__).resolve().parents[2]
GATE = "ome.io/serving"
IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"
SERVING_COLUMNS = (
    'custom-columns=NAME:.metadata.name,SERVING:.status.conditions[?(@.type=="ome.io/serving")].status'
)


def kubectl_stdin(
    cluster: Cluster, text: str, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [cluster.cp.binary("kubectl"), "--kubeconfig", str(cluster.cp.kubeconfig), *args, "-f", "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
    return proc


def example_replica(namespace: str, **spec: Any) -> dict[str, Any]:
    """examples/llama-pool.yaml, moved to ``namespace``, with ``spec`` overrides."""
    doc: dict[str, Any] = yaml.safe_load((REPO / "examples" / "llama-pool.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    doc["spec"].update(spec)
    return doc


def apply(cluster: Cluster, obj: dict[str, Any] | list[dict[str, Any]]) -> str:
    docs = obj if isinstance(obj, list) else [obj]
    return kubectl_stdin(cluster, yaml.safe_dump_all(docs), "apply").stdout.strip()


def table(cluster: Cluster, *args: str) -> list[list[str]]:
    return [line.split() for line in cluster.kubectl(*args).stdout.splitlines()]


def replica(cluster: Cluster, ns: str, name: str = "llama-pool") -> dict[str, Any]:
    return cluster.raw.get(f"{IREP.format(ns=ns)}/{name}")


def condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return dict(c)
    return {}


def pods(cluster: Cluster, ns: str, prefix: str = "llama-pool") -> list[dict[str, Any]]:
    items = cluster.raw.get(
        f"/api/v1/namespaces/{ns}/pods", labelSelector=f"ome.io/inferenceservice={prefix}"
    )["items"]
    return sorted(items, key=lambda p: p["metadata"]["name"])


def live_pods(cluster: Cluster, ns: str, prefix: str = "llama-pool") -> list[dict[str, Any]]:
    return [p for p in pods(cluster, ns, prefix) if not p["metadata"].get("deletionTimestamp")]


def serving(pod: dict[str, Any]) -> bool:
    return condition(pod, GATE).get("status") == "True" and condition(pod, "Ready").get("status") == "True"


def events(cluster: Cluster, ns: str, name: str = "llama-pool") -> list[dict[str, Any]]:
    items = cluster.raw.get(f"/api/v1/namespaces/{ns}/events")["items"]
    return [e for e in items if e.get("involvedObject", {}).get("name") == name]


def ready_row(cluster: Cluster, ns: str) -> list[str]:
    rows = table(cluster, "get", "inferencereplicas", "-n", ns)
    return rows[1][:6] if len(rows) > 1 else []


def wait_ready(cluster: Cluster, ns: str, reconciler_tail: Any, name: str = "llama-pool") -> str:
    """``kubectl wait --for=condition=Ready`` on the replica; fails with the reconciler's log tail."""
    out = cluster.kubectl(
        "wait", "--for=condition=Ready", f"inferencereplica/{name}", "-n", ns, "--timeout=50s", check=False
    )
    assert out.returncode == 0, f"{out.stderr}\n{reconciler_tail()}"
    return str(out.stdout.strip())


def serving_table(cluster: Cluster, ns: str) -> list[list[str]]:
    """The seed's pods-with-their-serving-gate listing."""
    return table(
        cluster, "get", "pods", "-n", ns, "-l", "ome.io/inferenceservice=llama-pool", "-o", SERVING_COLUMNS
    )
