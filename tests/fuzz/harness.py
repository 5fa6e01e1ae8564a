"""Run one generated case in-process, under a time and memory bound, and judge what came out.

The CLI's ``main`` is called directly (a subprocess per case would cost half a second each); the
library is called as a program would call it (``parse_object``, ``Catalog.from_objects``,
``preview``); the webhook's review pipeline (``ClusterReader.handle``) is given the case's objects as
the cluster's. A finding is one of:

- ``traceback``: an exception the command or function does not document (the CLI's exit 3);
- ``bad-exit``: an exit code outside 0, 1, 2;
- ``hang``: past :data:`TIME_LIMIT` seconds;
- ``memory``: past :data:`MEMORY_LIMIT` bytes more address space than the process had (MemoryError);
- ``unlocated``: an error line that names no file, flag or field;
- ``leak``: Python's or a library's wording in a message.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import resource
import signal
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tests.fuzz.generate import Case, build, files_of

TIME_LIMIT = float(os.environ.get("OMERENDER_FUZZ_SECONDS", "20"))
MEMORY_LIMIT = 1024 * 1024 * 1024
# Python's or pydantic's own words, never ours.
LEAKS = (
    "Traceback",
    "object has no attribute",
    "NoneType",
    "not subscriptable",
    "is not of type",
    "Input should be",
    "Field required",
    "Value error, ",
    "is not one of [",
    "validation error for",
    "pydantic",
    "unhashable type",
    "can't multiply",
    "unsupported operand",
    "invalid literal for int",
    "maximum recursion",
)


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so no ``except Exception`` of the code under test eats it."""


@dataclass
class Finding:
    kind: str
    detail: str


@contextlib.contextmanager
def bounded() -> Iterator[None]:
    """At most TIME_LIMIT seconds (Hang) and MEMORY_LIMIT more bytes of address space (MemoryError)."""

    def alarm(signum: int, frame: Any) -> None:
        raise Hang

    old_handler = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    limit = size + MEMORY_LIMIT
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)


def _write(case: Case, folder: Path) -> tuple[Path, Path]:
    """The replica's file and the objects' path (a file, or a folder when the case is split)."""
    replica = objects = folder
    for name, text in files_of(case):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        if name == "replica.yaml":
            replica = path
        else:
            objects = path.parent if case.split else path
    if case.split and objects == folder:
        objects = folder / "objects"
        objects.mkdir(exist_ok=True)
    return replica, objects


def _argv(case: Case, replica: Path, objects: Path) -> list[str]:
    if case.command == "render":
        return ["render", str(replica), "--objects", str(objects), "--instances", "2"]
    if case.command == "validate":
        return ["validate", str(replica), "--objects", str(objects)]
    return ["lint", "--no-schema", "--objects", str(objects), str(replica)]


def _located(line: str, folder: Path) -> bool:
    """Whether an error line names its file (a path under the case's folder), a flag or a field."""
    return str(folder) in line or " --" in line or line.split(": ", 2)[-1].startswith("--")


