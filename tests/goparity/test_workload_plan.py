"""OME's ``workload/plan_test.go``, through the pure planner.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/plan_test.go`` @ 245145f4 (64,826 characters,
the newest of the two stored versions; dcfb4135 holds the first 48,766 without the cordon, failed
gang-surge pair and shrinking-budget tests). The rules under test are Go's ``workload/plan.go``
(``BuildPlan``, ``instancePlanIndices`` and its helpers, ``ResolveInstanceReadyTimeout``; the stored
version carrying ``scaleDownRank``), ``types.AllocateSurgeIndex`` and ``ops.PartitionHeldIndices``.

Go calls ``instancePlanIndices`` on hand-built ``InstanceStatus`` rows; here the same rows go through
``omereconcile.planner.plan_indices.instance_plan_indices``, the function the planner's scale pass
(``planner/rollout.py`` ``_scale``) keeps and retires Instances by. ``BuildPlan``'s projections are
read off the planner's per-pass context (``build_context``) built from the replica as the simulated
world observes it. Migration cases are not mappable (the planner runs no Migrate operation);
``docs/goparity.md`` lists them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang_ops import surge_index_for
from omereconcile.planner.plan_indices import instance_plan_indices, lowest_unused_index, scale_down_extras
from omereconcile.planner.retry import HELD_STATE, RetryBlock, RetryBook
from omereconcile.planner.rollout import partition_held
from omereconcile.planner.rows import Operation, Row
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision

GO = "ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4"
OLD, NEW = "comp-rev-oldbbbb", "comp-rev-newaaaa"
V1, V2 = "comp-rev-v1aaaaaa", "comp-rev-v2bbbbbb"


def _book(*held: str) -> RetryBook:
    return RetryBook(
        {rev: RetryBlock(rev, HELD_STATE, 1, T0, T0, None, "x") for rev in held}, "ns/n", "engine"
    )


def _op(type_: str = R.OP_UPDATE, step: str = "", surge: int | None = None, target: str = "") -> Operation:
    return Operation(f"{type_.lower()}-op", type_, step, target, T0, surge_index=surge)


def _row(
    index: int,
    phase: str,
    running: str = "",
    target: str = "",
    op: Operation | None = None,
    incarnation: int = 0,
    pods: int = 0,
    serving: int = 0,
    ordinal: int = 0,
) -> Row:
    """Go's ``InstanceStatus`` literal: an unset Incarnation is 0 there, so it is 0 here too."""
    return Row(
        index=index,
        incarnation=incarnation,
        phase=phase,
        running_revision=running,
        target_revision=target,
        operation=op,
        pod_count=pods,
        serving_pod_count=serving,
        active_ordinal=ordinal,
    )


def _plan(
    rows: list[Row], replicas: int, blocks: RetryBook | None = None, cordoned: tuple[int, ...] = ()
) -> list[int]:
    return instance_plan_indices(rows, replicas, blocks or _book(), cordoned)


def _ctx(settings: OperatorSettings | None = None, workers: int = 0, **spec: Any) -> Ctx:
    sim = Sim(workers=workers, settings=settings or OperatorSettings())
    sim.apply_replica(base_replica(**spec))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _first_rows(workers: int = 0, **spec: Any) -> Sim:
    """The sim after the passes that first write Instance rows (the first pass stamps the finalizer
    and the revision)."""
    sim = Sim(workers=workers)
    sim.apply_replica(base_replica(**spec))
    Driver(sim).run(lambda s: bool(s.rows()))
    return sim


def _first_pass_rows(**spec: Any) -> list[dict[str, Any]]:
    return _first_rows(**spec).rows()


