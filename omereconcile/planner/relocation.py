"""Relocation (``autoMigrate``): a failed attempt whose only suspect is the node it ran on steers the
next attempt off that node.

Read from ome-projects/ome 58a57f25 (the newest stored version):
``workload/escalation/disposition.go`` (``DisposeExpiredAttempt`` branch 2, ``recordRelocationDirective``,
``releaseNodeExclusions``, ``migrationModeAllowsRelocation``, ``revisionHasServed``,
``attemptTargetRevision``, ``relocationRecordMessage``, ``dispositionLedgerOwner``),
``workload/audit/audit.go`` (the ledger ConfigMap, ``UpsertEntry``/``trim``, ``PersistLedgerForOwner``),
``workload/audit/autorecover.go`` (``CountAutoRecoverAttempts``, ``RecentAutoRecoverExclusions``,
``ReleaseAutoRecoverExclusions``, ``NodesExcludedForRevision``, ``NewestAutoRecoverEntry``,
``RemoveAutoRecoverEntries``), ``workload/evidence`` ``AttemptSuspectNode``/``SingleLiveNode``,
``workload/ops`` render (``applyRequiredNodeExclusion``, ``WouldExclusionsConflictWithNodeAffinity``,
``termPinsHostnameWithin``) and ``inferencereplica/reconciler.go`` ``reconcileRelocationDirectives``
(the success prune and the projection) and ``stampAutoRelocationSuccess``.

The planner stays pure: the ledger is observed state in (``World.ledger``), and the pass's changes to
it leave as one ``WriteLedger`` action, pinned to the resourceVersion it was read at, ahead of the
status write (Go persists the ledger before it stamps the row).
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from omereconcile.actions import WriteLedger
from omereconcile.planner.rows import READY, Row
from omereconcile.world import LEDGER_SUFFIX, LedgerView, PodView, World, format_time, parse_time
from omerender import constants as c

__all__ = [
    "AUTO_RECOVER",
    "HOSTNAME",
    "LedgerBook",
    "apply_exclusions",
    "attempt_suspect_node",
    "exclusions_conflict",
    "ledger_name",
    "migration_mode_allows",
]

AUTO_RECOVER = "AutoRecover"  # audit.ReasonAutoRecover
FORCE_DELETE = "ForceDelete"  # audit.ReasonForceDelete
FORCE_DELETE_UNREACHABLE = "force-delete-unreachable"  # audit.OutcomeForceDeleteUnreachable
FINALIZER_REPORT = "finalizer-report"  # audit.OutcomeForceDeleteFinalizerReport
RELOCATE_RECREATE = "relocate-recreate"  # audit.OutcomeRelocateRecreate
PHASE_COMPLETED = "Completed"
PHASE_FAILED = "Failed"
MAX_TERMINAL_ENTRIES = 200  # audit.maxTerminalEntries
HOSTNAME = "kubernetes.io/hostname"
# Ours: Go's trim window for status.migrations is not in the index; Auto records beyond this many (the
# oldest first) leave the status so a replica that relocates often does not grow without bound.
MAX_AUTO_RECORDS = 20


def ledger_name(replica_name: str) -> str:
    """``audit.ConfigMapNameForOwner``. The owner is the replica itself (``dispositionLedgerOwner``
    falls back to the owner object when no parent InferenceService is resolved; a standalone replica
    has none here)."""
    return replica_name + LEDGER_SUFFIX


def migration_mode_allows(mode: str | None) -> bool:
    """``migrationModeAllowsRelocation``: Auto, or its alias Surge. An unset mode is the CRD's
    default, Auto (01 §1.3 ``migrationPolicy.mode``); Never turns relocation off."""
    return (mode or "Auto") in ("Auto", "Surge")


def _is_for(e: Mapping[str, Any], component: str, index: int) -> bool:
    """``isAutoRecoverFor``."""
    return (
        e.get("reason") == AUTO_RECOVER
        and e.get("component") == component
        and e.get("sourceInstance") == index
    )


def _on_revision(pod: PodView, revision_hash: str) -> bool:
    return not pod.revision_hash or pod.revision_hash == revision_hash


def attempt_suspect_node(pods: Iterable[PodView], revision_hash: str) -> str:
    """``evidence.AttemptSuspectNode``: ``SingleLiveNode`` over the attempt's own pods. A live pod of
    another revision (a single-pod surge's source) neither names nor vetoes the node; a terminating pod
    or one with no revision label stays in scope. Every pod must be bound, all to one node."""
    own = [p for p in pods if p.terminating or _on_revision(p, revision_hash)]
    nodes = {p.node_name or "" for p in own}
    if not own or "" in nodes or len(nodes) != 1:
        return ""
    return nodes.pop()


def exclusions_conflict(spec: Mapping[str, Any] | None, excluded: Iterable[str]) -> bool:
    """``WouldExclusionsConflictWithNodeAffinity``: every required node-selector term pins
    ``kubernetes.io/hostname`` (operator ``In``) entirely inside the excluded set, so no host is left.
    A term without such a requirement, or one naming a host outside the set, defuses the conflict."""
    wanted = {n for n in excluded if n}
    na = ((spec or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = (na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    if not terms or not wanted:
        return False
    for term in terms:
        pinned = False
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") != HOSTNAME or expr.get("operator") != "In":
                continue
            values = expr.get("values") or []
            pinned = bool(values) and all(v in wanted for v in values)
            break  # termPinsHostnameWithin reads the first hostname In requirement only
        if not pinned:
            return False
    return True


def apply_exclusions(pod: Mapping[str, Any], nodes: Sequence[str]) -> dict[str, Any]:
    """``applyRequiredNodeExclusion`` for each node: a required ``kubernetes.io/hostname NotIn [node]``
    requirement appended to every required node-selector term (a term is made when there is none),
    once per node. Returns a new pod; the input is left alone."""
    out = copy.deepcopy(dict(pod))
    if not nodes:
        return out
    spec = out.setdefault("spec", {})
    affinity = spec.get("affinity") or {}
    spec["affinity"] = affinity
    na = affinity.get("nodeAffinity") or {}
    affinity["nodeAffinity"] = na
    for node in nodes:
        if not node:
            continue
        req = {"key": HOSTNAME, "operator": "NotIn", "values": [node]}
        required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if not required or not required.get("nodeSelectorTerms"):
            na["requiredDuringSchedulingIgnoredDuringExecution"] = {
                "nodeSelectorTerms": [{"matchExpressions": [req]}]
            }
            continue
        for term in required["nodeSelectorTerms"]:
            exprs = term.setdefault("matchExpressions", [])
            if not any(
                e.get("key") == HOSTNAME and e.get("operator") == "NotIn" and node in (e.get("values") or [])
                for e in exprs
            ):
                exprs.append(copy.deepcopy(req))
    return out


def _entry(
    request_uuid: str, component: str, index: int, node: str, revision: str, now: datetime
) -> dict[str, Any]:
    """A relocation directive as ``audit.Entry`` marshals it (field order and ``omitempty`` kept)."""
    stamp = format_time(now)
    return {
        "requestUUID": request_uuid,
        "component": component,
        "sourceInstance": index,
        "phase": PHASE_COMPLETED,
        "reason": AUTO_RECOVER,
        "fromNode": node,
        "revision": revision,
        "startedAt": stamp,
        "completedAt": stamp,
        "outcome": RELOCATE_RECREATE,
    }


class LedgerBook:
    """The pass's copy of the ledger: read once from ``World.ledger``, changed by the disposition, the
    unschedulable release and the success prune, and written back as one ``WriteLedger``.

    ``available`` is False when the ledger was not observed or did not parse: then nothing is recorded
    and no exclusion is rendered (Go fails the disposition on a load error and renders without
    exclusions; here the attempt is disposed without relocation and the pass goes on)."""

    def __init__(self, view: LedgerView | None, replica_name: str, max_attempts: int) -> None:
        self.view = view
        self.name = ledger_name(replica_name)
        self.max_attempts = max_attempts
        self.available = view is not None and view.unreadable is None
        self.entries: list[dict[str, Any]] = [dict(e) for e in view.entries] if view is not None else []
        self.dirty = False
        self.records: list[dict[str, Any]] = []  # Relocated status records made this pass
        # Force-delete rows (Go ``recordForceDeleteLedgerEntry``): persisted after the pod writes, as
        # Go writes them after the delete (a crash loses the record, never repeats the action).
        self.after_pods: list[dict[str, Any]] = []
        self.wrote_early = False

    # -- audit/autorecover.go --------------------------------------------------------------------
    def count_attempts(self, component: str, index: int) -> int:
        """``CountAutoRecoverAttempts``: every AutoRecover entry of the Instance, released or not."""
        return sum(1 for e in self.entries if _is_for(e, component, index))

    def recent_exclusions(self, component: str, index: int, limit: int) -> list[tuple[str, str]]:
        """``RecentAutoRecoverExclusions``: (node, revision) of the newest ``limit`` distinct nodes, in
        append order; entries without a node or revision, or released, exclude nothing."""
        if limit <= 0:
            return []
        matched = [
            (str(e.get("fromNode")), str(e.get("revision")))
            for e in self.entries
            if _is_for(e, component, index)
            and e.get("fromNode")
            and e.get("revision")
            and not e.get("released")
        ]
        seen: set[str] = set()
        newest_first: list[tuple[str, str]] = []
        for node, rev in reversed(matched):
            if len(newest_first) >= limit:
                break
            if node in seen:
                continue
            seen.add(node)
            newest_first.append((node, rev))
        return list(reversed(newest_first))

    def excluded_nodes(
        self, component: str, index: int, revision: str, limit: int | None = None
    ) -> list[str]:
        """``NodesExcludedForRevision`` over the projection bounded by ``maxAttempts``
        (``reconcileRelocationDirectives``): the nodes a render of this Instance at ``revision``
        excludes. None while relocation is off (no budget) or the ledger is unavailable."""
        if not self.available or self.max_attempts <= 0 or not revision:
            return []
        bound = self.max_attempts if limit is None else limit
        return [n for n, rev in self.recent_exclusions(component, index, bound) if rev == revision]

    def newest(self, component: str, index: int) -> Mapping[str, Any] | None:
        """``NewestAutoRecoverEntry``."""
        found: Mapping[str, Any] | None = None
        for e in self.entries:
            if _is_for(e, component, index):
                found = e
        return found

    def release(self, component: str, index: int, revision: str) -> list[str]:
        """``ReleaseAutoRecoverExclusions``: mark released every exclusion held for ``revision``; the
        entries stay (they still count on the budget). Returns the distinct nodes released."""
        if not self.available or not revision:
            return []
        released: list[str] = []
        for e in self.entries:
            if not _is_for(e, component, index) or e.get("released") or not e.get("fromNode"):
                continue
            if e.get("revision") != revision:
                continue
            e["released"] = True
            self.dirty = True
            if e["fromNode"] not in released:
                released.append(str(e["fromNode"]))
        return released

    def prune_ready(self, component: str, rows: Iterable[Row]) -> None:
        """``reconcileRelocationDirectives`` step 1 with ``RemoveAutoRecoverEntries``: an Instance
        observed ``Ready`` with no operation proved its placement, so its directives go (budget and
        exclusion memory reset)."""
        if not self.available or not self.entries:
            return
        done = {r.index for r in rows if r.phase == READY and r.operation is None}
        kept = [e for e in self.entries if not any(_is_for(e, component, i) for i in done)]
        if len(kept) != len(self.entries):
            self.entries = kept
            self.dirty = True

    def upsert(self, entry: dict[str, Any]) -> None:
        """``Ledger.UpsertEntry`` and ``trim``: replace the same UUID in place or append, then keep only
        the newest ``maxTerminalEntries`` terminal entries (Started ones are never dropped)."""
        for i, e in enumerate(self.entries):
            if e.get("requestUUID") == entry["requestUUID"]:
                self.entries[i] = entry
                break
        else:
            self.entries.append(entry)
        terminal = [
            i for i, e in enumerate(self.entries) if e.get("phase") in (PHASE_COMPLETED, PHASE_FAILED)
        ]
        drop = set(terminal[: max(len(terminal) - MAX_TERMINAL_ENTRIES, 0)])
        self.entries = [e for i, e in enumerate(self.entries) if i not in drop]
        self.dirty = True

    # -- recordRelocationDirective -----------------------------------------------------------------
    def record(
        self,
        *,
        component: str,
        index: int,
        node: str,
        revision: str,
        attempt_started: datetime,
        attempt_id: str,
        replica_uid: str,
        now: datetime,
        specs: Sequence[Mapping[str, Any] | None],
    ) -> tuple[bool, int, str]:
        """The three guards, then the directive. Returns (recorded, attempt ordinal, request UUID);
        a replay (the directive of this very attempt already persisted) is recorded with ordinal 0 and
        nothing new is written or announced."""
        newest = self.newest(component, index)
        # An operation with no start (the epoch) cannot prove the entry postdates it: record normally.
        if newest is not None and newest.get("fromNode") == node and attempt_started.timestamp() > 0:
            completed = parse_time(newest.get("completedAt"))
            if completed is not None and completed > attempt_started:
                return True, 0, str(newest.get("requestUUID") or "")
        exclusions = [
            n for n, rev in self.recent_exclusions(component, index, self.max_attempts - 1) if rev == revision
        ] + [node]
        if any(exclusions_conflict(spec, exclusions) for spec in specs):
            return False, 0, ""
        attempts = self.count_attempts(component, index)
        if attempts >= self.max_attempts:
            return False, 0, ""
        # Go draws a random UUID; the planner has no randomness, so the UUID is derived from the
        # replica, the attempt and the node (unique per directive, the same if a pass is replanned).
        request = str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"ome-relocation/{replica_uid}/{index}/{attempt_id}/{node}")
        )
        self.upsert(_entry(request, component, index, node, revision, now))
        return True, attempts + 1, request

    # -- force-delete records (ops/force_delete.go) --------------------------------------------------
    def record_force_delete(
        self, *, component: str, index: int, pod: PodView, outcome: str, now: datetime
    ) -> None:
        """``recordForceDeleteLedgerEntry``: the terminal ForceDelete row keyed by the pod's UID (one per
        pod object, replaced on a repeat), written after the pass's pod writes."""
        if not self.available:
            return
        stamp = format_time(now)
        self.after_pods.append(
            {
                "requestUUID": pod.uid,
                "component": component,
                "sourceInstance": index,
                "phase": PHASE_COMPLETED,
                "reason": FORCE_DELETE,
                "fromNode": pod.node_name or "",
                "startedAt": stamp,
                "completedAt": stamp,
                "outcome": outcome,
            }
        )

    def finalizer_reported(self, uid: str) -> bool:
        """``reportFinalizerBlockedPod``'s dedup: a finalizer-report row for this pod UID already stands
        (an unreachable row does not count: a pod that outlived its force-delete warns anew)."""
        return any(
            e.get("requestUUID") == uid
            and e.get("reason") == FORCE_DELETE
            and e.get("outcome") == FINALIZER_REPORT
            for e in [*self.entries, *self.after_pods]
        )

    # -- the writes --------------------------------------------------------------------------------
    def write_after_pods(self, owner: Mapping[str, Any]) -> WriteLedger | None:
        """The force-delete rows of the pass, after its pod writes: chained to the pass's first ledger
        write when there was one (the executor pins it to the version that write left)."""
        if not self.after_pods or not self.available or self.view is None:
            return None
        for row in self.after_pods:
            self.upsert(dict(row))
        self.after_pods = []
        chained = self.wrote_early
        self.wrote_early = False  # the rows are in; ``write`` would now carry them too
        write = self.write(owner)
        if write is None:
            return None
        return replace(write, chained=chained, reason="persist the force-delete audit rows of this pass")

    def write(self, owner: Mapping[str, Any]) -> WriteLedger | None:
        """The pass's ``WriteLedger``, or None when nothing changed. The body is what Go's
        ``json.Marshal(ledger)`` writes; the controller reference is claimed as ``claimControllerRef``
        does (a stale controller reference replaced, other references kept)."""
        if not self.dirty or not self.available or self.view is None:
            return None
        self.dirty = False
        self.wrote_early = True
        data = json.dumps({"entries": self.entries or None}, separators=(",", ":"), ensure_ascii=False)
        refs = [dict(r) for r in self.view.owner_references]
        ours = any(r.get("controller") and r.get("uid") == owner.get("uid") for r in refs)
        owner_refs = None
        if not ours:
            owner_refs = [r for r in refs if not r.get("controller")] + [dict(owner)]
        return WriteLedger(
            name=self.name,
            data=data,
            resource_version=self.view.resource_version if self.view.exists else None,
            labels={c.LABEL_MANAGED_BY: c.MANAGED_BY_VALUE},
            owner_references=tuple(owner_refs) if owner_refs is not None else None,
            reason="persist the relocation ledger (compare-and-swap on the version read)",
        )


