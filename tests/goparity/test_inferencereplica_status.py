"""OME's ``inferencereplica/status_test.go``: the status a pass publishes.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/status_test.go`` @ 8263d0c7, the newest of
the stored versions (58a57f25, 141,803 characters; ae683e3f, 94,895; 8263d0c7, 151,304, read whole:
58a57f25's text plus the placement acknowledgement, the label-selector and the withdrawal-record
tests), over ``status.go`` @ 8263d0c7 (``computeReadyCondition``, ``computeRolloutStalledCondition``,
``computeDrainOverdueCondition``, ``irLabelSelectorString``, ``aggregateAndWriteStatus``) and
``workload`` ``TakeInlineV1Publication`` / ``workload/status`` ``CountersForInstance``.

Go calls the condition functions on a hand-built ``InferenceReplicaStatus``; here the same rows and
counters go to the planner's functions that hold each rule (``omereconcile.planner.status``:
``_ready``, ``_stalled``, ``_drain_overdue``; ``omereconcile.planner.counters``), with a real context
built from a simulated replica whose spec carries Go's ``lifecycle``/``pacing``/desired replicas. What
Go asserts end to end through ``Reconcile`` is asserted on the sim's status. The cases with no
counterpart are listed in ``docs/goparity.md``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.counters import ComponentCounters, component_counters, instance_counters
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.planner.rollout import Hold
from omereconcile.planner.rows import RetryBlock
from omereconcile.planner.status import (
    WITHDRAWN_MESSAGE,
    _drain_overdue,
    _effective_hold,
    _ready,
    _stalled,
    build_status,
    current_revision_for,
    record_current_revision_withdrawal,
    withdrawn_revision_after,
    withdrawn_revision_for,
)
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged, rolled_back
from omereconcile.world import DesiredRevision, Endpoints, EndpointView, PodCondition, PodView
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_test.go @ 8263d0c7"
A, B = "rev-a", "rev-b"


def _ctx(**spec: Any) -> Ctx:
    sim = Sim()
    sim.apply_replica(base_replica(**spec))
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _comp(replicas: int, ready: int = 0, serving: int = 0, updated_ready: int = 0) -> ComponentCounters:
    return ComponentCounters(replicas, ready, serving, 0, 0, updated_ready, None)


def _row(index: int, phase: str = R.READY, running: str = "", **kw: Any) -> R.Row:
    return R.Row(index=index, phase=phase, running_revision=running, **kw)


def _rolling(partition: int | None = None, max_unavailable: str | None = None) -> dict[str, Any]:
    ru: dict[str, Any] = {}
    if partition is not None:
        ru["partition"] = partition
    if max_unavailable is not None:
        ru["maxUnavailable"] = max_unavailable
    return {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": ru}}


def _ready_of(
    rows: list[R.Row], comp: ComponentCounters, current: str, update: str, **spec: Any
) -> tuple[str, str, str]:
    """Go ``computeReadyCondition(status, spec.replicas, spec.lifecycle, spec.pacing)``: in flight when
    the update revision is set and differs from the current one."""
    return _ready(_ctx(**spec), rows, comp, update, bool(update) and current != update)


# -- computeReadyCondition ----------------------------------------------------------------------------


def test_ready_true_when_all_ready_rollout_done() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/inferencereplica/status_test.go @ 8263d0c7,
    TestAggregateStatus_ReadyCondition_TrueWhenAllReady_RolloutDone."""
    got = _ready_of([_row(0)], _comp(1, ready=1), A, A, replicas=1)
    assert got[:2] == ("True", "AllInstancesReady")


def test_ready_unknown_during_rollout() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_UnknownDuringRollout."""
    rows = [_row(0, running=B), _row(1, R.UPDATING, A, target_revision=B)]
    got = _ready_of(rows, _comp(2, ready=1, updated_ready=1), A, B, replicas=2)
    assert got[:2] == ("Unknown", "RolloutInProgress")


def test_ready_staged_at_partition() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_StagedAtPartition: True
    Staged at a converged partition, RolloutInProgress while the held Instance still updates."""
    rows = [_row(0, running=B), _row(1, running=B), _row(2, running=A)]
    spec = {"replicas": 3, "pacing": {"partition": 1}}
    got = _ready_of(rows, _comp(3, ready=3, updated_ready=2), A, B, **spec)
    assert got == (
        "True",
        "Staged",
        f"Staged at partition 1: 2/3 Instances on {B}, 1 held on the prior revision",
    )
    rows[2] = _row(2, R.UPDATING, A)
    assert _ready_of(rows, _comp(3, ready=2, updated_ready=2), A, B, **spec)[1] == "RolloutInProgress"


@pytest.mark.parametrize(
    ("pacing", "user", "want"),
    [
        (1, None, ("True", "Staged")),
        (None, 1, ("True", "Staged")),
        (1, 2, ("True", "Staged")),
        (0, 1, ("Unknown", "RolloutInProgress")),
        (2, None, ("Unknown", "RolloutInProgress")),
    ],
)
def test_ready_staged_reads_same_partition_as_plan(
    pacing: int | None, user: int | None, want: tuple[str, str]
) -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_StagedReadsSamePartitionAsPlan
    (its five checks): the pacing partition first, else the user's rolling-update partition."""
    spec: dict[str, Any] = {"replicas": 3}
    if pacing is not None:
        spec["pacing"] = {"partition": pacing}
    if user is not None:
        spec["lifecycle"] = _rolling(partition=user)
    rows = [_row(0, running=B), _row(1, running=B), _row(2, running=A)]
    assert _ready_of(rows, _comp(3, ready=3, updated_ready=2), A, B, **spec)[:2] == want


