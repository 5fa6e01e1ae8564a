"""``kubectl ome rollout get ir/NAME [--watch]``: the live roll as a tree (:mod:`omereconcile.kubectl.tree`).

Without ``--watch`` it reads the replica, its ControllerRevisions, its pods, the Nodes and the
namespace's Warning events and the replica's Normal events once and prints the tree, with the roll's
ETA (:mod:`omereconcile.kubectl.eta`: the planner run from the live roll, fed with the start-up times
its pods showed). With ``--watch`` it follows the same six
collections with the controller's own :class:`omereconcile.cluster.reflector.Reflector` (a list, then a watch
from the list's resourceVersion, relisting on ``410 Gone``: a watch started from a single GET's
resourceVersion can be refused as too old) and redraws when one of them changes, at most
:data:`MAX_REDRAWS_PER_SECOND` times a second: in place on a terminal, as appended snapshots (a blank
line between them) when piped. It runs until interrupted or ``--timeout``, which ends it with exit 0:
it is a view, not a wait (``rollout status`` and ``wait`` are the waits).

Colour only on a terminal, and never with ``NO_COLOR`` set (https://no-color.org); ``--color
always|never`` overrides. ``-o json|yaml`` print the tree as a ``RolloutTreeReport`` (one document per
redraw with ``--watch``). The planner runs again only when what it reads changed (the spec, the
revisions, the measured start-up or drain); between those, a redraw moves the ETA on the clock.

The Nodes are cluster-scoped: without ``list`` on ``nodes`` the tree is still printed, each node's
state ``?``, and a warning says why.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

from omereconcile.cluster.kube import Forbidden
from omereconcile.kubectl import eta as eta_mod
from omereconcile.kubectl import tree as tree_mod
from omereconcile.kubectl.client import (
    LABEL_COMPONENT,
    LABEL_INFERENCESERVICE,
    REPLICA_KIND,
    Client,
    CommandError,
    parse_duration,
    replica_target,
)
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.report import Report, source

__all__ = ["MAX_REDRAWS_PER_SECOND", "Snapshot", "run_get", "use_colour"]

MAX_REDRAWS_PER_SECOND = 4.0
CLEAR = "\x1b[H\x1b[2J"  # cursor home, clear the screen: a redraw in place


def use_colour(out: TextIO, mode: str, env: Mapping[str, str]) -> bool:
    """``always``/``never`` as said; ``auto``: a terminal, and ``NO_COLOR`` unset or empty."""
    if mode != "auto":
        return mode == "always"
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty()) and not env.get("NO_COLOR")


class Snapshot:
    """The objects one tree is built from, as last read."""

    def __init__(self) -> None:
        self.replica: dict[str, Any] | None = None
        self.revisions: list[dict[str, Any]] = []
        self.pods: list[dict[str, Any]] = []
        self.nodes: dict[str, dict[str, Any]] | None = {}
        self.events: list[dict[str, Any]] = []  # the namespace's Warning events
        self.normal: list[dict[str, Any]] = []  # the replica's Normal events (the roll's steps)
        self.plans: dict[str, eta_mod.RollPlan] = {}  # the planner's runs, kept between redraws

    def tree(self, now: datetime, window: float, *, eta: bool = True) -> dict[str, Any]:
        assert self.replica is not None
        uid = (self.replica.get("metadata") or {}).get("uid")
        owned = [
            r
            for r in self.revisions
            if any(o.get("uid") == uid for o in (r.get("metadata") or {}).get("ownerReferences") or [])
        ]
        out = tree_mod.build_tree(self.replica, owned, self.pods, self.nodes, self.events, now, window)
        if not eta:
            return out
        normal = [e for e in self.normal if (e.get("involvedObject") or {}).get("uid") == uid]
        try:
            found = eta_mod.estimate(self.replica, owned, self.pods, normal, now, cache=self.plans)
        except Exception as exc:  # the planner or a stored revision's render refused this replica
            found = eta_mod.failed(exc)
        out["eta"] = None if found is None else found.content()
        return out


def _paths(client: Client, replica_name: str, component: str) -> dict[str, tuple[str, dict[str, str]]]:
    owned = f"{LABEL_INFERENCESERVICE}={replica_name},{LABEL_COMPONENT}={component}"
    return {
        "replica": (client.replicas_path(), {"fieldSelector": f"metadata.name={replica_name}"}),
        "revisions": (client.ns_path("apps/v1", "controllerrevisions"), {"labelSelector": owned}),
        "pods": (client.ns_path("v1", "pods"), {"labelSelector": f"{LABEL_INFERENCESERVICE}={replica_name}"}),
        "nodes": ("/api/v1/nodes", {}),
        "events": (client.ns_path("v1", "events"), {"fieldSelector": "type=Warning"}),
        "normal": (
            client.ns_path("v1", "events"),
            {
                "fieldSelector": f"involvedObject.kind={REPLICA_KIND},involvedObject.name={replica_name},"
                "type=Normal"
            },
        ),
    }


def _read_once(client: Client, name: str, warnings: list[str]) -> Snapshot:
    snap = Snapshot()
    snap.replica = client.replica(name)
    component = str((snap.replica.get("spec") or {}).get("component") or "")
    paths = _paths(client, name, component)
    snap.revisions = client.items(paths["revisions"][0], **paths["revisions"][1])
    snap.pods = client.items(paths["pods"][0], **paths["pods"][1])
    snap.events = client.items(paths["events"][0], **paths["events"][1])
    snap.normal = client.items(paths["normal"][0], **paths["normal"][1])
    try:
        snap.nodes = {str(n["metadata"]["name"]): n for n in client.items("/api/v1/nodes")}
    except Forbidden as exc:
        snap.nodes = None
        warnings.append(f"nodes not readable ({exc.message}): node states are shown as ?")
    return snap


def run_get(ctx: Ctx) -> int:
    args = ctx.args
    name = replica_target(args.target)
    window = parse_duration("--events-since", args.events_since)
    timeout = parse_duration("--timeout", args.timeout)
    client = ctx.client()
    colour = tree_mod.Palette(use_colour(ctx.out, args.color, os.environ))
    warnings: list[str] = []
    if not args.watch:
        snap = _read_once(client, name, warnings)
        _draw(ctx, snap, window, colour, warnings, first=True, in_place=False)
        return 0
    return _watch(ctx, client, name, window, timeout, colour)


def _draw(
    ctx: Ctx,
    snap: Snapshot,
    window: float,
    colour: tree_mod.Palette,
    warnings: list[str],
    *,
    first: bool,
    in_place: bool,
) -> str:
    assert snap.replica is not None
    now = datetime.now(UTC)
    content = snap.tree(now, window, eta=getattr(ctx.args, "eta", True))
    if ctx.args.output in ("json", "yaml"):
        if not first and ctx.args.output == "yaml":
            ctx.out.write("---\n")
        Report(
            "RolloutTreeReport",
            {"name": content["replica"]["name"], "namespace": content["replica"]["namespace"]},
            content,
            [source(snap.replica)],
            list(warnings),
            collected_at=now,
        ).write(ctx.args.output, ctx.out, "")
        ctx.out.flush()
        return ""
    text = tree_mod.render_tree(content, colour, wide=ctx.args.output == "wide")
    text += "".join(f"warning: {w}\n" for w in warnings)
    if in_place:
        ctx.out.write(CLEAR + text)
    else:
        ctx.out.write(("" if first else "\n") + text)
    ctx.out.flush()
    return text


def _watch(
    ctx: Ctx, client: Client, name: str, window: float, timeout: float, colour: tree_mod.Palette
) -> int:
    # The controller's reflector: list, then watch from the list's resourceVersion, relist on 410.
    from omereconcile.cluster.reflector import Reflector

    first = client.replica(name)  # a 404 is exit 5 before anything starts
    component = str((first.get("spec") or {}).get("component") or "")
    paths = _paths(client, name, component)
    warnings: list[str] = []
    try:
        client.get("/api/v1/nodes", limit=1)
    except Forbidden as exc:
        paths.pop("nodes")
        warnings.append(f"nodes not readable ({exc.message}): node states are shown as ?")
    stop = threading.Event()
    dirty = threading.Event()
    gone = threading.Event()

    def on_event(kind: str) -> Callable[[str, Any], None]:
        def handle(etype: str, obj: Any) -> None:
            if kind == "replica" and etype == "DELETED":
                gone.set()
            dirty.set()

        return handle

    reflectors: dict[str, Reflector] = {}
    for kind, (path, query) in paths.items():
        reflector = Reflector(
            client.kube, path, f"kubectl-ome-{kind}", on_event(kind), stop=stop, timeout_seconds=60
        )
        reflector.query = dict(query)  # the selectors of its list and watch
        reflectors[kind] = reflector
    in_place = ctx.args.output in ("table", "wide") and bool(getattr(ctx.out, "isatty", lambda: False)())
    deadline = time.monotonic() + timeout if timeout > 0 else None
    try:
        for r in reflectors.values():
            r.start()
        for kind, r in reflectors.items():
            left = 30.0 if deadline is None else max(0.0, deadline - time.monotonic())
            if not r.synced.wait(min(left, 30.0)) and (deadline is None or time.monotonic() < deadline):
                raise CommandError(f'could not list the {kind} of inferencereplica "{name}" within 30s')
        drawn = 0
        last_at = 0.0
        plans: dict[str, eta_mod.RollPlan] = {}
        dirty.set()
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return 0
            if not dirty.wait(wait):
                return 0
            pause = last_at + 1.0 / MAX_REDRAWS_PER_SECOND - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # throttle: changes in the meantime are drawn together
            dirty.clear()
            if gone.is_set():
                raise CommandError(f'inferencereplica "{name}" was deleted while watching')
            snap = Snapshot()
            snap.replica = reflectors["replica"].get((client.namespace, name))
            if snap.replica is None:
                continue
            snap.revisions = reflectors["revisions"].items()
            snap.pods = reflectors["pods"].items()
            snap.events = reflectors["events"].items()
            snap.normal = reflectors["normal"].items()
            snap.plans = plans
            snap.nodes = (
                {str(n["metadata"]["name"]): n for n in reflectors["nodes"].items()}
                if "nodes" in reflectors
                else None
            )
            _draw(ctx, snap, window, colour, warnings, first=drawn == 0, in_place=in_place)
            drawn += 1
            last_at = time.monotonic()
    finally:
        stop.set()
        for r in reflectors.values():
            r.close()
