"""OME's ``inferencereplica/convert_test.go``: the cases no other file's row counts.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/convert_test.go`` @ 58a57f25 (134,240
characters, read whole; the newest of its two stored versions: 614ba948's holds one test, and
58a57f25 calls ``buildReconcileInput`` with the newer ``lifecycleSettings`` signature). By 58a57f25 the
file also carries the tests of ``batch_adapter_test.go``, ``conflict_reader_test.go``,
``convert_gate_test.go``, ``promote_test.go`` and ``retryblock_adapter_test.go``, counted in those
files' rows; the rest is here or listed in ``docs/goparity.md`` with why.

Go drives the status closures (``buildPromoteCurrentRevision``, ``buildMutateRetryBlock``) against a
fake client; here the planner function that holds Go's rule runs on the rows Go's test seeds
(:func:`omereconcile.planner.status.current_revision_for`, :class:`omereconcile.planner.retry.RetryBook`),
names are read off the simulated world's objects, and revision hashes off the render
(:func:`omerender.preview`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rows import READY, RESTARTING, UPDATING, RetryBlock, Row
from omereconcile.planner.status import current_revision_for
from omerender import Catalog, InferenceReplica, parse_object, preview
from omerender import constants as c
from tests.goparity.gp_support import gp_model, gp_replica, gp_runtime

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25"
TARGET = "llama-engine-aaaaaaaa"  # Go promoteTargetRev
PRIOR = "llama-engine-bbbbbbbb"  # Go promotePriorRev


def _row(index: int, phase: str, running: str) -> Row:
    return Row.from_dict({"index": index, "phase": phase, "runningRevision": running, "incarnation": 1})


def _book(*blocks: dict[str, Any]) -> RetryBook:
    book = RetryBook({}, "prod/llama-engine", "engine")
    for body in blocks:
        block = RetryBlock.from_dict(body)
        book.blocks[block.target_revision] = block
    return book


# -- TestPromoteCurrentRevision_HeldRevisionDoesNotLandByAttrition -----------------------------------


def test_a_held_revision_does_not_land_by_attrition() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25,
    TestPromoteCurrentRevision_HeldRevisionDoesNotLandByAttrition. Rule: ``workload/status/aggregate.go``
    ``CurrentRevisionFor`` @ 8263d0c7 (the update revision lands once every row is Ready on it and no
    RetryBlock names it). Every Instance reads Ready on the pushed revision between crashes while its
    retry ladder holds: ``currentRevision`` keeps the prior revision and the Held hold is still what the
    status reports; once the block is released the same rows land the push."""
    rows = [_row(0, READY, TARGET), _row(1, READY, TARGET)]
    held = _book(
        {"targetRevision": TARGET, "state": "Held", "attemptsStarted": 3, "reason": "CrashLoopBackOff"}
    )
    assert current_revision_for(rows, PRIOR, TARGET, held) == PRIOR
    hold = held.rollout_hold(TARGET, datetime(1970, 1, 1, 2, 30, 20, tzinfo=UTC))
    assert hold is not None
    assert hold[0] == "Held"
    released = _book()
    assert current_revision_for(rows, PRIOR, TARGET, released) == TARGET


# -- TestPromoteCurrentRevision_RollbackOntoCurrentWithdrawsIt ---------------------------------------

ROLLED_BACK_TO, SUPERSEDED = PRIOR, TARGET


