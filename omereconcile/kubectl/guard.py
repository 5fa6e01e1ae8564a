"""Guarded actions: preview, confirmation, dry-run and preconditions, shared by every writing verb.

As OME's CLI guards its actions (``ome-projects/ome`` ``cmd/kubectl-ome/README.md`` "Guarded actions
and dry-runs", ``pkg/cli/mutate/confirmation.go``):

- ``--dry-run=none`` (default) writes after confirmation; ``client`` reads and checks but sends no
  write; ``server`` sends the write with ``dryRun=All`` (admission and RBAC run, nothing persists).
- Confirmation: ``--yes``, or an interactive prompt on a terminal whose default is no. Without a
  terminal ``--yes`` is required; piped input cannot confirm. Both dry-run modes confirm too.
- The write is a merge patch carrying the ``metadata.uid`` and ``metadata.resourceVersion`` read just
  before it: the API server refuses it (409) if the object changed or was replaced since. That is exit
  code 3, and nothing is retried: read the object again before another request.
- The preview and the prompt go to stderr; stdout gets one ``ActionResult``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from omereconcile.cluster.kube import Conflict, Invalid
from omereconcile.kubectl.client import REPLICA_KIND, CommandError, ConflictError
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.report import ActionResult, DryRun

__all__ = ["GuardedWrite", "add_guard_flags", "confirm", "run_guarded"]


def add_guard_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        choices=["none", "client", "server"],
        default="none",
        help="client: check and preview, send nothing; server: send with dryRun=All (default none)",
    )
    parser.add_argument("--yes", "-y", action="store_true", help="confirm without a prompt")
    parser.add_argument(
        "-o", "--output", choices=["table", "json", "yaml"], default="table", help="the ActionResult"
    )


def confirm(what: str, yes: bool, stdin: TextIO, err: TextIO) -> None:
    """Return when confirmed; ``CommandError`` otherwise (the prompt's default is no)."""
    if yes:
        return
    if not stdin.isatty():
        raise CommandError(f"{what}: not confirmed; pass --yes to confirm without a terminal")
    err.write(f"{what}? [y/N]: ")
    err.flush()
    answer = stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise CommandError(f"{what}: not confirmed")


@dataclass
class GuardedWrite:
    """One merge patch of a replica, described for its preview and its result."""

    action: str  # "rollout undo", "instance reset", ...
    replica: Mapping[str, Any]  # as read just now: its uid and resourceVersion are the preconditions
    patch: dict[str, Any]
    summary: str  # one line: what the write asks for
    message: str = ""  # what acceptance means (and does not)
    follow_up: str = ""
    revision_hash: str = ""


def _with_preconditions(patch: Mapping[str, Any], uid: str, rv: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.dumps(patch))
    meta = body.setdefault("metadata", {})
    meta["uid"] = uid
    meta["resourceVersion"] = rv
    return body


def run_guarded(ctx: Ctx, write: GuardedWrite) -> int:
    client, args, err = ctx.client(), ctx.args, ctx.err
    meta = write.replica.get("metadata") or {}
    name, uid, rv = str(meta.get("name")), str(meta.get("uid") or ""), str(meta.get("resourceVersion") or "")
    target = {
        "kind": REPLICA_KIND,
        "namespace": str(meta.get("namespace") or client.namespace),
        "name": name,
        "uid": uid,
        "resourceVersion": rv,
    }
    dry_run: DryRun = args.dry_run
    body = _with_preconditions(write.patch, uid, rv)
    err.write(
        f"{write.action}: InferenceReplica {target['namespace']}/{name} (uid {uid}, resourceVersion {rv})\n"
        f"  {write.summary}\n"
        f"  merge patch: {json.dumps(write.patch, sort_keys=True)}\n"
        f"  dry-run: {dry_run}\n"
    )
    confirm(f"{write.action} InferenceReplica {target['namespace']}/{name}", args.yes, ctx.stdin, err)
    accepted = False
    if dry_run != "client":
        try:
            client.patch(client.replica_path(name), body, dry_run=dry_run == "server")
        except (Conflict, Invalid) as exc:
            if isinstance(exc, Invalid) and "metadata.uid" not in exc.message:
                raise
            raise ConflictError(
                f"precondition failed: InferenceReplica {target['namespace']}/{name} changed since it was "
                f"read (uid {uid}, resourceVersion {rv}): {exc.message}; read it again before another request"
            ) from exc
        accepted = True
    result = ActionResult(
        action=write.action,
        target=target,
        dry_run=dry_run,
        accepted=accepted,
        applied=accepted,
        message=write.message,
        follow_up=write.follow_up,
        revision_hash=write.revision_hash,
    )
    result.write(args.output, ctx.out)
    return 0
