"""Relocation (``autoMigrate``, ``planner/relocation.py``; Go ``escalation/disposition.go``
``DisposeExpiredAttempt`` branch 2, ``recordRelocationDirective``, ``releaseNodeExclusions``): an attempt
that fails with no workload-caused evidence on one node, at a revision that has served, records a
directive on the replica's audit ledger and the rebuild is rendered off that node."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile import actions as A
from omereconcile.planner.relocation import LedgerBook, apply_exclusions, exclusions_conflict
from omereconcile.settings import RetryPolicy, SettingsError, settings_from_configmap
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, applied, baseline, converged, end_state
from omereconcile.world import LedgerView, parse_time

POD0 = "llama-pool-engine-0-default-0"
NODE_A, NODE_B = "sim-node", "sim-node-b"
# The operator's InstanceReadyTimeout: what ends an attempt whose pod runs but never becomes ready.
READY_TIMEOUT = timedelta(minutes=5)


def _setup(max_attempts: int = 3, mode: str | None = None, **sim_args: Any) -> tuple[Sim, Driver]:
    sim = Sim(**sim_args)
    sim.settings = replace(
        sim.settings, auto_migrate_max_attempts=max_attempts, instance_ready_timeout=READY_TIMEOUT
    )
    spec: dict[str, Any] = {"replicas": 2}
    if mode is not None:
        spec["lifecycle"] = {"migrationPolicy": {"mode": mode}}
    sim.apply_replica(base_replica(**spec))
    driver = Driver(sim)
    driver.run(converged)
    assert sim.node_of(POD0) == NODE_A  # the scheduler binds the first node
    return sim, driver


def _lose_pod_onto_a_bad_node(sim: Sim, driver: Driver) -> None:
    """Instance 0's pod goes; its rebuild lands on node A, where a container runs but never becomes
    ready (a readiness limbo, a failure a node can cause: the newest Go relocates it and no crash
    loop)."""
    sim.node_behaviour[NODE_A] = "never"
    sim.user_delete(POD0)


def _messages(sim: Sim, reason: str) -> list[str]:
    return [e.message for e in sim.events if e.event_reason == reason]


def _exclusions(pod: A.CreatePod) -> list[str]:
    terms = pod.pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return [
        v
        for t in terms["nodeSelectorTerms"]
        for e in t["matchExpressions"]
        if e["operator"] == "NotIn"
        for v in e["values"]
    ]


def test_a_failure_on_a_node_steers_the_next_attempt_off_it() -> None:
    sim, driver = _setup()
    target = sim.status["currentRevision"]
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: bool(s.ledger_entries()))
    (entry,) = sim.ledger_entries()
    assert entry["fromNode"] == NODE_A
    assert entry["revision"] == target
    assert (entry["reason"], entry["phase"], entry["outcome"]) == (
        "AutoRecover",
        "Completed",
        "relocate-recreate",
    )
    assert entry["component"] == "engine"
    assert entry["sourceInstance"] == 0
    (triggered,) = _messages(sim, "AutoMigrationTriggered")
    assert triggered == (
        "OMENative component=engine instance=0 relocation directive recorded: attempt 1/3, rebuild steered "
        f"off node {NODE_A} (uuid={entry['requestUUID']})"
    )
    assert not _messages(sim, "AutoMigrationCapReached")
    (failed,) = [m for m in _messages(sim, "InstanceFailed") if "relocation directive" in m]
    assert failed.endswith(
        "DeadlineExceeded: Create/CreatePods exceeded InstanceReadyTimeout: attempt disposed with relocation "
        "directive; the rebuild is steered off the recorded node"
    )
    (record,) = sim.status["migrations"]
    assert record["requestUUID"] == entry["requestUUID"]
    assert (record["trigger"], record["phase"], record["attempt"], record["fromNode"]) == (
        "Auto",
        "Relocated",
        1,
        NODE_A,
    )
    # The readiness limbo travels with the directive (Go relocationRecordMessage's detail).
    assert record["message"] == (
        f"relocation directive recorded; rebuild steered off node {NODE_A} (pod is Running but its "
        "containers never became ready; not ready: ome-container)"
    )
    # The directive is persisted before the status that ends the attempt.
    writes = [type(a).__name__ for _, a in driver.log if isinstance(a, A.WriteLedger | A.WriteStatus)]
    assert writes[writes.index("WriteLedger") + 1] == "WriteStatus"
    assert sim.ledger is not None
    (owner,) = sim.ledger["metadata"]["ownerReferences"]
    assert owner["kind"] == "InferenceReplica"
    assert owner["controller"] is True

    driver.run(converged)
    assert sim.node_of(POD0) == NODE_B
    rebuild = [a for _, a in applied(driver, "CreatePod") if a.name == POD0][-1]  # type: ignore[attr-defined]
    assert isinstance(rebuild, A.CreatePod)
    assert _exclusions(rebuild) == [NODE_A]
    # Ready with no operation: the placement is proven, the directive goes and the record succeeds.
    driver.run(lambda s: not s.ledger_entries() and s.status["migrations"][0].get("succeeded") is True)
    assert sim.status["migrations"][0]["completedAt"] >= record["completedAt"]


def test_the_budget_caps_the_directives_and_says_so_once() -> None:
    sim, driver = _setup(max_attempts=1)
    sim.node_behaviour[NODE_B] = "crash"  # node B fails too: the rebuild off A fails again
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: bool(s.ledger_entries()))
    (capped,) = _messages(sim, "AutoMigrationCapReached")
    assert capped == (
        "OMENative component=engine instance=0 relocation budget exhausted (1/1 attempts); further expiries "
        "dispose terminal without relocation"
    )
    driver.run(lambda s: sum(1 for _, a in applied(driver, "CreatePod") if a.name == POD0) >= 4)  # type: ignore[attr-defined]
    assert len(sim.ledger_entries()) == 1
    assert len(_messages(sim, "AutoMigrationTriggered")) == 1
    assert len(_messages(sim, "AutoMigrationCapReached")) == 1
    assert len(sim.status["migrations"]) == 1
    # The exclusion still binds every rebuild at the revision: they keep off node A.
    rebuilds = [a for _, a in applied(driver, "CreatePod") if a.name == POD0][-2:]  # type: ignore[attr-defined]
    assert all(isinstance(a, A.CreatePod) and _exclusions(a) == [NODE_A] for a in rebuilds)


@pytest.mark.parametrize(("max_attempts", "mode"), [(3, "Never"), (0, None)])
def test_never_mode_or_no_budget_records_nothing(max_attempts: int, mode: str | None) -> None:
    sim, driver = _setup(max_attempts=max_attempts, mode=mode)
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: sum(1 for _, a in applied(driver, "CreatePod") if a.name == POD0) >= 4)  # type: ignore[attr-defined]
    assert sim.ledger is None
    assert not _messages(sim, "AutoMigrationTriggered")
    assert "migrations" not in sim.status
    assert sim.node_of(POD0) == NODE_A  # nothing steers it: the scheduler's first choice again
    assert any("relocation unavailable" in m for m in _messages(sim, "InstanceFailed"))


def test_an_unschedulable_rebuild_releases_the_exclusions() -> None:
    sim, driver = _setup()
    sim.settings = replace(sim.settings, unschedulable_grace_period=timedelta(seconds=30))
    target = sim.status["currentRevision"]
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: bool(s.ledger_entries()))
    sim.node_objs[NODE_B]["spec"]["unschedulable"] = True  # no other node has room
    sim.node_behaviour.clear()  # node A is healthy again
    driver.run(lambda s: bool(_messages(s, "NodeExclusionReleased")))
    (released,) = _messages(sim, "NodeExclusionReleased")
    assert released == (
        f"OMENative component=engine instance=0 node exclusion released for revision {target}: no other node "
        f"had room for the rebuild; it may land on {NODE_A} again"
    )
    (entry,) = sim.ledger_entries()
    assert entry["released"] is True  # kept on the budget, excluding nothing
    driver.run(converged)
    assert sim.node_of(POD0) == NODE_A
    last = [a for _, a in applied(driver, "CreatePod") if a.name == POD0][-1]  # type: ignore[attr-defined]
    assert isinstance(last, A.CreatePod)
    assert "affinity" not in last.pod["spec"]


def test_an_exclusion_the_required_affinity_cannot_satisfy_is_refused() -> None:
    pinned = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE_A]}
                        ]
                    }
                ]
            }
        }
    }
    sim, driver = _setup(affinity=pinned)
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: any("relocation unavailable" in m for m in _messages(s, "InstanceFailed")))
    assert sim.ledger is None
    assert not _messages(sim, "AutoMigrationTriggered")


def test_a_revision_that_never_served_blames_no_node() -> None:
    sim = Sim()
    sim.settings = replace(sim.settings, auto_migrate_max_attempts=3)
    sim.node_behaviour[NODE_A] = "crash"
    sim.apply_replica(base_replica(replicas=1))
    driver = Driver(sim)
    driver.run(lambda s: any("relocation unavailable" in m for m in _messages(s, "InstanceFailed")))
    assert sim.ledger is None


def test_a_crash_loop_on_a_served_revision_takes_the_ladder_not_another_node() -> None:
    """Go ``DisposeExpiredAttempt`` (the newest stored ``disposition.go``, ``attemptCrashLooping``): a
    container that keeps exiting does so on any node, so a crash loop is never relocated, even at a
    revision Instance 1 serves: no directive, no record, the rebuild stays where the scheduler puts it
    and the waves count on the revision's retry ladder until it holds."""
    sim, driver = _setup()
    sim.settings = replace(
        sim.settings, update_retry=RetryPolicy(2, timedelta(seconds=30), timedelta(minutes=5), 2.0)
    )
    target = sim.status["currentRevision"]
    sim.node_behaviour[NODE_A] = "crash"
    sim.user_delete(POD0)
    driver.run(lambda s: any(b.get("state") == "Held" for b in s.status.get("retryBlocks") or []))
    assert sim.ledger is None
    assert not _messages(sim, "AutoMigrationTriggered")
    assert "migrations" not in sim.status
    (block,) = sim.status["retryBlocks"]
    assert (block["targetRevision"], block["reason"]) == (target, "CrashLoopBackOff")
    assert sim.node_of(POD0) == NODE_A
    assert any("relocation unavailable" in m for m in _messages(sim, "InstanceFailed"))


