"""The live roll as one tree: replica → revisions → Instances → pods, with recent Warning events.

Pure: built from the objects a verb read (the replica, its ControllerRevisions, its pods, the Nodes,
the namespace's Warning events) and the time it read them, so a captured screen is reproducible.
``rollout get`` (:mod:`omereconcile.kubectl.live`) reads and follows the objects; this module decides
what the tree holds (:func:`build_tree`, the ``content`` of the ``RolloutTreeReport``) and how it reads
on a screen (:func:`render_tree`).

Where each part comes from:

- the replica's roll (state, target, counts, hold, paused) is :func:`omereconcile.kubectl.state.
  rollout_progress`'s, so ``rollout get`` and ``rollout status`` never disagree;
- strategy, budgets and partition are the spec as the controller reads it (``omereconcile.planner.
  context.build_context``: ``lifecycle.updateStrategy.type``, default ``SurgeThenDrain``;
  ``rollingUpdate.maxSurge|maxUnavailable``; ``pacing.partition``, else ``rollingUpdate.partition``),
  printed as written (a percentage stays a percentage);
- an Instance sits under the revision it runs (``runningRevision``), with the one it rolls to named;
  its time in step counts from the operation's ``lastProgressAt`` (the controller touches it when a
  step changes, Go ``StampStep(..., updateProgress=true)``), else ``startedAt``: status keeps no step
  start of its own, so after a terminal-pod recycle (which also touches ``lastProgressAt``) the time is
  since that recycle. The deadline is the operation's ``deadline``;
- a pod sits under the Instance its ``ome.io/instance-index`` label names, with its node's state
  (``Ready`` condition, ``node.kubernetes.io/unreachable`` taint, cordon);
- a Warning event sits under the Instance of the pod it concerns (by ``involvedObject.uid``); an event
  of the replica (by its UID) sits under the Instance its message names as the controller names one
  (``component=C instance=N``), else under the replica; events older than the window are left out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar

from omereconcile.kubectl import state
from omereconcile.replica_table import human_duration

__all__ = ["Palette", "build_tree", "parse_time", "render_tree"]

JSON = Mapping[str, Any]

LABEL_INSTANCE_INDEX = "ome.io/instance-index"
LABEL_REVISION_HASH = "ome.io/revision-hash"
SERVING_GATE = "ome.io/serving"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
DEFAULT_STRATEGY = "SurgeThenDrain"  # omereconcile.planner.context.SURGE
# How the controller names an Instance in a replica's event (``planner.context.Ctx.instance_key``,
# Go's ``component=%s instance=%d``): such an event concerns that Instance.
_INSTANCE_SUBJECT = re.compile(r"\bcomponent=\S+ instance=(\d+)\b")


def parse_time(value: Any) -> datetime | None:
    """RFC 3339 as the API server writes it (also with fractions, as ``eventTime``); aware, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _seconds(since: Any, now: datetime) -> int | None:
    at = parse_time(since)
    return None if at is None else int((now - at).total_seconds())


def _cond(obj: JSON, ctype: str) -> JSON:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, Mapping) and c.get("type") == ctype:
            return c
    return {}


def event_time(ev: JSON) -> str:
    """When an event last happened: ``lastTimestamp``, ``series.lastObservedTime``, ``eventTime``, else
    its creation (core/v1 events carry one or the other depending on who wrote them)."""
    return str(
        ev.get("lastTimestamp")
        or (ev.get("series") or {}).get("lastObservedTime")
        or ev.get("eventTime")
        or (ev.get("metadata") or {}).get("creationTimestamp")
        or ""
    )


