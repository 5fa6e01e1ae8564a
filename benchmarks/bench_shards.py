"""What sharding the reconciler costs and saves (issue 31), on the real test control plane.

    python benchmarks/bench_shards.py [--replicas 400] [--namespaces 40] [--processes 1,2,4] [--gate both]

A fleet of ``--replicas`` single-pod replicas spread over ``--namespaces`` namespaces is settled once
(by a warm-up process, then stopped). Then for each N of ``--processes``, N ``omereconcile run``
processes start on the settled fleet — N = 1 unsharded (the yardstick, as today), N > 1 with
``--shards`` — and run until their ranges are shared and every replica has had its pass. Per process:
the bytes it received from the API server (``omereconcile_api_received_bytes``: lists, watch
streams, reads), its resident memory (VmRSS) and CPU-seconds, each as a ratio to
the single process of the same run. ``--gate on|off|both``: the API server's ``ShardedListAndWatch``.
With the gate off every process receives every object, which is also what a fleet in one namespace
would cost (docs/reconciler.md, "Sharding"): the gate-off rows measure that design.

Prints a table; asserts nothing. Start-up on a settled fleet, not a roll: each replica's pass is one
GET and no write, so the CPU figures are the watch and cache side of the work.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from testbed.controlplane import free_port  # noqa: E402
from testbed.testing import Cluster, replica_settled, runners_replica, running_cluster  # noqa: E402

SHARDS = 12
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


def metric_sum(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m or m["name"] != name:
            continue
        have = dict(re.findall(r'(\w+)="([^"]*)"', m["labels"] or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(m["value"])
    return total


def wait(what: str, fn: Callable[[], Any], timeout: float, interval: float = 1.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return
        time.sleep(interval)
    raise SystemExit(f"timed out after {timeout:.0f}s waiting for {what}")


class Process:
    """One ``omereconcile run``: its /metrics and its /proc figures."""

    def __init__(self, kubeconfig: Path, log: Path, args: list[str]) -> None:
        self.port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
        cmd = [
            sys.executable, "-m", "omereconcile", "run", "--kubeconfig", str(kubeconfig),
            "--ome-namespace", "ome", "--resync-period", "36000", "--retry-period", "1",
            "--probe-addr", f"127.0.0.1:{self.port}", "--metrics-on-probe-port", "--log-level", "warning",
            *args,
        ]  # fmt: skip
        self.log = log.open("ab")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=REPO, env=env)

    def get(self, path: str) -> str | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=5) as resp:
                return str(resp.read().decode())
        except OSError:
            return None

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self) -> float:
        parts = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def settled(cluster: Cluster, namespaces: list[str], count: int) -> bool:
    items = cluster.raw.get("/apis/ome.io/v1beta1/inferencereplicas")["items"]
    mine = [o for o in items if o["metadata"]["namespace"] in namespaces]
    return len(mine) == count and all(replica_settled(o) for o in mine)


def run_processes(
    cluster: Cluster, n: int, replicas: int, logdir: Path
) -> list[tuple[float, float, float, float]]:
    """Start n processes on the settled fleet; (MB received, MB RSS, CPU s, pods cached) per process."""
    args = [] if n == 1 else ["--shards", str(SHARDS)]
    if n == 1:
        args.append("--no-leader-elect")
    procs = []
    for k in range(n):
        p = Process(cluster.cp.kubeconfig, logdir / f"n{n}-{k}.log", args)
        procs.append(p)
    try:

        def done() -> bool:
            texts = [p.get("/metrics") or "" for p in procs]
            if n > 1:
                held = [metric_sum(t, "omereconcile_shard_ranges") for t in texts]
                if sorted(held) != sorted(SHARDS // n + (1 if k < SHARDS % n else 0) for k in range(n)):
                    return False
            passes = sum(metric_sum(t, "controller_runtime_reconcile_total") for t in texts)
            depth = sum(metric_sum(t, "workqueue_depth") for t in texts)
            cached = sum(
                metric_sum(t, "omereconcile_watched_objects", resource="inferencereplicas") for t in texts
            )
            return passes >= replicas and depth == 0 and cached == replicas

        wait(f"{n} processes to share the fleet and pass every replica", done, timeout=600)
        time.sleep(3)  # the hand-over's relists and the last passes settle
        out = []
        for p in procs:
            text = p.get("/metrics") or ""
            pods = metric_sum(text, "omereconcile_watched_objects", resource="pods")
            received = metric_sum(text, "omereconcile_api_received_bytes")
            out.append((received / 1e6, p.rss_mb(), p.cpu_seconds(), pods))
        return out
    finally:
        for p in procs:
            p.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=400)
    ap.add_argument("--namespaces", type=int, default=40)
    ap.add_argument("--processes", default="1,2,4")
    ap.add_argument("--gate", choices=("on", "off", "both"), default="both")
    args = ap.parse_args()
    counts = [int(x) for x in args.processes.split(",")]
    gates = [True, False] if args.gate == "both" else [args.gate == "on"]
    namespaces = [f"bench-{k:03d}" for k in range(args.namespaces)]
    logdir = Path(tempfile.mkdtemp(prefix="bench-shards-"))
    nodes = max(4, -(-args.replicas * 2 // 100))
    print(
        f"fleet: {args.replicas} single-pod replicas in {args.namespaces} namespaces; {SHARDS} ranges; "
        f"per process: MB received, RSS MB, CPU s, pods cached; ratio = / the single process"
    )
    for gate in gates:
        flag = f"--feature-gates=ShardedListAndWatch={'true' if gate else 'false'}"
        with running_cluster(
            nodes=nodes, gang_scheduler=False, apiserver_args=(flag,), ready_delay=0.5, max_pods=110
        ) as cluster:
            for ns in ["ome", *namespaces]:
                cluster.raw.post(
                    "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                )
            for i in range(args.replicas):
                ns = namespaces[i % len(namespaces)]
                cluster.raw.post(
                    f"/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas",
                    runners_replica(f"r{i:04d}", ns, "engine:v1"),
                )
            warm = Process(cluster.cp.kubeconfig, logdir / "warm.log", ["--no-leader-elect"])
            try:
                wait(
                    "the fleet settled",
                    lambda: settled(cluster, namespaces, args.replicas),
                    timeout=3600,
                    interval=3,
                )
            finally:
                warm.stop()
            base: tuple[float, float, float, float] | None = None
            for n in counts:
                rows = run_processes(cluster, n, args.replicas, logdir)
                mean = tuple(sum(r[k] for r in rows) / n for k in range(4))
                if n == 1:
                    base = (mean[0], mean[1], mean[2], mean[3])
                assert base is not None, "--processes must start with 1 (the yardstick)"
                ratio = " ".join(f"{mean[k] / base[k]:.2f}" if base[k] else "-" for k in range(3))
                total_cpu = sum(r[2] for r in rows) / base[2] if base[2] else 0.0
                print(
                    f"gate {'on ' if gate else 'off'} N={n}: per process {mean[0]:.1f} MB received, "
                    f"{mean[1]:.0f} MB RSS, {mean[2]:.1f} CPU s, {mean[3]:.0f} pods cached; "
                    f"ratio received/RSS/CPU {ratio}; total CPU x{total_cpu:.2f}"
                )
    print(f"logs: {logdir}")


if __name__ == "__main__":
    main()
