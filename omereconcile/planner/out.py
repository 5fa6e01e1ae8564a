"""The accumulator one pass writes into: pod actions, events, and the instants it must wake at."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from omereconcile.actions import Action, DeletePod, RecordEvent, SetServingGate
from omereconcile.planner.gate import DELETE_DRAIN, drain_hold, hold_write, serve_write
from omereconcile.world import PodView

__all__ = ["JUST_PAST", "Out"]

# Status times have whole seconds: the first pass strictly past an instant (Go's ``now.After(t)``) is
# one second after it.
JUST_PAST = timedelta(seconds=1)


@dataclass
class Out:
    now: datetime
    actions: list[Action] = field(default_factory=list)
    events: list[RecordEvent] = field(default_factory=list)
    wakes: list[datetime] = field(default_factory=list)
    drain_holds: list[str] = field(default_factory=list)  # drains a Budget floor withheld this pass
    # Once-only Warnings awaiting the row that records them: (Instance index, the event in ``events``).
    announcements: list[tuple[int, RecordEvent]] = field(default_factory=list)

    def event(self, type_: Literal["Normal", "Warning"], reason: str, message: str) -> None:
        self.events.append(RecordEvent(type=type_, event_reason=reason, message=message))

    def announce(self, index: int, reason: str, message: str) -> None:
        """A Warning said once per episode of Instance ``index`` (Go ``status.Announce``): kept only
        if the row the pass writes records it, on its ``announced`` record, for the first time
        (``planner/status.py`` :func:`~omereconcile.planner.status.settle_announcements`)."""
        event = RecordEvent(type="Warning", event_reason=reason, message=message)
        self.events.append(event)
        self.announcements.append((index, event))

    def wake(self, at: datetime | None) -> None:
        if at is not None and at > self.now:
            self.wakes.append(at)

    def wake_past(self, at: datetime | None) -> None:
        """Wake on the first pass strictly past ``at``: a deadline or a grace Go tests with
        ``now.After``, which nothing expires at the instant itself (:data:`JUST_PAST`)."""
        self.wake(None if at is None else at + JUST_PAST)

    def delete(self, pod: PodView, why: str, grace: int | None = None) -> None:
        if pod.terminating:
            return  # never delete twice: a terminating pod is already on its way out
        self.actions.append(DeletePod(pod.name, pod.uid, pod.resource_version, why, grace))

    def gate(
        self,
        pod: PodView,
        value: bool,
        why: str,
        writer: str = DELETE_DRAIN,
        admission_wait: int | None = None,
    ) -> None:
        """Serve the pod, or hold it out of rotation as ``writer`` (``planner/gate.py``). A pod taken
        out to be deleted is held by ``Delete-drain``, as Go's scale-down and its unrouting of a
        superseded pod do; the surge and recreate drains name their own writer. ``admission_wait``: the
        Instance whose row records a refusal for an unreachable admission webhook (the in-place drain)."""
        if pod.terminating:
            return
        write = serve_write(pod, self.now) if value else hold_write(pod, drain_hold(writer, pod), self.now)
        if write is None:
            return
        self.actions.append(
            SetServingGate(
                pod.name,
                pod.uid,
                pod.resource_version,
                write.status,
                why,
                condition_reason=write.reason,
                message=write.message,
                last_transition_time=write.last_transition_time,
                admission_wait_index=admission_wait,
            )
        )

    def absorb(self, other: Out) -> None:
        """Append what ``other`` gathered (one Instance's share of the pass) after what this holds."""
        self.actions.extend(other.actions)
        self.events.extend(other.events)
        self.wakes.extend(other.wakes)
        self.drain_holds.extend(other.drain_holds)
        self.announcements.extend(other.announcements)

    def requeue_after(self) -> float | None:
        if not self.wakes:
            return None
        return max((min(self.wakes) - self.now).total_seconds(), 0.0)
