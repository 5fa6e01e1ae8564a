"""OME's root ``reconcile_test.go``-like file of 612,458 characters: its unready-victim and pod-loss stories.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, the ``workload_test`` package file of 612,458
characters whose path and commit the index does not name (found by content; these tests lie in its
characters 496,000–514,000, read whole with the helpers they call: ``unreadyVictimHarness`` and
``requireUnreadyVictimRollsFirstInsideTheWindow`` there, ``offTargetCrashHarness``,
``offTargetStrategies``, ``rollShapes``, ``requireDarkInstanceRollsFirst``, ``landedOn`` and
``untouchedOn`` in the 159,542-character earlier text of the same file, the kubelet model and
``settledOn`` in its first 100,000 characters). Go drives ``workload.Reconcile`` pass after pass
against a fake client with a kubelet model (its ``recoveryHarness``); here the replica is applied to
the simulated world and planner passes run (``omereconcile.simulate``). Go's failed readiness probe
(``failReadiness``: the container keeps running, ContainersReady and Ready go False) is the sim's
``never`` runner; an in-place image patch restarts the container and clears the fault in both.
Which cases are ported, not mappable or not yet ported is in docs/goparity.md ("Part 2, the
unready-victim and pod-loss stories").
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time, parse_time
from omerender import constants as c
from tests.goparity.test_workload_reconcile_part2 import (
    GO,
    RECREATE_ONE,
    SURGE_ONE,
    _image,
    _pods_of,
    _row,
    _run_with,
)

IN_PLACE_ONE = {
    "updateStrategy": {"type": "InPlaceIfPossible", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
}
# Go's ``offTargetStrategies[:3]``: the surge arm and both drain-first arms, each with its budget.
STRATEGIES = {"SurgeThenDrain": SURGE_ONE, "RecreatePod": RECREATE_ONE, "InPlaceIfPossible": IN_PLACE_ONE}
STUCK_GRACE = timedelta(minutes=5)  # ``unreadyVictimHarness``: h.stuckGrace = 5 * time.Minute
FIXED = "vllm:v2"


def _budget(strategy: str) -> tuple[int, int]:
    rolling = STRATEGIES[strategy]["updateStrategy"]["rollingUpdate"]
    return int(rolling["maxSurge"]), int(rolling["maxUnavailable"])


def _restarts(sim: Sim) -> int:
    return sim.event_reasons().count("RestartTriggered")


def _repair_in_flight(sim: Sim) -> bool:
    """Go ``repairInFlight``: some row is under a Restart."""
    return any((r.get("operation") or {}).get("type") == R.OP_RESTART for r in sim.rows())


def _landed_on(sim: Sim, revision: str) -> list[int]:
    """Go ``landedOn``: the Instances Ready on ``revision`` with no operation, lowest index first."""
    return sorted(
        int(r["index"])
        for r in sim.rows()
        if r["phase"] == "Ready" and not r.get("operation") and r.get("runningRevision") == revision
    )


def _untouched_on(sim: Sim, index: int, revision: str) -> bool:
    """Go ``untouchedOn``: the Instance is Ready on ``revision`` with no operation."""
    return index in _landed_on(sim, revision)


def _settled_on(sim: Sim, revision: str, n: int) -> bool:
    """Go ``settledOn``: ``n`` rows, each Ready on ``revision`` with no operation, and every live pod
    on that revision's hash and the image it renders."""
    rows = sim.rows()
    if len(rows) != n or any(
        r["phase"] != "Ready" or r.get("runningRevision") != revision or r.get("operation") for r in rows
    ):
        return False
    live = sim.live_pods()
    per_instance = 1 + sim.workers
    revision_hash = revision.rsplit("-", 1)[-1]
    return len(live) == n * per_instance and all(
        sim.pods[p].obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == revision_hash
        and _image(sim, p) == sim.image
        for p in live
    )


def _fail_readiness(sim: Sim, index: int, runner: str | None = None) -> None:
    """Go ``failReadiness``: the Instance's pods (the named runner's) keep running and fail their
    readiness probe from the next kubelet pass on."""
    names = [n for n in _pods_of(sim, index) if runner is None or f"-{runner}-" in n]
    assert names, (GO, index, runner)
    for name in names:
        sim.pods[name].behaviour = "never"
    sim.tick()


