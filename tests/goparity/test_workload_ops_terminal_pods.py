"""OME's ``workload/ops/terminal_pods_test.go``: a pod that ended (Failed or Succeeded) is absent.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/terminal_pods_test.go`` @ ae683e3f (7,338
characters, the one stored version, read whole), over ``ops/restart.go``
``DetectRestartTriggerWithPods``, ``ops/create.go`` ``Create`` and ``ops/restart.go`` ``Restart``. A
terminal pod still holds its stable name but never runs again: every presence and liveness decision
treats it as absent. Go calls the detector on a status row and a pod list; ours splits it into
``planner/gang.py`` ``lost_gang_member`` (below ``Ready``) and ``gang_broken`` (the ``Ready`` branch),
asked here on the simulated world's pods with their phases replaced. Go's ``Create`` and ``Restart``
run against a fake client; ours is one pure planner pass (``planner.plan``) over the simulated world's
observation with the pod made terminal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from omereconcile.actions import CreatePod, DeletePod, RecordEvent, WriteStatus
from omereconcile.planner import plan
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.planner.gang import gang_broken, gang_names, lost_gang_member
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, PodCondition, PodView, World

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_pods_test.go @ ae683e3f"
RECREATE = {"restartPolicy": "RecreateInstanceOnPodRestart"}


def _ready(workers: int, **spec: Any) -> Sim:
    sim = Sim(workers=workers)
    sim.apply_replica(base_replica(replicas=1, **spec))
    Driver(sim).run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    return sim


def _ctx(world: World) -> Ctx:
    desired = world.render
    assert isinstance(desired, DesiredRevision)
    return build_context(world, desired, desired.name, None)


def _gang_pods(ctx: Ctx, phases: tuple[str, ...]) -> list[PodView]:
    """Go's ``gangPodsWithPhases``: the gang's members in order, each at the given phase ("" keeps
    the live pod as the simulated kubelet reports it)."""
    pods = {p.name: p for p in ctx.world.pods}
    names = gang_names(ctx, 0)
    assert len(names) == len(phases)
    return [replace(pods[n], phase=ph) if ph else pods[n] for n, ph in zip(names, phases, strict=True)]


def _create_owned(ctx: Ctx) -> R.Row:
    """Go's ``createOwned``: Creating, podCount 2 (committed), a Create at ``CreatePods``."""
    op = R.Operation("create-0", R.OP_CREATE, R.STEP_CREATE_PODS, ctx.target, ctx.now)
    return R.Row(
        index=0,
        phase=R.CREATING,
        pod_count=2,
        running_revision=ctx.target,
        target_revision=ctx.target,
        operation=op,
    )


@pytest.mark.parametrize(
    ("phases", "want"),
    [
        pytest.param(
            ("Failed", "Running"),
            "gang member lost: 1 of 2 pods present",
            id="forming gang with a failed member is member loss",
        ),
        pytest.param(
            ("Succeeded", "Pending"),
            "gang member lost",
            id="forming gang with a succeeded member is member loss",
        ),
        pytest.param(
            ("Failed", "Failed"), None, id="forming gang with every member terminal stays with create"
        ),
        pytest.param(("Pending", "Running"), None, id="forming gang with live members is silent"),
    ],
)
def test_detect_restart_trigger_forming_gang(phases: tuple[str, ...], want: str | None) -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_pods_test.go @ ae683e3f,
    TestDetectRestartTrigger_TerminalPodsAreAbsent (the four "forming gang" entries): below Ready only
    member loss fires, and a Failed or Succeeded member is a lost member; every member terminal is
    total loss, which Create's fresh start owns (no restart); live members are silent."""
    ctx = _ctx(_ready(workers=1).observe())
    assert ctx.restart_policy == "RecreateInstanceOnPodRestart"
    reason = lost_gang_member(ctx, _create_owned(ctx), _gang_pods(ctx, phases))
    if want is None:
        assert reason is None, GO
    else:
        assert reason is not None, GO
        assert want in reason, (GO, reason)


def test_detect_restart_trigger_ready_gang_with_a_failed_member() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_pods_test.go @ ae683e3f,
    TestDetectRestartTrigger_TerminalPodsAreAbsent "ready gang with a failed member names the
    failure": the detector fires naming the Failed member; one planner pass restarts the Instance
    (``RestartTriggered``, incarnation 2) with those words."""
    sim = _ready(workers=1)
    ctx = _ctx(sim.observe())
    rows = [R.Row.from_dict(r) for r in sim.rows()]
    pods = _gang_pods(ctx, ("Running", "Failed"))
    reason = gang_broken(ctx, rows[0], pods)
    assert reason is not None, GO
    assert "Failed" in reason, (GO, reason)
    world = replace(sim.observe(), pods=tuple(pods))
    events = [a for a in plan(world).actions if isinstance(a, RecordEvent)]
    assert [e.event_reason for e in events] == ["RestartTriggered"], GO
    assert f"pod {pods[1].name} Failed" in events[0].message


def test_detect_restart_trigger_ready_single_pod_with_a_succeeded_pod() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_pods_test.go @ ae683e3f,
    TestDetectRestartTrigger_TerminalPodsAreAbsent "ready instance with a succeeded pod is below
    desired": a Succeeded pod carries no failure detail, and the count check catches it (the pod is
    absent: 0 of 1), and the Restart starts in this pass. Was a strict xfail (ours demoted the row to
    ``Pending`` on this pass and started the Restart on the next); fixed in
    ``restart.demoted_ready_restarts``, which reads the Ready row as Go's trigger does."""
    sim = _ready(workers=0, lifecycle=RECREATE)
    world = sim.observe()
    assert len(world.pods) == 1
    world = replace(world, pods=(replace(world.pods[0], phase="Succeeded"),))
    events = [a for a in plan(world).actions if isinstance(a, RecordEvent)]
    assert [e.event_reason for e in events] == ["RestartTriggered"], GO
    assert "pod count 0 below desired 1" in events[0].message


