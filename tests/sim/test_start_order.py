"""Go's start order within one pass (``workload/reconcile.go`` ``executeUpdatePass``): the Instances are
walked in index order, and the update budget is anchored on the operations in flight when the pass began,
so an operation that ends in a pass frees its slot for the next pass, not for a start in the same one."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from omereconcile.actions import CreatePod, DeletePod, RecordEvent, SetServingGate, WriteStatus
from omereconcile.simulate.cluster import Sim, base_replica
from omereconcile.simulate.driver import Driver, converged

_INDEX = re.compile(r"-engine-(\d+)-default-\d+$")
_STARTED = re.compile(r"instance=(\d+) ")


def _rolled(replicas: int, strategy: dict[str, Any]) -> tuple[Sim, Driver, int]:
    """A converged pool rolled to a new image; also the number of plans made before the roll."""
    sim = Sim()
    sim.apply_replica(base_replica(replicas=replicas, lifecycle={"updateStrategy": strategy}))
    d = Driver(sim)
    d.run(lambda s: converged(s) and s.status["readyReplicas"] == replicas)
    before = len(d.plans)
    sim.image = "vllm:v2"
    v2 = sim.render().name  # type: ignore[union-attr]
    d.run(lambda s: converged(s) and s.status["currentRevision"] == v2)
    return sim, d, before


def _ops(status: dict[str, Any]) -> dict[int, str | None]:
    return {r["index"]: (r.get("operation") or {}).get("type") for r in status.get("instanceStatuses") or []}


STRATEGIES = [
    pytest.param({"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 1}}, id="surge"),
    pytest.param({"type": "RecreatePod", "rollingUpdate": {"maxUnavailable": 1}}, id="recreate"),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_an_operation_ending_in_a_pass_frees_its_budget_for_the_next_pass(strategy: dict[str, Any]) -> None:
    sim, d, before = _rolled(3, strategy)
    journal = [_ops(w.status) for p in d.plans[before:] for w in p.actions if isinstance(w, WriteStatus)]
    ends = starts = 0
    for prev, cur in itertools.pairwise(journal):
        ended = {i for i, op in prev.items() if op == "Update" and cur.get(i) is None}
        started = {i for i, op in cur.items() if op == "Update" and prev.get(i) is None}
        assert not (ended and started), f"one write ended {ended} and started {started}"
        ends += len(ended)
        starts += len(started)
    # The roll went through the hand-overs this test is about.
    assert ends >= 2
    assert starts >= 2
    assert sim.status["updatedReadyReplicas"] == 3


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_next_start_comes_in_the_pass_right_after_the_end(strategy: dict[str, Any]) -> None:
    # Go requeues at once when an Update ran (``ctrl.Result{Requeue: true}``): no idle wait between
    # one Instance's operation ending and the next one starting.
    _, d, before = _rolled(3, strategy)
    plans = d.plans[before:]
    written = [next((_ops(a.status) for a in p.actions if isinstance(a, WriteStatus)), None) for p in plans]
    last: dict[int, str | None] = {}
    ends: list[int] = []
    for n, cur in enumerate(written):
        if cur is None:
            continue
        if any(op == "Update" and cur.get(i) is None for i, op in last.items()):
            ends.append(n)
        last = cur
    assert len(ends) == 3  # one end per Instance
    for n in ends[:-1]:
        cur, nxt = written[n], written[n + 1] if n + 1 < len(written) else None
        assert cur is not None
        assert nxt is not None, f"the pass after pass {n} wrote nothing"
        assert any(op == "Update" and cur.get(i) is None for i, op in nxt.items()), (n, cur, nxt)


def test_a_pass_writes_to_its_instances_in_index_order() -> None:
    _, d, before = _rolled(4, {"type": "SurgeThenDrain", "rollingUpdate": {"maxSurge": 2}})
    multi = 0
    for p in d.plans[before:]:
        pods = [
            _INDEX.search(a.name) for a in p.actions if isinstance(a, (CreatePod, DeletePod, SetServingGate))
        ]
        starts = [
            _STARTED.search(a.message)
            for a in p.actions
            if isinstance(a, RecordEvent) and a.event_reason == "RecreateUpdateStarted"
        ]
        for found in (pods, starts):
            indices = [int(m.group(1)) for m in found if m]
            assert indices == sorted(indices), f"out of index order: {p.actions}"
        multi += len({m.group(1) for m in starts if m}) > 1
    # Two starts in one pass (the highest index is chosen first, 03 §8 rule 8) still come in index order.
    assert multi >= 1
