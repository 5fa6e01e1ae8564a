"""A pod create the API server refuses as Invalid (422) fails the Instance at once (``InvalidPodSpec``).

Go (ome-projects/ome @ ae683e3f): ``workload/ops/create.go`` ``createMissingPods`` classifies the
refused create (``evidence/rejection.go`` ``ClassifyAPIError``) and ``ops/create_rejection.go``
``disposeRejectedAttempt`` fails the attempt, charges the revision's retry block and warns
``InstanceRejected``. The simulated API refuses the image in ``refuse_create`` and records the 422 on
the row with the executor's own function (``planner/rejection.py`` ``record_rejection``).
"""

from __future__ import annotations

from datetime import timedelta

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

SETTINGS = OperatorSettings(
    instance_ready_timeout=timedelta(minutes=30),
    update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
)


def _rejected(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "InstanceRejected"]


def test_a_create_refused_as_invalid_fails_at_once_and_a_corrected_image_recovers() -> None:
    """A fresh replica whose pod the API server refuses: within a few passes (not at the 30-minute
    deadline: six passes, six seconds) Instance 0 is Failed with the API server's words, the revision is held for retry, one
    InstanceRejected Warning names the pod, and no pod was created. Publishing a corrected image
    rolls the Instance to Ready."""
    sim = Sim(settings=SETTINGS, refuse_create={"vllm:bad"})
    sim.image = "vllm:bad"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    for _ in range(6):
        driver.one_pass()
        sim.advance(1)
    row = sim.rows()[0]
    assert (row["phase"], row.get("operation")) == ("Failed", None)
    failure = row.get("lastFailure") or {}
    assert failure.get("reason") == "InvalidPodSpec"
    assert "vllm:bad" in failure.get("message", "")
    assert [b["targetRevision"] for b in sim.status.get("retryBlocks") or []] == [
        sim.status["updateRevision"]
    ]
    assert sim.pods == {}
    events = _rejected(sim)
    assert len(events) == 1
    assert "llama-pool-engine-0-default-0" in events[0]
    assert "held for retry" in events[0]
    for _ in range(5):  # the held revision is not recreated pass after pass
        driver.one_pass()
        sim.advance(10)
    assert len(_rejected(sim)) == 1
    assert sim.pods == {}

    sim.image = "vllm:v2"  # the runtime publishes a corrected template
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    assert sim.rows()[0]["phase"] == "Ready"
    assert sim.violations == []