# -- BuildPlan --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "want"),
    [pytest.param(None, 1, id="unresolved zero retains fallback"), pytest.param(2, 2, id="positive count")],
)
def test_explicit_zero_replicas(replicas: int | None, want: int) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestExplicitZeroReplicas, "unresolved zero retains fallback" and "positive count": the plan's
    replica count and its initial Instances. (The ``allowZero`` and negative entries are not
    mappable: a standalone replica has no zero floor and the CRD refuses a negative count.)"""
    spec = {} if replicas is None else {"replicas": replicas}
    assert _ctx(**spec).desired == want
    assert [r["index"] for r in _first_pass_rows(**spec)] == list(range(want))


def test_build_plan_multi_pod_emits_leader_worker_runners() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_MultiPodEmitsLeaderWorkerRunners: two Instances, indices 0 and 1, each a leader of
    size 1 and a worker runner of size 3."""
    sim = _first_rows(workers=3, replicas=2)
    assert sim.observe().instance_shape == (("leader", 1), ("worker", 3))
    assert [r["index"] for r in sim.rows()] == [0, 1]
    assert sorted(sim.live_pods()) == sorted(
        f"llama-pool-engine-{i}-{runner}-{k}"
        for i in (0, 1)
        for runner, k in (("leader", 0), ("worker", 0), ("worker", 1), ("worker", 2))
    )


def test_build_plan_multi_pod_defaults() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_MultiPodDefaults: a multi-pod Instance restarts by RecreateInstanceOnPodRestart
    (``restartPolicyOrDefault``); a single-pod one by None. The AllPodReady ready policy has no field
    here: a gang serves only when every member does (``planner/gang.py`` ``gang_serving``)."""
    assert _ctx(workers=1).restart_policy == "RecreateInstanceOnPodRestart"
    assert _ctx().restart_policy == "None"


def test_build_plan_projects_paused_circuit_breaker() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_ProjectsPausedCircuitBreaker: ``paused`` reaches the plan."""
    assert _ctx(workers=1, paused=True).paused
    assert not _ctx(workers=1).paused


def test_build_plan_single_pod_defaults_from_defaulter() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_SinglePod_DefaultsFromDefaulter: a lifecycle spelled out in full is carried as
    written: restart None, InPlaceIfPossible with markNotReadyDuringLifecycle, a 30-minute readiness
    window, migration Auto; two Instances at incarnation 1."""
    lifecycle = {
        "restartPolicy": "None",
        "readyPolicy": "None",
        "updateStrategy": {
            "type": "InPlaceIfPossible",
            "inPlaceUpdateStrategy": {"markNotReadyDuringLifecycle": True},
        },
        "instanceReadyTimeout": "30m",
        "migrationPolicy": {"mode": "Auto"},
    }
    ctx = _ctx(replicas=2, lifecycle=lifecycle)
    assert (ctx.desired, ctx.restart_policy, ctx.strategy) == (2, "None", "InPlaceIfPossible")
    assert ctx.mark_not_ready
    assert ctx.ready_timeout == timedelta(minutes=30)
    assert ctx.migration_mode == "Auto"
    assert [(r["index"], r["incarnation"]) for r in _first_pass_rows(replicas=2, lifecycle=lifecycle)] == [
        (0, 1),
        (1, 1),
    ]


def test_build_plan_single_pod_inline_defaults_when_webhook_skipped() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_SinglePod_InlineDefaultsWhenWebhookSkipped: an empty lifecycle plans one Instance,
    restart None, SurgeThenDrain, markNotReadyDuringLifecycle true, no readiness window of its own
    (the operator's, unset here, is the only other source) and migration Auto (an unset mode is Auto:
    ``relocation.migration_mode_allows``)."""
    ctx = _ctx()
    assert (ctx.desired, ctx.restart_policy, ctx.strategy) == (1, "None", "SurgeThenDrain")
    assert ctx.mark_not_ready
    assert ctx.ready_timeout is None
    assert (ctx.migration_mode or "Auto") == "Auto"


@pytest.mark.parametrize(
    ("replicas", "want"),
    [
        pytest.param(None, 1, id="nil MinReplicas defaults to 1"),
        pytest.param(0, 1, id="zero MinReplicas defaults to 1"),
        pytest.param(1, 1, id="explicit 1"),
        pytest.param(4, 4, id="explicit 4"),
    ],
)
def test_build_plan_replica_count(replicas: int | None, want: int) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_ReplicaCount: the count, indices 0..n-1, one ``default`` pod each."""
    spec = {} if replicas is None else {"replicas": replicas}
    assert _ctx(**spec).desired == want
    sim = _first_rows(**spec)
    assert [r["index"] for r in sim.rows()] == list(range(want))
    assert sorted(sim.live_pods()) == [f"llama-pool-engine-{i}-default-0" for i in range(want)]


@pytest.mark.parametrize(
    "entry",
    ["TestBuildPlan_IncarnationDefaultsToOneOnFirstReconcile", "TestBuildPlan_IncarnationScopedToWorkload"],
)
def test_build_plan_incarnation_defaults_to_one(entry: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_IncarnationDefaultsToOneOnFirstReconcile (three Instances) and
    TestBuildPlan_IncarnationScopedToWorkload (one; the status is the replica's own): with no
    Instance statuses every Instance starts at incarnation 1."""
    n = 3 if entry.endswith("FirstReconcile") else 1
    assert [r["incarnation"] for r in _first_pass_rows(replicas=n)] == [1] * n


