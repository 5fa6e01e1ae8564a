"""The update pass's admission as OME's newest Go has it (``workload/reconcile.go``
``updateAdmission``; ``workload/plan_decision.go`` ``planUpdateSelection``).

Extra pods the API still lists hold surge slots (``escalation.ExtraPodSurgeInFlight``, named by
``extraPodClause``), and Instances already rolled onto the target that do not serve it hold a slot
of the strategy's arm (``RolledNotServing``, named by ``rolledNotServingClause``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from omereconcile.simulate.cluster import Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, converged
from omerender import constants as c

SURGE_1 = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}


def _converged(replicas: int, lifecycle: dict[str, Any]) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas, lifecycle=lifecycle))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == replicas)
    return sim, driver


def _v2(sim: Sim) -> str:
    sim.image = "vllm:v2"
    return sim.render().name  # type: ignore[union-attr]


def _rolled(sim: Sim, rev: str) -> bool:
    return converged(sim) and sim.status.get("currentRevision") == rev


def _listed(sim: Sim) -> int:
    """Pods the API lists, Terminating ones inside their deletion grace included."""
    return sum(1 for p in sim.pods.values() if p.gone_at is None or sim.now <= p.gone_at)


GONE = "llama-pool-engine-1-default-0"


def _scaled_down_terminating(lifecycle: dict[str, Any]) -> tuple[Sim, Driver]:
    """Two Instances scaled to one: Instance 1's pod Terminating with a 30 s deletion grace."""
    sim, driver = _converged(2, lifecycle)
    sim.delete_grace = 30.0
    sim.update_spec(replicas=1)
    for _ in range(40):
        driver.one_pass()
        sim.advance(0.5)
        if sim.pods[GONE].obj["metadata"].get("deletionTimestamp"):
            return sim, driver
    raise AssertionError(driver.describe())


def test_a_terminating_pod_holds_a_surge_slot_until_its_deletion_grace_elapses() -> None:
    """``escalation.ExtraPodSurgeInFlight``: a Terminating pod of a bucket the plan no longer owns
    (a scaled-away Instance) counts against ``maxSurge`` until its ``deletionTimestamp``, and the
    Budget hold names it (``updateAdmission.extraPodClause``)."""
    sim, driver = _scaled_down_terminating(SURGE_1)
    gone = GONE
    v2 = _v2(sim)
    driver.one_pass()
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert hold["reason"] == (
        "per-Component surge budget 1 exhausted (would become 2); Terminating pod "
        f"{gone} still counts against the surge budget until its deletion grace elapses"
    )
    assert sorted(sim.pods) == ["llama-pool-engine-0-default-0", gone]  # no replacement created

    def within(s: Sim) -> None:
        if _listed(s) > 2:  # one desired Instance + maxSurge 1
            raise InvariantError(f"{_listed(s)} pods listed with 1 replica and maxSurge 1: {sorted(s.pods)}")

    driver.extra_checks.append(within)
    driver.run(lambda s: _rolled(s, v2))
    assert "rolloutHold" not in sim.status


def test_an_uncapped_surge_budget_counts_no_extra_pods() -> None:
    """``planUpdateSelection`` computes ``ExtraPodSurge`` for a capped budget only."""
    sim, driver = _scaled_down_terminating({})
    _v2(sim)
    driver.one_pass()
    assert "rolloutHold" not in sim.status
    assert "llama-pool-engine-0-default-1" in sim.pods  # the surge started at once


def _rolled_first(sim: Sim, driver: Driver, v2: str) -> None:
    """Step until Instance 0 is Ready on v2 and no other Instance has started."""
    for _ in range(200):
        rows = sim.rows()
        if rows[0].get("runningRevision") == v2 and not any(r.get("operation") for r in rows):
            return
        driver.one_pass()
        sim.advance(0.5)
    raise AssertionError(driver.describe())


def _stop_serving(sim: Sim, index: int) -> None:
    name = next(n for n in sim.pods if n.startswith(f"llama-pool-engine-{index}-"))
    sim.restart_runner(name)  # ContainersReady False until the runner is ready again


