"""OME's ``workload/ops/terminal_recycle_test.go``: a replacement pod the kubelet refused at admission.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/terminal_recycle_test.go`` @ 4dfb96b1 (15,473
characters, read whole; of its three stored versions ae683e3f (14,330, read whole) is an ``ops_test``
file whose tests ``terminal_recycle_external_test.go`` carries on, and is counted there), over
``ops/terminal_recycle.go``. A pod the kubelet refuses is dead on arrival (phase Failed, a pod-level
reason such as ``OutOfmemory``, no container started) and still holds its stable name; every site that
places a replacement (the per-pod surge, the recreate's rebuild, the gang surge) must delete it and
rebuild the name, keeping the kubelet's reason on ``lastFailure`` and blaming no revision. Ours: the
replica rolled in the simulated world, the replacement marked refused once it exists.
"""

from __future__ import annotations

from typing import Any

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_test.go @ 4dfb96b1"


def _ready(strategy: str, workers: int = 0) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.workers = workers
    lifecycle = {"updateStrategy": {"type": strategy, "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}}
    sim.apply_replica(base_replica(replicas=1, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _reject(sim: Sim, name: str, reason: str) -> str:
    """Go's ``rejectAtAdmission``: phase Failed, only a pod-level reason, no container status."""
    pod = sim.pods[name]
    pod.behaviour = "never"
    st = pod.obj["status"]
    st.update(phase="Failed", reason=reason, message="Pod was rejected: Node didn't have enough resource")
    st["conditions"] = []
    st["containerStatuses"] = []
    return str(pod.obj["metadata"]["uid"])


def _recycled(sim: Sim, driver: Driver, name: str, uid: str, row_index: int = 0) -> dict[str, Any]:
    """Passes until the refused pod is deleted; the row at that point."""
    for _ in range(20):
        driver.one_pass()
        deleted = [a for _, a in applied(driver, "DeletePod") if a.name == name and a.uid == uid]  # type: ignore[attr-defined]
        if deleted:
            return next(r for r in sim.rows() if r["index"] == row_index)
        sim.advance(0.5)
    raise AssertionError(f"{name} was never recycled: {sim.rows()}")


def test_surge_create_admission_rejected_target_is_recycled() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_test.go @ 4dfb96b1,
    TestSurgeCreate_AdmissionRejectedTargetIsRecycled: the surge's replacement is refused at
    admission: it is deleted so the name can be rebuilt, the row is not Failed, and ``lastFailure``
    carries the kubelet's reason."""
    sim, driver = _ready("SurgeThenDrain")
    sim.image = "vllm:v2"
    name = "llama-pool-engine-0-default-1"
    for _ in range(10):
        driver.one_pass()
        if name in sim.pods:
            break
        sim.advance(0.5)
    uid = _reject(sim, name, "UnexpectedAdmissionError")
    row = _recycled(sim, driver, name, uid)
    assert row["phase"] != "Failed", (GO, row)
    assert (row.get("lastFailure") or {}).get("reason") == "UnexpectedAdmissionError", (GO, row)


def test_recreate_phase_b_admission_rejected_target_is_recycled() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_test.go @ 4dfb96b1,
    TestRecreatePhaseB_AdmissionRejectedTargetIsRecycled: the recreate's rebuilt pod is refused
    (``OutOfnvidia.com/gpu``): it is deleted for a rebuild rather than waited on to the deadline, and
    ``lastFailure`` carries the kubelet's reason."""
    sim, driver = _ready("RecreatePod")
    sim.image = "vllm:v2"
    name = "llama-pool-engine-0-default-0"
    old_uid = sim.pods[name].obj["metadata"]["uid"]
    for _ in range(40):
        driver.one_pass()
        pod = sim.pods.get(name)
        if pod is not None and pod.obj["metadata"]["uid"] != old_uid:
            break
        sim.advance(0.5)
    uid = _reject(sim, name, "OutOfnvidia.com/gpu")
    row = _recycled(sim, driver, name, uid)
    assert (row.get("lastFailure") or {}).get("reason") == "OutOfnvidia.com/gpu", (GO, row)


def test_gang_surge_create_admission_rejected_target_is_recycled() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_recycle_test.go @ 4dfb96b1,
    TestGangSurgeCreate_AdmissionRejectedTargetIsRecycled: one member of the replacement gang is
    refused (``OutOfmemory``): it is deleted under the replacement's index while the bookkeeping (the
    kubelet's reason on ``lastFailure``, not Failed) lands on the source row, which owns the
    operation."""
    sim, driver = _ready("SurgeThenDrain", workers=1)
    sim.image = "vllm:v2"
    name = "llama-pool-engine-1-leader-0"
    for _ in range(10):
        driver.one_pass()
        if name in sim.pods:
            break
        sim.advance(0.5)
    uid = _reject(sim, name, "OutOfmemory")
    source = _recycled(sim, driver, name, uid)
    assert source["phase"] != "Failed", (GO, source)
    assert (source.get("lastFailure") or {}).get("reason") == "OutOfmemory", (GO, source)
