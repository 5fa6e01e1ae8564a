"""``kubectl ome render ir/NAME [--instances N]``: what the controller renders for a live replica now.

The replica is read from the cluster and rendered against the live catalog (:mod:`...catalog`) with
``omerender``'s own ``preview``: the same stream ``omerender render`` prints (runner PodTemplates, the
headless Service, the ControllerRevision, PodGroups and pods with ``--instances``), with the replica's
live UID and ``status.collisionCount``, so the revision name is the one the controller creates. A
replica that cannot render prints its block reason and message on stderr and exits 1, as
``omerender render`` does. The printed revision is compared with ``status.updateRevision`` on stderr.
"""

from __future__ import annotations

import argparse
from typing import Any

from omereconcile.kubectl.client import CommandError, replica_target
from omereconcile.kubectl.context import Ctx

__all__ = ["add_parsers"]


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    render = sub.add_parser(
        "render", parents=[common], help="print what the controller renders for a live replica now"
    )
    render.add_argument("target", metavar="ir/NAME")
    render.add_argument(
        "--instances", type=int, default=0, metavar="N", help="also print Instances 0..N-1's pods"
    )
    render.add_argument(
        "--ome-namespace", default="ome", help="where inferenceservice-config lives (default ome)"
    )
    render.set_defaults(func=run)


def run(ctx: Ctx) -> int:
    # The rendering library loads only for the verbs that render or select.
    from omereconcile.kubectl.catalog import live_catalog
    from omerender.cli.io import dump_stream
    from omerender.cli.render_cmd import MAX_INSTANCES, documents
    from omerender.errors import OmeRenderError, RenderBlocked
    from omerender.models import InferenceReplica, parse_object
    from omerender.preview import preview

    args = ctx.args
    name = replica_target(args.target)
    if not 0 <= args.instances <= MAX_INSTANCES:
        raise CommandError(f"--instances must be between 0 and {MAX_INSTANCES}")
    client = ctx.client()
    raw = client.replica(name)
    try:
        # The API server already admitted it; a field newer than our CRDs must not stop a read.
        replica = parse_object(InferenceReplica, raw, strict=False)
    except OmeRenderError as exc:
        raise CommandError(f'inferencereplica "{name}" does not parse: {exc}') from exc
    catalog = live_catalog(client, [client.namespace], args.ome_namespace, ctx.err)
    try:
        result = preview(replica, catalog, instances=args.instances)
    except RenderBlocked as blocked:
        ctx.err.write(f"{blocked.reason.value}: {blocked.message}\n")
        return 1
    for advisory in result.render.advisories:
        ctx.err.write(f"Warning {advisory.reason}: {advisory.message}\n")
    ctx.out.write(dump_stream(documents(replica, result)))
    rendered = str(result.controller_revision["metadata"]["name"])
    live = str((raw.get("status") or {}).get("updateRevision") or "")
    if live and live != rendered:
        ctx.err.write(
            f"Note: this render is revision {rendered}; the replica's status.updateRevision is {live} "
            "(the controller has not rendered the current catalog yet, or renders it differently)\n"
        )
    return 0
