"""A corrective edit while the bad revision's pod is still stuck: the corrected revision rolls and is
never held for the leftover's failure.

Go: ome-projects/ome ``workload/escalation/disposition.go`` @ 58a57f25 ``DisposeExpiredAttempt``'s
superseded-leftover guard (``DispositionSkippedSuperseded``; ours ``planner/steps.py``
``superseded_leftover``): a workload-caused pod on a known revision other than the attempt's target is
a leftover of the attempt before the edit, and neither fails the new attempt nor charges the
corrected revision. The leftover is removed by the retargeted step itself, so the roll does not wait
on it.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GRACE = 30  # stuckPodGracePeriod, seconds


@pytest.mark.parametrize("strategy", ["SurgeThenDrain", "RecreatePod", "InPlaceIfPossible"])
def test_a_corrected_revision_rolls_past_the_bad_revisions_stuck_pod(strategy: str) -> None:
    settings = OperatorSettings(
        stuck_pod_grace_period=timedelta(seconds=GRACE),
        update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
        instance_ready_timeout=timedelta(minutes=5),
    )
    sim = Sim(settings=settings)
    lifecycle = {"updateStrategy": {"type": strategy, "rollingUpdate": {"maxUnavailable": 1}}}
    sim.apply_replica(base_replica(replicas=1, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    for _ in range(GRACE - 1):  # the bad pod is stuck, one second short of the grace
        driver.one_pass()
        sim.advance(1.0)
    sim.image = "vllm:v3"
    fixed = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == fixed, limit=600)
    blocks = sim.status.get("retryBlocks") or []
    assert fixed not in [b["targetRevision"] for b in blocks]
    assert not [e for e in sim.events if e.event_reason == "InstanceFailed" and fixed in e.message]
    (row,) = sim.rows()
    assert (row["phase"], row["runningRevision"]) == ("Ready", fixed)
