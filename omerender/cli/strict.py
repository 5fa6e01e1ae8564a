"""An InferenceReplica checked as ``kubectl apply`` with strict field validation would check it, plus
the names the render derives from it (:func:`omerender.crds.replica_problems`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from omerender.cli.io import InputError
from omerender.crds import replica_problems

__all__ = ["check_replica", "replica_problems"]

KIND: Final = "InferenceReplica"


def check_replica(obj: Mapping[str, Any], where: str) -> None:
    """Raise InputError naming ``where`` (the file), the replica and every problem, when there are any."""
    problems = replica_problems(obj)
    if problems:
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        who = f"{meta.get('namespace') or 'default'}/{meta.get('name') or '<unnamed>'}"
        raise InputError(f"{where}: {KIND} {who}: " + "; ".join(problems))
