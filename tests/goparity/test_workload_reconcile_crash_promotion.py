"""OME's root ``reconcile_test.go``-like file of 612,458 characters: its crash-after-promotion stories.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, the ``workload_test`` package file of 612,458
characters whose path and commit the index does not name (found by content; these tests lie in its
characters 256,000–304,000, the harness they drive in characters 44,000–130,000). A push whose pods pass
readiness, are promoted, and then crash: the roll has already moved such an Instance onto the target, so
the per-Component budget holds the rest of the roll until it serves again or an operator moves the
target, and the update pass says so on every pass (``RecordRolloutHold``).

Go's ``recoveryHarness`` steps are a kubelet pass, one ``Reconcile`` and a clock step of
``max(30 s, RequeueAfter)``; :class:`_Story` runs the simulated world the same way (the sim's kubelet
ticked, one planner pass with every status write applied, the clock moved on), with Go's kubelet
model for the crash-after images as a hook over the sim (``crashAfterServingImage``,
``flapAfterServingImage``, ``crashOnceAfterServingImage``, a pod dying once it has ended four
kubelet passes Ready). The hold a pass reports is the ``status.rolloutHold`` it publishes. Which
cases are ported, pass or differ is in docs/goparity.md ("Part 1, the crash-after-promotion stories").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time, parse_time
from omerender import constants as c
from tests.goparity.reconciler_world import GoStepLoop
from tests.goparity.test_workload_reconcile_part1 import _HARNESS_LADDER, _condition, _crash_after

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ (reconcile_test, 612,458 characters)"

GOOD = "vllm:v1"
FIXED = "vllm:v2"  # Go's fixedImage
CORRECTED = "vllm:corrected"  # Go's correctedImage: a revision born after the crashing one failed
AFTER = "vllm:crash-after-serving"  # serves, then crashes on every later kubelet pass
FLAP = "vllm:flap-after-serving"  # serves, then alternates a crash and a run Ready again
ONCE = "vllm:crash-once-after-serving"  # serves, is promoted, dies once, stays up after the restart

STEP = 30.0  # Go's recoveryStepFloor
CRASH_AFTER_SERVED = 4  # Go's stories set h.crashAfterServed = 4
HARNESS_GRACE = timedelta(seconds=30)  # the harness's default StuckPodGrace


def _rolling_budget(strategy: str) -> dict[str, Any]:
    """Go's ``useRollingBudget``: a budget of one on the arm the strategy spends."""
    surge, unavailable = (1, 0) if strategy == "SurgeThenDrain" else (0, 1)
    return {"type": strategy, "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}


def _image(pod: SimPod) -> str:
    return str(pod.obj["spec"]["containers"][0]["image"])


def _uid(pod: SimPod) -> str:
    return str(pod.obj["metadata"]["uid"])


def _index(pod: SimPod) -> int:
    return int(pod.obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])


def _ready_transition(pod: SimPod) -> datetime:
    cond = next(cd for cd in pod.obj["status"].get("conditions", []) if cd["type"] == "Ready")
    at = parse_time(cond.get("lastTransitionTime"))
    assert at is not None
    return at


def _failure_at(row: dict[str, Any]) -> datetime | None:
    return parse_time((row.get("lastFailure") or {}).get("time"))


def hold_names_instance(hold: dict[str, Any] | None, idx: int) -> bool:
    """Go ``holdNamesInstance``: the hold's not-serving clause (the indices between "Instance" or
    "Instances" and " on revision ") names ``idx``."""
    if not hold:
        return False
    reason = str(hold.get("reason") or "")
    start, end = reason.rfind("; Instance"), reason.rfind(" on revision ")
    if start < 0 or end < 0 or end <= start:
        return False
    clause = reason[start + 2 : end].removeprefix("Instances").removeprefix("Instance").strip()
    return str(idx) in [f.strip() for f in clause.split(",")]


