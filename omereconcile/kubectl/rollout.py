"""``kubectl ome rollout status|history|undo|pause|resume|restart ir/NAME``.

``status`` prints the roll's progress as ``kubectl rollout status`` prints a Deployment's (updated,
ready and available of desired; each Instance in flight with its operation and step; any hold), and
with ``--watch`` (the default, as in kubectl) follows until the roll completes. Exit 0 when complete
(or, with ``--watch=false``, still in progress), 1 when it failed, is held or paused, or ``--timeout``
passed first; 2 for usage. The rules are :mod:`omereconcile.kubectl.state`'s.

``history`` lists the replica's ControllerRevisions (its selector, owned by its UID) with their number,
hash, age, the Instances running each and their role (current, update, rollback target); ``--revision``
prints one revision's stored template. ``undo`` sets ``spec.pacing.rollbackToRevision`` (to the revision
before the one being rolled to, or ``--to-revision``: a number, name or hash); undoing to the spec's own
revision clears the field. ``pause`` sets ``spec.paused`` (``--freeze``: ``pauseMode: Freeze``, which also
stops Instance repair; a pause never downgrades an existing freeze, as OME's ``rollout pause``);
``resume`` clears both.

``restart``: OME has no user restart of an InferenceReplica (its ``Restart`` operations are the
controller's crash-loop repair, and OME's ``kubectl-ome`` has no ``rollout restart``). What Go allows is
a template change, which mints a revision and rolls every Instance: on a ``spec.runners`` replica this
stamps ``kubectl.kubernetes.io/restartedAt`` on each runner's template, as ``kubectl rollout restart``
stamps a Deployment's. A ``modelRef``/``runtimeRef`` replica stores no template (the controller renders
it from the live model and runtime on every pass), so there is nothing to stamp: it is refused, saying so.

Every writing verb is a guarded action (:mod:`omereconcile.kubectl.guard`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import yaml

from omereconcile import replica_table
from omereconcile.kubectl import eta as eta_mod
from omereconcile.kubectl import live, rolltimeline, state
from omereconcile.kubectl.client import (
    REPLICA_KIND,
    Client,
    CommandError,
    UsageError,
    parse_duration,
    replica_target,
)
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.follow import follow
from omereconcile.kubectl.guard import GuardedWrite, add_guard_flags, run_guarded
from omereconcile.kubectl.report import source, table
from omereconcile.timeline import to_svg, to_svg_compare

__all__ = ["RESTARTED_AT", "add_parsers", "watch_flag"]

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


def watch_flag(argv: list[str]) -> list[str]:
    """kubectl's ``--watch=false``/``-w=true`` spellings as argparse's ``--no-watch``/``--watch``."""
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if eq and flag in ("-w", "--watch") and value.lower() in ("true", "false"):
            arg = "--watch" if value.lower() == "true" else "--no-watch"
        out.append(arg)
    return out


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    rollout = sub.add_parser(
        "rollout", help="the roll of a replica: status, get, history, undo, pause, resume, restart"
    )
    verbs = rollout.add_subparsers(dest="verb", required=True, metavar="VERB")

    status = verbs.add_parser("status", parents=[common], help="the roll's progress; follows it by default")
    status.add_argument("target", metavar="ir/NAME")
    status.add_argument(
        "-w",
        "--watch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="follow until the roll completes (default; --watch=false or --no-watch prints once)",
    )
    status.add_argument("--timeout", default="0", help="stop following after this long (0: never)")
    status.add_argument("-o", "--output", choices=["table", "json", "yaml"], default="table")
    status.add_argument(
        "--eta",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the roll's expected time to completion, from the planner run (default; --no-eta skips it)",
    )
    status.set_defaults(func=run_status)

    get = verbs.add_parser(
        "get",
        parents=[common],
        help="the roll as a tree: replica, revisions, Instances, pods, recent Warning events",
    )
    get.add_argument("target", metavar="ir/NAME")
    get.add_argument(
        "-w",
        "--watch",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="redraw on every change (watch events, at most a few times a second) until interrupted",
    )
    get.add_argument("--timeout", default="0", help="with --watch: stop after this long, exit 0 (0: never)")
    get.add_argument("--events-since", default="5m", help="Warning events of this last while (default 5m)")
    get.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="auto (default): on a terminal, unless NO_COLOR is set",
    )
    get.add_argument("-o", "--output", choices=["table", "wide", "json", "yaml"], default="table")
    get.add_argument(
        "--eta",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the roll's expected time to completion, from the planner run (default; --no-eta skips it)",
    )
    get.set_defaults(func=live.run_get)

    history = verbs.add_parser("history", parents=[common], help="the replica's ControllerRevisions")
    history.add_argument("target", metavar="ir/NAME")
    history.add_argument("--revision", help="one revision (number, name or hash): print its template")
    history.add_argument(
        "--timeline",
        action="store_true",
        help="draw the roll to --revision (default: the roll target) as it happened: steps, waits, serving floor",
    )
    history.add_argument(
        "--forecast",
        action="store_true",
        help="with --timeline: beside the roll, the forecast's planner run of the same change "
        "(-o svg: one drawing on one time axis)",
    )
    history.add_argument(
        "--startup",
        help="with --forecast: the pods' start-up the forecast assumes (default: this roll's median)",
    )
    history.add_argument(
        "-o",
        "--output",
        choices=["table", "wide", "json", "yaml", "svg"],
        default="table",
        help="svg: --timeline only",
    )
    history.set_defaults(func=run_history)

    undo = verbs.add_parser("undo", parents=[common], help="roll back (sets spec.pacing.rollbackToRevision)")
    undo.add_argument("target", metavar="ir/NAME")
    undo.add_argument("--to-revision", help="number, name or hash (default: the revision before the target)")
    add_guard_flags(undo)
    undo.set_defaults(func=run_undo)

    pause = verbs.add_parser("pause", parents=[common], help="stop the roll (spec.paused)")
    pause.add_argument("target", metavar="ir/NAME")
    pause.add_argument("--freeze", action="store_true", help="pauseMode Freeze: also stop Instance repair")
    add_guard_flags(pause)
    pause.set_defaults(func=run_pause)

    resume = verbs.add_parser("resume", parents=[common], help="resume the roll (clears spec.paused)")
    resume.add_argument("target", metavar="ir/NAME")
    add_guard_flags(resume)
    resume.set_defaults(func=run_resume)

    restart = verbs.add_parser(
        "restart", parents=[common], help="roll every Instance anew (runners replicas only)"
    )
    restart.add_argument("target", metavar="ir/NAME")
    add_guard_flags(restart)
    restart.set_defaults(func=run_restart)


# -- status ---------------------------------------------------------------------------------------------


def live_eta(
    client: Client,
    replica: dict[str, Any],
    revisions: list[dict[str, Any]],
    cache: dict[str, eta_mod.RollPlan],
) -> eta_mod.Eta | None:
    """The ETA of the replica's roll (:mod:`omereconcile.kubectl.eta`), from its pods and its Normal
    events read now. A replica the planner cannot be run on gives no number, saying why, instead of
    failing the verb that only wanted to show it."""
    progress = state.rollout_progress(replica, revisions)
    if progress.done or progress.stopped or progress.state == "NotObserved":
        return None
    meta = replica.get("metadata") or {}
    name = str(meta.get("name") or "")
    if progress.target and state.find_revision(revisions, progress.target) is None:
        revisions[:] = client.revisions(replica)  # a revision minted since they were read
    pods = client.pods(name)
    events = client.events(REPLICA_KIND, name, str(meta.get("uid") or ""), "Normal")
    try:
        return eta_mod.estimate(replica, revisions, pods, events, datetime.now(UTC), cache=cache)
    except Exception as exc:  # the planner or the render of a stored revision refused this replica
        return eta_mod.failed(exc)


def eta_lines(found: eta_mod.Eta | None) -> str:
    if found is None:
        return ""
    return f"  expected to complete in: {found.text}\n" + (
        f"  assumes: {found.assumes}\n" if found.assumes != "-" else ""
    )


def run_status(ctx: Ctx) -> int:
    args = ctx.args
    name = replica_target(args.target)
    timeout = parse_duration("--timeout", args.timeout)
    client = ctx.client()
    revisions: list[dict[str, Any]] = []
    last = [""]
    plans: dict[str, eta_mod.RollPlan] = {}

    def judge(obj: dict[str, Any]) -> tuple[bool, tuple[state.Progress, dict[str, Any]]]:
        if not revisions:
            revisions.extend(client.revisions(obj))
        progress = state.rollout_progress(obj, revisions)
        line = progress.line()
        if args.output == "table" and line != last[0]:
            found = live_eta(client, obj, revisions, plans) if args.eta else None
            ctx.out.write(line + "\n" + eta_lines(found))
            ctx.out.flush()
            last[0] = line
        return progress.done or progress.stopped or not args.watch, (progress, obj)

    finished, (progress, obj) = follow(client, name, judge, timeout)
    if args.output != "table":
        found = live_eta(client, obj, revisions, plans) if args.eta else None
        content = {**progress.content(), "eta": None if found is None else found.content()}
        ctx.report("RolloutStatusReport", {"name": name}, content, "", [source(obj)])
    if not finished:
        seen = "" if args.output == "table" else f": {progress.line()}"
        raise CommandError(
            f'timed out after {args.timeout} waiting for inferencereplica "{name}" rollout to finish{seen}'
        )
    return 1 if progress.stopped else 0


# -- history --------------------------------------------------------------------------------------------


def _roles(replica: dict[str, Any], rev_name: str) -> str:
    status = replica.get("status") or {}
    roles = []
    if status.get("currentRevision") == rev_name:
        roles.append("current")
    if status.get("updateRevision") == rev_name:
        roles.append("update")
    if ((replica.get("spec") or {}).get("pacing") or {}).get("rollbackToRevision") == rev_name:
        roles.append("rollback-target")
    return ",".join(roles) or "-"


def _template(rev: Mapping[str, Any]) -> Any:
    data = rev.get("data")
    if isinstance(data, str):
        try:
            return json.loads(data)
        except ValueError:
            return data
    return data


def run_timeline(
    ctx: Ctx, name: str, client: Client, replica: dict[str, Any], revisions: list[dict[str, Any]]
) -> int:
    """``history --timeline``: the roll read back from the replica's events and its pods
    (:mod:`omereconcile.kubectl.rolltimeline`); nothing is written."""
    args = ctx.args
    uid = str((replica.get("metadata") or {}).get("uid") or "")
    events = client.events(REPLICA_KIND, name, uid, "Normal")
    pods = client.pods(name)
    try:
        tl = rolltimeline.build_timeline(replica, revisions, pods, events, args.revision)
    except LookupError as exc:
        raise CommandError(
            f'unable to find revision "{exc.args[0]}" in the history of inferencereplica "{name}"'
        ) from exc
    drawing = rolltimeline.to_drawing(tl, name)
    text = rolltimeline.render_text(tl, name)
    if args.forecast:
        plan, said = _forecast_of(ctx, name, replica, revisions, pods, tl)
        fc = dataclasses.replace(
            eta_mod.forecast_drawing(plan, "Forecast: the planner's run of the same change"),
            note=f"assumes {said}",
        )
        tl = {
            **tl,
            "forecast": {
                "assumes": said,
                "duration": round(plan.duration, 1),
                "completes": plan.completes,
                "hold": plan.hold or None,
                "steps": [
                    {"index": i, "step": st, "start": round(a, 1), "end": round(b, 1)}
                    for i, st, a, b in plan.steps
                ],
            },
        }
        took = f"{tl['duration']:.0f}s" if tl["complete"] else "not complete"
        text += (
            f"forecast of the same change: {plan.duration:.0f}s"
            + ("" if plan.completes else f" (does not complete: {plan.hold})")
            + f"; the roll took {took}\nforecast assumes: {said}\n"
        )
        if args.output == "svg":
            real = dataclasses.replace(
                drawing,
                title="What happened",
                note="read back from the controller's events and the new pods' creation and serving times",
            )
            ctx.out.write(to_svg_compare(f"Roll of {name} to {tl['name']}", [real, fc]))
            return 0
    elif args.output == "svg":
        ctx.out.write(to_svg(drawing))
        return 0
    srcs = [source(replica)] + [
        source(r) for r in revisions if (r.get("metadata") or {}).get("name") == tl["name"]
    ]
    ctx.report("RolloutTimelineReport", {"name": name}, tl, text, srcs, tl["notes"])
    return 0


def _forecast_of(
    ctx: Ctx,
    name: str,
    replica: dict[str, Any],
    revisions: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    tl: Mapping[str, Any],
) -> tuple[eta_mod.RollPlan, str]:
    """The forecast's planner run of the change this timeline drew: from the revision before it to it,
    with this roll's median start-up (or ``--startup``) and drain; and what it assumed, in words."""
    number = int(tl["revision"])
    earlier = [r for r in revisions if int(r.get("revision") or 0) < number]
    if not earlier:
        raise CommandError(
            f'revision {tl["name"]} is the first of inferencereplica "{name}": no change rolled to it to forecast'
        )
    before = max(earlier, key=lambda r: int(r.get("revision") or 0))
    after = state.find_revision(revisions, str(tl["name"]))
    assert after is not None  # build_timeline found it
    m = eta_mod.measure(tl, pods)
    if ctx.args.startup:
        startup, how = parse_duration("--startup", ctx.args.startup), "--startup"
    elif m.startup is not None:
        startup, how = m.startup, f"median of {m.startup_pods} pods of this roll"
    else:
        startup, how = eta_mod.DEFAULT_STARTUP_SECONDS, "no pod of this roll served: the forecast's default"
    drain = m.drain if m.drain is not None else eta_mod.DEFAULT_DRAIN_SECONDS
    drain_how = f"median of {m.drain_samples}" if m.drain is not None else "the forecast's default"
    plan = eta_mod.plan_roll(
        replica,
        before,
        after,
        startup_seconds=startup,
        drain_seconds=drain,
        workers=eta_mod.workers_of(replica),
    )
    return plan, f"start-up {startup:.0f}s ({how}), drain {drain:.0f}s ({drain_how}), room for every pod"


