"""OME's root ``reconcile_test.go``-like file of 612,458 characters: its placement and unpullable-push stories.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/``, the ``workload_test`` package file of 612,458
characters whose path and commit the index does not name (found by content, read whole; these tests lie
in its characters 306,000–612,458, the harness they drive in its first half). Go drives
``workload.Reconcile`` pass after pass against a fake client with a kubelet and scheduler model (its
``recoveryHarness``); here the replica is applied to the simulated world and planner passes run
(``omereconcile.simulate``), as ``test_workload_reconcile_part2.py`` does for the same half. The sim's
``imagepull`` image is Go's ``badImage``; Go's scheduler model (``holdPlacement``, ``unplaceable``) and
its ``preempt`` are the :class:`_Cluster` below. Which cases are ported, and how they map, is in
docs/goparity.md ("Part 2, the placement and unpullable-push stories").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, RenderOutcome, format_time
from omerender import constants as c
from tests.goparity.test_workload_reconcile_part1 import _lose
from tests.goparity.test_workload_reconcile_part2 import (
    GO,
    RECREATE_ONE,
    _block,
    _hold_for,
    _image,
    _pods_of,
    _row,
    _time,
    _uid,
)

STEP = 30.0  # Go's ``recoveryStepFloor``: the least its harness moves the clock per step


@dataclass
class _Cluster(Sim):
    """The sim with Go's scheduler model and Component choice (``recoveryHarness``):

    - ``component``: the Component the replica runs as (Go's ``newComponentRecoveryHarness``; every
      Component runs the same loop, only the names and labels differ);
    - ``no_room``: Go's ``holdPlacement(message)``: every pod not yet bound stays Pending with
      ``PodScheduled=False/Unschedulable`` carrying the message, until ``None`` (``releasePlacement``)
      lets the next kubelet tick bind it;
    - ``unplaceable``: Go's ``unplaceable``: pod names the scheduler refuses while every other pod places
      (a pod already bound runs on);
    - a pod whose behaviour is ``stopped`` is one the kubelet has stopped and reported (``preempt``).
    """

    component: str = "engine"
    no_room: str | None = None
    unplaceable: set[str] = field(default_factory=set)

    def _named(self, text: str) -> str:
        return text.replace("llama-pool-engine-", f"llama-pool-{self.component}-", 1)

    def render(self) -> RenderOutcome:
        out = super().render()
        if isinstance(out, DesiredRevision):
            out = replace(out, name=self._named(out.name))
        return out

    def pod_factory(
        self, revision: str, index: int, incarnation: int, runner: str, ordinal: int
    ) -> dict[str, Any]:
        pod = super().pod_factory(revision, index, incarnation, runner, ordinal)
        pod["metadata"]["name"] = self._named(pod["metadata"]["name"])
        pod["metadata"]["labels"][c.LABEL_COMPONENT] = self.component
        pod["spec"]["hostname"] = pod["metadata"]["name"]
        pod["spec"]["subdomain"] = self._named(pod["spec"]["subdomain"])
        return pod

    def _kubelet(self, p: SimPod) -> None:
        if p.behaviour == "stopped":
            return  # stopped and reported: nothing more to say until the object leaves
        obj = p.obj
        if not obj["spec"].get("nodeName") and (
            self.no_room is not None or obj["metadata"]["name"] in self.unplaceable
        ):
            message = self.no_room or "0/2 nodes are available: 2 Insufficient nvidia.com/gpu."
            conds = [cd for cd in obj["status"].setdefault("conditions", []) if cd["type"] != "PodScheduled"]
            was = next((cd for cd in obj["status"]["conditions"] if cd["type"] == "PodScheduled"), None)
            cond = {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastTransitionTime": (was or {}).get("lastTransitionTime") or format_time(self.now),
            }
            if was != cond:
                obj["status"]["conditions"] = [*conds, cond]
                obj["status"]["phase"] = "Pending"
                self._stamp(obj)
            return
        super()._kubelet(p)


def _preempt(sim: _Cluster, name: str, *, stopped_first: bool) -> None:
    """Go's ``preempt``: the scheduler stamps ``DisruptionTarget`` and deletes the pod under its own
    grace. The process exits 0 on SIGTERM: with a pod grace (``stopped_first``) the kubelet reports it
    Succeeded, which the next pass reads, and it is gone by the pass after; with none it is gone at once."""
    p = sim.pods[name]
    if not stopped_first:
        del sim.pods[name]
        sim.tick()
        return
    obj, now = p.obj, format_time(sim.now)
    obj["status"]["conditions"] = [
        *[cd for cd in obj["status"]["conditions"] if cd["type"] not in ("ContainersReady", "Ready")],
        {"type": "ContainersReady", "status": "False", "lastTransitionTime": now},
        {"type": "Ready", "status": "False", "lastTransitionTime": now},
        {
            "type": "DisruptionTarget",
            "status": "True",
            "reason": "PreemptionByScheduler",
            "message": "preempted by a pod of higher priority",
            "lastTransitionTime": now,
        },
    ]
    obj["status"]["phase"] = "Succeeded"
    obj["status"]["containerStatuses"] = [
        {
            "name": "ome-container",
            "image": obj["spec"]["containers"][0]["image"],
            "ready": False,
            "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "finishedAt": now}},
        }
    ]
    obj["metadata"]["deletionTimestamp"] = format_time(sim.now + timedelta(seconds=30))
    p.behaviour = "stopped"
    p.gone_at = sim.now + timedelta(seconds=STEP)
    sim._stamp(obj)
    sim._endpoint_slices()


def _step(driver: Driver) -> None:
    """Go's ``step``: a pass, then the clock moves on by the step floor (kubelet and endpoints catch
    up). Go moves it further when the pass asks for a later wake-up; while work is in flight its
    passes ask for the five-second operation cadence, so the floor is the step. Ours has no cadence
    to report, only the next deadline, which the story must not jump to."""
    driver.one_pass()
    driver.sim.advance(STEP)


NO_ROOM = "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."


@pytest.mark.parametrize("component", ["engine", "decoder", "router"])
@pytest.mark.parametrize("stopped_first", [True, False], ids=["stopped pod first", "gone at once"])
@pytest.mark.parametrize("policy", ["None", "RecreateInstanceOnPodRestart"])
def test_preempted_pod_returns_and_says_why_until_placed(
    policy: str, stopped_first: bool, component: str
) -> None:
    """Go: … TestPreemptedPod_ReturnsAndSaysWhyUntilPlaced (each of its 12 entries): two single-pod
    Instances at rest; the cluster loses its room and the scheduler preempts Instance 0's pod. The pass
    that observes the loss leaves the row Creating (None) or Restarting (RecreateInstanceOnPodRestart);
    within three passes a replacement under the same name exists; the pass after reads the scheduler's
    verdict: ``waiting: Unschedulable``, ``lastFailure`` naming the held pod with the scheduler's message,
    held for six more passes. The row never reads Failed inside the 15-minute unschedulable grace and
    Instance 1 keeps its Ready row and its pod throughout. Once the room is back the pod that waited is
    placed, the Component settles on v1 with two Instances, one RestartTriggered under
    RecreateInstanceOnPodRestart and none under None, and under None ``TerminalPodRecycled`` is seen
    exactly when the kubelet reported the stopped pod first."""
    sim = _Cluster(
        component=component,
        settings=OperatorSettings(
            stuck_pod_grace_period=timedelta(seconds=30),
            unschedulable_grace_period=timedelta(minutes=15),
            update_retry=RetryPolicy(2, timedelta(seconds=20), timedelta(minutes=1), 2.0),
        ),
    )
    sim.apply_replica(base_replica(replicas=2, component=component, lifecycle={"restartPolicy": policy}))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    v1 = sim.status["updateRevision"]
    (victim,) = _pods_of(sim, 0)
    (sibling,) = _pods_of(sim, 1)
    victim_uid, sibling_uid = _uid(sim, victim), _uid(sim, sibling)

    def untouched() -> None:
        assert (_row(sim, 0) or {}).get("phase") != "Failed", (GO, _row(sim, 0))
        peer = _row(sim, 1) or {}
        assert peer.get("phase") == "Ready", (GO, peer)
        assert not peer.get("operation"), (GO, peer)
        assert _pods_of(sim, 1) == [sibling], GO
        assert _uid(sim, sibling) == sibling_uid, GO

    sim.no_room = NO_ROOM
    _preempt(sim, victim, stopped_first=stopped_first)
    _step(driver)
    want = "Restarting" if policy == "RecreateInstanceOnPodRestart" else "Creating"
    assert (_row(sim, 0) or {}).get("phase") == want, (GO, _row(sim, 0), driver.describe())

    def replaced() -> bool:
        pods = _pods_of(sim, 0)
        return len(pods) == 1 and _uid(sim, pods[0]) != victim_uid

    for _ in range(3):
        untouched()
        if replaced():
            break
        _step(driver)
    untouched()
    assert replaced(), (GO, driver.describe())
    (replacement,) = _pods_of(sim, 0)
    assert replacement == victim, GO
    replacement_uid = _uid(sim, replacement)

    _step(driver)
    row = _row(sim, 0) or {}
    assert (row.get("operation") or {}).get("waiting") == "Unschedulable", (GO, row)
    failure = row.get("lastFailure") or {}
    assert (failure.get("reason"), failure.get("podName"), failure.get("message")) == (
        "Unschedulable",
        replacement,
        NO_ROOM,
    ), (GO, failure)

    def still_waiting() -> None:
        untouched()
        assert ((_row(sim, 0) or {}).get("operation") or {}).get("waiting") == "Unschedulable", GO

    _hold_for(driver, 6, still_waiting)

    sim.no_room = None

    def settled(s: _Cluster) -> bool:
        rows = s.rows()
        return (
            len(rows) == 2
            and all(
                r["phase"] == "Ready" and not r.get("operation") and r["runningRevision"] == v1 for r in rows
            )
            and len(s.live_pods()) == 2
        )

    for _ in range(10):
        untouched()
        if settled(sim):
            break
        _step(driver)
    untouched()
    assert settled(sim), (GO, driver.describe())
    assert _pods_of(sim, 0) == [replacement], GO
    assert _uid(sim, replacement) == replacement_uid, GO
    repairs = sim.event_reasons().count("RestartTriggered")
    assert repairs == (1 if policy == "RecreateInstanceOnPodRestart" else 0), (GO, sim.event_reasons())
    if policy == "None":
        assert ("TerminalPodRecycled" in sim.event_reasons()) == stopped_first, (GO, sim.event_reasons())


def _run(
    driver: Driver, steps: int, until: Callable[[], bool], invariant: Callable[[], None] = lambda: None
) -> bool:
    """Go's ``runWithInvariant``: up to ``steps`` steps until ``until()``, ``invariant()`` before each
    step and after the last."""
    for _ in range(steps):
        invariant()
        if until():
            return True
        _step(driver)
    invariant()
    return until()


def _serving_pods(sim: Sim) -> list[str]:
    """Go's ``servingPods``: the live pods whose serving gate is True."""
    return [n for n in sim.live_pods() if sim.gate_of(n) == "True"]