def run_cli(case: Case, folder: Path) -> Finding | None:
    from omerender.cli import main

    replica, objects = _write(case, folder)
    argv = _argv(case, replica, objects)
    out, err = io.StringIO(), io.StringIO()
    try:
        with bounded(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except Hang:
        return Finding("hang", " ".join(argv))
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    text = err.getvalue()
    if code == 3:
        kind = "memory" if "(MemoryError)" in text else "traceback"
        return Finding(kind, text.strip())
    if code not in (0, 1, 2):
        return Finding("bad-exit", f"exit {code}: {text.strip()}")
    for leak in LEAKS:
        if leak in text:
            return Finding("leak", f"{leak!r} in: {text.strip()}")
    if code == 2:
        lines = [ln for ln in text.splitlines() if ": note: " not in ln]
        # The first line names its subject, or heads a list whose every item (indented) names its own.
        head, items = (lines[0], [ln for ln in lines[1:] if ln.startswith("  /")]) if lines else ("", [])
        if head.endswith(":") and items:
            unlocated = [ln for ln in items if not _located(ln, folder)]
            if unlocated:
                return Finding("unlocated", unlocated[0])
        elif head and not _located(head, folder):
            return Finding("unlocated", head)
    return None


def _documents(case: Case, folder: Path) -> list[Any] | None:
    """The case's documents as the library's caller has them (via the safe loader), or None."""
    from omerender.yamlsafe import load_documents

    docs: list[Any] = []
    for _, text in files_of(case):
        try:
            docs += [d for d in load_documents(text.encode("utf-8", "surrogateescape")) if d is not None]
        except Exception:  # the CLI's concern: the loader's errors are checked through it
            return None
    return docs


LIBRARY_ARGUMENTS: list[dict[str, Any]] = [
    {"instances": 2},
    {"instances": 1_000_000},
    {"instances": 10**30},
    {"instance_ready_timeout_seconds": math.nan},
    {"instance_ready_timeout_seconds": math.inf},
    {"instance_ready_timeout_seconds": -math.inf},
    {"instance_ready_timeout_seconds": 1e308},
    {"uid": "\ud800"},
    {"uid": "\x1b[2J"},
    {"uid": "u" * 100_000},
]


def run_library(case: Case, folder: Path, pick: int) -> Finding | None:
    from omerender import Catalog, InferenceReplica, OmeRenderError, parse_object, preview

    docs = _documents(case, folder)
    if not docs:
        return None
    kwargs = LIBRARY_ARGUMENTS[pick % len(LIBRARY_ARGUMENTS)]
    try:
        with bounded():
            replica = parse_object(InferenceReplica, docs[0]) if isinstance(docs[0], dict) else None
            catalog = Catalog.from_objects([d for d in docs[1:] if isinstance(d, dict)])
            if replica is not None:
                result = preview(replica, catalog, **kwargs)
                json.dumps([result.service, list(result.pods)])
    except Hang:
        return Finding("hang", f"preview(**{kwargs!r:.80})")
    except MemoryError:
        return Finding("memory", f"preview(**{kwargs!r:.80})")
    except OmeRenderError as exc:
        text = str(exc)
        for leak in LEAKS:
            if leak in text:
                return Finding("leak", f"{leak!r} in {type(exc).__name__}: {text[:400]}")
    except Exception as exc:
        return Finding("traceback", f"{type(exc).__name__}: {str(exc)[:300]} (preview(**{kwargs!r:.80}))")
    return None


class _Kube:
    """The cluster the webhook reads: the case's objects (listed by kind) and its ConfigMap."""

    PLURALS: ClassVar[dict[str, str]] = {
        "clusterservingruntimes": "ClusterServingRuntime",
        "servingruntimes": "ServingRuntime",
        "clusterbasemodels": "ClusterBaseModel",
        "basemodels": "BaseModel",
        "inferenceservices": "InferenceService",
        "finetunedweights": "FineTunedWeight",
    }

    def __init__(self, docs: list[Any]) -> None:
        self.docs = [d for d in docs if isinstance(d, dict)]

    def get(self, path: str, **q: Any) -> dict[str, Any]:
        from omereconcile.cluster.kube import NotFound

        for d in self.docs:
            if d.get("kind") == "ConfigMap":
                return d
        raise NotFound(404, "NotFound", "not found")

    def list(self, path: str, **q: Any) -> dict[str, Any]:
        plural = path.rstrip("/").rsplit("/", 1)[-1]
        kind = self.PLURALS.get(plural)
        return {"items": [json.loads(json.dumps(d)) for d in self.docs if d.get("kind") == kind]}


def run_webhook(case: Case, folder: Path, operation: str) -> Finding | None:
    from omereconcile.server.webhook import ClusterReader, parse_review
    from omereconcile.server.webhook_http import Refused

    docs = _documents(case, folder)
    if not docs:
        return None
    try:
        body = json.dumps(
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": "fuzz",
                    "operation": operation,
                    "userInfo": {"username": "alice"},
                    "object": docs[0],
                    **({"oldObject": docs[0]} if operation == "UPDATE" else {}),
                },
            }
        ).encode()
    except (ValueError, TypeError, RecursionError):  # NaN, not JSON data: the API server sends neither
        return None
    reader = ClusterReader(_Kube(docs[1:]), ome_namespace="ome")  # type: ignore[arg-type]
    try:
        with bounded():
            out = reader.handle(parse_review(body))
            json.dumps(out)
    except Refused:
        return None
    except Hang:
        return Finding("hang", "webhook review")
    except MemoryError:
        return Finding("memory", "webhook review")
    except Exception as exc:  # the server's 500
        return Finding("traceback", f"webhook 500: {type(exc).__name__}: {str(exc)[:300]}")
    resp = out["response"]
    message = (resp.get("status") or {}).get("message") or ""
    for leak in LEAKS:
        if leak in message:
            return Finding("leak", f"{leak!r} in webhook answer: {message[:400]}")
    return None


def run(case: Case, index: int = 0) -> Finding | None:
    with tempfile.TemporaryDirectory(prefix="omerender-fuzz-") as tmp:
        folder = Path(tmp)
        if case.command == "library":
            return run_library(case, folder, index)
        if case.command == "webhook":
            return run_webhook(case, folder, "UPDATE" if index % 2 else "CREATE")
        return run_cli(case, folder)


def shrink(
    case: Case, finding: Finding, index: int, runner: Callable[[Case, int], Finding | None] = run
) -> Case:
    """The case with as few mutations as still give a finding of the same kind."""
    current = case
    changed = True
    while changed and len(current.mutations) > 1:
        changed = False
        for i in range(len(current.mutations)):
            trial = build(current, current.mutations[:i] + current.mutations[i + 1 :])
            again = runner(trial, index)
            if again is not None and again.kind == finding.kind:
                current, changed = trial, True
                break
    for flag in ("split", "as_json"):
        if getattr(current, flag):
            trial = build(current, current.mutations)
            setattr(trial, flag, False)
            again = runner(trial, index)
            if again is not None and again.kind == finding.kind:
                current = trial
    return current


def reproducer(case: Case, finding: Finding, seed: int, index: int) -> str:
    files = "\n".join(
        f"--- {name} ({len(text)} chars)\n{text[:1500]}{' …' if len(text) > 1500 else ''}"
        for name, text in files_of(case)
    )
    return (
        f"{finding.kind}: {finding.detail[:1200]}\n"
        f"reproduce: OMERENDER_FUZZ_SEED={seed} OMERENDER_FUZZ_ONLY={index} python3 -m pytest tests/fuzz -q\n"
        f"{case.describe()}\n{files}"
    )