def run_history(ctx: Ctx) -> int:
    args = ctx.args
    name, client, replica = ctx.target()
    revisions = client.revisions(replica)
    if args.timeline:
        return run_timeline(ctx, name, client, replica, revisions)
    if args.output == "svg":
        raise UsageError("-o svg draws a timeline: add --timeline")
    if args.forecast:
        raise UsageError("--forecast sets a forecast beside a timeline: add --timeline")
    rows = state.instance_rows(replica)
    now = datetime.now(UTC)
    entries = []
    for rev in revisions:
        rname = str(rev["metadata"]["name"])
        entries.append(
            {
                "revision": int(rev.get("revision") or 0),
                "name": rname,
                "hash": state.revision_hash(rname),
                "created": rev["metadata"].get("creationTimestamp"),
                "instances": [int(r["index"]) for r in rows if r.get("runningRevision") == rname],
                "targetedBy": [int(r["index"]) for r in rows if r.get("targetRevision") == rname],
                "roles": _roles(replica, rname).split(",") if _roles(replica, rname) != "-" else [],
            }
        )
    if args.revision is not None:
        found = state.find_revision(revisions, args.revision)
        if found is None:
            raise CommandError(
                f'unable to find revision "{args.revision}" in the history of inferencereplica "{name}"'
            )
        entry = next(e for e in entries if e["name"] == found["metadata"]["name"])
        content = {**entry, "template": _template(found)}
        text = (
            f"inferencereplica.ome.io/{name} with revision #{entry['revision']} ({entry['name']})\n"
            + "Pod Template:\n"
            + "".join(
                f"  {line}\n" for line in yaml.safe_dump(content["template"], sort_keys=True).splitlines()
            )
        )
        ctx.report("RolloutHistoryReport", {"name": name}, content, text, [source(replica)])
        return 0
    header = ["REVISION", "NAME", "HASH", "AGE", "INSTANCES", "ROLE"]
    if args.output == "wide":
        header.append("TARGETED-BY")
    lines = [header]
    for e, rev in zip(entries, revisions, strict=True):
        row = [
            str(e["revision"]),
            e["name"],
            e["hash"],
            replica_table.age(rev, now),
            ",".join(map(str, e["instances"])) or "-",
            ",".join(e["roles"]) or "-",
        ]
        if args.output == "wide":
            row.append(",".join(map(str, e["targetedBy"])) or "-")
        lines.append(row)
    text = (
        f"inferencereplica.ome.io/{name}\n" + table(lines)
        if entries
        else f'No revisions found for inferencereplica "{name}".\n'
    )
    ctx.report("RolloutHistoryReport", {"name": name}, {"revisions": entries}, text, [source(replica)])
    return 0


