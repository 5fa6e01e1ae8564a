"""Drive the planner against the simulated cluster: observe → plan → apply one by one → advance.

Invariants are checked after every applied action and every clock step. A crash is "the controller
died after applying action number k": the rest of that plan is dropped, and the next pass starts from
the API alone (the planner keeps nothing between passes, so every pass is a fresh planner).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from omereconcile.actions import Plan, WriteStatus
from omereconcile.coalesce import StatusCoalescer
from omereconcile.planner import plan
from omereconcile.simulate.cluster import Conflict, Sim
from omereconcile.simulate.status_truth import status_claims
from omereconcile.world import PodView, World
from omerender import constants as c


class InvariantError(AssertionError):
    pass


@dataclass
class Driver:
    sim: Sim
    # Lowest number of serving Instances allowed right now (None: no floor to check).
    floor: Callable[[Sim], int | None] = lambda sim: None
    crash_at: frozenset[int] = frozenset()  # global action numbers after which the controller dies
    max_step: float = 5.0  # longest clock jump while idle, in seconds
    actions_applied: int = 0
    passes: int = 0
    plans: list[Plan] = field(default_factory=list)
    _prev_rows: int | None = None
    log: list[tuple[datetime, object]] = field(default_factory=list)  # (time, applied action)
    extra_checks: list[Callable[[Sim], None]] = field(default_factory=list)
    # The controller holds count-only status writes back as it does in production
    # (``omereconcile/coalesce.py``); ``coalesce=False`` applies every status write.
    coalesce: bool = True
    coalescer: StatusCoalescer | None = None

    def __post_init__(self) -> None:
        if self.coalesce and self.coalescer is None:
            self.coalescer = StatusCoalescer(clock=lambda: self.sim.now.timestamp())

    # -- invariants ---------------------------------------------------------------------------------------
    def check(self) -> None:
        sim = self.sim
        if sim.violations:
            raise InvariantError("; ".join(sim.violations))
        for extra in self.extra_checks:
            extra(sim)
        slots: dict[tuple[str, str, str], str] = {}
        for name, p in sim.pods.items():
            if p.obj["metadata"].get("deletionTimestamp"):
                continue
            lb = p.obj["metadata"]["labels"]
            key = (lb[c.LABEL_INSTANCE_INDEX], lb[c.LABEL_RUNNER], lb[c.LABEL_POD_ORDINAL])
            if key in slots:
                raise InvariantError(f"two live pods for slot {key}: {slots[key]} and {name}")
            slots[key] = name
        if sim.replica is None:
            return
        floor = self.floor(sim)
        if floor is not None and len(sim.serving_instances()) < floor:
            raise InvariantError(f"serving {sorted(sim.serving_instances())} fell below the floor {floor}")
        rows = sim.rows()
        row_idx = {r["index"] for r in rows}
        for name, p in sim.pods.items():
            idx = int(p.obj["metadata"]["labels"][c.LABEL_INSTANCE_INDEX])
            if idx not in row_idx and sim.status.get("instanceStatuses") is not None:
                raise InvariantError(f"pod {name} has no Instance row (Instance lost)")
        live_rows = sum(1 for r in rows if r["phase"] != "Deleting")
        desired = (
            0
            if sim.replica["metadata"].get("deletionTimestamp")
            else (sim.replica["spec"].get("replicas") or 1)
        )
        if self._prev_rows is not None and live_rows < min(desired, self._prev_rows):
            raise InvariantError(
                f"Instance rows fell to {live_rows} from {self._prev_rows} ({desired} desired)"
            )
        self._prev_rows = live_rows

    def journaled(self, act: object) -> None:
        """Every destructive step is already explained by the status in the API (03 §8 rule 26)."""
        sim = self.sim
        if sim.replica is None:
            return
        rows = {r["index"]: r for r in sim.rows()}
        kind = type(act).__name__
        if kind == "CreatePod":
            labels = act.pod["metadata"]["labels"]  # type: ignore[attr-defined]
            row = rows.get(int(labels[c.LABEL_INSTANCE_INDEX]))
            op = (row or {}).get("operation") or {}
            if not op or op["targetRevision"].rsplit("-", 1)[-1] != labels[c.LABEL_REVISION_HASH]:
                raise InvariantError(f"create of {act.name} not journaled: row {row}")  # type: ignore[attr-defined]
            if str(row["incarnation"]) != labels[c.LABEL_INSTANCE_INCARNATION]:  # type: ignore[index]
                raise InvariantError(f"create of {act.name} at an incarnation the row does not hold")  # type: ignore[attr-defined]
        elif kind == "DeletePodGroup":
            index = int(act.name.rsplit("-", 1)[-1])  # type: ignore[attr-defined]
            row = rows.get(index)
            group = sim.pod_groups.get(act.name) or {}  # type: ignore[attr-defined]
            # The reset of a group the gang scheduler failed is explained by the group's own status (a
            # restarted controller reads the same verdict): Go gang.go EnsurePodGroupsWithState.
            failed = (group.get("status") or {}).get("phase") == "Failed"
            if row is not None and not row.get("operation") and not failed:
                raise InvariantError(f"DeletePodGroup {act.name} of an Instance with no operation")  # type: ignore[attr-defined]
        elif kind == "PatchPodInPlace":
            pod = sim.pods.get(act.name)  # type: ignore[attr-defined]
            lb = pod.obj["metadata"]["labels"] if pod is not None else {}
            row = rows.get(int(lb.get(c.LABEL_INSTANCE_INDEX, -1)))
            op = (row or {}).get("operation") or {}
            clears_marker_only = not act.images and not act.labels and set(act.annotations.values()) == {None}  # type: ignore[attr-defined]
            if op.get("step") != "InPlace" and not clears_marker_only:
                raise InvariantError(f"in-place patch of {act.name} with no InPlace operation: row {row}")  # type: ignore[attr-defined]
        elif kind in ("DeletePod", "SetServingGate"):
            if kind == "SetServingGate" and act.status:  # type: ignore[attr-defined]
                return
            pod = sim.pods.get(act.name)  # type: ignore[attr-defined]
            if pod is None:
                return
            lb = pod.obj["metadata"]["labels"]
            row = rows.get(int(lb[c.LABEL_INSTANCE_INDEX]))
            if row is None:
                raise InvariantError(f"{kind} {act.name} with no Instance row")  # type: ignore[attr-defined]
            steady_active = (
                not row.get("operation")
                and str(row.get("activeOrdinal", 0)) == lb[c.LABEL_POD_ORDINAL]
                and pod.obj["status"].get("phase") not in ("Failed", "Succeeded")
            )
            if steady_active:
                raise InvariantError(f"{kind} {act.name}: the serving pod of an Instance with no operation")  # type: ignore[attr-defined]

    def truthful(self, act: WriteStatus, world: World) -> None:
        """The status a pass writes claims no more than its rows and the pods of that pass
        (``simulate/status_truth.py``). Teardown keeps the last published counts (Go skips the
        aggregate there), so only a live replica's writes are read."""
        if world.replica.deletion_timestamp is not None:
            return
        by_index: dict[int, list[PodView]] = {}
        for p in world.pods:
            if p.labels.get(c.LABEL_INSTANCE_INDEX) is not None and p.index is not None:
                by_index.setdefault(p.index, []).append(p)
        size = sum(n for _, n in world.instance_shape)
        rows = act.status.get("instanceStatuses") or []
        if size > 1:
            desired = {int(r["index"]): size for r in rows if r.get("phase") != "Deleting"}
        else:
            desired = dict.fromkeys(range(world.replica.model.spec.effective_replicas), 1)
        wrong = status_claims(act.status, by_index, desired or None)
        if wrong:
            raise InvariantError(f"status claims more than it holds ({act.reason}): {'; '.join(wrong)}")

    # -- the loop -------------------------------------------------------------------------------------------
    def one_pass(self) -> Plan:
        sim = self.sim
        assert sim.replica is not None
        world = sim.observe()
        p = plan(world)
        if self.coalescer is not None:
            p = self.coalescer.filter("replica", p)
        self.plans.append(p)
        self.passes += 1
        rv = sim.replica["metadata"]["resourceVersion"]
        for act in p.actions:
            self.journaled(act)
            if isinstance(act, WriteStatus):
                self.truthful(act, world)
            try:
                sim.apply(act, rv)
            except Conflict:
                self.check()
                break
            if sim.replica is not None:
                rv = sim.replica["metadata"]["resourceVersion"]
            self.log.append((sim.now, act))
            if isinstance(act, WriteStatus) and self.coalescer is not None:
                self.coalescer.written("replica")
            self.actions_applied += 1
            self.check()
            if self.actions_applied in self.crash_at:
                if self.coalescer is not None:  # a new process remembers no held-back counts
                    self.coalescer = StatusCoalescer(clock=lambda: self.sim.now.timestamp())
                break  # the controller died here
            if sim.replica is None:
                break
        return p

    def run(self, until: Callable[[Sim], bool], *, limit: float = 3600.0, max_passes: int = 2000) -> None:
        """Run passes until ``until(sim)`` holds at a quiet point, or fail after ``limit`` sim seconds."""
        sim = self.sim
        deadline = sim.now + timedelta(seconds=limit)
        for _ in range(max_passes):
            if sim.replica is None:
                if until(sim):
                    return
                raise InvariantError("replica gone before the condition held")
            p = self.one_pass()
            if sim.replica is None:
                continue
            busy = any(type(a).__name__ not in ("RecordEvent",) for a in p.actions)
            if busy or p.requeue_after == 0.0:
                sim.advance(0.5)  # controllers and kubelet catch up between passes
            else:
                if until(sim):
                    return
                step = self.max_step
                if p.requeue_after is not None:
                    step = min(step, max(p.requeue_after, 0.5))
                nxt = sim.next_event()
                if nxt is not None:
                    step = min(step, max((nxt - sim.now).total_seconds(), 0.5))
                sim.advance(step)
            self.check()
            if sim.now > deadline:
                break
        raise InvariantError(f"did not converge: {self.describe()}")

    def settle(self, until: Callable[[Sim], bool], *, limit: float = 3600.0) -> None:
        self.run(until, limit=limit)

    def describe(self) -> str:
        sim = self.sim
        if sim.replica is None:
            return "replica deleted"
        ready = sim.condition("Ready") or {}
        rows = [
            (r["index"], r["phase"], r.get("runningRevision"), (r.get("operation") or {}).get("step"))
            for r in sim.rows()
        ]
        return f"t={sim.now} pods={sim.live_pods()} rows={rows} Ready={ready.get('reason')}:{ready.get('message')}"


