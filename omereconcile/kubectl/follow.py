"""Following one replica until a predicate holds: an exact-name watch, with polling when it breaks.

Shared by ``rollout status --watch`` and ``wait``. Each change of the replica is judged afresh; the
deadline is the command's ``--timeout`` (none when zero).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from omereconcile.cluster.kube import ApiError
from omereconcile.kubectl.client import Client, CommandError

__all__ = ["follow"]

T = TypeVar("T")


def follow(
    client: Client,
    name: str,
    judge: Callable[[dict[str, Any]], tuple[bool, T]],
    timeout: float,
) -> tuple[bool, T]:
    """Judge the replica now and on every change until ``judge`` says stop (``(True, verdict)``) or the
    timeout passes (``(False, last verdict)``). A deleted replica is an error."""
    deadline = time.monotonic() + timeout if timeout > 0 else None
    obj = client.replica(name)
    stop, verdict = judge(obj)
    while not stop:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False, verdict
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        seconds = int(min(left, 30.0)) + 1 if left is not None else 30
        try:
            for event in client.watch_replica(name, rv, seconds):
                if event.type == "DELETED":
                    raise CommandError(f'inferencereplica "{name}" was deleted while waiting')
                if event.type in ("ADDED", "MODIFIED"):
                    obj = event.object
                    stop, verdict = judge(obj)
                    if stop:
                        return True, verdict
                if deadline is not None and time.monotonic() >= deadline:
                    return False, verdict
        except ApiError:
            # A compacted resourceVersion or a broken stream: read again, a little later.
            time.sleep(1.0)
        obj = client.replica(name)
        stop, verdict = judge(obj)
    return True, verdict