# -- undo, pause, resume, restart -----------------------------------------------------------------------


def run_undo(ctx: Ctx) -> int:
    args = ctx.args
    name, client, replica = ctx.target()
    revisions = client.revisions(replica)
    if not revisions:
        raise CommandError(f'no rollout history found for inferencereplica "{name}"')
    target = state.roll_target(replica, revisions)
    if args.to_revision is not None:
        chosen = state.find_revision(revisions, args.to_revision)
        if chosen is None:
            raise CommandError(
                f'unable to find revision "{args.to_revision}" in the history of inferencereplica "{name}" '
                f"(see kubectl ome rollout history ir/{name})"
            )
    else:
        current = state.find_revision(revisions, target) if target else None
        number = (
            int(current.get("revision") or 0)
            if current
            else max(int(r.get("revision") or 0) for r in revisions) + 1
        )
        earlier = [r for r in revisions if int(r.get("revision") or 0) < number]
        if not earlier:
            raise CommandError(
                f'inferencereplica "{name}" has no revision before {target or "its target"} to roll back to'
            )
        chosen = earlier[-1]
    rev_name = str(chosen["metadata"]["name"])
    if rev_name == target:
        raise CommandError(
            f'inferencereplica "{name}" already rolls to revision {rev_name} (#{chosen.get("revision")}): nothing to undo'
        )
    spec_revision = str((replica.get("status") or {}).get("updateRevision") or "")
    clear = rev_name == spec_revision
    write = GuardedWrite(
        action="rollout undo",
        replica=replica,
        patch={"spec": {"pacing": {"rollbackToRevision": None if clear else rev_name}}},
        summary=(
            f"clear spec.pacing.rollbackToRevision: roll back to the spec's own revision {rev_name}"
            if clear
            else f"set spec.pacing.rollbackToRevision={rev_name} (revision #{chosen.get('revision')}); "
            f"rolling from {target or '-'}"
        ),
        message="API accepted the rollback target; the controller rolls the Instances to it",
        follow_up=f"kubectl ome rollout status ir/{name} -n {client.namespace}",
        revision_hash=state.revision_hash(rev_name),
    )
    return run_guarded(ctx, write)


