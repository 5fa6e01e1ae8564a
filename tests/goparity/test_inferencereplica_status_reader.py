"""OME's ``inferencereplica/status_reader_test.go``: a stored per-Instance status the reconciler cannot
decode stops the pass before any effect.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/status_reader_test.go`` @ 4dfb96b1 (one
stored version, 10,222 characters, read whole), over ``status_reader.go`` @ 614ba948
(``instanceStatusDecodeError``), ``reconciler.go`` @ ae43378d ``Reconcile`` (the decoded entry read) and
``irstatus/reader.go``, ``encoding.go``, ``decode.go`` @ 614ba948. This controller keeps the plain
``instanceStatuses`` list only (DECISIONS §3.10), so it is Go's DenseV1 manager with no ColumnarV2
bound (the zero ``irstatus.Decoder``): every ColumnarV2 payload fails closed. Go drives
``Reconcile`` against a fake client; here the replica runs in the simulated world, its converged
status is replaced by a ColumnarV2 twin, and the passes' actions and the objects are read. The cases
that need a ColumnarV2 decoder, Go's reader wiring or its metrics are listed in ``docs/goparity.md``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omereconcile.actions import RecordEvent
from omereconcile.planner.status_decode import INSTANCE_STATUS_DECODE_FAILED, undecodable_reason
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_reader_test.go @ 4dfb96b1"
GO_WORDS = (
    "per-Instance status cannot be decoded ({}); reconciliation is suspended until the status is repaired"
)


def _converged(replicas: int = 2) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


def _store_columnar_twin(sim: Sim) -> dict[str, Any]:
    """Replace the stored status by its ColumnarV2 twin: the dense rows become a payload of the same
    members (Go ``columnarTwin``; well formed, 01 §1.4: members, phases, revisions, incarnations)."""
    assert sim.replica is not None
    status = sim.replica["status"]
    rows = status["instanceStatuses"]
    twin = {k: v for k, v in status.items() if k != "instanceStatuses"}
    members = ",".join(str(r["index"]) for r in rows)
    twin["instanceStatusEncoding"] = "ColumnarV2"
    twin["instanceStatusColumns"] = {
        "members": members,
        "phases": [{"value": "Ready", "indexes": members}],
        "runningRevisions": [{"value": rows[0]["runningRevision"], "indexes": members}],
        "incarnations": [{"value": 1, "indexes": members}],
    }
    sim.replica["status"] = twin
    return copy.deepcopy(twin)


def _handed_over(sim: Sim) -> Driver:
    """A controller started on the replica as another writer left it (a fresh driver: the sim's own
    row bookkeeping starts from the status as stored)."""
    return Driver(sim)


def _refused_passes(sim: Sim, driver: Driver, passes: int) -> list[RecordEvent]:
    events: list[RecordEvent] = []
    for _ in range(passes):
        plan = driver.one_pass()
        assert all(isinstance(a, RecordEvent) for a in plan.actions), plan.describe()
        events += [a for a in plan.actions if isinstance(a, RecordEvent)]
        sim.advance(5.0)
    return events


def test_a_columnar_status_without_a_decode_bound_fails_closed_before_any_effect() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_reader_test.go @ 4dfb96b1,
    TestReconcileFailsClosedOnUndecodableColumnarV2, entry "no bound configured": a DenseV1 manager
    without a ColumnarV2 bound fails closed on a ColumnarV2 object with ``cardinality_limit``
    (irstatus/decode.go ``validateColumns``: no bound is checked before the payload is read). With
    the entry "malformed payload"'s effect half: nothing follows the failed decode (no pod, no
    status write: the stored status stays as it was) and the Warning ``InstanceStatusDecodeFailed``
    names the reason (status_reader.go ``instanceStatusDecodeError``). And TestInstanceStatusDecodeError
    entry "codec failure is counted, reported and wrapped", its Warning half: a Warning
    ``InstanceStatusDecodeFailed`` naming the object and the codec reason (the counter is a metric we
    do not export; the wrapped error is Go's return value). Before: the pass read no rows, rebuilt
    them from the pods and wrote them beside the ColumnarV2 marker."""
    sim, _ = _converged()
    pods = sorted(sim.pods)
    stored = _store_columnar_twin(sim)
    driver = _handed_over(sim)
    sim.user_delete(pods[0])  # a lost Instance: a pass that acts would rebuild it
    events = _refused_passes(sim, driver, 3)
    assert events, "each refused pass says why"
    for event in events:
        assert (event.type, event.event_reason) == ("Warning", INSTANCE_STATUS_DECODE_FAILED)
        assert event.message.startswith(
            "InferenceReplica llama-demo/llama-pool " + GO_WORDS.format("cardinality_limit")
        )
        assert "status.instanceStatusEncoding" in event.message  # and names the fix
    assert sim.status == stored
    assert set(sim.pods) <= set(pods)  # nothing created: the lost Instance waits for the repair


