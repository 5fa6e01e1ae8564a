"""Budgets (01 §5.3): ``maxSurge`` for SurgeThenDrain, ``maxUnavailable`` for the other strategies.

A percentage is of the desired Instances and rounds UP, so any positive budget lets a one-Instance
replica move (the LWS #779 deadlock cannot happen). ``None`` is "no cap"; 0 is a named Budget hold.
"""

from __future__ import annotations

import re

__all__ = ["resolve_budget"]

# strconv.Atoi's grammar: an optional sign, then decimal digits.
_ATOI = re.compile(r"[+-]?[0-9]+")


def resolve_budget(value: int | str | None, desired: int) -> int | None:
    """``25%`` of 2 is 1, of 4 is 1, of 5 is 2; an int is itself; ``None`` stays None (uncapped).

    Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/budget.go`` @ 4dfb96b1
    ``PerComponentMaxSurgeBudget`` / ``PerComponentMaxUnavailableBudget`` (nil → ``BudgetNoLimit``),
    both resolving through sgl-project/ome ``pkg/utils/intstr.go`` @ 9df64e3e
    ``ScaledCountFromIntOrString(v, replicas, roundUp=true)``:

    - an integer is itself, floored at 0 and *not* capped (``maxSurge: 10`` on 3 Instances is 10);
    - a percentage is ``ceil(desired * pct / 100)``, floored at 0 and capped at ``desired``
      (``150%`` of 5 is 5);
    - a string that is not a percentage (``"1"``, ``"25.5%"``) is 0, as intstr's parser refuses it:
      the rollout then stops on the named ``Budget`` hold instead of the pass failing.
    """
    if value is None:
        return None
    if isinstance(value, int):
        return max(value, 0)
    text = value  # intstr does not trim: " 25%" is malformed too
    if not text.endswith("%") or not _ATOI.fullmatch(text[:-1]):
        return 0
    pct = int(text[:-1])
    # Go ceils float64(pct) * float64(total) / 100; the product is exact and a correctly rounded
    # quotient of an exact integer ratio is exact, so the integer ceil agrees everywhere.
    scaled = -((-desired * pct) // 100)
    if scaled < 0:
        return 0
    return min(scaled, desired) if desired >= 0 else scaled