@dataclass
class _Story(GoStepLoop):
    """Go's ``recoveryHarness``, as far as these stories read it."""

    sim: Sim
    driver: Driver
    replicas: int
    runners: int
    served: dict[str, int] = field(default_factory=dict)  # Go's servedPasses, by pod uid
    crashes: dict[str, int] = field(default_factory=dict)  # Go's crashes, by pod uid
    once_crashed: set[int] = field(default_factory=set)  # Go's onceCrashed, by Instance index
    holds: list[dict[str, Any]] = field(default_factory=list)  # every hold a pass reported
    verdicts: int = 0  # passes that reported a verdict (every pass of ours does)
    pass_at: datetime | None = None  # when the pass under inspection ran

    @classmethod
    def converged_on_v1(
        cls,
        *,
        strategy: str,
        policy: str,
        replicas: int = 4,
        workers: int = 0,
        grace: timedelta = HARNESS_GRACE,
        min_ready: int = 0,
    ) -> _Story:
        settings = OperatorSettings(stuck_pod_grace_period=grace, update_retry=_HARNESS_LADDER)
        sim = Sim(settings=settings, workers=workers)
        lifecycle = {"restartPolicy": policy, "updateStrategy": _rolling_budget(strategy)}
        spec: dict[str, Any] = {"lifecycle": lifecycle}
        if min_ready:
            spec["minReadySeconds"] = min_ready
        sim.apply_replica(base_replica(replicas=replicas, **spec))
        driver = Driver(sim, coalesce=False)
        driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
        story = cls(sim, driver, replicas, 1 + workers)
        assert story.settled_on(story.revision(), replicas), GO
        return story

    # -- the world ------------------------------------------------------------------------------------
    def push(self, image: str) -> str:
        """Go's ``pushRevision``/``crashRevision``: the loop pointed at a revision on ``image``."""
        self.sim.image = image
        return self.revision()

    def revision(self) -> str:
        return str(getattr(self.sim.render(), "name", ""))

    def born(self, revision: str) -> datetime | None:
        meta = (self.sim.revisions.get(revision) or {}).get("metadata") or {}
        return parse_time(meta.get("creationTimestamp"))

    def rows(self) -> list[dict[str, Any]]:
        return self.sim.rows()

    def row(self, idx: int) -> dict[str, Any] | None:
        return next((r for r in self.rows() if int(r["index"]) == idx), None)

    def live(self) -> list[tuple[str, SimPod]]:
        return sorted(
            (n, p) for n, p in self.sim.pods.items() if not p.obj["metadata"].get("deletionTimestamp")
        )

    def pods_of(self, idx: int) -> list[SimPod]:
        return [p for _, p in self.live() if _index(p) == idx]

    def promoted_on(self, pod: SimPod) -> bool:
        """Go ``promotedOn``: the pod's row is Ready on the revision the pod carries."""
        row = self.row(_index(pod))
        running = str((row or {}).get("runningRevision") or "")
        return (
            row is not None
            and row["phase"] == "Ready"
            and running.rsplit("-", 1)[-1] == pod.obj["metadata"]["labels"][c.LABEL_REVISION_HASH]
        )

    def hold(self) -> dict[str, Any] | None:
        """Go ``lastHold``."""
        return self.holds[-1] if self.holds else None

    def not_serving_holds(self) -> int:
        """Go ``notServingHolds``."""
        return sum("not serving" in str(h.get("reason") or "") for h in self.holds)

    def held_on(self, revision: str) -> bool:
        return any(
            b.get("targetRevision") == revision and b.get("state") == "Held"
            for b in self.sim.status.get("retryBlocks") or []
        )

    # -- Go's kubelet model for the crash-after images, then one pass ------------------------------------
    def kubelet(self) -> None:
        sim = self.sim
        doomed: set[str] = set()
        for name, pod in self.live():
            uid, image = _uid(pod), _image(pod)
            served, crashes = self.served.get(uid, 0), self.crashes.get(uid, 0)
            if (
                image == ONCE
                and crashes == 0
                and _index(pod) not in self.once_crashed
                and served >= CRASH_AFTER_SERVED
                and self.promoted_on(pod)
            ):
                # Killed once after its Instance was promoted on it: restarted at once, not Ready on
                # this pass, up again on the next, with the one restart on its record.
                self.crashes[uid] = 1
                self.once_crashed.add(_index(pod))
                sim.restart_runner(name)
            elif image == AFTER and (crashes > 0 or served >= CRASH_AFTER_SERVED):
                self.crashes[uid] = crashes + 1
                if pod.behaviour != "crash":
                    pod.last_terminated = {
                        "reason": "Error",
                        "exitCode": 1,
                        "finishedAt": format_time(sim.now),
                    }
                doomed.add(uid)
            elif image == FLAP and served >= CRASH_AFTER_SERVED and crashes % 2 == 0:
                self.crashes[uid] = crashes + 1  # down: the kubelet's back-off
                pod.last_terminated = {"reason": "Error", "exitCode": 1, "finishedAt": format_time(sim.now)}
                pod.behaviour = "crash"
                pod.created = sim.now - timedelta(seconds=sim.stuck_after)
            elif image == FLAP and crashes % 2 == 1:
                self.crashes[uid] = crashes + 1  # up again between crashes, Ready at once
                pod.behaviour = "ok"
                pod.started_at = sim.now
                pod.restarted_at = sim.now - timedelta(seconds=sim.ready_delay)
        _crash_after(sim, AFTER, lambda p: _uid(p) in doomed)
        sim.tick()
        for _, pod in self.live():
            if _condition(pod, "Ready"):
                self.served[_uid(pod)] = self.served.get(_uid(pod), 0) + 1

    def step(self) -> None:
        self.kubelet()
        self.pass_at = self.sim.now
        out = self.driver.one_pass()
        self.verdicts += 1
        hold = self.sim.status.get("rolloutHold")
        if hold:
            self.holds.append(dict(hold))
        # The clock moves on; the kubelet reports at the next step, before its pass (Go's order).
        self.sim.now += timedelta(seconds=max(STEP, out.requeue_after or 0.0))

    # -- Go's readings ---------------------------------------------------------------------------------
    def seen_on(self, image: str, seen: set[str]) -> None:
        """Go ``trackPodsOnImage``."""
        seen.update(_uid(p) for _, p in self.live() if _image(p) == image)

    def serving_on(self, image: str) -> int:
        """Go ``instancesServingOn``: Instances whose full pod set on ``image`` is in rotation."""
        by_index: dict[int, int] = {}
        for _, pod in self.live():
            if (
                _image(pod) == image
                and _condition(pod, c.SERVING_GATE)
                and _condition(pod, "ContainersReady")
            ):
                by_index[_index(pod)] = by_index.get(_index(pod), 0) + 1
        return sum(n >= self.runners for n in by_index.values())

    def settled_on(self, revision: str, n: int) -> bool:
        """Go ``settledOn``."""
        rows = self.rows()
        if len(rows) != n or any(
            r["phase"] != "Ready" or r.get("runningRevision") != revision or r.get("operation") for r in rows
        ):
            return False
        pods = self.live()
        digest = revision.rsplit("-", 1)[-1]
        return len(pods) == n * self.runners and all(
            p.obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == digest and _image(p) == self.sim.image
            for _, p in pods
        )

    def promoted_pod_crashed(self, revision: str) -> bool:
        """Go ``promotedPodCrashed``."""
        return any(
            self.crashes.get(_uid(p), 0) > 0
            for r in self.rows()
            if r.get("runningRevision") == revision
            for p in self.pods_of(int(r["index"]))
        )

    def rebuilt_after_failure(self, revision: str) -> dict[int, SimPod]:
        """Go ``rebuiltAfterFailure`` (the harness's): live pods of Instances on ``revision`` created no
        earlier than the failure their row recorded."""
        out: dict[int, SimPod] = {}
        for r in self.rows():
            failed = _failure_at(r)
            if r.get("runningRevision") != revision or failed is None:
                continue
            for pod in self.pods_of(int(r["index"])):
                created = parse_time(pod.obj["metadata"].get("creationTimestamp"))
                if created is not None and created >= failed:
                    out[int(r["index"])] = pod
        return out

    def every_promoted_crashed(self, revision: str) -> bool:
        """Go ``everyPromotedCrashed``."""
        promoted = False
        for r in self.rows():
            if r.get("runningRevision") != revision:
                continue
            promoted = True
            crashed = bool(r.get("lastFailure")) or any(
                self.crashes.get(_uid(p), 0) > 0 for p in self.pods_of(int(r["index"]))
            )
            if not crashed:
                return False
        return promoted

    def first_failure_at(self, revision: str) -> datetime | None:
        """Go ``firstFailureAt``."""
        times = [
            t for r in self.rows() if r.get("runningRevision") == revision for t in [_failure_at(r)] if t
        ]
        return min(times) if times else None

    def roll_starts_on(self, image: str, revision: str, started: set[int]) -> None:
        """Go ``rollStartsOn``: Instances with a live pod on ``image`` while their row runs another
        revision."""
        for _, pod in self.live():
            row = self.row(_index(pod))
            if _image(pod) == image and row is not None and row.get("runningRevision") != revision:
                started.add(_index(pod))

    def repair_in_flight(self) -> bool:
        """Go ``repairInFlight``."""
        return any(
            r["phase"] == "Restarting" or (r.get("operation") or {}).get("type") == "Restart"
            for r in self.rows()
        )


