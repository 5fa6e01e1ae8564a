"""The expected time to completion of a roll in flight, from the planner run on the live replica.

``rollout status`` and ``rollout get`` print it. How it is measured, not guessed:

1. **What this roll has shown so far** (:func:`measure`), read back as ``history --timeline`` reads
   it (:mod:`omereconcile.kubectl.rolltimeline`: the controller's RecreateUpdateStarted/Completed events
   and the new revision's pods): the **start-up** is the median of (serving − creation) of this roll's
   pods that serve; the **drain** is the median time from a surge pod serving to its update completing
   (a recreate: from its start to the new pod's creation), the time an old pod takes to go. When no pod
   of this roll serves yet there is no start-up to measure: the forecast's default (``--startup`` of
   ``omereconcile forecast``, 5m) is used, and said; the same for the drain (30s).
2. **The planner on a simulated clock** (:func:`plan_roll`): the forecast's simulation
   (:mod:`omereconcile.forecast.run`'s ``ReplicaInput``, ``_Track``, ``_warm_object``, ``_start``,
   ``_lockstep`` and ``_settled_holds``, and :mod:`omereconcile.forecast.world`'s ``ForecastSim`` and
   ``Nodes``, read only: this module is their entry point for a live roll) brings the replica up at its
   desired size on the revision its not-yet-updated Instances run, switches it to the roll target with
   the live spec (strategy, budgets, partition) and runs the real planner pass by pass until the roll
   completes (or is complete up to its partition), recording when each Instance's update starts and
   when each completes. Its start-up and drain move in 5% steps, so a watch runs it again only when
   they moved that much.
3. **Where the live roll is on that path** (:func:`estimate`): the live roll has started ``m`` updates
   and completed ``k``; whichever of the two it did last, at live time ``L`` (seconds since the target
   revision was created), is matched with the simulation's ``m``-th start (or ``k``-th completion) at
   simulated time ``S``. The time left is ``pace × (duration − S) − (now − L)``, never below zero.
4. **The pace**: once two updates have started, the time between this roll's first and last start over
   the run's time between the same starts (kept between 0.5 and 2). The simulation moves its clock half a
   second after every pass that wrote (the forecast's pace), a real controller moves on within a few
   milliseconds: on fast pods the run is slower than the roll by a few passes per Instance, and a roll
   slowed by something the run does not model (a slow image pull, an API server under load) is slower
   than the run. Until then the pace is 1, and the line says so.

What it does not know, and says in its ``assumes`` line: the nodes are assumed to have room for every
new pod (while an update waits ``Unschedulable`` for room, no number is given: when room comes is not
the roll's to say); an in-place update's restart time is not measured (pods are not recreated).

Pure: the verbs pass in what they read and the time.
"""

from __future__ import annotations

import json
import math
import statistics
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omereconcile.kubectl import rolltimeline, state
from omereconcile.kubectl.tree import parse_time

if TYPE_CHECKING:
    from omereconcile.timeline import Timeline

__all__ = [
    "DEFAULT_DRAIN_SECONDS",
    "DEFAULT_STARTUP_SECONDS",
    "Eta",
    "Measured",
    "RollPlan",
    "estimate",
    "forecast_drawing",
    "measure",
    "plan_roll",
    "workers_of",
]

JSON = Mapping[str, Any]

DEFAULT_STARTUP_SECONDS = 300.0  # omereconcile forecast --startup's default (5m)
DEFAULT_DRAIN_SECONDS = 30.0  # omereconcile forecast --shutdown's default
UNSCHEDULABLE = "Unschedulable"  # operation.waiting of a step whose new pod cannot be placed (planner.holds)


@dataclass(frozen=True)
class Measured:
    """What this roll has shown so far, in seconds from its target revision's creation."""

    startup: float | None  # median (serving − creation) of this roll's serving pods; None: none yet
    startup_pods: int
    drain: float | None
    drain_samples: int
    started: int  # updates started (RecreateUpdateStarted)
    completed: int  # updates completed (RecreateUpdateCompleted)
    last_start: float | None
    last_completion: float | None
    first_start: float | None = None


@dataclass(frozen=True)
class RollPlan:
    """The planner's run of the roll on a simulated clock (seconds from the change)."""

    duration: float
    completes: bool
    starts: tuple[float, ...]  # the j-th update's start
    completions: tuple[float, ...]  # the time j Instances run the target
    hold: str = ""  # why the run stops short (the planner's hold), when it does
    # (Instance, step, start, end) of every update step the run went through, in the order they began
    steps: tuple[tuple[int, str, float, float], ...] = ()
    # (seconds, serving Instances, GPUs above the steady state), one sample each time either changes
    series: tuple[tuple[float, int, int], ...] = ()