def _settled_on(sim: Sim, revision: str, n: int) -> bool:
    """Go's ``settledOn``: ``n`` rows Ready on ``revision`` with no operation and exactly their pods
    live, every one carrying the revision's hash."""
    rows = sim.rows()
    if len(rows) != n or not all(
        r["phase"] == "Ready" and r.get("runningRevision") == revision and not r.get("operation")
        for r in rows
    ):
        return False
    live = sim.live_pods()
    per = 1 + sim.workers
    h = revision.rsplit("-", 1)[-1]
    return len(live) == n * per and all(
        sim.pods[p].obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == h for p in live
    )


def _track(sim: Sim, seen: set[str], bad: Callable[[SimPod], bool]) -> None:
    """Go's ``trackPodsOnImage``: the uids of every live pod ``bad`` picks out, accumulated."""
    for name in sim.live_pods():
        if bad(sim.pods[name]):
            seen.add(_uid(sim, name))


def _held(sim: Sim, revision: str) -> bool:
    return (_block(sim, revision) or {}).get("state") == "Held"


def _parked_failed(sim: Sim, index: int, reason: str) -> bool:
    """The row reads Failed with no attempt in flight and ``reason`` on its record (Go: ``Phase ==
    Failed && !attemptOpen(row) && LastFailure.Reason == reason``)."""
    row = _row(sim, index) or {}
    return (
        row.get("phase") == "Failed"
        and not row.get("operation")
        and (row.get("lastFailure") or {}).get("reason") == reason
    )