def owner_reference(world: World) -> dict[str, Any]:
    """The replica as the ledger ConfigMap's controller owner (``metav1.NewControllerRef``)."""
    rep = world.replica
    return {
        "apiVersion": c.API_VERSION,
        "kind": c.REPLICA_KIND,
        "name": rep.name,
        "uid": rep.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def relocation_record(
    request: str, index: int, node: str, attempt: int, detail: str, now: datetime
) -> dict[str, Any]:
    """The born-terminal ``Relocated`` record ``recordRelocationDirective`` mirrors into
    ``status.migrations`` (``MigrationStatus`` field names; the deadline, required, is stamped now)."""
    stamp = format_time(now)
    message = f"relocation directive recorded; rebuild steered off node {node}"
    if detail:
        message += f" ({detail})"
    return {
        "requestUUID": request,
        "trigger": "Auto",
        "sourceInstance": index,
        "fromNode": node,
        "phase": "Relocated",
        "attempt": attempt,
        "reason": AUTO_RECOVER,
        "message": message,
        "startedAt": stamp,
        "deadline": stamp,
        "completedAt": stamp,
    }


def merge_migrations(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]], rows: Iterable[Row], now: datetime
) -> list[dict[str, Any]]:
    """``status.migrations`` after the pass: ``stampAutoRelocationSuccess`` first (the newest
    un-succeeded Auto record of each Instance observed ``Ready`` with no operation gets
    ``succeeded: true`` and ``completedAt`` now), then this pass's new records appended; Auto records
    beyond ``MAX_AUTO_RECORDS`` are dropped oldest first."""
    out = [dict(m) for m in old]
    for row in rows:
        if row.phase != READY or row.operation is not None:
            continue
        pos = -1
        for i, m in enumerate(out):
            if (
                m.get("trigger") != "Auto"
                or m.get("sourceInstance") != row.index
                or m.get("succeeded") is True
            ):
                continue
            if pos < 0 or str(m.get("startedAt") or "") >= str(out[pos].get("startedAt") or ""):
                pos = i
        if pos >= 0:
            out[pos] = {**out[pos], "succeeded": True, "completedAt": format_time(now)}
    known = {m.get("requestUUID") for m in out}
    out.extend(dict(m) for m in new if m.get("requestUUID") not in known)
    autos = [i for i, m in enumerate(out) if m.get("trigger") == "Auto"]
    drop = set(autos[: max(len(autos) - MAX_AUTO_RECORDS, 0)])
    return [m for i, m in enumerate(out) if i not in drop]
