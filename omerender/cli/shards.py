"""A command's independent work split across the machine's cores, with the serial answer guaranteed.

``lint`` renders hundreds of catalog objects and ``diff`` thousands of replicas, each render
independent of the others and each a pure function of data already loaded. :func:`in_parts` runs
``work(part, parts)`` for every part: part 0 in this process, the others in children forked after
the inputs are loaded (so they share them, copy-on-write, with nothing to send but the part number),
each sending its pickled result back through a pipe. The caller splits by ``part`` and merges the
results into the order a serial run has, so the output is byte-identical whatever the part count.

A child that fails in any way (an exception, a result that does not pickle, a crash, a kill) costs
time, never the answer: its part is computed again here, so an error the work raises is raised
here, as a serial run would raise it. A child never writes to the terminal or runs exit handlers
(``os._exit``, which also drops the output buffers it inherited unwritten). Where ``fork`` is missing, or one part is asked for, everything runs here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["add_jobs_option", "available_cores", "in_parts", "parts_for"]

T = TypeVar("T")

# More processes than this buys little: the parent's serial share (loading, merging, printing) remains.
_MAX_PARTS = 8


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it, as ``nproc`` does)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        with contextlib.suppress(OSError):
            return max(1, len(affinity(0)))
    return max(1, os.cpu_count() or 1)


def parts_for(jobs: int | None, units: int, *, per_part: int) -> int:
    """How many parts to split ``units`` of work into: ``jobs`` when given (``--jobs``; at most one
    per unit), else one per available core but no fewer than ``per_part`` units each (a part costs a
    fork and a pickled result: worth it only for work that takes a while)."""
    if jobs is not None:
        return max(1, min(jobs, units, _MAX_PARTS))
    return max(1, min(available_cores(), units // max(1, per_part), _MAX_PARTS))


def in_parts(work: Callable[[int, int], T], parts: int) -> list[T]:
    """``[work(0, parts), …, work(parts - 1, parts)]``, parts 1 and up computed in forked children."""
    if parts <= 1 or not hasattr(os, "fork"):
        return [work(part, parts) for part in range(max(1, parts))]
    # Imported here, before the children fork: a one-part command (a render) never pays for them.
    import pickle  # noqa: F401  (the children and _collect use it)
    import signal

    children: dict[int, tuple[int, int]] = {}  # part -> (pid, read end), until collected
    try:
        for part in range(1, parts):
            started = _fork(work, part, parts)
            if started is not None:
                children[part] = started
        results: list[T] = [work(0, parts)]
        for part in range(1, parts):
            outcome = _collect(children.pop(part)) if part in children else None
            results.append(cast(T, outcome[0]) if outcome is not None else work(part, parts))
        return results
    finally:
        # Only after an error here (or Ctrl-C): the children's answers are no longer wanted.
        for pid, read in children.values():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
            os.close(read)


def _fork(work: Callable[[int, int], T], part: int, parts: int) -> tuple[int, int] | None:
    try:
        read, write = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child: compute, send, and leave without running anything of the parent's
        status = 1
        try:
            os.close(read)
            import pickle

            data = pickle.dumps(work(part, parts), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(data)
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    return pid, read


def _collect(child: tuple[int, int]) -> tuple[Any] | None:
    """The child's result (in a 1-tuple, so that None is a result too), or None when it failed."""
    pid, read = child
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()  # to EOF: the child closes its end when it is done or gone
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    import pickle

    try:
        return (pickle.loads(data),)
    except Exception:  # a torn or unreadable result: recompute it here
        return None


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """``--jobs N``: how many processes render (the output is the same for every N)."""
    parser.add_argument(
        "--jobs",
        "-j",
        type=_positive,
        default=None,
        metavar="N",
        help=(
            "render in N processes (default: one per available core when the input is large enough to "
            "gain from it; 1: in this process only); the output does not depend on N"
        ),
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of processes (1 or more)")
    return value
