"""A converged one-Instance replica rolling into a revision whose pods behave in a given way."""

from __future__ import annotations

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

__all__ = ["rolling_into"]


def rolling_into(behaviour: str, settings: OperatorSettings | None = None) -> tuple[Sim, Driver]:
    """Converged at v1 (floor 1 from then on); v2, now rendered, behaves as ``behaviour``."""
    sim = Sim(settings=settings) if settings is not None else Sim()
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(converged)
    driver.floor = lambda s: 1
    sim.behaviour["vllm:v2"] = behaviour
    sim.image = "vllm:v2"
    return sim, driver