def _unready_victim(
    policy: str, strategy: str, replicas: int, *, gang: bool = False, runner: str | None = None
) -> tuple[Sim, Driver, int]:
    """Go ``unreadyVictimHarness`` over ``offTargetCrashHarness``: ``replicas`` Instances settled on v1
    under ``strategy`` with its budget and the restart policy, a stuck-pod grace of five minutes, and
    the highest Instance's pods (its ``runner``'s) failing readiness; one pass later its row is Ready
    with no operation and its serving count below its pod count."""
    ladder = RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0)
    sim = Sim(
        workers=1 if gang else 0,
        settings=OperatorSettings(stuck_pod_grace_period=STUCK_GRACE, update_retry=ladder),
    )
    sim.apply_replica(
        base_replica(replicas=replicas, lifecycle={**STRATEGIES[strategy], "restartPolicy": policy})
    )
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    victim = replicas - 1
    _fail_readiness(sim, victim, runner)
    driver.one_pass()
    sim.advance(5)
    row = _row(sim, victim)
    assert row is not None, GO
    assert row["phase"] == "Ready", (GO, row)
    assert not row.get("operation"), (GO, row)
    assert (row.get("servingPodCount") or 0) < row["podCount"], (GO, row)
    return sim, driver, victim


def _require_dark_instance_rolls_first(
    driver: Driver,
    victim: int,
    serving: list[int],
    strategy: str,
    v1: str,
    fixed: str,
    done: Callable[[Sim], bool],
    landed_at: list[datetime],
) -> None:
    """Go ``requireDarkInstanceRollsFirst`` (``held`` empty): drives the roll on the fixed revision
    until ``done`` and checks after every applied action that the roll stays inside its budget, no
    repair opens, every pod created after the bump runs the fix, and until the first new landing
    every Instance in ``serving`` is untouched on v1 and in rotation, so the first landing is the
    victim's and costs no capacity; no RestartTriggered is recorded. ``landed_at`` receives the time
    of the first landing."""
    sim = driver.sim
    surge, unavail = _budget(strategy)
    bumped_at = sim.now
    restarts = _restarts(sim)
    already = set(_landed_on(sim, fixed))
    fixed_hash = fixed.rsplit("-", 1)[-1]
    first: list[int] = []

    def invariant() -> None:
        assert not _repair_in_flight(sim), (GO, "a repair opened", driver.describe())
        ops = [r.get("operation") or {} for r in sim.rows()]
        on_surge = sum(
            1 for op in ops if op.get("type") == R.OP_UPDATE and op.get("step") in ("Surge", "SurgeDrain")
        )
        if strategy == "SurgeThenDrain":
            assert on_surge <= surge, (GO, driver.describe())
        else:
            offline = sum(1 for r in sim.rows() if r["phase"] == "Updating")
            assert offline <= unavail, (GO, driver.describe())
        for name in sim.live_pods():
            pod = sim.pods[name].obj
            if parse_time(pod["metadata"]["creationTimestamp"]) > bumped_at:  # type: ignore[operator]
                assert pod["metadata"]["labels"][c.LABEL_REVISION_HASH] == fixed_hash, (GO, name)
                assert _image(sim, name) == FIXED, (GO, name)
        if first:
            return
        landed = [i for i in _landed_on(sim, fixed) if i not in already]
        if landed:
            first.extend(landed)
            landed_at.append(sim.now)
            for peer in serving:
                assert _untouched_on(sim, peer, v1), (GO, f"Instance {peer} rolled before {victim}", landed)
            return
        for peer in serving:
            taken = (GO, f"Instance {peer} taken before the dark Instance {victim} landed", driver.describe())
            assert _untouched_on(sim, peer, v1), taken
            assert peer in sim.serving_instances(), taken

    _run_with(driver, done, invariant, limit=1800)
    assert first, (GO, "no Instance landed the fix")
    assert _restarts(sim) == restarts, GO