def run_pause(ctx: Ctx) -> int:
    args = ctx.args
    name, client, replica = ctx.target()
    spec = replica.get("spec") or {}
    mode = spec.get("pauseMode") or "Recover"
    if spec.get("paused") and (mode == "Freeze" or not args.freeze):
        raise CommandError(f'inferencereplica "{name}" is already paused (pauseMode {mode})')
    patch: dict[str, Any] = {"paused": True}
    if args.freeze:
        patch["pauseMode"] = "Freeze"
    write = GuardedWrite(
        action="rollout pause",
        replica=replica,
        patch={"spec": patch},
        summary="set spec.paused=true"
        + (
            ", pauseMode=Freeze (Instance repair stops too)"
            if args.freeze
            else " (Instance repair continues)"
        ),
        message="API accepted the pause; in-flight operations hold until resumed",
        follow_up=f"kubectl ome rollout resume ir/{name} -n {client.namespace}",
    )
    return run_guarded(ctx, write)


def run_resume(ctx: Ctx) -> int:
    name, client, replica = ctx.target()
    spec = replica.get("spec") or {}
    if not spec.get("paused"):
        raise CommandError(f'inferencereplica "{name}" is not paused')
    write = GuardedWrite(
        action="rollout resume",
        replica=replica,
        patch={"spec": {"paused": None, "pauseMode": None}},
        summary=f"clear spec.paused and spec.pauseMode (was {spec.get('pauseMode') or 'Recover'})",
        message="API accepted the resume; in-flight operations continue",
        follow_up=f"kubectl ome rollout status ir/{name} -n {client.namespace}",
    )
    return run_guarded(ctx, write)


