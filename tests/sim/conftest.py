"""Shared fixtures for the simulated-world planner tests."""

from __future__ import annotations

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver


@pytest.fixture
def sim() -> Sim:
    s = Sim()
    s.apply_replica(base_replica(replicas=1))
    return s


@pytest.fixture
def driver(sim: Sim) -> Driver:
    return Driver(sim)
