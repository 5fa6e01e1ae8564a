"""The reconciler at fleet scale on the real test control plane: settle, resync and a catalog change.

    python benchmarks/bench_fleet.py [--replicas 1000] [--pools 100] [--instances 4] [--ready-delay 2.0]

`omereconcile run` runs as its own process (admin kubeconfig, one namespace, `--concurrency` as given,
by default the CLI's), so its peak RSS (VmHWM) and CPU seconds are its own. The fleet: `--replicas`
single-Instance replicas and `--pools` replicas of `--instances` Instances, all `runtimeRef` replicas
of two ClusterServingRuntimes with no GPU request (so thousands of pods fit on the fake nodes). Phases:

1. **settle** — create every replica; time until every one is Ready with no operation in flight.
2. **resync** — a change of `inferenceservice-config` enqueues every replica (as the periodic resync
   does); the API server's request counts over that window, per replica.
3. **roll** — an image change of the runtime that 10% of the replicas name (`maxSurge: 1` each, as
   unset budgets are uncapped); time until they have rolled, and the work queue's mean wait
   (`workqueue_queue_duration_seconds`) so a controller-bound roll shows as queue latency rather than
   pod start-up.

Prints figures; asserts nothing. CI runs it at a reduced size (`scripts/test.sh`).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from omereconcile.cli import DEFAULT_CONCURRENCY  # noqa: E402
from testbed.controlplane import free_port  # noqa: E402
from testbed.testing import Cluster, replica_settled, running_cluster  # noqa: E402

NS = "fleet"
IREP = f"/apis/ome.io/v1beta1/namespaces/{NS}/inferencereplicas"
CSR = "/apis/ome.io/v1beta1/clusterservingruntimes"
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


def metrics(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    out = []
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m["name"] == name:
            out.append((dict(re.findall(r'(\w+)="([^"]*)"', m["labels"] or "")), float(m["value"])))
    return out


def apiserver_requests(cluster: Cluster) -> Counter[str]:
    """kube-apiserver's own count of requests by verb (every client: reconciler, kubelet, KCM, us)."""
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    out: Counter[str] = Counter()
    for labels, value in metrics(text, "apiserver_request_total"):
        out[labels.get("verb", "")] += int(value)
    return out


def runtime(name: str, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": False}],
            "engineConfig": {
                "runner": {
                    "name": "ome-container",
                    "image": image,
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                },
                "terminationGracePeriodSeconds": 1,
            },
        },
    }


def replica(name: str, runtime_name: str, replicas: int) -> dict[str, Any]:
    strategy = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "component": "engine",
            "replicas": replicas,
            "runtimeRef": {"name": runtime_name},
            "lifecycle": strategy,
        },
    }