def test_a_replayed_directive_is_not_recorded_twice() -> None:
    """Guard 1 (REPLAY): the newest directive, for the same node and completed after the attempt
    started, is this attempt's own, persisted by a pass that died before its status write."""
    sim, driver = _setup()
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: bool(s.ledger_entries()))
    (entry,) = sim.ledger_entries()
    book = LedgerBook(LedgerView.from_dict(sim.ledger), "llama-pool", 3)
    started = parse_time(entry["completedAt"])
    assert started is not None
    args = {
        "component": "engine",
        "index": 0,
        "node": NODE_A,
        "revision": entry["revision"],
        "attempt_id": "x",
    }
    common = {"replica_uid": "u", "now": started, "specs": [None]}
    replay = book.record(attempt_started=started - timedelta(seconds=1), **args, **common)  # type: ignore[arg-type]
    assert replay == (True, 0, entry["requestUUID"])
    assert not book.dirty
    fresh = book.record(attempt_started=started, **args, **common)  # type: ignore[arg-type]
    assert fresh[:2] == (True, 2)
    assert book.dirty


def test_the_overlay_and_the_conflict_check_follow_go() -> None:
    pod = {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1", "n2"]}]},
        ]}}}}}  # fmt: skip
    out = apply_exclusions(pod, ["n1", "n1", "n2"])
    terms = out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    # One NotIn requirement per node, ANDed into every term, never twice; the input is left alone.
    assert [[e["values"] for e in t["matchExpressions"] if e["operator"] == "NotIn"] for t in terms] == [
        [["n1"], ["n2"]],
        [["n1"], ["n2"]],
    ]
    assert (
        len(
            pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
                "nodeSelectorTerms"
            ][0]["matchExpressions"]
        )
        == 1
    )  # type: ignore[index]
    # The zone term does not pin a host: no conflict. Pinning only excluded hosts is one.
    assert not exclusions_conflict(pod["spec"], ["n1", "n2"])
    only_hosts = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [terms[1] | {"matchExpressions": terms[1]["matchExpressions"][:1]}]}}}}  # fmt: skip
    assert exclusions_conflict(only_hosts, ["n1", "n2"])
    assert not exclusions_conflict(only_hosts, ["n1"])


