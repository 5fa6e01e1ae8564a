"""Simulated GPU nodes and a fake kubelet that drives the status of pods bound to them.

Semantics follow the real kubelet where the reconciler can observe them:
- a bound pod gets phase Running, a unique podIP, PodScheduled/Initialized True and containerStatuses;
- ContainersReady turns True `ready_delay` seconds after the containers start;
- Ready is True only when ContainersReady is True AND every spec.readinessGates conditionType has a True
  condition (a missing one counts as False), recomputed on every change of the pod;
- a pod with a deletionTimestamp is deleted with grace 0 after `deletion_delay` (no kubelet, no deletion);
- per-pod faults: crash-loop, image-pull failure, never ready;
- a container whose spec image changes (an in-place update) is restarted on the new image: the status
  reports the image it runs, restartCount + 1, and it is ready again `restart_delay` (default:
  `ready_delay`) after the restart.
Scheduling itself is the real kube-scheduler's job.
"""

from __future__ import annotations

import contextlib
import datetime
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from kubernetes.client import ApiClient

from testbed.rawkube import JSON, STRATEGIC_MERGE_PATCH, RawKube, is_gone, status_of

log = logging.getLogger("testbed.kubelet")

Behavior = Literal["normal", "crashloop", "imagepull", "never-ready"]
PodPredicate = Callable[[JSON], bool]

FAKE_KUBELET_LABEL = "testbed.omerender.dev/fake-kubelet"
KUBELET_VERSION = "v1.36.3"
_OUR_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(pod: JSON) -> str:
    md = pod.get("metadata", {})
    return f"{md.get('namespace', '')}/{md.get('name', '')}"


@dataclass
class _PodState:
    ip: str
    started: float  # monotonic time the current container incarnation started
    restarts: int = 0
    last_crash: float = 0.0
    deleting_since: float | None = None
    behavior: Behavior = "normal"
    # The image each container runs (None until the first sync); a spec change restarts the container.
    images: dict[str, str] | None = None
    image_restarted: bool = False


@dataclass(order=True)
class _Due:
    at: float
    seq: int
    key: str = field(compare=False)


@dataclass
class _Rule:
    predicate: PodPredicate
    behavior: Behavior
    name_key: tuple[str, str | None] | None = None


