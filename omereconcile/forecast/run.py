"""Run the real planner (``omereconcile.planner.plan``) through a change in the simulated cluster.

Every rolling replica gets its own :class:`~omereconcile.forecast.world.ForecastSim`, all on one
simulated clock and one set of GPU nodes, driven pass by pass by the planner tests' driver
(:class:`omereconcile.simulate.driver.Driver`, which also checks the planner's invariants on every
write). First each replica is brought up at its current size on the revision it runs before the change
(only the roll is timed); then the change lands (every replica at the
same moment when they roll concurrently, as the reconciler does, else one after the other) and the
forecast samples, after every pass and every clock step: the pods and accelerators each replica holds,
its serving Instances, the update operations the planner opened and the rollout hold it published.

A roll ends when every Instance runs the new revision, or when nothing moves any more (a hold: a
partition, a pause, a zero budget, pods that cannot be placed): what the planner publishes then is
the forecast's answer for it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from omereconcile.forecast.inputs import ForecastInputError
from omereconcile.forecast.world import ForecastSim, Nodes, RevisionSide
from omereconcile.planner.rows import OP_UPDATE
from omereconcile.planner.steps import UNSCHEDULABLE
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.driver import Driver, converged
from omerender.accelerators import accelerator_count

__all__ = ["STAGED", "Hold", "ReplicaForecast", "ReplicaInput", "RollRun", "Totals", "run_roll", "simulate"]

PAUSED = "Paused"  # operation.waiting of an update parked by spec.paused
STAGED = "Staged"  # the Ready reason of a roll stopped at its partition
_BUSY_STEP = 0.5  # the clock between two passes that wrote something (the sim driver's pace)
_IDLE_STEP = 60.0  # longest clock jump while nothing is due
# A roll that keeps failing and retrying moves forever without completing (with no
# lifecycle.updateRetry, a failure that is not the revision's fault is retried at once); past this much
# simulated time it is reported as not completing, with the planner's RolloutStalled message.
_HORIZON = 24 * 3600.0
_MAX_PASSES = 200_000


@dataclass(frozen=True)
class ReplicaInput:
    """One rolling replica: the objects on both sides, the revisions they render, and its size."""

    namespace: str
    name: str
    before_object: Mapping[str, Any]
    after_object: Mapping[str, Any]
    before: RevisionSide
    after: RevisionSide
    instances: int  # Instances running now
    startup_seconds: float
    workers: int = 0  # a gang: a leader and this many workers per Instance (0: one pod per Instance)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def behaviour(self, gpu_names: Sequence[str]) -> str:
        """What the planner and the simulated cluster read of this replica, without its names: two
        replicas with the same behaviour roll alike, so one simulation stands for both. The replica's
        spec without its references (size, strategy, pause, partition...), its annotations and labels,
        the start-up, the gang shape, each runner's pods and accelerators on both sides, and the two
        revisions' payloads as shapes: every field's path and whether it differs between the sides
        (the planner compares them: an image-only change updates in place), with the values of the
        fields it reads itself (scheduler name, pairing protocol) and of numbers and booleans."""
        shape: list[Any] = [self.instances, self.startup_seconds, self.workers]
        for obj in (self.before_object, self.after_object):
            spec = {k: v for k, v in (obj.get("spec") or {}).items() if k not in _REFERENCES}
            meta = obj.get("metadata") or {}
            shape.append([spec, meta.get("annotations") or {}, meta.get("labels") or {}])
        for side in (self.before, self.after):
            shape.append([(r.name, r.size, _runner_gpus(r, gpu_names)) for r in side.runners])
        _payload_shape(_json(self.before.payload), _json(self.after.payload), (), shape)
        return json.dumps(shape, sort_keys=True, default=str)


_REFERENCES = frozenset({"modelRef", "runtimeRef", "fineTunedWeights", "baseModel", "runtime"})
_READ_VALUES = frozenset({"schedulerName", "pairingProtocol"})
_MISSING = object()


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")


def _runner_gpus(r: Any, names: Sequence[str]) -> list[int]:
    return [accelerator_count(ct, names) for ct in (r.template.get("spec") or {}).get("containers") or []]


def _payload_shape(a: Any, b: Any, path: tuple[Any, ...], out: list[Any]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted({*a, *b}):
            _payload_shape(a.get(k, _MISSING), b.get(k, _MISSING), (*path, k), out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            _payload_shape(
                a[i] if i < len(a) else _MISSING, b[i] if i < len(b) else _MISSING, (*path, i), out
            )
    elif a is _MISSING or b is _MISSING:
        out.append([path, "before only" if b is _MISSING else "after only"])
    elif (path and path[-1] in _READ_VALUES) or not isinstance(a, str) or not isinstance(b, str):
        out.append([path, a if a is not _MISSING else None, b])
    else:
        out.append([path, a == b])


@dataclass(frozen=True)
class Hold:
    """A hold as the planner names it: the ``rolloutHold`` gate (``Budget``, ``Partition``, ``Paused``,
    ...) or ``Unschedulable`` for an update step parked on a pod that cannot be placed."""

    gate: str
    reason: str


@dataclass(frozen=True)
class ReplicaForecast:
    namespace: str
    name: str
    instances: int
    replaced: int  # Instances that end on the new revision
    steps: int  # passes of the planner that opened update operations
    floor: int  # fewest serving Instances during the roll
    floor_at: float  # seconds after the change the floor was first reached
    peak_extra_pods: int
    peak_extra_gpus: int
    gpus_per_instance: int
    startup_seconds: float
    completes: bool
    duration: float  # seconds from the change until the last Instance serves the new revision (or stalls)
    holds: tuple[Hold, ...] = ()
    started_at: float = 0.0  # seconds after the change this replica's roll started (later when sequential)
    # (seconds after the change, serving Instances, GPUs above the steady state) from the roll's start,
    # one sample each time either changes: what a drawing of the roll or a sum over a group reads
    series: tuple[tuple[float, int, int], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Totals:
    """The cluster-wide figures, sampled on the shared clock (so concurrent peaks add up only when
    they really overlap)."""

    instances: int
    replaced: int
    peak_extra_pods: int
    peak_extra_gpus: int
    gpus_in_use_at_peak: int  # accelerators placed on nodes (every rolling replica's) at the GPU peak
    floor: int
    floor_at: float
    duration: float
    completes: bool


@dataclass
class _Track:
    """What the forecast samples of one replica."""

    item: ReplicaInput
    sim: ForecastSim
    driver: Driver
    members: tuple[ReplicaInput, ...] = ()  # the identical replicas this simulation stands for
    baseline_pods: int = 0
    baseline_gpus: int = 0
    started: datetime | None = None
    ended: datetime | None = None
    seen_ops: set[str] = field(default_factory=set)
    steps: int = 0
    floor: int | None = None
    floor_at: float = 0.0
    peak_pods: int = 0
    peak_gpus: int = 0
    holds: dict[tuple[str, str], None] = field(default_factory=dict)
    settings: OperatorSettings | None = None  # the operator's, from the change on
    seen: tuple[int, int, str] | None = None  # the world as the last pass saw it
    wake_at: datetime | None = None  # the last pass's requeue
    last_progress: datetime | None = None  # the last pass that wrote to a pod
    stalled: str | None = None  # the last RolloutStalled message seen True during the roll
    change_at: datetime | None = None  # when the change landed (the forecast's origin)
    series: list[tuple[float, int, int]] = field(default_factory=list)

    def finished_or_stuck(self, now: datetime, patience: float) -> bool:
        """Done, or nothing of it moved for ``patience`` seconds (held)."""
        if self.ended is not None:
            return True
        since = self.last_progress or self.started
        return since is not None and (now - since).total_seconds() >= patience

    def spec_for(self, obj: Mapping[str, Any], *, warm: bool) -> dict[str, Any]:
        spec = copy.deepcopy(dict(obj.get("spec") or {}))
        spec["replicas"] = self.item.instances
        if warm:  # the replica as it runs now: up and settled, whatever the change does to pacing
            spec.pop("paused", None)
        return spec


def _warm_object(t: _Track) -> dict[str, Any]:
    obj = copy.deepcopy(dict(t.item.before_object))
    obj["spec"] = t.spec_for(t.item.before_object, warm=True)
    return obj


def _start(t: _Track) -> None:
    """The change lands: the replica renders the new revision and carries the new spec."""
    sim = t.sim
    assert sim.replica is not None
    t.baseline_pods = len(sim.pods)
    t.baseline_gpus = sim.gpus_held()
    t.floor = len(sim.serving_indices())
    t.started = sim.now
    t.series.append(((sim.now - (t.change_at or sim.now)).total_seconds(), t.floor, 0))
    sim.switch(t.item.after)
    if t.settings is not None:
        sim.settings = t.settings
    new = t.spec_for(t.item.after_object, warm=False)
    old = sim.replica["spec"]
    sim.update_spec(**{k: new.get(k) for k in {*old, *new}})


def _sample(t: _Track) -> None:
    sim = t.sim
    if t.started is None or t.ended is not None or sim.replica is None:
        return
    since = (sim.now - t.started).total_seconds()
    extra = sim.gpus_held() - t.baseline_gpus
    t.peak_pods = max(t.peak_pods, len(sim.pods) - t.baseline_pods)
    t.peak_gpus = max(t.peak_gpus, extra)
    serving = len(sim.serving_indices())
    if not t.series or t.series[-1][1:] != (serving, extra):
        t.series.append(((sim.now - (t.change_at or t.started)).total_seconds(), serving, extra))
    if t.floor is None or serving < t.floor:
        t.floor, t.floor_at = serving, since
    new_ops = False
    for row in sim.rows():
        op = row.get("operation") or {}
        if op.get("type") == OP_UPDATE and op.get("targetRevision") == t.item.after.name:
            if op["id"] not in t.seen_ops:
                t.seen_ops.add(op["id"])
                new_ops = True
            if op.get("waiting") == UNSCHEDULABLE:
                t.holds.setdefault(
                    (UNSCHEDULABLE, f"Instance {row['index']}: a new pod cannot be placed"), None
                )
            if op.get("waiting") == PAUSED:
                t.holds.setdefault((PAUSED, f"Instance {row['index']}: update parked while paused"), None)
    t.steps += new_ops
    stalled = sim.condition("RolloutStalled") or {}
    if stalled.get("status") == "True":
        t.stalled = str(stalled.get("message", ""))
    hold = sim.status.get("rolloutHold") or {}
    if hold.get("gate"):
        t.holds.setdefault((str(hold["gate"]), str(hold.get("reason", ""))), None)
    if _done(t):
        t.ended = sim.now


def _settled_holds(t: _Track) -> None:
    """Holds the planner states outside ``rolloutHold`` once a roll stops short: the ``Staged``
    Ready condition of a partition, and a pause that parks the roll before any update starts."""
    sim = t.sim
    if t.ended is not None or sim.replica is None:
        return
    ready = sim.condition("Ready") or {}
    if t.stalled is not None and not t.holds:
        # Failing and retrying, never held: the planner's own words for why it does not complete.
        t.holds.setdefault(("RolloutStalled", t.stalled), None)
    if ready.get("reason") == STAGED:
        t.holds.setdefault((STAGED, str(ready.get("message", ""))), None)
    if sim.replica["spec"].get("paused") and not any(g == PAUSED for g, _ in t.holds):
        t.holds.setdefault((PAUSED, "spec.paused: the planner starts no update"), None)


def _done(t: _Track) -> bool:
    return converged(t.sim) and t.sim.status.get("currentRevision") == t.item.after.name


def _fingerprint(sim: ForecastSim) -> tuple[int, int, str]:
    """Changes whenever anything the planner reads changes: every write and kubelet update bumps the
    simulator's resourceVersion counter; a pod gone and the EndpointSlices are compared as they are."""
    return (sim._seq, len(sim.pods), repr(sim.slices))