# -- TestCrashAfterPromotion_RollHoldsAtTheBudget -----------------------------------------------------
_GANG_CRASH_LOOP = pytest.mark.xfail(
    strict=True,
    reason="known difference: under restart policy None a promoted gang whose pods crash-loop is rebuilt "
    "by ours through the Create pass at the same incarnation (its Ready row reopened as Create, Failed "
    "on the stuck-pod grace, recycled and recreated), off the revision's retry ladder: no RetryBlock "
    "bounds those rebuilds (none is written, or the one the Failed row wrote is dropped once the "
    "rebuilt set is Ready) and a rebuilt set that serves again frees the budget, so the roll goes on "
    "(two gangs SurgeThenDrain: a second source leaves rotation) and pods of the revision keep being "
    "made (three gangs RecreatePod). Go (the 612,458-character reconcile_test, "
    "TestCrashAfterPromotion_RollHoldsAtTheBudget) rebuilds each crashed set only on the revision's "
    "ladder (at most 2*(maxAttempts-1) sets after the hold, none once Held) and no further Instance "
    "leaves the running revision after the crash; not changed",
)

_FLAP_REBUILT = pytest.mark.xfail(
    strict=True,
    reason="known difference: with Go's evidence.CrashLoopWedgedPodOn (the grace aged from the pod's "
    "creation) the flapping promoted pod of Instance 0 reads as wedged at its second crash, and ours "
    "rebuilds it on the revision's ladder (a Restart that turns the serving gate off, deletes, then "
    "recreates: the new pod is created 150 s after the failure the row records, at 00:07:36 for 00:05:06). "
    "The rebuilt pod has not restarted, so from the Restart's promote Instance 0 reads as serving the "
    "target, the floor (maxUnavailable 0) frees, and Instance 1's surge, in flight since before the "
    "crash, drains its source in the pass where its flapping replacement is Ready again: 2 Instances off "
    "vllm:v1. Go's test (the 612,458-character reconcile_test, TestCrashAfterPromotion_RollHoldsAtTheBudget) "
    "allows 1 and no Instance more off after the crash. Go's ops.RolledInstanceNotServing keeps such a "
    "set unproven through RebuiltAfterFailure (a pod created inside the proven window after the row's "
    "recorded failure holds the slot until it has held Ready for the window), which ours does not "
    "reproduce; with ours' drain-first Restart and this story's clock the rebuild lands outside that "
    "window anyway, and whether Go's own run lands inside it was not settled; not changed",
)