def _push_unpullable(sim: Sim, replicas: int, lifecycle: dict[str, Any]) -> tuple[Driver, str, str]:
    """``replicas`` Instances converged on v1 under ``lifecycle``, then pushed onto v2, whose pods
    cannot pull (Go's ``setTarget(h.revBad, badImage)``): the driver, v1 and the pushed revision."""
    sim.apply_replica(base_replica(replicas=replicas, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == replicas)
    v1 = str(sim.status["updateRevision"])
    sim.behaviour["vllm:v2"] = "imagepull"
    sim.image = "vllm:v2"
    return driver, v1, sim.render().name  # type: ignore[union-attr]


SHAPES = [
    pytest.param(0, False, id="single pod"),
    pytest.param(1, False, id="gang whose leader and worker cannot pull"),
    pytest.param(1, True, id="gang whose leader cannot pull beside a worker that comes up"),
]


@pytest.mark.parametrize(("workers", "worker_good"), SHAPES)
def test_unpullable_push_charges_the_ladder_whatever_the_instance_shape(
    workers: int, worker_good: bool
) -> None:
    """Go: … TestUnpullablePush_ChargesTheLadderWhateverTheInstanceShape (each of its 3 shapes): two
    Instances under RecreatePod maxUnavailable 1 and a ladder of three attempts (90 s initial delay,
    doubling, 30 min cap), pushed onto a revision whose pods cannot pull (the gang's leader alone in the
    third shape, its worker coming up beside it). The first attempt leaves Instance 0 Failed with
    ``lastFailure.reason: ImagePullBackOff`` and no attempt in flight, the block Backoff with one attempt
    and a retry time, after exactly one pod set on the unpullable image; until that time the row keeps
    that reading and the wedged set is not rebuilt; then the next attempt opens as the ladder's (row
    Updating, block RetryInProgress with one attempt); the revision ends Held at three attempts with the
    pull failure and one RetryHeld warning, after exactly one pod set per attempt; the row parks Failed
    with the pull failure, and Instance 1 stays Ready on v1 serving through the pods it had before the
    push, the serving count never below one Instance's pods."""
    ladder = RetryPolicy(3, timedelta(seconds=90), timedelta(minutes=30), 2.0)
    sim = _Cluster(
        workers=workers,
        settings=OperatorSettings(stuck_pod_grace_period=timedelta(seconds=30), update_retry=ladder),
    )
    driver, v1, bad = _push_unpullable(sim, 2, RECREATE_ONE)
    per = 1 + workers
    survivor = {n: _uid(sim, n) for n in _pods_of(sim, 1)}  # no pass has run on the push yet
    assert len(survivor) == per
    if worker_good:
        sim.worker_behaviour["vllm:v2"] = "ok"
    bad_per_attempt = 1 if worker_good else per
    seen: set[str] = set()

    def unpullable(p: SimPod) -> bool:
        return p.behaviour == "imagepull"

    def keep_serving() -> None:
        _track(sim, seen, unpullable)
        assert len(_serving_pods(sim)) >= per, (GO, driver.describe())

    def first_attempt_charged() -> bool:
        block = _block(sim, bad) or {}
        return (
            _parked_failed(sim, 0, "ImagePullBackOff")
            and block.get("state") == "Backoff"
            and block.get("attemptsStarted") == 1
            and bool(block.get("nextRetryAt"))
        )

    assert _run(driver, 40, first_attempt_charged, keep_serving), (GO, driver.describe(), _block(sim, bad))
    assert len(seen) == bad_per_attempt, GO
    wedged = {_uid(sim, n) for n in _pods_of(sim, 0)}
    assert len(wedged) == per, (GO, driver.describe())
    due = _time(str((_block(sim, bad) or {})["nextRetryAt"]))
    parked = 0
    while sim.now < due:
        _step(driver)
        parked += 1
        keep_serving()
        assert first_attempt_charged(), (GO, _row(sim, 0), _block(sim, bad))
        assert {_uid(sim, n) for n in _pods_of(sim, 0)} <= wedged, (GO, driver.describe())
    assert parked > 0, GO

    def reopened() -> bool:
        block = _block(sim, bad) or {}
        return (_row(sim, 0) or {}).get("phase") == "Updating" and (
            block.get("state"),
            block.get("attemptsStarted"),
        ) == ("RetryInProgress", 1)

    assert _run(driver, 10, reopened, keep_serving), (GO, driver.describe(), _block(sim, bad))
    assert _run(driver, 80, lambda: _held(sim, bad), keep_serving), (GO, driver.describe())
    block = _block(sim, bad) or {}
    assert (block.get("attemptsStarted"), block.get("reason")) == (3, "ImagePullBackOff"), (GO, block)
    assert sim.event_reasons().count("RetryHeld") == 1, GO
    for _ in range(4):
        _step(driver)
    keep_serving()
    assert len(seen) == bad_per_attempt * 3, (GO, len(seen))
    assert _parked_failed(sim, 0, "ImagePullBackOff"), (GO, _row(sim, 0))
    peer = _row(sim, 1) or {}
    assert (peer.get("phase"), peer.get("operation"), peer.get("runningRevision")) == ("Ready", None, v1), GO
    assert {n: _uid(sim, n) for n in _pods_of(sim, 1)} == survivor, GO
    assert all(sim.gate_of(n) == "True" for n in survivor), GO


@pytest.mark.parametrize(
    "ending",
    [pytest.param("grace", id="stuck-pod grace"), pytest.param("deadline", id="operation deadline")],
)
def test_gang_push_unpullable_revision_is_held_within_the_ladder(ending: str) -> None:
    """Go: … TestGangPush_UnpullableRevisionIsHeldWithinTheLadder (each ending): two leader+worker
    gangs under RecreatePod maxUnavailable 1 and the harness ladder (two attempts, 20 s, doubling, 1 min
    cap) are pushed onto an unpullable revision; every attempt ends by the stuck-pod grace (30 s) or,
    with that grace off, by the operation deadline (2 min). The revision is Held at two attempts with
    the pull failure, some pass shows the stuck gang's row Failed, one gang's pods (two) were made per
    attempt and no more, the stuck row parks Failed with no attempt in flight and the pull failure,
    the healthy gang stays Ready on v1 and the serving count never drops below two; a corrected push
    then lands on both gangs and leaves the corrected revision without a retry block."""
    settings = OperatorSettings(
        stuck_pod_grace_period=timedelta(seconds=30) if ending == "grace" else timedelta(0),
        instance_ready_timeout=None if ending == "grace" else timedelta(minutes=2),
        update_retry=RetryPolicy(2, timedelta(seconds=20), timedelta(minutes=1), 2.0),
    )
    sim = _Cluster(workers=1, settings=settings)
    driver, v1, bad = _push_unpullable(sim, 2, RECREATE_ONE)
    seen: set[str] = set()
    saw_failed = False

    def invariant() -> None:
        nonlocal saw_failed
        _track(sim, seen, lambda p: p.behaviour == "imagepull")
        assert len(_serving_pods(sim)) >= 2, (GO, driver.describe())
        saw_failed = saw_failed or (_row(sim, 0) or {}).get("phase") == "Failed"

    assert _run(driver, 160, lambda: _held(sim, bad), invariant), (GO, driver.describe(), _block(sim, bad))
    assert saw_failed, GO
    block = _block(sim, bad) or {}
    assert (block.get("attemptsStarted"), block.get("reason")) == (2, "ImagePullBackOff"), (GO, block)
    assert len(seen) == 2 * 2, (GO, len(seen))
    for _ in range(4):
        _step(driver)
    assert _parked_failed(sim, 0, "ImagePullBackOff"), (GO, _row(sim, 0))
    peer = _row(sim, 1) or {}
    assert (peer.get("phase"), peer.get("runningRevision")) == ("Ready", v1), (GO, peer)
    sim.image = "vllm:v3"
    fixed = sim.render().name  # type: ignore[union-attr]

    def landed() -> bool:
        return _settled_on(sim, fixed, 2) and not any(_image(sim, n) == "vllm:v2" for n in sim.live_pods())

    assert _run(driver, 80, landed), (GO, driver.describe())
    for _ in range(4):
        _step(driver)
    assert _block(sim, fixed) is None, (GO, sim.status.get("retryBlocks"))


def _rolling_budget(strategy: str, **rolling: Any) -> dict[str, Any]:
    """Go's ``useRollingBudget(strategy)``: the strategy with a budget of one, SurgeThenDrain with
    maxSurge 1 (maxUnavailable 0) and RecreatePod with maxUnavailable 1 (maxSurge 0); ``rolling``
    overrides a field of ``rollingUpdate`` as the stories do after it."""
    surge = strategy == "SurgeThenDrain"
    ru = {"maxSurge": 1 if surge else 0, "maxUnavailable": 0 if surge else 1, **rolling}
    return {"restartPolicy": "None", "updateStrategy": {"type": strategy, "rollingUpdate": ru}}


def _row_settled_on(sim: Sim, index: int, revision: str) -> bool:
    """Go's ``rowSettledOn``: the row Ready with no operation on ``revision``, with one live pod."""
    row = _row(sim, index) or {}
    return (
        row.get("phase") == "Ready"
        and not row.get("operation")
        and row.get("runningRevision") == revision
        and len(_pods_of(sim, index)) == 1
    )


def _require_peers_on(sim: Sim, index: int, revision: str) -> None:
    """Go's ``requirePeersOn``: every Instance but ``index`` is Ready on ``revision`` with no
    operation."""
    for row in sim.rows():
        if int(row["index"]) == index:
            continue
        assert (row["phase"], row.get("operation"), row.get("runningRevision")) == (
            "Ready",
            None,
            revision,
        ), (
            GO,
            f"the roll crept forward while Instance {index} on the target serves nothing",
            row,
        )


class _NotServingHolds:
    """Go's ``notServingHolds``: how many passes reported a rollout hold naming an Instance on the
    target that does not serve it (ours writes that clause as ``…on revision <target> not serving``)."""

    def __init__(self, sim: Sim) -> None:
        self.sim, self.count = sim, 0

    def observe(self) -> None:
        hold = self.sim.status.get("rolloutHold") or {}
        if "not serving" in str(hold.get("reason") or ""):
            self.count += 1


def _pod_renders(sim: Sim, index: int, revision: str, image: str) -> None:
    """Go's ``requirePodsRender``: the Instance's pods carry ``revision``'s hash and run ``image``."""
    for name in _pods_of(sim, index):
        assert (
            sim.pods[name].obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == revision.rsplit("-", 1)[-1]
        ), GO
        assert _image(sim, name) == image, GO


@pytest.mark.parametrize("strategy", ["SurgeThenDrain", "RecreatePod"])
def test_podless_rolled_row_rebuilt_under_the_budget_it_holds(strategy: str) -> None:
    """Go: … TestPodlessRolledRow_RebuiltUnderTheBudgetItHolds (SurgeThenDrain maxSurge 1, RecreatePod
    maxUnavailable 1): two single-pod Instances under restart policy None roll Instance 1 onto the
    target under a partition of one; the partition drops to zero as the canary's only pod is deleted.
    The podless row counts against the budget (a hold names it as not serving), the row is rebuilt
    from the target's template, and until the rebuilt pod serves Instance 0 stays Ready on the stable
    revision; then the roll finishes on both."""
    sim = _Cluster()
    sim.apply_replica(base_replica(replicas=2, lifecycle=_rolling_budget(strategy)))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    v1 = sim.status["updateRevision"]
    canary = _rolling_budget(strategy, partition=1)
    sim.update_spec(lifecycle=canary)
    sim.image = "vllm:v2"
    fixed = sim.render().name  # type: ignore[union-attr]
    assert _run(driver, 60, lambda: _row_settled_on(sim, 1, fixed) and _row_settled_on(sim, 0, v1)), (
        GO,
        driver.describe(),
    )
    sim.update_spec(lifecycle=_rolling_budget(strategy, partition=0))
    _lose(sim, *_pods_of(sim, 1))
    holds = _NotServingHolds(sim)
    rebuilt = False

    def held_stays() -> None:
        holds.observe()
        if not _row_settled_on(sim, 1, fixed):
            _require_peers_on(sim, 1, v1)

    def finished() -> bool:
        nonlocal rebuilt
        if not rebuilt and len(_pods_of(sim, 1)) == 1:
            rebuilt = True
            _pod_renders(sim, 1, fixed, "vllm:v2")
        return _settled_on(sim, fixed, 2)

    assert _run(driver, 80, finished, held_stays), (GO, driver.describe(), rebuilt, holds.count)
    assert holds.count > 0, (GO, "the budget never held the roll on the podless Instance")


def test_podless_rolled_row_rebuilt_at_the_target_mid_roll() -> None:
    """Go: … TestPodlessRolledRow_RebuiltAtTheTargetMidRoll: three single-pod Instances roll under
    SurgeThenDrain maxSurge 1 (restart policy None); the first Instance the roll moved onto the target
    loses its pod before the next start is admitted. The podless row holds the surge slot (a hold names
    it), no other Instance leaves the stable revision, the row is rebuilt from the target's template
    under the target's revision label, and the roll lands on all three."""
    sim = _Cluster()
    sim.apply_replica(base_replica(replicas=3, lifecycle=_rolling_budget("SurgeThenDrain")))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 3)
    v1 = sim.status["updateRevision"]
    sim.image = "vllm:v2"
    fixed = sim.render().name  # type: ignore[union-attr]
    moved: list[int] = []

    def one_moved() -> bool:
        moved[:] = [int(r["index"]) for r in sim.rows() if _row_settled_on(sim, int(r["index"]), fixed)]
        return bool(moved)

    assert _run(driver, 60, one_moved), (GO, driver.describe())
    (index,) = moved[:1]
    _require_peers_on(sim, index, v1)
    _lose(sim, *_pods_of(sim, index))
    holds = _NotServingHolds(sim)
    rebuilt = False

    def peers_stay() -> None:
        holds.observe()
        if not _row_settled_on(sim, index, fixed):
            _require_peers_on(sim, index, v1)

    def finished() -> bool:
        nonlocal rebuilt
        if not rebuilt and len(_pods_of(sim, index)) == 1:
            rebuilt = True
            _pod_renders(sim, index, fixed, "vllm:v2")
        return _settled_on(sim, fixed, 3)

    assert _run(driver, 100, finished, peers_stay), (GO, driver.describe(), rebuilt, holds.count)
    assert holds.count > 0, (GO, "the budget never held the roll on the podless Instance")


