"""Builders for the reconciler's Go-parity tests: a real planning context and Go's one-row fixtures.

OME's ``workload/holds`` and ``workload/escalation`` tests run an authority over a status store of one
row (Go's ``creatingRow(waiting)`` and kin). Ours run the same authority on a :class:`Row` in a real
:class:`Ctx`, built from a simulated one-replica InferenceReplica the way the pass builds it. These are
the pieces those files shared word for word; a file whose fixture differs keeps its own.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx, build_context
from omereconcile.settings import ForceDeletePolicy, OperatorSettings, RetryPolicy
from omereconcile.simulate.cluster import T0, Sim, base_replica
from omereconcile.simulate.driver import Driver, converged
from omereconcile.world import DesiredRevision, World, format_time

__all__ = [
    "INSTANCE_READY_TIMEOUT",
    "attempt_row",
    "config_change_cases",
    "creating_row",
    "instances_on_own_nodes",
    "one_replica_ctx",
]

# Go's fixtures arm the attempt's clock with a five-minute InstanceReadyTimeout.
INSTANCE_READY_TIMEOUT = timedelta(minutes=5)


def one_replica_ctx(settings: OperatorSettings | None = None, **world: Any) -> Ctx:
    """The context of a pass over a simulated one-replica InferenceReplica, at its desired revision.

    ``settings`` default to an InstanceReadyTimeout of five minutes; ``world`` names :class:`World`
    fields to set before the context is built (``nodes=...``, ``service=...``, ``endpoints=...``).
    """
    sim = Sim(settings=settings or OperatorSettings(instance_ready_timeout=INSTANCE_READY_TIMEOUT))
    sim.apply_replica(base_replica(replicas=1))
    observed = sim.observe()
    desired = observed.render
    assert isinstance(desired, DesiredRevision)
    if world:
        observed = replace(observed, **world)
    return build_context(observed, desired, desired.name, None)


def attempt_row(
    op_type: str,
    step: str,
    phase: str,
    *,
    waiting: str | None = None,
    target: str = "rev",
    refused_at: datetime | None = None,
    strategy: str | None = None,
) -> R.Row:
    """Row 0 in ``phase``, its attempt (``op_type`` at ``step``, id ``<type>-0``) begun at
    T0 with its clock armed (deadline T0 + InstanceReadyTimeout); ``refused_at`` is the create site's
    quota record (Go's ``refused(...)``)."""
    op = R.Operation(
        f"{op_type.lower()}-0",
        op_type,
        step,
        target,
        T0,
        deadline=T0 + INSTANCE_READY_TIMEOUT,
        strategy=strategy,
        waiting=waiting,
        capacity_refused_at=refused_at,
    )
    return R.Row(index=0, phase=phase, operation=op)


def creating_row(waiting: str | None = None, *, refused: bool = False) -> R.Row:
    """Go's ``creatingRow(waiting)`` (and ``refused(...)`` when the create site recorded a refusal)."""
    return attempt_row(
        R.OP_CREATE,
        R.STEP_CREATE_PODS,
        R.CREATING,
        waiting=waiting,
        refused_at=T0 if refused else None,
    )


def instances_on_own_nodes(nodes: Sequence[str]) -> tuple[Sim, Driver]:
    """A simulated replica of ``len(nodes)`` Ready single-pod Instances, Instance i on ``nodes[i]`` (Go's
    cordon and scale-down stories place them so): each scale-up step leaves only the next node
    schedulable, and every node is schedulable again at the end."""
    sim = Sim()
    template = sim.node_objs["sim-node"]
    sim.node_objs = {}
    for name in nodes:
        node = copy.deepcopy(template)
        node["metadata"]["name"] = name
        sim.node_objs[name] = node
    driver = Driver(sim)
    for count, node in enumerate(nodes, start=1):
        for name, obj in sim.node_objs.items():
            obj["spec"]["unschedulable"] = name != node
        if count == 1:
            sim.apply_replica(base_replica(replicas=1))
        else:
            sim.update_spec(replicas=count)
        driver.run(lambda s, n=count: converged(s) and s.status.get("readyReplicas") == n)
    for obj in sim.node_objs.values():
        obj["spec"].pop("unschedulable", None)
    placed = [sim.node_of(f"llama-pool-engine-{i}-default-0") for i in range(len(nodes))]
    assert placed == list(nodes), placed
    return sim, driver


def _settings_edit(**changes: Any) -> Callable[[World], World]:
    return lambda world: replace(world, settings=replace(world.settings, **changes))


def _stale_retry_blocks(*, backoff: bool) -> Callable[[World], World]:
    """RetryBlock history of revisions the replica no longer targets: a Held one, and with ``backoff``
    a Backoff one not yet due (``update_recreate_test.go`` @ 4dfb96b1 seeds both)."""

    def seed(world: World) -> World:
        failed_at = format_time(world.now - timedelta(hours=1))
        blocks: list[dict[str, Any]] = [
            {
                "targetRevision": "llama-pool-engine-stale001",
                "state": "Held",
                "attemptsStarted": 1,
                "lastFailureAt": failed_at,
                "reason": "ImagePullBackOff",
            }
        ]
        if backoff:
            blocks.append(
                {
                    "targetRevision": "llama-pool-engine-stale002",
                    "state": "Backoff",
                    "attemptsStarted": 1,
                    "lastFailureAt": failed_at,
                    "reason": "ImagePullBackOff",
                    "nextRetryAt": format_time(world.now + timedelta(hours=1)),
                }
            )
        status = {**world.replica.status, "retryBlocks": blocks}
        return replace(world, replica=replace(world.replica, status=status))

    return seed


def config_change_cases(*, backoff_block: bool = False, auto_migrate: bool = False) -> list[Any]:
    """Go's ``configChangeCases()`` (``ops/update_inplace_test.go`` @ 58a57f25) as pytest params, each a
    ``World -> World`` edit: of its seven operator knobs ours has the update retry policy, the
    force-delete policy and the RetryBlock history; ``auto_migrate`` adds the auto-migration budget of
    ``surgeConfigChangeCases()``. The scale-down and requeue cadences, the gang schedule clamp and the
    migration audit caps are Go settings ours lacks."""
    cases = [
        pytest.param(
            _settings_edit(update_retry=RetryPolicy(7, timedelta(minutes=1), timedelta(hours=1), 2.0)),
            id="update retry policy",
        ),
        pytest.param(
            _settings_edit(force_delete=ForceDeletePolicy(timedelta(seconds=30), timedelta(minutes=5))),
            id="force-delete policy",
        ),
        pytest.param(_stale_retry_blocks(backoff=backoff_block), id="superseded RetryBlock history"),
    ]
    if auto_migrate:
        cases.append(pytest.param(_settings_edit(auto_migrate_max_attempts=3), id="auto-migration budget"))
    return cases


class GoStepLoop:
    """What Go's ``recoveryHarness`` loops share (the 612,458-character root ``reconcile_test``-like
    file): ``step`` (the kubelet's report, one pass, the clock moved) is the subclass's, ``holds`` the
    rollout hold each pass reported."""

    holds: list[dict[str, Any]]

    def step(self) -> None:
        raise NotImplementedError

    def run(
        self, limit: int, until: Callable[[], bool], invariant: Callable[[], None] = lambda: None
    ) -> bool:
        """Go's ``run``/``runWithInvariant``: up to ``limit`` steps until ``until`` holds, ``invariant``
        read before the first step and after every one."""
        for _ in range(limit):
            invariant()
            if until():
                return True
            self.step()
        invariant()
        return until()

    def last_hold(self) -> dict[str, Any] | None:
        return self.holds[-1] if self.holds else None
