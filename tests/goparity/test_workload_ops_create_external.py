"""OME's ``workload/ops/create_external_test.go`` @ 58a57f25: the tests it adds to ``create_test.go``'s.

Go: ome-projects/ome ``pkg/controller/v1beta1/workload/ops/create_external_test.go`` @ 58a57f25
(191,096 characters, the listed one of its four stored versions, read whole). It holds every test of
``create_test.go``'s newest stored version (ported in ``test_workload_ops_create.py`` and counted
there) and five more: a demoted gang deferred to Restart, an unreachable admission webhook met by a
Create and by a scale-up, a 422 told apart from that outage, and a demoted pod-less row rebuilt. Ours:
one pure planner pass in the simulated world (``planner.plan``); the webhook outage is answered the
way the executor records it (``planner/admission_hold.py`` ``record_admission_wait``, the event
``InstanceAdmissionUnavailable`` once per episode).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from omereconcile import actions as A
from omereconcile.planner import plan
from omereconcile.planner.admission_hold import admission_unavailable_message, record_admission_wait
from omereconcile.settings import OperatorSettings
from omereconcile.simulate.cluster import Conflict, Sim
from omereconcile.simulate.driver import converged
from omerender import constants as c
from tests.goparity.test_workload_ops_create import (
    POD0,
    RECREATE,
    WORKER,
    _applied,
    _created,
    _refused,
    _rows,
    _sim,
    _world,
)

GO = "ome-projects/ome pkg/controller/v1beta1/workload/ops/create_external_test.go @ 58a57f25"
WEBHOOK = (
    'Internal error occurred: failed calling webhook "pod-mutator.example.com": failed to call webhook: '
    'Post "https://ome-webhook.example.svc:443/mutate-pods?timeout=10s": {detail}'
)


@dataclass
class WebhookDownSim(Sim):
    """Go's ``webhookUnreachablePodError``: while ``down``, every pod create is answered with a 500 whose
    message carries ``failed calling webhook``; the refusal is recorded on the row and announced as
    the executor does (``Executor._record_admission_wait``), and the pass ends."""

    down: bool = False
    detail: str = "dial tcp 10.0.0.1:443: connect: connection refused"

    def apply(self, act: A.Action, replica_rv: str) -> None:
        if isinstance(act, A.CreatePod) and self.down:
            index = int(act.pod["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
            message = WEBHOOK.format(detail=self.detail)
            status, announce = record_admission_wait(self.status, index, act.name, message, self.now)
            if status is not None:
                assert self.replica is not None
                self.replica["status"] = status
                self._stamp(self.replica)
                if announce:
                    text = admission_unavailable_message("engine", index, message)
                    self.events.append(A.RecordEvent("Normal", "InstanceAdmissionUnavailable", text))
            raise Conflict(message)
        super().apply(act, replica_rv)


def _admission_events(sim: Sim) -> list[A.RecordEvent]:
    return [e for e in sim.events if e.event_reason == "InstanceAdmissionUnavailable"]


def test_recreate_instance_defers_demoted_gang_to_restart() -> None:
    """Go: TestCreate_RecreateInstance_DefersDemotedGangToRestart: a gang demoted to Pending for losing
    members, still recording the revision it ran, is the restart pass's under RecreateInstance: Create
    neither fills its members one by one nor stamps Creating over it. (Go seeds the row with no
    ``podCount``; ours carries the count the reconciler published before the loss, two.)"""
    sim = _sim(workers=1)
    driver = _applied(sim, lifecycle={"restartPolicy": RECREATE})
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    row = sim.rows()[0]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][0] = {
        "index": 0,
        "incarnation": row["incarnation"],
        "phase": "Pending",
        "runningRevision": row["runningRevision"],
        "podCount": row["podCount"],
    }
    del sim.pods[WORKER]
    world = _world(sim)
    out = plan(world)
    assert WORKER not in _created(out), GO
    assert _rows(out, world)[0]["phase"] != "Creating", GO


def test_admission_unavailable_says_why_the_roll_waits() -> None:
    """Go: TestCreate_AdmissionUnavailable_SaysWhyTheRollWaits: the create refused because the API
    server cannot reach an admission webhook is a wait: the row keeps Creating and its Create (the
    reason untouched), carries ``waiting: AdmissionUnavailable`` and ``lastFailure`` with the API
    server's words naming the webhook and the refused pod; no RetryBlock, no pod; one
    InstanceAdmissionUnavailable event. Two more refused passes, with another transport error, write
    nothing and announce nothing; once the webhook is back the create lands and the wait is
    released."""
    sim = WebhookDownSim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)), down=True)
    driver = _applied(sim)
    driver.one_pass()
    row = sim.rows()[0]
    op = row.get("operation") or {}
    assert (row["phase"], op.get("type"), op.get("waiting"), op.get("reason")) == (
        "Creating",
        "Create",
        "AdmissionUnavailable",
        None,
    ), GO
    lf = row.get("lastFailure") or {}
    assert (lf.get("reason"), lf.get("podName")) == ("AdmissionUnavailable", POD0), GO
    assert "failed calling webhook" in lf.get("message", ""), GO
    assert "pod-mutator.example.com" in lf.get("message", ""), GO
    assert not sim.status.get("retryBlocks"), GO
    assert POD0 not in sim.pods, GO
    assert len(_admission_events(sim)) == 1, GO
    sim.detail = "context deadline exceeded"
    sim.advance(1)
    driver.one_pass()  # ours: the pass that reads the record (the clock stays parked)
    assert sim.replica is not None
    version = sim.replica["metadata"]["resourceVersion"]
    for _ in range(2):
        sim.advance(5)
        driver.one_pass()
    assert len(_admission_events(sim)) == 1, GO
    assert sim.replica["metadata"]["resourceVersion"] == version, GO
    sim.down = False
    for _ in range(3):
        sim.advance(1)
        driver.one_pass()
    assert POD0 in sim.pods, GO
    assert (sim.rows()[0].get("operation") or {}).get("waiting") is None, GO


def test_create_fresh_indices_admission_unavailable_on_scale_up_says_why() -> None:
    """Go: TestCreateFreshIndices_AdmissionUnavailable_OnScaleUpSaysWhy: a scale-up meets the outage:
    the added index keeps its Create open (not Failed) with the wait and the API server's words; the
    Ready index is left exactly as it was; only the serving pod stands; one event."""
    sim = WebhookDownSim(settings=OperatorSettings(instance_ready_timeout=timedelta(minutes=30)))
    driver = _applied(sim)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 1)
    before = dict(sim.rows()[0])
    sim.down = True
    sim.update_spec(replicas=2)
    driver.one_pass()
    rows = {r["index"]: r for r in sim.rows()}
    assert (rows[0]["phase"], rows[0]["incarnation"], rows[0].get("operation")) == (
        before["phase"],
        before["incarnation"],
        None,
    ), GO
    added = rows[1]
    assert (added.get("operation") or {}).get("type") == "Create", GO
    assert added["phase"] != "Failed", GO
    assert (added.get("operation") or {}).get("waiting") == "AdmissionUnavailable", GO
    assert "failed calling webhook" in (added.get("lastFailure") or {}).get("message", ""), GO
    assert sorted(sim.pods) == [POD0], GO
    assert len(_admission_events(sim)) == 1, GO


def test_invalid_pod_spec_is_not_an_admission_outage() -> None:
    """Go: TestCreate_InvalidPodSpec_IsNotAnAdmissionOutage: a 422 is admission answering, not
    admission missing: the Instance is disposed Failed under InvalidPodSpec, no wait token, no
    InstanceAdmissionUnavailable event, one InstanceRejected."""
    sim, driver = _refused("invalid")
    for _ in range(3):
        sim.advance(1)
        driver.one_pass()
    row = sim.rows()[0]
    assert (row["phase"], (row.get("lastFailure") or {}).get("reason")) == ("Failed", "InvalidPodSpec"), GO
    assert _admission_events(sim) == [], GO
    assert (row.get("operation") or {}).get("waiting") is None, GO
    assert len([e for e in sim.events if e.event_reason == "InstanceRejected"]) == 1, GO


def test_create_fresh_indices_rebuilds_a_demoted_podless_row() -> None:
    """Go: TestCreateFreshIndices_RebuildsADemotedPodlessRow: a row demoted to Pending for losing its
    pod (no operation, its running revision kept, incarnation 2) beside a Ready peer is rebuilt: a
    Create at its own incarnation keeping the revision it records, its pod created; the peer is left
    as it was."""
    sim = _sim()
    driver = _applied(sim, 2)
    driver.run(lambda s: converged(s) and s.status.get("readyReplicas") == 2)
    peer = dict(sim.rows()[0])
    rev = sim.rows()[1]["runningRevision"]
    assert sim.replica is not None
    sim.replica["status"]["instanceStatuses"][1] = {
        "index": 1,
        "incarnation": 2,
        "phase": "Pending",
        "runningRevision": rev,
    }
    del sim.pods["llama-pool-engine-1-default-0"]
    world = _world(sim)
    out = plan(world)
    rows = _rows(out, world)
    rebuilt = rows[1]
    assert (rebuilt["phase"], (rebuilt.get("operation") or {}).get("type"), rebuilt["incarnation"]) == (
        "Creating",
        "Create",
        2,
    ), GO
    assert rebuilt.get("runningRevision") == rev, GO
    assert (rows[0]["phase"], rows[0]["incarnation"], rows[0].get("operation")) == (
        peer["phase"],
        peer["incarnation"],
        None,
    ), GO
    assert _created(out) == ["llama-pool-engine-1-default-0"], GO
