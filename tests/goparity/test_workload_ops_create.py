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

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.actions import CreatePod, DeletePod, Plan, RecordEvent, SetServingGate, WriteStatus
from omereconcile.planner import plan
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, parse_time

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
