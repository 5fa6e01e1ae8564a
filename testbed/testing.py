"""Helpers for tests that use the testbed (kept here so any tests folder can import them)."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from testbed.assets import build, build_coscheduler
from testbed.controlplane import ControlPlane
from testbed.kubelet import FakeKubelet
from testbed.rawkube import RawKube

T = TypeVar("T")


@dataclass
class Cluster:
    """What the `cluster` pytest fixture yields."""

    cp: ControlPlane
    kubelet: FakeKubelet
    raw: RawKube

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.cp.kubectl(*args, check=check)


def wait_for(what: str, fn: Callable[[], T | None], timeout: float = 30.0, interval: float = 0.2) -> T:
    """Poll `fn` until it returns something truthy and return it; AssertionError naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


@contextlib.contextmanager
def running_cluster(
    run_dir: Path | None = None,
    *,
    nodes: int = 4,
    gang_scheduler: bool = True,
    apiserver_args: tuple[str, ...] = (),
    **kubelet_options: Any,
) -> Iterator[Cluster]:
    """Build (or reuse) the binaries, start a control plane (with the gang scheduler unless told not to)
    and the fake kubelet, stop both on exit. ``apiserver_args`` are added to kube-apiserver's (e.g.
    ``--feature-gates=ShardedListAndWatch=true``).

    Build failures raise testbed.BuildError: a pytest fixture using this errors instead of skipping.
    """
    cosched = build_coscheduler() if gang_scheduler else None
    cp = ControlPlane(
        assets_dir=build(), run_dir=run_dir, coscheduler_dir=cosched, extra_apiserver_args=apiserver_args
    )
    cp.start()
    kubelet: FakeKubelet | None = None
    try:
        kubelet = FakeKubelet(cp.api_client(), nodes=nodes, **kubelet_options)
        kubelet.start()
        yield Cluster(cp, kubelet, cp.raw())
    finally:
        if kubelet is not None:
            kubelet.stop()
        cp.stop()


def runners_replica(name: str, ns: str, image: str, replicas: int = 1, **spec: Any) -> dict[str, Any]:
    """A single-pod `runners` InferenceReplica (no catalog needed): what the reconciler tests and
    benchmarks roll by changing `image`."""
    template = {
        "spec": {"containers": [{"name": "engine", "image": image}], "terminationGracePeriodSeconds": 5}
    }
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "component": "engine",
            "replicas": replicas,
            "runners": [{"name": "default", "size": 1, "template": template}],
            **spec,
        },
    }


def gang_replica(
    name: str, ns: str, image: str, *, gpus: int, replicas: int = 1, scheduler: str = "", **spec: Any
) -> dict[str, Any]:
    """A multi-pod `runners` InferenceReplica: a leader and one worker per Instance, `gpus` GPUs each,
    scheduled by `scheduler` (OME sets no schedulerName: a gang scheduler is the user's to name)."""

    def template() -> dict[str, Any]:
        container = {"name": "engine", "image": image, "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}
        pod: dict[str, Any] = {"containers": [container], "terminationGracePeriodSeconds": 1}
        if scheduler:
            pod["schedulerName"] = scheduler
        return {"spec": pod}

    doc = runners_replica(name, ns, image, replicas, **spec)
    doc["spec"]["runners"] = [
        {"name": "leader", "size": 1, "template": template()},
        {"name": "worker", "size": 1, "template": template()},
    ]
    return doc


def replica_settled(obj: dict[str, Any]) -> bool:
    """An InferenceReplica at rest: Ready, rolled to its update revision, its spec observed, one row per
    desired Instance (unset or 0 runs one) and no operation in flight."""
    st = obj.get("status") or {}
    ready = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), {})
    rows = st.get("instanceStatuses") or []
    return (
        ready.get("status") == "True"
        and st.get("currentRevision") == st.get("updateRevision")
        and st.get("observedGeneration") == obj["metadata"].get("generation")
        and len(rows) == max(int(obj["spec"].get("replicas") or 1), 1)
        and all(not r.get("operation") for r in rows)
    )