def test_the_budget_is_read_from_the_lifecycle_block() -> None:
    assert (
        settings_from_configmap(
            {"lifecycle": '{"autoMigrate": {"maxAttempts": 3}}'}
        ).auto_migrate_max_attempts
        == 3
    )
    assert settings_from_configmap({}).auto_migrate_max_attempts == 0
    with pytest.raises(SettingsError, match=r"lifecycle\.autoMigrate\.maxAttempts"):
        settings_from_configmap({"lifecycle": '{"autoMigrate": {"maxAttempts": "3"}}'})


def test_a_failed_surge_target_on_an_excluded_node_is_recycled_with_the_event() -> None:
    """Go ``recycleFailedCreateContainerTarget``: a surge replacement refused by the runtime
    (``CreateContainerError``) on the node its directive excludes goes, the source serving on."""
    sim, driver = _setup()
    sim.update_spec(pacing={"partition": 1})  # Instance 1 rolls first: the new revision serves there
    sim.image = "vllm:v2"
    driver.run(
        lambda s: any(
            r["index"] == 1 and r.get("runningRevision", "").endswith(s.render().hash) for r in s.rows()
        )
    )  # type: ignore[union-attr]
    sim.node_behaviour[NODE_A] = "createerror"
    sim.update_spec(pacing={"partition": 0})
    driver.run(lambda s: bool(_messages(s, "FailedSurgeTargetRecycled")))
    (recycled,) = _messages(sim, "FailedSurgeTargetRecycled")
    assert recycled == (
        "OMENative component=engine instance=0 deleted failed non-serving surge target "
        f"llama-pool-engine-0-default-1 on excluded node {NODE_A}; retry will create a fresh pod"
    )
    assert sim.gate_of(POD0) == "True"  # the source never left rotation
    driver.run(converged)
    assert sim.node_of("llama-pool-engine-0-default-1") == NODE_B