def test_build_plan_incarnation_preserved_from_status() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_IncarnationPreservedFromStatus: incarnations 4 and 2 in the status are read back,
    not reset to 1 (the live pods carry the same incarnations, so nothing is rebuilt)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    for row, inc in zip(sim.status["instanceStatuses"], (4, 2), strict=True):
        row["incarnation"] = inc
        sim.pods[f"llama-pool-engine-{row['index']}-default-0"].obj["metadata"]["labels"][
            "ome.io/instance-incarnation"
        ] = str(inc)
    p = driver.one_pass()
    assert {r["index"]: r["incarnation"] for r in sim.rows()} == {0: 4, 1: 2}
    assert p.actions == () or all(type(a).__name__ != "DeletePod" for a in p.actions)


def test_build_plan_restart_policy_explicit_wins_over_default() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_RestartPolicyExplicitWinsOverDefault: a single-pod replica naming
    RecreateInstanceOnPodRestart gets it over the None default."""
    assert _ctx(lifecycle={"restartPolicy": "RecreateInstanceOnPodRestart"}).restart_policy == (
        "RecreateInstanceOnPodRestart"
    )


def test_build_plan_carries_min_ready_seconds() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestBuildPlan_CarriesMinReadySeconds: 20 is carried; unset is 0. (Go's clamp of a negative value
    has no counterpart: the CRD's ``minimum: 0`` refuses it.)"""
    assert _ctx(minReadySeconds=20).min_ready == timedelta(seconds=20)
    assert _ctx().min_ready == timedelta(0)


@pytest.mark.parametrize(
    ("spec", "configured", "want"),
    [
        pytest.param("5m", 30, 5, id="spec wins over config"),
        pytest.param("5m", 0, 5, id="spec alone"),
        pytest.param(None, 30, 30, id="config covers an unset spec"),
        pytest.param(None, 0, 0, id="neither is set"),
        pytest.param("0s", 30, 30, id="non-positive spec falls through to config"),
    ],
)
def test_resolve_instance_ready_timeout(spec: str | None, configured: int, want: int) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestResolveInstanceReadyTimeout: the replica's ``lifecycle.instanceReadyTimeout`` wins over the
    operator's ``instanceReadyTimeout`` setting, which covers a replica that sets none; neither is no
    window (Go's 0, ``None`` here)."""
    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=configured) if configured else None)
    replica_spec: dict[str, Any] = {"lifecycle": {"instanceReadyTimeout": spec}} if spec else {}
    got = _ctx(settings=settings, **replica_spec).ready_timeout
    assert got == (timedelta(minutes=want) if want else None)


# -- instancePlanIndices ----------------------------------------------------------------------------


