"""What a replica's status says about its roll, its Instances and its revisions: pure, from raw dicts.

Nothing here reads the API or the clock; the verbs pass in what they read. The rules are the
controller's own, read back from what it publishes (``omereconcile.planner.status.build_status``, Go
``inferencereplica`` ``status.go``):

- the roll target is ``spec.pacing.rollbackToRevision`` when it names a ControllerRevision the replica
  owns, else ``status.updateRevision`` (``omereconcile.planner.revisions.roll_target``);
- a roll is complete when the spec's generation is observed, ``currentRevision`` is the target and every
  desired Instance runs the target and is ``Ready``; ``Ready`` reason ``Staged`` is a partitioned roll
  that is complete up to its partition;
- it is held when ``rolloutHold.gate`` is ``Held`` (a revision out of retries), or paused by
  ``spec.paused``; failed when ``RolloutStalled`` is True or a render block keeps ``Ready`` False;
  a ``Budget`` or ``RetryBlock`` (backoff) hold passes by itself and only shows in the progress line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BLOCK_REASONS",
    "Progress",
    "find_revision",
    "instance_rows",
    "revision_hash",
    "roll_target",
    "rollout_progress",
]

JSON = Mapping[str, Any]

# Ready=False reasons that mean the replica cannot render (01 §6.1): no roll can move until fixed.
BLOCK_REASONS = frozenset(
    {
        "TemplateSourceMissing",
        "ModelNotFound",
        "ModelDisabled",
        "RuntimeNotFound",
        "RuntimeDisabled",
        "RuntimeSelectionFailed",
        "RuntimePieceMissing",
        "RenderFailed",
    }
)


def _condition(obj: JSON, ctype: str) -> JSON:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == ctype:
            return cond
    return {}


def revision_hash(name: str) -> str:
    """The hash a revision name ends in (``llama-pool-engine-5f7c9d2a`` → ``5f7c9d2a``)."""
    return name.rsplit("-", 1)[-1] if "-" in name else name


def find_revision(revisions: Sequence[JSON], text: str) -> JSON | None:
    """A ControllerRevision by its number (``3``), full name, or bare hash."""
    for rev in revisions:
        name = str((rev.get("metadata") or {}).get("name") or "")
        if text in (name, revision_hash(name)) or (
            text.isdigit() and int(text) == int(rev.get("revision") or 0)
        ):
            return rev
    return None


def roll_target(replica: JSON, revisions: Sequence[JSON]) -> str:
    status = replica.get("status") or {}
    wanted = ((replica.get("spec") or {}).get("pacing") or {}).get("rollbackToRevision")
    if wanted and any((r.get("metadata") or {}).get("name") == wanted for r in revisions):
        return str(wanted)
    return str(status.get("updateRevision") or "")


# -- Instances: DenseV1 rows, or ColumnarV2 columns read back into rows ----------------------------------

_TERM = re.compile(r"^(0|[1-9][0-9]*)(?:-(0|[1-9][0-9]*))?$")


def _index_set(text: Any) -> list[int]:
    out: list[int] = []
    for part in str(text or "").split(","):
        match = _TERM.match(part.strip())
        if not match:
            continue
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) else first
        out.extend(range(first, last + 1))
    return out


def _columns_to_rows(cols: JSON) -> list[dict[str, Any]]:
    """ColumnarV2 ``instanceStatusColumns`` (01 §1.4) as DenseV1-shaped rows; absent members default."""
    members = _index_set(cols.get("members"))
    rows: dict[int, dict[str, Any]] = {i: {"index": i, "incarnation": 0, "podCount": 0} for i in members}
    grouped = {
        "phases": "phase",
        "runningRevisions": "runningRevision",
        "targetRevisions": "targetRevision",
        "incarnations": "incarnation",
        "podCounts": "podCount",
        "servingPodCounts": "servingPodCount",
        "availablePodCounts": "availablePodCount",
    }
    for column, key in grouped.items():
        for group in cols.get(column) or []:
            for i in _index_set(group.get("indexes")):
                if i in rows:
                    rows[i][key] = group.get("value")
    for i in _index_set(cols.get("admitted")):
        if i in rows:
            rows[i]["admitted"] = True
    for i in _index_set(cols.get("activeOrdinalOne")):
        if i in rows:
            rows[i]["activeOrdinal"] = 1
    entries = cols.get("entries") or []
    items = entries.items() if isinstance(entries, Mapping) else ((e.get("index"), e) for e in entries)
    for index, entry in items:
        try:
            i = int(index)
        except (TypeError, ValueError):
            continue
        if i in rows and isinstance(entry, Mapping):
            rows[i].update({k: v for k, v in entry.items() if k != "index"})
    return [rows[i] for i in sorted(rows)]


def instance_rows(replica: JSON) -> list[dict[str, Any]]:
    """The Instance rows of ``status``, index order, whichever encoding the controller wrote."""
    status = replica.get("status") or {}
    if status.get("instanceStatusEncoding") == "ColumnarV2":
        return _columns_to_rows(status.get("instanceStatusColumns") or {})
    rows = [dict(r) for r in status.get("instanceStatuses") or [] if isinstance(r, Mapping) and "index" in r]
    return sorted(rows, key=lambda r: int(r["index"]))


# -- the roll ----------------------------------------------------------------------------------------------


@dataclass
class Progress:
    """One look at a roll. ``state``: Complete, Staged, Progressing, Paused, Held, Failed, NotObserved."""

    name: str
    state: str
    target: str
    current: str
    desired: int
    updated: int
    ready: int
    available: int
    in_flight: list[dict[str, Any]] = field(default_factory=list)
    hold: dict[str, Any] = field(default_factory=dict)
    reason: str = ""

    @property
    def done(self) -> bool:
        return self.state in ("Complete", "Staged")

    @property
    def stopped(self) -> bool:
        """Held, paused or failed: waiting longer does not finish it by itself."""
        return self.state in ("Held", "Paused", "Failed")

    def content(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "targetRevision": self.target,
            "currentRevision": self.current,
            "desired": self.desired,
            "updated": self.updated,
            "ready": self.ready,
            "available": self.available,
            "inFlight": self.in_flight,
            "hold": self.hold or None,
            "reason": self.reason or None,
        }

    def line(self) -> str:
        """The progress line, worded as ``kubectl rollout status`` words a Deployment's."""
        who = f'inferencereplica "{self.name}"'
        if self.state == "Complete":
            return f"{who} successfully rolled out (revision {self.target})"
        if self.state == "Staged":
            return f"partitioned roll out complete: {self.reason}"
        if self.state == "NotObserved":
            return f"Waiting for {who} spec update to be observed..."
        counts = (
            f"{self.updated} out of {self.desired} new Instances have been updated, "
            f"{self.ready} ready, {self.available} available"
        )
        parts = [counts]
        for row in self.in_flight:
            op = row.get("operation") or {}
            text = f"Instance {row['index']} {row.get('phase', '')}"
            if op:
                text += f" ({op.get('type', '')} at step {op.get('step', '') or '-'}"
                if op.get("waiting"):
                    text += f", waiting: {op['waiting']}"
                text += ")"
            parts.append(text)
        if self.hold:
            parts.append(f"hold {self.hold.get('gate')}: {self.hold.get('reason')}")
        if self.state == "Paused":
            return f"{who} rollout paused ({self.reason}): {'; '.join(parts)}"
        if self.state == "Held":
            return f"{who} rollout held: {self.reason}"
        if self.state == "Failed":
            return f"{who} rollout failed: {self.reason}"
        return f"Waiting for {who} rollout to finish: {'; '.join(parts)}..."


