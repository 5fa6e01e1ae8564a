"""OME's ``workload/holds/sourcerotation_test.go``: a surge's source taken out of rotation by someone else.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/holds/sourcerotation_test.go`` @ dcfb4135 (the one
stored version), over ``holds/sourcerotation.go`` @ 4dfb96b1 (``sourceUnroutedHold``,
``reportSourceRotation``, ``sourcePods``, ``sourceRouted``) and ``types.SourceUnroutedTermination``. Go
runs the hold pass on a surging row with the source's serving gate and the routed Service's
EndpointSlices; ours is :func:`omereconcile.planner.surge.source_rotation_hold` on the row and the
Instance's pods, with the Service and its EndpointSlices from the watch's view (ours has one Service
per replica, whose slices are the endpoint view), and one case through the planner in the sim.
``only the update pass's row may report one`` is not mappable (no Migrate operation).
"""

from __future__ import annotations

from datetime import timedelta
from types import MappingProxyType

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, hash_of
from omereconcile.planner.holds import UNSCHEDULABLE
from omereconcile.planner.surge import SOURCE_UNROUTED, source_rotation_hold
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import (
    Endpoints,
    EndpointView,
    PodCondition,
    PodView,
    ServiceView,
    format_time,
)
from omerender import constants as c
from tests.goparity.reconciler_world import attempt_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/holds/sourcerotation_test.go @ dcfb4135"
SOURCE, SURGE = "llama-pool-engine-0-default-0", "llama-pool-engine-0-default-1"
TARGET = "llama-pool-engine-targethash"


def _ctx(service: bool = False, endpoints: Endpoints | None = None) -> Ctx:
    return one_replica_ctx(service=ServiceView(exists=service), endpoints=endpoints or Endpoints())


def _surging(waiting: str | None = None, step: str = R.STEP_SURGE) -> R.Row:
    """Go's ``surgingRow(waiting)``: a single-pod Instance mid-surge, its deadline running."""
    return attempt_row(
        R.OP_UPDATE, step, R.UPDATING, waiting=waiting, target=TARGET, strategy="SurgeThenDrain"
    )


def _source(serving: bool) -> PodView:
    """Go's ``sourcePod``: ContainersReady, on the revision the surge replaces, its gate as given."""
    conds = (
        PodCondition("ContainersReady", "True"),
        PodCondition(c.SERVING_GATE, "True" if serving else "False"),
    )
    labels = {c.LABEL_REVISION_HASH: "sourcehash"}
    return PodView(SOURCE, "uid-src", "1", labels, phase="Running", conditions=conds, creation_timestamp=T0)


def test_the_serving_gate_going_false_is_a_report() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/holds/sourcerotation_test.go @ dcfb4135,
    TestSourceRotation_ReportsASourceTakenOutFromUnderTheSurge, "the serving gate going false is a
    report": the row waits on ``SourceUnrouted`` naming the source; the deadline keeps running (a
    report, not an excuse: Go keeps it out of the externally-held waits)."""
    row = source_rotation_hold(_ctx(), _surging(), [_source(serving=False)])
    assert row.operation is not None
    assert row.operation.waiting == SOURCE_UNROUTED
    assert row.operation.deadline == T0 + timedelta(minutes=5)
    assert row.last_failure == {
        "podName": SOURCE,
        "reason": SOURCE_UNROUTED,
        "message": f"SourceUnrouted: source pod {SOURCE} is out of the routed Service while its surge replacement "
        "is not serving yet; the surge did not take it out",
        "time": format_time(T0),
    }


def test_a_serving_source_with_no_routed_service_is_in_rotation() -> None:
    """Go: same file and test, "a serving source with no routed Service is in rotation": the gate is
    the only view there is, so the report is released."""
    row = source_rotation_hold(_ctx(service=False), _surging(SOURCE_UNROUTED), [_source(serving=True)])
    assert row.operation is not None
    assert row.operation.waiting is None


def test_a_serving_pod_set_does_not_retire_the_report() -> None:
    """Go: same file and test, "a serving pod set does not retire the report": the gate is True but the
    Service's EndpointSlices list only another pod, so the source is out and the row reports it."""
    others = Endpoints(
        by_pod=MappingProxyType({SURGE: EndpointView(True, True, False, True)}), slices_seen=True
    )
    row = source_rotation_hold(_ctx(service=True, endpoints=others), _surging(), [_source(serving=True)])
    assert row.operation is not None
    assert row.operation.waiting == SOURCE_UNROUTED


def test_released_past_the_surge_step() -> None:
    """Go: same file and test, "released past the surge step": at ``SurgeDrain`` the surge takes its
    own source out."""
    row = source_rotation_hold(
        _ctx(), _surging(SOURCE_UNROUTED, step=R.STEP_SURGE_DRAIN), [_source(serving=False)]
    )
    assert row.operation is not None
    assert row.operation.waiting is None


def test_an_incumbent_fact_keeps_the_row() -> None:
    """Go: same file and test, "an incumbent fact keeps the row": the scheduler's token stays beside an
    unrouted source (and its evidence with it)."""
    cond = PodCondition("PodScheduled", "False", reason=UNSCHEDULABLE, message="0/3 nodes are available")
    surge = PodView(SURGE, "uid-surge", "1", {c.LABEL_REVISION_HASH: hash_of(TARGET)}, conditions=(cond,))
    row = _surging(UNSCHEDULABLE)
    assert source_rotation_hold(_ctx(), row, [_source(serving=False), surge]) == row


def test_a_source_taken_out_under_a_surge_is_reported_by_the_planner() -> None:
    """The first subtest end to end: a replica rolls by SurgeThenDrain to an image whose replacement
    never becomes ready; someone sets the source's serving gate False. The next pass reports
    ``SourceUnrouted`` naming the source (the deadline still armed); once the gate is True again the
    report is released. Failed before (ours had no such report: the row said nothing while the
    Instance served nothing), fixed by Go's rule (``planner/surge.py`` ``source_rotation_hold``)."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=5)))
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v2"] = "never"
    sim.image = "vllm:v2"
    driver.run(lambda s: SURGE in s.pods, limit=30)
    gate = next(cd for cd in sim.pods[SOURCE].obj["status"]["conditions"] if cd["type"] == c.SERVING_GATE)
    gate["status"] = "False"  # another actor takes the source out of rotation
    sim.tick()
    driver.one_pass()
    row = sim.rows()[0]
    assert (row["operation"]["step"], row["operation"].get("waiting")) == ("Surge", SOURCE_UNROUTED)
    assert "deadline" in row["operation"]
    assert row["lastFailure"]["podName"] == SOURCE
    gate["status"] = "True"
    sim.tick()
    driver.one_pass()
    assert "waiting" not in sim.rows()[0]["operation"]