def test_ready_false_on_stuck() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_FalseOnStuck: serving below
    the strict floor with no rollout in flight."""
    rows = [_row(0, running=A), _row(1, R.PENDING, A)]
    got = _ready_of(rows, _comp(2, ready=1, serving=1), A, A, replicas=2)
    assert got == ("False", "ReplicaCountMismatch", "1/2 Instances serving, need 2 (no rollout in flight)")


def test_ready_true_when_serving_within_budget() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_TrueWhenServingWithinBudget:
    lifecycle maxUnavailable 25% of 10 gives a floor of 7."""
    got = _ready_of(
        [], _comp(10, ready=9, serving=9), A, A, replicas=10, lifecycle=_rolling(max_unavailable="25%")
    )
    assert got == ("True", "MinimumAvailable", "9/10 Instances serving (min 7)")


def test_ready_surge_uses_desired_replica_floor() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_SurgeUsesDesiredReplicaFloor."""
    got = _ready_of(
        [], _comp(32, ready=16, serving=16), A, A, replicas=16, lifecycle=_rolling(max_unavailable="25%")
    )
    assert got == ("True", "MinimumAvailable", "16/32 Instances serving (min 12)")


def test_ready_pacing_budget_does_not_relax_readiness() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_PacingBudgetDoesNotRelaxReadiness."""
    got = _ready_of([], _comp(10, ready=9, serving=9), A, A, replicas=10, pacing={"maxUnavailable": "100%"})
    assert got[:2] == ("False", "ReplicaCountMismatch")


def test_ready_false_on_failed() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_ReadyCondition_FalseOnFailed: a Failed row
    outranks a rollout in flight."""
    got = _ready_of([_row(0), _row(1, R.FAILED)], _comp(2, ready=1), A, B, replicas=2)
    assert got == ("False", "InstanceFailed", "At least one Instance has Phase=Failed")


def test_ready_no_replicas_scaled_to_zero() -> None:
    """Go: … status_test.go @ 8263d0c7, TestReadyCondition_NoReplicas_ScaledToZero."""
    assert _ready_of([], _comp(0), A, A, replicas=1)[:2] == ("False", "NoReplicas")


def test_ready_rollout_outranks_no_replicas() -> None:
    """Go: … status_test.go @ 8263d0c7, TestReadyCondition_RolloutOutranksNoReplicas."""
    assert _ready_of([], _comp(0), A, B, replicas=1)[:2] == ("Unknown", "RolloutInProgress")


def test_ready_failed_outranks_no_replicas() -> None:
    """Go: … status_test.go @ 8263d0c7, TestReadyCondition_FailedOutranksNoReplicas."""
    assert _ready_of([_row(0, R.FAILED)], _comp(0), A, A, replicas=1)[:2] == ("False", "InstanceFailed")


def test_ready_zero_partition_is_not_staged() -> None:
    """Go: … status_test.go @ 8263d0c7, TestReadyCondition_ZeroPartitionIsNotStaged."""
    rows = [_row(0, running=B), _row(1, running=B)]
    got = _ready_of(rows, _comp(2, ready=2, updated_ready=2), A, B, replicas=2, pacing={"partition": 0})
    assert got[:2] == ("Unknown", "RolloutInProgress")


# -- computeRolloutStalledCondition / computeDrainOverdueCondition --------------------------------------


def _failed(reason: str, at: str = "") -> dict[str, Any]:
    return {"reason": reason, **({"time": at} if at else {})}


def _stalled_of(rows: list[R.Row], replicas: int, current: str, update: str) -> tuple[str, str, str]:
    return _stalled(rows, _comp(replicas), update, bool(update) and current != update)


def test_compute_rollout_stalled_condition() -> None:
    """Go: … status_test.go @ 8263d0c7, TestComputeRolloutStalledCondition (its six checks): a failure
    off the target stalls a rollout in flight; a stale failure on an updated Instance, a converged
    rollout, and a failure older than the operation in flight do not; a failure during the operation,
    or with none, does."""
    old = "2025-01-01T00:00:00Z"
    rows = [_row(0, running=B), _row(1, running=A, last_failure=_failed("CrashLoopBackOff"))]
    assert _stalled_of(rows, 3, A, B)[:2] == ("True", "InstancesFailing")
    assert _stalled_of([_row(0, running=B, last_failure=_failed("CrashLoopBackOff"))], 3, A, B)[0] == "False"
    assert _stalled_of([_row(0, running=A, last_failure=_failed("CrashLoopBackOff"))], 3, B, B)[0] == "False"
    later = R.Operation("u", R.OP_UPDATE, "Drain", B, T0 + timedelta(hours=1))
    retrying = _row(1, running=A, last_failure=_failed("DeadlineExceeded", old), operation=later)
    assert _stalled_of([_row(0, running=B), retrying], 3, A, B)[0] == "False"
    earlier = R.Operation("u", R.OP_UPDATE, "Drain", B, T0 - timedelta(minutes=30))
    during = _row(0, running=A, last_failure=_failed("CrashLoopBackOff", old), operation=earlier)
    assert _stalled_of([during], 3, A, B)[0] == "True"
    assert (
        _stalled_of([_row(0, running=A, last_failure=_failed("CrashLoopBackOff", old))], 3, A, B)[0] == "True"
    )


def test_rollout_stalled_no_rollout_ever() -> None:
    """Go: … status_test.go @ 8263d0c7, TestRolloutStalledCondition_NoRolloutEver."""
    rows = [_row(0, last_failure=_failed("CrashLoopBackOff"))]
    assert _stalled_of(rows, 1, "", "") == ("False", "Progressing", "no rollout in flight")


def test_rollout_stalled_multi_reason_summary_sorted() -> None:
    """Go: … status_test.go @ 8263d0c7, TestRolloutStalledCondition_MultiReasonSummarySorted."""
    rows = [
        _row(0, running=A, last_failure=_failed("ErrImagePull")),
        _row(1, running=A, last_failure=_failed("CrashLoopBackOff")),
        _row(2, running=A, last_failure=_failed("CrashLoopBackOff")),
        _row(3, running=B, last_failure=_failed("ErrImagePull")),
    ]
    got = _stalled_of(rows, 4, A, B)
    assert got == (
        "True",
        "InstancesFailing",
        f"3/4 Instance(s) failing rollout to {B} (CrashLoopBackOff x2, ErrImagePull x1)",
    )
    assert _stalled_of(rows, 4, A, B) == got


def test_rollout_stalled_empty_reason_fallback() -> None:
    """Go: … status_test.go @ 8263d0c7, TestRolloutStalledCondition_EmptyReasonFallback."""
    got = _stalled_of([_row(0, running=A, last_failure={})], 1, A, B)
    assert got[0] == "True"
    assert "terminal failure" in got[2]


def test_drain_overdue_counts_deleting_rows_past_their_deadline() -> None:
    """Go: … status_test.go @ 8263d0c7, TestDrainOverdueCondition_CountsDeletingRowsPastTheirDeadline."""
    overdue = _failed("DrainOverdue")
    rows = [
        _row(0, R.DELETING, last_failure=overdue),
        _row(2, R.DELETING, last_failure=overdue),
        _row(3, R.DELETING),
        _row(4, R.FAILED, last_failure=_failed("CrashLoopBackOff")),
    ]
    assert _drain_overdue(rows) == (
        "True",
        "DrainsOverdue",
        "2 Instance(s) draining past their deadline (0, 2)",
    )


def test_drain_overdue_clears_when_no_row_is_overdue() -> None:
    """Go: … status_test.go @ 8263d0c7, TestDrainOverdueCondition_ClearsWhenNoRowIsOverdue: an overdue
    drain is not a rollout failure, and the condition clears once the row is gone."""
    rows = [_row(0, running=B), _row(1, R.DELETING, A, last_failure=_failed("DrainOverdue"))]
    assert _stalled_of(rows, 2, A, B)[0] == "False"
    assert _drain_overdue(rows[:1])[:2] == ("False", "DrainsWithinDeadline")


# -- counters (CountersForInstance, TakeInlineV1Publication) ------------------------------------------


def _pod(index: int, ready: bool, serving: bool, runner: str = c.RUNNER_DEFAULT, **kw: Any) -> PodView:
    name = f"p-{index}-{runner}-{kw.pop('ordinal', 0)}"
    conds = (
        PodCondition("ContainersReady", "True" if ready else "False"),
        PodCondition("Ready", "True" if serving else "False", T0),
        PodCondition(c.SERVING_GATE, "True" if serving else "False"),
    )
    labels = {c.LABEL_INSTANCE_INDEX: str(index), c.LABEL_RUNNER: runner}
    return PodView(
        name=name, uid=name, resource_version="1", labels=labels, phase="Running", conditions=conds, **kw
    )


def _slices(*pods: PodView, ready: bool = True) -> Endpoints:
    return Endpoints(
        {p.name: EndpointView(ready=ready, serving=ready, terminating=False, available=ready) for p in pods},
        slices_seen=True,
    )


def test_publication_observation_stamps_live_pod_state() -> None:
    """Go: … status_test.go @ 8263d0c7, TestPublicationObservation_StampsLivePodState: the counters come
    from the pods, whatever the row's phase says."""
    pod0 = _pod(0, True, True, node_name="node-a")
    pod1 = _pod(1, False, False)
    got0 = instance_counters([pod0], _slices(pod0), timedelta(0), T0)
    got1 = instance_counters([pod1], _slices(), timedelta(0), T0)
    assert (got0.pod_count, got0.ready_pod_count, got0.serving_pod_count, got0.available_pod_count) == (
        1,
        1,
        1,
        1,
    )
    assert (got1.pod_count, got1.ready_pod_count, got1.available_pod_count) == (1, 0, 0)


