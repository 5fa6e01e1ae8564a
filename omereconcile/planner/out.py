"""The accumulator one pass writes into: pod actions, events, and the instants it must wake at."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from omereconcile.actions import Action, DeletePod, RecordEvent, SetServingGate
from omereconcile.world import PodView

__all__ = ["Out"]


@dataclass
class Out:
    now: datetime
    actions: list[Action] = field(default_factory=list)
    events: list[RecordEvent] = field(default_factory=list)
    wakes: list[datetime] = field(default_factory=list)

    def event(self, type_: Literal["Normal", "Warning"], reason: str, message: str) -> None:
        self.events.append(RecordEvent(type=type_, event_reason=reason, message=message))

    def wake(self, at: datetime | None) -> None:
        if at is not None and at > self.now:
            self.wakes.append(at)

    def delete(self, pod: PodView, why: str) -> None:
        if pod.terminating:
            return  # never delete twice: a terminating pod is already on its way out
        self.actions.append(DeletePod(pod.name, pod.uid, pod.resource_version, why))

    def gate(self, pod: PodView, value: bool, why: str) -> None:
        want = "True" if value else "False"
        if pod.terminating or pod.gate == want:
            return
        self.actions.append(SetServingGate(pod.name, pod.uid, pod.resource_version, value, why))

    def requeue_after(self) -> float | None:
        if not self.wakes:
            return None
        return max((min(self.wakes) - self.now).total_seconds(), 0.0)