@pytest.mark.parametrize(
    ("lifecycle", "arm"),
    [
        (SURGE_1, "surge"),
        (
            {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}},
            "unavailability",
        ),
    ],
)
def test_a_rolled_instance_that_stops_serving_holds_a_slot_of_the_strategys_budget(
    lifecycle: dict[str, Any], arm: str
) -> None:
    """``RolledNotServing`` (``ops.RolledInstanceNotServing``): an Instance already on the target
    whose pod set is short of fully serving holds a slot of the strategy's arm (``maxSurge`` or
    ``maxUnavailable``) ahead of any fresh start, and the hold names it
    (``rolledNotServingClause``); once it serves again the roll goes on."""
    sim, driver = _converged(3, lifecycle)
    v2 = _v2(sim)
    _rolled_first(sim, driver, v2)
    _stop_serving(sim, 0)
    pods = sorted(sim.pods)
    driver.one_pass()
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert hold["reason"] == (
        f"per-Component {arm} budget 1 exhausted (would become 2); Instance 0 on revision {v2} not serving"
    )
    assert sorted(sim.pods) == pods  # Instance 1 was neither surged nor taken down
    driver.run(lambda s: _rolled(s, v2))
    assert "rolloutHold" not in sim.status


def test_a_live_extra_pod_holds_a_surge_slot_until_a_start_on_its_instance_replaces_it() -> None:
    """``ExtraPodSurge.Live``: a live pod beyond its Instance's own count holds a ``maxSurge`` slot
    against every other Instance's start; a start on its own Instance is not charged for it
    (``updateAdmission.unreplacedExtraSlots``) and takes the slot over (``charge``). So with
    ``maxSurge: 1`` Instance 1 starts first, and the listed pods never pass replicas + maxSurge."""
    sim, driver = _converged(2, SURGE_1)
    src = sim.pods["llama-pool-engine-1-default-0"]
    extra = copy.deepcopy(src.obj)  # a replacement a disposed attempt left alive
    extra["metadata"].update(name="llama-pool-engine-1-default-1", uid="pod-left-alive")
    extra["metadata"]["labels"][c.LABEL_POD_ORDINAL] = "1"
    sim.pods["llama-pool-engine-1-default-1"] = SimPod(obj=extra, created=sim.now, behaviour="ok")
    sim.tick()

    def within(s: Sim) -> None:
        if _listed(s) > 3:  # two desired Instances + maxSurge 1
            raise InvariantError(f"{_listed(s)} pods listed with 2 replicas and maxSurge 1: {sorted(s.pods)}")

    driver.extra_checks.append(within)
    v2 = _v2(sim)
    driver.one_pass()
    steps = {r["index"]: (r.get("operation") or {}).get("step") for r in sim.rows()}
    assert steps == {0: None, 1: "Surge"}
    driver.run(lambda s: _rolled(s, v2))
    assert sorted(sim.pods) == ["llama-pool-engine-0-default-1", "llama-pool-engine-1-default-1"]


def test_rolled_instances_past_the_unavailability_budget_keep_every_surge_source_in_rotation() -> None:
    """``floorHold`` (``updateAdmission.drainWithheld``): under SurgeThenDrain with a capped
    ``maxUnavailable``, while more rolled Instances fail to serve than that budget allows, a surge
    whose replacement serves stays at ``Surge`` with its source in rotation (``ops`` ``drainAdmitted``),
    and the hold says so even though the surge moved this pass; once the rolled Instance serves
    again the drain starts and the roll completes."""
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}}}
    sim, driver = _converged(3, lc)
    v2 = _v2(sim)
    for _ in range(200):
        rows = sim.rows()
        if (rows[2].get("operation") or {}).get("step") == "Surge" and rows[0].get("runningRevision") == v2:
            break
        driver.one_pass()
        sim.advance(0.5)
    source = "llama-pool-engine-2-default-0"
    for _ in range(30):  # Instance 0's runner keeps crashing for 15 s
        _stop_serving(sim, 0)
        driver.one_pass()
        sim.advance(0.5)
    assert sim.gate_of("llama-pool-engine-2-default-1") == "True"  # the replacement serves
    assert sim.rows()[2]["operation"]["step"] == "Surge"
    assert sim.gate_of(source) == "True"  # the source never left rotation
    hold = sim.status["rolloutHold"]
    assert hold["gate"] == "Budget"
    assert hold["reason"] == (
        f"per-Component unavailability budget 0 exhausted; Instance 0 on revision {v2} not serving; "
        "no source leaves rotation"
    )
    driver.run(lambda s: _rolled(s, v2))
    assert "rolloutHold" not in sim.status


