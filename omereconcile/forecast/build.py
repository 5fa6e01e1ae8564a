"""From ``omerender diff``'s answer to a forecast: which replicas roll, and what each costs.

Only replicas that ``rolls`` are forecast. Replicas that appear, go, block, unblock, still block or are
unknown until downloaded are listed with the diff's verdict (they are not a roll). Replicas that do not
roll hold their accelerators pod by pod (:class:`~omereconcile.forecast.world.Nodes`). Multi-pod Instances of one leader and a fixed number of
workers are forecast as the planner rolls them, as whole gangs (a replacement gang at a new index),
placed all-or-nothing as the gang scheduler binds them; other multi-pod shapes (a runner of several
pods, a worker count that changes) are listed as not covered: the forecast does not guess.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omereconcile.forecast.inputs import ForecastInputError, runtime_startup
from omereconcile.forecast.run import ReplicaForecast, ReplicaInput, Totals, simulate
from omereconcile.forecast.world import Nodes, RevisionSide, pod_gpus
from omereconcile.settings import OperatorSettings
from omerender.constants import RUNNER_LEADER, RUNNER_WORKER
from omerender.diff import Outcome, ReplicaDiff, Status
from omerender.models import InferenceReplica

__all__ = ["Forecast", "NotForecast", "forecast"]


@dataclass(frozen=True)
class NotForecast:
    key: str
    why: str
    changed: bool = True  # the diff's: its verdict is a change (not still blocks or unknown twice)


@dataclass(frozen=True)
class Forecast:
    replicas: tuple[ReplicaForecast, ...]
    totals: Totals
    not_forecast: tuple[NotForecast, ...]
    unchanged: int
    concurrent: bool
    capacity: tuple[int, ...] | None  # accelerators per node; None: not given
    reserved_gpus: int  # held by the replicas that do not roll
    pending: tuple[str, ...] = ()  # replicas with a pod larger than every node: which pod, how big
    unplaced: tuple[str, ...] = ()  # new and unblocked replicas that do not fit after the change
    added_gpus: int = 0  # GPUs of the new and unblocked replicas' pods, placed

    @property
    def changed(self) -> bool:
        """The diff's verdict: something rolls, blocks, unblocks, appears or goes."""
        return bool(self.replicas) or any(n.changed for n in self.not_forecast)

    @property
    def short_of_capacity(self) -> bool:
        """The change cannot complete with the capacity given: a roll holds on pods that cannot be placed."""
        return (self.capacity is not None and bool(self.unplaced)) or (
            self.capacity is not None
            and any(
                not r.completes and any(h.gate == "Unschedulable" for h in r.holds) for r in self.replicas
            )
        )


def _multi_pod(side: Outcome | None) -> bool:
    return side is not None and (len(side.runners) > 1 or any(r.size > 1 for r in side.runners))


def _workers(side: Outcome) -> int | None:
    """A gang's workers per Instance when the side renders one leader and its workers (the shape the
    planner rolls as whole gangs), else None."""
    shape = {r.name: r.size for r in side.runners}
    if set(shape) != {RUNNER_LEADER, RUNNER_WORKER} or shape[RUNNER_LEADER] != 1 or shape[RUNNER_WORKER] < 1:
        return None
    return shape[RUNNER_WORKER]


def _side(o: Outcome) -> RevisionSide:
    assert o.revision is not None
    return RevisionSide(o.revision, o.payload, o.runners)


def _object(replica: InferenceReplica) -> dict[str, Any]:
    return replica.model_dump(by_alias=True, exclude_none=True, mode="json")


def _pod_gpus(o: Outcome | None, names: Sequence[str]) -> tuple[int, ...]:
    """The accelerators of each pod of one Instance (a gang's leader and each worker), runner by runner."""
    if o is None:
        return ()
    return tuple(
        gpus for r in o.runners for gpus in [pod_gpus({"spec": r.template.get("spec") or {}}, names)] * r.size
    )