def test_publication_observation_empty_pod_set() -> None:
    """Go: … status_test.go @ 8263d0c7, TestPublicationObservation_EmptyPodSet: no pods, all zero (a row's
    stale counts are not kept: the overlay replaces them)."""
    got = instance_counters([], _slices(), timedelta(0), T0)
    assert (got.pod_count, got.ready_pod_count, got.serving_pod_count, got.available_pod_count) == (
        0,
        0,
        0,
        0,
    )
    stale = {
        "index": 0,
        "podCount": 1,
        "servingPodCount": 1,
        "availablePodCount": 1,
        "nodesOccupied": ["node-x"],
    }
    overlaid = got.overlay(stale)
    assert (overlaid["podCount"], overlaid["servingPodCount"], overlaid["availablePodCount"]) == (0, 0, 0)
    assert "nodesOccupied" not in overlaid


def test_publication_observation_admitted() -> None:
    """Go: … status_test.go @ 8263d0c7, TestPublicationObservation_Admitted: admitted with pods none of
    which is gated; not while a gate holds one, nor before pods exist."""
    gated = _pod(1, False, False, scheduling_gates=("kueue.x-k8s.io/admission",))
    assert instance_counters([_pod(0, True, True)], _slices(), timedelta(0), T0).admitted
    assert not instance_counters([gated], _slices(), timedelta(0), T0).admitted
    assert not instance_counters([], _slices(), timedelta(0), T0).admitted


def test_publication_counters_derive_from_pods_not_phases() -> None:
    """Go: … status_test.go @ 8263d0c7, TestPublicationCounters_DeriveFromPodsNotPhases (with
    TestAggregateStatus_RecreatePath_ReadyReplicasReflectsLivePods and …OldPodCountsReadyDuringDrain:
    an Updating row whose pod is ContainersReady counts ready)."""
    pods = {0: _pod(0, True, True), 1: _pod(1, False, False), 2: _pod(2, True, True)}
    rows = [_row(0, R.FAILED, B), _row(1, R.READY, B), _row(2, R.READY, A)]
    slices = _slices(pods[0])
    counters = {i: instance_counters([p], slices, timedelta(0), T0) for i, p in pods.items()}
    got = component_counters(rows, counters, {0: 1, 1: 1, 2: 1}, B)
    assert (got.replicas, got.ready, got.serving, got.available, got.updated, got.updated_ready) == (
        3,
        2,
        2,
        1,
        2,
        1,
    )


