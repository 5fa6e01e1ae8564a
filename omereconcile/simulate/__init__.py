"""A simulated cluster for the rollout planner: in-memory API, kubelet, EndpointSlice controller, clock.

The planner's tests drive it, and ``omereconcile forecast`` runs the real planner against it.
"""