def _promoted(sim: Sim, name: str) -> bool:
    """Go's ``promotedOn``: the pod's Instance row is Ready on the revision the pod carries."""
    labels = sim.pods[name].obj["metadata"]["labels"]
    row = _row(sim, int(labels[c.LABEL_INSTANCE_INDEX])) or {}
    running = str(row.get("runningRevision") or "")
    return row.get("phase") == "Ready" and running.rsplit("-", 1)[-1] == labels[c.LABEL_REVISION_HASH]


def _instances_serving_on(sim: Sim, image: str) -> int:
    """Go's ``instancesServingOn``: the Instances with a live pod on ``image`` that is ContainersReady
    and in rotation (single-pod Instances)."""
    out = set()
    for name in sim.live_pods():
        obj = sim.pods[name].obj
        conds = {cd["type"]: cd["status"] for cd in obj["status"].get("conditions", [])}
        if (
            _image(sim, name) == image
            and conds.get("ContainersReady") == "True"
            and sim.gate_of(name) == "True"
        ):
            out.add(obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
    return len(out)


def _repair_in_flight(sim: Sim) -> bool:
    return any(
        r["phase"] == "Restarting" or (r.get("operation") or {}).get("type") == "Restart" for r in sim.rows()
    )


@pytest.mark.parametrize("max_unavailable", [1, 0], ids=["the attempt completes", "serves beside its source"])
def test_repair_waiting_on_placement_update_in_flight_keeps_advancing(max_unavailable: int) -> None:
    """Go: … TestRepairWaitingOnPlacement_UpdateInFlightKeepsAdvancing (each budget): three single-pod
    Instances under RecreateInstanceOnPodRestart, SurgeThenDrain maxSurge 1 and maxUnavailable 1 or 0,
    an operation deadline of four steps (2 min), pushed to v2. On the pass that starts a replacement
    beside an Instance already promoted onto v2, the promoted pod's runner dies once and no node has
    room for its rebuilt pod. For three deadlines after, no row reads Failed; then the repair is still
    open (Restarting), the replacement serves, and under maxUnavailable 1 its Instance is Ready on v2
    with no operation, under 0 it holds at its Surge step with its source and the other Instance still
    serving v1. Once the rebuilt pod can be placed the repair completes and the roll lands on all."""
    deadline = timedelta(seconds=4 * STEP)
    sim = _Cluster(
        settings=OperatorSettings(
            instance_ready_timeout=deadline,
            stuck_pod_grace_period=timedelta(seconds=30),
            update_retry=RetryPolicy(2, timedelta(seconds=20), timedelta(minutes=1), 2.0),
        )
    )
    lifecycle = _rolling_budget("SurgeThenDrain", maxUnavailable=max_unavailable)
    lifecycle["restartPolicy"] = "RecreateInstanceOnPodRestart"
    sim.apply_replica(base_replica(replicas=3, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 3)
    sim.image = "vllm:v2"
    fixed = sim.render().name  # type: ignore[union-attr]
    target_hash = fixed.rsplit("-", 1)[-1]
    victim = replacement = ""
    for _ in range(60):
        driver.one_pass()
        on_target = [
            n
            for n in sim.live_pods()
            if sim.pods[n].obj["metadata"]["labels"][c.LABEL_REVISION_HASH] == target_hash
        ]
        promoted = [n for n in on_target if _promoted(sim, n)]
        # A pod this pass created, that no kubelet has reported on yet (Go: ``Status.Phase == ""``).
        starting = [n for n in on_target if not sim.pods[n].obj["status"].get("conditions")]
        sim.advance(STEP)
        if promoted and starting:
            victim, replacement = promoted[-1], starting[-1]
            sim.restart_runner(victim)  # the kill lands on the kubelet step that starts the replacement
            sim.unplaceable = {victim}
            break
    assert victim, (GO, "the roll never started a replacement beside an Instance promoted onto the target")
    repair_idx = int(sim.pods[victim].obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
    surge_idx = int(sim.pods[replacement].obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
    until = sim.now + 3 * deadline

    def none_failed() -> None:
        for row in sim.rows():
            assert row["phase"] != "Failed", (GO, row, driver.describe())

    _run(driver, 60, lambda: sim.now >= until, none_failed)
    assert sim.now >= until, GO
    assert (_row(sim, repair_idx) or {}).get("phase") == "Restarting", (GO, _row(sim, repair_idx))
    assert replacement in sim.pods, (GO, driver.describe())
    assert sim.gate_of(replacement) == "True", (GO, driver.describe())
    row = _row(sim, surge_idx) or {}
    if max_unavailable == 1:
        assert (row.get("phase"), row.get("operation"), row.get("runningRevision")) == (
            "Ready",
            None,
            fixed,
        ), (
            GO,
            row,
        )
    else:
        assert (row.get("operation") or {}).get("step") == "Surge", (GO, row)
        assert _instances_serving_on(sim, "vllm:v1") >= 2, (GO, driver.describe())
    sim.unplaceable = set()
    assert _run(driver, 80, lambda: _settled_on(sim, fixed, 3) and not _repair_in_flight(sim)), (
        GO,
        driver.describe(),
    )


def _gang_mid_wreckage(sim: Sim) -> bool:
    """Go's ``gangMidWreckage``: a source row Failed with its gang-surge Update operation kept, the
    replacement's marker row (GangSurgeTarget) present, and pods of the unpullable revision live."""
    rows = sim.rows()
    source = next(
        (
            r
            for r in rows
            if (r.get("operation") or {}).get("type") == "Update" and "surgeIndex" in r["operation"]
        ),
        None,
    )
    marker = next((r for r in rows if (r.get("operation") or {}).get("step") == "GangSurgeTarget"), None)
    bad = any(sim.pods[n].behaviour == "imagepull" for n in sim.live_pods())
    return source is not None and source["phase"] == "Failed" and marker is not None and bad


@pytest.mark.xfail(
    strict=True,
    reason="known difference: ours records the failed gang-surge attempt on the ladder in the pass its "
    "escalation fails the source (Held at a bound of one, the marker already at GangSurgeTargetCleanup) "
    "and then abandons the surge, so the story's starting shape (source Failed with its surge, marker "
    "GangSurgeTarget with its pods parked, no retry block yet) never arises; Go leaves the attempt for "
    "the abandon or a scale-down wave to record, and the story has the wave record it",
)
def test_scale_while_gang_surge_failed_scale_down_retires_the_failed_pair_first() -> None:
    """Go: … TestScaleWhileGangSurgeFailed_ScaleDownRetiresTheFailedPairFirst: two leader+worker gangs
    under SurgeThenDrain maxSurge 1 with a ladder of one attempt are pushed onto an unpullable revision
    until Instance 0 reads Failed with its gang-surge operation, its replacement's marker present and the
    replacement's pods parked (all four v1 pods serving, no block yet). A scale to one retires Instance 0
    and the marker together (never split, the source going Failed to Deleting, never reset) and keeps
    Instance 1 Ready with no operation on the very pods it served through; at rest one row is left,
    and the wave's record Holds the revision at one attempt with the pull failure (one RetryHeld), no
    pod is made on the pushed revision after the scale, and Instance 1 still records v1."""
    sim = _Cluster(
        workers=1,
        settings=OperatorSettings(
            stuck_pod_grace_period=timedelta(seconds=30),
            update_retry=RetryPolicy(1, timedelta(minutes=1), timedelta(minutes=30), 2.0),
        ),
    )
    driver, v1, bad = _push_unpullable(sim, 2, _rolling_budget("SurgeThenDrain"))
    assert _run(driver, 60, lambda: _gang_mid_wreckage(sim)), (GO, driver.describe())
    assert len(_serving_pods(sim)) == 4, (GO, driver.describe())
    assert _block(sim, bad) is None, (GO, "the story needs the wave to be the ladder's first record")
    source = _row(sim, 0) or {}
    surge_idx = int(source["operation"]["surgeIndex"])
    healthy = {n: _uid(sim, n) for n in _pods_of(sim, 1)}
    assert len(healthy) == 2, GO
    seen: set[str] = set()

    def unpullable(p: SimPod) -> bool:
        return p.behaviour == "imagepull"

    _track(sim, seen, unpullable)
    before = len(seen)
    sim.update_spec(replicas=1)

    def at_rest() -> bool:
        rows = sim.rows()
        return (
            len(rows) == 1
            and int(rows[0]["index"]) == 1
            and rows[0]["phase"] == "Ready"
            and not rows[0].get("operation")
            and not _pods_of(sim, 0)
            and not _pods_of(sim, surge_idx)
            and not any(sim.pods[n].behaviour == "imagepull" for n in sim.live_pods())
        )

    def invariant() -> None:
        _track(sim, seen, unpullable)
        assert {n: _uid(sim, n) for n in _pods_of(sim, 1)} == healthy, (GO, driver.describe())
        assert all(sim.gate_of(n) == "True" for n in healthy), GO
        row = _row(sim, 1) or {}
        assert (row.get("phase"), row.get("operation")) == ("Ready", None), (GO, row)

        def leaving(index: int) -> bool:
            r = _row(sim, index)
            return r is None or r["phase"] == "Deleting"

        assert leaving(0) == leaving(surge_idx), (GO, "the failed pair was split", driver.describe())
        src = _row(sim, 0)
        assert src is None or src["phase"] in ("Failed", "Deleting"), (GO, src)

    assert _run(driver, 60, at_rest, invariant), (GO, driver.describe())
    for _ in range(6):
        _step(driver)
        invariant()
        assert at_rest(), (GO, driver.describe())
    block = _block(sim, bad) or {}
    assert (block.get("state"), block.get("attemptsStarted"), block.get("reason")) == (
        "Held",
        1,
        "ImagePullBackOff",
    ), (GO, block)
    assert sim.event_reasons().count("RetryHeld") == 1, GO
    assert len(seen) == before, (GO, "a pod was made on the unpullable revision after the scale")
    assert (_row(sim, 1) or {}).get("runningRevision") == v1, GO
