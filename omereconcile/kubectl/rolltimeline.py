"""A roll as it happened, read back from what the cluster already keeps: no write is added to a roll.

Pure (the verb passes in what it read). Status forgets a step once it is over, so the timeline is read
from the two records that outlive it:

- the controller's Normal events on the replica (by its UID), which OME's Go controller records and
  :mod:`omereconcile.planner.instances` / :mod:`omereconcile.planner.surge` restate:
  ``RecreateUpdateStarted`` (``component=C instance=N surge to revision R (newOrdinal=K)``, or
  ``recreate (revision A -> R, incarnation=K)``) opens an Instance's update, and
  ``RecreateUpdateCompleted`` (``... surge to revision R complete``, ``... recreate to revision R
  complete``) closes it;
- the Instance's pod at the new revision: its ``creationTimestamp`` and the ``lastTransitionTime`` of
  its ``ome.io/serving`` condition (else ``Ready``) split the update into its steps: for a surge,
  ``Surge`` until the new pod serves, then ``SurgeDrain`` until the update completes; for a recreate,
  ``Drain`` until the new pod exists, then ``CreatePods``. A recreate's status stays at step ``Drain``
  until the promote (OME's ``recreateUpdate``): its second part is named for what the pods show, the
  name the Create operation gives the same work.

Why not record step times in status: each would be one more write of the replica's status per step
(the reconciler writes status when a step changes already, but a step's end time would have to be kept
after the operation is gone), and a roll's writes per Instance must not grow. The cost of reading them
back instead, said in the output when it applies: events live one hour in a default kube-apiserver
(``--event-ttl``), and the recorder counts an event equal to an earlier one (same Instance, same
revision) instead of writing it again, so only the last attempt of a repeated update is dated; a pod
replaced since (a later roll, a restart) takes its start-up times with it.

The serving floor counts an Instance out of serving from a recreate's start until its new pod serves;
a surge keeps the old pod serving until the new one does, so it does not lower the floor. Extra pods
are the surge pods that exist beside their source (from the new pod's creation until the update
completes); extra GPUs are those pods' ``*/gpu`` limits.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from omereconcile.kubectl import state
from omereconcile.kubectl.tree import event_time, parse_time
from omereconcile.timeline import Point, Step, Timeline

__all__ = ["build_timeline", "render_text", "to_drawing"]

JSON = Mapping[str, Any]

_STARTED = re.compile(
    r"component=\S+ instance=(\d+) (?:surge to revision (\S+) \(|recreate \(revision \S+ -> (\S+),)"
)
_COMPLETED = re.compile(r"component=\S+ instance=(\d+) (surge|recreate) to revision (\S+) complete")
LABEL_INSTANCE_INDEX = "ome.io/instance-index"
LABEL_REVISION_HASH = "ome.io/revision-hash"
SERVING_GATE = "ome.io/serving"


def _cond_since(pod: JSON, ctype: str) -> datetime | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == ctype and c.get("status") == "True":
            return parse_time(c.get("lastTransitionTime"))
    return None


def serving_since(pod: JSON) -> datetime | None:
    """When the pod began serving: its ``ome.io/serving`` condition's transition, else ``Ready``'s."""
    return _cond_since(pod, SERVING_GATE) or _cond_since(pod, "Ready")


def _gpus(pod: JSON) -> int:
    total = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        for key, value in ((c.get("resources") or {}).get("limits") or {}).items():
            if str(key).endswith("/gpu"):
                with contextlib.suppress(TypeError, ValueError):
                    total += int(value)
    return total


def build_timeline(
    replica: JSON,
    revisions: Sequence[JSON],
    pods: Sequence[JSON],
    events: Sequence[JSON],
    revision: str | None = None,
) -> dict[str, Any]:
    """The roll to ``revision`` (a number, name or hash; default the roll target) as a document: per
    Instance its steps and waits in seconds from the revision's creation (the change), the serving floor
    over time, and what could not be read. Raises ``LookupError`` for an unknown revision."""
    meta = replica.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if revision is not None:
        found = state.find_revision(revisions, revision)
        if found is None:
            raise LookupError(revision)
    else:
        target = state.roll_target(replica, revisions)
        found = state.find_revision(revisions, target) if target else None
        if found is None:
            raise LookupError(target or "(no roll target)")
    name = str((found.get("metadata") or {}).get("name") or "")
    origin = parse_time((found.get("metadata") or {}).get("creationTimestamp"))
    assert origin is not None, "a ControllerRevision has a creationTimestamp"
    desired = int((replica.get("spec") or {}).get("replicas") or 0) or 1

    def at(when: datetime | None) -> float | None:
        return None if when is None else round((when - origin).total_seconds(), 3)

    started: dict[int, tuple[str, datetime | None, int]] = {}
    completed: dict[int, datetime] = {}
    for ev in events:
        inv = ev.get("involvedObject") or {}
        if str(inv.get("uid") or "") != uid or ev.get("type") != "Normal":
            continue
        message = str(ev.get("message") or "")
        when = parse_time(event_time(ev))
        if when is None:
            continue
        if ev.get("reason") == "RecreateUpdateStarted" and (m := _STARTED.search(message)):
            rev = m.group(2) or m.group(3)
            if rev == name:
                mode = "surge" if m.group(2) else "recreate"
                started[int(m.group(1))] = (mode, when, int(ev.get("count") or 1))
        elif (
            ev.get("reason") == "RecreateUpdateCompleted"
            and (m := _COMPLETED.search(message))
            and m.group(3) == name
        ):
            completed[int(m.group(1))] = when
    new_pods: dict[int, JSON] = {}
    for candidate in pods:
        labels = (candidate.get("metadata") or {}).get("labels") or {}
        if labels.get(LABEL_REVISION_HASH) != state.revision_hash(name):
            continue
        try:
            index = int(str(labels.get(LABEL_INSTANCE_INDEX)))
        except ValueError:
            continue
        prev = new_pods.get(index)
        born = str((candidate.get("metadata") or {}).get("creationTimestamp") or "")
        if prev is None or born > str((prev.get("metadata") or {}).get("creationTimestamp") or ""):
            new_pods[index] = candidate
    instances: list[dict[str, Any]] = []
    notes: list[str] = []
    floor_changes: list[tuple[float, int]] = []
    extra: list[tuple[float, int, int]] = []  # (at, +/-1 pod, gpus)
    end = 0.0
    for index in sorted(set(started) | set(completed)):
        mode, begin_at, count = started.get(index, ("?", None, 0))
        pod = new_pods.get(index)
        created = parse_time((pod.get("metadata") or {}).get("creationTimestamp")) if pod else None
        serving = serving_since(pod) if pod else None
        done = completed.get(index)
        b, c, s, d = at(begin_at), at(created), at(serving), at(done)
        steps: list[dict[str, Any]] = []
        waits: list[dict[str, Any]] = []
        if b is not None and b > 0:
            waits.append({"what": "its turn (budget, or an earlier Instance)", "start": 0.0, "end": b})
        if mode == "surge":
            mid = s if s is not None and b is not None and s >= b else None
            steps.append({"step": "Surge", "start": b, "end": mid if mid is not None else d})
            if mid is not None:
                steps.append({"step": "SurgeDrain", "start": mid, "end": d})
            if c is not None and b is not None and c - b >= 1:
                waits.append({"what": "the surge pod to be created (room, admission)", "start": b, "end": c})
            if c is not None and d is not None:
                gpus = _gpus(pod) if pod else 0
                extra += [(c, 1, gpus), (d, -1, -gpus)]
        elif mode == "recreate":
            steps.append({"step": "Drain", "start": b, "end": c})
            steps.append({"step": "CreatePods", "start": c, "end": d})
            if b is not None:
                floor_changes += [(b, -1), (s if s is not None else (d if d is not None else b), 1)]
        else:
            steps.append({"step": "Update", "start": b, "end": d})
        if begin_at is None:
            notes.append(f"Instance {index}: its RecreateUpdateStarted event is gone; its start is not known")
        if done is None:
            notes.append(f"Instance {index}: not completed (or its RecreateUpdateCompleted event is gone)")
        if pod is None:
            notes.append(
                f"Instance {index}: no pod at {state.revision_hash(name)} left; its steps are not split"
            )
        if count > 1:
            notes.append(f"Instance {index}: started {count} times; the last attempt is drawn")
        end = max([end, *(x for x in (b, c, s, d) if x is not None)])
        instances.append(
            {
                "index": index,
                "mode": mode,
                "pod": (pod.get("metadata") or {}).get("name") if pod else None,
                "startedAt": b,
                "podCreatedAt": c,
                "servingAt": s,
                "completedAt": d,
                "startupSeconds": None if c is None or s is None else round(s - c, 3),
                "steps": steps,
                "waits": waits,
            }
        )
    series: list[dict[str, Any]] = []
    serving_now, pods_now, gpus_now = desired, 0, 0
    changes = sorted([(t, df, 0, 0) for t, df in floor_changes] + [(t, 0, dp, dg) for t, dp, dg in extra])
    series.append({"at": 0.0, "serving": desired, "extraPods": 0, "extraGpus": 0})
    for t, df, dp, dg in changes:
        serving_now, pods_now, gpus_now = serving_now + df, pods_now + dp, gpus_now + dg
        point = {"at": t, "serving": serving_now, "extraPods": pods_now, "extraGpus": gpus_now}
        if series[-1]["at"] == t:
            series[-1] = point
        else:
            series.append(point)
    if not instances:
        notes.append(
            f"no RecreateUpdateStarted/Completed event for revision {name} is left (events live 1h by default): "
            "nothing to draw"
        )
    return {
        "revision": int(found.get("revision") or 0),
        "name": name,
        "origin": (found.get("metadata") or {}).get("creationTimestamp"),
        "desired": desired,
        "duration": end,
        "complete": bool(instances) and all(i["completedAt"] is not None for i in instances),
        "floor": min(p["serving"] for p in series),
        "peakExtraPods": max(p["extraPods"] for p in series),
        "peakExtraGpus": max(p["extraGpus"] for p in series),
        "instances": instances,
        "series": series,
        "notes": notes,
    }


# -- drawings ------------------------------------------------------------------------------------------

WIDTH = 60
_GLYPH = {"Surge": "█", "CreatePods": "█", "Update": "█", "SurgeDrain": "▒", "Drain": "▒"}


def _clock(seconds: float) -> str:
    s = round(seconds)
    m, sec = divmod(s, 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else (f"{m}m{sec:02d}s" if m else f"{sec}s")


def render_text(tl: JSON, replica_name: str) -> str:
    """The roll for a terminal: a bar per Instance (``·`` waiting, ``█`` bringing the new pod up, ``▒``
    draining), the serving floor under them, and each Instance's steps in words."""
    span = max(float(tl["duration"]), 1.0)

    def col(t: float | None) -> int:
        return 0 if t is None else min(WIDTH - 1, int(t / span * (WIDTH - 1) + 0.5))

    head = (
        f"roll of inferencereplica.ome.io/{replica_name} to revision {tl['revision']} ({tl['name']}), "
        f"from {tl['origin']}: "
        + (f"{_clock(tl['duration'])}" if tl["complete"] else f"not complete after {_clock(tl['duration'])}")
        + f"; serving floor {tl['floor']}/{tl['desired']}; peak +{tl['peakExtraPods']} pod(s)"
        + (f", +{tl['peakExtraGpus']} GPU(s)" if tl["peakExtraGpus"] else "")
    )
    lines = [head]
    if not tl["instances"]:
        return "\n".join(lines + [f"note: {n}" for n in tl["notes"]]) + "\n"
    ruler = [" "] * WIDTH
    mid_label, end_label = _clock(span / 2), _clock(span)
    ruler[0] = "0"
    for i, ch in enumerate(mid_label):
        ruler[min(WIDTH - 1, WIDTH // 2 - len(mid_label) // 2 + i)] = ch
    for i, ch in enumerate(end_label):
        ruler[WIDTH - len(end_label) + i] = ch
    label_width = max(len(f"Instance {i['index']}") for i in tl["instances"])
    label_width = max(label_width, len("serving"))
    lines.append(" " * (label_width + 1) + "".join(ruler))
    for inst in tl["instances"]:
        bar = [" "] * WIDTH
        for w in inst["waits"]:
            for x in range(col(w["start"]), col(w["end"])):
                bar[x] = "·"
        for st in inst["steps"]:
            if st["start"] is None or st["end"] is None:
                continue
            for x in range(col(st["start"]), max(col(st["end"]), col(st["start"]) + 1)):
                bar[x] = _GLYPH.get(st["step"], "█")
        words = ", ".join(
            f"{st['step']} {_clock(st['start']) if st['start'] is not None else '?'}–"
            f"{_clock(st['end']) if st['end'] is not None else '?'}"
            for st in inst["steps"]
        )
        if inst["startupSeconds"] is not None:
            words += f" (pod start-up {_clock(inst['startupSeconds'])})"
        lines.append(f"{'Instance ' + str(inst['index']):<{label_width}} {''.join(bar)}  {words}")
    serving = [" "] * WIDTH
    points = tl["series"]
    for n, p in enumerate(points):
        stop = col(points[n + 1]["at"]) if n + 1 < len(points) else WIDTH
        for x in range(col(p["at"]), max(stop, col(p["at"]) + 1)):
            serving[x] = str(p["serving"]) if p["serving"] < 10 else "+"
    lines.append(f"{'serving':<{label_width}} {''.join(serving)}  Instances serving (floor {tl['floor']})")
    lines.append("legend: · waiting  █ new pod coming up (Surge, CreatePods)  ▒ draining (SurgeDrain, Drain)")
    lines += [f"note: {n}" for n in tl["notes"]]
    return "\n".join(lines) + "\n"


def to_drawing(tl: JSON, replica_name: str) -> Timeline:
    """The same roll as :class:`omereconcile.timeline.Timeline`, the drawing the forecast's review comment
    uses (``to_svg``/``to_mermaid``): a bar per step and per wait, the serving floor and extra GPUs."""
    steps: list[Step] = []
    for inst in tl["instances"]:
        for w in inst["waits"]:
            steps.append(Step(f"Instance {inst['index']} waits", w["start"], w["end"], "waits"))
        for st in inst["steps"]:
            if st["start"] is not None and st["end"] is not None:
                steps.append(Step(f"Instance {inst['index']} {st['step']}", st["start"], st["end"], "done"))
            elif st["start"] is not None:  # did not complete: drawn to the end, as a hold
                steps.append(
                    Step(f"Instance {inst['index']} {st['step']}", st["start"], tl["duration"], "held")
                )
    series = tuple(Point(p["at"], p["serving"], p["extraGpus"]) for p in tl["series"])
    return Timeline(f"Roll of {replica_name} to {tl['name']}", tuple(steps), series, tl["desired"])