def forecast(
    diffs: Iterable[ReplicaDiff],
    before: Mapping[tuple[str, str], InferenceReplica],
    after: Mapping[tuple[str, str], InferenceReplica],
    after_objects: Sequence[Mapping[str, Any]],
    *,
    startup_seconds: float,
    sizes: Mapping[tuple[str, str], int] | None = None,
    capacity: tuple[int, ...] | None = None,
    gpu_names: Sequence[str] = ("nvidia.com/gpu",),
    concurrent: bool = True,
    shutdown_seconds: float = 30.0,
    settings: OperatorSettings | None = None,
    progress: Callable[[str], None] | None = None,
) -> Forecast:
    """Forecast every rolling replica of ``diffs`` (``before``/``after``: the replicas diffed).

    ``startup_seconds``: a new pod's time until Ready (a runtime's annotation overrides it);
    ``shutdown_seconds``: a deleted pod's time until it is gone and its GPUs are free; ``settings``:
    the operator's (None: the simulator's, OME's chart defaults)."""
    items: list[ReplicaInput] = []
    skipped: list[NotForecast] = []
    pending: list[str] = []  # replicas with a pod larger than every node, named
    reserved: list[tuple[int, ...]] = []  # per Instance that stays, its pods' accelerators
    added: list[tuple[str, int, tuple[int, ...]]] = []  # new and unblocked: key, Instances, pods
    largest = max(capacity, default=0) if capacity is not None else None
    unchanged = 0

    def too_big(o: Outcome | None) -> str | None:
        """Why a pod of this render can never be placed: larger than every node (named), else None."""
        if largest is None or o is None:
            return None
        for r in o.runners:
            gpus = pod_gpus({"spec": r.template.get("spec") or {}}, gpu_names)
            if gpus > largest:
                return f"its {r.name} pod asks for {gpus} GPUs and the largest node has {largest}"
        return None

    for d in diffs:
        key = (d.namespace, d.name)
        old, new = before.get(key), after.get(key)
        size = (sizes or {}).get(key)
        if size is None:
            ref = old or new
            size = ref.spec.effective_replicas if ref is not None else 1
        if d.status is not Status.ROLLS:
            if d.status is Status.UNCHANGED:
                unchanged += 1
                if (why := too_big(d.after)) is not None:
                    pending.append(f"{d.key}: {why}: Pending before and after the change")
                else:
                    reserved.extend([_pod_gpus(d.after, gpu_names)] * size)
            else:
                if d.status in (Status.NEW, Status.UNBLOCKS) and d.after is not None:
                    if (why := too_big(d.after)) is not None:
                        pending.append(f"{d.key}: {why}: its pods stay Pending")
                    else:
                        added.append((d.key, size, _pod_gpus(d.after, gpu_names)))
                skipped.append(NotForecast(d.key, d.result, d.changed))
            continue
        if old is None or new is None or d.before is None or d.after is None:  # pragma: no cover
            continue  # a replica that rolls is on both sides
        if (why := too_big(d.before)) is not None:
            pending.append(f"{d.key}: {why}: Pending before and after the change, not forecast")
            skipped.append(NotForecast(d.key, f"rolls; {why}: Pending before and after"))
            continue
        workers = 0
        if _multi_pod(d.before) or _multi_pod(d.after):
            shapes = (_workers(d.before), _workers(d.after))
            if shapes[0] is None or shapes[0] != shapes[1]:
                why = "rolls, multi-pod Instances other than one leader and a fixed number of workers"
                skipped.append(NotForecast(d.key, f"{why}: not covered by the forecast"))
                continue
            workers = shapes[0]
        startup = runtime_startup(d.after.runners[0].template, d.namespace, after_objects, startup_seconds)
        items.append(
            ReplicaInput(
                d.namespace,
                d.name,
                _object(old),
                _object(new),
                _side(d.before),
                _side(d.after),
                size,
                startup,
                workers,
            )
        )
    held = sum(sum(pods) for pods in reserved)
    nodes = Nodes(capacity, tuple(pods for pods in reserved if sum(pods)))
    if capacity is not None and nodes.unplaced_reserved():
        raise ForecastInputError(
            f"the capacity given ({len(capacity)} nodes, {sum(capacity)} accelerators) does not hold the "
            f"replicas that do not roll ({held} accelerators, placed pod by pod); give the cluster's capacity"
        )
    # The steady state after the change: new and unblocked replicas' pods placed and counted (before the
    # rolls' surges: the reconciler creates them in its first pass), those that find no room named.
    unplaced: list[str] = []
    added_gpus = 0
    for name, size, pods in added:
        if nodes.add(pods, size) is None:
            unplaced.append(f"{name}: {size} x {sum(pods)} GPUs do not fit on the capacity given")
        else:
            added_gpus += size * sum(pods)
    per, totals = simulate(
        items,
        nodes,
        gpu_names,
        concurrent=concurrent,
        shutdown_seconds=shutdown_seconds,
        settings=settings,
        progress=progress,
    )
    return Forecast(
        per,
        totals,
        tuple(skipped),
        unchanged,
        concurrent,
        capacity,
        held,
        tuple(pending),
        tuple(unplaced),
        added_gpus,
    )
