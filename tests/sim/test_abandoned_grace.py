"""The abandoned-replacement grace (Go ``abandonedReplacementDeleteOptions``): a surge replacement the
rollout abandons before it ever carried the serving gate is deleted with the operator's
``lifecycle.abandonedReplacementGrace`` instead of its own termination grace; a pod that carried the
gate, or no configured grace, keeps its own."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from omereconcile import actions as A
from omereconcile.settings import settings_from_configmap
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged

SURGE = "llama-pool-engine-0-default-1"


def _abandoned_delete(grace: timedelta) -> A.DeletePod:
    sim = Sim(delete_grace=30.0)
    sim.settings = replace(sim.settings, abandoned_replacement_grace=grace)
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(converged)
    sim.behaviour["vllm:v2"] = "never"  # the replacement never becomes ready: its gate is never written
    sim.image = "vllm:v2"
    for _ in range(4):
        driver.one_pass()
        sim.advance(1)
    assert SURGE in sim.pods
    assert sim.gate_of(SURGE) is None
    sim.image = "vllm:v3"  # the surge is superseded before its replacement ever served
    driver.run(lambda s: converged(s) and s.status["currentRevision"].endswith(sim.render().hash))  # type: ignore[union-attr]
    (delete,) = [a for _, a in applied(driver, "DeletePod") if a.name == SURGE][:1]  # type: ignore[attr-defined]
    assert isinstance(delete, A.DeletePod)
    return delete


@pytest.mark.parametrize(("grace", "sent"), [(timedelta(seconds=1.5), 2), (timedelta(0), None)])
def test_a_never_served_replacement_goes_with_the_configured_grace(
    grace: timedelta, sent: int | None
) -> None:
    assert _abandoned_delete(grace).grace_period_seconds == sent


def test_the_setting_is_read_from_the_lifecycle_block() -> None:
    settings = settings_from_configmap({"lifecycle": '{"abandonedReplacementGrace": "5s"}'})
    assert settings.abandoned_replacement_grace == timedelta(seconds=5)
    assert settings_from_configmap({}).abandoned_replacement_grace == timedelta(0)