@pytest.mark.parametrize("policy", ["None", "RecreateInstanceOnPodRestart"])
def test_rollback_over_an_unready_victim_past_the_window_settles_on_the_starting_revision(
    policy: str,
) -> None:
    """Go: … TestRollback_OverAnUnreadyVictimPastTheWindow_SettlesOnTheStartingRevision (the
    standalone entries, ``<policy>/standalone``): four Instances serve v1 under SurgeThenDrain maxSurge
    1 and the highest one's pod has been unready past the stuck-pod grace (dark) while its row stays
    Ready. A push surges the dark Instance first (the first Instance Ready on the new revision is it);
    v1 is then re-applied, and the rollback settles with every row Ready on v1 and no operation, no
    pod of the new revision alive and all four Instances serving. Throughout, no repair opens (no
    Restart row, no RestartTriggered) and at least three Instances are in rotation."""
    replicas = 4
    sim, driver, victim = _unready_victim(policy, "SurgeThenDrain", replicas)
    v1 = sim.status["updateRevision"]
    sim.advance(STUCK_GRACE.total_seconds())
    restarts = _restarts(sim)
    sim.image = FIXED
    fixed = sim.render().name  # type: ignore[union-attr]

    def floor_holds() -> None:
        assert not _repair_in_flight(sim), (GO, driver.describe())
        assert _restarts(sim) == restarts, (GO, driver.describe())
        assert len(sim.serving_instances()) >= replicas - 1, (GO, driver.describe())

    _run_with(driver, lambda s: bool(_landed_on(s, fixed)), floor_holds, limit=1800)
    assert _landed_on(sim, fixed)[0] == victim, (GO, _landed_on(sim, fixed))
    sim.image = "vllm:v1"
    assert sim.render().name == v1  # type: ignore[union-attr]
    _run_with(driver, lambda s: _settled_on(s, v1, replicas), floor_holds, limit=3600)
    assert not any(_image(sim, n) == FIXED for n in sim.live_pods()), GO
    assert len(sim.serving_instances()) == replicas, (GO, driver.describe())


def _rolls_first_inside_the_window(
    sim: Sim, driver: Driver, victim: int, serving: list[int], strategy: str, replicas: int
) -> None:
    """Go ``requireUnreadyVictimRollsFirstInsideTheWindow``: the fix is pushed while the victim's pod
    is unready inside its grace; the roll lands it on the victim first (``requireDarkInstanceRollsFirst``)
    less than the grace after the pod's ContainersReady went False, then settles with every Instance
    serving."""
    unready_since: datetime | None = None
    for name in _pods_of(sim, victim):
        for cond in sim.pods[name].obj["status"]["conditions"]:
            if cond["type"] == "ContainersReady" and cond["status"] == "False":
                unready_since = parse_time(cond["lastTransitionTime"])
    assert unready_since is not None, (GO, "no pod reporting its containers not ready")
    v1 = sim.status["updateRevision"]
    sim.image = FIXED
    fixed = sim.render().name  # type: ignore[union-attr]
    landed_at: list[datetime] = []
    _require_dark_instance_rolls_first(
        driver, victim, serving, strategy, v1, fixed, lambda s: _settled_on(s, fixed, replicas), landed_at
    )
    assert landed_at, GO
    assert landed_at[0] - unready_since < STUCK_GRACE, (GO, landed_at, unready_since)
    assert len(sim.serving_instances()) == replicas, (GO, driver.describe())


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_unready_victim_inside_the_window_roll_takes_it_first(strategy: str) -> None:
    """Go: … TestReconcile_UnreadyVictimInsideTheWindow_RollTakesItFirst (the standalone entries,
    ``<strategy>/standalone``): four Instances serve v1 under policy None and the highest one's pod
    stops passing readiness while its row stays Ready; the push lands inside the stuck-pod grace. The
    roll takes that Instance first under the surge and both drain-first strategies: the fix lands on
    it while every serving peer is untouched on v1 and in rotation, before the pod's grace has run,
    within the budget, with no repair; the roll then settles with every Instance serving."""
    sim, driver, victim = _unready_victim("None", strategy, 4)
    _rolls_first_inside_the_window(sim, driver, victim, [0, 1, 2], strategy, 4)


@pytest.mark.parametrize("strategy", ["RecreatePod", "InPlaceIfPossible"])
def test_unready_gang_leader_inside_the_window_roll_takes_it_first(strategy: str) -> None:
    """Go: … TestReconcile_UnreadyGangLeaderInsideTheWindow_RollTakesItFirst (each entry): two
    leader+worker gangs serve v1 under policy None and the higher gang's leader stops passing
    readiness beside its serving worker, its row staying Ready with its serving count below its pod
    count; a push inside the stuck-pod grace takes that gang first under a drain-first strategy: the
    fix lands on it while the serving gang is untouched and in rotation, before the leader's grace
    has run, and the roll settles within its budget with both gangs serving and no repair."""
    sim, driver, victim = _unready_victim("None", strategy, 2, gang=True, runner="leader")
    _rolls_first_inside_the_window(sim, driver, victim, [0], strategy, 2)