def node_state(node: JSON | None) -> str:
    """``Ready``, ``NotReady``, ``Unknown`` (the kubelet stopped reporting), with ``unreachable`` and
    ``SchedulingDisabled`` as kubectl adds them; ``?`` when the Node could not be read."""
    if node is None:
        return "?"
    ready = _cond(node, "Ready")
    status = str(ready.get("status") or "Unknown")
    text = {"True": "Ready", "False": "NotReady"}.get(status, "Unknown")
    taints = {
        str(t.get("key")) for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, Mapping)
    }
    if UNREACHABLE_TAINT in taints:
        text += ",unreachable"
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _pod(pod: JSON, nodes: Mapping[str, JSON] | None, now: datetime) -> dict[str, Any]:
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in status.get("conditions") or [] if isinstance(c, Mapping)}
    restarts = sum(int(cs.get("restartCount") or 0) for cs in status.get("containerStatuses") or [])
    waiting = [
        str((cs.get("state") or {}).get("waiting", {}).get("reason") or "")
        for cs in status.get("containerStatuses") or []
        if (cs.get("state") or {}).get("waiting")
    ]
    node = (pod.get("spec") or {}).get("nodeName") or None
    return {
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
        "node": node,
        "nodeState": (node_state(nodes.get(node)) if nodes is not None else "?") if node else None,
        "phase": status.get("phase"),
        "ready": conds.get("Ready", "Unknown"),
        "serving": conds.get(SERVING_GATE, "absent"),
        "waiting": next((w for w in waiting if w), None),
        "revision": (meta.get("labels") or {}).get(LABEL_REVISION_HASH),
        "restarts": restarts,
        "createdAt": meta.get("creationTimestamp"),
        "ageSeconds": _seconds(meta.get("creationTimestamp"), now),
        "terminating": bool(meta.get("deletionTimestamp")),
    }


def _event(ev: JSON, now: datetime) -> dict[str, Any]:
    inv = ev.get("involvedObject") or {}
    return {
        "time": event_time(ev),
        "ageSeconds": _seconds(event_time(ev), now),
        "object": f"{inv.get('kind')}/{inv.get('name')}",
        "reason": ev.get("reason"),
        "message": ev.get("message"),
        "count": int(ev.get("count") or (ev.get("series") or {}).get("count") or 1),
    }


def _instance(row: JSON, now: datetime) -> dict[str, Any]:
    op = dict(row.get("operation") or {})
    out: dict[str, Any] = {
        "index": int(row["index"]),
        "phase": row.get("phase"),
        "incarnation": row.get("incarnation"),
        "runningRevision": row.get("runningRevision"),
        "targetRevision": row.get("targetRevision"),
        "operation": None,
        "lastFailure": row.get("lastFailure") or None,
        "pods": [],
        "warningEvents": [],
    }
    if op:
        since = op.get("lastProgressAt") or op.get("startedAt")
        deadline = parse_time(op.get("deadline"))
        out["operation"] = {
            "type": op.get("type"),
            "step": op.get("step"),
            "waiting": op.get("waiting"),
            "reason": op.get("reason"),
            "startedAt": op.get("startedAt"),
            "stepSince": since,
            "inStepSeconds": _seconds(since, now),
            "deadline": op.get("deadline"),
            "deadlineInSeconds": None if deadline is None else int((deadline - now).total_seconds()),
            "retryCount": op.get("retryCount") or 0,
        }
    return out


