"""OME's ``workload/ops/update_gang_test.go``: the gang surge's abandon, promote, claim and drain window.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_gang_test.go`` @ 58a57f25 (130,086
characters, read whole: the largest of the five stored versions; ae683e3f, 31,981 characters, read in
part, is its early text), over ``ops/update_gang.go`` ``gangSurgeUpdate`` and ``abandonFailedGangSurge``
and ``workload/status`` ``StartGangSurge``. By 58a57f25 the file also carries the tests of
``update_gang_terminal_cleanup_test.go`` and ``update_gang_podgroup_test.go``; those are counted in their
own rows. Ours: a leader+worker replica (one Instance) rolled in the simulated world, the abandon's
ladder on ``planner/retry.py`` ``RetryBook.failure`` (the gang abandon's writer), and one planner pass
over a seeded world for the claim.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.actions import WriteStatus
from omereconcile.planner import plan
from omereconcile.planner.out import Out
from omereconcile.planner.retry import RetryBook
from omereconcile.settings import ForceDeletePolicy, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, converged
from omereconcile.world import DesiredRevision, LedgerView, format_time, parse_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25"
T0 = datetime.fromisoformat("2026-07-23T12:00:00+00:00")
TARGET = "gang-a-engine-badrev"
POLICY = RetryPolicy(
    max_attempts=3, initial_delay=timedelta(minutes=1), max_delay=timedelta(minutes=30), multiplier=2
)


def _ready(**spec: Any) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.workers = 1
    lifecycle = {"updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}}
    sim.apply_replica(base_replica(replicas=1, lifecycle=lifecycle, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim, driver


def _target(sim: Sim) -> str:
    render = sim.render()
    assert isinstance(render, DesiredRevision)
    return render.name


def _row(sim: Sim, index: int = 0) -> dict[str, Any]:
    return next(r for r in sim.rows() if r["index"] == index)


def _live(sim: Sim, prefix: str) -> list[str]:
    return sorted(
        n
        for n, p in sim.pods.items()
        if n.startswith(prefix) and not p.obj["metadata"].get("deletionTimestamp")
    )


# -- the abandon of a failed gang surge ------------------------------------------------------------


def test_abandon_failed_gang_surge_deletes_stale_pods_then_resets_the_source() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestAbandonFailedGangSurge_DeletesStalePodsFirst, …_ResetsSourceAfterPodsGone and
    …_RecordsRetryBlockWithPolicy: a gang surge whose replacement never pulls its image fails; the
    abandon first deletes the replacement gang's pods while the source stays Failed with its
    operation, and only once they are gone resets the source (Ready on its running revision, no
    operation, no target revision kept on the surge) and drops the replacement's row; the failed
    revision's block is recorded (Backoff, one attempt, the pod's evidence). Go's writer-ordering check
    (no block write before the reset's own write) is about its separate status writes: ours records
    the block with the failure, in the pass's one status write, and is not compared here."""
    sim, driver = _ready()
    v1 = _row(sim)["runningRevision"]
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.worker_behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    v2 = _target(sim)
    seen_failed_with_pods = False
    for _ in range(4000):
        driver.one_pass()
        row = _row(sim)
        if row["phase"] == "Failed" and _live(sim, "llama-pool-engine-1-"):
            seen_failed_with_pods = True
            assert row.get("operation"), (GO, "reset before the replacement's pods were gone")
        if seen_failed_with_pods and row["phase"] == "Ready":
            break
        sim.advance(0.5)
    assert seen_failed_with_pods, (GO, sim.rows())
    row = _row(sim)
    assert (row["phase"], row.get("operation"), row["runningRevision"]) == ("Ready", None, v1), GO
    assert not row.get("targetRevision"), (GO, "source TargetRevision: want cleared")
    assert [r["index"] for r in sim.rows()] == [0], GO
    assert _live(sim, "llama-pool-engine-1-") == [], GO
    block = next(b for b in sim.status["retryBlocks"] if b["targetRevision"] == v2)
    assert (block["state"], block["attemptsStarted"]) == ("Backoff", 1), (GO, block)
    assert "ImagePullBackOff" in block["reason"], (GO, block)


