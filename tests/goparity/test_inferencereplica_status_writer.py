"""OME's ``inferencereplica/status_writer_test.go`` and ``status_transition_test.go``: what a status write
persists, through the pure planner in the simulated world.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/status_writer_test.go`` @ 4dfb96b1 (of the
eight stored versions, 4dfb96b1, 100,078 characters, read whole, holds ae43378d's 25,858 plus the
representation-selection tests of ``status_selection_test.go`` and the status-size tests, and a row
``announced`` field), over ``status_writer.go`` and ``irstatus.ClearPodDerivedObservations``; and
``status_transition_test.go`` @ ae43378d (26,644 characters, read whole; it holds 614ba948's 12,742).
Go drives the writer against a fake client; here the replica runs in the sim, a row written by an
older writer (carrying ``readyPodCount``, ``scheduledPodCount``, ``nodesOccupied``) is seeded into its
status, and the status the passes write is read. The cases with no counterpart (metrics, the
ColumnarV2 representation, Go source inventories, the writer's own entry points) are listed in
``docs/goparity.md``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from omereconcile.actions import CreatePod, Plan, WriteStatus
from omereconcile.cluster.executor import Executor
from omereconcile.cluster.kube import ApiError, Unavailable
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_writer_test.go @ 4dfb96b1"
TRANSIENT = ("readyPodCount", "scheduledPodCount", "nodesOccupied")


def _converged(replicas: int = 2) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def _writes(driver: Driver, passes: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(passes):
        plan = driver.one_pass()
        out += [dict(a.status) for a in plan.actions if isinstance(a, WriteStatus)]
        driver.sim.advance(1.0)
    return out


def test_a_legacy_row_loses_exactly_the_three_pod_derived_fields_once() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_writer_test.go @ 4dfb96b1,
    TestClearPodDerivedInstanceObservations, TestUpdateInferenceReplicaStatusPersistsCompactedStatus and
    TestInferenceReplicaStatusSizeCompactionDropsExactlyThreeFields: the write drops ``readyPodCount``,
    ``scheduledPodCount`` and ``nodesOccupied`` and changes nothing else; a second pass has nothing to
    clear (status_test.go @ 58a57f25, TestAggregateAndWriteStatusPersistsCompactRowsAndMirrorsCurrentObservations:
    "legacy compaction writes once and the steady compact pass writes nothing")."""
    sim, driver = _converged()
    before = [dict(r) for r in sim.rows()]
    for row in sim.status["instanceStatuses"]:
        row.update(readyPodCount=1, scheduledPodCount=1, nodesOccupied=["sim-node"])
    writes = _writes(driver, 3)
    assert len(writes) == 1, "the compaction is one write; the steady passes after it write nothing"
    rows = writes[0]["instanceStatuses"]
    assert all(not set(TRANSIENT) & r.keys() for r in rows)
    assert rows == before


def test_a_write_stores_the_dense_rows_without_the_pod_derived_fields() -> None:
    """Go: … status_writer_test.go @ 4dfb96b1, TestStatusWriterSelectsRepresentationByTarget, entries
    "DenseV1 target, uniform" and "DenseV1 target, mass failure" (their representation half: the dense
    list, no ``instanceStatusEncoding`` or ``instanceStatusColumns``, rows read back less the three
    pod-derived fields; the bytes gauge and write counters are metrics we do not have)."""
    sim, _ = _converged(3)
    assert "instanceStatusEncoding" not in sim.status
    assert "instanceStatusColumns" not in sim.status
    rows = sim.rows()
    assert [r["index"] for r in rows] == [0, 1, 2]
    assert all(not set(TRANSIENT) & r.keys() for r in rows)