def test_lowest_unused_index() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestLowestUnusedIndex: {0, 1, 3} → 2; empty → 0 (the scale-up's new index)."""
    assert lowest_unused_index({0, 1, 3}) == 2
    assert lowest_unused_index(set()) == 0


def test_allocate_surge_index() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestAllocateSurgeIndex: {0, 1, 3} → 2; none → 0; and a slot an in-flight surge claims
    (``operation.surgeIndex`` 2, no row there yet) is taken, so the next surge lands at 3."""
    assert surge_index_for([Row(index=0), Row(index=1), Row(index=3)], set()) == 2
    assert surge_index_for([], set()) == 0
    in_flight = [Row(index=0, operation=_op(surge=2)), Row(index=1)]
    assert surge_index_for(in_flight, set()) == 3


def test_gang_surge_pins_pair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangSurgePinsPair: source 0 (surge→3), Ready sibling 1 and replacement 3
    are all kept at two replicas."""
    rows = [
        _row(0, R.UPDATING, op=_op(step=R.STEP_SURGE, surge=3)),
        _row(1, R.READY),
        _row(3, R.CREATING, op=_op(step=R.STEP_GANG_SURGE_TARGET)),
    ]
    assert set(_plan(rows, 2)) >= {0, 1, 3}


def test_gang_cleanup_marker_pinned_while_referenced() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangCleanupMarkerPinnedWhileReferenced: a cleanup marker a live source
    names stays; a failed source with its marker loses the one slot to a Ready sibling and both are
    the scale-down's extras; a failed pair with nothing better is kept whole; an unreferenced marker
    falls out."""
    referenced = [
        _row(0, R.UPDATING, running=V1, op=_op(step=R.STEP_SURGE, surge=1)),
        _row(1, R.CREATING, op=_op(step=R.STEP_GANG_SURGE_TARGET_CLEANUP)),
    ]
    assert set(_plan(referenced, 1)) >= {0, 1}
    failed_behind_ready = [
        _row(0, R.FAILED, running=V1, target=V2, op=_op(step=R.STEP_SURGE, surge=2, target=V2)),
        _row(1, R.READY, running=V1),
        _row(2, R.FAILED, op=_op(step=R.STEP_GANG_SURGE_TARGET_CLEANUP, target=V2)),
    ]
    assert _plan(failed_behind_ready, 1) == [1]
    assert scale_down_extras(failed_behind_ready, [1]) == [0, 2]
    failed_alone = [failed_behind_ready[0], failed_behind_ready[2]]
    assert _plan(failed_alone, 1) == [0, 2]
    orphan = [
        _row(0, R.READY, running=V1),
        _row(1, R.CREATING, op=_op(step=R.STEP_GANG_SURGE_TARGET_CLEANUP)),
    ]
    assert _plan(orphan, 1) == [0]


def _failed_source(index: int, surge: int) -> Row:
    return _row(index, R.FAILED, running=V1, target=V2, op=_op(step=R.STEP_SURGE, surge=surge, target=V2))


def _failed_marker(index: int) -> Row:
    return _row(index, R.FAILED, op=_op(step=R.STEP_GANG_SURGE_TARGET, target=V2))


_MARKER_ABOVE = [_failed_source(0, 2), _row(1, R.READY, running=V1), _failed_marker(2)]
_MARKER_BELOW = [
    _row(0, R.READY, running=V1),
    _failed_marker(1),
    _row(2, R.READY, running=V1),
    _failed_source(3, 1),
]


@pytest.mark.parametrize(
    ("rows", "replicas", "want"),
    [
        pytest.param(_MARKER_ABOVE, 1, [1], id="one slot goes to the Ready sibling"),
        pytest.param(_MARKER_ABOVE, 2, [0, 1, 2], id="two slots keep the pair whole behind the sibling"),
        pytest.param(_MARKER_ABOVE, 3, [0, 1, 2, 3], id="the slot past the pair is a new index"),
        pytest.param(_MARKER_BELOW, 2, [0, 2], id="a marker below its source is never picked on its own"),
        pytest.param(_MARKER_BELOW, 3, [0, 1, 2, 3], id="a marker below its source follows it in"),
    ],
)
def test_failed_gang_surge_pair_follows_its_source(rows: list[Row], replicas: int, want: list[int]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_FailedGangSurgePairFollowsItsSource (each entry): a failed gang surge
    pair moves as one through the steady budget, behind the Ready rows."""
    assert _plan(rows, replicas) == want


def test_orphan_gang_surge_marker_unpinned() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_OrphanGangSurgeMarkerUnpinned: a marker no source names falls out; the
    same marker stays while a live source names it."""
    marker = _row(1, R.FAILED, op=_op(step=R.STEP_GANG_SURGE_TARGET))
    assert _plan([_row(0, R.READY, running=V1), marker], 1) == [0]
    source = _row(0, R.UPDATING, running=V1, op=_op(step=R.STEP_SURGE, surge=1))
    assert set(_plan([source, marker], 1)) >= {0, 1}


@pytest.mark.parametrize(("step", "want"), [(R.STEP_SURGE, [0, 1, 2]), (R.STEP_SURGE_DRAIN, [0, 2])])
def test_gang_surge_ready_target_requires_drain_proof(step: str, want: list[int]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangSurgeReadyTargetRequiresDrainProof (one test, two assertions): a Ready
    occupant of the claimed index does not retire a source still at Surge; at SurgeDrain it does."""
    rows = [
        _row(0, R.READY, running=NEW, incarnation=1),
        _row(1, R.UPDATING, running=OLD, target=NEW, op=_op(step=step, surge=0, target=NEW)),
        _row(2, R.READY, running=NEW),
    ]
    assert _plan(rows, 2) == want


_VALID_SOURCE = _row(
    0, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=2, target=NEW)
)
_VALID_TARGET = _row(2, R.READY, running=NEW, incarnation=1)


