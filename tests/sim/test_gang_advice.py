"""``MaybeNoGangScheduler`` (Go ``workload/podgroup`` ``maybeWarnNoGangScheduler``): a Warning when a
PodGroup is created under a template whose effective ``schedulerName`` is unset or the default."""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim
from omereconcile.simulate.driver import Driver, converged


def _gang(driver: Driver, scheduler: str | None) -> Sim:
    sim = driver.sim
    sim.workers = 1
    spec: dict[str, Any] = {"containers": [{"name": "ome-container", "image": "vllm:v1"}]}
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    sim.update_spec(replicas=2, runners=[{"name": "leader", "size": 1, "template": {"spec": spec}}])
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    return sim


def _warnings(sim: Sim) -> list[tuple[str, str]]:
    return [(e.type, e.message) for e in sim.events if e.event_reason == "MaybeNoGangScheduler"]


@pytest.mark.parametrize("scheduler", [None, "default-scheduler"])
def test_a_default_scheduler_gang_is_warned_once(driver: Driver, scheduler: str | None) -> None:
    sim = _gang(driver, scheduler)
    shown = scheduler or ""
    assert _warnings(sim) == [
        (
            "Warning",
            f"OMENative component=engine created scheduler-plugins PodGroup objects but pod template's "
            f'spec.schedulerName is "{shown}" (default kube-scheduler does not enforce PodGroup gang); set '
            "runtime.spec.schedulerName to a gang-aware scheduler (e.g. scheduler-plugins-scheduler) or "
            "install scheduler-plugins as a plugin in the default scheduler",
        )
    ]


def test_a_named_scheduler_is_trusted(driver: Driver) -> None:
    sim = _gang(driver, "scheduler-plugins-scheduler")
    assert _warnings(sim) == []


def test_single_pod_replicas_create_no_pod_group_and_get_no_warning(sim: Sim, driver: Driver) -> None:
    driver.run(converged)
    assert _warnings(sim) == []
