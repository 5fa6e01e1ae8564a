"""The update pass's admission as OME's newest Go has it: what a fresh start is charged against.

Read from ome-projects/ome, the standalone-era tree (``NamePrefix()``) whose
``workload/reconcile.go`` holds ``updateAdmission``, ``floorHold``, ``standingHold``,
``rolledNotServingClause`` and ``extraPodClause``, with ``workload/plan_decision.go``
``planUpdateSelection`` (which fills ``RolledNotServing`` and ``ExtraPodSurge``),
``workload/escalation/budget.go`` (``BudgetDenies``, ``ExtraPodSurgeInFlight``,
``liveExtraPodNames``) and ``workload/ops`` ``RolledInstanceNotServing`` /
``query.PodSetFullyServing``.

Besides the operations in flight from earlier passes, a start is charged for:

- the Instances already rolled onto the target that do not serve it (``RolledNotServing``), on the
  budget of the strategy's arm, and named in every budget hold;
- under a capped SurgeThenDrain ``maxSurge``, the extra pods the API still lists (``ExtraPodSurge``):
  a Terminating pod until its ``deletionTimestamp`` (request time plus grace), a live pod beyond its
  Instance's own count until a start on that Instance replaces it.

With nothing admitted, the pass reports the hold the roll stands behind (``standingHold``) while a
rolled Instance whose pushed pod crashed after Ready is out of rotation (``CrashedNotServing``,
``CrashedOutOfRotation``): see :func:`standing_hold`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from omereconcile.planner import rows as R
from omereconcile.planner.context import SURGE, Ctx, hash_of
from omereconcile.planner.gang import runner_restarted_since_ready
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import (
    fully_serving,
    readiness_dark_at,
    rebuilt_after_failure,
    unavailable_until,
)
from omereconcile.planner.rows import Row
from omereconcile.planner.surge import SURGE_STEPS
from omereconcile.world import PodView, parse_time

__all__ = [
    "Admission",
    "ExtraPodSurge",
    "crashed_not_serving",
    "extra_pod_clause",
    "extra_pod_surge",
    "floor_hold_reason",
    "rolled_not_serving",
    "rolled_not_serving_clause",
    "standing_hold",
]

_SURGE_STEPS = SURGE_STEPS  # SurgeDrainSettle included: read from rows an earlier release journaled


_fully_serving = fully_serving  # Go query.PodSetFullyServing (planner/podstate.py)


def proven_window(ctx: Ctx) -> timedelta:
    """Go ``ops.ProvenWindowSeconds``: ``minReadySeconds`` floored by the stuck-pod grace, in whole
    seconds (the grace rounded up)."""
    grace = math.ceil(ctx.world.settings.stuck_pod_grace_period.total_seconds())
    return max(ctx.min_ready, timedelta(seconds=max(grace, 0)))


def _unproven(ctx: Ctx, pod: PodView, row: Row, window: timedelta) -> datetime | None:
    """A pod whose runner restarted since the row entered Ready (``gang.runner_restarted_since_ready``,
    Go ``RunnerRestartedSinceReady``), or that the row rebuilt after a recorded failure of the set
    (``podstate.rebuilt_after_failure``, Go ``RebuiltAfterFailure``), and that is not Available for the
    proven window (``podstate.unavailable_until``, Go ``podreadiness.IsPodAvailable``): the instant it
    will be, or ``ctx.now`` when only a watch event changes the verdict. None when the pod is proven (or
    is no comeback)."""
    if runner_restarted_since_ready(pod, row.ready_since) is None and not rebuilt_after_failure(
        pod, row.last_failure, _target_created(ctx), window
    ):
        return None
    return unavailable_until(pod, window, ctx.now)


def _not_serving(
    ctx: Ctx, row: Row, pods: Sequence[PodView], window: timedelta
) -> tuple[bool, datetime | None]:
    """Go ``ops.RolledInstanceNotServing``'s reading of a rolled row's pods (``workload/ops/update.go``,
    the newest of 6, 50,518 characters, read whole): whether the Instance does not serve the target,
    and the instant a restarted pod held only for its window clears it (None when nothing but a watch
    event changes the verdict). Over the pods on the target, Terminating ones left out: a pod whose
    runner restarted since Ready (``RunnerRestartedSinceReady``) holds until it is Available for the
    window (``podreadiness.IsPodAvailable``); with none held, the set is read by
    ``query.PodSetFullyServing``. A pod the row rebuilt inside the window after its recorded failure
    (``RebuiltAfterFailure``) holds the same way. Go's further hold, a runner restarted twice since
    Ready (``RunnerRestartedAgainSinceReady``), is kept out (docs/planner.md "Budgets"): the
    612,458-character ``reconcile_test`` file's
    ``TestRunnerKilledTwiceAfterPromotion_ServesTheWindowAndTheRollResumes`` needs it out."""
    own = [p for p in _pushed(ctx, pods) if not p.terminating]
    waits = [w for w in (_unproven(ctx, p, row, window) for p in own) if w is not None]
    if waits:
        return True, max(waits)
    return not _fully_serving(own, ctx.pods_per_instance), None


def _update_continuation(row: Row) -> bool:
    """Go ``types.UpdateContinuation``: the row carries an Update attempt the update pass continues
    (``Updating``, or ``Failed`` with its Update operation preserved); the in-flight counts anchor it."""
    op_update = row.operation is not None and row.operation.type == R.OP_UPDATE
    return row.phase == R.UPDATING or (row.phase == R.FAILED and op_update)


def rolled_not_serving(
    ctx: Ctx,
    rows: Sequence[Row],
    by_index: Mapping[int, list[PodView]],
    held: Collection[int],
    out: Out,
) -> list[int]:
    """The Instances already on the roll target that do not serve it, in index order.

    Go ``workload/plan_decision.go`` ``planUpdateSelection`` with ``ops.RolledInstanceNotServing``
    (``workload/ops/update.go``, the newest of 6, 50,518 characters, read whole): a row whose
    ``runningRevision`` is the target and that carries no Update continuation (``UpdateContinuation``:
    those are anchored by the in-flight counts), whose pods on that revision (Terminating ones left out)
    hold it (:func:`_not_serving`: a pod whose runner restarted since Ready, or that the row rebuilt
    after a recorded failure of the set (``RebuiltAfterFailure``), and that is not yet Available for the
    proven window, ``ProvenWindowSeconds``; the planner wakes when the window ends) or are short of
    ``query.PodSetFullyServing``. Partition-held Instances are not considered; scaled-away
    (``Deleting``) rows are not planned; ours has no migration-owned rows (Go's
    ``isMigrateOwnedStatus``). Not reproduced (docs/planner.md "Budgets"):
    ``RunnerRestartedAgainSinceReady``. ``ops.RolledInstanceDark``, whose body is not in the index, is followed
    as its caller and ``TestReconcile_DarkRolledInstanceHoldsNoFloor`` state it: an Instance whose
    shortfall is pods dark on readiness past the stuck-pod grace is left out
    (``podstate.readiness_dark_at``).
    """
    window = proven_window(ctx)
    found: list[int] = []
    for r in rows:
        if r.index in held or r.phase == R.DELETING or r.running_revision != ctx.target or not ctx.target:
            continue
        if _update_continuation(r):
            continue
        not_serving, wait = _not_serving(ctx, r, by_index.get(r.index, []), window)
        if not not_serving:
            continue
        if wait is not None:
            out.wake(wait)  # a pod Ready again raises no event when its window ends
        # Go ``ops.RolledInstanceDark``: a shortfall of dark pods alone is not the roll's open work,
        # nothing those pods do lifts it, so the Instance holds no slot (see
        # ``podstate.readiness_dark_at``); inside the grace it holds one, and the pass wakes for the
        # grace's end, which raises no watch event. Not read while a restarted pod is unproven.
        own = [p for p in _pushed(ctx, by_index.get(r.index, [])) if not p.terminating]
        full = len(own) >= ctx.pods_per_instance
        dark_at = (
            readiness_dark_at(own, ctx.world.settings.stuck_pod_grace_period)
            if full and wait is None
            else None
        )
        if dark_at is not None and dark_at <= ctx.now:
            continue
        if dark_at is not None:
            out.wake(dark_at)
        found.append(r.index)
    return sorted(found)


def _pushed(ctx: Ctx, pods: Sequence[PodView]) -> list[PodView]:
    """The Instance's pods on the roll target (a pod carrying no revision hash is read as on it)."""
    target_hash = hash_of(ctx.target)
    return [p for p in pods if not p.revision_hash or p.revision_hash == target_hash]


