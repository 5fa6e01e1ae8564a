"""The rollout forecast: what a catalog change costs in pods, GPUs, serving capacity and time.

It runs the real planner (``omereconcile.planner.plan``) through the change in the simulated cluster
(:mod:`omereconcile.simulate`) on a simulated clock; see ``docs/forecast.md``.
"""

from omereconcile.forecast.build import Forecast, NotForecast, forecast
from omereconcile.forecast.inputs import (
    STARTUP_ANNOTATION,
    ForecastInputError,
    capacity_from_nodes,
    parse_capacity,
    parse_duration,
    sizes_from_dump,
)
from omereconcile.forecast.report import headline, to_json, to_markdown, to_text
from omereconcile.forecast.run import Hold, ReplicaForecast, Totals
from omereconcile.forecast.section import (
    GroupCost,
    forecast_section,
    group_costs,
    groups_by_runtime,
    timeline,
)

__all__ = [
    "STARTUP_ANNOTATION",
    "Forecast",
    "ForecastInputError",
    "GroupCost",
    "Hold",
    "NotForecast",
    "ReplicaForecast",
    "Totals",
    "capacity_from_nodes",
    "forecast",
    "forecast_section",
    "group_costs",
    "groups_by_runtime",
    "headline",
    "parse_capacity",
    "parse_duration",
    "sizes_from_dump",
    "timeline",
    "to_json",
    "to_markdown",
    "to_text",
]
