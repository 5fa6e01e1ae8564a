"""``omerender validate``: would the API server and OME's webhook accept these InferenceReplicas?

Two checks per replica, offline:

1. the InferenceReplica CRD's schema (what the API server rejects before any webhook runs), every
   failing field named: ``InferenceReplica <ns>/<name>: <field>: <problem>``;
2. OME's admission rules (:func:`omerender.admission.review`) as a CREATE, or as an UPDATE from the
   same-named replica in ``--old``, with OME's exact messages.

The catalog for the admission rules (runtimes for the piece and inheritance checks, InferenceServices
for the name-collision check) comes from ``--objects``. An ``inferenceservice-config`` ConfigMap among
them supplies the controller identity (its ``inferenceReplica`` key); without one the identity is "not
configured", as on a cluster whose ConfigMap has no ``controllerIdentity`` block.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from omerender.admission import (
    CODE_BAD_REQUEST,
    CONFIG_KEY,
    AdmissionRequest,
    IdentityConfigError,
    parse_identity_config,
    review,
)
from omerender.catalog import Catalog, ControllerIdentity
from omerender.cli.colour import add_color_option, colour_on, severity_line
from omerender.cli.io import InputError, read
from omerender.cli.objects import (
    add_kustomize_flag,
    add_objects_options,
    add_path_flag,
    catalog_objects,
    check_inputs,
)
from omerender.diff.verdicts import LINE_LIMIT

__all__ = ["add_parser", "run"]

KIND = "InferenceReplica"
CONFIG_MAP = "inferenceservice-config"
_DEFAULT_USER = "omerender-validate"
_EPILOG = """\
output: "<namespace>/<name>: allowed" for a replica that passes; for one that does not, every reason
on a line of its own: the schema problems ("InferenceReplica <ns>/<name>: <field>: <problem>"), then
the webhook's denial messages, verbatim. A summary goes to stderr.

exit status: 0 every replica allowed, 1 any replica rejected, 2 bad input (unreadable file, no
InferenceReplica found, an --old file naming a replica twice).

examples:
  omerender validate llama-pool.yaml --objects catalog/
  omerender validate new/llama-pool.yaml --old live/llama-pool.yaml --objects catalog/
  omerender validate replicas/ --objects catalog/ --as system:serviceaccount:ome:ome-controller-manager
