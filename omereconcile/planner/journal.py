"""Which part of a status is the journal, and which part only publishes counts.

The journal is what the next pass (or a restarted reconciler) must read back to act safely: the rows'
phases, operations and revisions, the retry blocks, the revision pointers, ``observedGeneration``,
the rollout hold, and each condition's status and reason. The counts (``podCount`` … ``admitted`` per
row, ``replicas`` … ``updatedReadyReplicas`` per replica, and the condition messages that quote them)
are recomputed from the pods on every pass and never read back by a decision, so a write that changes
only them is a publication the controller may hold back for a short while (``omereconcile/coalesce.py``).
Go writes every changed status (``inferencereplica/status.go`` ``aggregateAndWriteStatus`` skips only
an unchanged one); holding back count-only writes is this project's choice (``docs/reconciler.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["REPLICA_COUNTERS", "ROW_COUNTERS", "counters_only", "journal_view"]

# The replica's count fields (Go ``TakeInlineV1Publication``'s counters).
REPLICA_COUNTERS = frozenset(
    {
        "replicas",
        "readyReplicas",
        "servingReplicas",
        "availableReplicas",
        "updatedReplicas",
        "updatedReadyReplicas",
    }
)
# A row's pod-derived fields (``InstanceCounters.overlay``).
ROW_COUNTERS = frozenset(
    {"podCount", "readyPodCount", "servingPodCount", "availablePodCount", "scheduledPodCount", "admitted"}
)


def journal_view(status: Mapping[str, Any]) -> dict[str, Any]:
    """``status`` without its counts: what must reach the API before any write that depends on it."""
    out: dict[str, Any] = {k: v for k, v in status.items() if k not in REPLICA_COUNTERS}
    rows = status.get("instanceStatuses")
    if isinstance(rows, list):
        out["instanceStatuses"] = [
            {k: v for k, v in r.items() if k not in ROW_COUNTERS} if isinstance(r, Mapping) else r
            for r in rows
        ]
    conds = status.get("conditions")
    if isinstance(conds, list):
        out["conditions"] = [
            {k: v for k, v in cd.items() if k != "message"} if isinstance(cd, Mapping) else cd for cd in conds
        ]
    return out


def counters_only(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True when ``new`` differs from ``old`` in its counts alone (the journal is unchanged)."""
    return dict(old) != dict(new) and journal_view(old) == journal_view(new)