def _ended_at(pod: PodView) -> datetime | None:
    """When a pod that ended stopped: its containers' newest termination, else when its Ready (or
    ContainersReady) condition last moved; None when nothing dates it."""
    times = [t for ct in pod.containers for t in (ct.state_finished_at, ct.finished_at) if t is not None]
    if times:
        return max(times)
    for kind in ("Ready", "ContainersReady"):
        cond = pod.condition(kind)
        if cond is not None and cond.last_transition_time is not None:
            return cond.last_transition_time
    return None


def _target_created(ctx: Ctx) -> datetime | None:
    return next((rev.created for rev in ctx.world.revisions if rev.name == ctx.target), None)


def rolled_crashed(ctx: Ctx, row: Row, pods: Sequence[PodView], window: timedelta, out: Out) -> bool:
    """Whether a rolled-not-serving Instance's pushed pod crashed after the row entered Ready.

    Go ``ops.RolledInstanceCrashed(row, target.Name, target.CreationTimestamp, pods, provenWindow)``,
    called by ``workload/plan_decision.go`` ``planUpdateSelection`` (the 49,435-character version):
    its body is not in the index. The rule is read from what Go states around it: the
    ``UpdateSelection.CrashedNotServing`` comment ("the Instances of RolledNotServing whose pushed
    pod crashed after the row entered Ready … the roll's open work that no other pass says anything
    about while the pod is up between crashes"), the root reconcile_test-like file of 612,458
    characters (``CorrectedPushAfterAHeldCrash_Converges``: a set is held "measured since their
    newest restart or rebuild", and a failure the row recorded "older than the corrected revision is
    a superseded set's and never holds; one recorded after the corrected revision existed is read as
    the set's own, and holds for one window at most"; ``TheHoldIsReportedOnEveryPassWhileTheRollWaits``:
    "a promoted set that is unproven or being rebuilt";
    ``SteadyService_PodLossHoldClearsOnceTheInstanceServesAgain``: a pod deleted or evicted under a
    serving Instance holds the roll while the Instance is short). Read here as any of, over the
    Instance's pods on the target and the row's ``readySince`` (without it nothing is dated):

    - a pod whose runner restarted since Ready, or that the row rebuilt after a recorded failure of
      the set (``RebuiltAfterFailure``), and that has not held Ready for the proven window since
      (``_unproven``: Go's ``RunnerRestartedSinceReady`` with the window; a pod rebuilt under the
      row's old ``readySince`` has its run started after it, so a rebuild reads so too; a rebuilt set
      promoted with a new ``readySince`` is still crashed while it proves itself, as ``ladderHold``'s
      comment states: the ladder stays the hold "through the rebuild and while the rebuilt set proves
      itself");
    - a pod that ended (Failed or Succeeded, Terminating or not) no earlier than ``readySince``,
      dated by its containers' last termination, else by its Ready condition's transition (the
      second-precision stamps make a same-second end count);
    - a failure the row recorded (``lastFailure.time``) no earlier than ``readySince`` and the
      target's creation, for one proven window after it (the set being rebuilt; the planner wakes when
      the window ends).
    """
    since = row.ready_since
    if since is None:
        return False
    for p in _pushed(ctx, pods):
        if _unproven(ctx, p, row, window) is not None:
            return True
        if p.ended and (at := _ended_at(p)) is not None and at >= since:
            return True
    failed = parse_time((row.last_failure or {}).get("time"))
    created = _target_created(ctx)
    if failed is None or failed < since or (created is not None and failed < created):
        return False
    if ctx.now < failed + window:
        out.wake(failed + window)  # the window's end raises no event
        return True
    return False


