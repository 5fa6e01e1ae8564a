"""``kubectl ome wait ir/NAME --for=condition=C[=S]|rollout=complete|replicas=N [--timeout D]``.

Follows the replica (exact-name watch, :mod:`omereconcile.kubectl.follow`) until the predicate holds:

- ``condition=Ready`` (status ``True``; ``condition=Ready=False`` or ``=Unknown`` for those): the
  condition is present with that status. A missing condition is not ``Unknown`` (as OME's ``wait``);
- ``rollout=complete``: the roll is complete as ``rollout status`` judges it (:mod:`...state`), a
  partitioned roll at its partition included;
- ``replicas=N``: the spec's generation is observed and ``N`` Instances exist and are Ready
  (``status.replicas`` and ``status.readyReplicas`` both ``N``).

Prints ``inferencereplica.ome.io/NAME condition met`` as ``kubectl wait`` does, or one ``WaitReport``
with ``-o json|yaml``. The timeout defaults to 60s (OME's); when it passes first the exit code is 1 with
``timed out waiting for the condition`` (kubectl's). OME's CLI exits 2 for an unmet wait; here 2 stays
the usage error code, as for every ``kubectl ome`` command.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from omereconcile.kubectl import state
from omereconcile.kubectl.client import CommandError, UsageError, parse_duration, replica_target
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.follow import follow
from omereconcile.kubectl.report import source

__all__ = ["add_parsers", "predicate"]

Predicate = Callable[[dict[str, Any]], tuple[bool, str]]


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    wait = sub.add_parser("wait", parents=[common], help="wait for a replica's condition, roll or count")
    wait.add_argument("target", metavar="ir/NAME")
    wait.add_argument(
        "--for",
        dest="for_",
        required=True,
        metavar="PREDICATE",
        help="condition=Ready[=True|False|Unknown] | rollout=complete | replicas=N",
    )
    wait.add_argument("--timeout", default="60s", help="give up after this long (default 60s)")
    wait.add_argument("-o", "--output", choices=["table", "json", "yaml"], default="table")
    wait.set_defaults(func=run)


def _condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


def predicate(
    text: str, revisions_of: Callable[[dict[str, Any]], list[dict[str, Any]]] = lambda _obj: []
) -> Predicate:
    """The check a ``--for`` value names; ``CommandError`` for one it does not."""
    kind, _, rest = text.partition("=")
    if kind == "condition" and rest:
        ctype, _, wanted = rest.partition("=")
        wanted = wanted or "True"
        if wanted not in ("True", "False", "Unknown"):
            raise UsageError(f'invalid --for "{text}": a condition status is True, False or Unknown')

        def check_condition(obj: dict[str, Any]) -> tuple[bool, str]:
            cond = _condition(obj, ctype)
            seen = cond.get("status") or "absent"
            return cond.get("status") == wanted, f"{ctype}={seen}" + (
                f" ({cond.get('reason')})" if cond else ""
            )

        return check_condition
    if text == "rollout=complete":

        def check_rollout(obj: dict[str, Any]) -> tuple[bool, str]:
            # The roll target needs the revisions only while a rollback is asked for; without one the
            # target is status.updateRevision, which the rules read from the object itself.
            wanted = ((obj.get("spec") or {}).get("pacing") or {}).get("rollbackToRevision")
            progress = state.rollout_progress(obj, revisions_of(obj) if wanted else [])
            return progress.done, progress.line()

        return check_rollout
    if kind == "replicas" and rest.isdigit():
        count = int(rest)

        def check_replicas(obj: dict[str, Any]) -> tuple[bool, str]:
            meta, status = obj.get("metadata") or {}, obj.get("status") or {}
            observed = int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)
            have = (int(status.get("replicas") or 0), int(status.get("readyReplicas") or 0))
            return observed and have == (count, count), f"{have[0]} Instances, {have[1]} Ready"

        return check_replicas
    raise UsageError(
        f'invalid --for "{text}": give condition=Ready[=True|False|Unknown], rollout=complete or replicas=N'
    )


def run(ctx: Ctx) -> int:
    args = ctx.args
    name = replica_target(args.target)
    predicate(args.for_)  # a bad value is refused before the kubeconfig is read
    timeout = parse_duration("--timeout", args.timeout)
    if timeout <= 0:
        raise UsageError(f'invalid --timeout "{args.timeout}": it must be positive')
    client = ctx.client()
    check = predicate(args.for_, client.revisions)
    seen: dict[str, Any] = {}

    def judge(obj: dict[str, Any]) -> tuple[bool, str]:
        seen["obj"] = obj
        return check(obj)

    matched, observed = follow(client, name, judge, timeout)
    if args.output in ("json", "yaml"):
        content = {
            "requested": args.for_,
            "outcome": "Matched" if matched else "TimedOut",
            "observed": observed,
        }
        ctx.report("WaitReport", {"name": name}, content, "", [source(seen["obj"])])
    if not matched:
        raise CommandError(f"timed out waiting for the condition on inferencereplicas/{name} ({observed})")
    if args.output == "table":
        ctx.out.write(f"inferencereplica.ome.io/{name} condition met\n")
    return 0
