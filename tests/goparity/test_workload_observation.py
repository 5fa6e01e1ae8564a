"""OME's ``workload/observation_test.go``: what a pass publishes from its own Pod observation.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/observation_test.go`` @ 58a57f25 (the newer of
two stored versions, all 30,503 characters read; dcfb4135's 26,208 are its first part, without
``TestTakeInlineV1PublicationDemotesReadyRowWithoutPods``), over ``workload/observation.go``
``NewOwnedPublicationObservation``, ``CurrentCounters``, ``TakeInlineV1Publication`` and
``overlayInlineV1``. Ours: :func:`omereconcile.planner.counters.instance_counters` (Go's
``CountersForInstance``), ``InstanceCounters.overlay`` (the row as published),
:func:`omereconcile.planner.counters.component_counters` (``TakeInlineV1Publication``'s counters), and
the simulated world for the demotion of a Ready row without pods.

Not mappable (6 of 14): the observation object's Go mechanics — its provenance and epoch guard
(``TestComponentObservationProvenanceAndEpochGuard``, ``TestPublicationObservationRejectsUnsupportedProvenance``
×2), slice aliasing and nested copies (``TestPublicationObservationCopiesNestedDurableState``), a nil
versus empty row slice (``TestPublicationObservationPreservesNilStatusSlice``), and a source audit of
Go's field accesses (``TestRemovableObservationFieldsHaveNoUnauditedDirectProductionAccess``; ours
drops the same three fields from every write, ``counters.TRANSIENT_ROW_FIELDS``). The benchmark is no
case.
"""

from __future__ import annotations

from datetime import timedelta
from types import MappingProxyType

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.counters import (
    TRANSIENT_ROW_FIELDS,
    InstanceCounters,
    component_counters,
    instance_counters,
)
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import Endpoints, EndpointView, PodCondition, PodView
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/observation_test.go @ 58a57f25"


def _pod(name: str, node: str, ready: bool, serving: bool, gated: bool) -> PodView:
    """Go's ``observationPod``: ContainersReady when ready, the serving gate when serving, PodReady when
    both (the kubelet folds a satisfied gate into Ready), a scheduling gate when gated."""
    conds: list[PodCondition] = []
    if ready:
        conds.append(PodCondition("ContainersReady", "True"))
    if serving:
        conds.append(PodCondition(c.SERVING_GATE, "True"))
    if ready and serving:
        conds.append(PodCondition("Ready", "True"))
    return PodView(
        name,
        f"{name}-uid",
        "1",
        {},
        phase="Running",
        conditions=tuple(conds),
        node_name=node or None,
        scheduling_gates=("example-gate",) if gated else (),
        creation_timestamp=T0,
    )


def _endpoints(*available: str) -> Endpoints:
    """Go's ``available`` pod-name set: the pods an EndpointSlice lists ready and not terminating."""
    views = {n: EndpointView(ready=True, serving=True, terminating=False, available=True) for n in available}
    return Endpoints(by_pod=MappingProxyType(views), slices_seen=True)


def _row(index: int, running: str = "", op_target: str = "", **fields: object) -> R.Row:
    op = None
    if op_target:
        op = R.Operation(f"update-{index}", R.OP_UPDATE, R.STEP_SURGE, op_target, T0)
    return R.Row(index=index, running_revision=running, operation=op, **fields)  # type: ignore[arg-type]


def test_publication_overlays_the_current_pod_observation_on_the_owned_rows() -> None:
    """Go: observation_test.go @ 58a57f25, TestPublicationObservationReusesOwnedRowsWithoutMutatingSource:
    both rows of index 4 publish the counters of its three current pods (3 pods, 2 ready, 1 serving,
    1 available, 2 scheduled, not admitted: one pod is gated) over the persisted 8/7/6/5, keep their
    phase and operation; the empty index 9 publishes zeros; the pod-only index 99 adds no row.
    Go's ``nodesOccupied`` is not published by ours (a transient field, never written); the
    slice-aliasing and consume-once checks are Go mechanics."""
    pods = [
        _pod("pod-a", "node-b", True, True, False),
        _pod("pod-b", "node-a", True, False, True),
        _pod("pod-c", "", False, False, False),
    ]
    eps = _endpoints("pod-a")
    current = instance_counters(pods, eps, timedelta(0), T0)
    assert (current.pod_count, current.ready_pod_count, current.serving_pod_count) == (3, 2, 1)
    assert (current.available_pod_count, current.scheduled_pod_count, current.admitted) == (1, 2, False)

    persisted = {
        "index": 4,
        "incarnation": 3,
        "phase": "Updating",
        "runningRevision": "revision-a",
        "targetRevision": "revision-b",
        "podCount": 8,
        "readyPodCount": 7,
        "servingPodCount": 6,
        "availablePodCount": 5,
        "scheduledPodCount": 8,
        "admitted": True,
        "nodesOccupied": ["old-node"],
        "operation": {"id": "operation-4", "type": "Update", "step": "Drain"},
    }
    published = current.overlay(persisted)
    assert (published["podCount"], published["servingPodCount"], published["availablePodCount"]) == (3, 1, 1)
    assert published["admitted"] is False
    assert published["phase"] == "Updating"
    assert published["operation"] == persisted["operation"]
    assert not any(f in published for f in TRANSIENT_ROW_FIELDS)
    assert persisted["podCount"] == 8, "the source row is not mutated"

    empty = InstanceCounters().overlay({"index": 9, "phase": "Restarting", "podCount": 1, "admitted": True})
    assert (empty["podCount"], empty["admitted"]) == (0, False)

    rows = [_row(4, "revision-a"), _row(9), _row(4, "revision-c")]
    counters = {
        4: current,
        99: instance_counters([_pod("orphan-row-pod", "node-z", True, True, False)], eps, timedelta(0), T0),
    }
    assert component_counters(rows, counters, None, "").replicas == 3