def rolled_set_in_rotation(ctx: Ctx, pods: Sequence[PodView]) -> bool:
    """Go ``ops.RolledSetInRotation(target.Name, pods, inst.TotalPods())``, whose body is not in the
    index; read from the ``UpdateSelection.CrashedOutOfRotation`` comment (an Instance "whose set is
    short of fully in rotation: a pod down, restarting or not yet serving"): the Instance's pods on
    the target, Terminating ones left out, number at least its pod count and each is in rotation
    (PodReady True, not ended, the serving gate True)."""
    own = [p for p in _pushed(ctx, pods) if not p.terminating]
    return len(own) >= ctx.pods_per_instance and all(p.ready and p.gate == "True" for p in own)


def crashed_not_serving(
    ctx: Ctx, rows: Sequence[Row], by_index: Mapping[int, list[PodView]], rolled: Collection[int], out: Out
) -> tuple[list[int], list[int]]:
    """Go ``planUpdateSelection``'s ``CrashedNotServing`` (the Instances of ``RolledNotServing`` whose
    pushed pod crashed after Ready, :func:`rolled_crashed`) and ``CrashedOutOfRotation`` (those of them
    whose set is not fully in rotation, :func:`rolled_set_in_rotation`), each in index order."""
    window = proven_window(ctx)
    crashed: list[int] = []
    out_of_rotation: list[int] = []
    for r in rows:
        if r.index not in rolled:
            continue
        pods = by_index.get(r.index, [])
        if rolled_crashed(ctx, r, pods, window, out):
            crashed.append(r.index)
            if not rolled_set_in_rotation(ctx, pods):
                out_of_rotation.append(r.index)
    return sorted(crashed), sorted(out_of_rotation)


