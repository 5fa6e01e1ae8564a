"""The simulated cluster a forecast runs in: real renders and pods, GPUs placed on nodes.

:class:`ForecastSim` is the planner tests' simulator (:mod:`omereconcile.simulate.cluster`) with the
render and the pod factory of the real thing: the revision and pods omerender renders for the replica
before and after the change, built with ``omerender.stamps.materialize_pod`` as the executor builds
them. :class:`Nodes` is a first-fit scheduler over GPU nodes shared by every replica of one forecast:
a pod that does not fit stays Pending ``Unschedulable`` (the planner parks the step, as on a cluster),
and a pod's start-up time counts from the moment it is placed.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from omereconcile.simulate.cluster import Sim, SimPod
from omereconcile.world import DesiredRevision, RenderOutcome, ReplicaView
from omerender.accelerators import accelerator_count
from omerender.constants import LABEL_POD_GROUP
from omerender.models import InferenceReplica
from omerender.render import RenderedRunner
from omerender.stamps import PodCoordinates, materialize_pod

__all__ = ["ForecastSim", "Nodes", "RevisionSide", "pod_gpus"]


def pod_gpus(pod: dict[str, Any], names: Sequence[str]) -> int:
    """Accelerators one pod holds: its containers' counts summed, each read as OME reads a container
    (``accelerator_count``: the first configured resource name it sets, limits before requests)."""
    return sum(accelerator_count(ct, names) for ct in (pod.get("spec") or {}).get("containers") or [])


@dataclass(frozen=True)
class RevisionSide:
    """One side of the change as the replica renders it: the revision and the runner templates."""

    name: str
    payload: bytes
    runners: tuple[RenderedRunner, ...]

    @property
    def hash(self) -> str:
        return self.name.rsplit("-", 1)[-1]


class ForecastSim(Sim):
    """The simulator rendering ``side`` (switched from before to after when the change lands)."""

    def __init__(
        self,
        side: RevisionSide,
        startup_seconds: float,
        nodes: Nodes,
        gpu_names: Sequence[str],
        shutdown_seconds: float = 3.0,
        *,
        workers: int = 0,
        weight: int = 1,
    ):
        super().__init__(workers=workers)
        self.side = side
        self.known: dict[str, RevisionSide] = {side.name: side}
        self.ready_delay = startup_seconds
        self.delete_grace = shutdown_seconds
        self._model: tuple[str, InferenceReplica] | None = None  # (resourceVersion, parsed replica)
        self._gpus: dict[str, int] = {}  # pod uid -> accelerators
        self.nodes = nodes
        self.gpu_names = tuple(gpu_names)
        self.weight = weight  # the identical replicas this simulation stands for
        self.bound: dict[str, list[tuple[int, int]]] = {}  # pod uid -> (node, accelerators) per copy
        nodes.sims.append(self)

    def model(self) -> InferenceReplica:
        """The replica, parsed once per resourceVersion (every pass reads it, few change it)."""
        assert self.replica is not None
        rv = self.replica["metadata"]["resourceVersion"]
        if self._model is None or self._model[0] != rv:
            self._model = (rv, ReplicaView.from_dict(self.replica).model)
        return self._model[1]

    def gpus_of(self, pod: SimPod) -> int:
        uid = pod.obj["metadata"]["uid"]
        if uid not in self._gpus:
            self._gpus[uid] = pod_gpus(pod.obj, self.gpu_names)
        return self._gpus[uid]

    def switch(self, side: RevisionSide) -> None:
        self.side = side
        self.known[side.name] = side

    def render(self) -> RenderOutcome:
        model = self.model()
        return DesiredRevision(
            self.side.name, self.side.payload, self.side.hash, model.spec.pairing_protocol, 0
        )

    def pod_factory(
        self, revision: str, index: int, incarnation: int, runner: str, ordinal: int
    ) -> dict[str, Any]:
        side = self.known[revision]
        model = self.model()
        return materialize_pod(
            model,
            side.runners,
            PodCoordinates(index, incarnation, runner, ordinal),
            revision_hash=side.hash,
            planned_replicas=model.spec.effective_replicas,
        )

    def tick(self) -> None:
        self.nodes.place(self)
        super().tick()
        self.nodes.release_gone(self)

    def gpus_held(self, *, placed_only: bool = False) -> int:
        """Accelerators this replica's pods ask for, terminating ones included (they hold theirs until
        they are gone); ``placed_only``: only the pods bound to a node."""
        return sum(
            self.gpus_of(p) for p in self.pods.values() if not placed_only or p.obj["spec"].get("nodeName")
        )


class _Room:
    """Free accelerators per node, with first fit in O(log n): a heap of node indices per free amount
    (stale entries dropped when met), so placing a pod never rescans the nodes or the pods."""

    def __init__(self, free: Sequence[int]):
        self.free = list(free)
        self.heaps: dict[int, list[int]] = {}
        for node in range(len(self.free)):
            self._push(node)

    def _push(self, node: int) -> None:
        f = self.free[node]
        if f > 0:
            heapq.heappush(self.heaps.setdefault(f, []), node)

    def _top(self, f: int) -> int | None:
        heap = self.heaps.get(f)
        while heap and self.free[heap[0]] != f:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def take(self, need: int) -> int | None:
        """The first node (lowest index) with ``need`` free, which now holds it; None: no node has."""
        if need <= 0:
            return 0
        best = None
        for f in self.heaps:
            if f >= need:
                top = self._top(f)
                if top is not None and (best is None or top < best):
                    best = top
        if best is not None:
            self.free[best] -= need
            self._push(best)
        return best

    def give(self, node: int, amount: int) -> None:
        if amount > 0:
            self.free[node] += amount
            self._push(node)

    def take_all(self, needs: Sequence[int]) -> list[int] | None:
        """Every need placed first fit, or none of them (a gang, or identical replicas moving together)."""
        out: list[int] = []
        for need in needs:
            node = self.take(need)
            if node is None:
                for n, got in zip(out, needs, strict=False):
                    self.give(n, got)
                return None
            out.append(node)
        return out


class Nodes:
    """GPU nodes (``None``: room for everything) and the pods placed on them, first fit, pod by pod:
    the pods of one gang go on any nodes with room, all of them or none. A simulation standing for
    ``weight`` identical replicas places each of its pods ``weight`` times, all or none."""

    def __init__(
        self, gpus_per_node: tuple[int, ...] | None = None, reserved: tuple[tuple[int, ...], ...] = ()
    ) -> None:
        self.gpus_per_node = gpus_per_node
        # Pods that stay as they are (replicas the change does not roll), placed first: one entry per
        # Instance, the accelerators of each of its pods (a gang's leader and workers).
        self.reserved = reserved
        self.sims: list[ForecastSim] = []
        self.room = _Room(gpus_per_node) if gpus_per_node is not None else None
        self.kept: list[tuple[tuple[int, ...], int]] = []  # placed for good after the reserved
        self.left = [i for i, pods in enumerate(reserved) if self._take(pods, 1) is None]

    def fresh(self) -> Nodes:
        """The same nodes with the reserved pods and those placed for good, and no simulation's."""
        out = Nodes(self.gpus_per_node, self.reserved)
        for pods, copies in self.kept:
            out.add(pods, copies)
        return out

    @property
    def largest(self) -> int | None:
        return max(self.gpus_per_node, default=0) if self.gpus_per_node is not None else None

    def unplaced_reserved(self) -> int:
        """How many of the ``reserved`` Instances do not fit at all."""
        return len(self.left)

    def add(self, pods: Sequence[int], copies: int = 1) -> list[int] | None:
        """Place ``copies`` of one Instance's ``pods`` for good (all or none); the nodes, or None."""
        nodes = self._take(pods, copies)
        if nodes is not None:
            self.kept.append((tuple(pods), copies))
        return nodes

    def _take(self, pods: Sequence[int], copies: int) -> list[int] | None:
        if self.room is None:
            return [0] * (len(pods) * copies)
        return self.room.take_all([g for _ in range(copies) for g in pods])

    def release_gone(self, sim: ForecastSim) -> None:
        """Give back the accelerators of sim's pods that are gone."""
        if not sim.bound:
            return
        live = {p.obj["metadata"]["uid"] for p in sim.pods.values()}
        for uid in [u for u in sim.bound if u not in live]:
            for node, gpus in sim.bound.pop(uid):
                if self.room is not None:
                    self.room.give(node, gpus)

    def place(self, sim: ForecastSim) -> None:
        """Bind sim's pending pods where they fit; the rest wait ``Unschedulable``. The pods of one
        PodGroup are placed together or not at all, as the Coscheduling gang scheduler binds them."""
        self.release_gone(sim)
        pending = sorted(
            (p for p in sim.pods.values() if not p.obj["spec"].get("nodeName")),
            key=lambda p: (p.created, p.obj["metadata"]["name"]),
        )
        if not pending:
            return
        batches: dict[str, list[SimPod]] = {}
        for pod in pending:
            group = (pod.obj["metadata"].get("labels") or {}).get(LABEL_POD_GROUP)
            batches.setdefault(group or f"pod/{pod.obj['metadata']['name']}", []).append(pod)
        for group, pods in batches.items():
            if not group.startswith("pod/") and len(pods) + self._bound(sim, group) < sim.workers + 1:
                for pod in pods:  # the gang scheduler waits for every member
                    pod.behaviour = "unschedulable"
                continue
            needs = [sim.gpus_of(p) for p in pods]
            nodes = self._take(needs, sim.weight)
            if nodes is None:
                for pod in pods:
                    pod.behaviour = "unschedulable"
                continue
            for k, pod in enumerate(pods):
                mine = [(nodes[c * len(pods) + k], needs[k]) for c in range(sim.weight)]
                sim.bound[pod.obj["metadata"]["uid"]] = mine
                pod.obj["spec"]["nodeName"] = f"node-{mine[0][0]}"
                if pod.behaviour == "unschedulable":
                    pod.behaviour = "ok"
                    pod.created = sim.now  # the container starts once the pod is placed

    @staticmethod
    def _bound(sim: ForecastSim, group: str) -> int:
        return sum(
            1
            for p in sim.pods.values()
            if p.obj["spec"].get("nodeName")
            and (p.obj["metadata"].get("labels") or {}).get(LABEL_POD_GROUP) == group
        )
