"""``kubectl ome logs REPLICA [-n NS] [-f] [-c CONTAINER]``: the logs of a replica's pods.

The pods are selected with ``ome.io/inferenceservice=<REPLICA>`` (the label carries the replica's own
name on a standalone replica); no InferenceService, nor the replica itself, is read. Every matching pod
is read in name order; with more than one pod each line is prefixed ``[pod/<pod>/<container>]``
(kubectl's ``--prefix``). The container is ``--container``, else the pod's
``kubectl.kubernetes.io/default-container`` annotation, else its first container. A pod whose log the
API refuses is reported on stderr as ``pod/<pod>: Error from server (<reason>): <message>`` (kubectl's
wording of the API's answer) and the exit code is 5, every ``kubectl ome`` command's for an API error;
the other pods are still read.
"""

from __future__ import annotations

import argparse
import json
import threading
from typing import Any, TextIO

from omereconcile.cluster.kube import ApiError, Kube
from omereconcile.kubectl.client import EXIT_API, CommandError, api_error, segment
from omereconcile.kubectl.context import Ctx

__all__ = ["DEFAULT_CONTAINER_ANNOTATION", "SELECTOR_LABEL", "add_parsers"]

SELECTOR_LABEL = "ome.io/inferenceservice"
DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container"


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    logs = sub.add_parser(
        "logs",
        parents=[common],
        help="print the logs of a replica's pods (selects ome.io/inferenceservice=<REPLICA>)",
    )
    logs.add_argument("replica", metavar="REPLICA")
    logs.add_argument("-f", "--follow", action="store_true", help="stream the logs")
    logs.add_argument("-c", "--container", help="container name (default: the pod's default container)")
    logs.set_defaults(func=run)


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
    return api_error(ApiError(status, str(body.get("reason") or ""), message, body))


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
        return api_error(exc)
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


def run(ctx: Ctx) -> int:
    args, out, err = ctx.args, ctx.out, ctx.err
    ns = ctx.namespace
    selector = f"{SELECTOR_LABEL}={args.replica}"
    pods_path = f"/api/v1/namespaces/{segment('namespace', ns)}/pods"
    kube = ctx.client().kube
    try:
        items = kube.list(pods_path, labelSelector=selector)["items"]
    except ApiError as exc:
        err.write(api_error(exc) + "\n")
        return EXIT_API
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

    def read_one(name: str, path: str, query: dict[str, Any], prefix: str) -> None:
        problem = _stream_log(kube, path, query, args.follow, prefix, out, lock)
        if problem is not None:
            with lock:
                failures.append(name)
                err.write(f"pod/{name}: {problem}\n")
                err.flush()

    if args.follow and len(jobs) > 1:
        threads = [threading.Thread(target=read_one, args=job, daemon=True) for job in jobs]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    else:
        for job in jobs:
            read_one(*job)
    return EXIT_API if failures else 0