def ready(sim: Sim) -> bool:
    cond = sim.condition("Ready") if sim.replica else None
    return cond is not None and cond["status"] == "True" and cond["reason"] in ("AllInstancesReady", "Staged")


def converged(sim: Sim) -> bool:
    """Ready, every Instance on the update revision, and nothing left in flight."""
    if not ready(sim):
        return False
    st = sim.status
    return all(r.get("operation") is None for r in sim.rows()) and st.get("currentRevision") == st.get(
        "updateRevision"
    )


def rolled_back(sim: Sim, revision: str) -> bool:
    """A ``rollbackToRevision`` roll is done: every row ``Ready`` on ``revision``, nothing in flight. The
    status says it through the rows alone: Go keeps publishing against the spec's revision while the pin
    stands (``planner/status.py``)."""
    rows = sim.rows() if sim.replica else []
    return bool(rows) and all(
        r["phase"] == "Ready" and r.get("runningRevision") == revision and not r.get("operation")
        for r in rows
    )


def end_state(sim: Sim) -> tuple[object, ...]:
    """What a converged replica looks like, for comparing runs with and without crashes."""
    rows = tuple(
        (r["index"], r["incarnation"], r["phase"], r.get("runningRevision"), r.get("activeOrdinal"))
        for r in sim.rows()
    )
    return (tuple(sim.live_pods()), rows, sim.status.get("currentRevision"))


def names(items: Iterable[object]) -> list[str]:
    return [type(i).__name__ for i in items]


def applied(driver: Driver, kind: str) -> list[tuple[datetime, object]]:
    return [(t, a) for t, a in driver.log if type(a).__name__ == kind]


def baseline(scenario: Callable[[frozenset[int]], tuple[Driver, object]]) -> tuple[int, object]:
    """A crash-free run of ``scenario``: how many actions it applies and the state it ends in."""
    d, state = scenario(frozenset())
    return d.actions_applied, state
