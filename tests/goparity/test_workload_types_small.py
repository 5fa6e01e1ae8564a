"""Small ``workload/types`` tests of OME: the NodeUnknown record, the pass's wake-up, the instance key.

Go (ome-projects/ome, each the one stored version, read whole): ``types/nodeunknown_test.go`` @
dcfb4135 (``NodeUnknownTermination``, ``PodPhaseUnknown``), ``types/passwake_test.go`` @ dcfb4135
(``PassWake``) and ``types/events_test.go`` @ dcfb4135 (``RecordNormal`` / ``RecordWarning``,
``InstanceKey``). Ours: ``planner/holds.py`` ``_node_unknown_evidence``, :class:`omereconcile.world.PodView`,
:class:`omereconcile.planner.out.Out` and ``Ctx.instance_key``. The tests with no counterpart are
listed in ``docs/goparity.md``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from omereconcile.planner.holds import _node_unknown_evidence
from omereconcile.planner.out import Out
from omereconcile.world import PodView
from tests.goparity.reconciler_world import one_replica_ctx

CREATED = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def test_pod_phase_unknown() -> None:
    """Go: nodeunknown_test.go @ dcfb4135, TestPodPhaseUnknown: a Running pod is reported, phase Unknown
    is not (Go's nil pod has no counterpart)."""
    assert PodView("p", "u", "1", {}, phase="Running").phase != "Unknown"
    assert PodView("p", "u", "1", {}, phase="Unknown").phase == "Unknown"


def test_the_node_unknown_record_is_stable_across_observations() -> None:
    """Go: nodeunknown_test.go @ dcfb4135, TestNodeUnknownTerminationIsStableAcrossObservations: the
    record's moment is the pod's creation, two observations agree, the message names the quiet node,
    and an unscheduled pod names ``<unbound>`` (Go's nil pod has no counterpart)."""
    ctx = one_replica_ctx()
    pod = PodView(
        "svc-engine-0", "u", "1", {}, phase="Unknown", node_name="node-a", creation_timestamp=CREATED
    )
    first, second = _node_unknown_evidence(ctx, pod), _node_unknown_evidence(ctx, pod)
    assert first == second
    assert first["time"] == "2026-03-04T05:06:07Z"
    assert "node-a" in str(first["message"])
    unbound = _node_unknown_evidence(ctx, PodView("p", "u", "1", {}, phase="Unknown"))
    assert "<unbound>" in str(unbound["message"])


def test_the_pass_wakes_on_the_earliest_interval() -> None:
    """Go: passwake_test.go @ dcfb4135, TestPassWake_KeepsTheEarliestInterval: of 30 s, 5 s and 10 s the
    pass wakes in 5 s."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    out = Out(now)
    for seconds in (30, 5, 10):
        out.wake(now + timedelta(seconds=seconds))
    assert out.requeue_after() == 5.0


def test_events_carry_their_type_and_reason() -> None:
    """Go: events_test.go @ dcfb4135, TestRecordNormalAndWarning_EmitOnceWithTheTypedReason: one Normal
    and one Warning event, each once, with its typed reason and message."""
    out = Out(datetime(2026, 1, 1, tzinfo=UTC))
    out.event("Normal", "InstanceReady", "ready 3")
    out.event("Warning", "InstanceRejected", "rejected quota")
    got = [(e.type, e.event_reason, e.message) for e in out.events]
    assert got == [("Normal", "InstanceReady", "ready 3"), ("Warning", "InstanceRejected", "rejected quota")]


def test_one_instance_key_shape_for_every_emitter() -> None:
    """Go: events_test.go @ dcfb4135, TestInstanceKey_OneShapeForEveryEmitter."""
    assert one_replica_ctx().instance_key(2) == "component=engine instance=2"