"""


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "validate",
        help="check InferenceReplicas against the CRD schema and OME's admission webhook, offline",
        description=(
            "Validate every InferenceReplica in FILE(s) against the InferenceReplica CRD schema and OME's\n"
            "admission rules, as a create, or as an update from the same-named replica in --old (a replica\n"
            "--old does not hold is checked as a create)."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "files", nargs="*", metavar="FILE", help="files or folders holding InferenceReplicas (- reads stdin)"
    )
    add_path_flag(
        p,
        "-f",
        "--filename",
        dest="filenames",
        default=[],
        metavar="FILE",
        help="files or folders holding InferenceReplicas, as kubectl -f takes them (repeatable)",
    )
    add_path_flag(
        p,
        "--objects",
        default=None,
        help=(
            "files or folders with the runtimes and InferenceServices the webhook reads (and, optionally, "
            f"the {CONFIG_MAP} ConfigMap); without it the runtime and name-collision checks are skipped "
            "(repeatable)"
        ),
    )
    add_kustomize_flag(p)
    add_objects_options(p)
    add_path_flag(
        p,
        "--old",
        default=None,
        metavar="FILE",
        help=(
            "files or folders with the stored replicas: each FILE replica is validated as an UPDATE from "
            "the one with its namespace/name (repeatable)"
        ),
    )
    p.add_argument(
        "--as",
        dest="username",
        default=_DEFAULT_USER,
        metavar="USER",
        help=f"the requesting user (default {_DEFAULT_USER}, a user who is not OME's controller)",
    )
    p.add_argument(
        "--as-group",
        dest="groups",
        action="append",
        default=[],
        metavar="GROUP",
        help="a group of the requesting user (repeatable); system:authenticated is always added",
    )
    add_color_option(p)
    p.set_defaults(func=run)


def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))


def _replicas(paths: Sequence[str], flag: str) -> list[dict[str, Any]]:
    loaded = read(paths, check=False)
    found = [obj.raw for obj in loaded.of_kind(KIND)]
    if not found:
        raise InputError(f"{flag}{' '.join(paths)}: no {KIND} found; give files or folders that hold one")
    check_inputs(
        loaded, flag.strip() or "FILE", {KIND}, f"give files or folders that hold an {KIND}", config=False
    )
    return found


def _identity(objects: Sequence[Mapping[str, Any]]) -> tuple[ControllerIdentity | None, str | None]:
    """The controller identity from an ``inferenceservice-config`` ConfigMap: (identity, error)."""
    maps = [
        o
        for o in objects
        if o.get("kind") == "ConfigMap" and isinstance(o.get("metadata"), Mapping)
        if o["metadata"].get("name") == CONFIG_MAP
    ]
    if len(maps) > 1:
        raise InputError(f"--objects: {len(maps)} {CONFIG_MAP} ConfigMaps; keep the one OME reads")
    if not maps:
        return None, None
    data = maps[0].get("data")
    raw = data.get(CONFIG_KEY) if isinstance(data, Mapping) else None
    try:
        # Read as strictly as the webhook reads it, so the CLI answers a malformed block as it would.
        return parse_identity_config(None if raw is None else str(raw)), None
    except IdentityConfigError as exc:
        return None, str(exc)


def _olds(paths: Sequence[str] | None) -> dict[tuple[str, str], dict[str, Any]]:
    if not paths:
        return {}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for obj in _replicas(paths, "--old "):
        key = _key(obj)
        if key in out:
            raise InputError(f"--old: {KIND} {key[0]}/{key[1]} appears twice; keep one")
        out[key] = obj
    return out


def _schema_problems(obj: Mapping[str, Any], namespace: str, name: str) -> list[str]:
    # Imported here so that `python -m omerender.cli.crds` does not find itself imported already.
    from omerender.cli.strict import replica_problems

    # The CRD schema and the names the render derives (a replica whose pods cannot exist is refused).
    return [f"{KIND} {namespace}/{name}: {problem}" for problem in replica_problems(obj)]


def run(args: argparse.Namespace) -> int:
    files = [*args.files, *args.filenames]
    if not files:
        raise InputError("give the InferenceReplicas to check: omerender validate FILE... or -f FILE")
    replicas = _replicas(files, "")
    olds = _olds(args.old)
    catalog: Catalog | None = None
    identity: ControllerIdentity | None = None
    identity_error: str | None = None
    if args.objects is not None or args.kustomize:
        objects = catalog_objects(args.objects or [], args, kustomizations=args.kustomize)
        identity, identity_error = _identity(objects)
        catalog = Catalog.from_objects(objects, controller_identity=identity, strict=False)
    else:
        print(
            "validate: no --objects given: the runtime and name-collision checks are skipped", file=sys.stderr
        )
    groups = tuple(dict.fromkeys([*args.groups, "system:authenticated"]))

    rejected = updates = 0
    on = colour_on(args)
    for obj in replicas:
        namespace, name = _key(obj)
        old = olds.get((namespace, name))
        updates += old is not None
        lines = _schema_problems(obj, namespace, name)
        decision = review(
            AdmissionRequest(
                operation="UPDATE" if old is not None else "CREATE",
                obj=obj,
                old_obj=old,
                username=args.username,
                groups=groups,
                identity=identity,
                identity_error=identity_error,
                namespace=namespace,
                name=name,
            ),
            catalog,
        )
        # A replica the schema rejects also fails the webhook's decoding (400): that says it twice.
        if not decision.allowed and not (lines and decision.code == CODE_BAD_REQUEST):
            lines.extend(decision.messages)
        if lines:
            rejected += 1
            for line in lines:
                print(_folded(line))
        else:
            note = f": {decision.message}" if decision.message else ""
            print(severity_line(_folded(f"{namespace}/{name}: allowed{note}"), on))
    creates = len(replicas) - updates
    print(
        f"validate: {len(replicas)} {KIND}{'s' if len(replicas) != 1 else ''} "
        f"({creates} as CREATE, {updates} as UPDATE from --old), {rejected} rejected",
        file=sys.stderr,
    )
    return 1 if rejected else 0


def _folded(line: str) -> str:
    """``line`` in lines of at most :data:`LINE_LIMIT` characters, the rest indented under it: the
    whole message kept (validate has no JSON output to hold what a cut would lose)."""
    if len(line) <= LINE_LIMIT:
        return line
    return "\n".join(
        textwrap.wrap(
            line, LINE_LIMIT, subsequent_indent="    ", break_on_hyphens=False, drop_whitespace=True
        )
    )