def _statuses(actions: tuple[object, ...]) -> list[dict[str, Any]]:
    written = [a for a in actions if isinstance(a, WriteStatus)]
    assert written, "the pass writes the status"
    rows: list[dict[str, Any]] = list(written[-1].status.get("instanceStatuses", []))
    return rows


def test_create_terminal_pod_is_missing() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_pods_test.go @ ae683e3f,
    TestCreate_TerminalPodIsMissing: a pod that died at admission (Failed,
    ``UnexpectedAdmissionError``) at Instance 0's name, with no Instance recorded yet, is a missing
    target: the pass commits Instance 0 as Creating under a Create, creates no live pod while the dead
    one holds the name (ours deletes the dead pod, ``TerminalPodRecycled``), and asks to be run
    again (Go's ``RequeueAfter``; ours is woken by the pod's deletion on the watch, so no requeue is
    asserted). Failed before: ours adopted the dead pod as a Ready Instance, then demoted it to
    Pending ("demoted Ready→Pending") and counted the dead pod in ``podCount``."""
    sim = _ready(workers=0)
    world = sim.observe()
    dead = replace(world.pods[0], phase="Failed", status_reason="UnexpectedAdmissionError", conditions=())
    status = {k: v for k, v in world.replica.status.items() if k != "instanceStatuses"}
    world = replace(world, pods=(dead,), replica=replace(world.replica, status=status))
    out = plan(world)
    rows = _statuses(out.actions)
    assert [(r["index"], r["phase"]) for r in rows] == [(0, "Creating")], GO
    assert (rows[0].get("operation") or {}).get("type") == "Create"
    assert not [a for a in out.actions if isinstance(a, CreatePod)], "no live pod beside the dead one"
    assert [a.name for a in out.actions if isinstance(a, DeletePod)] == [dead.name]


def _restart_creating() -> Sim:
    """A Ready gang whose worker a user deleted: the Restart (incarnation 2) has created both new
    pods and waits at ``CreatePods`` for them to come up."""
    sim = _ready(workers=1)
    sim.advance(30)
    sim.user_delete("llama-pool-engine-0-worker-0")
    driver = Driver(sim)

    def at_create_pods(s: Sim) -> bool:
        row = s.rows()[0]
        return (
            row["phase"] == "Restarting"
            and (row.get("operation") or {}).get("step") == "CreatePods"
            and sorted(p.incarnation or 0 for p in s.observe().pods) == [2, 2]
        )

    for _ in range(120):
        if at_create_pods(sim):
            return sim
        driver.one_pass()
        sim.advance(1)
    raise AssertionError("the restart never reached CreatePods with both new pods")


def test_restart_terminal_new_incarnation_pod_is_not_promoted() -> None:
    """Go: ome-projects/ome pkg/controller/v1beta1/workload/ops/terminal_pods_test.go @ ae683e3f,
    TestRestart_TerminalNewIncarnationPodIsNotPromoted: a Restart whose new-incarnation pod died,
    though it still carries a stale ContainersReady, never promotes the Instance to Ready: it stays
    Restarting with its operation, and no live pod is created while the dead one holds the name. Ours
    on a gang (the multi-pod default runs Restart): both new pods Failed with ContainersReady True;
    the pass recycles the dead pods (``TerminalPodRecycled``) instead of promoting."""
    sim = _restart_creating()
    world = sim.observe()
    stale = PodCondition("ContainersReady", "True")
    pods = tuple(
        replace(p, phase="Failed", conditions=(*(c for c in p.conditions if c.type != stale.type), stale))
        for p in world.pods
    )
    out = plan(replace(world, pods=pods))
    rows = _statuses(out.actions)
    assert [(r["phase"], r["incarnation"]) for r in rows] == [("Restarting", 2)], GO
    assert (rows[0].get("operation") or {}).get("type") == "Restart"
    assert not [a for a in out.actions if isinstance(a, CreatePod)]
    assert "RestartCompleted" not in [a.event_reason for a in out.actions if isinstance(a, RecordEvent)]