def test_available_replicas_follow_the_endpoint_slices() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_AvailableReplicas_MatchesReadyWithEndpointSlices
    and TestAggregateStatus_AvailableReplicas_ZeroWhenSliceNotReady: available equals ready once the
    slices publish the pods ready; a ContainersReady pod whose endpoint is not ready is ready, not
    available."""
    pods = [_pod(0, True, True), _pod(1, True, True), _pod(2, False, False)]
    rows = [_row(0), _row(1), _row(2, R.CREATING)]
    slices = _slices(pods[0], pods[1])
    counters = {i: instance_counters([p], slices, timedelta(0), T0) for i, p in enumerate(pods)}
    got = component_counters(rows, counters, {0: 1, 1: 1, 2: 1}, "")
    assert (got.ready, got.available) == (2, 2)
    one = instance_counters([pods[0]], _slices(pods[0], ready=False), timedelta(0), T0)
    alone = component_counters([_row(0)], {0: one}, {0: 1}, "")
    assert (alone.ready, alone.available) == (1, 0)


@pytest.mark.parametrize(
    ("window", "ready_ago", "available", "wake_in"),
    [(20, 5, 0, 15), (20, 30, 1, None), (0, 5, 1, None)],
    ids=[
        "inside the window wakes at the remaining window",
        "past the window schedules nothing",
        "zero window schedules nothing",
    ],
)
def test_wakes_when_min_ready_window_elapses(
    window: int, ready_ago: int, available: int, wake_in: int | None
) -> None:
    """Go: … status_test.go @ 8263d0c7, TestReconcile_WakesWhenMinReadyWindowElapses, subtest as named: a
    Ready pod inside ``minReadySeconds`` is not yet Available and the pass wakes when it will be."""
    now = T0 + timedelta(minutes=5)
    conds = (
        PodCondition("ContainersReady", "True"),
        PodCondition("Ready", "True", now - timedelta(seconds=ready_ago)),
        PodCondition(c.SERVING_GATE, "True"),
    )
    pod = PodView(name="p", uid="p", resource_version="1", labels={}, phase="Running", conditions=conds)
    got = instance_counters([pod], _slices(pod), timedelta(seconds=window), now)
    assert got.available_pod_count == available
    wake = None if got.next_available_at is None else (got.next_available_at - now).total_seconds()
    assert wake == wake_in


# -- status.labelSelector (irLabelSelectorString) ------------------------------------------------------


def _matches(selector: str, labels: dict[str, str]) -> bool:
    """A Kubernetes selector string's equality and set-based ``in`` terms, as the API server reads them."""
    terms, depth, cur = [], 0, ""
    for ch in selector:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    terms.append(cur)
    for term in terms:
        if " in (" in term:
            key, values = term.split(" in (")
            if labels.get(key.strip()) not in values.rstrip(")").split(","):
                return False
        else:
            key, value = term.split("=")
            if labels.get(key) != value:
                return False
    return True


def _selector() -> str:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(converged)
    return str(sim.status["labelSelector"])


@pytest.mark.parametrize(("runner", "want"), [("default", True), ("leader", True), ("worker", False)])
def test_label_selector_matches_one_pod_per_instance(runner: str, want: bool) -> None:
    """Go: … status_test.go @ 8263d0c7, TestIRLabelSelectorStringMatchesOnePodPerInstance, entry
    ``runner``: an HPA multiplies by the Ready pods the selector matches, so it matches the default pod
    and the leader, never a worker. Failed before: the selector matched every runner."""
    pod = {
        "ome.io/inferenceservice": "llama-pool",
        "component": "engine",
        "ome.io/managed-by": "OMENative",
        c.LABEL_RUNNER: runner,
    }
    assert _matches(_selector(), pod) is want


def test_label_selector_for_a_standalone_replica() -> None:
    """Go: … status_test.go @ 8263d0c7, TestIRLabelSelectorStringForAStandaloneReplica: the selector
    keys on the replica's own name, the label its pods carry, not on ``<name>-<component>``."""
    base = {"component": "engine", "ome.io/managed-by": "OMENative", c.LABEL_RUNNER: "default"}
    selector = _selector()
    assert _matches(selector, {**base, "ome.io/inferenceservice": "llama-pool"})
    assert not _matches(selector, {**base, "ome.io/inferenceservice": "llama-pool-engine"})


def test_label_selector_counts_leaders_on_a_gang_replica() -> None:
    """The rule on a live gang replica: the pods the selector matches are one per Instance, the
    leaders (Go's comment on ``irLabelSelectorString`` @ 8263d0c7)."""
    sim = Sim(workers=2)
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    selector = str(sim.status["labelSelector"])
    matched = sorted(n for n, p in sim.pods.items() if _matches(selector, p.obj["metadata"]["labels"]))
    assert len(sim.pods) == 6
    assert matched == ["llama-pool-engine-0-leader-0", "llama-pool-engine-1-leader-0"]


# -- end to end on the sim ------------------------------------------------------------------------------


def _converged(replicas: int = 1) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return sim, driver


