"""OME's ``workload/ops/update_recreate_test.go``: when a RecreatePod roll promotes its Instance.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/update_recreate_test.go`` @ 4dfb96b1
(14,222 characters, the stored version, read whole), over ``ops/update_recreate.go``
``recreateUpdate``: phase A drains and deletes the old incarnation, phase B creates the bumped one,
phase C promotes once the new pod is serving, PodReady and Available (``minReadySeconds``). Go seeds a
mid-recreate row against a fake client; ours rolls a single-pod replica under ``RecreatePod`` in the
simulated world, pass by pass half a second apart, and watches the row and the pods.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest

from omereconcile.actions import WriteStatus
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import World, parse_time
from tests.goparity.reconciler_world import config_change_cases

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1"
POD = "llama-pool-engine-0-default-0"


def _rolling(**spec: Any) -> tuple[Sim, Driver]:
    sim = Sim()
    sim.apply_replica(base_replica(replicas=1, lifecycle={"updateStrategy": {"type": "RecreatePod"}}, **spec))
    driver = Driver(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    sim.image = "vllm:v2"
    return sim, driver


def _incarnation(sim: Sim) -> int | None:
    pod = sim.pods.get(POD)
    return int(pod.obj["metadata"]["labels"]["ome.io/instance-incarnation"]) if pod is not None else None


def _pod_ready_since(sim: Sim) -> datetime | None:
    pod = sim.pods.get(POD)
    for cond in pod.obj["status"].get("conditions", []) if pod is not None else []:
        if cond["type"] == "Ready" and cond["status"] == "True":
            return parse_time(cond.get("lastTransitionTime"))
    return None


def _promoted(sim: Sim) -> bool:
    row = sim.rows()[0]
    return row["phase"] == "Ready" and row.get("incarnation") == 2


def _walk(sim: Sim, driver: Driver) -> list[tuple[datetime, bool, int | None, bool, datetime | None]]:
    """(time, promoted, pod incarnation, gate set, pod Ready since) after each pass until promotion."""
    seen = []
    for _ in range(400):
        driver.one_pass()
        seen.append(
            (sim.now, _promoted(sim), _incarnation(sim), sim.gate_of(POD) == "True", _pod_ready_since(sim))
        )
        if seen[-1][1]:
            return seen
        sim.advance(0.5)
    raise AssertionError("the recreate never promoted")


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("unready", id="serving gate set but PodReady not observed"),
        pytest.param("ready", id="PodReady observed"),
    ],
)
def test_waits_for_pod_ready_after_enabling_serving(entry: str) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateUpdate_WaitsForPodReadyAfterEnablingServing (each entry): with the old pod gone and
    the recreated pod ContainersReady with its serving gate set, promotion waits for the kubelet to
    fold the gate into PodReady (promotion releases the unavailability slot); once PodReady is
    observed the Instance is promoted Ready."""
    sim, driver = _rolling()
    seen = _walk(sim, driver)
    window = [s for s in seen if s[2] == 2 and s[3] and s[4] is None]
    if entry == "unready":
        assert window, "the run never showed the gated-but-not-PodReady window"
        assert not any(promoted for _, promoted, *_ in window), GO
    else:
        last = seen[-1]
        assert last[1], GO
        assert last[4] is not None, (GO, "promoted without PodReady")


def test_promotion_waits_for_min_ready_seconds() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateUpdate_PromotionWaitsForMinReadySeconds: the recreated pod serving and PodReady is
    not promoted inside ``minReadySeconds`` (20 s); it is once the pod has been Ready that long."""
    sim, driver = _rolling(minReadySeconds=20)
    seen = _walk(sim, driver)
    ready_since = seen[-1][4]
    assert ready_since is not None
    inside = [s for s in seen if s[4] is not None and (s[0] - s[4]).total_seconds() < 20]
    assert inside, "no pass ran inside the window"
    assert not any(promoted for _, promoted, *_ in inside), GO
    assert (seen[-1][0] - ready_since).total_seconds() >= 20, GO


def test_ready_old_incarnation_pod_is_not_the_promote_signal() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateDrain_ReadyOldIncarnationPodIsNotThePromoteSignal: the old incarnation's pod, PodReady
    and serving when the roll starts, is what phase A drains and deletes, never evidence the roll is
    done: no pass promotes while it stands, and it is deleted."""
    sim, driver = _rolling()
    assert _incarnation(sim) == 1
    assert _pod_ready_since(sim) is not None
    seen = _walk(sim, driver)
    assert not any(promoted for _, promoted, inc, *_ in seen if inc == 1), GO
    assert seen[-1][2] == 2, GO


