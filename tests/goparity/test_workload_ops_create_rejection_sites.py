"""OME's ``workload/ops/create_rejection_sites_test.go``: a quota refusal at every create site waits.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/create_rejection_sites_test.go`` @ ae683e3f
(15,047 characters, the one stored version, read whole), over ``createMissingPods`` reached from
Restart's phase B, the per-pod surge and the gang surge. Go answers every Pod create with a
ResourceQuota refusal through a client interceptor; ours refuses creates in the simulated world the
way the API server's quota admission does and records the refusal with the executor's own function
(``planner/quota.py`` ``record_capacity_refusal``), as ``tests/sim/test_holds_quota.py`` does. A
refused site must wait (the operation keeps running with the refusal recorded), never fail the
Instance.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from omereconcile import actions as A
from omereconcile.planner.quota import record_capacity_refusal
from omereconcile.simulate.cluster import Conflict, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/create_rejection_sites_test.go @ ae683e3f"


@dataclass
class QuotaSim(Sim):
    """Go's ``rejectPodCreates`` with ``siteQuotaError``: while ``full``, every pod create is refused
    for quota (``exceeded quota: team-quota``), the refusal recorded on its row."""

    full: bool = False

    def apply(self, act: A.Action, replica_rv: str) -> None:
        if isinstance(act, A.CreatePod) and self.full:
            index = int(act.pod["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
            status, _ = record_capacity_refusal(self.status, index, self.now)
            if status is not None:
                assert self.replica is not None
                self.replica["status"] = status
                self._stamp(self.replica)
            raise Conflict(
                f'pods "{act.name}" is forbidden: exceeded quota: team-quota, requested: '
                "requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=56, limited: requests.nvidia.com/gpu=64"
            )
        super().apply(act, replica_rv)


def _ready(workers: int = 0) -> tuple[QuotaSim, Driver]:
    sim = QuotaSim(workers=workers)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _row(sim: Sim, index: int) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == index)


def _refused(sim: Sim, index: int) -> bool:
    rows = [r for r in sim.rows() if r["index"] == index]
    op = (rows[0].get("operation") or {}) if rows else {}
    return bool(op.get("capacityRefusedAt")) or op.get("waiting") == "QuotaExceeded"


def _passes_until(sim: Sim, driver: Driver, until: Any, limit: int = 240) -> None:
    for _ in range(limit):
        if until(sim):
            return
        with contextlib.suppress(Conflict):
            driver.one_pass()
        sim.advance(0.5)
    raise AssertionError("the condition never held")


def test_restart_phase_b_quota_exceeded_waits_without_failing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_rejection_sites_test.go @
    ae683e3f, TestRestartPhaseB_QuotaExceeded_WaitsWithoutFailing: a Restart's recreate hits the
    quota: the Instance stays Restarting (not Failed) with the refusal recorded on its operation, and
    the operation's reason (why the restart exists) survives the wait. Ours on a gang (the reconciler
    restarts multi-pod Instances): a member is deleted, the restart's creates are refused."""
    sim, driver = _ready(workers=1)
    sim.advance(30)
    sim.user_delete("llama-pool-engine-0-worker-0")
    _passes_until(sim, driver, lambda s: _row(s, 0)["phase"] == "Restarting")
    reason = (_row(sim, 0).get("operation") or {}).get("reason")
    assert reason
    sim.full = True
    _passes_until(sim, driver, lambda s: _refused(s, 0))
    for _ in range(4):
        with contextlib.suppress(Conflict):
            driver.one_pass()
        sim.advance(0.5)
    row = _row(sim, 0)
    assert row["phase"] == "Restarting", GO
    assert _refused(sim, 0), GO
    assert (row.get("operation") or {}).get("reason") == reason, GO


def test_surge_create_quota_exceeded_waits_without_failing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_rejection_sites_test.go @
    ae683e3f, TestSurgeCreate_QuotaExceeded_WaitsWithoutFailing: the per-pod surge's create is
    refused for quota: the source stays serving and the Instance keeps its Update (not Failed) with
    the refusal recorded."""
    sim, driver = _ready()
    sim.full = True
    sim.image = "vllm:v2"
    _passes_until(sim, driver, lambda s: _refused(s, 0))
    row = _row(sim, 0)
    assert row["phase"] == "Updating", GO
    assert (row.get("operation") or {}).get("type") == "Update"
    assert sim.gate_of("llama-pool-engine-0-default-0") == "True", GO


def test_gang_surge_create_quota_exceeded_waits_without_failing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/create_rejection_sites_test.go @
    ae683e3f, TestGangSurgeCreate_QuotaExceeded_WaitsWithoutFailing: the gang surge's replacement
    creates are refused: the replacement row keeps its marker (not Failed) with the refusal
    recorded, and the surge pin (``surgeIndex``) stays on the source's operation, not the marker's."""
    sim, driver = _ready(workers=1)
    sim.full = True
    sim.image = "vllm:v2"
    _passes_until(sim, driver, lambda s: any(r["index"] == 1 for r in s.rows()) and _refused(s, 1))
    marker = _row(sim, 1)
    assert marker["phase"] != "Failed", GO
    assert "surgeIndex" not in (marker.get("operation") or {}), GO
    source_op = _row(sim, 0).get("operation") or {}
    assert source_op.get("surgeIndex") == 1, GO