def _with(row: Row, **changes: Any) -> Row:
    return replace(row, **changes)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        pytest.param(_VALID_SOURCE, _with(_VALID_TARGET, incarnation=2), id="target incarnation"),
        pytest.param(_VALID_SOURCE, _with(_VALID_TARGET, active_ordinal=1), id="target active ordinal"),
        pytest.param(_VALID_SOURCE, _with(_VALID_TARGET, running_revision=OLD), id="target running revision"),
        pytest.param(_VALID_SOURCE, _with(_VALID_TARGET, operation=_op()), id="target operation"),
        pytest.param(_VALID_SOURCE, _with(_VALID_TARGET, target_revision=NEW), id="target revision pin"),
        pytest.param(_with(_VALID_SOURCE, phase=R.FAILED), _VALID_TARGET, id="source phase"),
        pytest.param(_with(_VALID_SOURCE, running_revision=""), _VALID_TARGET, id="source running revision"),
        pytest.param(_with(_VALID_SOURCE, target_revision=""), _VALID_TARGET, id="source target revision"),
        pytest.param(
            _with(_VALID_SOURCE, target_revision="comp-rev-other"), _VALID_TARGET, id="source revision pin"
        ),
    ],
)
def test_gang_surge_source_requires_promoted_target_proof(source: Row, target: Row) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangSurgeSourceRequiresPromotedTargetProof (each entry): one field short of
    ``updateHandoffPromoted``'s proof keeps the source, the Creating sibling and the target."""
    rows = [source, _row(1, R.CREATING, running=OLD), target]
    assert _plan(rows, 2) == [0, 1, 2]


def test_gang_surge_retiring_source_does_not_displace_steady_instance() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangSurgeRetiringSourceDoesNotDisplaceSteadyInstance: a source whose
    replacement 8 is promoted leaves the plan without taking a steady row's slot, and it alone is
    the scale-down's extra."""
    rows = [
        _row(0, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=8, target=NEW)),
        *(_row(i, R.READY, running=OLD) for i in range(1, 7)),
        _row(7, R.CREATING, target=OLD),
        _row(8, R.READY, running=NEW, incarnation=1),
    ]
    plan = _plan(rows, 8)
    assert plan == [1, 2, 3, 4, 5, 6, 7, 8]
    assert scale_down_extras(rows, plan) == [0]


def test_concurrent_retiring_sources_do_not_displace_steady_instances() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_ConcurrentRetiringSourcesDoNotDisplaceSteadyInstances."""
    rows = [
        _row(0, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=8, target=NEW)),
        _row(1, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=9, target=NEW)),
        *(_row(i, R.READY, running=OLD) for i in range(2, 6)),
        _row(6, R.CREATING, target=OLD),
        _row(7, R.CREATING, target=OLD),
        _row(8, R.READY, running=NEW, incarnation=1),
        _row(9, R.READY, running=NEW, incarnation=1),
    ]
    assert _plan(rows, 8) == [2, 3, 4, 5, 6, 7, 8, 9]


def test_shared_update_target_keeps_all_participants() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_SharedUpdateTargetKeepsAllParticipants: a target two sources name proves
    neither handoff (``updateHandoffPromoted`` wants one reference)."""
    rows = [
        _row(0, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=3, target=NEW)),
        _row(1, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=3, target=NEW)),
        _row(2, R.CREATING, target=OLD),
        _row(3, R.READY, running=NEW, incarnation=1),
    ]
    assert _plan(rows, 3) == [0, 1, 2, 3]