def _book() -> RetryBook:
    return RetryBook({}, "test-ns/gang-a", "engine", POLICY)


def _held(out: Out) -> list[str]:
    return [e.message for e in out.events if e.event_reason == "RetryHeld"]


@pytest.mark.parametrize(
    "reason",
    [
        pytest.param("ImagePullBackOff", id="WorkloadCausedWavesHold"),
        pytest.param("DeadlineExceeded", id="WavesHoldAtMaxAttempts deadline"),
        pytest.param("CrashLoopBackOff", id="WavesHoldAtMaxAttempts crash loop"),
    ],
)
def test_abandon_waves_hold_at_max_attempts(reason: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestAbandonFailedGangSurge_WorkloadCausedWavesHold and TestAbandonFailedGangSurge_WavesHoldAtMaxAttempts
    (each subtest): every abandoned wave counts on the one ladder, workload-caused or not: Backoff at
    ``now + NextRetryDelay(wave)`` with no warning, the gate admitting the next attempt when due, and
    Held with one RetryHeld Warning at MaxAttempts (3)."""
    book = _book()
    for wave in range(1, POLICY.max_attempts + 1):
        out = Out(T0)
        book.failure(TARGET, reason, T0, out)
        block = book.blocks[TARGET]
        assert block.attempts_started == wave, GO
        if wave < POLICY.max_attempts:
            assert (block.state, _held(out)) == ("Backoff", []), GO
            assert block.next_retry_at == T0 + POLICY.initial_delay * (POLICY.multiplier ** (wave - 1)), GO
            assert book.gate(TARGET, block.next_retry_at) == (None, None), GO
            book.started(TARGET)
            continue
        assert (block.state, block.next_retry_at) == ("Held", None), GO
        assert len(_held(out)) == 1, GO


def test_abandon_scheduler_hold_records_no_block() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestAbandonFailedGangSurge_SchedulerHoldRecordsNoBlock: a replacement gang the scheduler never
    placed is the environment's failure: however many waves, no block and no Held warning."""
    book = _book()
    for _ in range(POLICY.max_attempts + 1):
        out = Out(T0)
        book.failure(TARGET, "Unschedulable", T0, out)
        assert TARGET not in book.blocks, GO
        assert _held(out) == [], GO


# -- the promote, the superseded abandon, the drain window ------------------------------------------


def test_gang_surge_promote_emits_completed_event() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestGangSurge_PromoteEmitsCompletedEvent: the pass that promotes the replacement gang records
    ``RecreateUpdateCompleted`` once and no ``RecreateUpdateStarted``."""
    sim, driver = _ready()
    sim.image = "vllm:v2"
    target = _target(sim)
    for _ in range(400):
        events = len(sim.events)
        driver.one_pass()
        fresh = [e.event_reason for e in sim.events[events:]]
        if "RecreateUpdateCompleted" in fresh:
            assert fresh.count("RecreateUpdateCompleted") == 1, GO
            assert "RecreateUpdateStarted" not in fresh, GO
            break
        sim.advance(0.5)
    else:
        raise AssertionError("the gang surge never promoted")
    driver.run(lambda s: converged(s) and s.status.get("currentRevision") == target)


@pytest.mark.parametrize(
    ("superseded", "kind"),
    [
        pytest.param(False, "Warning", id="failed abandon warns"),
        pytest.param(True, "Normal", id="supersede abandon is normal"),
    ],
)
def test_abandon_failed_gang_surge_event_reasons(superseded: bool, kind: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestAbandonFailedGangSurge_EventReasons (each subtest): an abandon records one
    ``GangSurgeAbandoned``, a Warning after a failure and Normal when a newer revision superseded the
    surge, and never ``RecreateUpdateStarted``."""
    sim, driver = _ready()
    sim.behaviour["vllm:v2"] = "never" if superseded else "imagepull"
    sim.worker_behaviour["vllm:v2"] = "never" if superseded else "imagepull"
    sim.image = "vllm:v2"
    driver.one_pass()
    started = sim.event_reasons().count("RecreateUpdateStarted")
    if superseded:
        sim.image = "vllm:v3"
    for _ in range(4000):
        sim.advance(0.5)
        driver.one_pass()
        if any(e.event_reason == "GangSurgeAbandoned" for e in sim.events):
            break
    abandoned = [e for e in sim.events if e.event_reason == "GangSurgeAbandoned"]
    assert [e.type for e in abandoned] == [kind], (GO, [(e.type, e.message) for e in abandoned])
    assert sim.event_reasons().count("RecreateUpdateStarted") == started, GO


def test_gang_surge_holds_source_drain_for_min_ready_seconds() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestGangSurgeUpdate_HoldsSourceDrainForMinReadySeconds: a PodReady replacement gang inside its
    ``minReadySeconds`` window (20 s) leaves every source pod serving (the source at step Surge); after
    the window the source gang leaves rotation."""
    sim, driver = _ready(minReadySeconds=20)
    sim.image = "vllm:v2"
    driver.run(lambda s: s.gate_of("llama-pool-engine-0-leader-0") == "False")
    ready = [
        parse_time(
            next(cd for cd in sim.pods[n].obj["status"]["conditions"] if cd["type"] == "Ready")[
                "lastTransitionTime"
            ]
        )
        for n in ("llama-pool-engine-1-leader-0", "llama-pool-engine-1-worker-0")
    ]
    assert None not in ready
    available = max(t for t in ready if t is not None) + timedelta(seconds=20)
    off = [
        t
        for t, a in applied(driver, "SetServingGate")
        if a.name.startswith("llama-pool-engine-0-") and not a.status
    ]  # type: ignore[attr-defined]
    assert off, GO
    assert min(off) >= available, (GO, min(off), available)


# -- the claim -------------------------------------------------------------------------------------


def test_start_gang_surge_claims_pair_in_one_write() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestStartGangSurge_ClaimsPairInOneWrite: the gang surge's start claims the source (step Surge with
    its surge index) and the replacement's marker row in one status write, and flips the target's due
    Backoff block to RetryInProgress in that same write."""
    sim, _ = _ready()
    sim.image = "vllm:v2"
    world = sim.observe()
    world = replace(world, now=world.now.replace(microsecond=0))
    target = _target(sim)
    status = dict(world.replica.status)
    status["retryBlocks"] = [
        {
            "targetRevision": target,
            "state": "Backoff",
            "attemptsStarted": 1,
            "nextRetryAt": format_time(world.now - timedelta(seconds=1)),
            "reason": "ImagePullBackOff",
        }
    ]
    world = replace(world, replica=replace(world.replica, status=status))
    out = plan(world)
    writes = [a for a in out.actions if isinstance(a, WriteStatus)]
    assert len(writes) == 1, GO
    rows = {r["index"]: r for r in writes[0].status["instanceStatuses"]}
    source = rows[0]
    assert (source["operation"]["step"], source["operation"].get("surgeIndex")) == ("Surge", 1), (GO, source)
    assert rows[1]["operation"]["step"] == "GangSurgeTarget", (GO, rows[1])
    blocks = {b["targetRevision"]: b for b in writes[0].status["retryBlocks"]}
    assert blocks[target]["state"] == "RetryInProgress", GO


def test_abandon_failed_gang_surge_abandon_grace_bounds_unserved_members() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestAbandonFailedGangSurge_AbandonGraceBoundsUnservedMembers: an abandoned replacement gang whose
    leader is in rotation and whose worker never carried the serving gate (Go's fixture; ours gates
    every member, so the worker's condition is removed): the first abandon pass takes the leader out of
    rotation and deletes nothing; the next deletes both, the leader that served with its own grace, the
    never-served worker with ``abandonedReplacementGrace`` (7 s). Ours: superseded by v3 while the
    replacement waits out ``minReadySeconds``."""
    sim, driver = _ready(minReadySeconds=600)
    sim.settings = replace(sim.settings, abandoned_replacement_grace=timedelta(seconds=7))
    leader, worker = "llama-pool-engine-1-leader-0", "llama-pool-engine-1-worker-0"
    sim.image = "vllm:v2"
    for _ in range(200):
        driver.one_pass()
        if sim.gate_of(leader) == "True":
            break
        sim.advance(0.5)
    assert sim.gate_of(leader) == "True", sim.rows()
    pod = sim.pods[worker].obj
    pod["status"]["conditions"] = [cd for cd in pod["status"]["conditions"] if cd["type"] != c.SERVING_GATE]
    sim.image = "vllm:v3"
    passes = []
    for _ in range(8):
        p = driver.one_pass()
        acts = [a for a in p.actions if isinstance(a, (A.DeletePod, A.SetServingGate))]
        if acts:
            passes.append(acts)
        if any(isinstance(a, A.DeletePod) and a.name == leader for a in acts):
            break
        sim.advance(0.5)
    first, second = passes[0], passes[1]
    assert [(type(a).__name__, a.name) for a in first] == [("SetServingGate", leader)], (GO, first)
    deletes = {a.name: a.grace_period_seconds for a in second if isinstance(a, A.DeletePod)}
    assert deletes == {leader: None, worker: 7}, (GO, second)
    assert not sim.violations, sim.violations


def _quiet_gang_member(force: bool) -> Any:
    """Go's ``quietGangSurgeFixture``: a gang surge in flight whose replacement gang (index 1) holds
    only its leader, gone quiet (phase Unknown, no conditions) on a node the cluster does not have;
    with ``force`` the operator's force-delete policy (2 min slack, 5 min unreachable threshold)."""
    sim, driver = _ready()
    sim.behaviour["vllm:v2"] = "never"
    sim.worker_behaviour["vllm:v2"] = "never"
    sim.image = "vllm:v2"
    leader = "llama-pool-engine-1-leader-0"
    for _ in range(40):
        driver.one_pass()
        if leader in sim.pods:
            break
        sim.advance(0.5)
    assert leader in sim.pods, sim.rows()
    world = sim.observe()
    pods = tuple(
        replace(p, node_name="node-gone", phase="Unknown", conditions=()) if p.name == leader else p
        for p in world.pods
        if not p.name.startswith("llama-pool-engine-1-worker-")
    )
    policy = ForceDeletePolicy(timedelta(minutes=2), timedelta(minutes=5)) if force else None
    return replace(world, pods=pods, settings=replace(world.settings, force_delete=policy))


def _status_after(world: Any, out: Any) -> dict[str, Any]:
    writes = [a for a in out.actions if isinstance(a, WriteStatus)]
    return dict(writes[-1].status if writes else world.replica.status)


def _assert_source_untouched(world: Any, out: Any, *, held: bool = False) -> None:
    row = next(r for r in _status_after(world, out)["instanceStatuses"] if r["index"] == 0)
    before = next(r for r in world.replica.status["instanceStatuses"] if r["index"] == 0)
    assert (row["phase"], (row.get("operation") or {}).get("step")) == ("Updating", "Surge"), (GO, row)
    if not held:
        assert row.get("lastFailure") == before.get("lastFailure"), (GO, row)


def test_gang_surge_unknown_member_swept_on_proven_node_death() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestGangSurgeUpdate_UnknownMemberSweptOnProvenNodeDeath: with a force-delete policy and the
    member's node provably gone, the pass force-deletes the quiet member and creates nothing; the
    next pass rebuilds the whole replacement gang under the surge index; the source row keeps its
    surge at step Surge, no failure stamped on it."""
    world = _quiet_gang_member(force=True)
    out = plan(world)
    assert [a.name for a in out.actions if isinstance(a, A.ForceDeletePod)] == [
        "llama-pool-engine-1-leader-0"
    ], (
        GO,
        out.actions,
    )
    assert not [a for a in out.actions if isinstance(a, A.CreatePod)], (GO, out.actions)
    _assert_source_untouched(world, out)
    after = replace(
        world,
        pods=tuple(p for p in world.pods if not p.name.startswith("llama-pool-engine-1-")),
        replica=replace(world.replica, status=_status_after(world, out)),
    )
    again = plan(after)
    created = sorted(a.name for a in again.actions if isinstance(a, A.CreatePod))
    assert created == ["llama-pool-engine-1-leader-0", "llama-pool-engine-1-worker-0"], (GO, again.actions)
    _assert_source_untouched(after, again)


def test_gang_surge_unknown_member_held_without_force_delete_policy() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestGangSurgeUpdate_UnknownMemberHeldWithoutForceDeletePolicy: with no force-delete policy the
    quiet member keeps its name: it is not deleted and the rest of the gang is not created around it;
    the source row keeps its surge (Updating, step Surge). Go's "no LastFailure on the source" reads
    only ``gangSurgeUpdate``'s writes; the wait is reported by the hold pass (``holds/nodeunknown.go``),
    which ours runs in the same planner pass (``waiting: NodeUnknown``, the member on ``lastFailure``
    of the row that owns the operation), so ``lastFailure`` is not compared here."""
    world = _quiet_gang_member(force=False)
    out = plan(world)
    touched = [a.name for a in out.actions if isinstance(a, (A.DeletePod, A.ForceDeletePod, A.CreatePod))]
    assert touched == [], (GO, out.actions)
    _assert_source_untouched(world, out, held=True)


def _not_in_hosts(pod: dict[str, Any]) -> set[str]:
    terms = (
        ((pod.get("spec") or {}).get("affinity") or {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", {})
        .get("nodeSelectorTerms", [])
    )
    return {
        v
        for term in terms
        for e in term.get("matchExpressions", [])
        if e.get("key") == "kubernetes.io/hostname" and e.get("operator") == "NotIn"
        for v in e.get("values", [])
    }


def test_gang_surge_inherits_excluded_nodes() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_gang_test.go @ 58a57f25,
    TestGangSurge_InheritsExcludedNodes: the replacement gang's pods render with the source Instance's
    node exclusions for the target revision as required hostname NotIn terms: the exclusions follow the
    Instance through the surge. Ours: the relocation ledger holds two exclusions for Instance 0 at the
    target (``lifecycle.autoMigrate`` allowing them), the surge stamped on a prior pass (source
    Updating at step Surge, the marker at index 1) and the replacement's pods not there yet: the pass
    creates them."""
    sim, driver = _ready()
    sim.image = "vllm:v2"
    target = _target(sim)
    driver.one_pass()  # the surge is stamped (source and marker) on a prior pass
    assert _row(sim)["operation"]["surgeIndex"] == 1, sim.rows()
    world = sim.observe()
    world = replace(world, pods=tuple(p for p in world.pods if not p.name.startswith("llama-pool-engine-1-")))
    entries = tuple(
        {
            "requestUUID": f"auto-{node}",
            "component": "engine",
            "sourceInstance": 0,
            "phase": "Completed",
            "reason": "AutoRecover",
            "fromNode": node,
            "revision": target,
            "startedAt": format_time(world.now),
            "completedAt": format_time(world.now),
            "outcome": "relocate-recreate",
        }
        for node in ("node-bad-1", "node-bad-2")
    )
    world = replace(
        world,
        ledger=LedgerView(exists=True, resource_version="1", entries=entries),
        settings=replace(world.settings, auto_migrate_max_attempts=3),
    )
    created = [a for a in plan(world).actions if isinstance(a, A.CreatePod)]
    assert sorted(a.name for a in created) == [
        "llama-pool-engine-1-leader-0",
        "llama-pool-engine-1-worker-0",
    ], (
        GO,
        created,
    )
    for a in created:
        assert {"node-bad-1", "node-bad-2"} <= _not_in_hosts(a.pod), (GO, a.name, _not_in_hosts(a.pod))
