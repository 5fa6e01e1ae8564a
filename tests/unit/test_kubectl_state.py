"""What ``kubectl ome`` reads from a replica's status: the roll's state and line, Instances in either
encoding, revisions by number, name or hash; and ``wait``'s predicates on the same objects."""

from __future__ import annotations

from typing import Any

import pytest

from omereconcile.kubectl import state
from omereconcile.kubectl.client import CommandError, parse_duration, replica_target
from omereconcile.kubectl.wait import predicate

OLD, NEW = "pool-engine-aaaa1111", "pool-engine-bbbb2222"


def rev(name: str, number: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "revision": number}


def replica(
    rows: list[dict[str, Any]], *, spec: dict[str, Any] | None = None, **status: Any
) -> dict[str, Any]:
    return {
        "metadata": {"name": "pool", "generation": 2},
        "spec": {"replicas": 2, **(spec or {})},
        "status": {
            "observedGeneration": 2,
            "currentRevision": OLD,
            "updateRevision": NEW,
            "instanceStatuses": rows,
            **status,
        },
    }


def row(index: int, running: str, phase: str = "Ready", **extra: Any) -> dict[str, Any]:
    return {"index": index, "runningRevision": running, "targetRevision": NEW, "phase": phase, **extra}


SURGING = {"type": "Update", "step": "Surge", "targetRevision": NEW}


def test_a_roll_in_flight_names_the_instance_and_its_step() -> None:
    obj = replica(
        [row(0, NEW), row(1, OLD, "Updating", operation=SURGING)], readyReplicas=2, availableReplicas=2
    )
    p = state.rollout_progress(obj, [])
    assert (p.state, p.updated, p.desired, p.done, p.stopped) == ("Progressing", 1, 2, False, False)
    assert p.line() == (
        'Waiting for inferencereplica "pool" rollout to finish: 1 out of 2 new Instances have been updated, '
        "2 ready, 2 available; Instance 1 Updating (Update at step Surge)..."
    )


def test_complete_needs_every_instance_ready_on_the_target_and_current_promoted() -> None:
    rows = [row(0, NEW), row(1, NEW)]
    assert state.rollout_progress(replica(rows), []).state == "Progressing"  # current not promoted yet
    done = state.rollout_progress(replica(rows, currentRevision=NEW), [])
    assert (done.state, done.done) == ("Complete", True)
    assert done.line() == f'inferencereplica "pool" successfully rolled out (revision {NEW})'
    # An unobserved generation is not complete, whatever the rows say.
    stale = replica(rows, currentRevision=NEW, observedGeneration=1)
    assert state.rollout_progress(stale, []).state == "NotObserved"


def test_held_paused_failed_and_staged() -> None:
    rows = [row(0, NEW), row(1, OLD, "Failed")]
    held = replica(rows, rolloutHold={"gate": "Held", "reason": "update held after 3 failed attempt(s)"})
    assert state.rollout_progress(held, []).state == "Held"
    # A backoff or a budget hold passes by itself: still progressing, the hold shown.
    backoff = replica(rows, rolloutHold={"gate": "RetryBlock", "reason": "in backoff"})
    p = state.rollout_progress(backoff, [])
    assert p.state == "Progressing"
    assert p.line().endswith("hold RetryBlock: in backoff...")
    paused = replica(rows, spec={"paused": True, "pauseMode": "Freeze"})
    assert state.rollout_progress(paused, []).reason == "spec.paused, pauseMode Freeze"
    stalled = replica(
        rows, conditions=[{"type": "RolloutStalled", "status": "True", "reason": "X", "message": "m"}]
    )
    assert (state.rollout_progress(stalled, []).state, state.rollout_progress(stalled, []).stopped) == (
        "Failed",
        True,
    )
    blocked = replica(
        rows, conditions=[{"type": "Ready", "status": "False", "reason": "RuntimeNotFound", "message": "m"}]
    )
    assert state.rollout_progress(blocked, []).reason == "RuntimeNotFound: m"
    staged_cond = {"type": "Ready", "status": "True", "reason": "Staged", "message": "Staged at partition 1"}
    staged = state.rollout_progress(replica([*rows[:1], row(1, OLD)], conditions=[staged_cond]), [])
    assert (staged.state, staged.done) == ("Staged", True)


