"""OME's ``workload/ops/gangsplit_test.go``: the ``GangSplitRisk`` advisory.

Go: sgl-project/ome ``pkg/controller/v1beta1/workload/ops/gangsplit_test.go`` @ eb2686d2 (one stored
version, read whole; ``ops/gangsplit.go`` @ bb4fa1ee), and the newest ome-projects/ome text of the same
tests (an ``ops`` test file of 63,418 characters whose path and commit the index does not name, read
from 57,000 to its end), which is followed: ``maybeWarnGangSplitRisk`` moved into ``ops/create.go``
(the newest stored text, 53,576 characters) and announces once per episode on the Instance's row, so
``_DedupPerComponent`` became ``_DedupPerRow``. Ours: ``planner/gang_advice.py`` ``gang_split_risk`` on
the pod ``omerender.stamps.materialize_pod`` renders (Go's ``renderForSplitTest``; the builders are
``test_workload_ops_render.py``'s), and ``maybe_gang_split_risk`` in the sim, whose passes create the
pods (the sim's pod carries the template's affinity, ``Sim.affinity``; it has no topology key).
``TestMaybeWarnGangSplitRisk_NilSafe`` (a nil recorder or event target) is not mappable.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from omereconcile.actions import CreatePod
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang_advice import GANG_SPLIT_RISK, gang_split_risk, maybe_gang_split_risk
from omereconcile.planner.out import Out
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision
from tests.goparity.reconciler_world import one_replica_ctx
from tests.goparity.test_workload_ops_render import TOPOLOGY, isvc, multi, pod_spec, render, single

GO = "sgl-project/ome pkg/controller/v1beta1/workload/ops/gangsplit_test.go @ eb2686d2"
USER_TERM = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}}}
USER_AFFINITY = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [USER_TERM]}}


def _gang_ctx(workers: int) -> Ctx:
    """A pass over an Instance of a leader and ``workers`` workers (Go's ``multiPodPlan``)."""
    slots = (("leader", 0), *(("worker", i) for i in range(workers)))
    return replace(one_replica_ctx(), gang_slots=slots)


def _gang_pod(runner: str, **spec: Any) -> dict[str, Any]:
    template = pod_spec(affinity=USER_AFFINITY) if spec.pop("user_affinity", False) else None
    return render(isvc(**spec), multi(3, template), runner)


@pytest.mark.parametrize(
    ("entry", "pod", "gang", "warn"),
    [
        ("gang worker, no key, no user affinity", lambda: _gang_pod("worker"), True, True),
        ("gang worker, resolved topologyKey", lambda: _gang_pod("worker", topologyKey=TOPOLOGY), True, False),
        ("gang worker, user podAffinity", lambda: _gang_pod("worker", user_affinity=True), True, False),
        ("gang leader (anchor)", lambda: _gang_pod("leader"), True, False),
        ("single-pod default", lambda: render(isvc(), single()), False, False),
    ],
)
def test_maybe_warn_gang_split_risk(entry: str, pod: Any, gang: bool, warn: bool) -> None:
    """Go: sgl-project/ome pkg/controller/v1beta1/workload/ops/gangsplit_test.go @ eb2686d2,
    TestMaybeWarnGangSplitRisk (5 entries): only a gang worker whose rendered pod carries no required
    podAffinity (no resolved topologyKey, no term of the operator's) is at risk."""
    ctx = _gang_ctx(3) if gang else one_replica_ctx()
    assert gang_split_risk(ctx, pod()) is warn, (GO, entry)


def _warnings(sim: Sim) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == GANG_SPLIT_RISK and e.type == "Warning"]


def _converged(workers: int, replicas: int = 1, affinity: dict[str, Any] | None = None) -> tuple[Sim, Driver]:
    sim = Sim(workers=workers, affinity=affinity)
    sim.apply_replica(base_replica(replicas=replicas))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def test_a_gang_without_co_location_is_warned_in_the_pass() -> None:
    """Go: … gangsplit_test.go @ eb2686d2, TestMaybeWarnGangSplitRisk, "gang worker, no key, no user
    affinity" and "gang worker, user podAffinity", through the passes that create the pods: two gang
    Instances with no co-location term give one Warning each; the same replica with the operator's
    required podAffinity on its template gives none, and a single-pod replica none."""
    sim, _ = _converged(workers=2, replicas=2)
    assert len(_warnings(sim)) == 2, GO
    sim, _ = _converged(workers=2, replicas=2, affinity=USER_AFFINITY)
    assert _warnings(sim) == [], GO
    sim, _ = _converged(workers=0, replicas=2)
    assert _warnings(sim) == [], GO


def test_maybe_warn_gang_split_risk_dedup_per_row() -> None:
    """Go: ome-projects/ome (the newest text) TestMaybeWarnGangSplitRisk_DedupPerRow, sgl-project/ome
    … gangsplit_test.go @ eb2686d2 TestMaybeWarnGangSplitRisk_DedupPerComponent: a 3-worker gang
    creating three at-risk workers yields one Warning, not three, and the settled replica's later
    passes add none. Go's key is the row's incarnation: a worker lost and the gang rebuilt at the next
    incarnation is a new episode, warned once more."""
    sim, driver = _converged(workers=3)
    assert len(_warnings(sim)) == 1, GO
    driver.one_pass()
    assert len(_warnings(sim)) == 1, GO
    sim.user_delete("llama-pool-engine-0-worker-1")
    driver.run(lambda s: converged(s) and "llama-pool-engine-0-worker-1" in s.live_pods())
    assert sim.rows()[0]["incarnation"] == 2
    assert len(_warnings(sim)) == 2, GO


def _pass_creating(sim: Sim, incarnation: int) -> Out:
    """The planner's view of ``sim`` and an ``Out`` holding the create of worker 1 of Instance 0 at
    ``incarnation`` (the pod the pass's factory builds)."""
    observed = sim.observe()
    desired = observed.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(observed, desired, desired.name, None)
    out = Out(ctx.now)
    pod = ctx.world.pod_factory(desired.name, 0, incarnation, "worker", 1)
    out.actions.append(CreatePod(str(pod["metadata"]["name"]), pod, "test"))
    maybe_gang_split_risk(ctx, out)
    return out


def test_maybe_warn_gang_split_risk_once_per_incarnation() -> None:
    """Go: ome-projects/ome (the newest text) TestMaybeWarnGangSplitRisk_DedupPerRow, the episode key
    (``status.Announce``, ``<reason>@#<incarnation>``): recreating one worker of an incarnation whose
    other workers are observed is the same episode (no Warning); the first worker of the next
    incarnation is a new one (one Warning)."""
    sim, _ = _converged(workers=3)
    sim.pods.pop("llama-pool-engine-0-worker-1")
    incarnation = sim.rows()[0]["incarnation"]
    assert [e.event_reason for e in _pass_creating(sim, incarnation).events] == [], GO
    for name in [n for n in sim.pods if "-worker-" in n]:
        sim.pods.pop(name)
    assert [e.event_reason for e in _pass_creating(sim, incarnation + 1).events] == [GANG_SPLIT_RISK], GO


def test_maybe_warn_gang_split_risk_recommendation_is_provider_neutral() -> None:
    """Go: … gangsplit_test.go @ eb2686d2, TestMaybeWarnGangSplitRisk_RecommendationIsProviderNeutral:
    the Warning names the ``topologyKey`` field to set and prescribes no provider's node label."""
    sim, _ = _converged(workers=1)
    [message] = _warnings(sim)
    assert ".topologyKey" in message, GO
    assert "cloud.google.com" not in message, GO