@pytest.mark.parametrize(
    "policy",
    ["None", "RecreateInstanceOnPodRestart"],
    ids=["create-owned pod loss publishes Pending", "restart-owned pod loss publishes Pending"],
)
def test_demotes_ready_row_without_pods(policy: str) -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateAndWriteStatus_DemotesReadyRowWithoutPods, entry
    as named: a Ready row whose pod is gone is not published Ready: ``podCount`` 0, its running
    revision and ``readySince`` kept (what a repair rebuilds at), and ``readyReplicas`` 0.

    Go's test drives the status publication alone (``writeStatus`` → ``aggregateAndWriteStatus``), with
    no workload pass before it, and under either policy the publication demotes the row ``Pending``.
    Here one whole pass runs, and in a whole Go reconcile the workload pass comes first: under
    ``RecreateInstanceOnPodRestart`` its restart selection takes the row as observed (Ready, no live
    pod: ``ops/restart.go`` ``DetectRestartTriggerWithPods``, "pod count 0 below desired 1") "ahead of
    the truth pass", and the publication, which demotes "at the end of every pass" (newest
    ``workload/plan_decision.go``, the ``Decision`` comment), finds a row with an operation, which it
    does not demote. So the restart-owned row is published ``Restarting`` (before, this port read the
    entry as a whole pass and expected ``Pending``, which kept the Restart one pass late). Under
    ``None`` the same holds of the Create pass: unpaused, Go's ``Plan`` selects no truth pass ("Create
    both recovers the pods and re-stamps the phase in the same pass") and ``ops/create.go`` commits the
    ``Creating`` intent before creating the pod, so the row is published ``Creating`` with the pod not
    yet observed (before goY ours published ``Pending`` and rebuilt it one pass later)."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, lifecycle={"restartPolicy": policy}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    before = dict(sim.rows()[0])
    sim.pods.pop("llama-pool-engine-0-default-0")
    driver.one_pass()
    row = sim.rows()[0]
    phase = "Creating" if policy == "None" else "Restarting"
    assert (row["phase"], row["podCount"]) == (phase, 0)
    assert (row["runningRevision"], row["readySince"]) == (before["runningRevision"], before["readySince"])
    assert sim.status["readyReplicas"] == 0


def test_conditions_carry_the_observed_generation() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateAndWriteStatus_ObservedGenerationFollowsGeneration,
    TestAggregateStatus_ReadyCondition_ObservedGenerationStamped,
    TestRolloutStalledCondition_ObservedGenerationStamped and
    TestAggregateStatus_ReadyCondition_PersistedToInformerCache: ``observedGeneration`` follows
    ``metadata.generation`` and Ready and RolloutStalled carry it, with a ``lastTransitionTime``."""
    sim, driver = _converged()
    sim.update_spec(minReadySeconds=1)
    driver.run(converged)
    gen = sim.replica["metadata"]["generation"]  # type: ignore[index]
    assert gen == 2
    assert sim.status["observedGeneration"] == gen
    for type_ in ("Ready", "RolloutStalled"):
        cond = sim.condition(type_)
        assert cond is not None
        assert cond["observedGeneration"] == gen
        assert cond["lastTransitionTime"]


def test_preserves_migrations() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_PreservesMigrations: a pass never drops or
    rewrites ``status.migrations``."""
    sim, driver = _converged()
    entry = {"requestUUID": "u-keep", "trigger": "Manual", "sourceInstance": 0, "phase": "Accepted"}
    sim.status["migrations"] = [dict(entry)]
    sim.update_spec(minReadySeconds=1)  # a pass that writes status
    driver.run(converged)
    assert sim.status["migrations"] == [entry]


# -- the CurrentRevisionWithdrawn record (recordCurrentRevisionWithdrawal, withdrawnRevisionFor) ------


PRIOR, NEXT = "llama-engine-aaaaaaaa", "llama-engine-bbbbbbbb"


def _write(status: dict[str, Any], before: str, old_current: str) -> dict[str, Any]:
    """One status write: Go ``recordCurrentRevisionWithdrawal(st, before, oldCurrent)``."""
    after = withdrawn_revision_after(
        before, old_current, str(status.get("currentRevision") or ""), status["updateRevision"]
    )
    return {
        **status,
        "conditions": record_current_revision_withdrawal(status.get("conditions") or [], after, T0),
    }


def _withdrawn() -> dict[str, Any]:
    return _write({"currentRevision": "", "updateRevision": PRIOR}, "", PRIOR)


def _kept() -> dict[str, Any]:
    st = _withdrawn()
    return _write(st, withdrawn_revision_for(st), "")


def _update_moved() -> dict[str, Any]:
    st = _withdrawn()
    before = withdrawn_revision_for(st)
    return _write({**st, "updateRevision": NEXT}, before, "")


def _current_again() -> dict[str, Any]:
    st = _withdrawn()
    before = withdrawn_revision_for(st)
    return _write({**st, "currentRevision": PRIOR}, before, "")


def _never_recorded() -> dict[str, Any]:
    return _write({"updateRevision": PRIOR}, "", "")


@pytest.mark.parametrize(
    ("write", "want"),
    [(_withdrawn, PRIOR), (_kept, PRIOR), (_update_moved, ""), (_current_again, ""), (_never_recorded, "")],
    ids=[
        "the withdrawing write raises the record and reads it back as the update revision",
        "a later write with the pair unchanged keeps it",
        "the write that moves the update revision on removes it",
        "the write that records a current revision again removes it",
        "a current revision that was never recorded is no withdrawal",
    ],
)
def test_current_revision_withdrawal_record(write: Any, want: str) -> None:
    """Go: … status_test.go @ 8263d0c7, TestCurrentRevisionWithdrawalRecord, entry as named. Failed
    before: the planner kept no such record."""
    st = write()
    assert withdrawn_revision_for(st) == want
    cond = next((cd for cd in st["conditions"] if cd["type"] == "CurrentRevisionWithdrawn"), None)
    assert (cond is not None) is bool(want)
    if cond is not None:
        assert (cond["status"], cond["reason"]) == ("True", "InstanceOffRevision")


def test_a_withdrawn_current_revision_is_restored_once_no_instance_is_off_it() -> None:
    """Go ``workload/status/aggregate.go`` ``CurrentRevisionFor`` @ 8263d0c7: a withdrawn current is
    restored to the update revision once no row is off it, whatever the rows read (here one row is
    still Restarting on it), when the record names that revision; with no record, or while a row is
    still off it, it stays withdrawn."""
    book = RetryBook({}, "ns/llama-pool", "engine")
    rows = [_row(0, running=PRIOR), _row(1, R.RESTARTING, PRIOR)]
    assert current_revision_for(rows, "", PRIOR, book, PRIOR) == PRIOR
    assert current_revision_for(rows, "", PRIOR, book, "") == ""
    off = [_row(0, running=PRIOR), _row(1, running=NEXT)]
    assert current_revision_for(off, "", PRIOR, book, PRIOR) == ""
    pinned = [
        _row(0, running=PRIOR),
        _row(1, R.UPDATING, PRIOR, operation=R.Operation("u", R.OP_UPDATE, "Surge", NEXT, T0)),
    ]
    assert current_revision_for(pinned, PRIOR, PRIOR, book, "") == "", "a pin to another revision is off it"