@dataclass(frozen=True, slots=True)
class ExtraPodSurge:
    """Go ``escalation.ExtraPodSurge``: what the extra pods hold against the surge budget."""

    slots: int = 0
    terminating: tuple[str, ...] = ()  # name order
    live: tuple[str, ...] = ()  # name order
    live_slots_by_index: Mapping[int, int] = field(default_factory=dict)
    next_release: datetime | None = None  # earliest deletionTimestamp among the Terminating counted


def _live_extra_names(pods: Sequence[PodView], running_hash: str, n: int) -> list[str]:
    """Go ``escalation.liveExtraPodNames``: pods off the row's running revision first, then the rest
    from the highest name down; the ``n`` chosen, in name order."""
    off = [p.name for p in pods if running_hash and p.revision_hash and p.revision_hash != running_hash]
    on = [p.name for p in pods if p.name not in off]
    if not on:
        on, off = off, []
    names = sorted(off) + sorted(on, reverse=True)
    return sorted(names[:n])


def extra_pod_surge(
    ctx: Ctx, rows: Sequence[Row], by_index: Mapping[int, list[PodView]], rolled: Collection[int]
) -> ExtraPodSurge:
    """Go ``escalation.ExtraPodSurgeInFlight``, computed (as ``planUpdateSelection`` does) only for
    SurgeThenDrain with a capped ``maxSurge``.

    Every bucket's pods beyond its Instance's own count, in slots of the largest Instance's pod
    count (rounded up): a Terminating pod while ``now`` is not after its ``deletionTimestamp``, a
    live one for as long as it exists. Buckets another anchor charges (a surge step, the index it
    pins, a rolled-not-serving Instance) are skipped; a bucket the plan does not own (no row, or a
    ``Deleting`` row) is charged for its Terminating pods only.
    """
    if ctx.strategy != SURGE or ctx.max_surge is None:
        return ExtraPodSurge()
    charged: set[int] = set(rolled)
    running: dict[int, str] = {}
    planned: set[int] = set()
    for r in rows:
        running[r.index] = hash_of(r.running_revision)
        if r.phase != R.DELETING:
            planned.add(r.index)
        op = r.operation
        if op is not None and op.step in _SURGE_STEPS:
            charged.add(r.index)
            if op.surge_index is not None:
                charged.add(op.surge_index)
    per = ctx.pods_per_instance

    def slots_of(n: int) -> int:
        return (n + per - 1) // per

    slots = 0
    terminating: list[str] = []
    live_names: list[str] = []
    live_slots: dict[int, int] = {}
    release: datetime | None = None
    for index in sorted(by_index):
        if index in charged:
            continue
        term_names: list[str] = []
        live: list[PodView] = []
        first: datetime | None = None
        for p in by_index[index]:
            if p.terminating:
                deadline = p.deletion_timestamp
                if deadline is not None and ctx.now > deadline:
                    continue
                term_names.append(p.name)
                if deadline is not None and (first is None or deadline < first):
                    first = deadline
            else:
                live.append(p)
        extra = len(term_names) + len(live) - (per if index in planned else 0)
        if extra <= 0:
            continue
        term_counted = min(extra, len(term_names))
        live_counted = extra - term_counted if index in planned else 0
        if term_counted + live_counted <= 0:
            continue
        slots += slots_of(term_counted + live_counted)
        if term_counted:
            terminating.extend(sorted(term_names))
            if first is not None and (release is None or first < release):
                release = first
        if live_counted:
            live_slots[index] = slots_of(live_counted)
            live_names.extend(_live_extra_names(live, running.get(index, ""), live_counted))
    return ExtraPodSurge(slots, tuple(terminating), tuple(live_names), live_slots, release)