class FakeKubelet:
    """Creates `nodes` fake GPU Nodes and keeps the status of pods bound to them current.

    Thread-safe: set_behavior() and friends may be called from tests while the kubelet runs.
    """

    def __init__(
        self,
        api_client: ApiClient,
        *,
        nodes: int = 4,
        node_prefix: str = "gpu-node",
        gpus_per_node: int = 8,
        cpu: str = "64",
        memory: str = "512Gi",
        max_pods: int = 110,
        zones: tuple[str, ...] = ("zone-a", "zone-b"),
        extra_node_labels: dict[str, str] | None = None,
        ready_delay: float = 0.0,
        restart_delay: float | None = None,
        deletion_delay: float = 0.0,
        crash_interval: float = 2.0,
        lease_renew_interval: float = 10.0,
        watch_timeout_seconds: int = 30,
    ) -> None:
        self.raw = RawKube(api_client)
        self.node_names = [f"{node_prefix}-{i}" for i in range(nodes)]
        self._node_ips = {n: f"10.10.0.{i + 1}" for i, n in enumerate(self.node_names)}
        self.gpus_per_node = gpus_per_node
        self.cpu = cpu
        self.memory = memory
        self.max_pods = max_pods
        self.zones = zones
        self.extra_node_labels = dict(extra_node_labels or {})
        self.ready_delay = ready_delay
        # A container restarted on a new image (an in-place update) is ready this long after its
        # restart; None: the same start-up delay as a new pod's.
        self.restart_delay = ready_delay if restart_delay is None else restart_delay
        self.deletion_delay = deletion_delay
        self.crash_interval = crash_interval
        self.lease_renew_interval = lease_renew_interval
        self.watch_timeout_seconds = watch_timeout_seconds

        self._lock = threading.Condition()
        self._pods: dict[str, JSON] = {}
        self._states: dict[str, _PodState] = {}  # by pod UID
        self._rules: list[_Rule] = []
        self._heap: list[_Due] = []
        self._seq = itertools.count()
        self._ip_seq = itertools.count()
        self._stop = threading.Event()
        self._synced = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watch_resp: Any = None
        # Observable by tests: (re)lists, e.g. after a 410, and pods/status patches sent.
        self.relists = 0
        self.status_patches = 0
        self.errors: list[str] = []
        self._silent: set[str] = set()  # nodes whose kubelet stopped (silence_node)

    # ------------------------------------------------------------------ public API

    def start(self, timeout: float = 30.0) -> FakeKubelet:
        for i, name in enumerate(self.node_names):
            self._ensure_node(i, name)
        self._renew_leases()
        self._stop.clear()
        for target, name in ((self._watch_loop, "watch"), (self._work_loop, "work")):
            t = threading.Thread(target=target, name=f"fake-kubelet-{name}", daemon=True)
            t.start()
            self._threads.append(t)
        if not self._synced.wait(timeout):
            raise RuntimeError(f"fake kubelet did not list pods within {timeout}s: {self.errors[-3:]}")
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
            resp = self._watch_resp
        if resp is not None:
            with contextlib.suppress(Exception):
                resp.shutdown()
        for t in self._threads:
            t.join(timeout=5)
        self._threads.clear()

    def set_behavior(
        self, match: str | PodPredicate, behavior: Behavior, namespace: str | None = None
    ) -> None:
        """Apply `behavior` to pods named `match` (optionally in `namespace`) or matching a predicate.

        Later rules win. `normal` for a name removes earlier rules for that name.
        """
        pred = self._predicate(match, namespace)
        with self._lock:
            name_key = (match, namespace) if isinstance(match, str) else None
            if name_key is not None:
                # The newest rule for a name replaces older ones, so heal() really heals.
                self._rules = [r for r in self._rules if r.name_key != name_key]
            if not (name_key is not None and behavior == "normal"):
                self._rules.append(_Rule(pred, behavior, name_key))
            for key in list(self._pods):
                self._enqueue_locked(key, 0.0)

    def crash_loop(self, match: str | PodPredicate, namespace: str | None = None) -> None:
        self.set_behavior(match, "crashloop", namespace)

    def fail_image_pull(self, match: str | PodPredicate, namespace: str | None = None) -> None:
        self.set_behavior(match, "imagepull", namespace)

    def never_ready(self, match: str | PodPredicate, namespace: str | None = None) -> None:
        self.set_behavior(match, "never-ready", namespace)

    def heal(self, match: str | PodPredicate, namespace: str | None = None) -> None:
        self.set_behavior(match, "normal", namespace)

    def clear_behaviors(self) -> None:
        with self._lock:
            self._rules.clear()
            for key in list(self._pods):
                self._enqueue_locked(key, 0.0)

    # ------------------------------------------------------------------ a node that stops reporting

    def silence_node(self, name: str) -> None:
        """The node's kubelet stops: no lease renewal, no pod status, and a deletion of one of its pods
        never completes. The testbed runs no nodelifecycle controller, so its marks are written here as
        it writes them for a node whose heartbeats stopped: Ready=Unknown ``NodeStatusUnknown``
        "Kubelet stopped posting node status.", the ``node.kubernetes.io/unreachable`` NoSchedule and
        NoExecute taints, and Ready=False on each pod of the node (``MarkPodsNotReady``, which leaves
        ContainersReady as the kubelet last wrote it)."""
        with self._lock:
            self._silent.add(name)
            on_node = [p for p in self._pods.values() if p.get("spec", {}).get("nodeName") == name]
        now = _now()
        self.raw.patch(
            f"/api/v1/nodes/{name}/status",
            {
                "status": {
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "Unknown",
                            "reason": "NodeStatusUnknown",
                            "message": "Kubelet stopped posting node status.",
                            "lastTransitionTime": now,
                        }
                    ]
                }
            },
            content_type=STRATEGIC_MERGE_PATCH,
        )
        taints = [
            {"key": UNREACHABLE_TAINT, "effect": e, "timeAdded": now} for e in ("NoSchedule", "NoExecute")
        ]
        self.raw.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": taints}})
        for pod in on_node:
            md = pod.get("metadata", {})
            with contextlib.suppress(Exception):
                self.raw.patch(
                    f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/status",
                    {
                        "status": {
                            "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": now}]
                        }
                    },
                    content_type=STRATEGIC_MERGE_PATCH,
                )

    def revive_node(self, name: str) -> None:
        """The kubelet comes back: Ready again, the taints gone, its pods driven again."""
        with self._lock:
            self._silent.discard(name)
        self._ensure_node(self.node_names.index(name), name)
        self.raw.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": None}})
        with self._lock:
            for key, pod in self._pods.items():
                if pod.get("spec", {}).get("nodeName") == name:
                    self._enqueue_locked(key, 0.0)

    # ------------------------------------------------------------------ nodes

    def _node_labels(self, index: int, name: str) -> dict[str, str]:
        return {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": "fake-gpu-8x",
            "topology.kubernetes.io/zone": self.zones[index % len(self.zones)] if self.zones else "zone-a",
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": str(self.gpus_per_node),
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            FAKE_KUBELET_LABEL: "true",
            **self.extra_node_labels,
        }

    def _node_status(self, name: str) -> JSON:
        now = _now()
        resources = {
            "cpu": self.cpu,
            "memory": self.memory,
            "pods": str(self.max_pods),
            "ephemeral-storage": "1Ti",
            "nvidia.com/gpu": str(self.gpus_per_node),
        }

        def cond(ctype: str, status: str, reason: str, message: str) -> JSON:
            return {
                "type": ctype,
                "status": status,
                "reason": reason,
                "message": message,
                "lastHeartbeatTime": now,
                "lastTransitionTime": now,
            }

        return {
            "capacity": resources,
            "allocatable": resources,
            "conditions": [
                cond(
                    "MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"
                ),
                cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID"),
                cond("Ready", "True", "KubeletReady", "kubelet is posting ready status (fake)"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": self._node_ips[name]},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": name,
                "systemUUID": name,
                "bootID": name,
                "kernelVersion": "6.1.0-fake",
                "osImage": "testbed fake node",
                "containerRuntimeVersion": "fake://1.0.0",
                "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }

    def _ensure_node(self, index: int, name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": self._node_labels(index, name)},
            "spec": {},
        }
        try:
            self.raw.post("/api/v1/nodes", body)
        except Exception as exc:
            if status_of(exc) != 409:
                raise
        # Status is written through the subresource, as a kubelet does; create may drop it.
        self.raw.patch(f"/api/v1/nodes/{name}/status", {"status": self._node_status(name)})
        node = self.raw.get(f"/api/v1/nodes/{name}")
        taints = node.get("spec", {}).get("taints") or []
        kept = [t for t in taints if not str(t.get("key", "")).startswith("node.kubernetes.io/")]
        if kept != taints:
            self.raw.patch(f"/api/v1/nodes/{name}", {"spec": {"taints": kept or None}})

    def _renew_leases(self) -> None:
        # Node leases are what nodelifecycle reads as heartbeats; keeping them fresh makes the fake nodes
        # look alive even to a KCM that runs that controller.
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        for name in self.node_names:
            if name in self._silent:
                continue
            path = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}"
            spec = {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": now}
            try:
                self.raw.patch(path, {"spec": spec})
            except Exception as exc:
                if status_of(exc) != 404:
                    self._note(f"lease {name}: {exc}")
                    continue
                with contextlib.suppress(Exception):
                    self.raw.post(
                        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
                        {
                            "apiVersion": "coordination.k8s.io/v1",
                            "kind": "Lease",
                            "metadata": {"name": name},
                            "spec": spec,
                        },
                    )

    # ------------------------------------------------------------------ watch

    def _note(self, msg: str) -> None:
        log.warning("fake kubelet: %s", msg)
        self.errors.append(msg)
        del self.errors[:-50]

    def _watch_loop(self) -> None:
        rv: str | None = None
        while not self._stop.is_set():
            try:
                if rv is None:
                    rv = self._relist()
                for event in self.raw.watch(
                    "/api/v1/pods",
                    resource_version=rv,
                    timeout_seconds=self.watch_timeout_seconds,
                    on_open=self._set_watch_resp,
                ):
                    if self._stop.is_set():
                        return
                    etype = event.get("type")
                    obj = event.get("object") or {}
                    if etype == "ERROR":
                        if not is_gone(event):
                            self._note(f"watch error event: {obj}")
                        rv = None  # 410 or other error: relist
                        break
                    new_rv = obj.get("metadata", {}).get("resourceVersion")
                    if new_rv:
                        rv = new_rv
                    if etype == "BOOKMARK":
                        continue
                    self._observe(etype or "", obj)
            except Exception as exc:
                if self._stop.is_set():
                    return
                if status_of(exc) == 410:
                    rv = None
                else:
                    self._note(f"watch: {exc!r}")
                    rv = None
                    self._stop.wait(0.5)

    def _set_watch_resp(self, resp: Any) -> None:
        with self._lock:
            self._watch_resp = resp

    def _relist(self) -> str:
        listing = self.raw.get("/api/v1/pods")
        items: list[JSON] = listing.get("items") or []
        with self._lock:
            self.relists += 1
            self._pods = {_key(p): p for p in items}
            live = {p.get("metadata", {}).get("uid") for p in items}
            for uid in list(self._states):
                if uid not in live:
                    del self._states[uid]
            for key in self._pods:
                self._enqueue_locked(key, 0.0)
        self._synced.set()
        return str(listing.get("metadata", {}).get("resourceVersion", ""))

    def _observe(self, etype: str, pod: JSON) -> None:
        key = _key(pod)
        with self._lock:
            if etype == "DELETED":
                self._pods.pop(key, None)
                self._states.pop(pod.get("metadata", {}).get("uid", ""), None)
                return
            self._pods[key] = pod
            self._enqueue_locked(key, 0.0)

    # ------------------------------------------------------------------ work queue

    def _enqueue_locked(self, key: str, delay: float) -> None:
        heapq.heappush(self._heap, _Due(time.monotonic() + delay, next(self._seq), key))
        self._lock.notify_all()

    def _work_loop(self) -> None:
        next_lease = time.monotonic() + self.lease_renew_interval
        while not self._stop.is_set():
            due: list[str] = []
            with self._lock:
                now = time.monotonic()
                while self._heap and self._heap[0].at <= now:
                    k = heapq.heappop(self._heap).key
                    if k not in due:
                        due.append(k)
                if not due:
                    wait = next_lease - now
                    if self._heap:
                        wait = min(wait, self._heap[0].at - now)
                    self._lock.wait(timeout=max(0.01, min(wait, 1.0)))
            for key in due:
                try:
                    self._sync(key)
                except Exception as exc:
                    if self._stop.is_set():
                        return
                    if status_of(exc) not in (404, 409):
                        self._note(f"sync {key}: {exc!r}")
                    with self._lock:
                        self._enqueue_locked(key, 0.5)
            if time.monotonic() >= next_lease:
                self._renew_leases()
                next_lease = time.monotonic() + self.lease_renew_interval

    def _behavior_locked(self, pod: JSON) -> Behavior:
        for rule in reversed(self._rules):
            try:
                if rule.predicate(pod):
                    return rule.behavior
            except Exception as exc:
                self._note(f"behavior predicate failed: {exc!r}")
        return "normal"

    @staticmethod
    def _predicate(match: str | PodPredicate, namespace: str | None) -> PodPredicate:
        if not isinstance(match, str):
            return match
        name = match

        def by_name(pod: JSON) -> bool:
            md = pod.get("metadata", {})
            return bool(md.get("name") == name and (namespace is None or md.get("namespace") == namespace))

        return by_name

    # ------------------------------------------------------------------ pod status

    def _sync(self, key: str) -> None:
        with self._lock:
            pod = self._pods.get(key)
            if pod is None:
                return
            spec = pod.get("spec", {})
            if spec.get("nodeName") not in self._node_ips or spec.get("nodeName") in self._silent:
                return
            md = pod.get("metadata", {})
            uid = str(md.get("uid", ""))
            st = self._states.get(uid)
            now = time.monotonic()
            if st is None:
                # Adopt what an earlier kubelet (or relist) already published: pod IPs never change.
                ip = pod.get("status", {}).get("podIP")
                used = {x.ip for x in self._states.values()}
                while not ip or ip in used:
                    n = next(self._ip_seq)
                    ip = f"10.244.{n // 250 % 256}.{n % 250 + 1}"
                restarts = [
                    c.get("restartCount", 0) for c in pod.get("status", {}).get("containerStatuses") or []
                ]
                st = _PodState(ip=str(ip), started=now, restarts=max(restarts, default=0))
                ran = {
                    str(c.get("name", "")): str(c.get("image", ""))
                    for c in pod.get("status", {}).get("containerStatuses") or []
                }
                st.images = ran or None
                self._states[uid] = st
            behavior = self._behavior_locked(pod)
            if behavior != st.behavior:
                # A fault starting or ending restarts the container clock, as a real restart would.
                st.behavior = behavior
                st.started = now
                st.last_crash = now
                if behavior == "crashloop":
                    st.restarts += 1
            # A real kubelet kills a container whose spec image changed and starts it again on the new
            # image: same pod, UID, IP and node, restartCount + 1, the old run in lastState, and the
            # new container ready only after its own start-up delay.
            images = {str(c.get("name", "")): str(c.get("image", "")) for c in spec.get("containers", [])}
            if st.images is None:
                st.images = images
            elif images != st.images and not md.get("deletionTimestamp"):
                st.images = images
                st.started = now
                st.restarts += 1
                st.image_restarted = True
            if md.get("deletionTimestamp"):
                if st.deleting_since is None:
                    st.deleting_since = now
                wait = st.deleting_since + self.deletion_delay - now
                if wait > 0:
                    self._enqueue_locked(key, wait)
                    return
                delete = True
            else:
                delete = False
                if behavior == "crashloop" and now - st.last_crash >= self.crash_interval:
                    st.restarts += 1
                    st.last_crash = now
                desired, recheck = self._desired_status(pod, st, behavior, now)
                if recheck is not None:
                    self._enqueue_locked(key, recheck)
        if delete:
            self._delete(pod)
            return
        if spec.get("nodeName") and pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            return
        if _projection(pod.get("status", {})) != _projection(desired):
            self.status_patches += 1
            self.raw.patch(
                f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}/status",
                {"status": desired},
                content_type=STRATEGIC_MERGE_PATCH,
            )

    def _delete(self, pod: JSON) -> None:
        md = pod["metadata"]
        try:
            self.raw.delete(
                f"/api/v1/namespaces/{md['namespace']}/pods/{md['name']}",
                {
                    "apiVersion": "v1",
                    "kind": "DeleteOptions",
                    "gracePeriodSeconds": 0,
                    "preconditions": {"uid": md["uid"]},
                },
            )
        except Exception as exc:
            if status_of(exc) not in (404, 409):
                raise

    def _desired_status(
        self, pod: JSON, st: _PodState, behavior: Behavior, now: float
    ) -> tuple[JSON, float | None]:
        spec = pod.get("spec", {})
        status = pod.get("status", {})
        node = spec["nodeName"]
        recheck: float | None = None
        wall_started = (
            datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=now - st.started)
        ).strftime("%Y-%m-%dT%H:%M:%SZ")

        ready_at = st.started + (self.restart_delay if st.image_restarted else self.ready_delay)
        containers_ready = behavior == "normal" and now >= ready_at
        if behavior == "normal" and not containers_ready:
            recheck = ready_at - now
        if behavior == "crashloop":
            recheck = max(0.05, st.last_crash + self.crash_interval - now)

        container_statuses = []
        for c in spec.get("containers", []):
            ran = (st.images or {}).get(c["name"], c.get("image", ""))
            cs: JSON = {
                "name": c["name"],
                "image": ran,
                "imageID": f"fake://{ran}",
                "restartCount": st.restarts,
                "ready": containers_ready,
            }
            if behavior == "imagepull":
                cs["started"] = False
                cs["state"] = {
                    "waiting": {
                        "reason": "ImagePullBackOff",
                        "message": f'Back-off pulling image "{c.get("image", "")}"',
                    }
                }
            elif behavior == "crashloop":
                cs["started"] = False
                cs["containerID"] = f"fake://{st.ip}/{c['name']}/{st.restarts}"
                cs["state"] = {
                    "waiting": {
                        "reason": "CrashLoopBackOff",
                        "message": f"back-off 10s restarting failed container={c['name']} "
                        f"pod={pod['metadata']['name']}",
                    }
                }
                cs["lastState"] = {
                    "terminated": {
                        "exitCode": 1,
                        "reason": "Error",
                        "finishedAt": _now(),
                        "startedAt": _now(),
                    }
                }
            else:
                cs["started"] = True
                cs["containerID"] = f"fake://{st.ip}/{c['name']}/{st.restarts}"
                cs["state"] = {"running": {"startedAt": wall_started}}
                if st.image_restarted:
                    cs["lastState"] = {
                        "terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": wall_started}
                    }
            container_statuses.append(cs)

        init_statuses = [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": f"fake://{c.get('image', '')}",
                "ready": True,
                "restartCount": 0,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
            }
            for c in spec.get("initContainers", [])
        ]

        existing = {c.get("type"): c for c in status.get("conditions", []) or []}
        gates = [g.get("conditionType") for g in spec.get("readinessGates", []) or []]
        unready = [c["name"] for c in spec.get("containers", [])] if not containers_ready else []
        gate_problem = ""
        for g in gates:
            gc = existing.get(g)
            if gc is None:
                gate_problem = f'corresponding condition of pod readiness gate "{g}" does not exist.'
                break
            if gc.get("status") != "True":
                gate_problem = f'the status of pod readiness gate "{g}" is not "True", but {gc.get("status")}'
                break

        def cond(ctype: str, ok: bool, reason: str = "", message: str = "") -> JSON:
            value = "True" if ok else "False"
            prev = existing.get(ctype)
            c: JSON = {
                "type": ctype,
                "status": value,
                "lastProbeTime": None,
                "lastTransitionTime": prev.get("lastTransitionTime")
                if prev and prev.get("status") == value and prev.get("lastTransitionTime")
                else _now(),
            }
            # Strategic merge keeps fields the patch omits, so a stale reason must be nulled explicitly
            # (else Ready=True would keep "ReadinessGatesNotReady" and every resync would re-patch).
            c["reason"] = reason if not ok and reason else None
            c["message"] = message if not ok and reason else None
            return c

        unready_msg = f"containers with unready status: [{' '.join(unready)}]"
        if not containers_ready:
            ready_cond = cond("Ready", False, "ContainersNotReady", unready_msg)
        elif gate_problem:
            ready_cond = cond("Ready", False, "ReadinessGatesNotReady", gate_problem)
        else:
            ready_cond = cond("Ready", True)

        desired: JSON = {
            "phase": "Pending" if behavior == "imagepull" else "Running",
            "hostIP": self._node_ips[node],
            "hostIPs": [{"ip": self._node_ips[node]}],
            "podIP": st.ip,
            "podIPs": [{"ip": st.ip}],
            "startTime": status.get("startTime") or _now(),
            "conditions": [
                cond("PodReadyToStartContainers", True),
                cond("Initialized", True),
                cond("ContainersReady", containers_ready, "ContainersNotReady", unready_msg),
                ready_cond,
            ],
            "containerStatuses": container_statuses,
        }
        if init_statuses:
            desired["initContainerStatuses"] = init_statuses
        return desired, recheck


def _projection(status: JSON) -> tuple[Any, ...]:
    """The parts of a pod status the fake kubelet owns, without timestamps, for change detection."""
    conds = {
        c.get("type"): (c.get("status"), c.get("reason"))
        for c in status.get("conditions", []) or []
        if c.get("type") in _OUR_CONDITIONS
    }
    containers = tuple(
        (
            c.get("name"),
            c.get("image"),
            c.get("ready"),
            c.get("started"),
            c.get("restartCount"),
            tuple(sorted((c.get("state") or {}).keys())),
            _state_reason(c.get("state")),
        )
        for c in status.get("containerStatuses", []) or []
    )
    return (
        status.get("phase"),
        status.get("podIP"),
        status.get("hostIP"),
        tuple(sorted(conds.items())),
        containers,
        len(status.get("initContainerStatuses", []) or []),
    )


def _state_reason(state: Any) -> Any:
    if not isinstance(state, dict) or not state:
        return None
    inner = next(iter(state.values()))
    return inner.get("reason") if isinstance(inner, dict) else None
