"""Small helpers shared by the reconciler cluster tests (kubectl with stdin, tables, conditions, pods,
an in-process controller and a surge pool to roll)."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import yaml

from omereconcile.cluster.kube import Kube
from omereconcile.controller import Controller
from testbed.testing import Cluster, replica_settled, runners_replica, wait_for

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


def delete_replicas(cluster: Cluster, ns: str, timeout: float = 30.0) -> None:
    """Delete every InferenceReplica in ``ns`` and wait (a running reconciler lifts the finalizers)."""
    path = IREP.format(ns=ns)
    for item in cluster.raw.get(path)["items"]:
        cluster.raw.delete(f"{path}/{item['metadata']['name']}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and cluster.raw.get(path)["items"]:
        time.sleep(0.5)


def drop_finalizers(cluster: Cluster, ns: str) -> None:
    """Release what no reconciler is left to finalize, so the namespace can go."""
    path = IREP.format(ns=ns)
    for item in cluster.raw.get(path)["items"]:
        cluster.raw.patch(f"{path}/{item['metadata']['name']}", {"metadata": {"finalizers": None}})


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


def recorded(
    cluster: Cluster, ns: str, *reasons: str, name: str = "llama-pool", times: int = 1, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """The replica's events once each of ``reasons`` is among them at least ``times`` times (counted
    as Event objects, as ``events`` lists them); AssertionError naming the missing ones after ``timeout``.

    A pass writes its status before it records its events (the plan's order,
    ``omereconcile/planner/core.py``: status, pod writes, then events), so a test that waited for a
    status can read the events of that same pass a few milliseconds early on a busy machine: reading
    them once flakes (test_reconciler_goparity's lost-pod restart did, 1 run in 8 under load). Asserting
    that an event is *absent* needs no wait and must not use this."""

    def found() -> list[dict[str, Any]] | None:
        got = events(cluster, ns, name)
        counted = Counter(e.get("reason") for e in got)
        return got if all(counted[r] >= times for r in reasons) else None

    try:
        return wait_for(f"the events {', '.join(reasons)} on {name}", found, timeout=timeout)
    except AssertionError as exc:
        seen = sorted(Counter(e.get("reason") for e in events(cluster, ns, name)).items())
        raise AssertionError(f"{exc}; recorded so far (reason, Events): {seen}") from None


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


def seed_steps_1_to_3(cluster: Cluster, namespace: str, rec: Any) -> None:
    """The seed's Steps 1-3 under a running reconciler ``rec`` (its ``wait``/``tail`` report failures):
    create and wait for Ready, check the tables, scale to 2 and check again."""
    # Step 1: create the replica and wait for Ready.
    assert apply(cluster, example_replica(namespace)) == "inferencereplica.ome.io/llama-pool created"
    assert wait_ready(cluster, namespace, rec.tail) == "inferencereplica.ome.io/llama-pool condition met"

    # Step 2: what OME runs.
    rows = rec.wait(
        "the table to read 1 1 1 1",
        lambda: (r := ready_row(cluster, namespace)) == ["llama-pool", "engine", "1", "1", "1", "1"] and r,
    )
    header = table(cluster, "get", "inferencereplicas", "-n", namespace)[0]
    assert header == ["NAME", "COMPONENT", "DESIRED", "CURRENT", "READY", "AVAILABLE", "AGE"]
    assert rows == ["llama-pool", "engine", "1", "1", "1", "1"]
    pods_table = serving_table(cluster, namespace)
    assert pods_table == [["NAME", "SERVING"], ["llama-pool-engine-0-default-0", "True"]]
    svc = table(
        cluster,
        "get",
        "services",
        "-n",
        namespace,
        "-o",
        "custom-columns=NAME:.metadata.name,TYPE:.spec.type,CLUSTER-IP:.spec.clusterIP",
    )
    assert svc == [["NAME", "TYPE", "CLUSTER-IP"], ["llama-pool-engine-headless", "ClusterIP", "None"]]
    obj = replica(cluster, namespace)
    assert "ome.io/ir-teardown" in obj["metadata"]["finalizers"]
    status = obj["status"]
    assert status["updateRevision"] == status["currentRevision"]
    assert status["labelSelector"]
    assert [r["index"] for r in status["instanceStatuses"]] == [0]

    # Step 3: scale to 2; the new Instance takes index 1.
    out = cluster.kubectl("scale", "inferencereplica", "llama-pool", "-n", namespace, "--replicas=2")
    assert out.stdout.strip() == "inferencereplica.ome.io/llama-pool scaled"
    rec.wait(
        "the table to read 2 2 2 2",
        lambda: ready_row(cluster, namespace) == ["llama-pool", "engine", "2", "2", "2", "2"],
        timeout=90,
    )
    pods_table = serving_table(cluster, namespace)
    assert pods_table == [
        ["NAME", "SERVING"],
        ["llama-pool-engine-0-default-0", "True"],
        ["llama-pool-engine-1-default-0", "True"],
    ]
    assert [p["metadata"]["labels"]["ome.io/instance-index"] for p in live_pods(cluster, namespace)] == [
        "0",
        "1",
    ]


SURGE_ONE = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}


@contextmanager
def running_controller(
    cluster: Cluster, namespace: str, cls: type[Controller] = Controller, workers: int = 2
) -> Iterator[tuple[Controller, Kube]]:
    """An in-process controller for ``namespace`` (resync an hour away, so only events drive it), and
    its client; at the end the replicas are deleted while it still runs, so it lifts the finalizers."""
    kube = Kube.from_kubeconfig(cluster.cp.kubeconfig)
    ctrl = cls(kube, namespaces=[namespace], resync_period=3600, workers=workers, watch_timeout=20)
    ctrl.start()
    try:
        yield ctrl, kube
    finally:
        delete_replicas(cluster, namespace)
        ctrl.stop()


def count_answers(kube: Kube) -> Counter[tuple[str, str, int]]:
    """From now on, every request ``kube`` sends counted by (verb, resource, status code), beside the
    counter it already had."""
    answered: Counter[tuple[str, str, int]] = Counter()
    count_request = kube.on_request

    def on_request(verb: str, resource: str, status: int) -> None:
        answered[(verb, resource, status)] += 1
        if count_request is not None:
            count_request(verb, resource, status)

    kube.on_request = on_request
    return answered


def settled_surge_pool(cluster: Cluster, ctrl: Controller, namespace: str, replicas: int) -> str:
    """A ``SurgeThenDrain`` (``maxSurge: 1``) pool of single-pod Instances, settled and with the
    controller's queue empty; its path."""
    path = f"{IREP.format(ns=namespace)}/pool"
    pool = runners_replica("pool", namespace, "engine:v1", replicas=replicas, lifecycle=SURGE_ONE)
    cluster.raw.post(IREP.format(ns=namespace), pool)
    wait_for("the pool settled", lambda: replica_settled(cluster.raw.get(path)), timeout=120)
    wait_for("the queue to drain", ctrl.queue.idle, timeout=30)
    return path


def roll_pool(cluster: Cluster, path: str, timeout: float) -> None:
    """Change the pool's image and wait until it has rolled to the new revision and settled."""
    obj = cluster.raw.get(path)
    obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
    cluster.raw.put(path, obj)
    wait_for(
        "the pool rolled",
        lambda: (
            replica_settled(o := cluster.raw.get(path))
            and o["status"]["currentRevision"] != obj["status"]["currentRevision"]
        ),
        timeout=timeout,
    )


class StatusWatch:
    """Every status of one replica the API server shows through a watch, in order (each distinct
    resourceVersion), from a background thread; ``since(n)`` is what arrived after the first ``n``."""

    def __init__(self, cluster: Cluster, ns: str, name: str = "llama-pool") -> None:
        import threading

        self.cluster, self.ns, self.name = cluster, ns, name
        self.seen: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._resp: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        rv: str | None = None
        path = IREP.format(ns=self.ns)
        while not self._stop.is_set():
            try:
                for ev in self.cluster.raw.watch(
                    path,
                    resource_version=rv,
                    timeout_seconds=30,
                    on_open=lambda r: setattr(self, "_resp", r),
                    fieldSelector=f"metadata.name={self.name}",
                ):
                    obj = ev.get("object") or {}
                    if ev.get("type") == "ERROR":
                        rv = None
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion") or rv
                    if ev.get("type") in ("ADDED", "MODIFIED") and obj.get("status"):
                        with self._lock:
                            if not self.seen or self.seen[-1] != obj["status"]:
                                self.seen.append(obj["status"])
            except Exception:
                if self._stop.is_set():
                    return
                time.sleep(0.2)

    def __enter__(self) -> StatusWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        resp = self._resp
        if resp is not None:
            with suppress(Exception):  # best effort: the thread is a daemon
                resp.shutdown()
        self._thread.join(5)

    def count(self) -> int:
        with self._lock:
            return len(self.seen)

    def since(self, n: int) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.seen[n:])