def test_the_roll_target_is_the_rollback_revision_only_when_the_replica_owns_it() -> None:
    obj = replica(
        [row(0, OLD), row(1, OLD)], spec={"pacing": {"rollbackToRevision": OLD}}, currentRevision=OLD
    )
    assert state.roll_target(obj, [rev(OLD, 1), rev(NEW, 2)]) == OLD
    assert state.rollout_progress(obj, [rev(OLD, 1), rev(NEW, 2)]).state == "Complete"
    assert state.roll_target(obj, [rev(NEW, 2)]) == NEW  # names nothing we own: the spec's revision


def test_revisions_by_number_name_or_hash() -> None:
    revisions = [rev(OLD, 1), rev(NEW, 2)]
    assert state.find_revision(revisions, "1") == revisions[0]
    assert state.find_revision(revisions, NEW) == revisions[1]
    assert state.find_revision(revisions, "bbbb2222") == revisions[1]
    assert state.find_revision(revisions, "3") is None


def test_columnar_rows_read_back_as_dense_rows() -> None:
    obj = {
        "status": {
            "instanceStatusEncoding": "ColumnarV2",
            "instanceStatusColumns": {
                "members": "0-2,5",
                "phases": [{"value": "Ready", "indexes": "0-1,5"}, {"value": "Updating", "indexes": "2"}],
                "runningRevisions": [{"value": OLD, "indexes": "0-2,5"}],
                "podCounts": [{"value": 1, "indexes": "0-2,5"}],
                "activeOrdinalOne": "2",
                "entries": [{"index": 2, "operation": SURGING}],
            },
        }
    }
    rows = state.instance_rows(obj)
    assert [r["index"] for r in rows] == [0, 1, 2, 5]
    assert rows[2] == {
        "index": 2,
        "incarnation": 0,
        "podCount": 1,
        "phase": "Updating",
        "runningRevision": OLD,
        "activeOrdinal": 1,
        "operation": SURGING,
    }


def test_wait_predicates() -> None:
    ready = replica([row(0, NEW), row(1, NEW)], currentRevision=NEW, readyReplicas=2, replicas=2)
    ready["status"]["conditions"] = [{"type": "Ready", "status": "True", "reason": "AllInstancesReady"}]
    assert predicate("condition=Ready")(ready) == (True, "Ready=True (AllInstancesReady)")
    assert predicate("condition=Ready=False")(ready)[0] is False
    assert predicate("condition=Progressing")(ready) == (False, "Progressing=absent")
    assert predicate("rollout=complete")(ready)[0] is True
    assert predicate("replicas=2")(ready) == (True, "2 Instances, 2 Ready")
    assert predicate("replicas=3")(ready)[0] is False
    for bad in ("condition", "rollout=stable", "replicas=-1", "condition=Ready=Maybe", "ready"):
        with pytest.raises(CommandError, match="invalid --for"):
            predicate(bad)


@pytest.mark.parametrize(
    ("text", "seconds"), [("30s", 30), ("5m", 300), ("1h30m", 5400), ("1.5s", 1.5), ("7", 7)]
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration("--timeout", text) == seconds


def test_targets_are_kubectls_type_slash_name() -> None:
    assert replica_target("ir/pool") == replica_target("inferencereplica/pool") == "pool"
    with pytest.raises(CommandError, match="name the replica as ir/pool"):
        replica_target("pool")
    with pytest.raises(CommandError, match='unknown resource type "deploy"'):
        replica_target("deploy/pool")
    with pytest.raises(CommandError, match="invalid --timeout"):
        parse_duration("--timeout", "soon")
