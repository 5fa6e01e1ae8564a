"""``kubectl ome``: the standalone-replica subset of OME's kubectl plugin.

Installed as the console script ``kubectl-ome``; kubectl runs it for ``kubectl ome ...`` when it is on PATH.

    kubectl ome get inferencereplicas|inferencereplica|ir [NAME] [-n NS | -A] [-o wide]
    kubectl ome logs REPLICA [-n NS] [-f] [-c CONTAINER]

``get`` prints the table of :mod:`omereconcile.replica_table`. ``irep`` (the CRD's short name, which plain
``kubectl get irep`` accepts) is not a plugin resource name: it fails with
``unknown resource "irep" (valid resources: inferencereplicas, inferencereplica, ir)``.

``logs`` selects the replica's pods with ``ome.io/inferenceservice=<REPLICA>`` (the label carries the
replica's own name on a standalone replica) and never reads an InferenceService, nor the replica itself.
Every matching pod is read in name order; with more than one pod each line is prefixed
``[pod/<pod>/<container>]`` (kubectl's ``--prefix``). The container is ``--container``, else the pod's
``kubectl.kubernetes.io/default-container`` annotation, else its first container. A pod whose log the API
refuses is reported on stderr as ``pod/<pod>: Error from server (<reason>): <message>`` (kubectl's wording
of the API's answer) and the exit code is 1; the other pods are still read.

Flags kubectl plugins are expected to take: ``--kubeconfig``, ``--context``, ``-n``, ``-A``, ``-h``. Without
``-n`` the namespace is the kubeconfig context's, else ``default``. Exit codes: 0 ok, 1 an API or
lookup error, 2 bad usage.

All API I/O goes through :class:`omereconcile.kube.Kube`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import yaml

from omereconcile import replica_table
from omereconcile.kube import ApiError, Kube, NotFound
from omerender import __version__

__all__ = ["main"]

# libyaml's loader where PyYAML has it: a kubeconfig of many clusters loads ten times faster.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

GROUP_VERSION = "ome.io/v1beta1"
SELECTOR_LABEL = "ome.io/inferenceservice"
DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"


class CommandError(Exception):
    """Printed as ``error: <message>`` with exit code 1."""


def _prog() -> str:
    base = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "kubectl-ome"
    return "kubectl ome" if base.startswith("kubectl-") else base


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
    common.add_argument("--context", help="kubeconfig context to use")
    common.add_argument("-n", "--namespace", help="namespace (default: the context's, else default)")

    parser = argparse.ArgumentParser(prog=_prog(), description="OME's kubectl plugin (standalone replicas)")
    parser.add_argument("--version", action="version", version=f"kubectl-ome {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    get = sub.add_parser(
        "get",
        parents=[common],
        help="list InferenceReplicas with their parent and lifecycle condition",
        description=f"Resources: {', '.join(replica_table.VALID_RESOURCES)}.",
    )
    get.add_argument("resource", metavar="RESOURCE", help="inferencereplicas | inferencereplica | ir")
    get.add_argument("name", metavar="NAME", nargs="?", help="one replica")
    get.add_argument("-A", "--all-namespaces", action="store_true", help="list across every namespace")
    get.add_argument("-o", "--output", choices=["wide"], help="wide: the extra status columns")
    get.set_defaults(func=_get)

    logs = sub.add_parser(
        "logs",
        parents=[common],
        help="print the logs of a replica's pods (selects ome.io/inferenceservice=<REPLICA>)",
    )
    logs.add_argument("replica", metavar="REPLICA")
    logs.add_argument("-f", "--follow", action="store_true", help="stream the logs")
    logs.add_argument("-c", "--container", help="container name (default: the pod's default container)")
    logs.set_defaults(func=_logs)
    return parser


# -- kubeconfig ---------------------------------------------------------------------------------------


def _kubeconfig_files(explicit: str | None) -> list[Path]:
    if explicit:
        return [Path(explicit)]
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def default_namespace(explicit: str | None, context: str | None) -> str:
    """The namespace of the kubeconfig context (``--context``, else current-context); ``default`` if none.

    Files merge as kubectl merges them: the first file that sets a key wins.
    """
    current = context
    contexts: dict[str, Any] = {}
    for path in _kubeconfig_files(explicit):
        try:
            doc = yaml.load(path.read_text(), Loader=_LOADER) or {}
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(doc, dict):
            continue
        if current is None and doc.get("current-context"):
            current = str(doc["current-context"])
        for entry in doc.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") and entry["name"] not in contexts:
                contexts[str(entry["name"])] = entry.get("context") or {}
    ctx = contexts.get(current or "") or {}
    return str(ctx.get("namespace") or "default")


def _kube(args: argparse.Namespace) -> Kube:
    try:
        return Kube.from_kubeconfig(args.kubeconfig, context=args.context)
    except Exception as exc:  # the client's ConfigException; only omereconcile.kube may import its type
        raise CommandError(f"cannot load the kubeconfig: {exc}") from exc


def _namespace(args: argparse.Namespace) -> str:
    return str(args.namespace or default_namespace(args.kubeconfig, args.context))


def segment(what: str, value: str) -> str:
    """``value`` as one URL path segment: refused as client-go refuses it, then percent-escaped.

    client-go's ``rest.Request.Name``/``Namespace`` reject what
    ``k8s.io/apimachinery/pkg/api/validation/path.IsValidPathSegmentName`` flags (``.``, ``..``, or a
    ``/`` or ``%`` anywhere), with ``invalid resource name "x": [may not contain '/']``; anything else
    (spaces, ``?``, ``#``, non-ASCII) is escaped so it cannot change the request's path or query.
    """
    problems = [f"may not be '{value}'"] if value in (".", "..") else []
    problems += [f"may not contain '{c}'" for c in ("/", "%") if c in value]
    if problems:
        label = "resource name" if what == "name" else what
        raise CommandError(f"invalid {label} {json.dumps(value)}: [{', '.join(problems)}]")
    return quote(value, safe="")


def _api_error(err: ApiError) -> str:
    """An API error worded as kubectl words it: ``Error from server (Reason): message``."""
    if not err.status:
        return f"error: {err.message}"
    return (
        f"Error from server ({err.reason}): {err.message}"
        if err.reason
        else f"Error from server: {err.message}"
    )


# -- get ----------------------------------------------------------------------------------------------


def _get(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        plural = replica_table.resolve_resource(args.resource)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if args.all_namespaces and args.name:
        raise CommandError("a resource cannot be retrieved by name across all namespaces")
    # Names are checked before any request, as client-go checks them while building one.
    ns = None if args.all_namespaces else _namespace(args)
    base = f"/apis/{GROUP_VERSION}/{plural}"
    if ns is not None:
        base = f"/apis/{GROUP_VERSION}/namespaces/{segment('namespace', ns)}/{plural}"
    one = f"{base}/{segment('name', args.name)}" if args.name else None
    kube = _kube(args)
    try:
        if one is None:
            items = kube.list(base)["items"]
        else:
            try:
                items = [kube.get(one)]
            except NotFound:
                err.write(f'Error from server (NotFound): {plural}.ome.io "{args.name}" not found\n')
                return 1
    except ApiError as exc:
        err.write(_api_error(exc) + "\n")
        return 1
    finally:
        kube.close()
    if not items:
        err.write(f"No resources found in {ns} namespace.\n" if ns else "No resources found\n")
        return 0
    rows = replica_table.replica_table(
        items, datetime.now(UTC), wide=args.output == "wide", namespace=args.all_namespaces
    )
    out.write(replica_table.format_table(rows))
    return 0


# -- logs ---------------------------------------------------------------------------------------------


def _container(pod: dict[str, Any], wanted: str | None) -> str:
    names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
    if wanted:
        return wanted
    annotated = ((pod.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CONTAINER_ANNOTATION)
    if annotated and annotated in names:
        return str(annotated)
    return names[0] if names else ""


def _error_text(status: int, data: bytes) -> str:
    """The API's answer to a refused log request (a Status, or plain text), worded as kubectl does."""
    try:
        body = json.loads(data or b"{}")
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = str(body.get("message") or data.decode(errors="replace").strip() or status)
    return _api_error(ApiError(status, str(body.get("reason") or ""), message, body))


def _stream_log(
    kube: Kube, path: str, query: dict[str, Any], follow: bool, prefix: str, out: TextIO, lock: threading.Lock
) -> str | None:
    """Copy one container's log to ``out`` (line by line, prefixed); the API's refusal as text, or None.

    ``Kube.request`` decodes JSON, and a log is text, so this reads the body raw through ``Kube.open_raw``.
    """
    timeout: float | tuple[float, float] = (5.0, 3600.0 * 24) if follow else (5.0, 60.0)
    try:
        resp = kube.open_raw(path, query=query, timeout=timeout)
    except ApiError as exc:
        return _api_error(exc)
    raw = resp.response
    try:
        if not 200 <= int(resp.status) <= 299:
            return _error_text(int(resp.status), raw.data)
        buf = b""
        for chunk in raw.stream(65536, decode_content=True):
            buf += chunk
            *lines, buf = buf.split(b"\n")
            if lines:
                with lock:
                    for line in lines:
                        out.write(prefix + line.decode(errors="replace") + "\n")
                    out.flush()
        if buf:
            with lock:
                out.write(prefix + buf.decode(errors="replace") + "\n")
                out.flush()
        return None
    except Exception as exc:  # a broken stream mid-follow
        return f"stream broken: {type(exc).__name__}: {exc}"
    finally:
        raw.release_conn()


def _logs(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    ns = _namespace(args)
    selector = f"{SELECTOR_LABEL}={args.replica}"
    pods_path = f"/api/v1/namespaces/{segment('namespace', ns)}/pods"
    kube = _kube(args)
    try:
        try:
            items = kube.list(pods_path, labelSelector=selector)["items"]
        except ApiError as exc:
            err.write(_api_error(exc) + "\n")
            return 1
        pods = sorted(
            (p for p in items if not (p.get("metadata") or {}).get("deletionTimestamp")),
            key=lambda p: str(p["metadata"]["name"]),
        )
        if not pods:
            raise CommandError(
                f'no pods found for replica "{args.replica}" in namespace "{ns}" (selector {selector})'
            )
        lock = threading.Lock()
        failures: list[str] = []
        jobs: list[tuple[str, str, dict[str, Any], str]] = []
        for pod in pods:
            name = str(pod["metadata"]["name"])
            container = _container(pod, args.container)
            query: dict[str, Any] = {"container": container or None}
            if args.follow:
                query["follow"] = "true"
            prefix = f"[pod/{name}/{container}] " if len(pods) > 1 else ""
            path = f"{pods_path}/{segment('name', name)}/log"
            jobs.append((name, path, query, prefix))

        def run(name: str, path: str, query: dict[str, Any], prefix: str) -> None:
            problem = _stream_log(kube, path, query, args.follow, prefix, out, lock)
            if problem is not None:
                with lock:
                    failures.append(name)
                    err.write(f"pod/{name}: {problem}\n")
                    err.flush()

        if args.follow and len(jobs) > 1:
            threads = [threading.Thread(target=run, args=job, daemon=True) for job in jobs]
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
        else:
            for job in jobs:
                run(*job)
        return 1 if failures else 0
    finally:
        kube.close()


# -- entry point --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    stdout = out or sys.stdout
    stderr = err or sys.stderr
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args, stdout, stderr))
    except CommandError as exc:
        stderr.write(f"error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
