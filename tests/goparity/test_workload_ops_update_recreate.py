"""OME's ``workload/ops/update_recreate_test.go``: when a RecreatePod roll promotes its Instance.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_recreate_test.go`` @ 4dfb96b1
(14,222 characters, the stored version, read whole), over ``ops/update_recreate.go``
``recreateUpdate``: phase A drains and deletes the old incarnation, phase B creates the bumped one,
phase C promotes once the new pod is serving, PodReady and Available (``minReadySeconds``). Go seeds a
mid-recreate row against a fake client; ours rolls a single-pod replica under ``RecreatePod`` in the
simulated world, pass by pass half a second apart, and watches the row and the pods.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import parse_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1"
POD = "llama-pool-engine-0-default-0"


def _rolling(**spec: Any) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, lifecycle={"updateStrategy": {"type": "RecreatePod"}}, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    return sim, driver


def _incarnation(sim: Sim) -> int | None:
    pod = sim.pods.get(POD)
    return int(pod.obj["metadata"]["labels"]["ome.io/instance-incarnation"]) if pod is not None else None


def _pod_ready_since(sim: Sim) -> datetime | None:
    pod = sim.pods.get(POD)
    for cond in pod.obj["status"].get("conditions", []) if pod is not None else []:
        if cond["type"] == "Ready" and cond["status"] == "True":
            return parse_time(cond.get("lastTransitionTime"))
    return None


def _promoted(sim: Sim) -> bool:
    row = sim.rows()[0]
    return row["phase"] == "Ready" and row.get("incarnation") == 2


def _walk(sim: Sim, driver: Driver) -> list[tuple[datetime, bool, int | None, bool, datetime | None]]:
    """(time, promoted, pod incarnation, gate set, pod Ready since) after each pass until promotion."""
    seen = []
    for _ in range(400):
        driver.one_pass()
        seen.append(
            (sim.now, _promoted(sim), _incarnation(sim), sim.gate_of(POD) == "True", _pod_ready_since(sim))
        )
        if seen[-1][1]:
            return seen
        sim.advance(0.5)
    raise AssertionError("the recreate never promoted")


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("unready", id="serving gate set but PodReady not observed"),
        pytest.param("ready", id="PodReady observed"),
    ],
)
def test_waits_for_pod_ready_after_enabling_serving(entry: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateUpdate_WaitsForPodReadyAfterEnablingServing (each entry): with the old pod gone and
    the recreated pod ContainersReady with its serving gate set, promotion waits for the kubelet to
    fold the gate into PodReady (promotion releases the unavailability slot); once PodReady is
    observed the Instance is promoted Ready."""
    sim, driver = _rolling()
    seen = _walk(sim, driver)
    window = [s for s in seen if s[2] == 2 and s[3] and s[4] is None]
    if entry == "unready":
        assert window, "the run never showed the gated-but-not-PodReady window"
        assert not any(promoted for _, promoted, *_ in window), GO
    else:
        last = seen[-1]
        assert last[1], GO
        assert last[4] is not None, (GO, "promoted without PodReady")


def test_promotion_waits_for_min_ready_seconds() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateUpdate_PromotionWaitsForMinReadySeconds: the recreated pod serving and PodReady is
    not promoted inside ``minReadySeconds`` (20 s); it is once the pod has been Ready that long."""
    sim, driver = _rolling(minReadySeconds=20)
    seen = _walk(sim, driver)
    ready_since = seen[-1][4]
    assert ready_since is not None
    inside = [s for s in seen if s[4] is not None and (s[0] - s[4]).total_seconds() < 20]
    assert inside, "no pass ran inside the window"
    assert not any(promoted for _, promoted, *_ in inside), GO
    assert (seen[-1][0] - ready_since).total_seconds() >= 20, GO


def test_ready_old_incarnation_pod_is_not_the_promote_signal() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateDrain_ReadyOldIncarnationPodIsNotThePromoteSignal: the old incarnation's pod, PodReady
    and serving when the roll starts, is what phase A drains and deletes, never evidence the roll is
    done: no pass promotes while it stands, and it is deleted."""
    sim, driver = _rolling()
    assert _incarnation(sim) == 1
    assert _pod_ready_since(sim) is not None
    seen = _walk(sim, driver)
    assert not any(promoted for _, promoted, inc, *_ in seen if inc == 1), GO
    assert seen[-1][2] == 2, GO