def build_tree(
    replica: JSON,
    revisions: Sequence[JSON],
    pods: Sequence[JSON],
    nodes: Mapping[str, JSON] | None,
    events: Sequence[JSON],
    now: datetime,
    window_seconds: float = 300.0,
) -> dict[str, Any]:
    """The tree as a document (``content`` of ``RolloutTreeReport``). ``nodes`` by name, or None when
    the Nodes could not be read (their state is then ``?``); ``events`` any of the namespace's (only
    Warnings of the replica or its pods, newer than ``window_seconds``, are kept)."""
    meta, spec, status = replica.get("metadata") or {}, replica.get("spec") or {}, replica.get("status") or {}
    progress = state.rollout_progress(replica, revisions)
    us = (spec.get("lifecycle") or {}).get("updateStrategy") or {}
    ru = us.get("rollingUpdate") or {}
    partition = (spec.get("pacing") or {}).get("partition")
    if partition is None:
        partition = ru.get("partition")
    component = str(spec.get("component") or "")
    rows = state.instance_rows(replica)
    instances = {int(r["index"]): _instance(r, now) for r in rows}
    pod_index: dict[str, int] = {}
    stray: list[dict[str, Any]] = []
    for pod in sorted(pods, key=lambda p: str((p.get("metadata") or {}).get("name"))):
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if component and labels.get("component") not in (None, component):
            continue
        view = _pod(pod, nodes, now)
        try:
            index = int(str(labels.get(LABEL_INSTANCE_INDEX)))
        except (TypeError, ValueError):
            index = -1
        if index in instances:
            instances[index]["pods"].append(view)
            pod_index[view["uid"]] = index
        else:
            stray.append(view)
    replica_events: list[dict[str, Any]] = []
    uid = str(meta.get("uid") or "")
    for ev in sorted(events, key=event_time):
        if ev.get("type") != "Warning":
            continue
        age = _seconds(event_time(ev), now)
        if age is None or age > window_seconds:
            continue
        inv = ev.get("involvedObject") or {}
        inv_uid = str(inv.get("uid") or "")
        if inv.get("kind") == "Pod" and inv_uid in pod_index:
            instances[pod_index[inv_uid]]["warningEvents"].append(_event(ev, now))
        elif inv.get("kind") == state_kind(replica) and inv_uid and inv_uid == uid:
            named = _INSTANCE_SUBJECT.search(str(ev.get("message") or ""))
            if named and int(named.group(1)) in instances:
                instances[int(named.group(1))]["warningEvents"].append(_event(ev, now))
            else:
                replica_events.append(_event(ev, now))
    # The roles ``rollout history`` prints: current, update, and a rollback's target.
    roles = {
        "current": str(status.get("currentRevision") or ""),
        "update": str(status.get("updateRevision") or ""),
        "rollback-target": str((spec.get("pacing") or {}).get("rollbackToRevision") or ""),
    }
    rev_nodes: list[dict[str, Any]] = []
    known: set[str] = set()
    for rev in sorted(revisions, key=lambda r: -int(r.get("revision") or 0)):
        name = str((rev.get("metadata") or {}).get("name") or "")
        known.add(name)
        rev_roles = [role for role, value in roles.items() if value == name]
        members = [i for i in instances.values() if i["runningRevision"] == name]
        if not members and not rev_roles and not any(i["targetRevision"] == name for i in instances.values()):
            continue  # an old revision nothing runs or rolls to: history lists it
        rev_nodes.append(
            {
                "revision": int(rev.get("revision") or 0),
                "name": name,
                "hash": state.revision_hash(name),
                "roles": rev_roles,
                "createdAt": (rev.get("metadata") or {}).get("creationTimestamp"),
                "instances": [i["index"] for i in members],
                "rollingHere": sorted(
                    i["index"]
                    for i in instances.values()
                    if i["targetRevision"] == name and i["runningRevision"] != name
                ),
            }
        )
    unknown = sorted({str(i["runningRevision"] or "") for i in instances.values()} - known)
    for name in unknown:  # a revision not (or no longer) listed, or an Instance not yet running one
        rev_nodes.append(
            {
                "revision": None,
                "name": name or None,
                "hash": state.revision_hash(name) if name else None,
                "roles": [],
                "createdAt": None,
                "instances": [i["index"] for i in instances.values() if (i["runningRevision"] or "") == name],
                "rollingHere": [],
            }
        )
    hold = progress.hold or None
    return {
        "replica": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace"),
            "uid": uid,
            "generation": meta.get("generation"),
            "observedGeneration": status.get("observedGeneration"),
            "state": progress.state,
            "reason": progress.reason or None,
            "strategy": us.get("type") or DEFAULT_STRATEGY,
            "maxSurge": ru.get("maxSurge"),
            "maxUnavailable": ru.get("maxUnavailable"),
            "partition": partition,
            "paused": bool(spec.get("paused")),
            "pauseMode": (spec.get("pauseMode") or "Recover") if spec.get("paused") else None,
            "hold": hold,
            "targetRevision": progress.target,
            "currentRevision": progress.current,
            "desired": progress.desired,
            "updated": progress.updated,
            "ready": progress.ready,
            "available": progress.available,
            "warningEvents": replica_events,
        },
        "revisions": rev_nodes,
        "instances": [instances[i] for i in sorted(instances)],
        "unassignedPods": stray,
        "eventWindowSeconds": int(window_seconds),
    }