@dataclass(frozen=True)
class Eta:
    seconds: float | None  # None: no number (every Instance rolled and starting, or the run stops short)
    text: str
    assumes: str
    at: datetime | None = None

    def content(self) -> dict[str, Any]:
        return {
            "seconds": None if self.seconds is None else round(self.seconds, 1),
            "at": None if self.at is None else self.at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "text": self.text,
            "assumes": self.assumes,
        }


def _median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def startups(pods: Sequence[JSON], revision: str) -> list[float]:
    """(serving − creation) in seconds of every pod at ``revision`` that serves (its ``ome.io/serving``
    condition, else ``Ready``), whether or not its update's events are still there."""
    out: list[float] = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        if (meta.get("labels") or {}).get(rolltimeline.LABEL_REVISION_HASH) != state.revision_hash(revision):
            continue
        created = parse_time(meta.get("creationTimestamp"))
        serving = rolltimeline.serving_since(pod)
        if created is not None and serving is not None:
            out.append(max((serving - created).total_seconds(), 0.0))
    return out


def measure(timeline: JSON, pods: Sequence[JSON]) -> Measured:
    """The start-up and drain times and the progress of a roll, from its ``build_timeline`` document
    and the replica's pods."""
    inst = list(timeline.get("instances") or [])
    startups_ = startups(pods, str(timeline.get("name") or ""))
    drains: list[float] = []
    for i in inst:
        if i.get("mode") == "surge" and i.get("servingAt") is not None and i.get("completedAt") is not None:
            drains.append(max(float(i["completedAt"]) - float(i["servingAt"]), 0.0))
        elif (
            i.get("mode") == "recreate"
            and i.get("startedAt") is not None
            and i.get("podCreatedAt") is not None
        ):
            drains.append(max(float(i["podCreatedAt"]) - float(i["startedAt"]), 0.0))
    starts = [float(i["startedAt"]) for i in inst if i.get("startedAt") is not None]
    ends = [float(i["completedAt"]) for i in inst if i.get("completedAt") is not None]
    return Measured(
        startup=_median(startups_),
        startup_pods=len(startups_),
        drain=_median(drains),
        drain_samples=len(drains),
        started=len(starts),
        completed=len(ends),
        last_start=max(starts, default=None),
        first_start=min(starts, default=None),
        last_completion=max(ends, default=None),
    )


def _side(rev: JSON, workers: int) -> Any:
    from omereconcile.cluster.observe import runners_from_payload
    from omereconcile.forecast.world import RevisionSide
    from omereconcile.world import RevisionView
    from omerender.constants import RUNNER_WORKER
    from omerender.render import RenderedRunner

    view = RevisionView.from_dict(rev)
    current = (RenderedRunner(RUNNER_WORKER, workers, {}),) if workers else ()
    return RevisionSide(view.name, view.data, runners_from_payload(view.data, current))


