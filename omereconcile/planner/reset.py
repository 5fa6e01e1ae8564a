"""``ome.io/reset-instances`` (01 §4.8, 03 §8 rule 20): the operator's request to rebuild Failed Instances.

The annotation on the replica names ``all`` (every ``Failed`` Instance) or a comma-separated list of
indices. A pass answers it: it journals a reset operation on every Instance it resets (the status
write comes first, so the pod deletions that follow are explained by status), deletes their pods,
records the answer's events and then removes the annotation, in Go's order (ome-projects/ome
``pkg/controller/v1beta1/inferencereplica/reset_instances.go`` @ ae683e3f,
``consumeResetInstancesRequest``: the events, then the consume). The journal is an operation
``{type: Create, step: Recycle, reason: Reset}`` on the still-``Failed`` row; it deletes the
Instance's pods and, once none is live and the annotation is gone, clears itself, leaving the
``Failed`` row with no operation that the normal repair rebuilds when its gates (retry backoff, held
revision, pause) allow.

Crash safety: a pass that dies after the status write finishes the deletes from the journal. A request
seen again before its removal landed is answered as Go answers a redelivery (``resetInstances``: an
Instance with no pod to delete and no operation to clear is ``nothing to reset``): a journaled Instance
whose pods are all gone or terminating is skipped as ``nothing to reset`` (Go cleared its operation on
the first pass), one with a live pod left is reset again (the journal deletes it; nothing is written).
Nothing is deleted or written twice; the events are recorded at least once, as Go's (a crash between
the events and the removal records the redelivery's answer too).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from omereconcile.actions import RecordEvent, RemoveAnnotation
from omereconcile.planner import rows as R
from omereconcile.planner.context import Ctx
from omereconcile.planner.out import Out
from omereconcile.planner.podstate import live
from omereconcile.planner.rows import Operation, Row, operation_id
from omereconcile.world import PodView
from omerender import constants as c

__all__ = ["RESET_KEY", "ResetAnswer", "answer_reset", "is_reset_journal", "parse_reset_value", "step_reset"]

RESET_KEY = c.ANNOTATION_RESET_INSTANCES
RESET_ALL = "all"
RESET_REASON = "Reset"  # operation.reason of the reset's journal
_INDEX = re.compile(r"[+-]?[0-9]+")
_INT32_MAX = 2**31 - 1
# Operations a reset may clear (OME: none, Create, Restart); others belong to their own machinery.
_RESET_OWNS = frozenset({R.OP_CREATE, "Restart"})


@dataclass(frozen=True, slots=True)
class ResetAnswer:
    rows: list[Row]
    remove: RemoveAnnotation | None
    events: list[RecordEvent]


def is_reset_journal(op: Operation | None) -> bool:
    return (
        op is not None and op.type == R.OP_CREATE and op.step == R.STEP_RECYCLE and op.reason == RESET_REASON
    )


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable text an annotation holds."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif not ch.isprintable():
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def parse_reset_value(value: str) -> tuple[bool, list[int]] | str:
    """``(all, indices)``, or the offending entry when the value is malformed.

    ``all`` is case-sensitive; whitespace around the value and each entry is ignored, duplicates keep
    their first place. An empty value or entry, a negative number or one beyond int32 is malformed.
    """
    trimmed = value.strip()
    if trimmed == RESET_ALL:
        return True, []
    seen: list[int] = []
    for part in trimmed.split(","):
        part = part.strip()
        if not _INDEX.fullmatch(part):
            return part
        n = int(part)
        if n < 0 or n > _INT32_MAX:
            return part
        if n not in seen:
            seen.append(n)
    return False, seen


def _journal(ctx: Ctx, row: Row) -> Row:
    op = row.operation
    target = row.target_revision or (op.target_revision if op is not None else "") or ctx.target
    return replace(
        row,
        operation=Operation(
            id=operation_id(R.OP_CREATE, row.index, ctx.now),
            type=R.OP_CREATE,
            step=R.STEP_RECYCLE,
            target_revision=target,
            started_at=ctx.now,
            last_progress_at=ctx.now,
            reason=RESET_REASON,
        ),
    )


def answer_reset(ctx: Ctx, rows: list[Row], by_index: Mapping[int, Sequence[PodView]]) -> ResetAnswer:
    """Answer a present annotation: the rows with the reset journaled, its removal, and its events."""
    value = ctx.world.replica.annotations.get(RESET_KEY)
    if value is None:
        return ResetAnswer(rows, None, [])
    head = f"InferenceReplica {ctx.namespace}/{ctx.name} component={ctx.component}"
    parsed = parse_reset_value(value)
    if isinstance(parsed, str):
        msg = (
            f"{head}: {RESET_KEY}={_go_quote(value)} rejected: {_go_quote(parsed)} is not a non-negative "
            "instance index; nothing reset"
        )
        remove = RemoveAnnotation(RESET_KEY, f"{RESET_KEY}={value!r} rejected")
        return ResetAnswer(rows, remove, [RecordEvent("Warning", "InstancesResetRejected", msg)])
    all_failed, indices = parsed
    by_row = {r.index: r for r in rows}
    skipped: list[tuple[int, str]] = []
    candidates: list[int] = []

    def classify(row: Row) -> None:
        op = row.operation
        if op is not None and op.type not in _RESET_OWNS:
            skipped.append((row.index, f"owned by {op.type}"))
        else:
            candidates.append(row.index)

    if all_failed:
        for r in rows:
            if r.phase == R.FAILED:
                classify(r)
    else:
        for idx in indices:
            found = by_row.get(idx)
            if found is None:
                skipped.append((idx, "no such instance"))
            elif found.phase != R.FAILED:
                skipped.append((idx, f"Phase={found.phase}"))
            else:
                classify(found)

    reset: list[int] = []
    for idx in candidates:
        row = by_row[idx]
        pods = live(by_index.get(idx, []))
        # Go reset_instances.go anyPodServing: the gate alone (podreadiness.IsServing), on every pod
        # of the Instance, terminating ones included.
        if any(p.gate == "True" for p in by_index.get(idx, [])):
            skipped.append((idx, "still serving"))  # draining serving capacity is the rollout's job
            continue
        journaled = is_reset_journal(row.operation)
        # Go resetInstances: no pod deleted (terminating ones are skipped) and no operation cleared.
        # A journaled reset is an operation Go already cleared: a redelivery of the request (its
        # removal did not land) resets only what is still live.
        if not pods and (row.operation is None or journaled):
            skipped.append((idx, "nothing to reset"))
            continue
        if not journaled:
            by_row[idx] = _journal(ctx, row)
        reset.append(idx)

    events: list[RecordEvent] = []
    if reset:
        events.append(
            RecordEvent(
                "Normal",
                "InstancesReset",
                f"{head}: reset instance(s) {','.join(map(str, reset))} at operator request ({RESET_KEY} "
                "annotation): pods deleted and preserved operation cleared; the lifecycle passes rebuild them",
            )
        )
    if skipped:
        detail = ", ".join(f"{i} ({why})" for i, why in skipped)
        events.append(
            RecordEvent("Normal", "InstancesResetSkipped", f"{head}: reset skipped for instance(s) {detail}")
        )
    elif not reset:
        events.append(
            RecordEvent(
                "Normal",
                "InstancesResetSkipped",
                f"{head}: reset requested for all instances but none is Failed; nothing to reset",
            )
        )
    summary = f"reset {','.join(map(str, reset)) or 'nothing'}"
    remove = RemoveAnnotation(RESET_KEY, f"{RESET_KEY}={value!r} answered: {summary}")
    return ResetAnswer([by_row[r.index] for r in rows], remove, events)


def step_reset(ctx: Ctx, row: Row, pods: Sequence[PodView], out: Out) -> Row:
    """The journaled reset: delete every live pod; once none is live and the request is answered
    (annotation gone), clear the operation: the row is ``Failed`` with no operation, for the repair."""
    alive = live(pods)
    for p in alive:
        out.delete(p, f"{RESET_KEY}: the operator reset Failed Instance {row.index}")
    if alive or RESET_KEY in ctx.world.replica.annotations:
        return row
    return replace(row, operation=None)
