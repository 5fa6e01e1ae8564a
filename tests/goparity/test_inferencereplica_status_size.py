"""OME's ``inferencereplica/status_size_test.go``: what a status write persists, and how large it is.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/status_size_test.go`` @ 614ba948 (26,978
characters, read whole; a second stored text of 26,852 characters is the older, compacting through a
local ``clearPodDerivedInstanceObservations`` before ``irstatus.ClearPodDerivedObservations``; the
tests are the same). Its four cases are in ``status_writer_test.go`` @ 4dfb96b1 too and are counted
there (``docs/goparity.md``). Go measures the whole object as its status update sends it
(``runtime.Encode`` of the InferenceReplica); ours sends the replica as read with the new status
(``omereconcile/cluster/executor.py``, ``WriteStatus``), so the body here is Go's fixture object with
the rows our planner writes: each row through the planner's journal view and the pass's counters,
``InstanceCounters.overlay(Row.from_dict(row).to_dict())`` — ``planner/status.py`` ``build_status``.
A status the API server refuses as too large is said by the ``StatusSizeExceeded`` Warning
(``tests/goparity/test_inferencereplica_status_writer.py``); these cases pin how far below that a
large steady replica stays.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from omereconcile.planner.counters import TRANSIENT_ROW_FIELDS, InstanceCounters
from omereconcile.planner.rows import Row

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_size_test.go @ 614ba948"
CURRENT = "example-engine-6d8f7b9c"
STAMP = "2026-08-17T12:00:00Z"  # Go measurementTime()


def _written(row: dict[str, Any]) -> dict[str, Any]:
    """The row as a pass publishes it, the pass observing the counts the row carries."""
    counters = InstanceCounters(
        pod_count=row.get("podCount", 0),
        ready_pod_count=row.get("readyPodCount", 0),
        serving_pod_count=row.get("servingPodCount", 0),
        available_pod_count=row.get("availablePodCount", 0),
        scheduled_pod_count=row.get("scheduledPodCount", 0),
        admitted=row.get("admitted", False),
    )
    return counters.overlay(Row.from_dict(row).to_dict())


def _fully_populated_row(index: int) -> dict[str, Any]:
    """Go ``fullyPopulatedInstanceStatus`` (status_writer_test.go's helpers) as the API stores it."""
    return {
        "index": index,
        "incarnation": 42,
        "phase": "Restarting",
        "runningRevision": "rev-running",
        "targetRevision": "rev-target",
        "podCount": 8,
        "readyPodCount": 7,
        "servingPodCount": 6,
        "availablePodCount": 5,
        "scheduledPodCount": 8,
        "admitted": True,
        "nodesOccupied": ["node-a", "node-b"],
        "conditions": [
            {
                "type": "AllPodsReady",
                "status": "False",
                "observedGeneration": 17,
                "lastTransitionTime": "2026-02-01T10:01:00Z",
                "reason": "PodPending",
                "message": "one worker is still starting",
            }
        ],
        "operation": {
            "id": f"migrate-{index}",
            "type": "Migrate",
            "step": "WaitReady",
            "startedAt": "2026-02-01T10:00:00Z",
            "lastProgressAt": "2026-02-01T10:02:00Z",
            "deadline": "2026-02-01T10:30:00Z",
            "retryCount": 3,
            "targetRevision": "rev-target",
            "reason": "node-recovery",
            "surgeIndex": index + 100,
            "fromNode": "node-old",
            "hintTargetNodes": ["node-new-a", "node-new-b"],
            "requestUUID": f"request-{index}",
        },
        "activeOrdinal": 1,
        "lastFailure": {
            "podName": f"engine-{index}-worker-6",
            "containerName": "main",
            "reason": "OOMKilled",
            "exitCode": 137,
            "message": "out of memory",
            "time": "2026-02-01T10:01:00Z",
        },
    }


def test_a_written_row_drops_exactly_the_three_pod_derived_fields() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_size_test.go @ 614ba948,
    TestInferenceReplicaStatusSizeCompactionDropsExactlyThreeFields, on Go's fully populated row:
    ``readyPodCount``, ``scheduledPodCount`` and ``nodesOccupied`` go, every other field is written
    as stored (irstatus ``ClearPodDerivedObservations``), and the source row is not changed. Failed
    before: the journal view dropped a Migrate operation's ``fromNode``, ``hintTargetNodes`` and
    ``requestUUID`` (Go ``InstanceOperation``), fixed in ``planner/rows.py`` ``Operation``."""
    observed = _fully_populated_row(0)
    original = copy.deepcopy(observed)
    want = {k: v for k, v in observed.items() if k not in TRANSIENT_ROW_FIELDS}
    assert _written(observed) == want
    assert observed == original


def _runners(pods: int) -> list[dict[str, Any]]:
    """Go ``measurementRunners``."""

    def template(role: str) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"ome.io/component": "engine", "ome.io/runner": role}},
            "spec": {
                "containers": [
                    {
                        "name": "ome-container",
                        "image": "example.com/ome/model-server:v1",
                        "ports": [{"name": "http", "containerPort": 8000}],
                        "env": [{"name": "MODEL_ID", "value": "example/model"}],
                        "resources": {},
                    }
                ]
            },
        }

    if pods == 1:
        return [{"name": "default", "size": 1, "template": template("default")}]
    return [
        {"name": "leader", "size": 1, "template": template("leader")},
        {"name": "worker", "size": pods - 1, "template": template("worker")},
    ]


def _steady_replica(pods: int, instances: int) -> dict[str, Any]:
    """Go ``newStatusSizeIR`` for the ``steady`` shape: every Instance Ready with all its pods
    ready, serving, available and scheduled (``setMeasurementPodObservation``), one node a pod."""
    rows = [
        {
            "index": i,
            "incarnation": 1,
            "phase": "Ready",
            "runningRevision": CURRENT,
            "podCount": pods,
            "readyPodCount": pods,
            "servingPodCount": pods,
            "availablePodCount": pods,
            "scheduledPodCount": pods,
            "admitted": True,
            "nodesOccupied": [f"worker-{i:04d}-{o:02d}.example" for o in range(pods)],
        }
        for i in range(instances)
    ]
    spec: dict[str, Any] = {
        "parentRef": {"name": "example"},
        "component": "engine",
        "replicas": instances,
        "runners": _runners(pods),
        "pacing": {"partition": 0, "maxUnavailable": "10%"},
        "minReadySeconds": 10,
    }
    if pods > 1:
        spec["topologyKey"] = "topology.kubernetes.io/zone"
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceReplica",
        "metadata": {
            "name": "example-engine",
            "namespace": "default",
            "uid": "example-engine-uid",
            "resourceVersion": "123456",
            "generation": 7,
            "creationTimestamp": STAMP,
            "labels": {
                "ome.io/inferenceservice": "example",
                "ome.io/component": "engine",
                "app.kubernetes.io/managed-by": "ome-native",
            },
            "annotations": {"ome.io/controller-write": "true"},
            "finalizers": ["ome.io/ir-teardown"],
            "ownerReferences": [
                {
                    "apiVersion": "ome.io/v1beta1",
                    "kind": "InferenceService",
                    "name": "example",
                    "uid": "example-isvc-uid",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {
            "observedGeneration": 7,
            "currentRevision": CURRENT,
            "updateRevision": CURRENT,
            "collisionCount": 1,
            "labelSelector": "ome.io/inferenceservice=example,ome.io/component=engine,"
            "app.kubernetes.io/managed-by=ome-native",
            "replicas": instances,
            "readyReplicas": instances,
            "servingReplicas": instances,
            "availableReplicas": instances,
            "updatedReplicas": instances,
            "updatedReadyReplicas": instances,
            "instanceStatuses": rows,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "observedGeneration": 7,
                    "lastTransitionTime": STAMP,
                    "reason": "AllInstancesReady",
                    "message": "measurement fixture aggregate",
                }
            ],
        },
    }


def _request_bytes(obj: dict[str, Any]) -> int:
    return len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode())


@pytest.mark.parametrize(
    ("pods", "min_reduction_bytes", "min_reduction_percent"),
    [
        pytest.param(1, 400_000, 30, id="steady-singleton"),
        pytest.param(8, 1_250_000, 50, id="steady-gang-8"),
    ],
)
def test_a_steady_5000_instance_status_fits_gos_budget(
    pods: int, min_reduction_bytes: int, min_reduction_percent: float
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_size_test.go @ 614ba948,
    TestInferenceReplicaStatusSizeNormalizedSteadyStateAcceptance, entries "steady-singleton" and
    "steady-gang-8": at 5,000 Instances the persisted request is at most 825,000 bytes and is smaller
    than the observed one by at least 400,000 bytes and 30% (1,250,000 and 50% for 8-pod gangs), the
    reduction being exactly the three pod-derived fields. Failed before (900,539 and 900,903 bytes;
    a 325,000-byte reduction, 26.5%, for singletons): every row carried ``"activeOrdinal":0``, which
    Go never writes (``activeOrdinal,omitempty``), 18 bytes a row; fixed in ``planner/rows.py``
    ``Row.to_dict``. Go's bytes are its encoder's; ours are compact JSON of the same object, which
    for this ASCII fixture without ``<``, ``>``, ``&`` is the same length."""
    observed = _steady_replica(pods, 5000)
    persisted = copy.deepcopy(observed)
    persisted["status"]["instanceStatuses"] = [_written(r) for r in observed["status"]["instanceStatuses"]]
    observed_bytes, persisted_bytes = _request_bytes(observed), _request_bytes(persisted)
    three_fields = copy.deepcopy(observed)
    for row in three_fields["status"]["instanceStatuses"]:
        for key in TRANSIENT_ROW_FIELDS:
            del row[key]
    reduction = observed_bytes - persisted_bytes
    assert reduction == observed_bytes - _request_bytes(three_fields), "the reduction is the three fields"
    assert persisted_bytes <= 825_000, persisted_bytes
    assert reduction >= min_reduction_bytes, reduction
    assert reduction * 100 / observed_bytes >= min_reduction_percent


def test_a_row_in_slot_zero_does_not_write_the_slot() -> None:
    """Go's ``activeOrdinal,omitempty`` (api/ome/v1beta1 ``OMENativeInstanceStatus``), the rule the
    budget above rests on: a row in slot 0 omits the field, a row in slot 1 writes it, and a stored
    row without it reads as slot 0. Not a Go case of this file."""
    assert "activeOrdinal" not in Row(index=0).to_dict()
    assert Row(index=0, active_ordinal=1).to_dict()["activeOrdinal"] == 1
    assert Row.from_dict({"index": 3, "phase": "Ready"}).active_ordinal == 0
