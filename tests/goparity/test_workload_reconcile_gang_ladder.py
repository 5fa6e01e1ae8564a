"""OME's root ``reconcile_test.go``-like file of 612,458 characters, its gang-ladder stories.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, the ``workload_test`` package file of 612,458
characters whose path and commit the index does not name (found by content; these tests are in its
characters 306,000–612,458, its harness and kubelet model in characters 50,000–90,000). Go drives
``workload.Reconcile`` pass after pass against a fake client with a kubelet model (its
``recoveryHarness``); here the replica is applied to the simulated world and planner passes run five
seconds apart (``omereconcile.simulate``), with :class:`_Kubelet` standing for Go's kubelet model of its
crash images. Which cases are ported, known differences or not mappable is in docs/goparity.md ("Part 2,
the gang ladder stories").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import format_time
from tests.goparity.test_workload_reconcile_part2 import (
    GO,
    RECREATE_ONE,
    SURGE_ONE,
    _block,
    _image,
    _pods_of,
    _row,
)

V1 = "vllm:v1"
CRASH = "vllm:crash"
FIXED = "vllm:fixed"
STEP = 5.0  # seconds between passes: Go's step floor, the kubelet model running once per step
RECREATE = "RecreateInstanceOnPodRestart"
BUDGETS = {"RecreatePod": RECREATE_ONE, "SurgeThenDrain": SURGE_ONE}


@dataclass
class _Kubelet:
    """Go's kubelet model for its crash images, run once per step (``recoveryHarness.kubelet``).

    ``flap``: ``flapAfterServingImage``, whose runner, once its pod has served ``served`` steps, dies
    on every other step (parked in ``CrashLoopBackOff``) and comes back Ready between (the last
    termination kept, its run's start named). Otherwise ``crashOnceAfterServingImage``: a promoted
    pod's runner dies once after ``served`` steps and the kubelet starts it again at once; once per
    Instance, or once per pod set with ``every_set``. ``leader_only`` confines the fault to a gang's
    leader (``crashLeaderOnly``)."""

    sim: Sim
    served: int
    flap: bool
    leader_only: bool = False
    every_set: bool = False
    exit_code: int = 1
    serving: dict[str, int] = field(default_factory=dict)
    crashes: dict[str, int] = field(default_factory=dict)
    crashed_instances: dict[int, int] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)  # uid -> pod name, every pod ever on the image

    def faulty(self, pod: SimPod) -> bool:
        labels = pod.obj["metadata"]["labels"]
        if pod.obj["spec"]["containers"][0]["image"] != CRASH or pod.obj["metadata"].get("deletionTimestamp"):
            return False
        return not self.leader_only or labels.get("ome.io/runner") == "leader"

    def _promoted(self, pod: SimPod) -> bool:
        labels = pod.obj["metadata"]["labels"]
        row = _row(self.sim, int(labels["ome.io/instance-index"])) or {}
        running = str(row.get("runningRevision") or "")
        return row.get("phase") == "Ready" and running.rsplit("-", 1)[-1] == labels["ome.io/revision-hash"]

    def step(self) -> None:
        sim = self.sim
        for pod in sim.pods.values():
            if pod.obj["spec"]["containers"][0]["image"] == CRASH:
                self.seen.setdefault(str(pod.obj["metadata"]["uid"]), pod.obj["metadata"]["name"])
            if not self.faulty(pod):
                continue
            uid = str(pod.obj["metadata"]["uid"])
            index = int(pod.obj["metadata"]["labels"]["ome.io/instance-index"])
            crashes = self.crashes.get(uid, 0)
            if self.flap:
                if crashes % 2 == 1:
                    self._back_up(pod)
                elif self.serving.get(uid, 0) >= self.served:
                    self._crash(pod)
                    self.crashed_instances[index] = self.crashed_instances.get(index, 0) + 1
                else:
                    continue
                self.crashes[uid] = crashes + 1
            elif (
                crashes == 0
                and self.serving.get(uid, 0) >= self.served
                and (self.every_set or index not in self.crashed_instances)
                and self._promoted(pod)
            ):
                self._restart(pod)
                self.crashes[uid] = 1
                self.crashed_instances[index] = self.crashed_instances.get(index, 0) + 1
        sim.tick()
        for pod in sim.pods.values():
            ready = any(
                cd["type"] == "Ready" and cd["status"] == "True"
                for cd in pod.obj["status"].get("conditions", [])
            )
            if ready:
                uid = str(pod.obj["metadata"]["uid"])
                self.serving[uid] = self.serving.get(uid, 0) + 1

    def _termination(self, pod: SimPod) -> dict[str, Any]:
        return {
            "reason": "Error" if self.exit_code else "Completed",
            "exitCode": self.exit_code,
            "startedAt": format_time(pod.started_at or pod.created),
            "finishedAt": format_time(self.sim.now),
        }

    def _crash(self, pod: SimPod) -> None:
        """The runner died after serving and the kubelet backs off before the next start."""
        pod.last_terminated = self._termination(pod)
        pod.behaviour = "crash"
        pod.created = min(pod.created, self.sim.now - timedelta(seconds=self.sim.stuck_after))

    def _back_up(self, pod: SimPod) -> None:
        """Back up between crashes: running and Ready again, the last termination still reported."""
        pod.behaviour = "ok"
        pod.started_at = self.sim.now
        pod.restarted_at = self.sim.now - timedelta(seconds=self.sim.ready_delay)

    def _restart(self, pod: SimPod) -> None:
        """The runner died once and the kubelet starts it again at once (not Ready for a start-up)."""
        ended = self._termination(pod)
        pod.last_terminated = ended
        pod.started_at = pod.restarted_at = self.sim.now


@dataclass
class _Story:
    """One of Go's recovery stories in the sim: the driver, the kubelet model, and what the passes
    published (Go's ``holds``, ``verdict``, ``failedWarnings``, ``heldWarnings``)."""

    sim: Sim
    driver: Driver
    kubelet: _Kubelet | None = None
    holds: list[dict[str, Any]] = field(default_factory=list)
    verdict: dict[str, Any] | None = None
    passes: int = 0

    def step(self) -> None:
        self.driver.one_pass()
        self.passes += 1
        self.verdict = self.sim.status.get("rolloutHold") or None
        if self.verdict is not None:
            self.holds.append(dict(self.verdict))
        self.sim.advance(STEP)
        if self.kubelet is not None:
            self.kubelet.step()

    def run(
        self, passes: int, until: Callable[[], bool], invariant: Callable[[], None] = lambda: None
    ) -> bool:
        """Go's ``runWithInvariant``: up to ``passes`` steps until ``until`` holds, ``invariant`` after
        each."""
        for _ in range(passes):
            if until():
                return True
            self.step()
            invariant()
        return until()

    def last_hold(self) -> dict[str, Any] | None:
        return self.holds[-1] if self.holds else None

    def warnings(self, reason: str) -> list[str]:
        return [e.message for e in self.sim.events if e.type == "Warning" and e.event_reason == reason]

    def restarts(self) -> int:
        return self.sim.event_reasons().count("RestartTriggered")

    def held_on(self, revision: str) -> bool:
        return (_block(self.sim, revision) or {}).get("state") == "Held"

    def settled_on(self, revision: str, replicas: int) -> bool:
        rows = self.sim.rows()
        return (
            len(rows) == replicas
            and all(
                r["phase"] == "Ready" and not r.get("operation") and r.get("runningRevision") == revision
                for r in rows
            )
            and len(self.sim.serving_instances()) == replicas
        )

    def serving_on(self, image: str) -> int:
        """Go ``instancesServingOn``: Instances whose every pod runs ``image`` and serves."""
        return sum(
            1
            for i in self.sim.serving_instances()
            if _pods_of(self.sim, i) and all(_image(self.sim, n) == image for n in _pods_of(self.sim, i))
        )


def _story(
    replicas: int,
    strategy: str,
    *,
    gang: bool,
    policy: str | None,
    grace: timedelta = timedelta(minutes=10),
    ladder: RetryPolicy | None = None,
    delete_grace: float = 3.0,
) -> _Story:
    """Go's ``newRecoveryHarnessFor`` with ``useRollingBudget(strategy)`` (maxSurge 1 or maxUnavailable
    1), the restart policy, the stuck-pod grace and the ladder (Go's default: two attempts, 20 s
    doubling to a minute), settled on v1."""
    settings = OperatorSettings(
        stuck_pod_grace_period=grace,
        update_retry=ladder or RetryPolicy(2, timedelta(seconds=20), timedelta(minutes=1), 2.0),
    )
    sim = Sim(settings=settings, workers=1 if gang else 0, delete_grace=delete_grace)
    lifecycle: dict[str, Any] = dict(BUDGETS[strategy])
    if policy is not None:
        lifecycle["restartPolicy"] = policy
    sim.apply_replica(base_replica(replicas=replicas, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    return _Story(sim, driver)


def _push(story: _Story, image: str) -> str:
    story.sim.image = image
    return str(story.sim.render().name)  # type: ignore[union-attr]


def _names_instance(reason: str, index: int) -> bool:
    """Go ``holdNamesInstance``: the hold's words name Instance ``index`` ("Instance 0",
    "Instances 0, 2")."""
    for found in re.finditer(r"Instances? (\d+(?:, \d+)*)", reason):
        if index in {int(n) for n in found.group(1).split(", ")}:
            return True
    return False


def _named_rebuilds(reason: str) -> list[int]:
    """Go ``namedRebuilds``: the Instances a ladder hold names as the rebuilds of its attempt."""
    clause = "the attempt rebuilds Instance"
    at = reason.find(clause)
    if at < 0:
        return []
    rest = reason[at + len(clause) :].removeprefix("s").lstrip(" ").split(";", 1)[0]
    return [int(f) for f in (x.strip() for x in rest.split(",")) if f.isdigit()]


def _repair_in_flight(sim: Sim) -> bool:
    """Go ``repairInFlight``: a row carries a Restart."""
    return any((r.get("operation") or {}).get("type") == "Restart" for r in sim.rows())


def _live_on(sim: Sim, image: str) -> set[str]:
    return {
        str(p.obj["metadata"]["uid"])
        for p in sim.pods.values()
        if p.obj["spec"]["containers"][0]["image"] == image and not p.obj["metadata"].get("deletionTimestamp")
    }


def _terminating_of(sim: Sim, index: int) -> list[str]:
    return [
        n
        for n, p in sim.pods.items()
        if p.obj["metadata"]["labels"].get("ome.io/instance-index") == str(index)
        and p.obj["metadata"].get("deletionTimestamp")
    ]


@pytest.mark.parametrize(
    "rebuilt_before_fix", [True, False], ids=["rebuilt set exists", "crashed pod terminating"]
)
def test_policy_flip_mid_hold_fix_lands_without_rebuilding_the_broken_revision(
    rebuilt_before_fix: bool,
) -> None:
    """Go: … TestPolicyFlipMidHold_FixLandsWithoutRebuildingTheBrokenRevision (both entries): two
    single-pod Instances under SurgeThenDrain maxSurge 1 and restart policy None, deletes lingering a
    minute, a 90-second stuck-pod grace; a push whose promoted pod's runner dies once four steps after
    it serves. The roll is held by the budget naming Instance 0 (no repair, no RestartTriggered). The
    policy is flipped to RecreateInstanceOnPodRestart: one repair opens on Instance 0. Then the fix is
    pushed (after the rebuilt set exists at incarnation 2 on the broken image, or while the crashed
    pod still terminates with nothing rebuilt): the fix lands on both Instances, no pod of the broken
    revision is created after the push, no further repair opens, and a rebuild that had created
    nothing when the fix landed does not come back Ready on the broken revision."""
    story = _story(
        2, "SurgeThenDrain", gang=False, policy="None", grace=timedelta(seconds=90), delete_grace=60
    )
    sim = story.sim
    story.kubelet = _Kubelet(sim, served=4, flap=False)
    broken = _push(story, CRASH)

    def not_serving_held() -> bool:
        return any(h.get("gate") == "Budget" and "not serving" in h.get("reason", "") for h in story.holds)

    assert story.run(60, not_serving_held), (GO, story.holds, story.driver.describe())
    hold = story.last_hold() or {}
    assert hold.get("gate") == "Budget" and _names_instance(hold.get("reason", ""), 0), (GO, hold)
    assert not _repair_in_flight(sim) and story.restarts() == 0, GO

    lifecycle = dict(sim.replica["spec"]["lifecycle"])  # type: ignore[index]
    sim.update_spec(lifecycle={**lifecycle, "restartPolicy": RECREATE})
    assert story.run(10, lambda: _repair_in_flight(sim)), (GO, story.driver.describe())
    assert story.restarts() == 1, GO
    if rebuilt_before_fix:
        assert story.run(
            10, lambda: (_row(sim, 0) or {}).get("incarnation") == 2 and len(_pods_of(sim, 0)) == 1
        ), (
            GO,
            story.driver.describe(),
        )
        assert _image(sim, _pods_of(sim, 0)[0]) == CRASH, GO
    else:
        # Go's Restart deletes the crashed pod in the pass that opens it; ours journals the Restart,
        # turns the serving gate off, then deletes (its drain), so the shape comes two passes later.
        assert story.run(3, lambda: len(_terminating_of(sim, 0)) == 1 and not _pods_of(sim, 0)), (
            GO,
            story.driver.describe(),
        )

    before = _live_on(sim, CRASH)
    restarts = story.restarts()
    fixed = _push(story, FIXED)
    late: set[str] = set()
    promoted_broken = False

    def watch() -> None:
        nonlocal promoted_broken
        late.update(_live_on(sim, CRASH) - before)
        row = _row(sim, 0) or {}
        if not rebuilt_before_fix and row.get("phase") == "Ready" and row.get("runningRevision") == broken:
            promoted_broken = True

    assert story.run(120, lambda: story.settled_on(fixed, 2), watch), (
        GO,
        story.last_hold(),
        story.driver.describe(),
    )
    assert not late, (GO, "pods of the broken revision created after the fix push", late)
    assert story.restarts() == restarts, (GO, "a repair opened after the fix push")
    assert not promoted_broken, (
        GO,
        "a rebuild with no pod when the fix landed came back on the broken revision",
    )


def _gang_surge_marker(sim: Sim) -> dict[str, Any] | None:
    """Go ``gangSurgeMarker``: the row claiming a replacement gang's index, live or in cleanup."""
    for row in sim.rows():
        if (row.get("operation") or {}).get("step") in ("GangSurgeTarget", "GangSurgeTargetCleanup"):
            return row
    return None


def test_rollback_over_gang_surge_resumed_manager_keeps_the_rollout_open_until_the_replacement_is_gone() -> (
    None
):
    """Go: … TestRollbackOverGangSurge_ResumedManagerKeepsTheRolloutOpenUntilTheReplacementIsGone: two
    leader+worker gangs under SurgeThenDrain maxSurge 1, deletes lingering ten minutes and an abandoned
    replacement deleted on a 30-second grace. A push whose replacement gang never passes readiness opens
    a gang surge on Instance 0 (its marker row and a pod of the pushed image live); the starting
    revision is re-applied and every pass then runs as a resumed manager (a fresh driver). While a row
    is still pinned to the withdrawn revision the published ``currentRevision`` does not name the
    starting revision and ``updatedReplicas`` is short of two; while a pod of the withdrawn revision is
    live ``currentRevision`` is withdrawn (empty). The rollback settles on the starting revision within
    40 passes with no marker row and no pod of the withdrawn revision live, ``currentRevision`` the
    starting revision and ``updatedReplicas`` two."""
    story = _story(2, "SurgeThenDrain", gang=True, policy=None, grace=timedelta(seconds=30), delete_grace=600)
    sim = story.sim
    sim.settings = OperatorSettings(
        stuck_pod_grace_period=sim.settings.stuck_pod_grace_period,
        update_retry=sim.settings.update_retry,
        abandoned_replacement_grace=timedelta(seconds=30),
    )
    v1 = sim.status["currentRevision"]
    sim.behaviour["vllm:stuck"] = "never"
    pushed = _push(story, "vllm:stuck")

    def surge_open() -> bool:
        op = (_row(sim, 0) or {}).get("operation") or {}
        return (
            op.get("type") == "Update"
            and _gang_surge_marker(sim) is not None
            and bool(_live_on(sim, "vllm:stuck"))
        )

    assert story.run(20, surge_open), (GO, story.driver.describe())

    _push(story, V1)

    def resumed() -> None:
        story.driver = Driver(sim)

    def open_while_pinned() -> None:
        resumed()
        pinned = any(
            (r.get("operation") or {}).get("type") == "Update"
            and (r.get("operation") or {}).get("targetRevision") == pushed
            for r in sim.rows()
        )
        current = sim.status.get("currentRevision") or ""
        assert not (pinned and current == v1), (
            GO,
            "the rollup names the starting revision while pinned",
            sim.rows(),
        )
        assert not (_live_on(sim, "vllm:stuck") and current), (GO, "rollup not withdrawn", current)
        assert not (pinned and (sim.status.get("updatedReplicas") or 0) >= 2), (
            GO,
            "a pinned source counted updated",
        )

    resumed()
    assert story.run(40, lambda: story.settled_on(v1, 2), open_while_pinned), (GO, story.driver.describe())
    assert _gang_surge_marker(sim) is None, (GO, sim.rows())
    assert not _live_on(sim, "vllm:stuck"), GO
    assert sim.status.get("currentRevision") == v1, GO
    assert sim.status.get("updatedReplicas") == 2, GO


@pytest.mark.xfail(
    strict=True,
    reason="known difference: ours' ladder hold keeps computeRetryBlockRolloutHold's words and names no "
    "Instance its attempt rebuilds (Go's ladderHold clause 'the attempt rebuilds Instance…', fed by "
    "LadderAttemptRebuilds, is not built), so the first rebuild is one no hold announced",
)
def test_crash_loop_after_promotion_the_ladder_names_every_instance_its_attempt_rebuilds() -> None:
    """Go: … TestCrashLoopAfterPromotion_TheLadderNamesEveryInstanceItsAttemptRebuilds: four single-pod
    Instances under RecreatePod maxUnavailable 1 and RecreateInstanceOnPodRestart, a ten-minute
    stuck-pod grace and a ladder of three attempts (two minutes doubling to ten); a push whose promoted
    runner dies four steps after it serves and comes back between its crashes. Every crash-revision pod
    after an Instance's first is a rebuild, and must be named: the latest due attempt (the Backoff
    block's ``nextRetryAt``) must have been announced by a RetryBlock hold on the revision naming that
    Instance among its rebuilds. The ladder holds with at least two Instances rebuilt, and a corrected
    revision then lands on all four."""
    ladder = RetryPolicy(3, timedelta(minutes=2), timedelta(minutes=10), 2.0)
    story = _story(4, "RecreatePod", gang=False, policy=RECREATE, ladder=ladder)
    sim = story.sim
    story.kubelet = _Kubelet(sim, served=4, flap=True)
    crash = _push(story, CRASH)
    announced: dict[str, set[int]] = {}
    latest = ""
    rolled: set[int] = set()
    rebuilt: dict[int, int] = {}
    seen: set[str] = set()

    def read_announcement() -> None:
        nonlocal latest
        block = _block(sim, crash) or {}
        if block.get("state") == "Backoff" and block.get("nextRetryAt"):
            latest = str(block["nextRetryAt"])
            announced.setdefault(latest, set())
        hold = story.verdict or {}
        if hold.get("gate") == "RetryBlock" and hold.get("target") == crash and latest:
            announced[latest].update(_named_rebuilds(hold.get("reason", "")))

    def check_rebuilds() -> None:
        for name, pod in sim.pods.items():
            uid = str(pod.obj["metadata"]["uid"])
            if _image(sim, name) != CRASH or pod.obj["metadata"].get("deletionTimestamp") or uid in seen:
                continue
            seen.add(uid)
            index = int(pod.obj["metadata"]["labels"]["ome.io/instance-index"])
            if index not in rolled:
                rolled.add(index)
                continue
            rebuilt[index] = rebuilt.get(index, 0) + 1
            due = [at for at in announced if at <= format_time(sim.now)]
            assert due, (GO, f"rebuild {name} before the ladder announced any attempt")
            window = max(due)
            assert index in announced[window], (
                GO,
                f"rebuild {name} not announced",
                announced,
                story.last_hold(),
            )

    def watch() -> None:
        read_announcement()
        check_rebuilds()

    story.run(200, lambda: story.held_on(crash), watch)
    assert story.held_on(crash), (GO, rebuilt, story.driver.describe())
    assert len(rebuilt) >= 2, (GO, rebuilt)
    fixed = _push(story, FIXED)
    assert story.run(120, lambda: story.settled_on(fixed, 4)), (GO, story.driver.describe())