# -- Go's recreateDrainInFlightFixture: a recreate stamped on the row (Updating, Update/Drain, the bumped
# incarnation), the observed pod deciding which phase the pass lands in. Ours stops a RecreatePod roll
# in the simulated world at that state (checked after the kubelet's tick, before the next pass), then
# runs one pure planner pass over the observed world, as Go runs ``recreateUpdate`` once.


def _rolled_to(until: Callable[[Sim], bool], **sim: Any) -> Sim:
    s = Sim(**sim)
    lifecycle = {"updateStrategy": {"type": "RecreatePod"}, "instanceReadyTimeout": "10m"}
    s.apply_replica(base_replica(replicas=1, lifecycle=lifecycle))
    driver = Driver(s)
    driver.run(lambda x: converged(x) and x.status.get("readyReplicas") == 1)
    s.image = "vllm:v2"
    for _ in range(400):
        driver.one_pass()
        s.advance(0.5)
        if until(s):
            return s
    raise AssertionError("the recreate never reached the fixture's state")


def _old_terminating(s: Sim) -> bool:
    pod = s.pods.get(POD)
    return _incarnation(s) == 1 and pod is not None and bool(pod.obj["metadata"].get("deletionTimestamp"))


def _rebuilt_runtime_ready(s: Sim) -> bool:
    """Phase C: the incarnation-2 pod ContainersReady, its serving gate not yet set."""
    pod = s.pods.get(POD)
    if pod is None or _incarnation(s) != 2 or s.gate_of(POD) == "True":
        return False
    conds = pod.obj["status"].get("conditions", [])
    return any(c["type"] == "ContainersReady" and c["status"] == "True" for c in conds)


def _outcome(world: World) -> tuple[bool, str, str | None, bool, list[dict[str, Any]]]:
    """(promoted, phase, operation step, lastFailure recorded, retryBlocks) after one pass."""
    out = plan(world)
    written = [a for a in out.actions if isinstance(a, WriteStatus)]
    status = dict(written[-1].status) if written else dict(world.replica.status)
    row = next(r for r in status["instanceStatuses"] if r["index"] == 0)
    promoted = row["phase"] == "Ready" and row.get("operation") is None
    step = (row.get("operation") or {}).get("step")
    failed = row.get("lastFailure") is not None
    return promoted, row["phase"], step, failed, list(status.get("retryBlocks") or [])


def _node_gone(s: Sim) -> None:
    s.pods[POD].obj["spec"]["nodeName"] = "node-that-no-longer-exists"


def _phase(phase: str) -> Callable[[Sim], None]:
    def edit(s: Sim) -> None:
        s.pods[POD].obj["status"]["phase"] = phase

    return edit


