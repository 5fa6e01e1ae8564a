"""OME's ``workload/ops/create_test.go``: the Create pass — fresh Instances, promotion, corrective edits
during a Create, the RecreateInstance defer, scale-up beside a roll.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/create_test.go``, the newest of its stored
versions (175,220 characters, read whole; the commit is not named by the index; 9177c1b0 is an earlier
one of 50,507 characters, its text contained in the newer one), over ``ops/create.go`` ``Create`` and
``CreateFreshIndices``. Go drives ``ops.Create`` against a fake client holding the pods and the
replica's status it seeds; ours builds the same state in the simulated world (``omereconcile.simulate``)
— the replica brought up, edited, its status rows or pods set as Go seeds them — and runs one pure
planner pass (``planner.plan``), asserting on the pass's pod writes and the status it writes. Go's
requeue cadences are the operator's; ours wakes on the watch, so a requeue is asserted only where Go
names a wait the pass itself must schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.actions import (
    CreatePod,
    DeletePod,
    ForceDeletePod,
    Plan,
    RecordEvent,
    SetServingGate,
    WriteStatus,
)
from omereconcile.planner import plan
from omereconcile.planner.quota import quota_blocked_message, record_capacity_refusal
from omereconcile.planner.rejection import create_rejection_reason, record_rejection
from omereconcile.settings import ForceDeletePolicy, OperatorSettings
from omereconcile.simulate.cluster import Conflict, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, parse_time
from omerender import constants as c

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/create_test.go (newest stored version)"
POD0 = "llama-pool-engine-0-default-0"
LEADER = "llama-pool-engine-0-leader-0"
WORKER = "llama-pool-engine-0-worker-0"
RECREATE = "RecreateInstanceOnPodRestart"


def _sim(workers: int = 0, **kw: Any) -> Sim:
    settings = OperatorSettings(instance_ready_timeout=timedelta(minutes=30))
    return Sim(settings=settings, workers=workers, **kw)


def _applied(sim: Sim, replicas: int = 1, **spec: Any) -> Driver:
    """The replica applied and its first pass run (the teardown finalizer; nothing else yet)."""
    sim.apply_replica(base_replica(replicas=replicas, **spec))
    driver = Driver(sim)
    first = driver.one_pass()
    assert [type(a).__name__ for a in first.actions] == ["AddFinalizer"]
    sim.advance(0.5)
    return driver


def _world(sim: Sim) -> World:
    world = sim.observe()
    return replace(world, now=world.now.replace(microsecond=0))


def _target(world: World) -> str:
    assert isinstance(world.render, DesiredRevision)
    return world.render.name


def _status(out: Plan, world: World) -> dict[str, Any]:
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    return dict(written[-1].status) if written else dict(world.replica.status)


def _rows(out: Plan, world: World) -> dict[int, dict[str, Any]]:
    return {r["index"]: r for r in _status(out, world).get("instanceStatuses") or []}


def _created(out: Plan) -> list[str]:
    return [a.name for a in out.actions if isinstance(a, CreatePod)]


def _deleted(out: Plan) -> list[str]:
    return [a.name for a in out.actions if isinstance(a, DeletePod)]


def _events(out: Plan, reason: str) -> list[RecordEvent]:
    return [a for a in out.actions if isinstance(a, RecordEvent) and a.event_reason == reason]


def _seed_rows(sim: Sim, rows: list[dict[str, Any]]) -> None:
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"] = rows


def _cond(sim: Sim, name: str, type_: str) -> bool:
    conds = sim.pods[name].obj["status"].get("conditions", [])
    return any(c["type"] == type_ and c["status"] == "True" for c in conds)


# -- fresh Instances -------------------------------------------------------------------------------


def test_empty_cluster_creates_pods() -> None:
    """Go: TestCreate_EmptyClusterCreatesPodsAndRequeues: two replicas on an empty cluster: one pass
    creates ``…-0-default-0`` and ``…-1-default-0`` at incarnation 1, and both rows are ``Creating``
    under a Create operation whose deadline lies after its start (InstanceReadyTimeout threaded)."""
    sim = _sim()
    _applied(sim, 2)
    world = _world(sim)
    out = plan(world)
    assert sorted(_created(out)) == ["llama-pool-engine-0-default-0", "llama-pool-engine-1-default-0"], GO
    for a in out.actions:
        if isinstance(a, CreatePod):
            assert a.pod["metadata"]["labels"]["ome.io/instance-incarnation"] == "1", GO
    rows = _rows(out, world)
    assert sorted(rows) == [0, 1], GO
    for row in rows.values():
        op = row.get("operation") or {}
        assert (row["phase"], row["incarnation"], op.get("type")) == ("Creating", 1, "Create"), GO
        assert parse_time(op["deadline"]) > parse_time(op["startedAt"]), GO


def test_all_pods_exist_but_not_ready_holds_creating() -> None:
    """Go: TestCreate_AllPodsExistButNotReady_HoldsCreating: the pod stands but is not ready: the pass
    creates nothing more and the Instance stays ``Creating``."""
    sim = _sim()
    _applied(sim).one_pass()
    sim.advance(1)  # created and running, not ContainersReady yet (the sim's start-up takes 5 s)
    assert POD0 in sim.pods
    assert not _cond(sim, POD0, "ContainersReady")
    world = _world(sim)
    out = plan(world)
    assert _created(out) == [], GO
    assert _rows(out, world)[0]["phase"] == "Creating", GO


def test_all_pods_ready_flips_serving_then_marks_ready() -> None:
    """Go: TestCreate_AllPodsReady_FlipsServingAndMarksReady: ContainersReady buys the serving-gate
    write and nothing more; the Ready stamp (operation cleared) waits for the pass that sees the
    kubelet fold the gate into PodReady."""
    sim = _sim()
    driver = _applied(sim)
    driver.one_pass()
    while not _cond(sim, POD0, "ContainersReady"):
        sim.advance(0.5)
    world = _world(sim)
    out = plan(world)
    assert [a.name for a in out.actions if isinstance(a, SetServingGate) and a.status] == [POD0], GO
    assert _rows(out, world)[0]["phase"] != "Ready", GO
    driver.run(lambda s: _cond(s, POD0, "Ready"), limit=30)
    world = _world(sim)
    row = _rows(plan(world), world)[0]
    assert (row["phase"], row.get("operation")) == ("Ready", None), GO


def test_partial_pods_creates_only_missing() -> None:
    """Go: TestCreate_PartialPods_CreatesOnlyMissing: Instance 0's pod stands, Instance 1's does not:
    the pass creates Instance 1's pod only (ours: one Instance created, then the replica scaled to
    two)."""
    sim = _sim()
    _applied(sim).one_pass()
    sim.update_spec(replicas=2)
    out = plan(_world(sim))
    assert _created(out) == ["llama-pool-engine-1-default-0"], GO


# -- promotion -------------------------------------------------------------------------------------


def _all_pod_ready(sim: Sim, n: int) -> bool:
    names = [f"llama-pool-engine-{i}-default-0" for i in range(n)]
    return all(name in sim.pods and _cond(sim, name, "Ready") for name in names)


def _creating_until_pod_ready(n: int, **spec: Any) -> Sim:
    """``n`` fresh Instances brought up pass by pass and stopped once every pod is PodReady, before
    the pass that promotes them (Go ``newReadyBatchFixture``: mid-Create rows, pods past the bar)."""
    sim = _sim()
    driver = _applied(sim, n, **spec)
    for _ in range(200):
        driver.one_pass()
        sim.advance(0.5)
        if _all_pod_ready(sim, n):
            assert all(r["phase"] == "Creating" for r in sim.rows())
            return sim
    raise AssertionError("the pods never became PodReady")


def test_promote_records_running_revision() -> None:
    """Go: TestCreate_PromoteRecordsRunningRevision: a pod past the promote bar carrying the target's
    revision hash, and no status row: the pass promotes Instance 0 ``Ready`` and records
    ``runningRevision`` = the target (so the update trigger's fast path short-circuits)."""
    sim = _creating_until_pod_ready(1)
    _seed_rows(sim, [])
    world = _world(sim)
    row = _rows(plan(world), world)[0]
    assert (row["phase"], row.get("runningRevision")) == ("Ready", _target(world)), GO


def test_promote_skips_running_revision_for_off_target_pods() -> None:
    """Go: TestCreate_PromoteSkipsRunningRevisionForOffTargetPods: a row ``Creating`` that records the
    prior revision as running, its pod past the bar but on the prior revision's hash, and a new
    target: the promote must not stamp ``runningRevision`` = the target (the pod is on the prior
    one), so the update machinery rolls it next."""
    sim = _creating_until_pod_ready(1)
    prior = sim.status["updateRevision"]
    _seed_rows(sim, [{"index": 0, "incarnation": 1, "phase": "Creating", "runningRevision": prior}])
    sim.image = "vllm:v2"
    world = _world(sim)
    assert _target(world) != prior
    row = _rows(plan(world), world)[0]
    assert row.get("runningRevision") == prior, GO


def test_promotion_waits_out_the_window_and_requeues_at_its_remainder() -> None:
    """Go: TestCreate_PromotionWaitsOutTheWindowAndRequeuesAtItsRemainder: a pod PodReady 5 s ago under
    ``minReadySeconds: 20`` is not promoted, and the pass wakes at what is left of the window (15 s,
    from the Ready transition); at that time the pass promotes."""
    sim = _creating_until_pod_ready(1, minReadySeconds=20)
    ready = next(c for c in sim.pods[POD0].obj["status"]["conditions"] if c["type"] == "Ready")
    since = parse_time(ready["lastTransitionTime"])
    assert since is not None
    sim.advance((since + timedelta(seconds=5) - sim.now).total_seconds())
    world = _world(sim)
    out = plan(world)
    assert _rows(out, world)[0]["phase"] == "Creating", GO
    assert out.requeue_after == pytest.approx(15, abs=1), GO
    sim.advance(15)
    world = _world(sim)
    assert _rows(plan(world), world)[0]["phase"] == "Ready", GO


def test_batched_ready_promotions_use_one_status_write() -> None:
    """Go: TestCreate_BatchedReadyPromotionsUseOneMutationBatch: three Instances past the promote bar
    in one pass are promoted ``Ready`` (operation cleared) in one status write."""
    sim = _creating_until_pod_ready(3)
    world = _world(sim)
    out = plan(world)
    assert len([a for a in out.actions if isinstance(a, WriteStatus)]) == 1, GO
    rows = _rows(out, world)
    assert [(rows[i]["phase"], rows[i].get("operation")) for i in range(3)] == [("Ready", None)] * 3, GO


def test_batched_ready_on_revision_promotes_and_prunes_once() -> None:
    """Go: TestCreate_BatchedReadyOnRevisionPromotesAndPrunesOnce: three Instances past the bar on the
    target revision, a Held RetryBlock for that revision: one pass promotes all three ``Ready`` with
    ``runningRevision`` = the target, and the block is removed (once)."""
    sim = _creating_until_pod_ready(3)
    target = sim.status["updateRevision"]
    assert sim.replica is not None
    sim.replica["status"]["retryBlocks"] = [
        {"targetRevision": target, "state": "Held", "attemptsStarted": 1, "reason": "ImagePullBackOff"}
    ]
    world = _world(sim)
    out = plan(world)
    rows = _rows(out, world)
    assert [(rows[i]["phase"], rows[i].get("runningRevision")) for i in range(3)] == [
        ("Ready", target)
    ] * 3, GO
    assert [b["targetRevision"] for b in _status(out, world).get("retryBlocks") or []] == [], GO


def test_batched_nil_pod_budget_is_unbounded() -> None:
    """Go: TestCreate_BatchedNilPodBudgetIsUnbounded: with no scale-up pod budget (ours has none to
    set) a five-replica scale-up opens all five Instances and creates all five pods in one pass."""
    sim = _sim()
    _applied(sim, 5)
    out = plan(_world(sim))
    assert sorted(_created(out)) == [f"llama-pool-engine-{i}-default-0" for i in range(5)], GO


def test_ready_index_untouched_by_scale_up() -> None:
    """Go: TestCreateFreshIndices_ReadyIndexUntouchedByScaleUp: a scale-up from one to two never
    disturbs the Ready Instance: it keeps its phase, incarnation and pod (no operation); the added
    index opens its own Create and its one pod is created."""
    sim = _sim()
    driver = _applied(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    before = dict(sim.rows()[0])
    sim.update_spec(replicas=2)
    world = _world(sim)
    out = plan(world)
    rows = _rows(out, world)
    assert (rows[0]["phase"], rows[0]["incarnation"], rows[0].get("operation")) == (
        before["phase"],
        before["incarnation"],
        None,
    ), GO
    assert (rows[1].get("operation") or {}).get("type") == "Create", GO
    assert _created(out) == ["llama-pool-engine-1-default-0"], GO
    assert _deleted(out) == [], GO


# -- a corrective edit during a Create ----------------------------------------------------------------


def _half_built_gang(pinned: bool = True, keep: tuple[str, ...] = (LEADER,)) -> Sim:
    """Go's corrective-edit fixture: a one-Instance leader+worker gang whose first Create is in flight
    (Creating, Create/CreatePods, pinned to the first revision unless ``pinned`` is False), of whose
    pods only ``keep`` stand, not ready; then the image is edited (a new roll target)."""
    sim = _sim(workers=1, behaviour={"vllm:v1": "never"})
    _applied(sim).one_pass()
    for name in [n for n in sim.pods if n not in keep]:
        del sim.pods[name]
    if not pinned:
        sim.rows()[0]["operation"].pop("targetRevision")
    sim.advance(5)  # a later second: a fresh attempt's id (Create, index, start time) differs
    sim.image = "vllm:v2"
    return sim


def _retired_into_fresh_attempt(row: dict[str, Any], retired_id: str, target: str) -> None:
    """Go ``requireRetiredIntoFreshAttempt``: still Creating, no failure recorded, under a new Create
    attempt (a new id) pinned to the current target."""
    op = row.get("operation") or {}
    assert (row["phase"], row.get("lastFailure")) == ("Creating", None), GO
    assert (op.get("type"), op.get("step")) == ("Create", "CreatePods"), GO
    assert op.get("id") != retired_id, GO
    assert op.get("targetRevision") == target, GO


@pytest.mark.parametrize(
    ("pinned", "keep"),
    [
        pytest.param(True, (LEADER,), id="TestCreate_CorrectiveEditDuringPartialGangDoesNotMixRevisions"),
        pytest.param(False, (LEADER,), id="TestCreate_CorrectiveEditDoesNotAdoptUnpinnedPartialGang"),
        pytest.param(True, (LEADER, WORKER), id="TestCreate_CorrectiveEditRetiresFullyMaterializedGatedGang"),
    ],
)
def test_corrective_edit_retires_the_create_attempt(pinned: bool, keep: tuple[str, ...]) -> None:
    """Go: the three ``TestCreate_CorrectiveEdit…`` tests: the target moves while a gang's first Create is
    half built (the leader only; unpinned, the leader's revision label proves its revision), or fully
    built but not ready: the pass retires the attempt into a fresh one at the new target and does
    nothing else: no member is created at the new target beside the old attempt's pods (a
    mixed-revision gang never converges as one attempt), and the live pods are not touched in that
    pass. Failed before, fixed by Go's rule (``ops/create.go`` ``createFilteredBatched``: a
    retirement ``continue``s): ours deleted the old pods and created the missing worker at the new
    target in the same pass."""
    sim = _half_built_gang(pinned, keep)
    retired_id = sim.rows()[0]["operation"]["id"]
    world = _world(sim)
    out = plan(world)
    _retired_into_fresh_attempt(_rows(out, world)[0], retired_id, _target(world))
    assert (_created(out), _deleted(out)) == ([], []), GO
    assert len(_events(out, "CreateAttemptSuperseded")) == 1, GO


def test_adopts_unpinned_attempt_without_pods() -> None:
    """Go: TestCreate_AdoptsUnpinnedAttemptWithoutPods: an unpinned Create with no pod standing is safe
    to adopt: it is pinned to the current target and the gang is materialized (both pods)."""
    sim = _half_built_gang(pinned=False, keep=())
    world = _world(sim)
    out = plan(world)
    assert (_rows(out, world)[0].get("operation") or {}).get("targetRevision") == _target(world), GO
    assert sorted(_created(out)) == [LEADER, WORKER], GO


def test_batches_superseded_attempt_retirement() -> None:
    """Go: TestCreate_BatchesSupersededAttemptRetirement: three gangs each half built (a leader only)
    under Creates pinned to the old revision: one pass retires all three into fresh attempts at the
    new target (one status write), and creates no missing worker."""
    sim = _sim(workers=1, behaviour={"vllm:v1": "never"})
    _applied(sim, 3).one_pass()
    for name in [n for n in sim.pods if "-worker-" in n]:
        del sim.pods[name]
    ids = {r["index"]: r["operation"]["id"] for r in sim.rows()}
    sim.advance(5)
    sim.image = "vllm:v2"
    world = _world(sim)
    out = plan(world)
    assert len([a for a in out.actions if isinstance(a, WriteStatus)]) == 1, GO
    rows = _rows(out, world)
    for i in range(3):
        _retired_into_fresh_attempt(rows[i], ids[i], _target(world))
    assert _created(out) == [], GO


# -- a superseded Create attempt --------------------------------------------------------------------


def _superseded(gang: bool = False, **kw: Any) -> Sim:
    """Go ``newSupersededFixture``: one Instance whose Create attempt is pinned to the first revision
    and half built (single-pod: its one pod created, not ready; gang: the leader only), then the image
    edited so the target moves."""
    sim = _sim(workers=1 if gang else 0, behaviour={"vllm:v1": "never"}, **kw)
    _applied(sim).one_pass()
    if gang:
        del sim.pods[WORKER]
    sim.advance(5)
    sim.image = "vllm:v2"
    return sim


@pytest.mark.parametrize("gang", [pytest.param(False, id="single pod"), pytest.param(True, id="gang")])
def test_superseded_attempt_replaced_by_fresh_attempt(gang: bool) -> None:
    """Go: TestCreate_SupersededAttempt_ReplacedByFreshAttempt (both subtests): the retiring pass
    writes status once: the row stays ``Creating`` with no failure, under a new Create/CreatePods
    attempt pinned to the new target with its deadline re-armed past the old one; one Normal event
    names both revisions. A second pass, observing the replacement, writes no new attempt and does
    not announce the retirement again."""
    sim = _superseded(gang)
    old = dict(sim.rows()[0]["operation"])
    prior = old["targetRevision"]
    driver = Driver(sim)
    world = _world(sim)
    out = driver.one_pass()
    row = _rows(out, world)[0]
    _retired_into_fresh_attempt(row, old["id"], _target(world))
    assert parse_time(row["operation"]["deadline"]) > parse_time(old["deadline"]), GO
    # Go drives ops.Create alone; a whole pass also stores the revision and, for a gang whose seeded row
    # carries no ``announced`` record, announces the gang-scheduler advisory (EnsurePodGroupsWithState).
    side = ("RevisionCreated", "MaybeNoGangScheduler")
    events = [a for a in out.actions if isinstance(a, RecordEvent) and a.event_reason not in side]
    assert [(e.type, e.event_reason) for e in events] == [("Normal", "CreateAttemptSuperseded")], GO
    assert prior in events[0].message, GO
    assert _target(world) in events[0].message, GO
    sim.advance(0.5)
    again = driver.one_pass()
    assert _events(again, "CreateAttemptSuperseded") == [], GO
    after = sim.rows()[0]["operation"]
    assert (after["id"], after["targetRevision"]) == (row["operation"]["id"], _target(world)), GO


def test_fresh_attempt_recreates_retired_pods_at_its_revision() -> None:
    """Go: TestCreate_FreshAttemptRecreatesRetiredPodsAtItsRevision: the pass after the retirement owns
    what the retired attempt left: no pod survives on the old revision's hash (deleted, or on its way
    out)."""
    sim = _superseded(gang=True)
    driver = Driver(sim)
    driver.one_pass()
    sim.advance(0.5)
    out = driver.one_pass()
    assert _deleted(out) == [LEADER], GO


@pytest.mark.parametrize(
    ("window", "phase"),
    [
        pytest.param(3600, "Creating", id="inside the availability window"),
        pytest.param(0, "Ready", id="window elapsed"),
    ],
)
def test_runtime_ready_attempt_promotes_rather_than_retiring(window: int, phase: str) -> None:
    """Go: TestCreate_RuntimeReadyAttemptPromotesRatherThanRetiring (both subtests): an attempt whose
    pod is past the promote bar at the old revision is one promote away from serving: it is not
    retired (no CreateAttemptSuperseded, its pod kept); it waits out ``minReadySeconds`` (Creating)
    or is promoted (Ready on the old revision), and the update machinery rolls it afterwards. Go runs
    the Create op alone, so its row reads Ready; ours runs the whole pass, in which the promoted
    Instance's roll to the new target starts at once (an Update, not a retired Create): the promote
    is asserted by ``runningRevision``."""
    sim = _creating_until_pod_ready(1, minReadySeconds=window)
    prior = sim.rows()[0]["operation"]["targetRevision"]
    sim.image = "vllm:v2"
    world = _world(sim)
    out = plan(world)
    row = _rows(out, world)[0]
    op = row.get("operation") or {}
    if phase == "Creating":
        assert (row["phase"], op.get("type"), op.get("targetRevision")) == ("Creating", "Create", prior), GO
    else:
        assert row.get("runningRevision") == prior, GO
        assert op.get("type") != "Create", GO
    assert _events(out, "CreateAttemptSuperseded") == [], GO
    assert POD0 not in _deleted(out), GO


@pytest.mark.parametrize("state", ["Held", "Backoff"], ids=["held", "backing off"])
def test_retarget_onto_blocked_revision_defers_retirement(state: str) -> None:
    """Go: TestCreate_RetargetOntoBlockedRevisionDefersRetirement (both subtests): the new target's
    RetryBlock (Held, or a Backoff an hour from due) gates the replacement as it gates a first
    attempt, so the old attempt is not retired: no status change, no event, no pod at the new
    revision."""
    sim = _superseded()
    world = _world(sim)
    block: dict[str, Any] = {"targetRevision": _target(world), "state": state, "attemptsStarted": 1}
    if state == "Backoff":
        block["nextRetryAt"] = (world.now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert sim.replica is not None
    sim.replica["status"]["retryBlocks"] = [block]
    world = _world(sim)
    out = plan(world)
    op = _rows(out, world)[0].get("operation") or {}
    assert op.get("targetRevision") != _target(world), GO
    assert _events(out, "CreateAttemptSuperseded") == [], GO
    assert _created(out) == [], GO


def test_promoted_instance_repair_is_not_retired() -> None:
    """Go: TestCreate_PromotedInstanceRepairIsNotRetired: the same half-built Create on a row that
    records a running revision (a promoted Instance's pod being rebuilt) is the update machinery's to
    roll: the Create pass does not retire it."""
    sim = _superseded()
    sim.rows()[0]["runningRevision"] = sim.rows()[0]["operation"]["targetRevision"]
    prior = sim.rows()[0]["operation"]["targetRevision"]
    world = _world(sim)
    out = plan(world)
    assert _events(out, "CreateAttemptSuperseded") == [], GO
    op = _rows(out, world)[0].get("operation") or {}
    assert op.get("type") != "Create" or op.get("targetRevision") == prior, GO


def test_retarget_defers_while_another_attempt_retries() -> None:
    """Go: TestCreate_RetargetDefersWhileAnotherAttemptRetries: the new target's block is
    RetryInProgress and another Instance's Create (unpinned) is in flight: the revision admits one
    attempt at a time, so Instance 0's attempt is not retired onto it."""
    sim = _superseded()
    sim.update_spec(replicas=2)
    world = _world(sim)
    rows = [
        dict(sim.rows()[0]),
        {**sim.rows()[0], "index": 1, "operation": {**sim.rows()[0]["operation"], "id": "create-1-1"}},
    ]
    rows[1]["operation"].pop("targetRevision")
    _seed_rows(sim, rows)
    assert sim.replica is not None
    sim.replica["status"]["retryBlocks"] = [
        {"targetRevision": _target(world), "state": "RetryInProgress", "attemptsStarted": 1}
    ]
    world = _world(sim)
    out = plan(world)
    assert (_rows(out, world)[0].get("operation") or {}).get("targetRevision") != _target(world), GO
    assert _events(out, "CreateAttemptSuperseded") == [], GO


# -- RecreateInstance: a partial gang is Restart's, not Create's --------------------------------------


def _ready_gang_lost_worker(policy: str) -> tuple[Sim, World]:
    """Go ``seedReadyInstance`` + ``gangPod``: a Ready leader+worker gang whose worker is gone."""
    sim = _sim(workers=1)
    driver = _applied(sim, lifecycle={"restartPolicy": policy})
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    del sim.pods[WORKER]
    return sim, _world(sim)


def test_recreate_instance_defers_partial_gang_to_restart() -> None:
    """Go: TestCreate_RecreateInstance_DefersPartialGangToRestart: under RecreateInstanceOnPodRestart a
    Ready gang that lost its worker is not self-healed pod by pod: the worker is not backfilled at
    the old incarnation and the row is not stamped ``Creating`` (which would latch the race against
    Restart's whole-gang recreate). Ours runs the restart pass in the same pass (Restarting)."""
    sim, world = _ready_gang_lost_worker(RECREATE)
    incarnation = sim.rows()[0]["incarnation"]
    out = plan(world)
    old_worker = [
        a
        for a in out.actions
        if isinstance(a, CreatePod)
        and a.name == WORKER
        and a.pod["metadata"]["labels"]["ome.io/instance-incarnation"] == str(incarnation)
    ]
    assert old_worker == [], GO
    assert _rows(out, world)[0]["phase"] != "Creating", GO


def test_non_recreate_policy_self_heals_missing_pod() -> None:
    """Go: TestCreate_NonRecreatePolicy_SelfHealsMissingPod: under restartPolicy None the Create pass
    still self-heals a missing pod: the worker is recreated in the pass. Was a strict xfail (ours
    stamped the repair ``Creating`` in one pass and created the worker in the next); fixed by Go's
    rule (``ops/create.go`` ``createFilteredBatched``/``processStartActions``: the intent committed,
    then the pods created; ``planner/instances.py`` ``step_row(full_create=...)``)."""
    _, world = _ready_gang_lost_worker("None")
    assert _created(plan(world)) == [WORKER], GO


def test_recreate_instance_still_materializes_fresh_instance() -> None:
    """Go: TestCreate_RecreateInstance_StillMaterializesFreshInstance: the defer does not block a fresh
    gang (never Ready, no status) under RecreateInstanceOnPodRestart: both pods are created."""
    sim = _sim(workers=1)
    _applied(sim, lifecycle={"restartPolicy": RECREATE})
    assert sorted(_created(plan(_world(sim)))) == [LEADER, WORKER], GO


def _creating_gang_lost_worker(pod_count: int) -> World:
    """Go ``seedMaterializedGang``: a Create-owned gang row (Creating, Create/CreatePods, running and
    target revision recorded) published with ``podCount`` members, the worker gone."""
    sim = _sim(workers=1, behaviour={"vllm:v1": "never"})
    _applied(sim, lifecycle={"restartPolicy": RECREATE}).one_pass()
    sim.advance(1)
    row = sim.rows()[0]
    row.update(podCount=pod_count, runningRevision=row["targetRevision"])
    del sim.pods[WORKER]
    return _world(sim)


def test_recreate_instance_defers_non_ready_partial_gang() -> None:
    """Go: TestCreate_RecreateInstance_DefersNonReadyPartialGang: a gang that lost a member below Ready
    (published complete, podCount 2) reaches Restart, not Create's per-pod backfill."""
    world = _creating_gang_lost_worker(2)
    assert WORKER not in _created(plan(world)), GO


def test_recreate_instance_defers_interrupted_gang_materialization() -> None:
    """Go: TestCreate_RecreateInstance_DefersInterruptedGangMaterialization: once CreatePods is
    committed, an interrupted gang is repaired by Restart as one unit, even when the published
    podCount (1) reflects only the survivor: Create does not backfill the worker."""
    world = _creating_gang_lost_worker(1)
    assert WORKER not in _created(plan(world)), GO


# -- scale-up beside a roll (CreateFreshIndices) -------------------------------------------------------


def _mid_surge(workers: int = 0) -> Sim:
    """One Instance Ready on v1, the image edited, passes run until Instance 0 is at its surge step (its
    replacement created: a pod at ordinal 1, or for a gang the replacement's marker row)."""
    sim = _sim(workers=workers)
    driver = _applied(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    driver.one_pass()
    op = sim.rows()[0].get("operation") or {}
    assert (op.get("type"), op.get("step")) == ("Update", "Surge")
    return sim


def test_create_fresh_indices_creates_absent_skips_updating() -> None:
    """Go: TestCreateFreshIndices_CreatesAbsentSkipsUpdating: Instance 0 mid-update, Instances 1 and 2
    absent (a scale-up to three): the pass creates the pods of 1 and 2 under Create operations pinned
    to the target, and leaves Instance 0 alone: its row keeps its Update, and none of its pods is
    created or duplicated by the fresh pass."""
    sim = _mid_surge()
    before = dict(sim.rows()[0]["operation"])
    sim.update_spec(replicas=3)
    world = _world(sim)
    out = plan(world)
    assert sorted(_created(out)) == ["llama-pool-engine-1-default-0", "llama-pool-engine-2-default-0"], GO
    rows = _rows(out, world)
    assert (rows[0]["operation"]["id"], rows[0]["operation"]["type"]) == (before["id"], "Update"), GO
    for i in (1, 2):
        op = rows[i].get("operation") or {}
        assert (op.get("type"), op.get("targetRevision")) == ("Create", _target(world)), GO


def test_create_fresh_indices_no_op_when_only_index_updating() -> None:
    """Go: TestCreateFreshIndices_NoOpWhenOnlyIndexUpdating: a pure roll (one Instance, mid-update) has
    no Create work: no Instance is opened and no pod created for any other index."""
    sim = _mid_surge()
    world = _world(sim)
    out = plan(world)
    assert sorted(_rows(out, world)) == [0], GO
    assert [n for n in _created(out) if not n.startswith("llama-pool-engine-0-")] == [], GO


def test_create_fresh_indices_preserves_gang_surge_target_marker() -> None:
    """Go: TestCreateFreshIndices_PreservesSurgeTargetMarker "gang surge target": a gang surge's
    replacement marker (Creating, Update/GangSurgeTarget) is not a surge-free index: a scale-up opens a
    genuinely absent index and leaves the marker's operation as it is (overwriting it with a Create
    would unpin the replacement)."""
    sim = _mid_surge(workers=1)
    marker = next(r for r in sim.rows() if r["index"] != 0)
    sim.update_spec(replicas=2)
    world = _world(sim)
    out = plan(world)
    rows = _rows(out, world)
    kept = rows[marker["index"]].get("operation") or {}
    assert (kept.get("type"), kept.get("step")) == ("Update", "GangSurgeTarget"), GO
    fresh = [i for i, r in rows.items() if (r.get("operation") or {}).get("type") == "Create"]
    assert len(fresh) == 1, GO
    assert fresh[0] not in (0, marker["index"]), GO


# -- the API server's answer to a pod create ------------------------------------------------------------

QUOTA_MESSAGE = (
    'pods "{name}" is forbidden: exceeded quota: team-quota, requested: requests.nvidia.com/gpu=8, '
    "used: requests.nvidia.com/gpu={used}, limited: requests.nvidia.com/gpu=64"
)


@dataclass
class RefusingSim(Sim):
    """Go's ``rejectionFixture``: pod creates answered by the API server. ``refuse`` is ``quota`` (a
    ResourceQuota 403, recorded on the row and announced as the executor does:
    ``planner/quota.py`` ``record_capacity_refusal``, ``quota_blocked_message``), ``invalid`` (a 422
    on the pod template), ``terminating`` (the namespace is being deleted) or ``conflict`` (a 409);
    the executor ends the pass on each. The quota message names current usage, different each time."""

    refuse: str | None = None
    refusals: int = 0

    def apply(self, act: A.Action, replica_rv: str) -> None:
        if isinstance(act, A.CreatePod) and self.refuse is not None:
            self.refusals += 1
            if self.refuse == "quota":
                index = int(act.pod["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
                message = QUOTA_MESSAGE.format(name=act.name, used=48 + self.refusals)
                status, announce = record_capacity_refusal(self.status, index, self.now)
                if status is not None:
                    assert self.replica is not None
                    self.replica["status"] = status
                    self._stamp(self.replica)
                    if announce:
                        text = quota_blocked_message("engine", index, message)
                        self.events.append(A.RecordEvent("Normal", "InstanceQuotaBlocked", text))
                raise Conflict(message)
            index = int(act.pod["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
            if self.refuse == "invalid" and index != 0:
                self.refusals -= 1
                super().apply(act, replica_rv)  # Go refuses only Instance 0's pod
                return
            if self.refuse in ("invalid", "terminating"):
                # The API server's answer, read as the executor reads it
                # (Executor._record_create_rejection, planner/rejection.py).
                status, body, message = REJECTION_ANSWERS[self.refuse]
                reason = create_rejection_reason(status, body)
                assert reason is not None
                text = message.format(name=act.name)
                self.record_refusal(
                    record_rejection(self.status, index, text, self.now, reason), False, "", "", text
                )
            raise Conflict(f"pod {act.name} refused: {self.refuse}")
        super().apply(act, replica_rv)


# Go rejectionFixture's errors: apierrors.NewInvalid on the pod template, and the Forbidden whose
# status cause is corev1.NamespaceTerminatingCause (status, body, message).
REJECTION_ANSWERS: dict[str, tuple[int, dict[str, Any], str]] = {
    "invalid": (
        422,
        {
            "details": {
                "causes": [{"type": "FieldValueInvalid", "field": "spec.containers[0].resources.limits"}]
            }
        },
        'Pod "{name}" is invalid: spec.containers[0].resources.limits: Invalid value: "-1": must be '
        "greater than or equal to 0",
    ),
    "terminating": (
        403,
        {"details": {"causes": [{"type": "NamespaceTerminating"}]}},
        'pods "{name}" is forbidden: unable to create new content in namespace default because it is '
        "being terminated",
    ),
}


def _refused(refuse: str, replicas: int = 1) -> tuple[RefusingSim, Driver]:
    sim = RefusingSim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)), refuse=refuse)
    driver = _applied(sim, replicas)
    driver.one_pass()
    return sim, driver


def test_quota_exceeded_waits_without_failing() -> None:
    """Go: TestCreate_QuotaExceeded_WaitsWithoutFailing: out of quota is a capacity wait: the Instance
    keeps ``Creating`` and its operation with the refusal recorded (``capacityRefusedAt``; the reason
    untouched), no ``lastFailure``, no RetryBlock; one InstanceQuotaBlocked event carrying the API
    server's message. Later still-refused passes, each answered with a different usage figure,
    announce nothing more and leave the status as the episode wrote it."""
    sim, driver = _refused("quota")
    row = sim.rows()[0]
    op = row.get("operation") or {}
    assert (row["phase"], op.get("type")) == ("Creating", "Create"), GO
    assert op.get("capacityRefusedAt"), GO
    assert (op.get("reason"), row.get("lastFailure")) == (None, None), GO
    assert not sim.status.get("retryBlocks"), GO
    events = [e for e in sim.events if e.event_reason == "InstanceQuotaBlocked"]
    assert len(events) == 1, GO
    assert "used: requests.nvidia.com/gpu=49" in events[0].message, GO
    sim.advance(1)
    driver.one_pass()  # the pass that reports the wait (ours: the hold reads the record)
    settled = sim.replica["status"] if sim.replica else {}
    version = sim.replica["metadata"]["resourceVersion"] if sim.replica else ""
    for _ in range(2):
        sim.advance(5)
        driver.one_pass()
    assert len([e for e in sim.events if e.event_reason == "InstanceQuotaBlocked"]) == 1, GO
    assert sim.replica is not None
    assert sim.replica["metadata"]["resourceVersion"] == version, GO
    assert sim.replica["status"] == settled, GO


@pytest.mark.parametrize(
    "landed",
    [
        pytest.param("exists", id="TestCreate_QuotaCleared_OnAlreadyExistingPods"),
        pytest.param("created", id="TestCreate_QuotaCleared_ReleasesTheWaitingToken"),
    ],
)
def test_quota_cleared_releases_the_wait(landed: str) -> None:
    """Go: TestCreate_QuotaCleared_OnAlreadyExistingPods and TestCreate_QuotaCleared_ReleasesTheWaiting-
    Token: once the pod is there — created by this pass, or found standing (AlreadyExists) — the
    Instance is no longer blocked: the refusal record and the ``QuotaExceeded`` wait are released
    (which re-arms the parked deadline)."""
    sim, driver = _refused("quota")
    sim.advance(1)
    driver.one_pass()
    assert (sim.rows()[0].get("operation") or {}).get("waiting") == "QuotaExceeded"
    sim.refuse = None
    if landed == "exists":
        factory = sim.pod_factory(sim.status["updateRevision"], 0, 1, "default", 0)
        sim.apply(A.CreatePod(POD0, factory, "an earlier create landed"), "")
    for _ in range(3):
        sim.advance(1)
        driver.one_pass()
    op = sim.rows()[0].get("operation") or {}
    assert POD0 in sim.pods, GO
    assert (op.get("waiting"), op.get("capacityRefusedAt")) == (None, None), GO


def test_quota_exceeded_announced_only_when_it_becomes_the_report() -> None:
    """Go: TestCreate_QuotaExceeded_AnnouncedOnlyWhenItBecomesTheReport: the first refusal on an
    unheld row is announced; a row already reporting the scheduler's wait (``Unschedulable``) keeps
    that report when a quota refusal lands on it: the refusal is recorded (the deadline parks on it)
    but not announced. The second half calls the record the executor makes
    (``planner/quota.py`` ``record_capacity_refusal``) on that row: ours re-derives the scheduler's
    token from the pods each pass, so a hand-set token does not survive a whole pass as Go's does."""
    sim, _ = _refused("quota")
    assert len([e for e in sim.events if e.event_reason == "InstanceQuotaBlocked"]) == 1, GO
    status = dict(sim.status)
    row = dict(status["instanceStatuses"][0])
    op = {k: v for k, v in row["operation"].items() if k != "capacityRefusedAt"}
    op["waiting"] = "Unschedulable"
    status["instanceStatuses"] = [{**row, "operation": op}]
    recorded, announce = record_capacity_refusal(status, 0, sim.now)
    assert recorded is not None, GO
    kept = recorded["instanceStatuses"][0]["operation"]
    assert kept.get("capacityRefusedAt"), GO
    assert kept.get("waiting") == "Unschedulable", GO
    assert announce is False, GO


def test_conflict_stays_an_opaque_error() -> None:
    """Go: TestCreate_Conflict_StaysAnOpaqueError: an unclassified refusal (a 409) is not interpreted:
    the pass ends and the next one retries; the attempt is not failed."""
    sim, driver = _refused("conflict")
    for _ in range(3):
        sim.advance(1)
        driver.one_pass()
    assert sim.rows()[0]["phase"] != "Failed", GO


def test_invalid_pod_spec_fails_only_the_rejected_instance() -> None:
    """Go: TestCreate_InvalidPodSpec_FailsOnlyTheRejectedInstance: a 422 on Instance 0's pod fails
    Instance 0 (operation cleared, ``lastFailure.reason`` InvalidPodSpec with the API server's
    detail, one RetryBlock for the target, one InstanceRejected event) while Instance 1 is created."""
    sim, driver = _refused("invalid", replicas=2)
    for _ in range(3):
        sim.advance(1)
        driver.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], row.get("operation")) == ("Failed", None), GO
    assert (row.get("lastFailure") or {}).get("reason") == "InvalidPodSpec", GO
    assert "resources.limits" in (row.get("lastFailure") or {}).get("message", ""), GO
    assert [b["targetRevision"] for b in sim.status.get("retryBlocks") or []] == [
        sim.status["updateRevision"]
    ], GO
    assert sim.rows()[1]["phase"] != "Failed", GO
    assert sorted(sim.pods) == ["llama-pool-engine-1-default-0"], GO
    rejected = [e for e in sim.events if e.event_reason == "InstanceRejected"]
    assert len(rejected) == 1, GO
    assert "resources.limits" in rejected[0].message, GO
    assert "held for retry" in rejected[0].message, GO


def test_namespace_terminating_fails_without_blaming_the_revision() -> None:
    """Go: TestCreate_NamespaceTerminating_FailsWithoutBlamingTheRevision: the namespace is going away:
    the Instance is failed (``lastFailure.reason`` NamespaceTerminating) so the operator sees why, and
    the revision's retry ladder stays clean (no block)."""
    sim, driver = _refused("terminating")
    sim.advance(1)
    driver.one_pass()  # ours: the pass after the refused create disposes it (Go: the same pass)
    row = sim.rows()[0]
    assert (row["phase"], (row.get("lastFailure") or {}).get("reason")) == (
        "Failed",
        "NamespaceTerminating",
    ), GO
    assert not sim.status.get("retryBlocks"), GO
    assert sim.pods == {}, GO
    rejected = [e for e in sim.events if e.event_reason == "InstanceRejected"]
    assert len(rejected) == 1, GO
    assert "no revision is blamed" in rejected[0].message, GO


# -- a pod in phase Unknown (its kubelet stopped reporting) -----------------------------------------------

FORCE = ForceDeletePolicy(overdue_slack=timedelta(minutes=2), node_unreachable_threshold=timedelta(minutes=5))


def _unknown_phase(
    restarting: bool, policy: ForceDeletePolicy | None, node_dead_for: timedelta | None
) -> tuple[Sim, Driver]:
    """Go ``unknownPhasePod`` on ``unknownNodeUnreachable`` (or ``unknownNodeReady`` when
    ``node_dead_for`` is None): Instance 0's pod in phase Unknown on its node. ``restarting``: Go
    ``restartingAtIncarnation`` — the Instance mid-Restart at incarnation 2 (Restart/Drain, a live
    deadline) and the pod the rebuild's, at incarnation 2; otherwise a fresh Create's pod."""
    settings = OperatorSettings(instance_ready_timeout=timedelta(hours=2), force_delete=policy)
    sim = Sim(settings=settings)
    driver = _applied(sim)
    if restarting:
        driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    else:
        driver.one_pass()
        sim.advance(1)
    node = sim.node_of(POD0)
    if node_dead_for is not None:
        sim.silence_node(node)
        sim.advance(node_dead_for.total_seconds())
    obj = sim.pods[POD0].obj
    obj["status"]["phase"] = "Unknown"
    obj["status"]["conditions"] = []
    if restarting:
        obj["metadata"]["labels"]["ome.io/instance-incarnation"] = "2"
        row = sim.rows()[0]
        deadline = (sim.now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        started = sim.now.strftime("%Y-%m-%dT%H:%M:%SZ")
        row.update(incarnation=2, phase="Restarting")
        row["operation"] = {
            "id": "restart-0-1",
            "type": "Restart",
            "step": "Drain",
            "reason": "pod lost",
            "targetRevision": row.get("runningRevision") or row["targetRevision"],
            "startedAt": started,
            "lastProgressAt": started,
            "deadline": deadline,
        }
    return sim, driver


def _force_deleted(out: Plan) -> list[str]:
    return [a.name for a in out.actions if isinstance(a, ForceDeletePod)]


def test_restart_unknown_phase_pod_holds_without_force_delete_policy() -> None:
    """Go: TestRestart_UnknownPhasePodHoldsWithoutForceDeletePolicy: a rebuild's pod in phase Unknown
    keeps its name (a returning kubelet may still run it); with no force-delete policy nothing can
    prove the node dead: the pod is left alone, no PodForceDeleted, the Restart not done."""
    sim, _ = _unknown_phase(True, None, timedelta(hours=1))
    world = _world(sim)
    out = plan(world)
    assert _force_deleted(out) == [], GO
    assert POD0 not in _deleted(out), GO
    assert _events(out, "PodForceDeleted") == [], GO
    assert _rows(out, world)[0]["phase"] != "Ready", GO


def test_restart_unknown_phase_pod_force_deleted_on_proven_node_death() -> None:
    """Go: TestRestart_UnknownPhasePodForceDeletedOnProvenNodeDeath: with a policy and the node
    unreachable past the threshold (an hour against five minutes), the pod is force-deleted (one
    PodForceDeleted) and a later pass rebuilds the name with a fresh pod."""
    sim, driver = _unknown_phase(True, FORCE, timedelta(hours=1))
    out = driver.one_pass()
    assert _force_deleted(out) == [POD0], GO
    assert len(_events(out, "PodForceDeleted")) == 1, GO
    for _ in range(3):
        sim.advance(1)
        driver.one_pass()
    assert POD0 in sim.pods, GO
    assert sim.pods[POD0].obj["status"].get("phase") != "Unknown", GO


def test_restart_unknown_phase_pod_on_live_node_is_never_deleted() -> None:
    """Go: TestRestart_UnknownPhasePodOnLiveNodeIsNeverDeleted: node-death evidence, not the pod's
    phase, authorizes the delete: on a node still posting Ready the pod survives, policy or not."""
    sim, _ = _unknown_phase(True, FORCE, None)
    out = plan(_world(sim))
    assert _force_deleted(out) == [], GO
    assert POD0 not in _deleted(out), GO


def test_create_unknown_phase_pod_routes_to_the_force_delete_sweep() -> None:
    """Go: TestCreate_UnknownPhasePodRoutesToTheForceDeleteSweep: the Create's missing-pod diff reads an
    Unknown pod as present, so without the sweep the attempt polls a name no kubelet reports on until
    its deadline; the same node-death evidence frees it."""
    sim, _ = _unknown_phase(False, FORCE, timedelta(hours=1))
    assert _force_deleted(plan(_world(sim))) == [POD0], GO


def test_create_unknown_phase_pod_keeps_the_pass_requeuing() -> None:
    """Go: TestCreate_UnknownPhasePodKeepsThePassRequeuing: the node unreachable for one minute against
    a five-minute threshold: the pod survives, and the pass wakes itself no later than the threshold's
    remainder (nothing else will: the node emits no events)."""
    sim, _ = _unknown_phase(False, FORCE, timedelta(minutes=1))
    out = plan(_world(sim))
    assert _force_deleted(out) == [], GO
    assert out.requeue_after is not None, GO
    assert 0 < out.requeue_after <= 4 * 60 + 1, GO