def test_a_rolled_instance_ready_again_after_a_restart_holds_its_slot_for_the_proven_window() -> None:
    """``ops.RolledInstanceNotServing`` with ``ProvenWindowSeconds``: a pod whose runner restarted
    since its Instance entered Ready is read as serving only once it has held Ready again for
    ``max(minReadySeconds, stuck-pod grace)`` (60 s here), so the roll starts nothing on a comeback
    shorter than that."""
    sim, driver = _converged(3, SURGE_1)
    v2 = _v2(sim)
    _rolled_first(sim, driver, v2)
    _stop_serving(sim, 0)
    pods = sorted(sim.pods)
    for _ in range(40):  # 20 s: ready again after 5 s, then 15 s into the 60 s window
        driver.one_pass()
        sim.advance(0.5)
    back = next(n for n in sim.pods if n.startswith("llama-pool-engine-0-"))
    assert sim.gate_of(back) == "True"  # it serves again
    assert 0 in sim.serving_instances()
    assert sorted(sim.pods) == pods  # but Instance 1 has not started
    assert sim.status["rolloutHold"]["reason"].endswith(f"; Instance 0 on revision {v2} not serving")
    driver.run(lambda s: len(s.pods) > len(pods))  # the window ends: Instance 1's surge starts
    assert sim.rows()[1]["operation"]["step"] == "Surge"
    driver.run(lambda s: _rolled(s, v2))


def test_a_restarted_pod_whose_ready_condition_carries_no_transition_time_is_never_proven() -> None:
    """``ops.RolledInstanceNotServing`` reads a restarted pod through ``podreadiness.IsPodAvailable``
    (``workload/podreadiness/readiness.go`` @ 58a57f25, 26,065 characters): a Ready condition with no
    ``lastTransitionTime`` is not Available, "its age cannot be proven, so no later instant makes it
    Available". The Instance keeps its slot however long the pod has been Ready, and the roll goes on
    once the condition is dated again."""
    sim, driver = _converged(3, SURGE_1)
    v2 = _v2(sim)
    _rolled_first(sim, driver, v2)
    _stop_serving(sim, 0)
    pods = sorted(sim.pods)
    for _ in range(40):  # ready again after 5 s
        driver.one_pass()
        sim.advance(0.5)
    back = next(n for n in sim.pods if n.startswith("llama-pool-engine-0-"))
    ready = next(cd for cd in sim.pods[back].obj["status"]["conditions"] if cd["type"] == "Ready")
    assert ready["status"] == "True"
    stamped = ready.pop("lastTransitionTime")
    for _ in range(240):  # 120 s, twice the 60 s window
        driver.one_pass()
        sim.advance(0.5)
    assert sorted(sim.pods) == pods  # Instance 1 has not started
    assert sim.status["rolloutHold"]["reason"].endswith(f"; Instance 0 on revision {v2} not serving")
    ready["lastTransitionTime"] = stamped
    driver.run(lambda s: _rolled(s, v2))


def test_the_floor_keeps_a_gang_surge_source_in_rotation() -> None:
    """``floorHold`` holds a gang surge at ``Surge`` too (``ops`` ``drainAdmitted`` for the gang):
    while the rolled gang, Instance 2, is down its replacement's source, Instance 1, stays in
    rotation although the replacement gang (Instance 0) is at the hand-over bar."""
    sim = Sim(workers=1)
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}
    sim.apply_replica(base_replica(replicas=2, lifecycle=lc))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status["readyReplicas"] == 2)
    v2 = _v2(sim)
    for _ in range(300):  # 0 -> 2 rolled, then 1 surging into index 0
        rows = {r["index"]: r for r in sim.rows()}
        if (rows[1].get("operation") or {}).get("step") == "Surge" and rows.get(2, {}).get(
            "runningRevision"
        ) == v2:
            break
        driver.one_pass()
        sim.advance(0.5)
    for _ in range(30):  # Instance 2's runners keep crashing for 15 s
        for name, pod in list(sim.pods.items()):
            if name.startswith("llama-pool-engine-2-") and not pod.obj["metadata"].get("deletionTimestamp"):
                sim.restart_runner(name)
        driver.one_pass()
        sim.advance(0.5)
    assert {n: sim.gate_of(n) for n in sim.pods if n.startswith("llama-pool-engine-0-")} == {
        "llama-pool-engine-0-leader-0": "True",
        "llama-pool-engine-0-worker-0": "True",
    }  # the replacement gang serves
    assert sim.rows()[1]["operation"]["step"] == "Surge"
    assert [sim.gate_of(n) for n in sim.pods if n.startswith("llama-pool-engine-1-")] == ["True", "True"]
    assert sim.status["rolloutHold"]["reason"] == (
        f"per-Component unavailability budget 0 exhausted; Instance 2 on revision {v2} not serving; "
        "no source leaves rotation"
    )
    driver.run(lambda s: _rolled(s, v2))


