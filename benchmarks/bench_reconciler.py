"""The reconciler on the real test control plane: a resync of settled replicas, and a rolling update of 20
single-pod Instances next to a 20-pod StatefulSet rolled by kube-controller-manager. Prints figures and
ratios; asserts nothing.

    python benchmarks/bench_reconciler.py [--replicas 100] [--instances 20] [--ready-delay 2.0] [--unfiltered]

Both rollouts run on the same control plane and fake kubelet (a fixed start-up delay per pod). API writes
are counted the same way for both from kube-apiserver's ``apiserver_request_total``: writes to the
workload's objects (pods, their status, Services, ControllerRevisions, events, the InferenceReplica or
StatefulSet and its status), minus the fake kubelet's own status patches and every delete it sent (it
can send a pod's delete more than once: each watch event of a terminating pod schedules one), minus the
benchmark's own spec change. The reconciler's writes are also counted client-side (``Kube.writes``), and
its requests are timed, so the roll prints where each Instance's time goes (create → the replacement
served → the source held out → the source deleted → the next create) and how many passes it took,
by what enqueued them. ``--unfiltered`` runs the controller as it was before its update filters (every
watch update enqueues, the echo of its own replica writes included; no follow-up passes; no pod-write
expectations; every count window's end is a pass, and so is every re-run of a key added while its pass
ran), to compare in one code base.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from omereconcile.cluster.kube import Kube, Timeout
from omereconcile.controller import Controller, Key, PassResult
from testbed.testing import Cluster, replica_settled, runners_replica, running_cluster

IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"
WRITE_VERBS = {"POST", "PUT", "PATCH", "DELETE", "CREATE", "UPDATE", "APPLY"}
WORKLOAD = {
    ("pods", ""),
    ("pods", "status"),
    ("services", ""),
    ("controllerrevisions", ""),
    ("events", ""),
    ("inferencereplicas", ""),
    ("inferencereplicas", "status"),
    ("statefulsets", ""),
    ("statefulsets", "status"),
}
_LINE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$")


def apiserver_writes(cluster: Cluster) -> Counter[tuple[str, str, str]]:
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    out: Counter[tuple[str, str, str]] = Counter()
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m["labels"]))
        verb = labels.get("verb", "")
        key = (labels.get("resource", ""), labels.get("subresource", ""))
        if verb in WRITE_VERBS and key in WORKLOAD:
            out[(key[0], key[1], verb)] += int(float(m["value"]))
    return out


def by_kind(delta: Counter[tuple[str, str, str]], n: int) -> str:
    """The API server's writes per Instance (or pod) by resource, subresource and verb."""
    parts = [
        f"{res}{'/' + sub if sub else ''} {verb}: {count / n:.2f}"
        for (res, sub, verb), count in sorted(delta.items())
        if count
    ]
    return ", ".join(parts)


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def workload_writes(
    before: Counter[tuple[str, str, str]], after: Counter[tuple[str, str, str]], kubelet: int
) -> int:
    return sum((after - before).values()) - kubelet


class TimedKube(Kube):
    """The reconciler's client, with every write it sends recorded as (time, verb, path, pod name)."""

    def __init__(self, api_client: Any) -> None:
        super().__init__(api_client)
        self.log: list[tuple[float, str, str, str]] = []
        self._log_lock = threading.Lock()

    def _send(
        self, method: str, path: str, *, query: Any, body: Any, content_type: str, timeout: Timeout
    ) -> Any:
        if method != "GET":
            name = ((body or {}).get("metadata") or {}).get("name", "") if isinstance(body, dict) else ""
            with self._log_lock:
                self.log.append((time.monotonic(), method, path, name))
        return super()._send(method, path, query=query, body=body, content_type=content_type, timeout=timeout)


class TimedController(Controller):
    """Counts the time the workers spend inside passes."""

    busy = 0.0

    def reconcile(self, key: Key) -> PassResult:
        t0 = time.monotonic()
        try:
            return super().reconcile(key)
        finally:
            self.busy += time.monotonic() - t0