def wait(what: str, fn: Callable[[], Any], timeout: float, interval: float = 1.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return
        time.sleep(interval)
    raise SystemExit(f"timed out after {timeout:.0f}s waiting for {what}")


class Process:
    """The reconciler process: its /metrics and its /proc figures."""

    def __init__(self, kubeconfig: Path, log: Path, concurrency: int) -> None:
        self.port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        cmd = [
            sys.executable,
            "-m",
            "omereconcile",
            "run",
            "--kubeconfig",
            str(kubeconfig),
            "--namespace",
            NS,
            "--no-leader-elect",
            "--concurrency",
            str(concurrency),
            "--resync-period",
            "36000",
            "--probe-addr",
            f"127.0.0.1:{self.port}",
            "--metrics-on-probe-port",
            "--log-level",
            "warning",
        ]
        self.log = log.open("ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=REPO, env=env)

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=10) as resp:
            return str(resp.read().decode())

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=2) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def rss_mb(self) -> tuple[float, float]:
        """(current, peak) resident set size in MB."""
        fields = dict(
            line.split(":", 1) for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines()
        )
        kb = lambda k: float(fields[k].split()[0]) / 1024  # noqa: E731
        return kb("VmRSS"), kb("VmHWM")

    def cpu_seconds(self) -> float:
        parts = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

    def queue_wait(self) -> tuple[float, float]:
        """(sum, count) of workqueue_queue_duration_seconds."""
        text = self.metrics()
        total = sum(v for _, v in metrics(text, "workqueue_queue_duration_seconds_sum"))
        count = sum(v for _, v in metrics(text, "workqueue_queue_duration_seconds_count"))
        return total, count

    def work_time(self) -> tuple[float, float]:
        """(sum, count) of workqueue_work_duration_seconds: how long the passes themselves take."""
        text = self.metrics()
        total = sum(v for _, v in metrics(text, "workqueue_work_duration_seconds_sum"))
        count = sum(v for _, v in metrics(text, "workqueue_work_duration_seconds_count"))
        return total, count

    def passes(self) -> int:
        return int(sum(v for _, v in metrics(self.metrics(), "controller_runtime_reconcile_total")))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def all_settled(cluster: Cluster, names: list[str]) -> bool:
    items = {o["metadata"]["name"]: o for o in cluster.raw.get(IREP)["items"]}
    return all(n in items and replica_settled(items[n]) for n in names)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=1000, help="single-Instance replicas")
    ap.add_argument("--pools", type=int, default=100, help="replicas of --instances Instances")
    ap.add_argument("--instances", type=int, default=4)
    ap.add_argument("--ready-delay", type=float, default=2.0, help="fake kubelet start-up time per pod")
    ap.add_argument("--roll-fraction", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    args = ap.parse_args()
    pods = args.replicas + args.pools * args.instances
    nodes = max(4, -(-pods * 2 // 100))  # room for every pod and its surge at 100 pods a node
    with running_cluster(nodes=nodes, ready_delay=args.ready_delay, max_pods=110) as cluster:
        for ns in (NS, "ome"):
            cluster.raw.post(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            )
        cluster.raw.post(CSR, runtime("fleet-static", "engine:v1"))
        cluster.raw.post(CSR, runtime("fleet-roll", "engine:v1"))
        names = [f"r{i:04d}" for i in range(args.replicas)] + [f"p{i:03d}" for i in range(args.pools)]
        rolling = set(names[:: max(1, round(1 / args.roll_fraction))])
        log = Path(tempfile.mkdtemp(prefix="bench-fleet-")) / "reconciler.log"
        proc = Process(cluster.cp.kubeconfig, log, args.concurrency)
        try:
            wait("the reconciler's caches", proc.ready, timeout=120, interval=0.5)
            idle_rss = proc.rss_mb()[0]
            print(
                f"fleet: {args.replicas} replicas x 1 Instance + {args.pools} x {args.instances} = {pods} pods "
                f"on {nodes} fake nodes; start-up {args.ready_delay}s/pod; reconciler RSS idle {idle_rss:.0f} MB"
            )

            # 1. settle
            t0, cpu0, req0 = time.monotonic(), proc.cpu_seconds(), apiserver_requests(cluster)
            for n in names:
                size = args.instances if n.startswith("p") else 1
                cluster.raw.post(IREP, replica(n, "fleet-roll" if n in rolling else "fleet-static", size))
            wait(
                f"{len(names)} replicas settled",
                lambda: all_settled(cluster, names),
                timeout=3600,
                interval=3,
            )
            dt = time.monotonic() - t0
            req = apiserver_requests(cluster) - req0
            print(
                f"settle: {dt:.1f}s for {len(names)} replicas / {pods} pods; reconciler CPU "
                f"{proc.cpu_seconds() - cpu0:.1f}s; API server requests (all clients) {dict(req)}"
            )

            # 2. resync: a ConfigMap change enqueues every replica; nothing changes, nothing is written
            time.sleep(5)
            passes0, req0, cpu0 = proc.passes(), apiserver_requests(cluster), proc.cpu_seconds()
            t0 = time.monotonic()
            cluster.kubectl(
                "create", "configmap", "inferenceservice-config", "-n", "ome", "--from-literal=lifecycle={}"
            )
            wait(
                "a pass per replica",
                lambda: proc.passes() - passes0 >= len(names),
                timeout=1200,
                interval=0.5,
            )
            dt = time.monotonic() - t0
            time.sleep(3)
            req = apiserver_requests(cluster) - req0
            writes = sum(v for k, v in req.items() if k not in ("GET", "LIST", "WATCH"))
            print(
                f"resync: {proc.passes() - passes0} passes in {dt:.1f}s ({dt / len(names) * 1000:.1f} ms/replica), "
                f"reconciler CPU {proc.cpu_seconds() - cpu0:.1f}s; API server requests {dict(req)} "
                f"= {sum(req.values()) / len(names):.2f}/replica, writes {writes} (fake kubelet leases included)"
            )

            # 3. roll 10%
            roll = sorted(rolling)
            # Read before the change: a replica that rolls fast must not be read already rolled.
            before = {n: cluster.raw.get(f"{IREP}/{n}")["status"]["currentRevision"] for n in roll}
            qs0, qc0 = proc.queue_wait()
            ws0, wc0 = proc.work_time()
            t0, cpu0 = time.monotonic(), proc.cpu_seconds()
            rt = cluster.raw.get(f"{CSR}/fleet-roll")
            rt["spec"]["engineConfig"]["runner"]["image"] = "engine:v2"
            cluster.raw.put(f"{CSR}/fleet-roll", rt)

            def rolled() -> bool:
                items = {o["metadata"]["name"]: o for o in cluster.raw.get(IREP)["items"]}
                return all(
                    replica_settled(items[n])
                    and (items[n]["status"].get("currentRevision") or "").rsplit("-", 1)[-1]
                    != before[n].rsplit("-", 1)[-1]
                    for n in roll
                )

            wait(f"{len(roll)} replicas rolled", rolled, timeout=3600, interval=2)
            dt = time.monotonic() - t0
            qs, qc = proc.queue_wait()
            ws, wc = proc.work_time()
            instances = sum(args.instances if n.startswith("p") else 1 for n in roll)
            mean_wait = (qs - qs0) / max(qc - qc0, 1)
            mean_pass = (ws - ws0) / max(wc - wc0, 1)
            # maxSurge 1: the largest rolled replica replaces its Instances one start-up after another.
            floor = max(args.instances if n.startswith("p") else 1 for n in roll) * args.ready_delay
            print(
                f"roll: {len(roll)} replicas / {instances} Instances in {dt:.1f}s (start-up floor "
                f"{floor:.0f}s: {dt / floor:.2f}x); work-queue mean wait {mean_wait * 1000:.1f} ms, "
                f"mean pass {mean_pass * 1000:.1f} ms over {int(qc - qc0)} passes "
                f"(start-up per pod {args.ready_delay}s); reconciler CPU {proc.cpu_seconds() - cpu0:.1f}s; "
                f"load average {os.getloadavg()[0]:.1f}"
            )
            rss, peak = proc.rss_mb()
            print(
                f"reconciler: RSS now {rss:.0f} MB, peak {peak:.0f} MB; CPU total {proc.cpu_seconds():.1f}s"
            )
        finally:
            proc.stop()


if __name__ == "__main__":
    main()