def _relocation_scenario(crash_at: frozenset[int]) -> tuple[Driver, tuple[object, ...]]:
    """Instance 0 loses its pod, the rebuild never becomes ready on node A, a directive steers it to
    node B."""
    sim = Sim()
    sim.settings = replace(sim.settings, auto_migrate_max_attempts=3, instance_ready_timeout=READY_TIMEOUT)
    sim.apply_replica(base_replica(replicas=2))
    driver = Driver(sim, crash_at=crash_at)
    driver.run(converged)
    _lose_pod_onto_a_bad_node(sim, driver)
    driver.run(lambda s: converged(s) and s.node_of(POD0) == NODE_B and not s.ledger_entries())
    triggered = _messages(sim, "AutoMigrationTriggered")
    assert len(triggered) <= 1  # a replayed directive is never announced twice
    assert all("attempt 1/3" in m for m in triggered)  # nor counted twice on the budget
    assert all(m["attempt"] == 1 for m in sim.status.get("migrations") or [])
    return driver, (end_state(sim), sim.node_of(POD0), sim.ledger_entries())


RELOCATION_TOTAL, RELOCATION_END = baseline(_relocation_scenario)


@pytest.mark.parametrize("k", range(1, RELOCATION_TOTAL + 1))
def test_a_crash_after_any_action_of_a_relocation_reaches_the_same_end(k: int) -> None:
    """Go ``recordRelocationDirective``'s REPLAY guard: a directive persisted by a pass that died
    before its status write is this attempt's own; nothing is recorded or announced twice."""
    _, state = _relocation_scenario(frozenset({k}))
    assert state == RELOCATION_END
