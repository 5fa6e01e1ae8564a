"""OME's ``workload/types/apirejection_dispose_test.go``: a permanent rejection ends the attempt.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/types/apirejection_dispose_test.go`` @ ae683e3f (the
one stored version, read whole), over ``types/apirejection_dispose.go`` ``DisposeAPIRejection``. Ours:
``planner/rejection.py`` ``dispose_rejection`` on the row the executor recorded the rejection on
(``operation.waiting: InvalidPodSpec``, ``lastFailure`` with the API server's words), charging the
target's block in ``planner/retry.py`` ``RetryBook`` (no ``updateRetry`` policy: held at once).

Not mappable (3): ``NonPermanentIsNoOp`` (the transient classes never reach the planner: the executor
classifies the write's answer), ``BlameWithheld`` (a migration surge; no Migrate operation here) and
``FallsBackToUpdateRevision`` (an unpinned Create: every operation ours starts names its target).
``PermanentEnvironment`` is ported on the ``NamespaceTerminating`` record (the executor records it on a
create refused with that status cause, ``rejection.create_rejection_reason``).
"""

from __future__ import annotations

from dataclasses import replace

from omereconcile.planner import rows as R
from omereconcile.planner.out import Out
from omereconcile.planner.rejection import INVALID_POD_SPEC, NAMESPACE_TERMINATING, dispose_rejection
from omereconcile.planner.retry import RetryBook
from tests.goparity.reconciler_world import attempt_row, one_replica_ctx

GO = "ome-projects/ome pkg/controller/v1beta1/workload/types/apirejection_dispose_test.go @ ae683e3f"
MESSAGE = 'Pod "engine-0-default-0" is invalid: spec.containers[0].resources.limits: Invalid value: "-1"'


def test_a_permanent_workload_rejection_fails_the_instance_and_holds_the_revision() -> None:
    """Go: apirejection_dispose_test.go @ ae683e3f, TestDisposeAPIRejection_PermanentWorkload: the
    target revision is held (a nil policy exhausts at once) and the Instance is Failed with its
    operation cleared, ``lastFailure`` carrying the API server's message."""
    ctx = one_replica_ctx()
    row = attempt_row(
        R.OP_CREATE, "CreatePods", R.CREATING, waiting=INVALID_POD_SPEC, target="own-engine-badspec"
    )
    row = replace(
        row, last_failure={"reason": INVALID_POD_SPEC, "message": MESSAGE, "time": "2026-08-03T09:00:00Z"}
    )
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    out = Out(ctx.now)
    after = dispose_rejection(ctx, row, "engine-0-default-0", out, book)
    assert (after.phase, after.operation) == (R.FAILED, None)
    assert after.last_failure is not None
    assert (after.last_failure["reason"], after.last_failure["message"]) == (INVALID_POD_SPEC, MESSAGE)
    assert list(book.blocks) == ["own-engine-badspec"]
    assert book.blocks["own-engine-badspec"].state == "Held"


def test_a_permanent_environment_rejection_fails_the_instance_and_blames_no_revision() -> None:
    """Go: apirejection_dispose_test.go @ ae683e3f, TestDisposeAPIRejection_PermanentEnvironment: a
    namespace-terminating refusal is not the revision's fault: the Instance is Failed with its operation
    cleared and ``lastFailure`` reason ``NamespaceTerminating``, and no retry block is written."""
    ctx = one_replica_ctx()
    message = "unable to create new content in namespace prod because it is being terminated"
    row = attempt_row(
        R.OP_CREATE, "CreatePods", R.CREATING, waiting=NAMESPACE_TERMINATING, target="own-engine-good"
    )
    row = replace(
        row,
        last_failure={"reason": NAMESPACE_TERMINATING, "message": message, "time": "2026-08-03T09:00:00Z"},
    )
    book = RetryBook({}, "llama-demo/llama-pool", "engine")
    out = Out(ctx.now)
    after = dispose_rejection(ctx, row, "engine-0-default-0", out, book)
    assert (after.phase, after.operation) == (R.FAILED, None), GO
    assert after.last_failure is not None, GO
    assert after.last_failure["reason"] == NAMESPACE_TERMINATING, GO
    assert book.blocks == {}, GO
