"""Per-pass derived facts: names, desired count, strategy, budgets, timeouts, the roll target."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from omereconcile.planner.budgets import resolve_budget
from omereconcile.planner.relocation import LedgerBook
from omereconcile.settings import SettingsError, parse_go_duration
from omereconcile.world import DesiredRevision, PodView, World
from omerender import constants as c
from omerender.naming import headless_service_name, pod_name
from omerender.stamps import selector_of

__all__ = ["Ctx", "build_context", "hash_of", "headless_service_name", "pod_name"]

SURGE = "SurgeThenDrain"
RECREATE = "RecreatePod"
IN_PLACE_IF_POSSIBLE = "InPlaceIfPossible"
IN_PLACE_ONLY = "InPlaceOnly"
IN_PLACE_STRATEGIES = frozenset({IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY})


def hash_of(revision_name: str) -> str:
    """A revision is ``{prefix}-{component}-{hash}``: the hash is what pods carry as a label.

    The text after the last ``-``; ``""`` when the name has no ``-`` past its first character (a name
    of another shape carries no hash, so no pod matches it by hash). Go:
    sgl-project/ome ``pkg/controller/v1beta1/workload/query/labels.go`` @ f97f9cfa,
    ``RevisionHashFromControllerRevisionName`` (its loop stops before index 0, so a leading ``-`` is
    no separator).
    """
    cut = revision_name.rfind("-")
    return revision_name[cut + 1 :] if cut > 0 else ""


@dataclass(frozen=True, slots=True)
class Ctx:
    world: World
    now: datetime
    prefix: str
    component: str
    namespace: str
    name: str
    desired: int
    strategy: str
    max_surge: int | None
    max_unavailable: int | None
    partition: int
    paused: bool
    freeze: bool
    min_ready: timedelta
    ready_timeout: timedelta | None
    spec_revision: str  # updateRevision: the render of the spec
    target: str  # the roll target: rollbackToRevision when it names one of ours, else spec_revision
    rollback_missing: str | None  # a rollbackToRevision naming a revision another object controls
    # (runner, ordinal) of every pod of a multi-pod Instance; empty for a single-pod one, whose one
    # pod sits in the SurgeThenDrain slot ``activeOrdinal``.
    gang_slots: tuple[tuple[str, int], ...] = ()
    restart_policy: str = "None"
    # The Budget hold under which no surge source leaves rotation this pass (planner/admission.py
    # ``floor_hold_reason``); None lets every drain start.
    drain_withheld: str | None = None
    # lifecycle.updateStrategy.inPlaceUpdateStrategy: the wait after a pod is proven out of rotation
    # before its in-place patch, and whether the pod leaves rotation at all (default true).
    in_place_grace: timedelta = timedelta(0)
    mark_not_ready: bool = True
    # lifecycle.migrationPolicy.mode as written (None: unset, the CRD's Auto) and the pass's copy of
    # the relocation ledger (planner/relocation.py); None where no pass plans relocation.
    migration_mode: str | None = None
    ledger: LedgerBook | None = None
    # The pods with no readable incarnation label, read once per pass: a recreate or Restart step looks
    # for its Instance's among them (planner/instances.py ``_orphans``) without scanning every pod per row.
    unlabelled_pods: tuple[PodView, ...] = ()

    @property
    def gang(self) -> bool:
        return bool(self.gang_slots)

    @property
    def pods_per_instance(self) -> int:
        return len(self.gang_slots) or 1

    @property
    def selector(self) -> dict[str, str]:
        return selector_of(self.prefix, self.component)

    @property
    def label_selector(self) -> str:
        """``status.labelSelector``, Go ``inferencereplica/status.go`` ``irLabelSelectorString``
        (ome-projects/ome @ 8263d0c7): the replica's pod labels, sorted as Kubernetes prints a
        selector, narrowed to the runners an Instance has exactly one of (``ome.io/runner in
        (default,leader)``) so an HPA reading the scale subresource counts one pod per Instance — the
        ``default`` pod of a single-pod Instance, the leader of a multi-pod one, never a worker."""
        exact = ",".join(f"{k}={v}" for k, v in sorted(self.selector.items()))
        return f"{exact},{c.LABEL_RUNNER} in ({c.RUNNER_DEFAULT},{c.RUNNER_LEADER})"

    @property
    def service_name(self) -> str:
        return headless_service_name(self.prefix, self.component)

    def pod_name(self, index: int, ordinal: int, runner: str = c.RUNNER_DEFAULT) -> str:
        return pod_name(self.prefix, self.component, index, runner, ordinal)

    def instance_key(self, index: int) -> str:
        return f"component={self.component} instance={index}"

    def deadline_from(self, start: datetime) -> datetime | None:
        """Go ``types.DeadlineAt`` (ome-projects/ome @ 4dfb96b1, ``types/plan_test.go``
        ``TestDeadlineAt``): ``start`` plus the readiness window; no deadline at all when the window
        is unset, zero or negative (a deadline at or before its own start would read as already
        elapsed on the next pass)."""
        if self.ready_timeout is None or self.ready_timeout <= timedelta(0):
            return None
        return start + self.ready_timeout


def _replica_timeout(world: World) -> timedelta | None:
    lc = world.replica.model.spec.lifecycle
    raw = lc.instance_ready_timeout if lc is not None else None
    if raw:
        try:
            value = parse_go_duration(raw)
        except SettingsError:
            value = timedelta(0)  # the webhook/CRD reject it; treat as unset rather than crash a pass
        if value > timedelta(0):
            return value
    return world.settings.instance_ready_timeout


def build_context(world: World, desired_rev: DesiredRevision, target: str, missing: str | None) -> Ctx:
    spec = world.replica.model.spec
    deleting = world.replica.deletion_timestamp is not None
    desired = 0 if deleting else spec.effective_replicas
    lc = spec.lifecycle
    us = lc.update_strategy if lc is not None else None
    # The strategy as the spec names it: the in-place strategies choose per Instance whether they
    # patch or recreate (planner/inplace.py), as Go's ``chooseUpdateModeForInstance`` does.
    strategy = (us.type if us is not None else None) or SURGE
    ips = (us.in_place_update_strategy if us is not None else None) or {}
    grace = ips.get("gracePeriodSeconds")
    mark = ips.get("markNotReadyDuringLifecycle")
    ru = us.rolling_update if us is not None else None
    budget_base = max(desired, 1)
    partition = (
        spec.pacing.partition if spec.pacing is not None and spec.pacing.partition is not None else None
    )
    if partition is None and ru is not None and ru.partition is not None:
        partition = ru.partition
    slots = tuple((runner, k) for runner, size in world.instance_shape for k in range(size))
    gang_slots = slots if len(slots) > 1 else ()
    # RecreateInstanceOnPodRestart is the multi-pod default (01 §4.2); None keeps single-pod behaviour.
    restart = (lc.restart_policy if lc is not None else None) or (
        "RecreateInstanceOnPodRestart" if gang_slots else "None"
    )
    return Ctx(
        world=world,
        now=world.now,
        prefix=world.replica.prefix,
        component=world.replica.component,
        namespace=world.replica.namespace,
        name=world.replica.name,
        desired=desired,
        strategy=strategy,
        max_surge=resolve_budget(ru.max_surge if ru else None, budget_base),
        max_unavailable=resolve_budget(ru.max_unavailable if ru else None, budget_base),
        partition=min(partition or 0, max(desired, 0)),
        paused=spec.paused,
        freeze=spec.paused and spec.pause_mode == "Freeze",
        min_ready=timedelta(seconds=spec.min_ready_seconds),
        ready_timeout=_replica_timeout(world),
        spec_revision=desired_rev.name,
        target=target,
        rollback_missing=missing,
        gang_slots=gang_slots,
        restart_policy=restart,
        in_place_grace=timedelta(seconds=grace if isinstance(grace, int) and grace > 0 else 0),
        mark_not_ready=mark is not False,
        migration_mode=_migration_mode(world),
        ledger=LedgerBook(world.ledger, world.replica.name, world.settings.auto_migrate_max_attempts),
        unlabelled_pods=tuple(p for p in world.pods if p.incarnation is None),
    )


def _migration_mode(world: World) -> str | None:
    lc = world.replica.model.spec.lifecycle
    mode = ((lc.migration_policy if lc is not None else None) or {}).get("mode")
    return str(mode) if isinstance(mode, str) and mode else None