@pytest.mark.parametrize(
    ("workers", "replicas", "strategy", "image", "off_allowed", "min_ready", "grace"),
    [
        pytest.param(0, 4, "SurgeThenDrain", AFTER, 1, 0, HARNESS_GRACE, id="four single-pod SurgeThenDrain"),
        pytest.param(
            0,
            4,
            "SurgeThenDrain",
            FLAP,
            1,
            60,
            HARNESS_GRACE,
            id="four single-pod SurgeThenDrain, flap, minReady 60",
        ),
        pytest.param(
            0,
            4,
            "SurgeThenDrain",
            FLAP,
            1,
            0,
            timedelta(seconds=90),
            id="four single-pod SurgeThenDrain, flap, grace 90s",
            marks=_FLAP_REBUILT,
        ),
        pytest.param(0, 4, "RecreatePod", AFTER, 2, 0, HARNESS_GRACE, id="four single-pod RecreatePod"),
        pytest.param(
            0,
            4,
            "RecreatePod",
            FLAP,
            2,
            0,
            timedelta(seconds=90),
            id="four single-pod RecreatePod, flap, grace 90s",
        ),
        pytest.param(
            1,
            2,
            "SurgeThenDrain",
            AFTER,
            1,
            0,
            HARNESS_GRACE,
            id="two gangs SurgeThenDrain",
            marks=_GANG_CRASH_LOOP,
        ),
        pytest.param(
            1,
            3,
            "RecreatePod",
            AFTER,
            2,
            0,
            HARNESS_GRACE,
            id="three gangs RecreatePod",
            marks=_GANG_CRASH_LOOP,
        ),
    ],
)
def test_crash_after_promotion_roll_holds_at_the_budget(
    workers: int, replicas: int, strategy: str, image: str, off_allowed: int, min_ready: int, grace: timedelta
) -> None:
    """Go: … TestCrashAfterPromotion_RollHoldsAtTheBudget (its seven ``rollBudgetCases``): restart
    policy None, a budget of one on the strategy's arm; the pushed revision's pods serve four kubelet
    passes, are promoted and crash (stay down, or come back between crashes never holding Ready for
    the window). Over forty passes: never more than ``offAllowed`` Instances off the running revision,
    none more after a promoted pod crashed; the last hold is a Budget, RetryBlock or Held hold on the
    crashing revision naming the Instances on it that are "not serving"; after the first hold past the
    crash pods of that revision are made only on its ladder (at most 2·(maxAttempts−1) sets), none once
    it is Held; the running revision still serves on ``replicas − offAllowed``; a fixed revision then
    lands on every Instance (120 passes)."""
    h = _Story.converged_on_v1(
        strategy=strategy, policy="None", replicas=replicas, workers=workers, grace=grace, min_ready=min_ready
    )
    rev = h.push(image)
    seen: set[str] = set()
    state = {"crashed": False, "off_at_crash": 0, "holds_seen": 0, "at_hold": -1, "at_held": -1}

    def invariant() -> None:
        h.seen_on(image, seen)
        if state["at_held"] < 0 and h.held_on(rev):
            state["at_held"] = len(seen)
        off = replicas - h.serving_on(GOOD)
        assert off <= off_allowed, (GO, "roll past the budget", off)
        if state["crashed"]:
            assert off <= state["off_at_crash"], (GO, "roll continued after the crash", off)
        elif h.promoted_pod_crashed(rev):
            state["crashed"], state["off_at_crash"] = True, off
        if len(h.holds) > state["holds_seen"]:
            state["holds_seen"] = len(h.holds)
            if state["crashed"] and state["at_hold"] < 0:
                state["at_hold"] = len(seen)

    h.run(40, lambda: False, invariant)
    assert state["crashed"], (GO, "the promoted revision never crashed")
    hold = h.hold() or {}
    assert hold.get("gate") in ("Budget", "RetryBlock", "Held"), (GO, hold)
    assert hold.get("target") == rev, (GO, hold)
    assert "not serving" in hold["reason"], (GO, hold)
    assert rev in hold["reason"], (GO, hold)
    assert state["at_hold"] >= 0, (GO, "no hold after the crash")
    admits = 2 * (_HARNESS_LADDER.max_attempts - 1) * h.runners
    assert len(seen) - state["at_hold"] <= admits, (GO, "pods after the hold beyond the ladder")
    if state["at_held"] >= 0:
        assert len(seen) == state["at_held"], (GO, "pods after the ladder held")
    assert h.serving_on(GOOD) >= replicas - off_allowed, GO
    fixed = h.push(FIXED)
    assert h.run(120, lambda: h.settled_on(fixed, replicas)), (GO, h.driver.describe())