def _lockstep(tracks: Sequence[_Track], until: Any, stall_after: float) -> datetime:
    """Passes for every replica, then one clock step for all, until ``until()`` or nothing moves for
    ``stall_after`` seconds. Returns the time of the last progress."""
    sims = [t.sim for t in tracks]
    last_progress = start = sims[0].now
    for _ in range(_MAX_PASSES):
        if until():
            return sims[0].now
        if (sims[0].now - start).total_seconds() >= _HORIZON:
            return sims[0].now
        busy = False
        wakes: list[float] = []
        for t in tracks:
            now = t.sim.now
            # Like the reconciler, a replica is planned when something of it changed or its requeue
            # is due: an idle replica costs no pass.
            mark = _fingerprint(t.sim)
            if mark != t.seen or (t.wake_at is not None and now >= t.wake_at):
                t.seen = mark
                p = t.driver.one_pass()
                kinds = {type(a).__name__ for a in p.actions} - {"RecordEvent"}
                # A status write wakes the reconciler's watch too; only writes to pods are progress.
                busy |= bool(kinds) or p.requeue_after == 0.0
                if kinds - {"WriteStatus"}:
                    last_progress = t.last_progress = now
                wake = None if p.requeue_after is None else max(p.requeue_after, _BUSY_STEP)
                t.wake_at = None if wake is None else now + timedelta(seconds=wake)
                _sample(t)
            if t.wake_at is not None:
                wakes.append(max((t.wake_at - now).total_seconds(), _BUSY_STEP))
            nxt = t.sim.next_event()
            if nxt is not None:
                wakes.append(max((nxt - now).total_seconds(), _BUSY_STEP))
        if until():
            return sims[0].now
        if (sims[0].now - last_progress).total_seconds() >= stall_after:
            return last_progress
        step = _BUSY_STEP if busy else min([_IDLE_STEP, *wakes])
        for s in sims:
            s.advance(step)
        for t in tracks:
            if _fingerprint(t.sim) != t.seen:
                t.driver.check()
                _sample(t)
    raise RuntimeError(f"the forecast did not settle within {_MAX_PASSES} planner passes")