class UnfilteredController(TimedController):
    """The controller without its update filters, follow-up passes and expectations (the yardstick)."""

    def _replica_relevant(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        return True

    def _owned_relevant(self, resource: str) -> Callable[[dict[str, Any], dict[str, Any]], bool]:
        return lambda old, new: True

    def reconcile(self, key: Key) -> PassResult:
        with self._stats_lock:  # a re-run whose trigger the last pass took runs too
            triggers = self._trigger.setdefault(key, [])
            if not triggers:
                triggers.append("repeat")
        res = super().reconcile(key)
        if res.window_after is not None:  # the window's end and the planner's wake as one, as before
            wake = res.window_after if res.requeue_after is None else min(res.requeue_after, res.window_after)
            res = replace(res, requeue_after=wake, window_after=None)
        return replace(res, follow_up=False)

    def _stale_window_only(self, key: Key, triggers: list[str]) -> bool:
        return False


def count_kubelet_deletes(cluster: Cluster) -> Callable[[], int]:
    """The fake kubelet's pod deletes, as it sends them (a terminating pod may get more than one)."""
    raw = cluster.kubelet.raw
    sent = [0]
    delete = raw.delete

    def counted(path: str, *args: Any, **kw: Any) -> Any:
        if "/pods/" in path:
            sent[0] += 1
        return delete(path, *args, **kw)

    raw.delete = counted  # type: ignore[method-assign]
    return lambda: sent[0]


_POD = re.compile(r"-(\d+)-default-(\d)$")


def phases(log: list[tuple[float, str, str, str]], t0: float) -> str:
    """Median seconds per step of a single-pod surge, from the reconciler's own writes: the replacement's
    create → its gate True (it started and serves) → the source's gate False (the replacement is Ready
    in the EndpointSlices) → the source's delete (drained) → the next Instance's create (the source gone,
    the operation ended, the next one started)."""
    marks: dict[int, dict[str, float]] = {}
    creates: list[float] = []
    for t, verb, path, name in log:
        if t < t0:
            continue
        pod = name if verb == "POST" else path.rstrip("/").split("/")[-1 if verb == "DELETE" else -2]
        m = _POD.search(pod)
        if not m or "/pods" not in path:
            continue
        mk = marks.setdefault(int(m[1]), {})
        if verb == "POST":
            mk.setdefault("create", t)
            creates.append(t)
        elif verb == "PATCH":
            mk.setdefault("serve" if "create" in mk and "serve" not in mk else "hold", t)
        elif verb == "DELETE":
            mk.setdefault("delete", t)
    creates.sort()
    puts = sorted(t for t, verb, path, _ in log if t >= t0 and verb == "PUT" and path.endswith("/status"))
    steps: dict[str, list[float]] = {
        "start-up": [],
        "to drain": [],
        "drain": [],
        "to next": [],
        "(of which: delete → operation ended": [],
        "ended → next create)": [],
    }
    for mk in marks.values():
        if not {"create", "serve", "hold", "delete"} <= mk.keys():
            continue
        steps["start-up"].append(mk["serve"] - mk["create"])
        steps["to drain"].append(mk["hold"] - mk["serve"])
        steps["drain"].append(mk["delete"] - mk["hold"])
        later = [c for c in creates if c > mk["delete"]]
        if later:
            steps["to next"].append(later[0] - mk["delete"])
            # The status write that ends the operation: the first after the delete.
            ended = [t for t in puts if mk["delete"] < t <= later[0]]
            if ended:
                steps["(of which: delete → operation ended"].append(ended[0] - mk["delete"])
                steps["ended → next create)"].append(later[0] - ended[0])
    return ", ".join(f"{k} {statistics.median(v):.2f}s" for k, v in steps.items() if v)


def wait(what: str, fn: Callable[[], Any], timeout: float = 300.0, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return
        time.sleep(interval)
    raise SystemExit(f"timed out waiting for {what}")


def namespace(cluster: Cluster, name: str) -> str:
    cluster.raw.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    )
    return name


def bench_resync(cluster: Cluster, ctrl: Controller, kube: Kube, ns: str, n: int) -> None:
    t0 = time.monotonic()
    for i in range(n):
        cluster.raw.post(IREP.format(ns=ns), runners_replica(f"r{i:03d}", ns, "engine:v1"))
    wait(
        f"{n} replicas settled",
        lambda: (
            all(replica_settled(o) for o in cluster.raw.get(IREP.format(ns=ns))["items"])
            and len(cluster.raw.get(IREP.format(ns=ns))["items"]) == n
        ),
        timeout=600,
        interval=1.0,
    )
    print(f"{n} replicas created and Ready in {time.monotonic() - t0:.1f}s")
    wait("the queue to drain", ctrl.queue.idle, timeout=60)
    time.sleep(2.0)
    held = getattr(ctrl, "coalescer", None)  # counts held back by the last passes reach the API first
    wait(
        "the queue to drain", lambda: ctrl.queue.idle() and (held is None or held.pending() == 0), timeout=60
    )
    writes0, passes0, reads0 = kube.writes, ctrl.passes, kube.reads
    t0 = time.monotonic()
    ctrl.enqueue_all()
    wait("the resync", lambda: ctrl.passes - passes0 >= n and ctrl.queue.idle(), timeout=120, interval=0.01)
    dt = time.monotonic() - t0
    print(
        f"resync of {n} settled replicas: {ctrl.passes - passes0} passes in {dt:.2f}s "
        f"({dt / n * 1000:.1f} ms/replica), API writes: {kube.writes - writes0}, reads: {kube.reads - reads0}"
    )


def bench_rollout(
    cluster: Cluster, ctrl: Controller, kube: Kube, ns: str, n: int, kubelet_deletes: Callable[[], int]
) -> tuple[float, float]:
    path = IREP.format(ns=ns)
    strategy = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}
    cluster.raw.post(path, runners_replica("pool", ns, "engine:v1", replicas=n, lifecycle=strategy))
    wait("the pool settled", lambda: replica_settled(cluster.raw.get(f"{path}/pool")), timeout=300)
    wait("the queue to drain", ctrl.queue.idle, timeout=60)
    before = apiserver_writes(cluster)
    kubelet0, deletes0 = cluster.kubelet.status_patches, kubelet_deletes()
    w0 = kube.writes
    counts0 = Counter(kube.write_counts())
    held0 = getattr(getattr(ctrl, "coalescer", None), "held", 0)
    passes0, busy0 = ctrl.passes, getattr(ctrl, "busy", 0.0)
    triggers0, filtered0 = Counter(ctrl.pass_triggers), Counter(ctrl.filtered)
    waits0, expired0, stale0, repeats0 = (
        ctrl.waits,
        ctrl.expectations.expired,
        ctrl.stale_windows,
        ctrl.repeats,
    )
    t0 = time.monotonic()
    obj = cluster.raw.get(f"{path}/pool")
    obj["spec"]["runners"][0]["template"]["spec"]["containers"][0]["image"] = "engine:v2"
    cluster.raw.put(f"{path}/pool", obj)
    wait(
        "the pool rolled",
        lambda: (
            replica_settled(o := cluster.raw.get(f"{path}/pool"))
            and o["status"]["currentRevision"] != obj["status"]["currentRevision"]
        ),
        timeout=900,
    )
    dt = time.monotonic() - t0
    wait(
        "old pods gone",
        lambda: len(cluster.raw.get(f"/api/v1/namespaces/{ns}/pods")["items"]) == n,
        timeout=60,
    )
    time.sleep(1.0)
    # Not the reconciler's: the kubelet's status patches and deletes, and our own spec change.
    kubelet = (cluster.kubelet.status_patches - kubelet0) + (kubelet_deletes() - deletes0)
    after = apiserver_writes(cluster)
    server = workload_writes(before, after, kubelet + 1)
    client = kube.writes - w0
    detail = dict(Counter(kube.write_counts()) - counts0)
    held = getattr(ctrl, "coalescer", None)
    print(f"OMENative SurgeThenDrain maxSurge 1, {n} Instances: {dt:.1f}s, {dt / n:.2f}s/Instance ({load()})")
    print(
        f"  API writes (apiserver, kubelet excluded): {server} = {server / n:.1f}/Instance; client-side: {client} = {client / n:.1f}/Instance"
    )
    print(f"  client-side by kind: {detail}")
    print(f"  apiserver by kind, per Instance (kubelet's included): {by_kind(after - before, n)}")
    if held is not None:
        print(f"  count-only status writes held back: {held.held - held0}")
    print(
        f"  kubelet excluded: {kubelet} writes ({kubelet_deletes() - deletes0} of them pod deletes); "
        f"passes: {ctrl.passes - passes0} = {(ctrl.passes - passes0) / n:.1f}/Instance, "
        f"workers busy {getattr(ctrl, 'busy', 0.0) - busy0:.1f}s"
    )
    triggers = Counter(ctrl.pass_triggers) - triggers0
    print(
        "  passes per Instance by trigger: "
        + ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(triggers.items(), key=lambda kv: -kv[1]))
    )
    filtered = Counter(ctrl.filtered) - filtered0
    print(
        f"  updates filtered (enqueued nothing): {dict(filtered)}; passes that waited for the cache: "
        f"{ctrl.waits - waits0}, waits that timed out: {ctrl.expectations.expired - expired0}; "
        f"count-window ends skipped (a status write had landed since): {ctrl.stale_windows - stale0}; "
        f"re-runs skipped (their trigger taken by the pass before): {ctrl.repeats - repeats0}"
    )
    if isinstance(kube, TimedKube):
        print(f"  per Instance, median: {phases(kube.log, t0)}")
    return dt, server / n