def test_a_rollback_onto_the_prior_revision_records_the_withdrawal() -> None:
    """Go ``status.go`` @ 8263d0c7 ``recordCurrentRevisionWithdrawal`` with ``CurrentRevisionFor``: a
    fleet rolled back from its promoted revision withdraws ``currentRevision`` and says so in the
    ``CurrentRevisionWithdrawn`` condition; lifting the pin rolls the fleet back, promotes again and
    removes the condition."""
    sim, driver = _converged()
    first = sim.status["currentRevision"]
    sim.image = "vllm:v2"
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") not in (None, first))
    second = sim.status["currentRevision"]
    sim.update_spec(pacing={"rollbackToRevision": first})
    driver.run(lambda s: rolled_back(s, first))
    assert "currentRevision" not in sim.status
    cond = sim.condition("CurrentRevisionWithdrawn")
    assert cond is not None
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True",
        "InstanceOffRevision",
        WITHDRAWN_MESSAGE,
    )
    assert "observedGeneration" not in cond
    sim.update_spec(pacing={"rollbackToRevision": None})
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == second)
    assert sim.condition("CurrentRevisionWithdrawn") is None


def test_effective_rollout_hold_a_converged_subject_keeps_the_hold_its_sets_stand_behind() -> None:
    """Go: … status_test.go @ 8263d0c7, TestEffectiveRolloutHold (its converged-subject checks) and
    TestAggregateAndWriteStatus_RolloutHold_ConvergedSubjectPublishesTheHoldItsSetsStandBehind: a roll
    that completed before its promoted sets crashed still stands behind the hold the Update pass
    reports."""
    ctx = _ctx(replicas=1)
    reason = "per-Component unavailability budget 1 exhausted; Instance 0 on revision rev-a not serving"
    book = RetryBook({}, "ns/llama-pool", "engine")
    assert _effective_hold(ctx, Hold("Budget", reason), book) == ("Budget", reason, ctx.target)


# -- the escalation pass, end to end (workload.Reconcile's deadline and stuck-pod backstops) -----------


def _surging_into_a_bad_image(grace: timedelta) -> tuple[Sim, Driver]:
    settings = OperatorSettings(
        stuck_pod_grace_period=grace, update_retry=None, instance_ready_timeout=timedelta(minutes=30)
    )
    sim = Sim(settings=settings)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    return sim, driver


def _passes_for(sim: Sim, driver: Driver, seconds: int) -> None:
    for _ in range(seconds):
        driver.one_pass()
        sim.advance(1.0)


def test_bad_image_surge_escalates_the_instance_to_failed() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_BadImageSurge_EscalatesInstanceToFailed: a
    surge pod in ImagePullBackOff past the stuck-pod grace fails the Instance well before the 30-minute
    readiness deadline; the attempt's operation is cleared, its target revision is Held (no
    ``updateRetry``: fail safe) with the reason, and the old pod keeps serving."""
    sim, driver = _surging_into_a_bad_image(timedelta(seconds=1))
    _passes_for(sim, driver, 20)
    row = sim.rows()[0]
    assert row["phase"] == "Failed"
    assert "operation" not in row
    assert row["lastFailure"]["reason"] == "ImagePullBackOff"
    (block,) = sim.status["retryBlocks"]
    assert (block["targetRevision"], block["state"], block["reason"]) == (
        row["targetRevision"],
        "Held",
        "ImagePullBackOff",
    )
    assert sim.live_pods() == ["llama-pool-engine-0-default-0"]


def test_stuck_pod_within_grace_does_not_escalate() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_StuckPodWithinGrace_NoEscalation: inside a
    60-second grace the same surge keeps its attempt."""
    sim, driver = _surging_into_a_bad_image(timedelta(seconds=60))
    _passes_for(sim, driver, 15)
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["type"], row["operation"]["step"]) == (
        "Updating",
        "Update",
        "Surge",
    )


