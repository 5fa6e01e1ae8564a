"""An unreachable admission webhook: the ``AdmissionUnavailable`` hold (01 §4.6; Go ``evidence``
``AdmissionUnavailable``, ``recordAdmissionWait``). The simulated API refuses pod writes the way the
API server fails closed on a webhook it cannot call, and records the wait with the executor's own
function (``planner/admission_hold.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.planner.admission_hold import (
    admission_unavailable_message,
    is_admission_unavailable,
    record_admission_wait,
)
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omerender import constants as c

TIMEOUT = timedelta(minutes=5)
SETTINGS = OperatorSettings(
    instance_ready_timeout=TIMEOUT,
    stuck_pod_grace_period=timedelta(seconds=60),
    update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
)
UNREACHABLE = (
    'Internal error occurred: failed calling webhook "pod-mutator.example.com": failed to call webhook: '
    'Post "https://mutator.example.svc:443/mutate?timeout=10s": dial tcp 10.0.0.1:443: connect: connection refused'
)


@dataclass
class OutageSim(Sim):
    admission_down: bool = False
    refusals: int = 0
    refused: list[str] = field(default_factory=list)  # the kinds of the refused writes, in order

    def apply(self, act: A.Action, replica_rv: str) -> None:
        drain = isinstance(act, A.SetServingGate) and act.admission_wait_index is not None
        if self.admission_down and (isinstance(act, A.CreatePod | A.PatchPodInPlace) or drain):
            self.refusals += 1
            self.refused.append(type(act).__name__)
            if isinstance(act, A.CreatePod):
                index: int | None = int(act.pod["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
            elif isinstance(act, A.SetServingGate):
                index = act.admission_wait_index
            else:
                index = act.index
            assert index is not None
            status, announce = record_admission_wait(self.status, index, act.name, UNREACHABLE, self.now)
            text = admission_unavailable_message("engine", index, UNREACHABLE)
            self.record_refusal(status, announce, "InstanceAdmissionUnavailable", text, UNREACHABLE)
        super().apply(act, replica_rv)


def _op(sim: Sim, index: int) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == index).get("operation") or {}


def _passes(sim: Sim, driver: Driver, span: timedelta) -> None:
    end = sim.now + span
    while sim.now < end:
        driver.one_pass()
        sim.advance(15)


def _announced(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == "InstanceAdmissionUnavailable"]


@pytest.mark.parametrize(
    ("status", "message", "want"),
    [
        (500, UNREACHABLE, True),
        (503, UNREACHABLE, True),
        (504, UNREACHABLE, True),
        (500, "etcdserver: request timed out", False),
        (503, "apiserver is overloaded", False),
        (422, UNREACHABLE, False),
        (403, UNREACHABLE, False),
    ],
)
def test_classification(status: int, message: str, want: bool) -> None:
    assert is_admission_unavailable(status, message) is want


def test_a_refused_scale_up_waits_parked_and_announced_once_then_completes() -> None:
    sim = OutageSim(settings=SETTINGS)
    sim.apply_replica(base_replica())
    driver = Driver(sim)
    driver.run(converged)
    sim.admission_down = True
    sim.update_spec(replicas=2)
    _passes(sim, driver, 6 * TIMEOUT)  # far past the InstanceReadyTimeout
    row = next(r for r in sim.rows() if r["index"] == 1)
    assert row["phase"] == "Creating"
    assert row["operation"]["waiting"] == "AdmissionUnavailable"
    assert "deadline" not in row["operation"]
    assert row["lastFailure"]["reason"] == "AdmissionUnavailable"
    assert "failed calling webhook" in row["lastFailure"]["message"]
    assert sim.refusals > 2
    assert _announced(sim) == [f"OMENative component=engine instance=1 waiting on admission: {UNREACHABLE}"]
    assert "InstanceFailed" not in sim.event_reasons()
    assert "retryBlocks" not in sim.status
    assert sim.serving_indices() == {0}
    sim.admission_down = False
    driver.run(converged)
    assert sim.serving_indices() == {0, 1}
    assert _op(sim, 1) == {}


@pytest.mark.parametrize(
    ("mark_not_ready", "refused"), [(True, "SetServingGate"), (False, "PatchPodInPlace")]
)
def test_a_refused_in_place_patch_waits_then_the_roll_finishes(mark_not_ready: bool, refused: str) -> None:
    sim = OutageSim(settings=SETTINGS)
    strategy = {"markNotReadyDuringLifecycle": mark_not_ready}
    lc = {"updateStrategy": {"type": "InPlaceIfPossible", "inPlaceUpdateStrategy": strategy}}
    sim.apply_replica(base_replica(lifecycle=lc))
    driver = Driver(sim)
    driver.run(converged)
    sim.admission_down = True
    sim.image = "vllm:v2"
    _passes(sim, driver, 2 * TIMEOUT)
    op = _op(sim, 0)
    assert (op["step"], op["waiting"]) == ("InPlace", "AdmissionUnavailable")
    assert "deadline" not in op
    assert len(_announced(sim)) == 1
    sim.admission_down = False
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    assert sim.pods["llama-pool-engine-0-default-0"].obj["spec"]["containers"][0]["image"] == "vllm:v2"
    # The first write of the step is what the outage refused: the drain that takes the pod out of
    # rotation (Go's MarkPodNotServing), or with no drain the patch itself.
    assert set(sim.refused) == {refused}