@dataclass(frozen=True)
class RollRun:
    """One replica's roll on a simulated cluster of its own (:func:`run_roll`): whether it came up on
    its revision before the change, whether the roll ended, the seconds from the change to its end (or
    to its last progress when it stopped short), the holds it stopped at and its series of ``(seconds,
    serving Instances, extra GPUs)``."""

    came_up: bool
    ended: bool
    seconds: float
    holds: tuple[tuple[str, str], ...]
    series: tuple[tuple[float, int, int], ...]


def run_roll(
    item: ReplicaInput, sim: ForecastSim, observe: Callable[[float], None], *, stall_after: float
) -> RollRun:
    """``item``'s roll alone on ``sim``, as :func:`simulate` runs each: brought up and settled on its
    old revision, then the change lands and the planner runs pass by pass until the roll ends or
    nothing moves for ``stall_after`` seconds. ``observe(seconds since the change)`` is called after
    every pass and clock step (``kubectl ome rollout status --eta`` reads the rows there)."""
    track = _Track(item, sim, Driver(sim, max_step=_IDLE_STEP), (item,))
    sim.apply_replica(_warm_object(track))
    _lockstep([track], lambda: converged(sim), stall_after)
    if not converged(sim):
        return RollRun(False, False, 0.0, (), ())
    track.change_at = origin = sim.now

    def until() -> bool:
        observe((sim.now - origin).total_seconds())
        return track.ended is not None

    _start(track)
    last = _lockstep([track], until, stall_after)
    until()
    _settled_holds(track)
    end = track.ended or last
    return RollRun(
        True,
        track.ended is not None,
        (end - origin).total_seconds(),
        tuple(track.holds),
        tuple(track.series),
    )


