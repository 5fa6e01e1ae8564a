"""``kubectl ome get inferencereplicas|inferencereplica|ir [NAME] [-n NS | -A] [-o wide|json|yaml]``.

The table is :mod:`omereconcile.replica_table`'s. ``irep`` (the CRD's short name, which plain
``kubectl get irep`` accepts) is not a plugin resource name: it fails with
``unknown resource "irep" (valid resources: inferencereplicas, inferencereplica, ir)``. ``-o json|yaml``
print the Kubernetes object for a NAME, else a ``v1`` ``List`` of them (as OME's ``get`` does).

``-o wide`` against a sharded reconciler (issue 31) adds ``SHARD-HOLDER``: the process acting on the
replica, the holder of its namespace's range Lease (the host name part of the identity: the pod name in
a cluster; ``<none>`` while the range is not held), read from the Leases of ``--ome-namespace`` with one
list and no write. No column when no sharded reconciler stored its cuts there, or the Leases cannot be
listed.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from omereconcile import replica_table
from omereconcile.cluster.kube import ApiError, NotFound
from omereconcile.kubectl.client import EXIT_API, GROUP_VERSION, Client, CommandError, UsageError, segment
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.report import write_document
from omereconcile.sharding import range_holders, range_index

__all__ = ["add_parsers"]


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    get = sub.add_parser(
        "get",
        parents=[common],
        help="list InferenceReplicas with their parent and lifecycle condition",
        description=f"Resources: {', '.join(replica_table.VALID_RESOURCES)}.",
    )
    get.add_argument("resource", metavar="RESOURCE", help="inferencereplicas | inferencereplica | ir")
    get.add_argument("name", metavar="NAME", nargs="?", help="one replica")
    get.add_argument("-A", "--all-namespaces", action="store_true", help="list across every namespace")
    get.add_argument("-o", "--output", choices=["table", "wide", "json", "yaml"], help="wide: more columns")
    get.add_argument(
        "--ome-namespace",
        default="ome",
        help="the reconciler's namespace, whose range Leases -o wide reads (default ome)",
    )
    get.set_defaults(func=run)


def run(ctx: Ctx) -> int:
    args = ctx.args
    try:
        plural = replica_table.resolve_resource(args.resource)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if args.all_namespaces and args.name:
        raise CommandError("a resource cannot be retrieved by name across all namespaces")
    # Names are checked before any request, as client-go checks them while building one.
    ns = None if args.all_namespaces else ctx.namespace
    base = f"/apis/{GROUP_VERSION}/{plural}"
    if ns is not None:
        base = f"/apis/{GROUP_VERSION}/namespaces/{segment('namespace', ns)}/{plural}"
    one = f"{base}/{segment('name', args.name)}" if args.name else None
    leases = None
    if args.output == "wide":
        if not args.ome_namespace:
            raise UsageError("--ome-namespace is empty: name the reconciler's namespace, e.g. ome")
        try:
            leases = (
                f"/apis/coordination.k8s.io/v1/namespaces/{segment('namespace', args.ome_namespace)}/leases"
            )
        except CommandError as exc:
            raise UsageError(f"--ome-namespace: {exc} (the reconciler's namespace, e.g. ome)") from None
    client = ctx.client()
    if one is None:
        items = client.items(base)
    else:
        try:
            items = [client.get(one)]
        except NotFound:
            ctx.err.write(f'Error from server (NotFound): {plural}.ome.io "{args.name}" not found\n')
            return EXIT_API
    if args.output in ("json", "yaml"):
        for item in items:
            item.setdefault("apiVersion", GROUP_VERSION)
            item.setdefault("kind", "InferenceReplica")
        doc = items[0] if one is not None else {"apiVersion": "v1", "kind": "List", "items": items}
        write_document(doc, args.output, ctx.out)
        return 0
    if not items:
        ctx.err.write(f"No resources found in {ns} namespace.\n" if ns else "No resources found\n")
        return 0
    rows = replica_table.replica_table(
        items, datetime.now(UTC), wide=args.output == "wide", namespace=args.all_namespaces
    )
    if leases is not None:
        _add_holders(rows, client, leases, None if args.all_namespaces else ns)
    ctx.out.write(replica_table.format_table(rows))
    return 0


def _add_holders(rows: list[list[str]], client: Client, leases_path: str, namespace: str | None) -> None:
    """Append SHARD-HOLDER to the table (rows[0] is the header; with -A each row starts with its
    namespace)."""
    try:
        leases = client.items(leases_path)
    except ApiError:
        return
    found = range_holders(leases)
    if found is None:
        return
    ranges, holders = found
    rows[0].append("SHARD-HOLDER")
    for row in rows[1:]:
        ns = row[0] if namespace is None else namespace
        i = range_index(ranges, ns)
        row.append((holders.get(i, "") if i is not None else "").split("_", 1)[0] or "<none>")
