"""A ResourceQuota refusal of a pod create: the ``QuotaExceeded`` hold (01 §4.6, OME ``holds/quota.go``).

The simulated API refuses a create the way the API server's ResourceQuota admission does, and
records the refusal with the same function the executor uses (``planner/quota.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from omereconcile import actions as A
from omereconcile.planner.quota import quota_blocked_message, record_capacity_refusal
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Conflict, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import parse_time
from omerender import constants as c

TIMEOUT = timedelta(minutes=5)
SETTINGS = OperatorSettings(
    instance_ready_timeout=TIMEOUT,
    stuck_pod_grace_period=timedelta(seconds=60),
    update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
)


@dataclass
class QuotaSim(Sim):
    """A namespace whose ResourceQuota admits ``pod_quota`` pods (terminating ones still count)."""

    pod_quota: int | None = None
    refusals: int = 0

    def apply(self, act: A.Action, replica_rv: str) -> None:
        if isinstance(act, A.CreatePod) and self.pod_quota is not None and len(self.pods) >= self.pod_quota:
            self.refusals += 1
            used = len(self.pods) * 8
            message = (
                f'pods "{act.name}" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=8, '
                f"used: requests.nvidia.com/gpu={used}, limited: requests.nvidia.com/gpu={self.pod_quota * 8}"
            )
            index = int(act.pod["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
            status, announce = record_capacity_refusal(self.status, index, self.now)
            if status is not None:
                assert self.replica is not None
                self.replica["status"] = status
                self._stamp(self.replica)
                if announce:
                    text = quota_blocked_message("engine", index, message)
                    self.events.append(A.RecordEvent("Normal", "InstanceQuotaBlocked", text))
            raise Conflict(message)  # the pass ends on the refusal
        super().apply(act, replica_rv)


def _row(sim: Sim, index: int) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == index)


def _op(sim: Sim, index: int) -> dict[str, Any]:
    return _row(sim, index).get("operation") or {}


def _blocked_events(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "InstanceQuotaBlocked"]


def _blocked_until(sim: Sim, driver: Driver, until: Any, limit: float = 120) -> None:
    """Passes until ``until(sim)``: a refused create is retried on every pass, so the driver's quiet
    point never comes while the quota is full."""
    end = sim.now + timedelta(seconds=limit)
    while not until(sim):
        assert sim.now < end, "the condition never held"
        driver.one_pass()
        sim.advance(5)


def _passes(sim: Sim, driver: Driver, span: timedelta) -> None:
    end = sim.now + span
    while sim.now < end:
        driver.one_pass()
        sim.advance(15)


def _converged_one(**spec: Any) -> tuple[QuotaSim, Driver]:
    sim = QuotaSim(settings=SETTINGS)
    sim.apply_replica(base_replica(**spec))
    driver = Driver(sim)
    driver.run(converged)
    return sim, driver


def test_a_refused_scale_up_waits_with_its_clock_parked_then_completes_when_quota_frees() -> None:
    sim, driver = _converged_one()
    sim.pod_quota = 1
    sim.update_spec(replicas=2)
    _blocked_until(sim, driver, lambda s: len(s.rows()) == 2 and _op(s, 1).get("waiting") == "QuotaExceeded")
    op = _op(sim, 1)
    assert "deadline" not in op
    assert "capacityRefusedAt" in op
    assert _row(sim, 1).get("lastFailure") is None  # a wait is not a failure
    # Far past the InstanceReadyTimeout: still waiting, announced once, the serving Instance untouched.
    _passes(sim, driver, 6 * TIMEOUT)
    assert _row(sim, 1)["phase"] == "Creating"
    assert _op(sim, 1)["waiting"] == "QuotaExceeded"
    assert sim.refusals > 2
    (blocked,) = _blocked_events(sim)
    assert blocked.startswith("OMENative component=engine instance=1 waiting on capacity: pods ")
    assert "exceeded quota" in blocked
    assert "InstanceFailed" not in sim.event_reasons()
    assert "retryBlocks" not in sim.status
    assert sim.serving_indices() == {0}
    # The quota is raised: the create goes through, the record goes, the clock restarts from there.
    sim.pod_quota = None
    _blocked_until(sim, driver, lambda s: "capacityRefusedAt" not in _op(s, 1))
    released = sim.now
    op = _op(sim, 1)
    assert op.get("waiting") is None
    deadline = parse_time(op["deadline"])
    assert deadline is not None
    # A full window from the pass that saw the create go through (the last pass, 5 s before; status keeps whole seconds).
    assert released - timedelta(seconds=6) + TIMEOUT <= deadline <= released + TIMEOUT
    driver.run(converged)
    assert sim.serving_indices() == {0, 1}
    assert len(_blocked_events(sim)) == 1


def test_a_refused_surge_holds_while_the_old_pod_serves_then_rolls() -> None:
    sim, driver = _converged_one()
    driver.floor = lambda s: 1
    sim.pod_quota = 1
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    _blocked_until(sim, driver, lambda s: _op(s, 0).get("waiting") == "QuotaExceeded")
    _passes(sim, driver, 3 * TIMEOUT)
    assert (_row(sim, 0)["phase"], _op(sim, 0)["step"]) == ("Updating", "Surge")
    assert sim.serving_indices() == {0}
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]
    assert len(_blocked_events(sim)) == 1
    sim.pod_quota = 2
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    assert sim.live_pods() == ["llama-pool-engine-0-default-1"]


def test_a_second_episode_is_announced_again() -> None:
    sim, driver = _converged_one()
    sim.pod_quota = 1
    sim.update_spec(replicas=2)
    _blocked_until(sim, driver, lambda s: len(s.rows()) == 2 and _op(s, 1).get("waiting") == "QuotaExceeded")
    sim.pod_quota = None
    driver.run(converged)
    sim.pod_quota = 2
    sim.update_spec(replicas=3)
    _blocked_until(sim, driver, lambda s: len(s.rows()) == 3 and _op(s, 2).get("waiting") == "QuotaExceeded")
    assert [m.split(" waiting")[0] for m in _blocked_events(sim)] == [
        "OMENative component=engine instance=1",
        "OMENative component=engine instance=2",
    ]


def _quota_scenario(crash_at: frozenset[int]) -> tuple[QuotaSim, Driver]:
    """A refused scale-up, the quota raised, the Instance up: the controller dies at ``crash_at``."""
    sim = QuotaSim(settings=SETTINGS)
    sim.apply_replica(base_replica())
    driver = Driver(sim, crash_at=crash_at)
    driver.run(converged)
    sim.pod_quota = 1
    sim.update_spec(replicas=2)
    _passes(sim, driver, 2 * TIMEOUT)
    sim.pod_quota = None
    driver.run(converged)
    return sim, driver


def test_a_controller_crash_anywhere_in_a_quota_episode_changes_nothing() -> None:
    """Crash after every action: the same end, one announcement, no failure, nothing created twice."""
    clean, driver = _quota_scenario(frozenset())
    for n in range(1, driver.actions_applied + 1):
        sim, _ = _quota_scenario(frozenset({n}))
        assert sim.violations == []
        assert sim.serving_indices() == {0, 1}
        assert _blocked_events(sim) == _blocked_events(clean)
        assert "InstanceFailed" not in sim.event_reasons()


def test_a_gang_member_refused_by_quota_waits_while_its_leader_cannot_schedule() -> None:
    """The leader of a gang is created but cannot be placed alone (the gang scheduler waits for its
    worker); the worker is refused by the quota. The refusal is the gang's wait: it stays recorded
    until the worker exists (not cleared because the leader does), so the Instance reports
    ``QuotaExceeded`` without a status write per pass, and comes up whole once the quota frees."""
    sim = QuotaSim(settings=SETTINGS, workers=1, pod_quota=1)
    sim.behaviour["vllm:v1"] = "unschedulable"  # the leader, alone
    sim.worker_behaviour["vllm:v1"] = "ok"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _blocked_until(sim, driver, lambda s: bool(s.rows()) and _op(s, 0).get("waiting") == "QuotaExceeded")
    writes = len([p for p in driver.plans if any(isinstance(a, A.WriteStatus) for a in p.actions)])
    _passes(sim, driver, timedelta(minutes=2))
    assert _op(sim, 0).get("waiting") == "QuotaExceeded"
    assert "deadline" not in _op(sim, 0)
    assert len([p for p in driver.plans if any(isinstance(a, A.WriteStatus) for a in p.actions)]) == writes
    assert len(_blocked_events(sim)) == 1
    sim.pod_quota = None
    sim.pods["llama-pool-engine-0-leader-0"].behaviour = "ok"  # its worker exists: the gang is placed
    driver.run(converged)
    assert _row(sim, 0)["phase"] == "Ready"
    assert sorted(sim.live_pods()) == ["llama-pool-engine-0-leader-0", "llama-pool-engine-0-worker-0"]