def _names_instance(hold: dict[str, Any], index: int) -> bool:
    """Go ``holdNamesInstance``: the indices between the reason's last ``; Instance`` (or
    ``; Instances``) and its last `` on revision `` name ``index``."""
    reason = str(hold.get("reason") or "")
    start, end = reason.rfind("; Instance"), reason.rfind(" on revision ")
    if start < 0 or end < 0 or end <= start:
        return False
    clause = reason[start + len("; ") : end].removeprefix("Instances").removeprefix("Instance").strip()
    return any(field.strip() == str(index) for field in clause.split(","))


def _take(sim: Sim, evict: bool) -> None:
    """Go's ``take``: Instance 0's pod is evicted (``evictPods``: reported Failed where it stands,
    kept until a pass deletes it), or deleted with the kubelet reporting it stopped first
    (``exitsCleanOnStop``: Succeeded, exit 0, readiness withdrawn, gone on the next kubelet pass)."""
    (name,) = _pods_of(sim, 0)
    pod = sim.pods[name]
    if evict:
        pod.obj["status"].update(phase="Failed", reason="Evicted")
    else:
        sim.user_delete(name)
        pod.obj["status"]["phase"] = "Succeeded"
        pod.last_terminated = {"reason": "Completed", "exitCode": 0, "finishedAt": format_time(sim.now)}
        pod.gone_at = sim.now + timedelta(seconds=5)
    pod.behaviour = "ended"
    sim.tick()


@pytest.mark.parametrize("evict", [False, True], ids=["deleted, stopped first", "evicted"])
@pytest.mark.parametrize("strategy", ["SurgeThenDrain", "RecreatePod"])
@pytest.mark.parametrize("replicas", [4, 2], ids=["engine", "router"])
def test_steady_service_pod_loss_hold_clears_once_the_instance_serves_again(
    replicas: int, strategy: str, evict: bool
) -> None:
    """Go: … TestSteadyService_PodLossHoldClearsOnceTheInstanceServesAgain (each entry): single-pod
    Instances serve v1 at rest under policy None (four engine Instances, or two router Instances,
    which run the same loop: ours plans a replica alike whatever its component), a stuck-pod grace
    of a minute and a five-second step. Instance 0's pod is taken three times, each time once the
    Instance serves again: deleted with the kubelet reporting it stopped first, or evicted. Each time
    the Instance comes back serving (every row Ready on v1, every pod on v1, all Instances serving)
    within forty steps, some pass while it is short reports the Budget hold on v1 naming Instance 0,
    and the three passes after it is back leave everything serving and report no hold. Ours reports
    the hold by Go's ``standingHold`` (``planner/admission.py`` ``standing_hold``): while the lost pod
    is still listed ended (Succeeded after the stop, or Failed after the eviction), and while the
    rebuilt pod is not yet in rotation."""
    sim = Sim(
        delete_grace=30.0,
        settings=OperatorSettings(
            stuck_pod_grace_period=timedelta(seconds=60),
            update_retry=RetryPolicy(3, timedelta(minutes=1), timedelta(minutes=30), 2.0),
        ),
    )
    sim.apply_replica(
        base_replica(replicas=replicas, lifecycle={**STRATEGIES[strategy], "restartPolicy": "None"})
    )
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    v1 = sim.status["updateRevision"]

    def serving() -> bool:
        return _settled_on(sim, v1, replicas) and len(sim.serving_instances()) == replicas

    named: list[bool] = []
    for rep in range(3):
        _take(sim, evict)
        named.append(False)
        for _ in range(40):
            driver.one_pass()
            sim.advance(5)
            if serving():
                break
            hold = sim.status.get("rolloutHold") or {}
            if hold.get("gate") == "Budget" and hold.get("target") == v1 and _names_instance(hold, 0):
                named[rep] = True
        assert serving(), (GO, f"loss {rep}: Instance 0 never came back serving", driver.describe())
        for _ in range(3):
            driver.one_pass()
            sim.advance(5)
            assert serving(), (GO, f"loss {rep}: left its settled state", driver.describe())
            assert not sim.status.get("rolloutHold"), (GO, f"loss {rep}: a hold left behind")
    assert all(named), (GO, "no pass reported the Budget hold naming Instance 0 while it was short", named)