@pytest.mark.parametrize(
    ("rows", "current", "want"),
    [
        pytest.param(
            [
                _row(0, UPDATING, SUPERSEDED),
                _row(1, UPDATING, SUPERSEDED),
                _row(2, READY, SUPERSEDED),
                _row(3, READY, SUPERSEDED),
            ],
            ROLLED_BACK_TO,
            "",
            id="every Instance still on the superseded revision",
        ),
        pytest.param(
            [_row(0, READY, SUPERSEDED), _row(1, READY, SUPERSEDED), _row(2, READY, ROLLED_BACK_TO)],
            ROLLED_BACK_TO,
            "",
            id="the last Instance never left the target",
        ),
        pytest.param(
            [_row(0, RESTARTING, ROLLED_BACK_TO), _row(1, READY, ROLLED_BACK_TO)],
            ROLLED_BACK_TO,
            ROLLED_BACK_TO,
            id="a restart on the target is not a superseded Instance",
        ),
        pytest.param(
            [_row(0, READY, ROLLED_BACK_TO), _row(1, READY, ROLLED_BACK_TO)],
            "",
            ROLLED_BACK_TO,
            id="promoted again once every Instance is back",
        ),
    ],
)
def test_a_rollback_onto_the_current_revision_withdraws_it(rows: list[Row], current: str, want: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25,
    TestPromoteCurrentRevision_RollbackOntoCurrentWithdrawsIt (the entry is the pytest id). Rule:
    ``CurrentRevisionFor`` @ 8263d0c7 with ``anyInstanceOffRevision``: the spec rolled back onto the
    revision ``currentRevision`` already names while Instances still run the one rolled back from, so
    ``currentRevision`` is withdrawn (empty) until every Instance is Ready on the target again; a
    repair on the target is not a rollout (it stays, and the status is unchanged)."""
    assert current_revision_for(rows, current, ROLLED_BACK_TO, _book()) == want


# -- TestBuildMutateRetryBlock_UnconfiguredRetentionKeepsHistory -------------------------------------


def test_an_unconfigured_retry_block_history_limit_keeps_every_block() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25,
    TestBuildMutateRetryBlock_UnconfiguredRetentionKeepsHistory: with no operator
    ``retryBlockHistoryLimit`` a fourth historical block prunes nothing (Go: "Nil keeps every
    historical block"); ours is :meth:`RetryBook.cap_history` with ``None``."""
    book = _book(
        {"targetRevision": "rev-current", "state": "Backoff", "attemptsStarted": 1},
        {"targetRevision": "rev-old-nil", "state": "Held", "attemptsStarted": 3},
        {
            "targetRevision": "rev-old-1",
            "state": "Held",
            "attemptsStarted": 3,
            "lastFailureAt": "1970-01-01T09:00:00Z",
        },
        {
            "targetRevision": "rev-old-2",
            "state": "Held",
            "attemptsStarted": 3,
            "lastFailureAt": "1970-01-01T10:00:00Z",
        },
        {
            "targetRevision": "rev-old-3",
            "state": "Held",
            "attemptsStarted": 3,
            "lastFailureAt": "1970-01-01T11:00:00Z",
        },
    )
    book.cap_history("rev-current", None)
    assert sorted(book.blocks) == ["rev-current", "rev-old-1", "rev-old-2", "rev-old-3", "rev-old-nil"]


# -- TestStandaloneReplicaDerivesNamesFromItsOwnName -------------------------------------------------


def _refs_catalog() -> Catalog:
    return Catalog.from_objects(
        [
            gp_model(),
            gp_runtime(
                "rt", {"supportedModelFormats": [{"name": "pytorch", "modelFormat": {"name": "pytorch"}}]}
            ),
        ]
    )


def test_a_standalone_replica_derives_its_names_from_its_own_name() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25,
    TestStandaloneReplicaDerivesNamesFromItsOwnName: a replica without ``parentRef`` is its own name
    prefix (``NamePrefix``) — its pods carry the ``ome.io/inferenceservice`` label with its name, the
    headless Service is ``<name>-<component>-headless`` selecting that label, and the revision is
    ``<name>-<component>-<hash>`` labelled the same. Read off :func:`omerender.preview`, whose
    objects the executor writes."""
    replica = gp_replica(name="pool-a", runtime="rt")
    out = preview(replica, _refs_catalog(), instances=1)
    assert out.revision.name == f"pool-a-engine-{out.revision.hash}"
    assert out.controller_revision["metadata"]["labels"][c.LABEL_INFERENCESERVICE] == "pool-a"
    assert out.service["metadata"]["name"] == "pool-a-engine-headless"
    assert out.service["spec"]["selector"][c.LABEL_INFERENCESERVICE] == "pool-a"
    assert out.pods
    for pod in out.pods:
        assert pod["metadata"]["name"].startswith("pool-a-engine-0-")
        assert pod["metadata"]["labels"][c.LABEL_INFERENCESERVICE] == "pool-a"


# -- TestComposedFieldsAnnotationIsHashNeutral -------------------------------------------------------


def _runners_replica(annotations: dict[str, str] | None) -> InferenceReplica:
    metadata: dict[str, Any] = {"name": "pool-a", "namespace": "team-a", "uid": "ir-uid", "generation": 1}
    if annotations:
        metadata["annotations"] = annotations
    template = {"spec": {"containers": [{"name": "c", "image": "img:1"}]}}
    spec = {
        "component": "engine",
        "replicas": 3,
        "runners": [{"name": "default", "size": 1, "template": template}],
    }
    return parse_object(
        InferenceReplica,
        {"apiVersion": c.API_VERSION, "kind": c.REPLICA_KIND, "metadata": metadata, "spec": spec},
    )


def test_the_composed_fields_annotation_mints_no_revision_on_a_runners_replica() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25,
    TestComposedFieldsAnnotationIsHashNeutral/runners-based: the ``ome.io/composed-fields`` annotation
    on the replica object never reaches the pod template nor moves the revision hash (a runners
    replica takes its pod-template metadata from its runners)."""
    plain = preview(_runners_replica(None), Catalog(), instances=0).revision
    held = preview(
        _runners_replica({c.ANNOTATION_COMPOSED_FIELDS: "svc:paused"}), Catalog(), instances=0
    ).revision
    assert held.name == plain.name


def test_the_composed_fields_annotation_mints_no_revision_on_a_refs_replica() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/convert_test.go @ 58a57f25,
    TestComposedFieldsAnnotationIsHashNeutral/refs-based: a refs-based replica's render inherits its
    object annotations, and ``hashExcludedAnnotationKeys`` excludes the ``ome.io/composed-fields`` one
    from the hash, so adding it to the replica renders the same revision."""
    plain = preview(gp_replica(name="pool-a", runtime="rt"), _refs_catalog(), instances=0).revision
    annotated = gp_replica(
        name="pool-a", runtime="rt", annotations={c.ANNOTATION_COMPOSED_FIELDS: "svc:paused"}
    )
    held = preview(annotated, _refs_catalog(), instances=0).revision
    assert held.name == plain.name