# -- TestCrashOnceAfterPromotion_RollResumesWhenTheInstanceServesAgain ----------------------------------
@pytest.mark.parametrize(
    ("strategy", "min_ready", "grace"),
    [
        pytest.param("SurgeThenDrain", 0, timedelta(seconds=90), id="SurgeThenDrain, the grace 90s"),
        pytest.param("RecreatePod", 0, timedelta(seconds=90), id="RecreatePod, the grace 90s"),
        pytest.param(
            "SurgeThenDrain", 90, timedelta(seconds=30), id="SurgeThenDrain, minReady 90 above the grace"
        ),
        pytest.param("RecreatePod", 90, timedelta(seconds=30), id="RecreatePod, minReady 90 above the grace"),
        pytest.param("SurgeThenDrain", 0, timedelta(0), id="SurgeThenDrain, no window"),
        pytest.param("RecreatePod", 0, timedelta(0), id="RecreatePod, no window"),
    ],
)
def test_crash_once_after_promotion_roll_resumes_when_the_instance_serves_again(
    strategy: str, min_ready: int, grace: timedelta
) -> None:
    """Go: … TestCrashOnceAfterPromotion_RollResumesWhenTheInstanceServesAgain (its six entries): four
    single-pod Instances, restart policy None; each promoted pod dies once and the kubelet restarts it.
    The Instance holds its slot until it has held Ready again for the window (``minReadySeconds``
    floored by the stuck-pod grace, from the pod's newest Ready transition): a pass inside it that
    reports a not-serving hold reports a Budget hold on the revision naming the Instance and opens no
    start (Go names the Instance of the first pod restarted and checks only that its index appears
    in the reason; here the hold's clause must name the Instance whose comeback is read); no pass past it is held; with no window the comeback itself releases the slot. No repair
    opens, no row reads Failed; within 100 passes the revision lands on every Instance with one pod
    each (four made in all), and the restarted pod keeps its identity with its one restart."""
    h = _Story.converged_on_v1(strategy=strategy, policy="None", grace=grace, min_ready=min_ready)
    rev = h.push(ONCE)
    window = max(timedelta(seconds=min_ready), grace)
    seen: set[str] = set()
    first: dict[str, Any] = {}
    state = {"holds": h.not_serving_holds(), "pods": 0, "came_back": False}

    def invariant() -> None:
        h.seen_on(ONCE, seen)
        assert not h.repair_in_flight(), (GO, "restart policy None opened a repair")
        assert all(r["phase"] != "Failed" for r in h.rows()), (GO, "a Failed row")
        restarted = next((p for _, p in reversed(h.live()) if h.crashes.get(_uid(p), 0) > 0), None)
        if restarted is not None and not first:
            first.update(uid=_uid(restarted), index=_index(restarted))
        if restarted is not None and _condition(restarted, "Ready") and h.pass_at is not None:
            state["came_back"] = True
            available_at = _ready_transition(restarted) + window
            held = h.not_serving_holds() > state["holds"]
            assert not (held and h.pass_at >= available_at), (GO, "held while serving", h.hold())
            if held:
                hold = h.hold() or {}
                assert (hold.get("gate"), hold.get("target")) == ("Budget", rev), (GO, hold)
                assert hold_names_instance(hold, _index(restarted)), (GO, hold)
                assert len(seen) <= state["pods"], (GO, "a start inside the window")
            elif h.pass_at < available_at and window > timedelta(0):
                assert len(seen) <= state["pods"], (GO, "a start inside the window")
        state["holds"], state["pods"] = h.not_serving_holds(), len(seen)

    h.run(100, lambda: h.settled_on(rev, 4), invariant)
    assert state["came_back"], (GO, "the promoted pod never crashed and came back")
    assert h.settled_on(rev, 4), (GO, h.driver.describe(), h.hold())
    assert len(seen) == 4, GO
    pod = next((p for _, p in h.live() if _uid(p) == first["uid"]), None)
    assert pod is not None, (GO, "the restarted pod lost its identity")
    assert pod.obj["status"]["containerStatuses"][0]["restartCount"] == 1, GO


