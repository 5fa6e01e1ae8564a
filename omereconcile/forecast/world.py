"""The simulated cluster a forecast runs in: real renders and pods, GPUs placed on nodes.

:class:`ForecastSim` is the planner tests' simulator (:mod:`omereconcile.simulate.cluster`) with the
render and the pod factory of the real thing: the revision and pods omerender renders for the replica
before and after the change, built with ``omerender.stamps.materialize_pod`` as the executor builds
them. :class:`Nodes` is a first-fit scheduler over GPU nodes shared by every replica of one forecast:
a pod that does not fit stays Pending ``Unschedulable`` (the planner parks the step, as on a cluster),
and a pod's start-up time counts from the moment it is placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from omereconcile.simulate.cluster import Sim, SimPod
from omereconcile.world import DesiredRevision, RenderOutcome, ReplicaView
from omerender.accelerators import accelerator_count
from omerender.constants import LABEL_POD_GROUP
from omerender.models import InferenceReplica
from omerender.render import RenderedRunner
from omerender.stamps import PodCoordinates, materialize_pod

__all__ = ["ForecastSim", "Nodes", "RevisionSide", "pod_gpus"]

_UNPLACED = ""


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

    def gpus_held(self, *, placed_only: bool = False) -> int:
        """Accelerators this replica's pods ask for, terminating ones included (they hold theirs until
        they are gone); ``placed_only``: only the pods bound to a node."""
        return sum(
            self.gpus_of(p) for p in self.pods.values() if not placed_only or p.obj["spec"].get("nodeName")
        )


@dataclass
class Nodes:
    """GPU nodes (``None``: room for everything) and the pods placed on them, first fit, pod by pod:
    the pods of one gang go on any nodes with room, all of them or none."""

    gpus_per_node: tuple[int, ...] | None = None
    # Pods that stay as they are (replicas the change does not roll), placed first: one entry per
    # Instance, the accelerators of each of its pods (a gang's leader and workers).
    reserved: tuple[tuple[int, ...], ...] = ()
    sims: list[ForecastSim] = field(default_factory=list)

    def unplaced_reserved(self) -> int:
        """How many of the ``reserved`` Instances do not fit at all."""
        return len(self._base()[1])

    def _base(self) -> tuple[list[int], list[tuple[int, ...]]]:
        assert self.gpus_per_node is not None
        free, left = list(self.gpus_per_node), []
        for pods in self.reserved:
            nodes = _first_fit(free, pods)
            if nodes is None:
                left.append(pods)
                continue
            for need, node in zip(pods, nodes, strict=True):
                free[node] -= need
        return free, left

    def _free(self) -> list[int]:
        free = self._base()[0]
        for sim in self.sims:
            for p in sim.pods.values():
                node = (p.obj.get("spec") or {}).get("nodeName") or _UNPLACED
                if node.startswith("node-"):
                    free[int(node.removeprefix("node-"))] -= sim.gpus_of(p)
        return free

    def place(self, sim: ForecastSim) -> None:
        """Bind sim's pending pods where they fit; the rest wait ``Unschedulable``. The pods of one
        PodGroup are placed together or not at all, as the Coscheduling gang scheduler binds them."""
        pending = sorted(
            (p for p in sim.pods.values() if not p.obj["spec"].get("nodeName")),
            key=lambda p: (p.created, p.obj["metadata"]["name"]),
        )
        batches: dict[str, list[SimPod]] = {}
        for pod in pending:
            group = (pod.obj["metadata"].get("labels") or {}).get(LABEL_POD_GROUP)
            batches.setdefault(group or f"pod/{pod.obj['metadata']['name']}", []).append(pod)
        for group, pods in batches.items():
            if not group.startswith("pod/") and len(pods) + self._bound(sim, group) < sim.workers + 1:
                for pod in pods:  # the gang scheduler waits for every member
                    pod.behaviour = "unschedulable"
                continue
            nodes = self._fit([sim.gpus_of(p) for p in pods])
            if nodes is None:
                for pod in pods:
                    pod.behaviour = "unschedulable"
                continue
            for pod, node in zip(pods, nodes, strict=True):
                pod.obj["spec"]["nodeName"] = f"node-{node}"
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

    def _fit(self, needs: Sequence[int]) -> list[int] | None:
        """First fit of every need at once (None: not all of them fit)."""
        if self.gpus_per_node is None:
            return [0] * len(needs)
        return _first_fit(self._free(), needs)


def _first_fit(free: Sequence[int], needs: Sequence[int]) -> list[int] | None:
    """The node of each need, first fit pod by pod on what is ``free`` (not changed), or None when
    some need finds no node: a gang is placed whole or not at all, as the Coscheduling gang scheduler
    binds a PodGroup. A pod asking for no accelerator goes on the first node."""
    room = list(free)
    out: list[int] = []
    for need in needs:
        node = 0 if need == 0 else next((i for i, f in enumerate(room) if f >= need), None)
        if node is None:
            return None
        room[node] -= need
        out.append(node)
    return out