def run_restart(ctx: Ctx) -> int:
    name, client, replica = ctx.target()
    spec = replica.get("spec") or {}
    runners = spec.get("runners")
    if not runners:
        source_field = "spec.modelRef" if spec.get("modelRef") else "spec.runtimeRef"
        raise CommandError(
            f'cannot restart inferencereplica "{name}": it renders its pods from {source_field}, and the controller '
            "renders those templates from the live model and runtime on every pass without storing them in the "
            "spec, so there is no template to stamp (OME has no user restart of an InferenceReplica); to rebuild "
            f"Failed Instances use `kubectl ome instance reset ir/{name} all`"
        )
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    stamped = json.loads(json.dumps(runners))
    for runner in stamped:
        meta = runner.setdefault("template", {}).setdefault("metadata", {})
        annotations = meta.get("annotations") or {}
        annotations[RESTARTED_AT] = stamp
        meta["annotations"] = annotations
    write = GuardedWrite(
        action="rollout restart",
        replica=replica,
        patch={"spec": {"runners": stamped}},
        summary=f"stamp {RESTARTED_AT}={stamp} on every runner template (a new revision: every Instance rolls)",
        message="API accepted the new template; the controller rolls every Instance to it",
        follow_up=f"kubectl ome rollout status ir/{name} -n {client.namespace}",
    )
    return run_guarded(ctx, write)