# -- TestCrashOnceAfterPromotion_RebuiltInstanceServesTheWindowBeforeTheRollResumes -----------------------
@pytest.mark.parametrize("strategy", ["SurgeThenDrain", "RecreatePod"])
def test_crash_once_after_promotion_rebuilt_instance_serves_the_window_before_the_roll_resumes(
    strategy: str,
) -> None:
    """Go: … TestCrashOnceAfterPromotion_RebuiltInstanceServesTheWindowBeforeTheRollResumes (both
    entries): four single-pod Instances under RecreateInstanceOnPodRestart, the window the stuck-pod
    grace (90 s). A promoted pod's one death rebuilds its Instance; the rebuilt pod, created after the
    failure the row recorded, holds the slot until it has held Ready for the window: a pass inside it
    whose not-serving hold names the Instance reports a Budget hold on the revision and neither opens
    a start nor takes a source out of rotation; no pass past it names it; no start opens inside it
    either way. Within 200 passes the revision lands on every Instance."""
    window = timedelta(seconds=90)
    h = _Story.converged_on_v1(strategy=strategy, policy="RecreateInstanceOnPodRestart", grace=window)
    rev = h.push(ONCE)
    started: set[int] = set()
    state = {"holds": h.not_serving_holds(), "starts": 0, "off": 4 - h.serving_on(GOOD), "rebuilt": False}

    def invariant() -> None:
        h.roll_starts_on(ONCE, rev, started)
        off = 4 - h.serving_on(GOOD)
        for idx, pod in h.rebuilt_after_failure(rev).items():
            if not _condition(pod, "Ready") or h.pass_at is None:
                continue
            state["rebuilt"] = True
            available_at = _ready_transition(pod) + window
            moved = len(started) > state["starts"] or off > state["off"]
            hold = h.hold() if h.not_serving_holds() > state["holds"] else None
            held = hold_names_instance(hold, idx)
            assert not (held and h.pass_at >= available_at), (GO, "held while serving", idx, hold)
            if held:
                assert ((hold or {}).get("gate"), (hold or {}).get("target")) == ("Budget", rev), (GO, hold)
                assert not moved, (GO, "a start inside the window", idx)
            elif h.pass_at < available_at:
                assert not moved, (GO, "a start inside the window", idx)
        state["holds"], state["starts"], state["off"] = h.not_serving_holds(), len(started), off

    h.run(200, lambda: h.settled_on(rev, 4), invariant)
    assert state["rebuilt"], (GO, "no Instance was rebuilt after its promoted pod died")
    assert h.settled_on(rev, 4), (GO, h.driver.describe(), h.hold())


