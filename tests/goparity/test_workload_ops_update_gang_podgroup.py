"""OME's ``workload/ops/update_gang_podgroup_test.go``: a gang surge's PodGroup and its source drain.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_gang_podgroup_test.go`` @ 9177c1b0
(9,348 characters, the one stored version, read whole), over ``ops/update_gang.go`` (``surgeUpdate``
for a gang, with ``gang.EnsureSurgePodGroup`` wired in). Go seeds a gang surge in flight against a
fake client and runs the surge pass; ours rolls a one-Instance gang (leader and one worker, gang
scheduling on) by SurgeThenDrain in the simulated world and reads the applied actions in order
(``Driver.log``) and the pods' readiness pass by pass.
"""

from __future__ import annotations

from typing import Any

from omereconcile.actions import CreatePod, CreatePodGroup
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_podgroup_test.go @ 9177c1b0"
GROUP = "llama-pool-engine-1"
SOURCE = ("llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0")
REPLACEMENT = ("llama-pool-engine-1-leader-0", "llama-pool-engine-1-worker-0")


def _rolling_gang() -> tuple[Sim, Driver]:
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 1)
    sim.image = "vllm:v2"
    return sim, driver


def _pod_ready(sim: Sim, name: str) -> bool:
    pod = sim.pods.get(name)
    conds: list[dict[str, Any]] = pod.obj["status"].get("conditions", []) if pod is not None else []
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conds)


def test_ensures_pod_group_before_surge_pods() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_podgroup_test.go @
    9177c1b0, TestGangSurgeUpdate_EnsuresPodGroupBeforeSurgePods: the surge gang's PodGroup exists
    before any of its pods is created (a gang scheduler rejects a pod whose group is missing), its
    ``minMember`` covers the whole gang (2). Not asserted here: the pod-group label on each pod (the
    pod builder's, ``omerender.stamps.materialize_pod``, which the simulated world stands in for) and
    Go's topology-key annotation (no topology key in this replica)."""
    sim, driver = _rolling_gang()
    driver.run(lambda s: all(n in s.pods for n in REPLACEMENT))
    log = [a for _, a in driver.log]
    group_at = next(i for i, a in enumerate(log) if isinstance(a, CreatePodGroup) and a.name == GROUP)
    pods_at = [i for i, a in enumerate(log) if isinstance(a, CreatePod) and a.name in REPLACEMENT]
    assert pods_at, GO
    assert group_at < min(pods_at), GO
    assert sim.pod_groups[GROUP]["spec"]["minMember"] == 2


def test_holds_source_drain_until_replacement_pod_ready() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_podgroup_test.go @
    9177c1b0, TestGangSurgeUpdate_HoldsSourceDrainUntilReplacementPodReady: the source gang leaves
    rotation only once every replacement pod is PodReady (the serving gate ANDed in by the kubelet),
    not merely ContainersReady with its gate set: passes run while the replacement is serving-gated but
    not PodReady keep the source serving, and the first pass that takes the source out finds the
    whole replacement PodReady."""
    sim, driver = _rolling_gang()
    window_seen = False
    for _ in range(400):
        driver.one_pass()
        replacement_ready = all(_pod_ready(sim, n) for n in REPLACEMENT)
        gated = all(n in sim.pods and sim.gate_of(n) == "True" for n in REPLACEMENT)
        source_out = any(n in sim.pods and sim.gate_of(n) == "False" for n in SOURCE)
        if gated and not replacement_ready:
            window_seen = True
            assert not source_out, (GO, "the source drained before its replacement was PodReady")
        if source_out:
            assert replacement_ready, GO
            break
        sim.advance(0.5)
    else:
        raise AssertionError("the source never left rotation")
    assert window_seen, "the run never showed the gated-but-not-PodReady window"
