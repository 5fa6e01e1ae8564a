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

from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import pytest

from omereconcile.settings import OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import Sim, SimPod, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, RenderOutcome, format_time
from omerender import constants as c
from tests.goparity.test_workload_reconcile_part2 import (
    GO,
    _hold_for,
    _pods_of,
    _row,
    _uid,
)

STEP = 5.0  # seconds of sim time between Go's steps (its ``recoveryStepFloor`` role)


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
    """One of Go's ``step``s: a pass, then the clock moves on (kubelet and endpoints catch up)."""
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