def test_a_future_deadline_does_not_escalate() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_DeadlineFuture_NoEscalation: a Create whose
    pod never becomes ready stays ``Creating`` while its deadline is ahead."""
    sim = Sim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30), update_retry=None))
    sim.behaviour["vllm:v1"] = "never"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _passes_for(sim, driver, 20)
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["type"]) == ("Creating", "Create")
    assert "lastFailure" not in row


def test_a_paused_instance_parks_its_deadline_and_the_unpause_rearms_it() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_PausedInstance_DeadlineParkedAndRearmed
    (``status.go`` ``reconcileHeldDeadlines``: "pausing holds every in-flight Instance"): while paused,
    neither a crash-looping container nor an elapsed deadline fails the committed Create, and its
    deadline is parked; the unpause (the container recovered meanwhile) re-arms a full window from
    that moment. Failed before: the paused Create was failed on its crash loop."""
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(seconds=30),
        stuck_pod_grace_period=timedelta(seconds=1),
        update_retry=None,
    )
    sim = Sim(settings=settings)
    sim.behaviour["vllm:v1"] = "crash"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _passes_for(sim, driver, 2)  # the finalizer, then the claim and the create
    assert sim.rows()[0]["operation"]["deadline"]
    sim.update_spec(paused=True)
    _passes_for(sim, driver, 60)
    row = sim.rows()[0]
    assert (row["phase"], row["operation"]["type"]) == ("Creating", "Create")
    assert "lastFailure" not in row
    assert "deadline" not in row["operation"]
    pod = sim.pods["llama-pool-engine-0-default-0"]
    pod.behaviour = "never"
    pod.obj["status"]["containerStatuses"] = []
    sim.update_spec(paused=False)
    unpaused_at = sim.now
    driver.one_pass()
    row = sim.rows()[0]
    assert row["phase"] == "Creating"
    assert row["operation"]["deadline"] == (unpaused_at + timedelta(seconds=30)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def _fmt(at: Any) -> str:
    return str(at.strftime("%Y-%m-%dT%H:%M:%SZ"))


def test_an_expired_deadline_fails_the_instance_with_deadline_exceeded() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_DeadlineExpired_EscalatesInstanceToFailed: a
    Creating Instance whose pod exists but stays Pending with no terminal waiting reason (the sim's
    ``pending`` pod: scheduled, its container ``ContainerCreating``), past its operation deadline and
    inside the stuck-pod grace, is failed by the deadline backstop: the operation is cleared (terminal
    disposition, a fresh start next pass), no RetryBlock is recorded, and ``lastFailure`` names
    ``DeadlineExceeded`` (``escalation.DeadlineExceededReason``)."""
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(seconds=30),
        stuck_pod_grace_period=timedelta(seconds=60),
        update_retry=None,
    )
    sim = Sim(settings=settings)
    sim.behaviour["vllm:v1"] = "pending"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _passes_for(sim, driver, 2)
    deadline = sim.rows()[0]["operation"]["deadline"]
    while _fmt(sim.now) <= deadline:
        driver.one_pass()
        assert sim.rows()[0]["phase"] == "Creating"
        sim.advance(1.0)
    driver.one_pass()
    row = sim.rows()[0]
    assert row["phase"] == "Failed"
    assert "operation" not in row
    assert not sim.status.get("retryBlocks")
    assert row["lastFailure"]["reason"] == "DeadlineExceeded"


def test_an_admission_gated_instance_parks_its_deadline_and_is_not_failed() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateStatus_GatedInstance_DeadlineParked_NotEscalated
    (``status.go`` ``reconcileHeldDeadlines`` → ``escalation/deadline.go`` ``ReconcileGatedDeadlines``):
    a Creating Instance whose pod is held by an admission scheduling gate (Kueue) is queued, not stuck:
    its deadline is parked (zeroed) and the backstop never fails it, however long it waits. Once the
    gate is lifted the clock starts from admission (a full window from then) and the Instance comes up.
    Failed before: ours kept the deadline running and failed the queued Instance at it."""
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(seconds=30),
        stuck_pod_grace_period=timedelta(seconds=60),
        update_retry=None,
    )
    sim = Sim(settings=settings)
    sim.behaviour["vllm:v1"] = "gated"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    _passes_for(sim, driver, 120)
    row = sim.rows()[0]
    assert row["phase"] == "Creating"
    assert "lastFailure" not in row
    assert "deadline" not in row["operation"]
    assert row["admitted"] is False
    (name,) = sim.live_pods()
    sim.ungate(name)
    admitted_at = sim.now
    driver.one_pass()
    assert sim.rows()[0]["operation"]["deadline"] == _fmt(admitted_at + timedelta(seconds=30))
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)


def test_a_gang_surge_source_parks_while_its_replacement_queues_for_admission() -> None:
    """Go: … status_test.go @ 8263d0c7, TestReconcileHeldDeadlines_GangSurgeSourceParked: while a gang
    surge's replacement pods (the source's ``surgeIndex`` bucket) carry an admission scheduling gate,
    both the replacement row's deadline (its own pods gated) and the SOURCE's (its attempt lives in
    that bucket) are parked; ours builds the pair in the sim (a one-Instance leader+worker gang rolled to
    an image whose pods Kueue queues). Once the gates are lifted both clocks restart from admission and
    the surge completes. Failed before: only the replacement's deadline was parked."""
    settings = OperatorSettings(
        instance_ready_timeout=timedelta(seconds=60), stuck_pod_grace_period=timedelta(seconds=60)
    )
    sim = Sim(settings=settings, workers=1)
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.behaviour["vllm:v2"] = "gated"
    sim.image = "vllm:v2"
    _passes_for(sim, driver, 90)
    source, marker = sim.rows()
    assert (source["operation"]["step"], source["operation"]["surgeIndex"]) == ("Surge", 1)
    assert marker["operation"]["step"] == "GangSurgeTarget"
    assert "deadline" not in source["operation"]
    assert "deadline" not in marker["operation"]
    for name in [n for n in sim.live_pods() if sim.pods[n].obj["spec"].get("schedulingGates")]:
        sim.ungate(name)
    admitted_at = sim.now
    driver.one_pass()
    source, marker = sim.rows()
    want = _fmt(admitted_at + timedelta(seconds=60))
    assert (source["operation"]["deadline"], marker["operation"]["deadline"]) == (want, want)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)


# -- status.rolloutHold: the RetryBlock projection, Since, and the write contract ---------------------


def _block(state: str, next_retry: Any = None) -> RetryBlock:
    body: dict[str, Any] = {"targetRevision": "bad-rev", "state": state, "attemptsStarted": 2}
    body["reason"] = "ImagePullBackOff"
    if next_retry is not None:
        body["nextRetryAt"] = _fmt(next_retry)
    return RetryBlock.from_dict(body)


def test_compute_retry_block_rollout_hold() -> None:
    """Go: … status_test.go @ 8263d0c7, TestComputeRetryBlockRolloutHold (``computeRetryBlockRolloutHold``,
    ours :meth:`RetryBook.rollout_hold`): a Held block holds (gate ``Held``) with no time bound; a
    Backoff not yet due holds (gate ``RetryBlock``); an elapsed Backoff, a ``RetryInProgress`` block
    and no block for the update revision hold nothing."""
    now = T0 + timedelta(hours=1)

    def hold(block: RetryBlock | None, update: str = "bad-rev") -> tuple[str, str] | None:
        book = RetryBook({} if block is None else {block.target_revision: block}, "ns/r", "engine")
        return book.rollout_hold(update, now)

    held = hold(_block("Held"))
    assert held is not None
    assert held[0] == "Held"
    backoff = hold(_block("Backoff", now + timedelta(minutes=1)))
    assert backoff is not None
    assert backoff[0] == "RetryBlock"
    assert hold(_block("Backoff", now - timedelta(minutes=1))) is None
    assert hold(_block("RetryInProgress")) is None
    assert hold(None, "other-rev") is None