# -- TestCrashAfterPromotion_RebuiltInstanceDiesAgainInsideTheWindow_NothingStarts -----------------------
@pytest.mark.parametrize(("strategy", "off_allowed"), [("SurgeThenDrain", 1), ("RecreatePod", 2)])
def test_crash_after_promotion_rebuilt_instance_dies_again_inside_the_window_nothing_starts(
    strategy: str, off_allowed: int
) -> None:
    """Go: … TestCrashAfterPromotion_RebuiltInstanceDiesAgainInsideTheWindow_NothingStarts (both
    entries): four single-pod Instances under RecreateInstanceOnPodRestart, the window the stuck-pod
    grace (300 s); the pushed revision's pods crash after serving four passes, rebuilds included. Never
    more than ``offAllowed`` Instances off the running revision; from the first failure a row on the
    revision records until the window after it has passed, no further Instance leaves the running
    revision and no start opens; a promoted Instance was rebuilt; the running revision still serves on
    ``4 − offAllowed``; a fixed revision then lands on every Instance (150 passes)."""
    window = timedelta(seconds=300)
    h = _Story.converged_on_v1(strategy=strategy, policy="RecreateInstanceOnPodRestart", grace=window)
    rev = h.push(AFTER)
    started: set[int] = set()
    at: dict[str, Any] = {}
    state = {"rebuilt": False}

    def window_passed() -> bool:
        return bool(at) and h.sim.now >= at["failed"] + window

    def invariant() -> None:
        h.roll_starts_on(AFTER, rev, started)
        off = 4 - h.serving_on(GOOD)
        assert off <= off_allowed, (GO, "roll past the allowance", off)
        if h.rebuilt_after_failure(rev):
            state["rebuilt"] = True
        if not at:
            failed = h.first_failure_at(rev)
            if failed is not None:
                at.update(failed=failed, off=off, starts=len(started))
            return
        if window_passed():
            return
        assert off <= at["off"], (GO, "roll continued inside the window", off)
        assert len(started) <= at["starts"], (GO, "a start inside the window", sorted(started))

    h.run(60, window_passed, invariant)
    assert at, (GO, "no promoted Instance failed")
    assert state["rebuilt"], (GO, "no promoted Instance was rebuilt")
    assert h.serving_on(GOOD) >= 4 - off_allowed, GO
    fixed = h.push(FIXED)
    assert h.run(150, lambda: h.settled_on(fixed, 4)), (GO, h.driver.describe())


