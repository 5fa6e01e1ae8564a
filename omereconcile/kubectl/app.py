"""``kubectl ome``: the parser, the shared flags, and the one place exit codes are decided.

Flags every command takes, as kubectl plugins are expected to: ``--kubeconfig``, ``--context``,
``-n/--namespace`` (default: the kubeconfig context's, else ``default``), ``--request-timeout``, ``-h``.

Exit codes: 0 ok (a wait matched, a roll complete); 1 the command's answer is a failure (a failed,
held or paused roll, a timeout, a ``diff --fail-on`` verdict) or a lookup or confirmation error; 2 bad
usage; 3 a guarded write's precondition failed (the replica changed since it was read: read it again
before another request, as OME's CLI asks); 4 ``diff --forecast``: the rolls cannot complete on the live
nodes; 5 the cluster could not be read (kubeconfig, connection, or an API error such as 403 or 404), so
a caller can tell "the command could not run" from an answer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from omereconcile.cluster.kube import ApiError, Kube
from omereconcile.kubectl import diff, get, instance, logs, render, rollout, runtime, wait
from omereconcile.kubectl.client import (
    EXIT_API,
    EXIT_CONFLICT,
    EXIT_FAILED,
    EXIT_SHORT_OF_CAPACITY,
    EXIT_USAGE,
    ClusterError,
    CommandError,
    ConflictError,
    UsageError,
    api_error,
)
from omereconcile.kubectl.context import Ctx, connect_kube

__all__ = ["VERBS", "main", "parser"]

VERBS = (get, logs, rollout, instance, runtime, wait, render, diff)


def common_flags() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    common.add_argument("--context", help="kubeconfig context to use")
    common.add_argument("-n", "--namespace", help="namespace (default: the context's, else default)")
    common.add_argument(
        "--request-timeout", default="0", help="how long one API request may take (0: the client's default)"
    )
    return common


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="kubectl ome",
        description="OME's kubectl plugin (standalone replicas)",
        epilog=(
            f"exit codes (every command): 0 ok; {EXIT_FAILED} the answer is a failure (a failed, held or "
            f"paused roll, a timeout, a diff --fail-on verdict) or a lookup error; {EXIT_USAGE} bad usage; "
            f"{EXIT_CONFLICT} a guarded write's precondition failed; {EXIT_SHORT_OF_CAPACITY} diff --forecast: "
            f"the rolls cannot complete on the live nodes; {EXIT_API} the cluster could not be read "
            "(kubeconfig, connection, an API error such as 403 or 404)"
        ),
    )
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = common_flags()
    for verb in VERBS:
        verb.add_parsers(sub, common)
    return top


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    stdin: TextIO | None = None,
    connect: Callable[[argparse.Namespace], Kube] = connect_kube,
) -> int:
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    args = parser().parse_args(rollout.watch_flag(list(sys.argv[1:] if argv is None else argv)))
    ctx = Ctx(args, stdout, stderr, stdin or sys.stdin, connect)
    try:
        return int(args.func(ctx))
    except ConflictError as exc:
        stderr.write(f"error: {exc}\n")
        return EXIT_CONFLICT
    except UsageError as exc:
        stderr.write(f"error: {exc}\n")
        return EXIT_USAGE
    except ClusterError as exc:
        stderr.write(f"error: {exc}\n")
        return EXIT_API
    except CommandError as exc:
        stderr.write(f"error: {exc}\n")
        return EXIT_FAILED
    except ApiError as exc:
        stderr.write(api_error(exc) + "\n")
        return EXIT_API
    except KeyboardInterrupt:
        return 130
    finally:
        ctx.close()