def _in_flight(old_hold: dict[str, Any] | None = None, **spec: Any) -> tuple[Ctx, list[R.Row]]:
    """A replica rolling to its spec revision from ``rev-prior`` (one Instance Ready on the prior
    revision), its persisted status carrying ``old_hold``, as Go's ``RolloutHold`` fixtures."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, **spec))
    assert sim.replica is not None
    status: dict[str, Any] = {"currentRevision": "rev-prior"}
    if old_hold is not None:
        status["rolloutHold"] = old_hold
    sim.replica["status"] = status
    world = sim.observe()
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    ctx = build_context(world, desired, desired.name, None)
    return ctx, [_row(0, R.READY, "rev-prior")]


def _published(ctx: Ctx, rows: list[R.Row], hold: Hold | None, book: RetryBook | None = None) -> Any:
    book = book or RetryBook({}, "ns/llama-pool", "engine")
    return build_status(ctx, rows, {}, hold, frozenset(), book, Out(ctx.now)).get("rolloutHold")


def test_a_rollout_hold_keeps_its_since_across_the_same_gate_and_target() -> None:
    """Go: … status_test.go @ 8263d0c7, TestNextRolloutHold_StableSinceAcrossIdenticalGateTarget
    (``nextRolloutHold``; ours ``planner/status.py`` ``build_status``): a first observation stamps
    ``since`` now; the same gate and target keep the earlier ``since`` while the reason text follows
    the latest observation; a different target or a different gate restarts the clock; no observation
    clears the hold."""
    ctx, rows = _in_flight()
    first = _published(ctx, rows, Hold("Budget", "budget 2 exhausted (would become 3)"))
    assert first == {
        "gate": "Budget",
        "reason": "budget 2 exhausted (would become 3)",
        "target": ctx.target,
        "since": _fmt(ctx.now),
    }
    earlier = _fmt(ctx.now - timedelta(minutes=5))
    ctx, rows = _in_flight({**first, "since": earlier})
    second = _published(ctx, rows, Hold("Budget", "budget 2 exhausted (would become 4)"))
    assert second["since"] == earlier
    assert second["reason"] == "budget 2 exhausted (would become 4)"
    ctx, rows = _in_flight({**first, "since": earlier, "target": "rev-elsewhere"})
    assert _published(ctx, rows, Hold("Budget", "budget 2 exhausted (would become 3)"))["since"] == _fmt(
        ctx.now
    )
    ctx, rows = _in_flight({**first, "since": earlier})
    fourth = _published(ctx, rows, Hold("Sequential", "Sequential waiting on decoder"))
    assert (fourth["gate"], fourth["since"]) == ("Sequential", _fmt(ctx.now))
    ctx, rows = _in_flight({**first, "since": earlier})
    assert _published(ctx, rows, None) is None


def test_a_repeated_identical_denial_writes_nothing_and_progress_clears_it() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateAndWriteStatus_RolloutHold_ChurnSafeAcrossReconciles:
    a fresh denial records the hold with ``since``; a byte-identical repeat publishes the same hold,
    ``since`` untouched (so the status is unchanged and the planner writes nothing,
    ``planner/core.py`` ``_status_write``); forward progress (no denial) clears it."""
    hold = Hold("Budget", "per-Component surge budget 2 exhausted (would become 3)")
    ctx, rows = _in_flight()
    first = _published(ctx, rows, hold)
    assert first is not None
    ctx, rows = _in_flight(first)
    ctx = replace(ctx, now=ctx.now + timedelta(minutes=3))
    assert _published(ctx, rows, hold) == first
    assert _published(ctx, rows, None) is None


def test_a_paused_replica_keeps_reporting_its_held_block_without_a_fresh_since() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateAndWriteStatus_RolloutHold_PausedRetryBlockFallbackChurnSafe:
    while paused no Update pass runs, so the hold is the update revision's RetryBlock (Held); repeated
    paused passes keep reporting it with the first ``since`` (no fresh stamp, nothing to write)."""
    ctx, rows = _in_flight(paused=True)
    block = RetryBlock.from_dict(
        {
            "targetRevision": ctx.spec_revision,
            "state": "Held",
            "attemptsStarted": 2,
            "reason": "ImagePullBackOff",
        }
    )
    book = RetryBook({ctx.spec_revision: block}, "ns/llama-pool", "engine")
    first = _published(ctx, rows, None, book)
    assert first is not None
    assert (first["gate"], first["since"]) == ("Held", _fmt(ctx.now))
    for minutes in (1, 2, 3):
        ctx, rows = _in_flight(first, paused=True)
        ctx = replace(ctx, now=ctx.now + timedelta(minutes=minutes))
        assert _published(ctx, rows, None, book) == first


@pytest.mark.xfail(
    strict=True,
    reason="known difference: Go status.go @ 8263d0c7 effectiveRolloutHold keeps the persisted hold as "
    "written when the Update pass did not run this reconcile (holdObserved=false) and the target carries "
    "no RetryBlock; ours has no 'Update pass ran' signal and clears it (planner/status.py _effective_hold)",
)
def test_a_rollout_hold_stands_across_a_pass_without_the_update_pass() -> None:
    """Go: … status_test.go @ 8263d0c7, TestAggregateAndWriteStatus_RolloutHold_StandsAcrossAPassWithoutTheUpdatePass:
    a Budget hold the Update pass recorded stands — gate, reason, target and ``since`` — across passes
    that never reach the Update pass (a repair, a scale wave), with no RetryBlock to read; only a pass
    that runs the Update pass and sees progress clears it."""
    hold = Hold("Budget", "per-Component surge budget 1 exhausted (would become 2)")
    ctx, rows = _in_flight()
    first = _published(ctx, rows, hold)
    ctx, rows = _in_flight(first)
    assert _published(ctx, rows, None) == first