STEADY_RECREATE = {"updateStrategy": {"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}}


def _rolled_out(lifecycle: dict[str, Any]) -> tuple[Sim, Driver, str]:
    """Three Instances at rest on the roll target: nothing is left to start."""
    sim, driver = _converged(3, lifecycle)
    sim.advance(5)  # a crash from here is dated after every row's readySince
    sim.tick()
    driver.one_pass()
    return sim, driver, sim.status["updateRevision"]


@pytest.mark.parametrize(
    ("lifecycle", "reason"),
    [
        (
            STEADY_RECREATE,
            "per-Component unavailability budget 1 exhausted; Instance 0 on revision {rev} not serving",
        ),
        (SURGE_1, "per-Component surge budget 1 exhausted; Instance 0 on revision {rev} not serving"),
        (
            {"updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}},
            "per-Component unavailability budget 0 exhausted; Instance 0 on revision {rev} not serving; "
            "no source leaves rotation",
        ),
    ],
)
def test_a_rolled_instance_that_crashed_is_the_hold_a_roll_with_nothing_to_start_stands_behind(
    lifecycle: dict[str, Any], reason: str
) -> None:
    """``standingHold`` (``workload/reconcile.go``): with nothing admitted, a rolled Instance whose
    pushed pod crashed after Ready (``CrashedNotServing``) and is out of rotation
    (``CrashedOutOfRotation``) is the hold the roll stands behind: the floor's under SurgeThenDrain
    past ``maxUnavailable``, else the arm's budget with no projection in its words. Back in rotation
    it is unproven for the window, not down: it still holds its slot (``RolledNotServing``), but a
    roll with nothing to start reports no hold."""
    sim, driver, rev = _rolled_out(lifecycle)
    assert "rolloutHold" not in sim.status
    _stop_serving(sim, 0)
    driver.one_pass()
    hold = sim.status["rolloutHold"]
    assert (hold["gate"], hold["target"]) == ("Budget", rev)
    assert hold["reason"] == reason.format(rev=rev)
    driver.run(lambda s: 0 in s.serving_instances())  # ready again after 5 s, inside the 60 s window
    driver.one_pass()
    assert "rolloutHold" not in sim.status


def test_a_rolled_instance_out_of_rotation_without_a_crash_holds_nothing_with_nothing_to_start() -> None:
    """``standingHold`` stands only while a rolled Instance crashed after promotion: one whose pod
    keeps running but fails its readiness probe is short of serving for another reason, and a roll
    with nothing to start reports no hold for it."""
    sim, driver, _ = _rolled_out(STEADY_RECREATE)
    sim.pods["llama-pool-engine-0-default-0"].behaviour = "never"
    sim.tick()
    for _ in range(4):
        driver.one_pass()
        sim.advance(0.5)
    assert 0 not in sim.serving_instances()
    assert "rolloutHold" not in sim.status


def test_a_paused_roll_reports_no_standing_hold() -> None:
    """``Plan``: ``selection.StandingHold = nil`` while paused; the pause is the roll's hold."""
    sim, driver, _ = _rolled_out(STEADY_RECREATE)
    sim.update_spec(paused=True)
    driver.one_pass()
    _stop_serving(sim, 0)
    driver.one_pass()
    assert 0 not in sim.serving_instances()
    assert "rolloutHold" not in sim.status


def test_an_uncapped_budget_has_no_standing_hold() -> None:
    """``standingHold``: the budget's hold only when the arm's budget leaves no room; an uncapped
    one always does."""
    sim, driver, _ = _rolled_out({"updateStrategy": {"type": "RecreatePod"}})
    _stop_serving(sim, 0)
    driver.one_pass()
    assert 0 not in sim.serving_instances()
    assert "rolloutHold" not in sim.status