@pytest.mark.parametrize(
    ("until", "edit"),
    [
        pytest.param(_old_terminating, None, id="an old-incarnation pod wedged Terminating"),
        pytest.param(_rebuilt_runtime_ready, _node_gone, id="a rebuilt pod whose node is gone"),
        pytest.param(_rebuilt_runtime_ready, _phase("Failed"), id="a rebuilt pod in a terminal Failed phase"),
        pytest.param(
            _rebuilt_runtime_ready, _phase("Succeeded"), id="a rebuilt pod in a terminal Succeeded phase"
        ),
    ],
)
def test_pod_observations_that_decide_nothing(
    until: Callable[[Sim], bool], edit: Callable[[Sim], None] | None
) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateDrain_PodObservationsThatDecideNothing (each entry): a pod wedged Terminating, one whose
    node is gone, one in a terminal phase all fail the promote bar the same way: the pass promotes
    nothing, the row stays ``Updating`` at step ``Drain`` with no ``lastFailure`` and no RetryBlock
    written; only the operation deadline ends the roll. (The old pod is wedged by a deletion grace
    longer than the run; the rebuilt pod's cases let it go, or phase C is never reached.) The step
    was a strict xfail: ours wrote ``CreatePods`` once the old incarnation was gone (fixed, see
    ``planner/instances.py`` ``_step_recreate``); before that the rebuilt cases also wedged the old pod,
    so they never reached their state. The two terminal-phase entries were strict xfails too: ours
    recycled the dead rebuilt pod at once, with its end on ``lastFailure`` (fixed by Go's rule, goR2:
    ``planner/instances.py`` ``_admission_rejected``). No pod is deleted or created by the pass."""
    wedged = until is _old_terminating
    s = _rolled_to(until, **({"delete_grace": 10**6} if wedged else {}))
    if edit is not None:
        edit(s)
    world = s.observe()
    promoted, phase, step, failed, blocks = _outcome(world)
    assert not promoted, GO
    assert (phase, step) == ("Updating", "Drain"), GO
    assert not failed, GO
    assert blocks == [], GO
    if edit is not None:
        writes = [type(a).__name__ for a in plan(world).actions]
        assert "DeletePod" not in writes, (GO, writes)
        assert "CreatePod" not in writes, (GO, writes)


def test_admission_rejected_rebuilt_pod_is_recycled() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate.go @ 58a57f25
    ``recreateUpdate`` (``recycleAdmissionRejectedTargets``, ``ops/terminal_recycle.go``; the rule
    beside ``TestRecreateDrain_PodObservationsThatDecideNothing``'s terminal entries, not a Go test
    of this file, so not counted): a rebuilt pod the kubelet refused to admit (``Failed``,
    ``OutOfcpu``) never ran and never will, so the pass frees its name (deleted,
    ``TerminalPodRecycled``) rather than waiting to the operation deadline, and stays a recreate."""
    s = _rolled_to(_rebuilt_runtime_ready)
    pod = s.pods[POD].obj
    pod["status"]["phase"] = "Failed"
    pod["status"]["reason"] = "OutOfcpu"
    world = s.observe()
    out = plan(world)
    deletes = [a for a in out.actions if type(a).__name__ == "DeletePod"]
    assert [getattr(a, "name", None) for a in deletes] == [POD], out.actions
    assert any(getattr(a, "event_reason", None) == "TerminalPodRecycled" for a in out.actions), out.actions
    promoted, phase, step, _, _ = _outcome(world)
    assert (promoted, phase, step) == (False, "Updating", "Drain")


@pytest.mark.parametrize("tweak", config_change_cases(backoff_block=True))
def test_operator_config_changes_do_not_change_what_it_decides(tweak: Callable[[World], World]) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateDrain_OperatorConfigChangesDoNotChangeWhatItDecides, over ``configChangeCases()``
    (``ops/update_inplace_test.go``): a phase C pass (the rebuilt pod ContainersReady, not yet serving:
    the serving flip to do, then a wait) decides the same row, the same pod writes and the same wake-up
    under each operator edit as unedited, and writes no RetryBlock. Of Go's seven knobs, ours has these
    three; the scale-down and requeue cadences, the gang schedule clamp and the migration audit caps
    are Go settings ours does not have (``docs/goparity.md``)."""
    s = _rolled_to(_rebuilt_runtime_ready)
    world = s.observe()

    def decided(w: World) -> tuple[Any, ...]:
        out = plan(w)
        written = [a for a in out.actions if isinstance(a, WriteStatus)]
        status = dict(written[-1].status) if written else dict(w.replica.status)
        pods = [
            a for a in out.actions if not isinstance(a, WriteStatus) and type(a).__name__ != "RecordEvent"
        ]
        return status["instanceStatuses"], pods, out.requeue_after, status.get("retryBlocks") or []

    rows, pods, wake, blocks = decided(world)
    assert any(type(a).__name__ == "SetServingGate" for a in pods)  # the pass has real work
    edited = tweak(world)
    got_rows, got_pods, got_wake, got_blocks = decided(edited)
    assert (got_rows, got_pods, got_wake) == (rows, pods, wake), GO
    # No block written: none appears that the edit did not seed. (The seeded stale blocks name no
    # revision in play and go at the end of our pass, as Go's escalation
    # ``PruneSupersededRetryBlocks`` removes them outside the update op this test drives.)
    seeded = {b["targetRevision"] for b in edited.replica.status.get("retryBlocks") or []}
    assert blocks == [], GO
    assert {b["targetRevision"] for b in got_blocks} <= seeded, GO


def test_terminal_rebuilt_pod_is_waited_out_to_the_deadline() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/update_recreate_test.go @ 4dfb96b1,
    TestRecreateDrain_PodObservationsThatDecideNothing, its comment ("the roll waits, and only its
    operation deadline ends it") carried past the one pass: a rebuilt pod that ended (``Succeeded``)
    is neither deleted nor recycled while the 10-minute deadline runs, and the deadline fails the
    Instance then (``DeadlineExceeded`` on ``lastFailure``). Part of the terminal entries' count."""
    s = _rolled_to(_rebuilt_runtime_ready)
    pod = s.pods[POD]
    pod.obj["status"]["phase"] = "Succeeded"
    pod.behaviour = "ended"
    started = s.now
    driver = Driver(s)
    for _ in range(80):
        driver.one_pass()
        row = s.rows()[0]
        if row["phase"] == "Failed":
            break
        assert POD in s.pods, GO
        assert not s.pods[POD].obj["metadata"].get("deletionTimestamp"), GO
        s.advance(10)
    else:
        raise AssertionError("the deadline never ended the roll")
    assert (s.now - started).total_seconds() >= 9 * 60, GO
    assert "Deadline" in str(row.get("lastFailure", {}).get("reason")), (GO, row)
    assert not [e for e in s.events if e.event_reason == "TerminalPodRecycled"], GO