def bench_statefulset(
    cluster: Cluster, ns: str, n: int, kubelet_deletes: Callable[[], int]
) -> tuple[float, float]:
    path = f"/apis/apps/v1/namespaces/{ns}/statefulsets"
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "pool"},
        "spec": {
            "replicas": n,
            "serviceName": "pool",
            "selector": {"matchLabels": {"app": "pool"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "pool"}},
                "spec": {
                    "containers": [{"name": "engine", "image": "engine:v1"}],
                    "terminationGracePeriodSeconds": 5,
                },
            },
        },
    }
    cluster.raw.post(path, sts)

    def done(image: str) -> bool:
        o = cluster.raw.get(f"{path}/pool")
        st = o.get("status") or {}
        return (
            st.get("observedGeneration") == o["metadata"]["generation"]
            and st.get("readyReplicas") == n
            and st.get("updatedReplicas") == n
            and st.get("currentRevision") == st.get("updateRevision")
            and all(
                p["spec"]["containers"][0]["image"] == image
                for p in cluster.raw.get(f"/api/v1/namespaces/{ns}/pods", labelSelector="app=pool")["items"]
            )
        )

    wait("the StatefulSet ready", lambda: done("engine:v1"), timeout=600)
    max_unavailable = (
        cluster.raw.get(f"{path}/pool")["spec"]["updateStrategy"]
        .get("rollingUpdate", {})
        .get("maxUnavailable")
    )
    before = apiserver_writes(cluster)
    kubelet0, deletes0 = cluster.kubelet.status_patches, kubelet_deletes()
    t0 = time.monotonic()
    cluster.raw.patch(
        f"{path}/pool",
        {"spec": {"template": {"spec": {"containers": [{"name": "engine", "image": "engine:v2"}]}}}},
        content_type="application/strategic-merge-patch+json",
    )
    wait("the StatefulSet rolled", lambda: done("engine:v2"), timeout=900)
    dt = time.monotonic() - t0
    time.sleep(1.0)
    kubelet = (cluster.kubelet.status_patches - kubelet0) + (kubelet_deletes() - deletes0)
    after = apiserver_writes(cluster)
    server = workload_writes(before, after, kubelet + 1)
    print(
        f"StatefulSet RollingUpdate maxUnavailable {max_unavailable} (kept by the API server: {max_unavailable is not None}), {n} pods: {dt:.1f}s, {dt / n:.2f}s/pod ({load()})"
    )
    print(f"  API writes (apiserver, kubelet excluded): {server} = {server / n:.1f}/pod")
    print(f"  apiserver by kind, per pod (kubelet's included): {by_kind(after - before, n)}")
    print(f"  kubelet excluded: {kubelet} writes ({kubelet_deletes() - deletes0} of them pod deletes)")
    return dt, server / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=100)
    ap.add_argument("--instances", type=int, default=20)
    ap.add_argument("--ready-delay", type=float, default=2.0)
    ap.add_argument("--unfiltered", action="store_true", help="the controller without its update filters")
    args = ap.parse_args()
    with running_cluster(nodes=4, ready_delay=args.ready_delay) as cluster:
        kube = TimedKube(Kube.from_kubeconfig(cluster.cp.kubeconfig)._api)
        kubelet_deletes = count_kubelet_deletes(cluster)
        resync_ns = namespace(cluster, "bench-resync")
        roll_ns = namespace(cluster, "bench-roll")
        sts_ns = namespace(cluster, "bench-sts")
        cls = UnfilteredController if args.unfiltered else TimedController
        ctrl = cls(kube, namespaces=[resync_ns, roll_ns], resync_period=3600, workers=2, watch_timeout=60)
        if args.unfiltered:
            ctrl.expectations.timeout = 0.0  # every wait ends at once: no pass waits for the cache
        ctrl.start()
        try:
            print(f"control plane up; fake kubelet start-up delay {args.ready_delay}s per pod; {load()}")
            bench_resync(cluster, ctrl, kube, resync_ns, args.replicas)
            ours_t, ours_w = bench_rollout(cluster, ctrl, kube, roll_ns, args.instances, kubelet_deletes)
        finally:
            ctrl.stop()
        sts_t, sts_w = bench_statefulset(cluster, sts_ns, args.instances, kubelet_deletes)
        print(
            f"ratios (OMENative / StatefulSet): wall time {ours_t / sts_t:.2f}x, API writes per Instance {ours_w / sts_w:.2f}x"
        )


if __name__ == "__main__":
    main()
