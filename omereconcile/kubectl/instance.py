"""``kubectl ome instance list|status|retry-blocks|release-held|reset ir/NAME``.

The Instances are the controller's rows in ``status`` (DenseV1 ``instanceStatuses``, or ColumnarV2
columns read back, :func:`omereconcile.kubectl.state.instance_rows`); live pods cannot make up an
Instance the status lacks, as in OME's ``instance status``. ``status`` adds the Instance's pods (selected
by ``ome.io/inferenceservice``, ``component`` and ``ome.io/instance-index``) with their nodes and
``ome.io/serving`` gate, its last failure, and the recent Warning events of the replica and of those pods.

Two guarded requests, each an annotation the controller answers once and then removes
(``omereconcile.planner.release``, ``omereconcile.planner.reset``, OME ``consumeReleaseHeldRequest`` and
the reset-instances consumer):

- ``release-held --revision R`` writes ``ome.io/release-held-revision``: R is a full revision name or its
  hash, and must name a ``Held`` retry block (OME's ``instance release-held`` refuses otherwise);
- ``reset INDEX|all`` writes ``ome.io/reset-instances`` (a comma-separated index list or ``all``, checked
  as the controller parses it). OME's kubectl-ome has no ``reset``; the annotation is OME's.

Both refuse while an earlier request of the same kind is still on the replica (unanswered).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from omereconcile import replica_table
from omereconcile.kubectl import client as k
from omereconcile.kubectl import state
from omereconcile.kubectl.client import CommandError, UsageError, replica_target
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.guard import GuardedWrite, add_guard_flags, run_guarded
from omereconcile.kubectl.report import source, table

__all__ = ["add_parsers"]

RESET = k.ANNOTATION_RESET_INSTANCES
RELEASE = k.ANNOTATION_RELEASE_HELD_REVISION
SERVING_GATE = "ome.io/serving"
RECENT_EVENTS = 10


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    instance = sub.add_parser(
        "instance", help="a replica's Instances: list, status, retry blocks, release, reset"
    )
    verbs = instance.add_subparsers(dest="verb", required=True, metavar="VERB")

    lst = verbs.add_parser("list", parents=[common], help="the replica's Instances")
    lst.add_argument("target", metavar="ir/NAME")
    lst.add_argument("-o", "--output", choices=["table", "json", "yaml"], default="table")
    lst.set_defaults(func=run_list)

    st = verbs.add_parser("status", parents=[common], help="one Instance, its pods and recent Warning events")
    st.add_argument("target", metavar="ir/NAME")
    st.add_argument("index", metavar="INDEX", type=int)
    st.add_argument("-o", "--output", choices=["table", "wide", "json", "yaml"], default="table")
    st.set_defaults(func=run_status)

    rb = verbs.add_parser("retry-blocks", parents=[common], help="retry authority per target revision")
    rb.add_argument("target", metavar="ir/NAME")
    rb.add_argument("-o", "--output", choices=["table", "json", "yaml"], default="table")
    rb.set_defaults(func=run_retry_blocks)

    rel = verbs.add_parser("release-held", parents=[common], help="release a Held revision for another try")
    rel.add_argument("target", metavar="ir/NAME")
    rel.add_argument("--revision", required=True, help="the Held revision: full name or hash")
    add_guard_flags(rel)
    rel.set_defaults(func=run_release)

    reset = verbs.add_parser(
        "reset", parents=[common], help="rebuild Failed Instances (ome.io/reset-instances)"
    )
    reset.add_argument("target", metavar="ir/NAME")
    reset.add_argument("which", metavar="INDEX[,INDEX...]|all")
    add_guard_flags(reset)
    reset.set_defaults(func=run_reset)


def _short(rev: Any) -> str:
    return state.revision_hash(str(rev)) if rev else "-"


def _op(row: dict[str, Any]) -> str:
    op = row.get("operation") or {}
    if not op:
        return "-"
    text = f"{op.get('type', '')}/{op.get('step', '') or '-'}"
    return text + (f" (waiting: {op['waiting']})" if op.get("waiting") else "")


def run_list(ctx: Ctx) -> int:
    name, _client, replica = ctx.target()
    rows = state.instance_rows(replica)
    lines = [
        ["INDEX", "PHASE", "REVISION", "TARGET", "INCARNATION", "PODS", "SERVING", "AVAILABLE", "OPERATION"]
    ]
    for r in rows:
        lines.append(
            [
                str(r["index"]),
                str(r.get("phase") or "-"),
                _short(r.get("runningRevision")),
                _short(r.get("targetRevision")),
                str(r.get("incarnation") or 0),
                str(r.get("podCount") or 0),
                str(r.get("servingPodCount") or 0),
                str(r.get("availablePodCount") or 0),
                _op(r),
            ]
        )
    text = table(lines) if rows else f'No Instances reported by inferencereplica "{name}".\n'
    ctx.report("InstanceListReport", {"name": name}, {"instances": rows}, text, [source(replica, "Reported")])
    return 0


def _pod_view(pod: dict[str, Any]) -> dict[str, Any]:
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    conds = {cd.get("type"): cd.get("status") for cd in status.get("conditions") or []}
    restarts = sum(int(cs.get("restartCount") or 0) for cs in status.get("containerStatuses") or [])
    return {
        "name": meta.get("name"),
        "node": (pod.get("spec") or {}).get("nodeName") or None,
        "phase": status.get("phase"),
        "ready": conds.get("Ready", "Unknown"),
        "serving": conds.get(SERVING_GATE, "absent"),
        "revision": (meta.get("labels") or {}).get(k.LABEL_REVISION_HASH),
        "incarnation": (meta.get("labels") or {}).get(k.LABEL_INSTANCE_INCARNATION),
        "restarts": restarts,
        "terminating": bool(meta.get("deletionTimestamp")),
    }


def _event_time(ev: dict[str, Any]) -> str:
    return str(
        ev.get("lastTimestamp")
        or ev.get("eventTime")
        or (ev.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


def run_status(ctx: Ctx) -> int:
    args = ctx.args
    name = replica_target(args.target)
    if args.index < 0:
        raise UsageError(f"invalid INDEX {args.index}: an Instance index is not negative")
    client = ctx.client()
    replica = client.replica(name)
    rows = {int(r["index"]): r for r in state.instance_rows(replica)}
    row = rows.get(args.index)
    if row is None:
        known = ",".join(map(str, sorted(rows))) or "none"
        raise CommandError(f'inferencereplica "{name}" reports no Instance {args.index} (Instances: {known})')
    component = (replica.get("spec") or {}).get("component") or ""
    listed = client.pods(name, f"{k.LABEL_COMPONENT}={component},{k.LABEL_INSTANCE_INDEX}={args.index}")
    pods = [_pod_view(p) for p in listed]
    # By kind, name and UID: a name alone also picks up an earlier pod's (or another kind's) events.
    meta = replica.get("metadata") or {}
    events = client.events(k.REPLICA_KIND, name, str(meta.get("uid") or ""), "Warning")
    for pod in listed:
        pmeta = pod.get("metadata") or {}
        events += client.events("Pod", str(pmeta.get("name")), str(pmeta.get("uid") or ""), "Warning")
    events.sort(key=_event_time)
    recent = [
        {
            "time": _event_time(e),
            "object": f"{(e.get('involvedObject') or {}).get('kind')}/{(e.get('involvedObject') or {}).get('name')}",
            "reason": e.get("reason"),
            "message": e.get("message"),
            "count": e.get("count") or 1,
        }
        for e in events[-RECENT_EVENTS:]
    ]
    op = row.get("operation") or {}
    content = {"instance": row, "pods": pods, "warningEvents": recent}
    now = datetime.now(UTC)
    lines = [
        f"Instance:      {name}/{args.index} ({component})",
        f"Phase:         {row.get('phase', '-')}",
        f"Incarnation:   {row.get('incarnation', 0)}",
        f"Revision:      {row.get('runningRevision') or '-'}",
        f"Target:        {row.get('targetRevision') or '-'}",
        f"Operation:     {op.get('type', '-') if op else '-'}"
        + (f" step {op.get('step') or '-'}" if op else ""),
    ]
    if op:
        lines.append(f"  started:     {op.get('startedAt', '-')}")
        if op.get("waiting"):
            lines.append(f"  waiting:     {op['waiting']}")
        if op.get("reason"):
            lines.append(f"  reason:      {op['reason']}")
        if args.output == "wide":
            lines += [
                f"  {k}: {v}"
                for k, v in sorted(op.items())
                if k not in ("type", "step", "startedAt", "waiting", "reason")
            ]
    lines.append(
        f"Pods:          {row.get('podCount', 0)} (serving {row.get('servingPodCount', 0)}, "
        f"available {row.get('availablePodCount', 0)})"
    )
    failure = row.get("lastFailure") or {}
    lines.append(
        "Last failure:  "
        + (
            f"{failure.get('reason', '-')} in {failure.get('podName', '-')}/{failure.get('containerName', '-')} "
            f"exit {failure.get('exitCode', '-')} at {failure.get('time', '-')}: {failure.get('message', '')}".rstrip(
                ": "
            )
            if failure
            else "-"
        )
    )
    text = "\n".join(lines) + "\n\n"
    pod_rows = [["POD", "NODE", "PHASE", "READY", "SERVING", "REVISION", "INCARNATION", "RESTARTS"]]
    for p in pods:
        pod_rows.append(
            [
                str(p["name"]) + (" (terminating)" if p["terminating"] else ""),
                str(p["node"] or "-"),
                str(p["phase"] or "-"),
                str(p["ready"]),
                str(p["serving"]),
                str(p["revision"] or "-"),
                str(p["incarnation"] or "-"),
                str(p["restarts"]),
            ]
        )
    text += table(pod_rows) if pods else "No pods.\n"
    text += "\n"
    if recent:
        ev_rows = [["LAST SEEN", "OBJECT", "REASON", "MESSAGE"]]
        for e in recent:
            seen = (
                replica_table.age({"metadata": {"creationTimestamp": e["time"]}}, now) if e["time"] else "-"
            )
            ev_rows.append([seen, str(e["object"]), str(e["reason"]), str(e["message"])])
        text += table(ev_rows)
    else:
        text += "No recent Warning events.\n"
    ctx.report("InstanceStatusReport", {"name": name}, content, text, [source(replica, "Reported")])
    return 0


def run_retry_blocks(ctx: Ctx) -> int:
    name, _client, replica = ctx.target()
    blocks = [dict(b) for b in (replica.get("status") or {}).get("retryBlocks") or []]
    lines = [["TARGET-REVISION", "STATE", "ATTEMPTS", "NEXT-RETRY", "LAST-FAILURE", "REASON"]]
    for b in blocks:
        lines.append(
            [
                str(b.get("targetRevision") or "-"),
                str(b.get("state") or "-"),
                str(b.get("attemptsStarted") or 0),
                str(b.get("nextRetryAt") or "-"),
                str(b.get("lastFailureAt") or "-"),
                str(b.get("reason") or "-"),
            ]
        )
    held = sum(1 for b in blocks if b.get("state") == "Held")
    text = table(lines) if blocks else f'No retry blocks on inferencereplica "{name}".\n'
    content = {"retryBlocks": blocks, "held": held}
    ctx.report("InstanceRetryBlocksReport", {"name": name}, content, text, [source(replica, "Reported")])
    return 0


def run_release(ctx: Ctx) -> int:
    args = ctx.args
    name, client, replica = ctx.target()
    annotations = (replica.get("metadata") or {}).get("annotations") or {}
    if RELEASE in annotations:
        raise CommandError(
            f'inferencereplica "{name}" already carries {RELEASE}={annotations[RELEASE]!r}, not yet answered by '
            "the controller: wait for it to be answered"
        )
    blocks = (replica.get("status") or {}).get("retryBlocks") or []
    # Go findRetryBlockByRevisionOrHash: the full name or its trailing hash, the first block wins.
    match = next(
        (
            b
            for b in blocks
            if args.revision in (b.get("targetRevision"), state.revision_hash(str(b.get("targetRevision"))))
        ),
        None,
    )
    if match is None or match.get("state") != "Held":
        held = ", ".join(str(b.get("targetRevision")) for b in blocks if b.get("state") == "Held") or "none"
        why = "no retry block" if match is None else f"its retry block is {match.get('state')}, not Held"
        raise CommandError(
            f'cannot release revision "{args.revision}" of inferencereplica "{name}": {why} (Held revisions: {held})'
        )
    revision = str(match["targetRevision"])
    write = GuardedWrite(
        action="instance release-held",
        replica=replica,
        patch={"metadata": {"annotations": {RELEASE: revision}}},
        summary=f"annotate {RELEASE}={revision}: the controller removes the Held block once, then the annotation",
        message="API accepted the release request; it does not mean the controller released or retried it",
        follow_up=f"kubectl ome instance retry-blocks ir/{name} -n {client.namespace}",
        revision_hash=state.revision_hash(revision),
    )
    return run_guarded(ctx, write)


def run_reset(ctx: Ctx) -> int:
    args = ctx.args
    name = replica_target(args.target)
    from omereconcile.planner.reset import parse_reset_value  # the controller's own parse of the value

    parsed = parse_reset_value(args.which)
    if isinstance(parsed, str):
        raise CommandError(
            f'invalid Instance list "{args.which}": "{parsed}" is not a non-negative instance index '
            "(give INDEX[,INDEX...] or all)"
        )
    client = ctx.client()
    replica = client.replica(name)
    annotations = (replica.get("metadata") or {}).get("annotations") or {}
    if RESET in annotations:
        raise CommandError(
            f'inferencereplica "{name}" already carries {RESET}={annotations[RESET]!r}, not yet answered by the '
            "controller: wait for it to be answered"
        )
    every, indices = parsed
    rows = {int(r["index"]): r for r in state.instance_rows(replica)}
    failed = sorted(i for i, r in rows.items() if r.get("phase") == "Failed")
    value = "all" if every else ",".join(map(str, indices))
    named = failed if every else indices
    notes = []
    for i in named:
        phase = rows[i].get("phase") if i in rows else None
        notes.append(f"{i}: {phase or 'no such Instance'}")
    write = GuardedWrite(
        action="instance reset",
        replica=replica,
        patch={"metadata": {"annotations": {RESET: value}}},
        summary=f"annotate {RESET}={value} (now: {'; '.join(notes) or 'no Instance is Failed'}); the controller "
        "deletes the pods of each Failed one and rebuilds it, and skips the rest with a reason",
        message="API accepted the reset request; the controller answers it once with an InstancesReset or "
        "InstancesResetSkipped event and removes the annotation",
        follow_up=f"kubectl ome instance list ir/{name} -n {client.namespace}",
    )
    return run_guarded(ctx, write)