def test_a_columnar_status_blocks_the_teardown_too() -> None:
    """Go: … reconciler.go @ ae43378d ``Reconcile``: the decoded entry read runs before the
    ``DeletionTimestamp`` branch, so a replica being deleted with an undecodable status is not torn
    down (its pods stay, the finalizer stays) until the status is repaired."""
    sim, _ = _converged()
    pods = sorted(sim.pods)
    _store_columnar_twin(sim)
    driver = _handed_over(sim)
    sim.delete_replica()
    events = _refused_passes(sim, driver, 2)
    assert {e.event_reason for e in events} == {INSTANCE_STATUS_DECODE_FAILED}
    assert sorted(sim.pods) == pods
    assert sim.replica is not None
    assert sim.replica["metadata"]["finalizers"]


def test_the_repair_the_warning_names_resumes_on_the_same_pods() -> None:
    """The fix our Warning names (Go's text says only "until the status is repaired"): with the
    ColumnarV2 marker and columns removed the next passes rebuild the rows from the pods the replica
    owns, and the replica is Ready again on the same pods — nothing recreated."""
    sim, _ = _converged()
    pods = sorted(sim.pods)
    _store_columnar_twin(sim)
    driver = _handed_over(sim)
    _refused_passes(sim, driver, 1)
    for key in ("instanceStatusEncoding", "instanceStatusColumns"):
        del sim.status[key]
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    assert sorted(sim.pods) == pods
    assert [r["index"] for r in sim.rows()] == [0, 1]


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        pytest.param({"instanceStatuses": [{"index": 0}]}, None, id="DenseV1 rows"),
        pytest.param({}, None, id="empty status"),
        pytest.param(
            {"instanceStatusColumns": {"members": "0"}}, "representation_union", id="unmarked columns"
        ),
        pytest.param(
            {"instanceStatusEncoding": "ColumnarV2"}, "representation_union", id="marker without columns"
        ),
        pytest.param(
            {
                "instanceStatusEncoding": "ColumnarV2",
                "instanceStatusColumns": {"members": "0"},
                "instanceStatuses": [{"index": 0}],
            },
            "representation_union",
            id="marker with dense rows",
        ),
        pytest.param(
            {"instanceStatusEncoding": "ColumnarV3", "instanceStatusColumns": {}},
            "unknown_encoding",
            id="unknown",
        ),
        pytest.param(
            {"instanceStatusEncoding": "ColumnarV2", "instanceStatusColumns": {"members": "1-0"}},
            "cardinality_limit",
            id="malformed payload, no bound",
        ),
    ],
)
def test_the_reason_a_boundless_reader_fails_with(status: dict[str, Any], reason: str | None) -> None:
    """The reason words the Warning carries, by Go's rule for the zero ``Decoder``:
    irstatus/encoding.go @ 614ba948 ``ObservedEncoding`` (the representation union and an unknown
    marker fail before any decode) and decode.go ``validateColumns`` (no bound: ``cardinality_limit``
    before the members are parsed, so Go's "malformed payload" fixture read without a bound fails with
    it too). Not Go cases of this file: the rule the entry above rests on."""
    assert undecodable_reason(status) == reason
