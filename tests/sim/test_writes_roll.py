"""A roll writes the status journal once per step: the counts ride along or wait a bounded while, and
every destructive step is still journaled before it happens."""

from __future__ import annotations

from datetime import datetime

from omereconcile.actions import WriteStatus
from omereconcile.coalesce import DEFAULT_WINDOW
from omereconcile.planner import plan
from omereconcile.planner.journal import counters_only, journal_view
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, InvariantError, applied, converged

N = 4


def _pool(**kw: object) -> tuple[Sim, Driver]:
    sim = Sim()
    lc = {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}
    sim.apply_replica(base_replica(replicas=N, lifecycle=lc))
    d = Driver(sim, **kw)  # type: ignore[arg-type]
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == N)
    return sim, d


def _roll(sim: Sim, d: Driver) -> tuple[int, float]:
    """Roll to a new image; the number of actions before it and the sim seconds it took."""
    start, t0 = len(d.log), sim.now
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    return start, (sim.now - t0).total_seconds()


def _status_writes(d: Driver, start: int) -> list[WriteStatus]:
    return [a for _, a in d.log[start:] if isinstance(a, WriteStatus)]


def test_a_surge_roll_writes_the_status_once_per_operation_start_step_and_end() -> None:
    sim, d = _pool()
    start, took = _roll(sim, d)
    writes = _status_writes(d, start)
    # Per Instance: the operation starts (Surge), changes step (SurgeDrain), ends. The gate flips,
    # the create and the delete in between carry no status write of their own.
    assert len(writes) <= 3 * N
    assert all(not w.counters_only for w in writes)
    creates = [a for _, a in applied(d, "CreatePod")][-N:]
    assert len(creates) == N
    assert sim.status["readyReplicas"] == N
    assert sim.status["updatedReadyReplicas"] == N

    plain_sim, plain = _pool(coalesce=False)
    plain_start, plain_took = _roll(plain_sim, plain)
    assert len(_status_writes(plain, plain_start)) > len(writes)  # every count change was a write
    assert took <= plain_took  # holding counts back never slows the roll down


def test_counts_are_never_behind_for_longer_than_the_window() -> None:
    behind_since: list[datetime | None] = [None]
    worst = [0.0]

    def counts_fresh(s: Sim) -> None:
        if s.replica is None:
            return
        p = plan(s.observe())
        write = next((a for a in p.actions if isinstance(a, WriteStatus)), None)
        if write is None or not write.counters_only:
            behind_since[0] = None
            return
        since = behind_since[0] = behind_since[0] or s.now
        worst[0] = max(worst[0], (s.now - since).total_seconds())
        if worst[0] > DEFAULT_WINDOW + 0.5:  # the window plus one pass of the driver
            raise InvariantError(f"counts behind for {worst[0]}s at {s.now}")

    sim, d = _pool()
    d.extra_checks.append(counts_fresh)
    _roll(sim, d)
    d.run(lambda s: plan(s.observe()).actions == ())  # at rest the counts are published
    assert worst[0] > 0  # counts were held back at some point, and never for too long


def test_a_drained_source_is_deleted_under_its_journaled_drain_step_without_a_status_write() -> None:
    sim, d = _pool()
    journal_at_delete: list[dict[str, object]] = []
    original = sim.apply

    def apply(act: object, rv: str) -> None:
        if type(act).__name__ == "DeletePod":
            journal_at_delete.append(journal_view(sim.status))
        original(act, rv)  # type: ignore[arg-type]

    sim.apply = apply  # type: ignore[method-assign]
    _start, _ = _roll(sim, d)
    assert len(journal_at_delete) == N
    for journal in journal_at_delete:
        steps = [
            (r.get("operation") or {}).get("step")
            for r in journal["instanceStatuses"]  # type: ignore[attr-defined]
        ]
        assert "SurgeDrain" in steps  # the API held the drain step when the source was deleted
    deleting = [p for p in d.plans if any(type(a).__name__ == "DeletePod" for a in p.actions)]
    assert any(not any(isinstance(a, WriteStatus) for a in p.actions) for p in deleting)


def test_a_count_only_difference_is_recognised_from_a_settled_replica() -> None:
    sim, _ = _pool()
    settled = sim.status
    stale = {**settled, "readyReplicas": 0, "servingReplicas": 0}
    assert counters_only(stale, settled)
    sim.replica["status"] = stale  # type: ignore[index]
    p = plan(sim.observe())
    (write,) = [a for a in p.actions if isinstance(a, WriteStatus)]
    assert write.counters_only
    assert write.status["readyReplicas"] == N