def plan_roll(
    replica: JSON,
    before: JSON,
    after: JSON,
    *,
    startup_seconds: float,
    drain_seconds: float,
    workers: int = 0,
) -> RollPlan:
    """The planner's run of the roll from ``before`` to ``after`` (ControllerRevisions) of ``replica``
    at its desired size and live spec, on the forecast's simulated cluster with room for every pod."""
    from omereconcile.forecast.run import STAGED, ReplicaInput, run_roll
    from omereconcile.forecast.world import ForecastSim, Nodes
    from omereconcile.planner.rows import OP_UPDATE

    meta = replica.get("metadata") or {}
    spec = dict(replica.get("spec") or {})
    obj = {
        "apiVersion": replica.get("apiVersion") or "ome.io/v1beta1",
        "kind": replica.get("kind") or "InferenceReplica",
        "metadata": {k: v for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")},
        "spec": spec,
    }
    desired = int(spec["replicas"]) if spec.get("replicas") is not None else 1
    old, new = _side(before, workers), _side(after, workers)
    item = ReplicaInput(
        str(meta.get("namespace") or ""),
        str(meta.get("name") or ""),
        obj,
        obj,
        old,
        new,
        desired,
        startup_seconds,
        workers,
    )
    sim = ForecastSim(old, startup_seconds, Nodes(None), ("nvidia.com/gpu",), drain_seconds, workers=workers)
    seen: set[str] = set()
    starts: list[float] = []
    completions: list[float] = []
    open_steps: dict[int, tuple[str, float]] = {}  # Instance -> (step, since)
    steps: list[tuple[int, str, float, float]] = []

    def observe(at: float) -> None:
        done = 0
        now_steps: dict[int, str] = {}
        for row in sim.rows():
            op = row.get("operation") or {}
            if op.get("type") == OP_UPDATE and op.get("targetRevision") == new.name:
                now_steps[int(row["index"])] = str(op.get("step") or "Update")
                if op["id"] not in seen:
                    seen.add(op["id"])
                    starts.append(at)
            done += row.get("runningRevision") == new.name
        for index, (step, since) in list(open_steps.items()):
            if now_steps.get(index) != step:
                steps.append((index, step, since, at))
                del open_steps[index]
        for index, step in now_steps.items():
            open_steps.setdefault(index, (step, at))
        completions.extend([at] * (done - len(completions)))

    stall = max(600.0, 3 * startup_seconds, 3 * drain_seconds)
    run = run_roll(item, sim, observe, stall_after=stall)
    if not run.came_up:
        return RollPlan(0.0, False, (), (), "the replica does not come up on its revision before the roll")
    duration = run.seconds
    steps += [(index, step, since, duration) for index, (step, since) in open_steps.items()]
    hold = "; ".join(f"{g}: {r}" for g, r in run.holds) if not run.ended else ""
    # A partition stops the roll short, complete up to it (Ready reason Staged, as rollout status
    # judges it): the run's end is when the last Instance it rolls runs the target.
    staged = not run.ended and any(g == STAGED for g, _ in run.holds) and bool(completions)
    if staged:
        duration = completions[-1]
    return RollPlan(
        duration,
        run.ended or staged,
        tuple(starts),
        tuple(completions),
        hold,
        tuple(sorted(steps, key=lambda s: (s[2], s[0]))),
        run.series,
    )


def _in_steps(seconds: float) -> float:
    """``seconds`` on a scale of 5% steps (below a second: to the tenth)."""
    if seconds < 1.0:
        return round(seconds, 1)
    return round(1.05 ** round(math.log(seconds, 1.05)), 2)


def _clock(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def forecast_drawing(plan: RollPlan, title: str) -> Timeline:
    """The planner's run as :class:`omereconcile.timeline.Timeline`, in the words of the roll's own
    drawing (``rolltimeline.to_drawing``): per Instance its wait for its turn and its update steps, the
    serving floor and extra GPUs; a step the run ends in without completing is drawn as held."""
    from omereconcile.timeline import Point, Step, Timeline

    first: dict[int, float] = {}
    for index, _step, start, _end in plan.steps:
        first.setdefault(index, start)
    steps: list[Step] = []
    for index, step, start, end in plan.steps:
        if first.get(index) == start and start > 0:
            steps.append(Step(f"Instance {index} waits", 0.0, start, "waits"))
            first[index] = -1.0
        held = not plan.completes and end >= plan.duration
        steps.append(Step(f"Instance {index} {step}", start, end, "held" if held else "done"))
    series = tuple(Point(at, serving, extra) for at, serving, extra in plan.series)
    instances = plan.series[0][1] if plan.series else 0
    return Timeline(title, tuple(steps), series, instances)


def workers_of(replica: JSON) -> int:
    return _workers(replica)


def _workers(replica: JSON) -> int:
    """A gang's workers per Instance, from the pods the status rows count (0: one pod per Instance)."""
    counts = [int(r.get("podCount") or 0) for r in state.instance_rows(replica)]
    return max(max(counts, default=1) - 1, 0)


def estimate(
    replica: JSON,
    revisions: Sequence[JSON],
    pods: Sequence[JSON],
    events: Sequence[JSON],
    now: datetime,
    *,
    cache: dict[str, RollPlan] | None = None,
) -> Eta | None:
    """The ETA of the replica's roll in flight; None when it is complete, or held, paused or failed
    (its status already says it does not finish by itself: no line repeats it).
    ``events``: the replica's Normal events; ``cache``: plans by their inputs, kept between calls (a
    watch asks again on every change; the planner runs again only when what it reads changed)."""
    progress = state.rollout_progress(replica, revisions)
    if progress.done or progress.stopped or progress.state == "NotObserved":
        return None
    parked = sorted(
        int(r["index"])
        for r in progress.in_flight
        if (r.get("operation") or {}).get("waiting") == UNSCHEDULABLE
    )
    if parked:
        who = ", ".join(map(str, parked))
        return Eta(
            None,
            f"none while Instance{'s' if len(parked) > 1 else ''} {who} waits for room on the nodes "
            "(Unschedulable): when room comes is not the roll's to say",
            "-",
        )
    after = state.find_revision(revisions, progress.target) if progress.target else None
    if after is None:
        return Eta(None, "none yet: the target revision is not listed", "-")
    rows = state.instance_rows(replica)
    old_names = [
        str(r.get("runningRevision") or "") for r in rows if r.get("runningRevision") != progress.target
    ]
    before = None
    if old_names:
        common = max(set(old_names), key=old_names.count)
        before = state.find_revision(revisions, common) if common else None
    if before is None:
        before = state.find_revision(revisions, progress.current) if progress.current else None
    if before is None or (before.get("metadata") or {}).get("name") == progress.target:
        return Eta(None, "none: every Instance runs the target revision; waiting for it to be ready", "-")
    try:
        tl = rolltimeline.build_timeline(replica, revisions, pods, events, progress.target)
    except LookupError:
        return Eta(None, "none yet: the target revision is not listed", "-")
    m = measure(tl, pods)
    startup = m.startup if m.startup is not None else DEFAULT_STARTUP_SECONDS
    drain = m.drain if m.drain is not None else DEFAULT_DRAIN_SECONDS
    workers = _workers(replica)
    spec = replica.get("spec") or {}
    # The run costs a planner pass per step of every Instance (a 100-Instance roll one at a time: about
    # 15 s of CPU), so its inputs move in 5% steps: a watch runs it again when the start-up or drain
    # moved by that much, not on every new pod.
    run_startup, run_drain = _in_steps(startup), _in_steps(drain)
    key = json.dumps(
        [
            (before.get("metadata") or {}).get("name"),
            progress.target,
            {k: v for k, v in spec.items() if k != "paused"},
            run_startup,
            run_drain,
            workers,
        ],
        sort_keys=True,
        default=str,
    )
    plan = cache.get(key) if cache is not None else None
    if plan is None:
        plan = plan_roll(
            replica, before, after, startup_seconds=run_startup, drain_seconds=run_drain, workers=workers
        )
        if cache is not None:
            cache[key] = plan
    startup_text = (
        f"start-up {_clock(startup)} (median of {m.startup_pods} pod{'s' if m.startup_pods != 1 else ''} "
        "of this roll)"
        if m.startup is not None
        else f"start-up {_clock(startup)} (no pod of this roll serves yet: the forecast's default)"
    ) + (
        f", drain {_clock(drain)} (median of {m.drain_samples})"
        if m.drain is not None
        else f", drain {_clock(drain)} (none finished yet: the forecast's default)"
    )
    room = "room on the nodes for every new pod"
    if not plan.completes:
        return Eta(
            None,
            f"none: the planner's run of this roll does not complete ({plan.hold or 'stalls'})",
            f"{startup_text}, {room}",
        )
    origin = parse_time((after.get("metadata") or {}).get("creationTimestamp"))
    live = (now - origin).total_seconds() if origin is not None else 0.0
    ls = m.last_start if m.started and m.started <= len(plan.starts) else None
    lc = m.last_completion if m.completed and m.completed <= len(plan.completions) else None
    if ls is not None and (lc is None or ls >= lc):
        sim_at, live_at = plan.starts[m.started - 1], ls
    elif lc is not None:
        sim_at, live_at = plan.completions[m.completed - 1], lc
    else:
        sim_at, live_at = 0.0, 0.0
    pace, pace_text = 1.0, "pace of the planner's run (fewer than two updates started here)"
    if (
        m.started >= 2
        and m.started <= len(plan.starts)
        and m.first_start is not None
        and m.last_start is not None
    ):
        live_span = m.last_start - m.first_start
        sim_span = plan.starts[m.started - 1] - plan.starts[0]
        if live_span > 0 and sim_span > 0:
            pace = min(max(live_span / sim_span, 0.5), 2.0)
            every = m.started - 1
            pace_text = (
                f"paced as this roll so far ({every} update{'s' if every != 1 else ''} started every "
                f"{live_span / every:.1f}s here, every {sim_span / every:.1f}s in the planner's run)"
            )
    assumes = f"{startup_text}, {pace_text}, {room}"
    left = max(pace * (plan.duration - sim_at) - (live - live_at), 0.0)
    when = now + timedelta(seconds=left)
    partition = " to the partition" if plan.hold.startswith("Staged") else ""
    text = (
        f"{_clock(left)}{partition} (about {when.strftime('%H:%M:%S')} UTC)"
        if left > 0
        else "any moment now (the roll is behind the planner's run)"
    )
    return Eta(left, text, assumes, when)


def failed(exc: BaseException) -> Eta:
    """No number for a roll the planner could not be run on, saying why. The planner or a stored
    revision's render refusing the replica gives its words; anything else is a bug of this command, named
    by its type and where it was raised so that it can be reported (a bare assertion has no words)."""
    from omereconcile.forecast.inputs import ForecastInputError
    from omerender.errors import OmeRenderError

    if isinstance(exc, OmeRenderError | ForecastInputError) and str(exc):
        return Eta(None, f"none: the planner could not be run on this roll ({exc})", "-")
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    words = f": {exc}" if str(exc) else ""
    return Eta(
        None,
        f"none: internal error ({type(exc).__name__}{words}{where}); this is a bug, please report it "
        "with kubectl ome rollout get -o json",
        "-",
    )