def state_kind(replica: JSON) -> str:
    return str(replica.get("kind") or "InferenceReplica")


# -- the screen ------------------------------------------------------------------------------------------


class Palette:
    """ANSI colours, or none (``NO_COLOR``, a pipe): the text is the same either way."""

    CODES: ClassVar[dict[str, str]] = {
        "green": "32",
        "yellow": "33",
        "red": "31",
        "dim": "2",
        "bold": "1",
        "cyan": "36",
    }

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, colour: str, text: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{self.CODES[colour]}m{text}\x1b[0m"


_GOOD = {"Ready", "Complete", "True", "Running", "Succeeded", "Staged"}
_BAD = {"Failed", "Held", "Paused", "False", "Unknown", "NotReady", "CrashLoopBackOff", "ImagePullBackOff"}


def _tone(text: str) -> str:
    head = text.split(",")[0].split(" ")[0]
    if head in _BAD:
        return "red"
    if head in _GOOD:
        return "green"
    return "yellow"


def _dur(seconds: int | None) -> str:
    return "-" if seconds is None else human_duration(max(seconds, 0))


def _budget(value: Any) -> str:
    return "-" if value is None else str(value)


def _op_text(op: JSON, c: Palette) -> str:
    text = f"{op.get('type')}/{op.get('step') or '-'} for {_dur(op.get('inStepSeconds'))}"
    left = op.get("deadlineInSeconds")
    if op.get("deadline"):
        text += (
            f", deadline in {_dur(left)}"
            if left is not None and left >= 0
            else c("red", f", deadline passed {_dur(-(left or 0))} ago")
        )
    if op.get("waiting"):
        text += ", waiting: " + c("yellow", str(op["waiting"]))
    if op.get("retryCount"):
        text += f", retry {op['retryCount']}"
    return text


def render_tree(tree: JSON, c: Palette, *, wide: bool = False) -> str:
    """The tree for people: a header of the replica's roll, then revisions → Instances → pods → events."""
    r = tree["replica"]
    lines = [
        f"Name:        {r['name']} ({r['namespace']})",
        f"Status:      {c(_tone(str(r['state'])), str(r['state']))}"
        # a hold or a pause has its own line below; say its reason once, there
        + (f": {r['reason']}" if r.get("reason") and r["state"] not in ("Held", "Paused") else ""),
        f"Strategy:    {r['strategy']}  maxSurge {_budget(r['maxSurge'])}  maxUnavailable "
        f"{_budget(r['maxUnavailable'])}  partition {_budget(r['partition'])}",
        "Paused:      " + (c("red", f"yes ({r['pauseMode']})") if r["paused"] else "no"),
    ]
    hold = r.get("hold")
    lines.append(
        "Hold:        "
        + (
            c("red" if hold.get("gate") == "Held" else "yellow", f"{hold.get('gate')}: {hold.get('reason')}")
            if hold
            else "-"
        )
    )
    lines.append(
        f"Instances:   {r['desired']} desired, {r['updated']} updated, {r['ready']} ready, {r['available']} available"
    )
    lines.append(f"Revisions:   current {r['currentRevision'] or '-'}, target {r['targetRevision'] or '-'}")
    eta = tree.get("eta")
    if isinstance(eta, Mapping) and eta.get("text"):
        lines.append(f"ETA:         {eta['text']}")
        if eta.get("assumes") and eta["assumes"] != "-":
            lines.append(f"Assumes:     {eta['assumes']}")
    lines.append("")
    by_index = {i["index"]: i for i in tree["instances"]}
    top: list[tuple[str, list[Any]]] = []
    for rev in tree["revisions"]:
        label = (
            f"revision {rev['revision']} {rev['name']}"
            if rev["revision"] is not None
            else f"revision {rev['name'] or '(none yet)'} (not listed)"
        )
        if rev["roles"]:
            label += " [" + ",".join(rev["roles"]) + "]"
        if rev["rollingHere"]:
            here = rev["rollingHere"]
            label += f" <- Instance{'s' if len(here) > 1 else ''} {','.join(map(str, here))} rolling here"
        top.append((c("bold", label), [by_index[i] for i in rev["instances"] if i in by_index]))
    out = list(lines)
    out.append(c("bold", f"inferencereplica.ome.io/{r['name']}"))
    for ev in r.get("warningEvents") or []:
        top.insert(0, (_event_text(ev, c, str(r["name"])), []))
    for n, (label, members) in enumerate(top):
        last = n == len(top) - 1
        out.append(("└── " if last else "├── ") + label)
        pad = "    " if last else "│   "
        for m, inst in enumerate(members):
            out += _instance_lines(inst, c, pad, m == len(members) - 1, wide, str(r["name"]))
    if tree.get("unassignedPods"):
        out.append("pods of no reported Instance: " + ", ".join(p["name"] for p in tree["unassignedPods"]))
    return "\n".join(out) + "\n"


# The subject the controller opens its messages with (Go's ``InferenceReplica <ns>/<name> component=<c>
# [instance=<n>]`` and ``OMENative component=<c>[ instance=<n>]:``).
_SUBJECT = re.compile(
    r"^(?:InferenceReplica (?P<ref>\S+) |OMENative )component=\S+(?: instance=(?P<index>\d+))?:? "
)


def _event_text(ev: JSON, c: Palette, replica: str, instance: int | None = None) -> str:
    count = f" (x{ev['count']})" if int(ev.get("count") or 1) > 1 else ""
    # The replica's own events need not name it: the tree already does (a pod's event names the pod).
    own = ev["object"] == f"InferenceReplica/{replica}"
    about = "" if own else f" {ev['object']}:"
    message = str(ev["message"])
    subject = _SUBJECT.match(message) if own else None
    if subject is not None and (subject["ref"] is None or subject["ref"].endswith(f"/{replica}")):
        # Nor need its message: the line sits under the replica, or under the Instance it names (a
        # standalone replica has one component); -o json keeps the message whole.
        index = subject["index"]
        keep = f"Instance {index}: " if index is not None and int(index) != instance else ""
        message = keep + message[subject.end() :]
    return c("red", f"⚠ {ev['reason']}") + f" {_dur(ev.get('ageSeconds'))} ago{count}{about} {message}"


def _instance_lines(inst: JSON, c: Palette, pad: str, last: bool, wide: bool, replica: str) -> list[str]:
    phase = str(inst.get("phase") or "-")
    head = f"Instance {inst['index']} {c(_tone(phase), phase)}"
    if inst.get("targetRevision") and inst["targetRevision"] != inst.get("runningRevision"):
        head += f" -> {state.revision_hash(str(inst['targetRevision']))}"
    op = inst.get("operation")
    if op:
        head += "  " + _op_text(op, c)
    lines = [pad + ("└── " if last else "├── ") + head]
    child = pad + ("    " if last else "│   ")
    items: list[str] = []
    failure = inst.get("lastFailure")
    if failure:
        items.append(
            c("red", "last failure")
            + f": {failure.get('reason', '-')} in {failure.get('podName', '-')}"
            + (f" exit {failure['exitCode']}" if failure.get("exitCode") is not None else "")
            + f" at {failure.get('time', '-')}"
        )
    for p in inst.get("pods") or []:
        node = p.get("node") or "-"
        nstate = p.get("nodeState")
        node_text = f"{node} ({c(_tone(nstate), nstate)})" if nstate else node
        ready = str(p.get("ready"))
        serving = str(p.get("serving"))
        text = (
            f"pod {p['name']}{' (terminating)' if p.get('terminating') else ''}  node {node_text}  ready "
            f"{c(_tone(ready), ready)}  serving {c(_tone(serving) if serving != 'absent' else 'dim', serving)}  "
            f"restarts {p['restarts']}  age {_dur(p.get('ageSeconds'))}"
        )
        if p.get("waiting"):
            text += "  " + c("red" if p["waiting"] in _BAD else "yellow", str(p["waiting"]))
        if wide:
            text += f"  revision {p.get('revision') or '-'}"
        items.append(text)
    for ev in inst.get("warningEvents") or []:
        items.append(_event_text(ev, c, replica, int(inst["index"])))
    for n, text in enumerate(items):
        lines.append(child + ("└── " if n == len(items) - 1 else "├── ") + text)
    return lines
