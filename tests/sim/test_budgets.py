"""Budget arithmetic (01 §5.3): percentages of desired Instances round up; unset is uncapped."""

from __future__ import annotations

import pytest

from omereconcile.planner.budgets import resolve_budget


@pytest.mark.parametrize(
    ("value", "desired", "expected"),
    [
        ("25%", 2, 1),
        ("25%", 4, 1),
        ("25%", 5, 2),
        ("25%", 1, 1),
        ("100%", 3, 3),
        ("0%", 3, 0),
        (0, 3, 0),
        (2, 3, 2),
        ("1", 3, 0),  # not a percentage: intstr refuses it, Go resolves 0 (a named Budget hold)
        ("150%", 5, 5),  # a percentage is capped at the Instances (ScaledCountFromIntOrString)
        (10, 3, 10),  # an integer is not
        (None, 3, None),
    ],
)
def test_resolve_budget(value: int | str | None, desired: int, expected: int | None) -> None:
    assert resolve_budget(value, desired) == expected
