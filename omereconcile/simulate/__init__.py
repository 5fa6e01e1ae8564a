"""A simulated cluster for the rollout planner: in-memory API, kubelet, EndpointSlice controller, clock.

The planner's tests drive it, and ``omereconcile forecast`` runs the real planner against it.
"""

from omereconcile.simulate.cluster import Conflict, Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, converged, ready

__all__ = ["Conflict", "Driver", "InvariantError", "Sim", "SimPod", "base_replica", "converged", "ready"]