@pytest.mark.parametrize(
    ("entry", "target"), [("without target revision", ""), ("with target revision", "rev-a")]
)
def test_counters_ignore_the_persisted_pod_fields(entry: str, target: str) -> None:
    """Go: observation_test.go @ 58a57f25, TestTakeInlineV1PublicationCountersIgnorePersistedObservationFields,
    each entry: rows persisted as 1/1/1/1 and 0/0/0/0 with no current pods count no ready, serving or
    available Instance; with target ``rev-a`` one row is updated and none updated-ready; every
    published row carries zero pod counts."""
    rows = [
        R.Row(index=0, pod_count=1, serving_pod_count=1, available_pod_count=1, running_revision="rev-a"),
        R.Row(index=1, pod_count=1, running_revision="rev-b"),
    ]
    got = component_counters(rows, {}, {0: 1, 1: 1}, target)
    assert (got.replicas, got.ready, got.serving, got.available) == (2, 0, 0, 0), entry
    assert (got.updated, got.updated_ready) == ((1, 0) if target else (0, 0)), entry
    for row in rows:
        published = InstanceCounters().overlay(row.to_dict())
        assert (published["podCount"], published["servingPodCount"], published["availablePodCount"]) == (
            0,
            0,
            0,
        )


@pytest.mark.parametrize(
    ("entry", "target", "want"),
    [("target is the running revision", "rev-a", 2), ("target is the pinned revision", "rev-b", 0)],
)
def test_updated_excludes_rows_pinned_off_target(entry: str, target: str, want: int) -> None:
    """Go: observation_test.go @ 58a57f25, TestTakeInlineV1PublicationUpdatedExcludesRowsPinnedOffTarget,
    each entry: a row on ``rev-a`` whose Update pins ``rev-b`` is not updated toward ``rev-a`` (it still
    owes a roll) nor toward ``rev-b`` (it does not run it)."""
    rows = [_row(0, "rev-a"), _row(1, "rev-a", op_target="rev-b"), _row(2, "rev-a", op_target="rev-a")]
    got = component_counters(rows, {}, {0: 1, 1: 1, 2: 1}, target)
    assert got.updated == want, entry
    assert got.replicas == 3, entry


# -- TestTakeInlineV1PublicationDemotesReadyRowWithoutPods, in the simulated world -----------------------


def _two_ready() -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    return sim, driver


def _paused(sim: Sim, driver: Driver) -> None:
    sim.update_spec(paused=True)
    driver.one_pass()


def test_a_ready_row_without_pods_publishes_pending() -> None:
    """Go: observation_test.go @ 58a57f25, TestTakeInlineV1PublicationDemotesReadyRowWithoutPods, "no
    pods publishes Pending": the backed row stays Ready, the unbacked one publishes Pending with no
    pod, its running revision and ``readySince`` kept; one of two Instances ready. (Go's third,
    operation-owned row is not reproduced: its Update is covered by ``status_test.go``'s port.) Go's
    test drives the publication alone; in a whole pass the replica is paused first, since unpaused
    Go's Create pass takes the row in that same pass (``workload/plan_decision.go`` ``Plan``: "Create
    both recovers the pods and re-stamps the phase in the same pass") and the publication then finds
    it ``Creating``."""
    sim, driver = _two_ready()
    _paused(sim, driver)
    before = {r["index"]: dict(r) for r in sim.rows()}
    sim.pods.pop("llama-pool-engine-1-default-0")
    driver.one_pass()
    rows = {r["index"]: r for r in sim.rows()}
    assert rows[0]["phase"] == "Ready"
    assert (rows[1]["phase"], rows[1]["podCount"]) == ("Pending", 0)
    assert rows[1]["runningRevision"] == before[1]["runningRevision"]
    assert rows[1]["readySince"] == before[1]["readySince"]
    assert sim.status["readyReplicas"] == 1


def test_a_pod_not_yet_ready_keeps_the_phase() -> None:
    """Go: observation_test.go @ 58a57f25, TestTakeInlineV1PublicationDemotesReadyRowWithoutPods, "a pod
    that is not yet Ready keeps the phase": presence is the rule, readiness stays with the counters."""
    sim, driver = _two_ready()
    pod = sim.pods["llama-pool-engine-1-default-0"].obj
    for cond in pod["status"]["conditions"]:
        if cond["type"] in ("ContainersReady", "Ready"):
            cond["status"] = "False"
    driver.one_pass()
    rows = {r["index"]: r for r in sim.rows()}
    assert (rows[1]["phase"], rows[1]["podCount"]) == ("Ready", 1)
    assert sim.status["readyReplicas"] == 1


def test_a_ready_pod_publishes_ready_again() -> None:
    """Go: observation_test.go @ 58a57f25, TestTakeInlineV1PublicationDemotesReadyRowWithoutPods, "a
    Ready pod publishes Ready again": once the Instance has a Ready pod again it publishes Ready and
    both Instances count ready (published ``Pending`` under a pause, as above, then unpaused)."""
    sim, driver = _two_ready()
    _paused(sim, driver)
    sim.pods.pop("llama-pool-engine-1-default-0")
    driver.one_pass()
    assert {r["index"]: r["phase"] for r in sim.rows()}[1] == "Pending"
    sim.update_spec(paused=False)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    rows = {r["index"]: r for r in sim.rows()}
    assert (rows[1]["phase"], rows[1]["podCount"]) == ("Ready", 1)