def rollout_progress(replica: JSON, revisions: Sequence[JSON]) -> Progress:
    meta = replica.get("metadata") or {}
    spec = replica.get("spec") or {}
    status = replica.get("status") or {}
    target = roll_target(replica, revisions)
    current = str(status.get("currentRevision") or "")
    desired = int(spec.get("replicas") or 0) or 1  # 0 or unset runs one Instance on a standalone replica
    rows = [r for r in instance_rows(replica) if r.get("phase") != "Deleting"]
    updated = sum(1 for r in rows if r.get("runningRevision") == target and target)
    progress = Progress(
        name=str(meta.get("name") or ""),
        state="Progressing",
        target=target,
        current=current,
        desired=desired,
        updated=updated,
        ready=int(status.get("readyReplicas") or 0),
        available=int(status.get("availableReplicas") or 0),
        in_flight=[
            {k: r[k] for k in ("index", "phase", "operation", "runningRevision", "targetRevision") if k in r}
            for r in rows
            if r.get("operation") or r.get("phase") not in ("Ready",)
        ],
        hold=dict(status.get("rolloutHold") or {}),
    )
    ready = _condition(replica, "Ready")
    stalled = _condition(replica, "RolloutStalled")
    observed = int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)
    complete = (
        bool(target)
        and current == target
        and len(rows) == desired
        and all(r.get("runningRevision") == target and r.get("phase") == "Ready" for r in rows)
    )
    if not observed:
        progress.state = "NotObserved"
    elif ready.get("status") == "False" and ready.get("reason") in BLOCK_REASONS:
        progress.state, progress.reason = "Failed", f"{ready.get('reason')}: {ready.get('message')}"
    elif complete:
        progress.state = "Complete"
    elif ready.get("reason") == "Staged" and ready.get("status") == "True":
        progress.state, progress.reason = "Staged", str(ready.get("message") or "")
    elif progress.hold.get("gate") == "Held":
        progress.state, progress.reason = "Held", str(progress.hold.get("reason") or "")
    elif stalled.get("status") == "True":
        progress.state = "Failed"
        progress.reason = f"{stalled.get('reason')}: {stalled.get('message')}"
    elif spec.get("paused"):
        progress.state = "Paused"
        progress.reason = f"spec.paused, pauseMode {spec.get('pauseMode') or 'Recover'}"
    return progress