def _instances(indices: Sequence[int]) -> str:
    """Go ``instanceNoun``: the noun and the comma-joined indices."""
    noun = "Instances" if len(indices) > 1 else "Instance"
    return f"{noun} {', '.join(str(i) for i in indices)}"


def rolled_not_serving_clause(rolled: Sequence[int], target: str) -> str:
    """Go ``rolledNotServingClause``."""
    if not rolled:
        return ""
    return f"; {_instances(rolled)} on revision {target} not serving"


def extra_pod_clause(extra: ExtraPodSurge) -> str:
    """Go ``updateAdmission.extraPodClause``."""
    clauses: list[str] = []
    if len(extra.terminating) == 1:
        clauses.append(
            f"Terminating pod {extra.terminating[0]} still counts against the surge budget until "
            "its deletion grace elapses"
        )
    elif extra.terminating:
        clauses.append(
            f"Terminating pods {', '.join(extra.terminating)} still count against the surge budget "
            "until their deletion grace elapses"
        )
    if len(extra.live) == 1:
        clauses.append(
            f"extra pod {extra.live[0]} holds a surge slot until a start on its Instance replaces it"
        )
    elif extra.live:
        clauses.append(
            f"extra pods {', '.join(extra.live)} hold surge slots until a start on their Instance "
            "replaces them"
        )
    return "".join(f"; {c}" for c in clauses)


def floor_hold_reason(ctx: Ctx, rolled: Sequence[int]) -> str | None:
    """Go ``workload/reconcile.go`` ``floorHold``: under SurgeThenDrain with a capped
    ``maxUnavailable``, more rolled-not-serving Instances than that budget keep every surge source in
    rotation; None while the floor holds."""
    budget = ctx.max_unavailable
    if ctx.strategy != SURGE or budget is None or len(rolled) <= budget:
        return None
    return (
        f"per-Component unavailability budget {budget} exhausted"
        f"{rolled_not_serving_clause(rolled, ctx.target)}; no source leaves rotation"
    )


