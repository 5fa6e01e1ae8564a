"""Budgets (01 §5.3): ``maxSurge`` for SurgeThenDrain, ``maxUnavailable`` for the other strategies.

A percentage is of the desired Instances and rounds UP, so any positive budget lets a one-Instance
replica move (the LWS #779 deadlock cannot happen). ``None`` is "no cap"; 0 is a named Budget hold.
"""

from __future__ import annotations

import math

__all__ = ["resolve_budget"]


def resolve_budget(value: int | str | None, desired: int) -> int | None:
    """``25%`` of 2 is 1, of 4 is 1, of 5 is 2; an int is itself; ``None`` stays None (uncapped)."""
    if value is None:
        return None
    if isinstance(value, int):
        return max(value, 0)
    text = value.strip()
    if text.endswith("%"):
        pct = int(text[:-1])
        return max(math.ceil(desired * pct / 100), 0)
    return max(int(text), 0)
