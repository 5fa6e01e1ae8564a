"""``kubectl ome diff -f CHANGED.yaml…``: which live replicas an apply of these files rolls, blocks or unblocks.

The before side is the cluster as the controller reads it: the catalog objects of the namespaces
involved and of cluster scope (``omereconcile.cluster.observe.fetch_catalog_objects``), built into a catalog
with the live ``inferenceservice-config`` (:mod:`...catalog`), and the live InferenceReplicas with
their UIDs and ``status.collisionCount``, so a revision name is the one the controller created. The
after side is the same objects with the files applied in memory, as ``kubectl apply`` applies them:
an object of the files replaces the live one of the same kind, namespace and name (a namespaced
object without a namespace takes ``-n``'s), keeping the live object's UID and status (``apply`` does
not write the status subresource, so a model stays Ready and a replica keeps its collision count); an
object that is not live is created (a new model has no status yet: OME has not downloaded it, so its
replicas block until it is Ready). The ``inferenceservice-config`` ConfigMap of namespace ``ome``
among the files replaces the live settings.

Both sides go through ``omerender diff``'s own verdicts (:func:`omerender.diff.diff_replicas`) and
output (:func:`omerender.cli.diff_cmd.render_output`): ``-o text|json|markdown``, ``--fail-on``,
``--show-unchanged``, ``--max-chars``. ``--forecast`` adds ``omereconcile forecast``'s cost of the
rolls, replica sizes from the live ``spec.replicas`` and capacity from the live Nodes' allocatable
accelerators.

Exit codes, ``omerender diff``'s: 0 no verdict ``--fail-on`` names; 1 some replica has one; 2 bad
files or usage; ``omereconcile forecast``'s 4 with ``--forecast``: the change cannot complete on the
live nodes; and every ``kubectl ome`` command's 5: the cluster could not be read (kubeconfig,
connection, an API error), with ``error:`` on stderr and nothing on stdout, so a pipeline never takes a
diff that could not run for one that found a roll.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omereconcile.kubectl.client import (
    EXIT_FAILED,
    EXIT_SHORT_OF_CAPACITY,
    EXIT_USAGE,
    GROUP_VERSION,
    Client,
)
from omereconcile.kubectl.context import Ctx

__all__ = ["add_parsers", "applied", "object_key"]

REPLICA_KIND = "InferenceReplica"

ObjectKey = tuple[str, str, str]  # (kind, namespace or "" for cluster scope, name)


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    from omerender.cli.diff_flags import add_output_arguments

    p = sub.add_parser(
        "diff",
        parents=[common],
        help="which live replicas an apply of these models/runtimes rolls, blocks or unblocks",
        description=(
            "Render every live InferenceReplica against the live catalog and against the live catalog\n"
            "with the files applied in memory, and print omerender diff's verdict for each."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "-f",
        "--filename",
        action="append",
        default=[],
        metavar="PATH",
        help="a file or folder of objects to apply (repeatable; - is stdin)",
    )
    p.add_argument(
        "-k",
        "--kustomize",
        action="append",
        default=[],
        metavar="DIR",
        help="a kustomization's folder, read as kubectl apply -k reads it (repeatable)",
    )
    p.add_argument(
        "-A", "--all-namespaces", action="store_true", help="every namespace's replicas and catalog objects"
    )
    # omerender diff's own output flags: -o, --fail-on, --max-chars, --report, --show-unchanged.
    add_output_arguments(p)
    p.add_argument(
        "--forecast",
        action="store_true",
        help="also forecast the rolls' cost (omereconcile forecast) against the live nodes' capacity",
    )
    p.add_argument("--startup", default="5m", help="with --forecast: pod start-up time until Ready")
    p.add_argument("--ome-namespace", default="ome", help="where inferenceservice-config lives (default ome)")
    # omerender diff's output reads it; live models carry their status, nothing is assumed.
    p.set_defaults(func=run, assume_models_ready=False)


def object_key(obj: Mapping[str, Any], namespace: str) -> ObjectKey:
    """An object's identity as ``kubectl apply`` matches it; a namespaced one without a namespace is
    ``namespace``'s (``-n``, else the context's)."""
    from omerender.catalog import CLUSTER_SCOPED

    kind = str(obj.get("kind"))
    meta = obj.get("metadata") or {}
    ns = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace") or namespace)
    return (kind, ns, str(meta.get("name")))


def applied(
    live: Iterable[Mapping[str, Any]], files: Iterable[Mapping[str, Any]], namespace: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """``live`` with ``files`` applied in memory, and one line per file object saying what it does.

    A file object replaces the live one of its key (:func:`object_key`), keeping the live UID and
    status, which ``kubectl apply`` does not write; a later file object of one key wins, as in
    ``kubectl apply -f``. A namespaced object without a namespace gets ``namespace``.
    """
    out: dict[ObjectKey, dict[str, Any]] = {}
    for obj in live:
        out[object_key(obj, namespace)] = dict(obj)
    live_keys = set(out)
    said: dict[ObjectKey, str] = {}
    for obj in files:
        key = object_key(obj, namespace)
        new = json.loads(json.dumps(obj))  # the loader's object stays as read
        meta = new.setdefault("metadata", {})
        if key[1]:
            meta["namespace"] = key[1]
        old = out.get(key) if key in live_keys else None
        if old is not None:
            old_meta = old.get("metadata") or {}
            for field in ("uid", "resourceVersion", "creationTimestamp", "generation"):
                if field in old_meta:
                    meta[field] = old_meta[field]
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        else:
            new.pop("status", None)  # a created object has no status until its controller writes one
        out[key] = new
        where = f"{key[1]}/" if key[1] else ""
        said[key] = f"{key[0]} {where}{key[2]} {'configured' if key in live_keys else 'created'}"
    return list(out.values()), list(said.values())


def _namespaces(
    args: argparse.Namespace, client: Client, files: Sequence[Mapping[str, Any]]
) -> list[str] | None:
    """The namespaces to read (None: every one): ``-n``'s and those the files' objects name."""
    if args.all_namespaces:
        return None
    names = {client.namespace}
    names |= {k[1] for k in (object_key(o, client.namespace) for o in files) if k[1]}
    return sorted(names)


def _replicas(client: Client, namespaces: list[str] | None) -> list[dict[str, Any]]:
    if namespaces is None:
        return client.items(f"/apis/{GROUP_VERSION}/inferencereplicas")
    return [r for ns in namespaces for r in client.items(client.replicas_path(ns))]


def run(ctx: Ctx) -> int:
    # The rendering library loads only for the verbs that render or select.
    from omereconcile.forecast.inputs import ForecastInputError
    from omerender.cli.io import InputError
    from omerender.errors import OmeRenderError

    try:
        return _run(ctx)
    except (InputError, OmeRenderError, ForecastInputError, OSError) as exc:
        text = getattr(exc, "strerror", None) if isinstance(exc, OSError) else None
        ctx.err.write(f"error: {text or exc}\n")
        return EXIT_USAGE


def _run(ctx: Ctx) -> int:
    from omereconcile.cluster.observe import build_catalog, fetch_catalog_objects
    from omereconcile.kubectl.catalog import live_settings
    from omereconcile.settings import settings_from_configmap
    from omerender import Text, load
    from omerender.catalog import CATALOG_KINDS, is_operator_config
    from omerender.cli.diff_cmd import Sides, render_output, write_report
    from omerender.cli.diff_flags import fail_on_from
    from omerender.cli.io import InputError, sources
    from omerender.crds import replica_problems
    from omerender.diff import summary
    from omerender.errors import OmeRenderError
    from omerender.loader import Source
    from omerender.models import InferenceReplica, parse_object

    args = ctx.args
    if not args.filename and not args.kustomize:
        raise InputError("give the objects to apply with -f PATH (files, folders, - for stdin) or -k DIR")
    fail_on = fail_on_from(args.fail_on)
    if args.max_chars is not None and args.max_chars < 0:
        raise InputError(f"--max-chars {args.max_chars}: give a number of characters, or 0 for no limit")
    if args.filename.count("-") > 1:
        raise InputError("- (standard input) is given twice; it can be read once")
    # "-" is the command's stdin (the process's, or the caller's stream); the rest as every command reads.
    given: list[Source] = [Text(ctx.stdin.read(), "<stdin>") if p == "-" else Path(p) for p in args.filename]
    loaded = load(*given, *sources((), args.kustomize), check=True)
    for line in (*loaded.notes, *loaded.duplicates, loaded.skipped_note()):
        if line:
            ctx.err.write(f"Note: {line}\n")
    files = [o.raw for o in loaded.objects if o.kind in CATALOG_KINDS or o.kind == REPLICA_KIND]
    for raw in files:
        if raw.get("kind") == REPLICA_KIND:
            problems = replica_problems(raw)
            if problems:
                who = (raw.get("metadata") or {}).get("name")
                raise InputError(f"{REPLICA_KIND} {who}: " + "; ".join(problems))
    config = [o.raw for o in loaded.objects if is_operator_config(o.raw)]
    if not files and not config:
        raise InputError(
            f"-f {' '.join([*args.filename, *args.kustomize])}: no model, runtime, {REPLICA_KIND} or "
            "inferenceservice-config found; give the objects to apply"
        )

    client = ctx.client()
    namespaces = _namespaces(args, client, files)
    cluster_wide = sorted(
        {f"{o['kind']} {o['metadata'].get('name')}" for o in files if not object_key(o, "-")[1]}
    )
    if namespaces is not None and cluster_wide:
        ctx.err.write(
            f"Note: {', '.join(cluster_wide)} {'is' if len(cluster_wide) == 1 else 'are'} cluster-scoped: "
            f"replicas outside {', '.join(namespaces)} may use {'it' if len(cluster_wide) == 1 else 'them'} "
            "too; -A diffs every namespace's\n"
        )
    settings, data = live_settings(client, args.ome_namespace, ctx.err)
    live_catalog = fetch_catalog_objects(client.kube, namespaces)
    live_irs = _replicas(client, namespaces)
    for r in live_irs:
        r.setdefault("kind", REPLICA_KIND)
        r.setdefault("apiVersion", GROUP_VERSION)

    catalog_files = [o for o in files if o.get("kind") != REPLICA_KIND]
    after_catalog_objects, lines = applied(live_catalog, catalog_files, client.namespace)
    after_irs, ir_lines = applied(
        live_irs, [o for o in files if o.get("kind") == REPLICA_KIND], client.namespace
    )
    after_settings, after_data = settings, data
    if config:
        after_data = {str(k): str(v) for k, v in (config[-1].get("data") or {}).items()}
        after_settings = settings_from_configmap(after_data)
        lines.append(f"ConfigMap ome/{config[-1]['metadata']['name']} configured")

    before_catalog = build_catalog(
        live_catalog, settings.controller_identity, settings.accelerator_resources, data
    )
    after_catalog = build_catalog(
        after_catalog_objects,
        after_settings.controller_identity,
        after_settings.accelerator_resources,
        after_data,
    )

    def parsed(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], InferenceReplica]:
        out: dict[tuple[str, str], InferenceReplica] = {}
        for raw in objects:
            meta = raw.get("metadata") or {}
            try:
                # The API server admitted the live ones; a field newer than our CRDs must not stop a read.
                replica = parse_object(InferenceReplica, raw, strict=False)
            except OmeRenderError as exc:
                ctx.err.write(
                    f"Warning: {REPLICA_KIND} {meta.get('namespace')}/{meta.get('name')} does not parse ({exc}): left out\n"
                )
                continue
            out[(replica.namespace, replica.metadata.name)] = replica
        return out

    before, after = parsed(live_irs), parsed(after_irs)
    notes = (f"applied in memory to the live cluster: {', '.join([*lines, *ir_lines])}",)
    sides = Sides(live_catalog, after_catalog_objects, before_catalog, after_catalog, before, after, notes)
    diffs = sides.diff()
    if not diffs:
        ctx.err.write(
            f"Note: no {REPLICA_KIND} in {', '.join(namespaces) if namespaces else 'any namespace'}\n"
        )

    write_report(diffs, args, fail_on, notes)
    text = render_output(args.output, diffs, args, fail_on, notes, report=args.report)
    code = EXIT_FAILED if any(d.status in fail_on for d in diffs) else 0
    if args.forecast:
        text, short = _with_forecast(ctx, client, sides, diffs, live_irs, after_settings, after_data, text)
        code = EXIT_SHORT_OF_CAPACITY if short else code
    ctx.out.write(text)
    ctx.err.write(f"diff: {summary(diffs)}\n")
    return code


def _with_forecast(
    ctx: Ctx,
    client: Client,
    sides: Any,
    diffs: Any,
    live_irs: Sequence[Mapping[str, Any]],
    settings: Any,
    data: Mapping[str, str] | None,
    text: str,
) -> tuple[str, bool]:
    """``text`` followed by ``omereconcile forecast``'s report of the rolls; whether the live nodes
    are short of capacity for them."""
    from omereconcile.forecast.build import forecast
    from omereconcile.forecast.inputs import (
        ForecastInputError,
        capacity_from_nodes,
        parse_duration,
        sizes_from_dump,
    )
    from omereconcile.forecast.report import headline, to_json, to_markdown, to_text
    from omerender.accelerators import (
        ACCELERATOR_RESOURCES_KEY,
        accelerator_resource_names,
        parse_accelerator_resources,
    )

    names = accelerator_resource_names(
        parse_accelerator_resources((data or {}).get(ACCELERATOR_RESOURCES_KEY))
    )
    nodes = [{**n, "kind": "Node"} for n in client.items("/api/v1/nodes")]
    capacity = capacity_from_nodes(nodes, names)
    sizes = sizes_from_dump(live_irs) if live_irs else None
    try:
        result = forecast(
            diffs,
            sides.before,
            sides.after,
            sides.after_objects,
            startup_seconds=parse_duration(ctx.args.startup, "--startup"),
            sizes=sizes,
            capacity=capacity,
            gpu_names=names,
            settings=settings,
        )
    except ForecastInputError as exc:
        # Its hint names omereconcile forecast's flags; here the capacity is the live nodes'.
        raise ForecastInputError(
            f"--forecast: the live nodes' allocatable {', '.join(names)} ({sum(capacity)} on "
            f"{len(capacity)} nodes) as capacity: {exc}"
        ) from None
    ctx.err.write(f"forecast: {headline(result)}\n")
    if ctx.args.output == "json":
        doc = json.loads(text)
        doc["forecast"] = to_json(result)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n", result.short_of_capacity
    more = to_markdown(result) if ctx.args.output == "markdown" else to_text(result)
    return f"{text}\n{more}", result.short_of_capacity