def _healthy(index: int, pods: int) -> Row:
    return _row(index, R.READY, pods=pods, serving=pods)


_SINGLE_OUT = _row(0, R.READY, pods=1, serving=0)
_GANG_OUT = _row(0, R.READY, pods=2, serving=1)


@pytest.mark.parametrize(
    ("rows", "replicas", "want"),
    [
        pytest.param(
            [_SINGLE_OUT, _healthy(1, 1), _healthy(2, 1), _healthy(3, 1)],
            3,
            [1, 2, 3],
            id="single pod out of rotation, down by one",
        ),
        pytest.param(
            [_SINGLE_OUT, _healthy(1, 1), _healthy(2, 1), _healthy(3, 1)],
            2,
            [1, 2],
            id="single pod out of rotation, down by two",
        ),
        pytest.param(
            [_GANG_OUT, _healthy(1, 2), _healthy(2, 2), _healthy(3, 2)],
            3,
            [1, 2, 3],
            id="gang with a member out of rotation, down by one",
        ),
        pytest.param(
            [_GANG_OUT, _healthy(1, 2), _healthy(2, 2), _healthy(3, 2)],
            2,
            [1, 2],
            id="gang with a member out of rotation, down by two",
        ),
        pytest.param(
            [_healthy(0, 1), _row(1, R.READY, pods=1, serving=0), _healthy(2, 1), _healthy(3, 1)],
            2,
            [0, 2],
            id="the healthy rows keep the lowest indices among themselves",
        ),
        pytest.param(
            [_SINGLE_OUT, _healthy(1, 1)],
            2,
            [0, 1],
            id="a row out of rotation is kept when no healthy row fills the budget",
        ),
    ],
)
def test_ready_row_out_of_rotation_leaves_before_a_healthy_one(
    rows: list[Row], replicas: int, want: list[int]
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_ReadyRowOutOfRotationLeavesBeforeAHealthyOne (each entry)."""
    assert _plan(rows, replicas) == want


def _c_healthy(index: int) -> Row:
    return _row(index, R.READY, running="rev-a", pods=1, serving=1)


def _c_out(index: int) -> Row:
    return _row(index, R.READY, running="rev-a", pods=1, serving=0)


def _c_pending(index: int) -> Row:
    return _row(index, R.PENDING, running="rev-a", pods=1)


_SERVING_ON_HELD = _row(1, R.READY, running="rev-held", pods=1, serving=1)


@pytest.mark.parametrize(
    ("rows", "held", "cordoned", "replicas", "want"),
    [
        pytest.param(
            [_c_healthy(0), _c_out(1), _c_healthy(2), _c_healthy(3)],
            (),
            (0,),
            3,
            [1, 2, 3],
            id="a healthy cordoned row leaves before a row with a pod out of rotation",
        ),
        pytest.param(
            [_c_healthy(0), _c_pending(1)],
            (),
            (0,),
            1,
            [1],
            id="a healthy cordoned row leaves before a Pending row",
        ),
        pytest.param(
            [_c_healthy(0), _SERVING_ON_HELD],
            ("rev-held",),
            (0,),
            1,
            [1],
            id="a healthy cordoned row leaves before a serving row on a failing revision",
        ),
        pytest.param(
            [_c_healthy(0), _c_pending(1), _c_healthy(2), _c_healthy(3)],
            (),
            (0,),
            2,
            [2, 3],
            id="the rows without a cordoned node keep their order",
        ),
        pytest.param(
            [_c_healthy(0), _c_pending(1), _c_healthy(2), _c_healthy(3)],
            (),
            (0, 1, 2),
            2,
            [0, 3],
            id="the cordoned rows keep their order among themselves",
        ),
        pytest.param(
            [_c_healthy(0), _c_healthy(1)],
            (),
            (0,),
            2,
            [0, 1],
            id="a cordoned row is kept when the other rows do not fill the budget",
        ),
    ],
)
def test_cordoned_rows_leave_first(
    rows: list[Row], held: tuple[str, ...], cordoned: tuple[int, ...], replicas: int, want: list[int]
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_CordonedRowsLeaveFirst (each entry), on the function the scale pass
    uses (the scale pass reads the cordon in ``rollout._cordoned``)."""
    assert _plan(rows, replicas, _book(*held), cordoned) == want


@pytest.mark.parametrize(
    ("cordoned", "want"),
    [
        pytest.param(
            (3,), [0, 1, 2], id="neither half cordoned: the pair is kept over the cordoned Ready row"
        ),
        pytest.param((2, 3), [1, 3], id="the marker cordoned: the pair leaves"),
        pytest.param((0, 3), [1, 3], id="the source cordoned: the pair leaves"),
    ],
)
def test_failed_gang_surge_pair_cordoned_by_either_half(cordoned: tuple[int, ...], want: list[int]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_FailedGangSurgePairCordonedByEitherHalf (each entry)."""
    rows = [
        _failed_source(0, 2),
        _row(1, R.READY, running=V1),
        _failed_marker(2),
        _row(3, R.READY, running=V1),
    ]
    assert _plan(rows, 2, cordoned=cordoned) == want


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param(
            [_row(0, R.READY), _row(1, R.CREATING), _row(2, R.READY)], id="Ready Instance keeps priority"
        ),
        pytest.param(
            [_row(0, R.CREATING), _row(1, R.CREATING), _row(2, R.READY)],
            id="oldest non-Ready Instance remains the fallback",
        ),
    ],
)
def test_non_retiring_selection_controls(rows: list[Row]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_NonRetiringSelectionControls (each entry): {0, 2} at two replicas."""
    assert _plan(rows, 2) == [0, 2]


def test_single_pod_surge_not_pinned_as_pair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_SinglePodSurgeNotPinnedAsPair: a single-pod surge (no surgeIndex) plans
    exactly its own index."""
    assert _plan([_row(0, R.UPDATING, op=_op(step=R.STEP_SURGE))], 1) == [0]


def test_replica_drop_keeps_gang_surge_pair() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_ReplicaDropKeepsGangSurgePair: at one replica the in-flight pair stays
    and the Ready sibling goes."""
    rows = [
        _row(0, R.UPDATING, target=V2, op=_op(step=R.STEP_SURGE, surge=3, target=V2)),
        _row(1, R.READY),
        _row(3, R.CREATING, target=V2, op=_op(step=R.STEP_GANG_SURGE_TARGET, target=V2)),
    ]
    assert _plan(rows, 1) == [0, 3]


@pytest.mark.parametrize(
    "target",
    [
        pytest.param(
            _row(0, R.READY, running="comp-rev-otherccc"), id="target promoted on a different revision"
        ),
        pytest.param(
            _row(0, R.READY, running=NEW, op=_op(step=R.STEP_GANG_SURGE_TARGET, target=NEW)),
            id="target still carrying an operation",
        ),
        pytest.param(_row(0, R.READY, running=NEW, target=NEW), id="target with a pending TargetRevision"),
        pytest.param(_row(0, R.CREATING, running=NEW), id="target not yet Ready"),
    ],
)
def test_gang_surge_drain_release_demands_exact_target_proof(target: Row) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangSurgeDrainReleaseDemandsExactTargetProof (each entry). Go leaves the
    targets' Incarnation unset (0), which alone fails the proof; here they are at incarnation 1, so
    the named field is what fails it."""
    target = _with(target, incarnation=1)
    source = _row(
        1, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=0, target=NEW)
    )
    assert _plan([target, source, _row(2, R.READY, running=NEW)], 2) == [0, 1, 2]


def test_gang_surge_drain_missing_target_keeps_source_pinned() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangSurgeDrainMissingTargetKeepsSourcePinned: the source stays and the
    dangling claim (index 5) does not appear in the plan."""
    source = _row(
        1, R.UPDATING, running=OLD, target=NEW, op=_op(step=R.STEP_SURGE_DRAIN, surge=5, target=NEW)
    )
    assert _plan([source], 1) == [1]


def test_occupied_referenced_target_stays_pinned() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_OccupiedReferencedTargetStaysPinned: a claim naming an occupied index
    keeps source and occupant, at two replicas and at one (then the unreferenced sibling goes)."""
    rows = [
        _row(0, R.UPDATING, target=NEW, op=_op(step=R.STEP_SURGE, surge=1, target=NEW)),
        _row(1, R.READY, running="comp-rev-otherccc"),
        _row(2, R.READY, running=NEW),
    ]
    assert _plan(rows, 2) == [0, 1, 2]
    assert _plan(rows, 1) == [0, 1]


def test_shrinking_budget_retires_the_open_recreate_first() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_ShrinkingBudgetRetiresTheOpenRecreateFirst: the row a recreate holds open
    (Update at Drain, serving nothing) goes before either Ready row."""
    rows = [
        _row(0, R.UPDATING, running="v1", op=_op(step=R.STEP_DRAIN, target="v2")),
        _row(1, R.READY, running="v1", pods=1, serving=1),
        _row(2, R.READY, running="v1", pods=1, serving=1),
    ]
    assert _plan(rows, 2) == [1, 2]
    assert _plan(rows, 1) == [1]
    assert _plan(rows, 3) == [0, 1, 2]


# -- PartitionHeldIndices ---------------------------------------------------------------------------

_TARGET = "owner-engine-target"


@pytest.mark.parametrize(
    ("partition", "rows", "want"),
    [
        pytest.param(
            0,
            [_row(0, R.READY, running="old"), _row(1, R.READY, running="old")],
            set(),
            id="nil partition holds nothing",
        ),
        pytest.param(
            2,
            [_row(i, R.READY, running="old") for i in range(3)],
            {0, 1},
            id="lowest old-revision Instances held, count = Partition",
        ),
        pytest.param(
            1,
            [_row(0, R.READY, running=_TARGET), _row(1, R.READY, running="old")],
            {1},
            id="on-target Instance is past holding; hold keys to revision, not position",
        ),
        pytest.param(
            1,
            [_row(0, R.UPDATING, running="old", op=_op(step=R.STEP_SURGE)), _row(1, R.READY, running="old")],
            {1},
            id="mid-update Instance must finish — hold falls to next old-revision Instance",
        ),
        pytest.param(
            2,
            [
                _row(0, R.CREATING, op=_op(step=R.STEP_GANG_SURGE_TARGET)),
                _row(1, R.FAILED, running="old", op=_op(step=R.STEP_DRAIN)),
                _row(2, R.READY, running="old"),
            ],
            {2},
            id="Failed Update continuation and gang-surge target marker are never held",
        ),
        pytest.param(
            2, [_row(1, R.READY, running="old")], {1}, id="unobserved planned Instances are not candidates"
        ),
    ],
)
def test_partition_held_indices(partition: int, rows: list[Row], want: set[int]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestPartitionHeldIndices (six of its eight entries; the parked attempt and the migration surge
    are not mappable), on ``planner/rollout.py`` ``partition_held``, the hold the pass applies."""
    assert partition_held(rows, partition, _TARGET) == want


# -- the scale pass, end to end ---------------------------------------------------------------------


def test_scale_pass_retires_the_failed_gang_surge_pair_before_a_ready_sibling() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/plan_test.go @ 245145f4,
    TestInstancePlanIndices_GangCleanupMarkerPinnedWhileReferenced ("a failed pair loses the one slot
    to the Ready sibling and leaves together"), through the planner's scale pass: at one replica the
    failed source is deleted and the Ready sibling kept. (Before: a surge source was pinned whatever
    its phase, so the Ready sibling was deleted.)"""
    sim = Sim(workers=1)
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    rev = sim.status["currentRevision"]
    rows = {r["index"]: r for r in sim.status["instanceStatuses"]}
    rows[0].update(
        phase="Failed",
        targetRevision=rev,
        operation={
            "id": "u-0",
            "type": "Update",
            "step": "Surge",
            "targetRevision": rev,
            "surgeIndex": 2,
            "startedAt": "2026-01-01T00:00:00Z",
        },
    )
    sim.update_spec(replicas=1)
    driver.one_pass()
    by_index = {r["index"]: r for r in sim.rows()}
    assert by_index[0]["phase"] == "Deleting"
    assert by_index[1]["phase"] == "Ready"