def standing_hold(
    ctx: Ctx,
    rolled: Sequence[int],
    crashed: Sequence[int],
    crashed_out: Sequence[int],
    prior: int,
    extra: ExtraPodSurge,
    ladder_denies: bool,
) -> str | None:
    """Go ``workload/reconcile.go`` ``standingHold`` (the 22,705-character version, read whole): the
    Budget hold a roll with nothing admitted stands behind on account of the rolled Instances that do
    not serve it. Nothing unless one of them crashed after promotion (``crashed``); the ladder's hold
    when the target's RetryBlock denies a fresh start (``ladder_denies``: None here, the caller reports
    the ladder's hold); nothing unless one of the crashed is out of rotation (``crashed_out``: one back
    in rotation is unproven, not down, and the admission paces a further start itself); then the
    floor's hold (:func:`floor_hold_reason`); else the arm's budget, projected as the admission
    projects a start (``prior`` in flight + the rolled Instances, + every extra-pod slot on the surge
    arm, + 1), when that leaves no room: ``per-Component <arm> budget <n> exhausted; Instance <i> on
    revision <rev> not serving``. None when a further start would still be admitted. Go's ladder
    branch also stands for a block whose attempt rebuilds the crashed set
    (``ops.RetryBlockOfCrashedAttempt``, not in the index), which ours does not read."""
    if not crashed or ladder_denies or not crashed_out:
        return None
    floor = floor_hold_reason(ctx, rolled)
    if floor is not None:
        return floor
    if ctx.strategy == SURGE:
        arm, budget, charged = "surge", ctx.max_surge, prior + len(rolled) + extra.slots
    else:
        arm, budget, charged = "unavailability", ctx.max_unavailable, prior + len(rolled)
    if budget is None or charged + 1 <= budget:
        return None
    return f"per-Component {arm} budget {budget} exhausted{rolled_not_serving_clause(rolled, ctx.target)}"


@dataclass
class Admission:
    """Go ``updateAdmission``: the per-Component budget half (a standalone replica has no plan or
    coordination gate). ``prior`` is the in-flight anchor (``PriorSurgeInFlight`` /
    ``PriorUnavailInFlight``), counted once when the pass began."""

    ctx: Ctx
    prior: int
    rolled: list[int]
    extra: ExtraPodSurge
    started: int = 0  # inFlightSurge / inFlightUnavail
    replaced_extra_slots: int = 0

    @property
    def surge(self) -> bool:
        return self.ctx.strategy == SURGE

    def _unreplaced_extra_slots(self, index: int) -> int:
        """Go ``unreplacedExtraSlots``: all extra slots, less those this pass's starts replaced, less
        the ones the candidate's own live extra pods hold (its start evicts them first)."""
        return self.extra.slots - self.replaced_extra_slots - self.extra.live_slots_by_index.get(index, 0)

    def denial(self, index: int) -> str | None:
        """Go ``updateAdmission.admit``, budget layer: the hold reason, or None when admitted."""
        rolled = len(self.rolled)
        clause = rolled_not_serving_clause(self.rolled, self.ctx.target)
        if self.surge:
            budget, kind = self.ctx.max_surge, "surge"
            prior = self.prior + rolled + self._unreplaced_extra_slots(index)
            clause += extra_pod_clause(self.extra)
        else:
            budget, kind = self.ctx.max_unavailable, "unavailability"
            prior = self.prior + rolled
        if budget is None:
            return None
        projected = prior + self.started + 1
        if projected <= budget:
            return None
        return f"per-Component {kind} budget {budget} exhausted (would become {projected}){clause}"

    def charge(self, index: int) -> None:
        """Go ``updateAdmission.charge``: a surge start takes over its Instance's live extra slots."""
        self.started += 1
        if self.surge:
            self.replaced_extra_slots += self.extra.live_slots_by_index.get(index, 0)