def simulate(
    items: Sequence[ReplicaInput],
    nodes: Nodes,
    gpu_names: Sequence[str],
    *,
    concurrent: bool = True,
    shutdown_seconds: float = 3.0,
    settings: OperatorSettings | None = None,
    alone: frozenset[str] = frozenset(),
    progress: Callable[[str], None] | None = None,
) -> tuple[tuple[ReplicaForecast, ...], Totals]:
    """Forecast the roll of ``items`` on ``nodes``; a deleted pod is gone (its GPUs free) after
    ``shutdown_seconds``. Raises ``ForecastInputError`` when the replicas as they run now do not come up on
    the capacity given (the forecast has no start to measure from)."""
    tracks: list[_Track] = []
    classes: dict[str, list[ReplicaInput]] = {}
    for item in items:
        # Concurrent rolls of identical replicas are one simulation counted as many times (one at a
        # time, each starts after the previous one: they cannot share).
        together = concurrent and item.key not in alone
        classes.setdefault(item.behaviour(gpu_names) if together else item.key, []).append(item)
    for members in classes.values():
        item = members[0]
        sim = ForecastSim(
            item.before,
            item.startup_seconds,
            nodes,
            gpu_names,
            shutdown_seconds,
            workers=item.workers,
            weight=len(members),
        )
        # The warm-up runs with the simulator's settings (a readiness deadline shorter than the
        # start-up must not stop the replica from coming up as it runs now); the roll with the operator's.
        t = _Track(item, sim, Driver(sim, max_step=_IDLE_STEP), tuple(members), settings=settings)
        sim.apply_replica(_warm_object(t))
        tracks.append(t)
    if not tracks:
        return (), Totals(0, 0, 0, 0, 0, 0, 0.0, 0.0, True)
    stall = max(600.0, 3 * max(i.startup_seconds for i in items), 3 * shutdown_seconds)
    if progress is not None:
        progress(f"bringing {len(tracks)} simulations of {len(items)} replicas up before the change")
    _lockstep(tracks, lambda: all(converged(t.sim) for t in tracks), stall)
    split = frozenset(m.key for t in tracks if not converged(t.sim) and len(t.members) > 1 for m in t.members)
    if split:
        # Identical replicas come up together or not at all; on a tight cluster some of them do, so
        # those are simulated one by one.
        return simulate(
            items,
            nodes.fresh(),
            gpu_names,
            concurrent=concurrent,
            shutdown_seconds=shutdown_seconds,
            settings=settings,
            alone=alone | split,
            progress=progress,
        )
    if not all(converged(t.sim) for t in tracks):
        cold = tuple(m.key for t in tracks if not converged(t.sim) for m in t.members)
        raise ForecastInputError(
            f"{', '.join(cold)}: does not come up on the capacity given even before the change; give the "
            "cluster's capacity (--capacity NODESxGPUS or --nodes-from)",
            replicas=cold,
        )
    by_member = {m.key: t for t in tracks for m in t.members}
    t0 = tracks[0].sim.now
    for t in tracks:
        t.change_at = t0
    peak = _ClusterPeak(tracks, t0)
    queue = list(tracks) if not concurrent else []
    for t in tracks if concurrent else queue[:1]:
        _start(t)
    if queue:
        queue.pop(0)

    calls = 0

    def until() -> bool:
        nonlocal calls
        peak.sample()
        now = tracks[0].sim.now
        calls += 1
        if progress is not None and calls % 100 == 1:  # the first pass, then every 100th
            done = sum(len(t.members) for t in tracks if t.ended is not None)
            progress(f"{done}/{len(items)} replicas rolled, {(now - t0).total_seconds():.0f}s simulated")
        # One at a time: the next starts once the previous is done or held (before the whole
        # forecast would call it a stall).
        if queue and all(t.finished_or_stuck(now, stall / 2) for t in tracks if t.started is not None):
            _start(queue.pop(0))
        return not queue and all(t.ended is not None for t in tracks)

    last = _lockstep(tracks, until, stall)
    for t in tracks:
        _settled_holds(t)
    shared = {t.item.key: _result(t, last, t0) for t in tracks}
    per = tuple(
        dataclasses.replace(shared[by_member[m.key].item.key], namespace=m.namespace, name=m.name)
        for m in items
    )

    end = max((t.ended or last) for t in tracks)
    totals = Totals(
        instances=sum(r.instances for r in per),
        replaced=sum(r.replaced for r in per),
        peak_extra_pods=peak.pods,
        peak_extra_gpus=peak.gpus,
        gpus_in_use_at_peak=peak.in_use,
        floor=peak.floor if peak.floor is not None else 0,
        floor_at=peak.floor_at,
        duration=(end - t0).total_seconds(),
        completes=all(r.completes for r in per),
    )
    return per, totals


