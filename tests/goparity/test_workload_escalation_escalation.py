"""OME's ``workload/escalation/escalation_test.go``: the failed-while-serving guard and deadline evidence.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/escalation/escalation_test.go`` @ 4dfb96b1 (the
listed version), over ``escalation/escalation.go`` ``podSetFullyServing`` (``query.PodSetFullyServing``)
and ``evidenceFor``. Ours: ``planner/admission.py`` ``_fully_serving``, the same Go function the
admission hold reads, and the deadline of :func:`omereconcile.planner.steps.check_failure`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.admission import _fully_serving
from omereconcile.planner.context import build_context
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.steps import check_failure
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.world import DesiredRevision, PodView

GO = "ome-projects/ome pkg/controller/v1beta1/workload/escalation/escalation_test.go @ 4dfb96b1"


def _serving_in_phase(name: str, phase: str, *, deleting: bool = False) -> PodView:
    """Go ``servingPodInPhase``: ContainersReady and in the serving rotation, in ``phase``."""
    meta: dict[str, Any] = {"name": name}
    conditions = [
        {"type": "ContainersReady", "status": "True"},
        {"type": "ome.io/serving", "status": "True"},
    ]
    if deleting:
        meta["deletionTimestamp"] = "2026-07-29T12:00:00Z"
        conditions = []
    return PodView.from_dict({"metadata": meta, "status": {"phase": phase, "conditions": conditions}})


SERVING = _serving_in_phase("serving", "Running")
CASES = [
    ("healthy set", [SERVING], 1, True),
    ("failed pod with stale healthy conditions", [_serving_in_phase("dead", "Failed")], 1, False),
    ("succeeded pod with stale healthy conditions", [_serving_in_phase("done", "Succeeded")], 1, False),
    (
        "serving sibling does not cover a failed member",
        [SERVING, _serving_in_phase("dead", "Failed")],
        1,
        False,
    ),
    (
        "deleting pod is still excluded, not disqualifying",
        [SERVING, _serving_in_phase("draining", "Running", deleting=True)],
        1,
        True,
    ),
]


@pytest.mark.parametrize(("name", "pods", "desired", "want"), CASES, ids=[c[0] for c in CASES])
def test_pod_set_fully_serving_terminal_pod_disqualifies(
    name: str, pods: list[PodView], desired: int, want: bool
) -> None:
    """Go: same file, TestPodSetFullyServing_TerminalPodDisqualifies, entry ``name``: a terminal pod is
    never health, whatever conditions it still carries; a Terminating pod is left out."""
    assert _fully_serving(pods, desired) is want


def test_evidence_for_deadline() -> None:
    """Go: same file, TestEvidenceFor_Deadline: a deadline a minute past is passed (the attempt fails),
    one a minute ahead is not (ours: ``check_failure`` with no pod, so no stuck evidence)."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)))
    sim.apply_replica(base_replica(replicas=1))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    outcomes = []
    for offset in (-timedelta(minutes=1), timedelta(minutes=1)):
        op = R.Operation(
            "update-0",
            R.OP_UPDATE,
            R.STEP_DRAIN,
            ctx.spec_revision,
            ctx.now - timedelta(hours=1),
            deadline=ctx.now + offset,
        )
        out = Out(ctx.now)
        _, failed = check_failure(
            ctx,
            R.Row(index=0, phase=R.UPDATING, operation=op),
            None,
            "p",
            out,
            RetryBook({}, "llama-demo/llama-pool", "engine"),
        )
        outcomes.append(
            failed is not None and failed.last_failure is not None and failed.last_failure["reason"]
        )
    assert outcomes == ["DeadlineExceeded", False]
