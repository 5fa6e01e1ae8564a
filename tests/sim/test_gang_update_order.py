"""A roll of gang Instances starts with the one whose leader left rotation (Go ``PodSetOutOfRotation``
reads a gang's routed members alone: its workers are never in the routing Service)."""

from __future__ import annotations

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged


def test_a_gang_whose_leader_left_rotation_is_replaced_first() -> None:
    """Instance 1's leader stops being ready while its worker stays Ready. Go's newest
    ``planUpdateSelection`` offers the budget to ``OutOfRotation`` starts first; before, the Ready
    worker hid the dark leader, Instance 0 was taken down first and serving fell to one Instance."""
    sim = Sim(workers=1)
    lifecycle = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}
    sim.apply_replica(base_replica(replicas=3, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 3)
    sim.pods["llama-pool-engine-1-leader-0"].behaviour = "never"  # the leader leaves rotation
    for _ in range(3):
        driver.one_pass()
        sim.advance(1)
    assert sim.serving_instances() == {0, 2}
    driver.floor = lambda s: 2  # no serving Instance is taken down while 1 is already out
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    started = [e.message.split()[2] for e in sim.events if e.event_reason == "RecreateUpdateStarted"]
    assert started == ["instance=1", "instance=0", "instance=2"]
