"""OME's root ``reconcile_test.go``-like file of 612,458 characters, its second half (goZ2).

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, the ``workload_test`` package file of 612,458
characters whose path and commit the index does not name (found by content, read whole; the tests in
its characters 306,000–612,458). Go drives ``workload.Reconcile`` pass after pass against a fake
client with a kubelet model (its ``recoveryHarness``); here the replica is applied to the simulated
world and planner passes run (``omereconcile.simulate``). The sim's chart ladder (three attempts, a
minute apart at first, doubling) is Go's ``pushRetryLadder``; its ``imagepull`` behaviour is Go's
``badImage`` (ImagePullBackOff past the stuck-pod grace). Which cases of that half are ported, not
mappable or not yet ported is in docs/goparity.md ("Part 2 (goZ2)").
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import parse_time

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ (reconcile_test, 612,458 characters)"
SURGE_ONE = {
    "updateStrategy": {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
}


def _pod(index: int, ordinal: int = 0) -> str:
    return f"llama-pool-engine-{index}-default-{ordinal}"


def _row(sim: Sim, index: int) -> dict[str, Any] | None:
    return next((r for r in sim.rows() if int(r["index"]) == index), None)


def _uid(sim: Sim, name: str) -> str:
    return str(sim.pods[name].obj["metadata"]["uid"])


def _image(sim: Sim, name: str) -> str:
    return str(sim.pods[name].obj["spec"]["containers"][0]["image"])


def _block(sim: Sim, revision: str) -> dict[str, Any] | None:
    return next((b for b in sim.status.get("retryBlocks", []) if b.get("targetRevision") == revision), None)


def _time(text: str) -> datetime:
    when = parse_time(text)
    assert when is not None
    return when


def _hold_for(driver: Driver, passes: int, *checks: Callable[[], None]) -> None:
    """``passes`` more passes five seconds apart, ``checks`` after each: what a story asserts keeps
    holding once it has come to rest."""
    for _ in range(passes):
        driver.one_pass()
        driver.sim.advance(5)
        for check in checks:
            check()


def _at_rest_still(at_rest: Callable[[Sim], bool], sim: Sim) -> None:
    assert at_rest(sim), GO


def _run_with(
    driver: Driver, until: Callable[[Sim], bool], invariant: Callable[[], None], limit: float
) -> None:
    """Go's ``runWithInvariant``: passes until ``until`` holds, ``invariant`` checked after every
    applied action (the driver's own check point)."""
    own = driver.check

    def check() -> None:
        own()
        invariant()

    setattr(driver, "check", check)  # noqa: B010 - an instance hook over the dataclass method
    try:
        driver.run(until, limit=limit)
    finally:
        delattr(driver, "check")


def _failed_push() -> tuple[Sim, Driver, str]:
    """Go's ``newFailedPushHarness``: three single-pod Instances serving v1 under SurgeThenDrain with
    maxSurge=1 and maxUnavailable=0, pushed onto an unpullable revision until Instance 0 reads Failed
    (its surge replacement sat in ImagePullBackOff past the stuck-pod grace and the attempt was
    disposed) while its v1 pod keeps serving beside its peers."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=3, lifecycle=SURGE_ONE))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 3)
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    bad = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: (_row(s, 0) or {}).get("phase") == "Failed")
    assert sim.serving_indices() == {0, 1, 2}, GO
    return sim, driver, bad


def test_scale_while_push_failed_scale_down_removes_the_stuck_instance_first() -> None:
    """Go: … TestScaleWhilePushFailed_ScaleDownRemovesTheStuckInstanceFirst: a scale from three to two
    while Instance 0 is Failed removes Instance 0, the stuck one, and nothing else. Instances 1 and 2
    keep the v1 pods they serve through, the serving count never drops below two, and the retry block
    for the pushed revision stays on the status."""
    sim, driver, bad = _failed_push()
    before = {i: _uid(sim, _pod(i)) for i in (1, 2)}

    def keep_serving() -> None:
        assert len(sim.serving_indices() & {1, 2}) == 2, GO
        for i, uid in before.items():
            assert _uid(sim, _pod(i)) == uid, GO
            assert _image(sim, _pod(i)) == "vllm:v1", GO

    def at_rest(s: Sim) -> bool:
        rows = s.rows()
        return (
            len(rows) == 2
            and _row(s, 0) is None
            and not any(
                int(p.obj["metadata"]["labels"]["ome.io/instance-index"]) == 0 for p in s.pods.values()
            )
            and all(r["phase"] != "Deleting" for r in rows)
        )

    sim.update_spec(replicas=2)
    _run_with(driver, at_rest, keep_serving, limit=600)
    _hold_for(driver, 4, keep_serving, lambda: _at_rest_still(at_rest, sim))
    assert _block(sim, bad) is not None, GO


def test_scale_while_push_failed_scale_up_stays_under_the_ceiling() -> None:
    """Go: … TestScaleWhilePushFailed_ScaleUpStaysUnderTheCeiling: a scale from three to four while
    Instance 0 is Failed adds exactly one Instance, index 3, rendered from the pushed revision, and at
    no point are more pods alive than the four replicas plus the surge budget of one. The three v1
    pods keep serving until the ladder is spent and the revision is Held; only the stuck Instance and
    the new one may read Failed."""
    sim, driver, bad = _failed_push()
    before = {i: _uid(sim, _pod(i)) for i in (0, 1, 2)}

    def under_the_ceiling() -> None:
        assert len(sim.live_pods()) <= 4 + 1, (GO, sim.live_pods())
        for i, uid in before.items():
            assert _uid(sim, _pod(i)) == uid, GO
            assert i in sim.serving_indices(), GO
        assert all(int(r["index"]) <= 3 for r in sim.rows()), GO
        for p in sim.pods.values():
            if p.obj["metadata"]["labels"]["ome.io/instance-index"] == "3":
                assert p.obj["spec"]["containers"][0]["image"] == "vllm:v2", GO

    def held(s: Sim) -> bool:
        return (_block(s, bad) or {}).get("state") == "Held"

    sim.update_spec(replicas=4)
    _run_with(driver, held, under_the_ceiling, limit=3600)
    _hold_for(driver, 4, under_the_ceiling)
    assert _row(sim, 3) is not None, GO
    for row in sim.rows():
        if row["phase"] == "Failed":
            assert int(row["index"]) in (0, 3), GO


RECREATE_ONE = {
    "updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
}


def _stuck_recreate(attempts: int) -> tuple[Sim, Driver, str]:
    """Go's ``newStuckRecreateHarness``: three single-pod Instances serving v1 under RecreatePod with
    maxUnavailable=1 and a ladder of ``attempts``, pushed onto an unpullable revision until Instance
    0's replacement is parked in ImagePullBackOff with the attempt still open. The stuck-pod grace
    (an hour) is longer than the story, so only the scale can end the attempt."""
    ladder = RetryPolicy(attempts, timedelta(minutes=1), timedelta(minutes=30), 2.0)
    sim = Sim(settings=OperatorSettings(stuck_pod_grace_period=timedelta(hours=1), update_retry=ladder))
    sim.apply_replica(base_replica(replicas=3, lifecycle=RECREATE_ONE))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 3)
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    bad = sim.render().name  # type: ignore[union-attr]

    def parked(s: Sim) -> bool:
        row = _row(s, 0) or {}
        op = row.get("operation") or {}
        pod = s.pods.get(_pod(0))
        if row.get("phase") != "Updating" or op.get("targetRevision") != bad or pod is None:
            return False
        statuses = pod.obj["status"].get("containerStatuses") or [{}]
        waiting = (statuses[0].get("state") or {}).get("waiting") or {}
        return _image(s, _pod(0)) == "vllm:v2" and waiting.get("reason") == "ImagePullBackOff"

    driver.run(parked, limit=600)
    assert sim.serving_indices() == {1, 2}, GO
    assert _block(sim, bad) is None, GO  # a first attempt opens with no retry block
    return sim, driver, bad


def _scale_stuck_recreate_to_two(sim: Sim, driver: Driver, untouched: Callable[[], bool]) -> None:
    """Go's ``scaleStuckRecreateToTwo``: scale to two with the attempt open and run the wave to rest
    (two rows, Instance 0 and its pods gone, none Deleting); while ``untouched()`` holds, Instances 1
    and 2 serve through the very v1 pods they had and no pushed pod appears on them."""
    before = {i: _uid(sim, _pod(i)) for i in (1, 2)}

    def keep_serving() -> None:
        if not untouched():
            return
        assert sim.serving_indices() >= {1, 2}, GO
        for i, uid in before.items():
            assert _uid(sim, _pod(i)) == uid, GO
            assert _image(sim, _pod(i)) == "vllm:v1", GO

    def at_rest(s: Sim) -> bool:
        rows = s.rows()
        return (
            len(rows) == 2
            and _row(s, 0) is None
            and _pod(0) not in s.pods
            and all(r["phase"] != "Deleting" for r in rows)
        )

    sim.update_spec(replicas=2)
    _run_with(driver, at_rest, keep_serving, limit=600)
    _hold_for(driver, 4, keep_serving, lambda: _at_rest_still(at_rest, sim))


@pytest.mark.xfail(
    strict=True,
    reason="known difference: ours does not charge the retry ladder when a scale-down retires the "
    "Instance of an open update attempt, so the freed budget starts the next attempt on a survivor "
    "in the scale's own pass; Go's wave records the attempt with the pod's pull failure (the rule "
    "as the test states it; the Go function that writes it is not found in the index)",
)
def test_scale_while_recreate_attempt_open_last_attempt_ends_held() -> None:
    """Go: … TestScaleWhileRecreateAttemptOpen_LastAttemptEndsHeld: with a ladder of one attempt, the
    scale that retires the attempt's Instance leaves the revision Held with the pull failure as its
    reason (one RetryHeld warning), no attempt reopens on a survivor, and the status still reports the
    push that has not landed."""
    sim, driver, bad = _stuck_recreate(1)
    _scale_stuck_recreate_to_two(sim, driver, lambda: True)
    block = _block(sim, bad)
    assert block is not None, GO
    assert (block["state"], block["attemptsStarted"], block["reason"]) == ("Held", 1, "ImagePullBackOff"), GO
    assert [e.event_reason for e in sim.events].count("RetryHeld") == 1, GO
    for i in (1, 2):
        row = _row(sim, i)
        assert row is not None, GO
        assert row["phase"] == "Ready", GO
        assert not row.get("operation"), GO
        assert row.get("runningRevision") != bad, GO


@pytest.mark.xfail(
    strict=True,
    reason="known difference: ours does not charge the retry ladder when a scale-down retires the "
    "Instance of an open update attempt, so the freed budget starts the next attempt on a survivor "
    "in the scale's own pass; Go's wave records the attempt with the pod's pull failure (the rule "
    "as the test states it; the Go function that writes it is not found in the index)",
)
def test_scale_while_recreate_attempt_open_below_the_bound_the_next_attempt_waits() -> None:
    """Go: … TestScaleWhileRecreateAttemptOpen_BelowTheBoundTheNextAttemptWaits: with attempts left on
    the ladder (Go's ``pushRetryLadder``, three), the attempt the scale ended counts as one (Backoff,
    the pull failure, a retry ahead) and the survivors are left alone until the backoff is due; the
    next attempt then opens on a survivor, no sooner, and the block reads RetryInProgress."""
    sim, driver, bad = _stuck_recreate(3)
    recorded: dict[str, Any] = {}

    def untouched() -> bool:
        block = _block(sim, bad)
        if block is not None and not recorded:
            assert (block["state"], block["attemptsStarted"], block["reason"]) == (
                "Backoff",
                1,
                "ImagePullBackOff",
            ), GO
            assert block.get("nextRetryAt"), GO
            recorded.update(due=block["nextRetryAt"], at=sim.now)
        return not recorded or sim.now < _time(recorded["due"])

    _scale_stuck_recreate_to_two(sim, driver, untouched)
    assert recorded, GO
    assert _time(recorded["due"]) > recorded["at"], GO

    def reopened(s: Sim) -> bool:
        return any((_row(s, i) or {}).get("phase") == "Updating" for i in (1, 2))

    while not reopened(sim):
        assert sim.now < _time(recorded["due"]) + timedelta(minutes=5), GO
        driver.one_pass()
        sim.advance(1)
    assert sim.now >= _time(recorded["due"]), GO
    block = _block(sim, bad)
    assert block is not None, GO
    assert (block["state"], block["attemptsStarted"]) == ("RetryInProgress", 1), GO


def _pods_of(sim: Sim, index: int) -> list[str]:
    return sorted(
        n
        for n, p in sim.pods.items()
        if p.obj["metadata"]["labels"].get("ome.io/instance-index") == str(index)
        and not p.obj["metadata"].get("deletionTimestamp")
    )


@pytest.mark.parametrize("gang", [False, True], ids=["single-pod Instance", "gang, the leader killed"])
@pytest.mark.parametrize("policy", ["None", "RecreateInstanceOnPodRestart"])
def test_runner_killed_once_after_ready_is_never_a_crash_of_the_revision(gang: bool, policy: str) -> None:
    """Go: … TestRunnerKilledOnceAfterReady_IsNeverACrashOfTheRevision (each entry): one kill of a
    serving runner, seconds after its Instance entered Ready and with no roll in flight (two Instances
    under RecreatePod maxUnavailable 1), is not a crash of the running revision: under policy None the
    kubelet's restart is the whole repair (no RestartTriggered, the pod keeps its identity); under
    RecreateInstanceOnPodRestart the policy rebuilds the Instance once, at once (the killed pod
    replaced). The retry ladder records nothing, no row reads Failed, nothing is escalated or held."""
    sim = Sim(workers=1 if gang else 0)
    sim.apply_replica(base_replica(replicas=2, lifecycle={**RECREATE_ONE, "restartPolicy": policy}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    victim = next(n for n in _pods_of(sim, 0) if not gang or "-leader-" in n)
    uid = _uid(sim, victim)
    sim.advance(10)  # seconds after Ready (the status dates readySince to the second)
    driver.one_pass()
    sim.restart_runner(victim)

    def never_escalated() -> None:
        assert all(r["phase"] != "Failed" for r in sim.rows()), GO
        assert not {"InstanceFailed", "RetryHeld"} & set(sim.event_reasons()), GO
        assert not sim.status.get("retryBlocks"), GO

    def settled(s: Sim) -> bool:
        rows = s.rows()
        return (
            converged(s)
            and len(rows) == 2
            and all(r["phase"] == "Ready" and not r.get("operation") for r in rows)
            and len(s.serving_instances()) == 2
        )

    sim.tick()
    _run_with(driver, settled, never_escalated, limit=600)
    _hold_for(driver, 4, never_escalated)
    alive = victim in sim.pods and _uid(sim, victim) == uid
    repairs = sim.event_reasons().count("RestartTriggered")
    if policy == "RecreateInstanceOnPodRestart":
        assert repairs == 1, GO
        assert not alive, GO
    else:
        assert repairs == 0, GO
        assert alive, GO


@pytest.mark.parametrize("policy", ["None", "RecreateInstanceOnPodRestart", "default"])
@pytest.mark.parametrize("shape", ["single", "gang leader", "gang worker"])
def test_idle_instance_unready_past_the_window_no_policy_rebuilds_it(shape: str, policy: str) -> None:
    """Go: … TestReconcile_IdleInstanceUnreadyPastTheWindow_NoPolicyRebuildsIt (each entry): three
    Instances at rest under SurgeThenDrain maxSurge 1; the highest Instance's pod (a gang's leader or
    worker) keeps running but stops passing readiness (the sim's never-ready runner). Past the
    stuck-pod grace (five minutes) it is dark: the row stays Ready on v1 with its serving count down
    and nothing open, the same pods stay, no repair opens and no RestartTriggered is raised under any
    restart policy (readiness is the runtime's own signal, not a runner restart), the running
    revision's ladder is charged nothing, two Instances serve and the peers are untouched."""
    gang = shape != "single"
    lifecycle: dict[str, Any] = {**SURGE_ONE}
    if policy != "default":
        lifecycle["restartPolicy"] = policy
    ladder = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0)
    sim = Sim(
        workers=1 if gang else 0,
        settings=OperatorSettings(stuck_pod_grace_period=timedelta(minutes=5), update_retry=ladder),
    )
    sim.apply_replica(base_replica(replicas=3, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 3)
    running = _row(sim, 2)
    assert running is not None
    revision = running["runningRevision"]
    victim = {"single": _pod(2), "gang leader": "llama-pool-engine-2-leader-0"}.get(
        shape, "llama-pool-engine-2-worker-0"
    )
    peers = {i: [_uid(sim, n) for n in _pods_of(sim, i)] for i in (0, 1)}
    before = [_uid(sim, n) for n in _pods_of(sim, 2)]
    pod = sim.pods[victim]
    pod.behaviour = "pending"
    pod.restarted_at = sim.now
    sim.tick()
    driver.one_pass()
    sim.advance(5 * 60)
    for _ in range(6):
        driver.one_pass()
        sim.advance(5)
        assert "RestartTriggered" not in sim.event_reasons(), GO
        row = _row(sim, 2)
        assert row is not None, GO
        assert row["phase"] == "Ready", GO
        assert not row.get("operation"), GO
        assert row["runningRevision"] == revision, GO
        assert (row.get("servingPodCount") or 0) < row["podCount"], GO
        assert [_uid(sim, n) for n in _pods_of(sim, 2)] == before, GO
        assert _block(sim, revision) is None, GO
        assert sim.serving_instances() == {0, 1}, GO
        for i, uids in peers.items():
            assert [_uid(sim, n) for n in _pods_of(sim, i)] == uids, GO


def _surge_handed_over(timeout: timedelta = timedelta(minutes=4)) -> tuple[Sim, Driver, str]:
    """Go's ``surgeHandedOver``: one single-pod Instance on v1 under SurgeThenDrain (maxSurge 1,
    an operation deadline of four minutes), pushed to v2 until the row is at its SurgeDrain step with
    both pods standing: the replacement serves and the source is out of rotation, draining."""
    sim = Sim(
        settings=OperatorSettings(
            instance_ready_timeout=timeout,
            stuck_pod_grace_period=timedelta(seconds=60),
            update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
        )
    )
    sim.apply_replica(base_replica(replicas=1, lifecycle=SURGE_ONE))
    driver = Driver(sim)
    driver.run(converged)
    v1 = sim.render().name  # type: ignore[union-attr]
    sim.image = "vllm:v2"

    def handed_over(s: Sim) -> bool:
        op = (_row(s, 0) or {}).get("operation") or {}
        return op.get("step") == "SurgeDrain" and len(_pods_of(s, 0)) == 2

    while not handed_over(sim):
        assert sim.now < datetime.fromisoformat("2025-01-01T01:00:00+00:00"), driver.describe()
        driver.one_pass()
        sim.advance(0.5)
    for name in _pods_of(sim, 0):
        replacement = _image(sim, name) == "vllm:v2"
        assert (sim.gate_of(name) == "True") == replacement, GO
    return sim, driver, v1


def _no_pod_on(sim: Sim, image: str) -> Callable[[], None]:
    seen = {n for n in _pods_of(sim, 0) if _image(sim, n) == image}
    uids = {_uid(sim, n) for n in seen}

    def check() -> None:
        for name in _pods_of(sim, 0):
            if _image(sim, name) == image:
                assert _uid(sim, name) in uids, (GO, f"{name} created on the withdrawn image")

    return check


def _ready_on(sim: Sim, revision: str) -> bool:
    row = _row(sim, 0) or {}
    return (
        row.get("phase") == "Ready"
        and not row.get("operation")
        and row.get("runningRevision") == revision
        and 0 in sim.serving_indices()
    )


def test_surge_after_handover_rollback_then_replacement_lost_ends_the_roll_on_the_starting_revision() -> None:
    """Go: … TestSurgeAfterHandover_RollbackThenReplacementLostEndsTheRollOnTheStartingRevision: a
    single-pod surge hands over, the operator re-applies the starting revision and the replacement
    is lost before the source's drain converges. Nothing is rebuilt at the withdrawn revision: the
    roll ends (``SurgeAbandoned``), the source returns to rotation on the starting revision with the
    pod it had, the row is Ready there, and as the clock passes nothing re-opens and no repair runs."""
    sim, driver, v1 = _surge_handed_over()
    (source,) = [n for n in _pods_of(sim, 0) if _image(sim, n) == "vllm:v1"]
    (replacement,) = [n for n in _pods_of(sim, 0) if _image(sim, n) == "vllm:v2"]
    source_uid = _uid(sim, source)
    sim.image = "vllm:v1"
    del sim.pods[replacement]
    no_v2 = _no_pod_on(sim, "vllm:v2")
    _run_with(driver, lambda s: _ready_on(s, v1), no_v2, limit=60)
    assert "SurgeAbandoned" in sim.event_reasons(), GO
    assert _pods_of(sim, 0) == [source], GO
    assert _uid(sim, source) == source_uid, GO
    for _ in range(15):
        driver.one_pass()
        sim.advance(5)
        no_v2()
    assert _ready_on(sim, v1), GO
    assert "RestartTriggered" not in sim.event_reasons(), GO


def test_surge_after_handover_corrective_push_then_replacement_lost_rolls_to_the_corrected_revision() -> None:
    """Go: … TestSurgeAfterHandover_CorrectivePushThenReplacementLostRollsToTheCorrectedRevision: a
    single-pod surge hands over, the operator pushes a corrected revision (v3) and the replacement is
    lost before the source's drain converges. The next pass ends the roll with the source back in
    rotation on the starting revision (``SurgeAbandoned``); the corrected revision then rolls from
    there until the Instance serves it; no pod of the withdrawn revision is created again and no
    repair runs."""
    sim, driver, v1 = _surge_handed_over()
    (replacement,) = [n for n in _pods_of(sim, 0) if _image(sim, n) == "vllm:v2"]
    sim.image = "vllm:v3"
    v3 = sim.render().name  # type: ignore[union-attr]
    del sim.pods[replacement]
    no_v2 = _no_pod_on(sim, "vllm:v2")
    sim.tick()
    driver.one_pass()
    no_v2()
    assert _ready_on(sim, v1), (GO, driver.describe())
    assert "SurgeAbandoned" in sim.event_reasons(), GO
    _run_with(driver, lambda s: converged(s) and _ready_on(s, v3), no_v2, limit=600)
    assert [_image(sim, n) for n in _pods_of(sim, 0)] == ["vllm:v3"], GO
    assert "RestartTriggered" not in sim.event_reasons(), GO


def test_surge_after_handover_replacement_lost_with_source_gone_then_rollback_rebuilds() -> None:
    """Go: … TestSurgeAfterHandover_ReplacementLostWithSourceGoneThenRollbackRebuildsAtTheStartingRevision:
    a single-pod surge hands over and the drained source is deleted; the replacement is then lost in
    the window in which the operator re-applies the starting revision. The roll ends as a fresh
    start: the next pass leaves the row Failed with no operation on the revision it ran, and the
    Create pass rebuilds the Instance there without a repair; no pod of the withdrawn revision is
    created again."""
    sim, driver, v1 = _surge_handed_over()

    def source_gone(s: Sim) -> bool:
        op = (_row(s, 0) or {}).get("operation") or {}
        pods = _pods_of(s, 0)
        return op.get("step") == "SurgeDrain" and len(pods) == 1 and _image(s, pods[0]) == "vllm:v2"

    while not source_gone(sim):
        assert len(_pods_of(sim, 0)) >= 1, driver.describe()
        driver.one_pass()
        sim.advance(0.5)
    sim.image = "vllm:v1"
    (replacement,) = _pods_of(sim, 0)
    del sim.pods[replacement]
    no_v2 = _no_pod_on(sim, "vllm:v2")
    sim.tick()
    driver.one_pass()
    no_v2()
    row = _row(sim, 0)
    assert row is not None, GO
    assert (row["phase"], row.get("operation"), row.get("runningRevision")) == ("Failed", None, v1), GO
    _run_with(driver, lambda s: converged(s) and _ready_on(s, v1), no_v2, limit=600)
    assert [_image(sim, n) for n in _pods_of(sim, 0)] == ["vllm:v1"], GO
    assert "RestartTriggered" not in sim.event_reasons(), GO


def test_converged_subject_held_ladder_on_its_revision_is_reported_with_nothing_to_run() -> None:
    """Go: … TestConvergedSubject_HeldLadderOnItsRevisionIsReportedWithNothingToRun: four single-pod
    Instances serve the revision the Component is at with nothing in flight, and that revision's
    retry ladder is Held (three attempts, reason Error, written into status as Go's test appends it).
    Pass after pass reports the Held ladder as the roll's hold (gate Held, on that revision, naming the
    three failed attempts) rather than reading idle, and no settled Instance moves."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=4))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 4)
    revision = sim.status["updateRevision"]
    pods = {n: _uid(sim, n) for n in sim.live_pods()}
    at = sim.status["conditions"][0]["lastTransitionTime"]
    sim.status["retryBlocks"] = [
        {
            "targetRevision": revision,
            "state": "Held",
            "attemptsStarted": 3,
            "reason": "Error",
            "firstFailureAt": at,
            "lastFailureAt": at,
        }
    ]
    for _ in range(3):
        driver.one_pass()
        sim.advance(5)
        hold = sim.status.get("rolloutHold") or {}
        assert (hold.get("gate"), hold.get("target")) == ("Held", revision), GO
        assert "3 failed attempt" in hold.get("reason", ""), GO
        assert {n: _uid(sim, n) for n in sim.live_pods()} == pods, GO
        assert all(r["phase"] == "Ready" and not r.get("operation") for r in sim.rows()), GO


def test_deadline_inside_the_surge_drain_window_does_not_fail_the_surge() -> None:
    """Go: … TestDeadlineInsideTheSurgeDrainWindow_DoesNotFailTheSurge: a surge holds its source out of
    rotation before deleting it; an operation deadline (thirty minutes) that elapses inside that
    window, with the replacement Ready and in rotation, finds the Instance serving and fails nothing:
    no Failed row, no recorded failure, no InstanceFailed warning, and the surge completes on the
    pushed revision."""
    sim, driver, _ = _surge_handed_over(timedelta(minutes=30))
    sim.advance(31 * 60)
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None, GO
    assert row["phase"] != "Failed", (GO, row)
    assert not row.get("lastFailure"), (GO, row)
    assert "InstanceFailed" not in sim.event_reasons(), GO
    v2 = sim.render().name  # type: ignore[union-attr]
    driver.run(lambda s: converged(s) and _ready_on(s, v2), limit=600)
    assert "InstanceFailed" not in sim.event_reasons(), GO


@pytest.mark.xfail(
    strict=True,
    reason="known difference: on the pass the deadline elapses ours writes the rebuilt replacement's "
    "serving gate and promotes on the next pass (the row stays Updating, not Failed, and is Ready one "
    "pass later with no InstanceFailed and no block); Go's pass gates and promotes at once",
)
def test_deadline_on_the_promote_pass_single_pod_surge_row_stays_ready() -> None:
    """Go: … TestDeadlineOnThePromotePass_SinglePodSurgeRowStaysReady: a single-pod surge under a
    thirty-minute operation deadline has deleted its drained source; the replacement, the only pod
    left, is lost, and the drain step rebuilds it (one pod, not yet serving). On the pass at which the
    deadline has elapsed the rebuilt pod is ContainersReady: the promote lands before the deadline
    stamp, so the row is Ready on the pushed revision with no operation, no InstanceFailed warning,
    and no wave on the pushed revision's ladder."""
    sim, driver, _ = _surge_handed_over(timedelta(minutes=30))
    v2 = sim.render().name  # type: ignore[union-attr]

    def source_gone(s: Sim) -> bool:
        op = (_row(s, 0) or {}).get("operation") or {}
        pods = _pods_of(s, 0)
        return op.get("step") == "SurgeDrain" and len(pods) == 1 and _image(s, pods[0]) == "vllm:v2"

    while not source_gone(sim):
        assert len(_pods_of(sim, 0)) >= 1, driver.describe()
        driver.one_pass()
        sim.advance(0.5)
    (replacement,) = _pods_of(sim, 0)
    del sim.pods[replacement]
    sim.tick()
    driver.one_pass()
    pods = _pods_of(sim, 0)
    assert len(pods) == 1, (GO, driver.describe())
    assert sim.gate_of(pods[0]) != "True", GO
    sim.advance(31 * 60)
    driver.one_pass()
    row = _row(sim, 0)
    assert row is not None, GO
    assert (row["phase"], row.get("operation"), row.get("runningRevision")) == ("Ready", None, v2), GO
    assert "InstanceFailed" not in sim.event_reasons(), GO
    assert _block(sim, v2) is None, GO