@dataclass
class _ClusterPeak:
    tracks: Sequence[_Track]
    t0: datetime
    pods: int = 0
    gpus: int = 0
    in_use: int = 0
    floor: int | None = None
    floor_at: float = 0.0

    def sample(self) -> None:
        now = self.tracks[0].sim.now
        pods = sum(
            (len(t.sim.pods) - t.baseline_pods) * t.sim.weight for t in self.tracks if t.started is not None
        )
        held = sum(t.sim.gpus_held(placed_only=True) * t.sim.weight for t in self.tracks)
        extra = sum(
            (t.sim.gpus_held() - t.baseline_gpus) * t.sim.weight for t in self.tracks if t.started is not None
        )
        self.pods = max(self.pods, pods)
        if extra > self.gpus or (extra == self.gpus and held > self.in_use):
            self.gpus, self.in_use = extra, held
        serving = sum(len(t.sim.serving_indices()) * t.sim.weight for t in self.tracks)
        if self.floor is None or serving < self.floor:
            self.floor, self.floor_at = serving, (now - self.t0).total_seconds()


def _result(t: _Track, last: datetime, t0: datetime) -> ReplicaForecast:
    sim = t.sim
    replaced = sum(1 for r in sim.rows() if r.get("runningRevision") == t.item.after.name)
    per_instance = (t.baseline_gpus // t.item.instances) if t.item.instances else 0
    start = t.started or sim.now
    end = t.ended or last
    return ReplicaForecast(
        namespace=t.item.namespace,
        name=t.item.name,
        instances=t.item.instances,
        replaced=replaced,
        steps=t.steps,
        floor=t.floor if t.floor is not None else 0,
        floor_at=t.floor_at,
        peak_extra_pods=t.peak_pods,
        peak_extra_gpus=t.peak_gpus,
        gpus_per_instance=per_instance,
        startup_seconds=t.item.startup_seconds,
        completes=t.ended is not None,
        duration=max((end - start).total_seconds(), 0.0),
        holds=tuple(Hold(g, r) for g, r in t.holds),
        started_at=(start - t0).total_seconds(),
        series=tuple(t.series),
    )
