"""The ``ome.io/serving`` gate as OME's Go controller writes it (``workload/podreadiness/readiness.go``).

The condition's message is a JSON list of ``{"userAgent", "key"}`` holds, one per writer that wants
the pod out of rotation, sorted by userAgent then key. Status False (reason ``NotReady``) while the
list is non-empty; True (reason ``Serving``, empty message) once it is empty. ``lastTransitionTime``
moves only when the status does (``transitionTime``), so adding or removing a hold on a pod already
held keeps the "NotReady since" instant.

- Taking a serving pod out of rotation adds the writer's hold (``AddNotReadyKey``); a pod already
  out of rotation is left alone, as Go's callers skip every pod that is not ``IsServing``.
- Putting a pod into rotation removes the Lifecycle hold (``MarkPodServing`` / ``RemoveNotReadyKey``),
  writing True/``Serving`` on a pod that never had the condition. The planner serves a pod only once
  it has released its own drain holds, so this removes those too (Go releases each explicitly on the
  paths that abandon a drain); a foreign writer's hold stays, and with it the pod stays out.
- A message that is not such a list is left alone: Go refuses to treat corruption as "no writers".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from omereconcile.world import PodView, format_time
from omerender import constants as c

__all__ = [
    "DELETE_DRAIN",
    "GANG_SURGE_DRAIN",
    "IN_PLACE",
    "LIFECYCLE",
    "RECREATE_DRAIN",
    "RESTART_DRAIN",
    "SURGE_DRAIN",
    "GateWrite",
    "Hold",
    "drain_hold",
    "held_by",
    "hold_write",
    "serve_write",
]

# Writer userAgents (Go podreadiness Writer* constants).
LIFECYCLE = "Lifecycle"
DELETE_DRAIN = "Delete-drain"
RECREATE_DRAIN = "Update-recreate-drain"
RESTART_DRAIN = "Restart-drain"
SURGE_DRAIN = "Update-surge-drain"
IN_PLACE = "Update-in-place"  # podreadiness.WriterUpdateInPlace, keyed updateDrainKey(index, incarnation)
# Not a userAgent: the gang surge's drain of its source, written by SURGE_DRAIN with Go's key
# ``gangSurgeDrainKey(sourceIdx)`` (``ops/update_gang.go``): ``gang-surge-source-<index>``.
GANG_SURGE_DRAIN = "Update-surge-drain/gang-source"
LIFECYCLE_KEY = "InstanceReady"
OWN_WRITERS = frozenset({LIFECYCLE, DELETE_DRAIN, RECREATE_DRAIN, RESTART_DRAIN, SURGE_DRAIN, IN_PLACE})

NOT_READY = "NotReady"
SERVING = "Serving"


@dataclass(frozen=True, slots=True, order=True)
class Hold:
    user_agent: str
    key: str


@dataclass(frozen=True, slots=True)
class GateWrite:
    """The whole condition to write: status, reason, message, lastTransitionTime."""

    status: bool
    reason: str
    message: str
    last_transition_time: str


def _parse(message: str) -> list[Hold] | None:
    if not message:
        return []
    try:
        raw = json.loads(message)
    except ValueError:
        return None
    if not isinstance(raw, list) or not all(isinstance(m, dict) for m in raw):
        return None
    return [Hold(str(m.get("userAgent", "")), str(m.get("key", ""))) for m in raw]


def _dump(holds: list[Hold]) -> str:
    """Go ``messageList.dump``: sorted, compact JSON, field order userAgent then key."""
    if not holds:
        return ""
    return json.dumps(
        [{"userAgent": h.user_agent, "key": h.key} for h in sorted(holds)], separators=(",", ":")
    )


def _since(pod: PodView, status: str, now: datetime) -> str:
    cond = pod.condition(c.SERVING_GATE)
    if cond is not None and cond.status == status and cond.last_transition_time is not None:
        return format_time(cond.last_transition_time)
    return format_time(now)


def held_by(pod: PodView, user_agent: str) -> bool:
    """Whether ``pod`` is out of rotation (gate not True) with ``user_agent`` among the writers its
    ``ome.io/serving`` message lists (an unreadable message lists none)."""
    cond = pod.condition(c.SERVING_GATE)
    if cond is None or cond.status == "True":
        return False
    return any(h.user_agent == user_agent for h in _parse(cond.message) or [])


def drain_hold(writer: str, pod: PodView) -> Hold:
    """The hold ``writer`` puts on ``pod``, keyed as Go keys it: ``Delete-drain`` on the Instance index
    (``deleteDrainKey``), ``Update-surge-drain`` on the index and the replacement's ordinal
    (``surgeDrainKey(index, newOrdinal)``, ``update-surge-drain-<index>-<ordinal>``),
    ``Update-recreate-drain`` on the index and incarnation (``ops/update.go`` ``updateDrainKey``:
    ``<index>-<incarnation>``; Go passes the planned Instance's incarnation; whether that is the old
    pod's or the bumped one on the draining pass was not traced, the pod's is used)."""
    index, incarnation, ordinal = pod.index, pod.incarnation, pod.ordinal or 0
    if writer == DELETE_DRAIN:
        return Hold(writer, str(index))
    if writer == SURGE_DRAIN:
        return Hold(writer, f"update-surge-drain-{index}-{1 - ordinal}")
    if writer == GANG_SURGE_DRAIN:
        return Hold(SURGE_DRAIN, f"gang-surge-source-{index}")
    if writer == RESTART_DRAIN:
        # ops/restart.go restartDrainKey(index, newIncarnation): the pod drained is the old one.
        return Hold(writer, f"{index}-{(incarnation or 0) + 1}")
    return Hold(writer, f"{index}-{incarnation}")


def hold_write(pod: PodView, hold: Hold, now: datetime) -> GateWrite | None:
    """Go ``MarkPodNotServing`` / ``AddNotReadyKey`` as its callers use it: only a serving pod (gate
    True) gets the hold; one already out of rotation is left as it is. None when nothing is written.

    One departure: a pod whose gate was never written gets the hold too (Go skips it), because the
    planner's drain proof waits for a written gate on a pod whose containers are ready."""
    cond = pod.condition(c.SERVING_GATE)
    if cond is not None and cond.status != "True":
        return None
    holds = _parse(cond.message if cond is not None else "")
    if holds is None:
        return None
    if hold not in holds:
        holds.append(hold)
    return GateWrite(False, NOT_READY, _dump(holds), _since(pod, "False", now))


def serve_write(pod: PodView, now: datetime) -> GateWrite | None:
    """Go ``MarkPodServing`` plus the release of the planner's own drain holds; None when nothing
    changes."""
    cond = pod.condition(c.SERVING_GATE)
    if cond is None:
        return GateWrite(True, SERVING, "", format_time(now))
    holds = _parse(cond.message)
    if holds is None:
        return None
    left = [h for h in holds if h.user_agent not in OWN_WRITERS]
    status = "False" if left else "True"
    if len(left) == len(holds) and cond.status == status:
        return None
    return GateWrite(not left, NOT_READY if left else SERVING, _dump(left), _since(pod, status, now))