def _restarted_since_ready(pod: SimPod, ready_since: datetime | None) -> bool:
    """Go ``workloadops.RunnerRestartedSinceReady`` read off the pod: the runner's last termination
    finished, or its current run started, after the Instance entered Ready."""
    if ready_since is None:
        return False
    for cs in pod.obj["status"].get("containerStatuses") or []:
        if cs.get("name") != c.MAIN_CONTAINER:
            continue
        finished = parse_time(((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))
        started = parse_time(((cs.get("state") or {}).get("running") or {}).get("startedAt"))
        return bool((finished and finished > ready_since) or (started and started > ready_since))
    return False


# -- TestCorrectedPushAfterAHeldCrash_Converges --------------------------------------------------------
@pytest.mark.parametrize(
    ("strategy", "policy", "image"),
    [
        pytest.param("SurgeThenDrain", "None", AFTER, id="SurgeThenDrain, None, the pod stays down"),
        pytest.param("SurgeThenDrain", "None", FLAP, id="SurgeThenDrain, None, the pod comes back"),
        pytest.param("RecreatePod", "None", AFTER, id="RecreatePod, None, the pod stays down"),
        pytest.param("RecreatePod", "None", FLAP, id="RecreatePod, None, the pod comes back"),
        pytest.param(
            "SurgeThenDrain", "RecreateInstanceOnPodRestart", AFTER, id="SurgeThenDrain, RecreateInstance"
        ),
        pytest.param(
            "RecreatePod", "RecreateInstanceOnPodRestart", AFTER, id="RecreatePod, RecreateInstance"
        ),
    ],
)
def test_corrected_push_after_a_held_crash_converges(strategy: str, policy: str, image: str) -> None:
    """Go: … TestCorrectedPushAfterAHeldCrash_Converges (its six entries): four single-pod Instances,
    the window the stuck-pod grace (300 s). The roll holds on a revision whose promoted pods crash
    (within 60 passes: every promoted Instance has died on it, and the policy rebuilt one or a pass
    reported a not-serving hold; under None twelve passes more). A corrected revision is pushed: no
    pass reports a hold on it naming an Instance already Ready on it before that pass, with no failure
    recorded after the corrected revision was born and no restart on its pod; the corrected revision
    lands on every Instance within 80 passes."""
    h = _Story.converged_on_v1(strategy=strategy, policy=policy, grace=timedelta(seconds=300))
    rev = h.push(image)

    def held() -> bool:
        rebuilt = bool(h.rebuilt_after_failure(rev))
        return (rebuilt or (h.promoted_pod_crashed(rev) and h.not_serving_holds() > 0)) and (
            h.every_promoted_crashed(rev)
        )

    assert h.run(60, held), (GO, "the roll never held on the crashing revision", h.driver.describe())
    if policy == "None":
        h.run(12, lambda: False)
    corrected = h.push(CORRECTED)
    state = {"holds": len(h.holds)}
    promoted: dict[int, bool] = {}

    def invariant() -> None:
        reported = len(h.holds) > state["holds"]
        state["holds"] = len(h.holds)
        hold = h.hold()
        born = h.born(corrected)
        if reported and hold is not None and hold.get("target") == corrected:
            for r in h.rows():
                idx = int(r["index"])
                if not promoted.get(idx) or not hold_names_instance(hold, idx):
                    continue
                failed = _failure_at(r)
                if failed is not None and born is not None and failed > born:
                    continue
                ready_since = parse_time(r.get("readySince"))
                for pod in h.pods_of(idx):
                    assert _restarted_since_ready(pod, ready_since), (GO, "a fresh set held", idx, hold)
        for r in h.rows():
            pods = h.pods_of(int(r["index"]))
            promoted[int(r["index"])] = (
                r.get("runningRevision") == corrected
                and r["phase"] == "Ready"
                and not r.get("operation")
                and bool(pods)
                and all(_condition(p, "Ready") for p in pods)
            )

    h.run(80, lambda: h.settled_on(corrected, 4), invariant)
    assert h.settled_on(corrected, 4), (GO, h.driver.describe(), h.hold())


# -- TestCrashAfterPromotion_TheHoldIsReportedOnEveryPassWhileTheRollWaits ---------------------------------
@pytest.mark.parametrize("strategy", ["SurgeThenDrain", "RecreatePod"])
def test_crash_after_promotion_the_hold_is_reported_on_every_pass_while_the_roll_waits(strategy: str) -> None:
    """Go: … TestCrashAfterPromotion_TheHoldIsReportedOnEveryPassWhileTheRollWaits (both entries): four
    single-pod Instances under RecreateInstanceOnPodRestart, the window the stuck-pod grace (300 s),
    the pushed revision's pods crashing after serving four passes. From the first failure a row on the
    revision records until the window after it, every pass that reports an update verdict and admits
    no start reports a hold (ours reads every pass as one that reported a verdict), and some pass's
    hold names an Instance promoted onto the crashing revision."""
    window = timedelta(seconds=300)
    h = _Story.converged_on_v1(strategy=strategy, policy="RecreateInstanceOnPodRestart", grace=window)
    rev = h.push(AFTER)
    started: set[int] = set()
    at: dict[str, Any] = {}
    state = {"verdicts": h.verdicts, "holds": len(h.holds), "starts": 0, "silent": 0, "named": False}

    def window_passed() -> bool:
        return bool(at) and h.sim.now >= at["failed"] + window

    def invariant() -> None:
        h.roll_starts_on(AFTER, rev, started)
        reported, admitted = h.verdicts > state["verdicts"], len(started) > state["starts"]
        if len(h.holds) > state["holds"]:
            for r in h.rows():
                if r.get("runningRevision") == rev and hold_names_instance(h.hold(), int(r["index"])):
                    state["named"] = True
        if at and not window_passed() and reported and not admitted and len(h.holds) == state["holds"]:
            state["silent"] += 1
        state["verdicts"], state["holds"], state["starts"] = h.verdicts, len(h.holds), len(started)
        if not at:
            failed = h.first_failure_at(rev)
            if failed is not None:
                at["failed"] = failed

    h.run(60, window_passed, invariant)
    assert at, (GO, "no promoted Instance failed")
    assert state["named"], (GO, "no hold named an Instance promoted onto the revision")
    assert state["silent"] == 0, (GO, "passes with no hold while the roll waited", state["silent"])
