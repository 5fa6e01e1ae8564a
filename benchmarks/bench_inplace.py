"""An in-place image update (``InPlaceIfPossible``) against a SurgeThenDrain roll of the same replica, in
one run on the real test control plane. Prints figures and the ratio; asserts nothing.

    python benchmarks/bench_inplace.py [--instances 10] [--ready-delay 2.0] [--restart-delay SECONDS]

One replica of ``--instances`` single-pod Instances, one Instance moving at a time in both rolls
(``maxSurge: 1`` for SurgeThenDrain, ``maxUnavailable: 1`` for the in-place roll). It is first rolled
``engine:v1`` → ``engine:v2`` by SurgeThenDrain, then its strategy is switched (which mints no revision)
and it is rolled ``engine:v2`` → ``engine:v3`` in place. By default the fake kubelet readies a new pod and a
container restarted on a new image after the same ``--ready-delay``, so the difference is what each roll
does around that start (``--restart-delay`` gives the restart its own delay, e.g. for a model whose
weights stay in the pod's emptyDir): a surge creates a pod, waits for it, drains and deletes the old one; an
in-place roll drains, patches, waits for the restarted container and puts the pod back.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_reconciler import wait
from omereconcile.cluster.kube import Kube
from omereconcile.controller import Controller
from testbed.testing import Cluster, replica_settled, runners_replica, running_cluster

IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"
SURGE = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}
IN_PLACE = {"updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxUnavailable": 1}}}


def roll(
    cluster: Cluster, ctrl: Controller, kube: Kube, path: str, image: str, **spec: Any
) -> tuple[float, int]:
    """Change the replica's image (and ``spec``), wait until it has rolled and settled; the wall time
    and the reconciler's API writes."""
    wait("the queue to drain", ctrl.queue.idle, timeout=60)
    if spec:
        obj = cluster.raw.get(path)
        obj["spec"].update(spec)
        cluster.raw.put(path, obj)
        wait("the strategy change observed", lambda: replica_settled(cluster.raw.get(path)), timeout=60)
        wait("the queue to drain", ctrl.queue.idle, timeout=60)
    writes0 = kube.writes
    obj = cluster.raw.get(path)
    first = obj["status"]["currentRevision"]
    obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = image
    t0 = time.monotonic()
    cluster.raw.put(path, obj)
    wait(
        f"the roll to {image}",
        lambda: replica_settled(o := cluster.raw.get(path)) and o["status"]["currentRevision"] != first,
    )
    return time.monotonic() - t0, kube.writes - writes0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--instances", type=int, default=10)
    ap.add_argument("--ready-delay", type=float, default=2.0)
    ap.add_argument(
        "--restart-delay",
        type=float,
        default=None,
        help="start-up delay of a container restarted on a new image (default: --ready-delay)",
    )
    args = ap.parse_args()
    n = args.instances
    restart = args.ready_delay if args.restart_delay is None else args.restart_delay
    with running_cluster(
        nodes=4, gang_scheduler=False, ready_delay=args.ready_delay, restart_delay=restart
    ) as cluster:
        ns = "bench-inplace"
        cluster.raw.post(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        )
        kube = Kube.from_kubeconfig(cluster.cp.kubeconfig)
        ctrl = Controller(kube, namespaces=[ns], resync_period=3600, workers=2, watch_timeout=60)
        ctrl.start()
        try:
            path = f"{IREP.format(ns=ns)}/pool"
            cluster.raw.post(
                IREP.format(ns=ns), runners_replica("pool", ns, "engine:v1", replicas=n, lifecycle=SURGE)
            )
            wait("the pool settled", lambda: replica_settled(cluster.raw.get(path)), timeout=300)
            surge_t, surge_w = roll(cluster, ctrl, kube, path, "engine:v2")
            uids = {p["metadata"]["uid"] for p in cluster.raw.get(f"/api/v1/namespaces/{ns}/pods")["items"]}
            place_t, place_w = roll(cluster, ctrl, kube, path, "engine:v3", lifecycle=IN_PLACE)
            kept = uids == {
                p["metadata"]["uid"] for p in cluster.raw.get(f"/api/v1/namespaces/{ns}/pods")["items"]
            }
        finally:
            ctrl.stop()
    print(
        f"{n} single-pod Instances, one Instance at a time; fake kubelet start-up delay {args.ready_delay}s "
        f"for a new pod, {restart}s for a container restarted on a new image ({load()})"
    )
    print(f"  SurgeThenDrain (maxSurge 1):          {surge_t:6.1f}s  {surge_w / n:.1f} writes/Instance")
    print(f"  InPlaceIfPossible (maxUnavailable 1): {place_t:6.1f}s  {place_w / n:.1f} writes/Instance")
    print(f"  in-place kept every pod's UID: {kept}")
    print(
        f"ratio (in-place / SurgeThenDrain): wall time {place_t / surge_t:.2f}x, writes {place_w / surge_w:.2f}x"
    )


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f}/{five:.1f}"


if __name__ == "__main__":
    main()