def test_an_unchanged_object_is_never_rewritten_after_convergence() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_transition_test.go @ ae43378d,
    TestUnchangedObjectIsNeverRewrittenAfterConvergence, subtest ``DenseV1``, and status_test.go @ 8263d0c7,
    TestAggregateAndWriteStatus_NoWriteWhenUnchanged: repeated passes over an object whose logical
    state does not change perform no status write once it has converged, and the rows stay the dense
    list."""
    sim, driver = _converged()
    assert _writes(driver, 6) == []
    assert "instanceStatusColumns" not in sim.status


# -- TestUpdateInferenceReplicaStatusSizeRejection -------------------------------------------------
# Go drives ``updateInferenceReplicaStatus`` against a fake client whose status update fails with the
# injected error; here the executor (``omereconcile.cluster.executor``, where the status is written)
# runs a plan's WriteStatus against a client whose status PUT fails the same way.


class _RefusingKube:
    """A client whose status PUT fails with ``error``; every other request is recorded and answered."""

    def __init__(self, error: ApiError) -> None:
        self.error = error
        self.calls: list[tuple[str, str, Any]] = []

    def put(self, path: str, body: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("PUT", path, body))
        if path.endswith("/status"):
            raise self.error
        return dict(body)

    def post(self, path: str, body: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("POST", path, body))
        return dict(body)

    def patch(self, path: str, body: Any, content_type: str = "", **_: Any) -> dict[str, Any]:
        self.calls.append(("PATCH", path, body))
        return {}


def _refused_write(error: ApiError) -> tuple[Any, _RefusingKube, dict[str, Any]]:
    replica = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {"name": "model-engine", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
        "spec": {"component": "engine"},
        "status": {"replicas": 1},
    }
    status = {"replicas": 2, "instanceStatuses": [{"index": 0, "phase": "Ready", "incarnation": 1}]}
    kube = _RefusingKube(error)
    ex = Executor(kube, reporting_instance="t", clock=lambda: datetime(2026, 8, 17, tzinfo=UTC))  # type: ignore[arg-type]
    res = ex.execute(Plan((WriteStatus(status, "r"), CreatePod("p", {"metadata": {}}, "r"))), replica)
    return res, kube, status


def _events(kube: _RefusingKube) -> list[dict[str, Any]]:
    return [body for verb, path, body in kube.calls if verb == "POST" and path.endswith("/events")]


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ApiError(413, "RequestEntityTooLarge", "limit is 1572864"), id="413 without parent"),
        pytest.param(
            Unavailable(500, "InternalError", "Internal error occurred: etcdserver: request is too large"),
            id="storage too-large as Internal",
        ),
    ],
)
def test_a_status_write_refused_as_too_large_is_said_once_with_its_size(error: ApiError) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_writer_test.go @ 4dfb96b1,
    TestUpdateInferenceReplicaStatusSizeRejection, entries "413 without parent" and "storage too-large
    as Internal" (Go's with a parent InferenceService; a standalone replica has none, so the Warning
    is on the replica, as in Go's no-parent entry). Rule: status_writer.go ``isStatusTooLarge`` and
    ``warnStatusSizeExceeded``. The error is returned unchanged (the pass ends on it, nothing after
    the write runs, nothing is dropped), and exactly one ``StatusSizeExceeded`` Warning names the
    object and the encoded size of the status."""
    res, kube, status = _refused_write(error)
    assert isinstance(res.failed, WriteStatus)
    assert res.error is error
    assert not res.conflict
    assert not any(path.endswith("/pods") for _, path, _ in kube.calls)  # the pass stopped
    (event,) = _events(kube)
    assert (event["type"], event["reason"]) == ("Warning", "StatusSizeExceeded")
    assert event["involvedObject"]["kind"] == "InferenceReplica"
    size = len(json.dumps(status, separators=(",", ":")).encode())
    assert f"{size} bytes" in event["message"]
    assert "default/model-engine" in event["message"]


def test_a_status_write_failing_for_another_reason_records_no_event() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_writer_test.go @ 4dfb96b1,
    TestUpdateInferenceReplicaStatusSizeRejection, entry "other error": a 503 is returned unchanged
    and no size Warning is recorded (status_writer.go ``isStatusTooLarge`` is false)."""
    error = Unavailable(503, "ServiceUnavailable", "apiserver restarting")
    res, kube, _ = _refused_write(error)
    assert res.error is error
    assert _events(kube) == []
