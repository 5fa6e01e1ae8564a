"""A pod snapshot the planner refuses to act on: owned pods without a valid ``ome.io/instance-index``.

Go: ome-projects/ome ``pkg/controller/v1beta1/inferencereplica/reconciler.go`` (the version carrying
``requiresAuthoritativePodGroupInventory``) ``scaleDownPodObservationRequired`` and
``invalidInstanceIndexPodCount``, and ``teardown.go`` @ dcfb4135 (the same count): while a scale-down
is due (a row the plan no longer covers, or a ``Deleting`` row under its Delete) or the replica is
being torn down, a pod the replica controls (by owner UID) whose ``ome.io/instance-index`` is missing,
not a base-10 int32, or negative fails the pass closed: no status write, no pod or PodGroup effect
(reconciler_test.go @ ae43378d ``TestReconcile_ScaleDownMalformedOwnedPodFailsBeforeLifecycleEffects``).
Such a pod belongs to no Instance, so a scale-down or a teardown cannot account for it.

Go returns an error, which only its log shows; here the pass records a Warning naming the count, the
label and the fix (no pod names: the message stays bounded, as Go's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omereconcile.actions import Plan, RecordEvent
from omereconcile.planner import rows as R
from omereconcile.planner.gang_ops import is_gang_surge_target
from omereconcile.planner.rows import Row
from omereconcile.world import World
from omerender import constants as c

__all__ = ["INVALID_INSTANCE_INDEX", "invalid_index_pod_count", "refuse_invalid_snapshot", "scale_down_due"]

INVALID_INSTANCE_INDEX = "InvalidInstanceIndex"  # our event reason: Go only returns the error
_INT = re.compile(r"[+-]?[0-9]+")  # strconv.ParseInt's grammar, base 10
_INT32_MAX = 2**31 - 1


def invalid_index_pod_count(world: World) -> int:
    """Go ``invalidInstanceIndexPodCount(podsControlledBy(pods, ir.UID))``."""
    invalid = 0
    for pod in world.pods:
        if pod.controller_uid != world.replica.uid:
            continue
        raw = pod.labels.get(c.LABEL_INSTANCE_INDEX)
        if raw is None or not _INT.fullmatch(raw) or not 0 <= int(raw) <= _INT32_MAX:
            invalid += 1
    return invalid


def scale_down_due(rows: Sequence[Row], desired: int) -> bool:
    """Go ``scaleDownPodObservationRequired``: a row the plan no longer covers
    (``ExtraInstanceIndices``: more settled rows than the desired Instances; a gang surge's
    replacement is planned with its source), or a ``Deleting`` row under its Delete."""
    if any(
        r.phase == R.DELETING and r.operation is not None and r.operation.type == R.OP_DELETE for r in rows
    ):
        return True
    return sum(1 for r in rows if r.phase != R.DELETING and not is_gang_surge_target(r)) > desired


def refuse_invalid_snapshot(world: World, what: str) -> Plan | None:
    """The refusal of ``what`` (``scale-down`` or ``teardown``) effects, or None when every owned pod
    carries a valid index."""
    invalid = invalid_index_pod_count(world)
    if not invalid:
        return None
    message = (
        f"InferenceReplica {world.replica.namespace}/{world.replica.name}: the pod snapshot contains "
        f"{invalid} UID-owned component pod(s) without a valid {c.LABEL_INSTANCE_INDEX} label; refusing "
        f"{what} effects (give each such pod a non-negative integer {c.LABEL_INSTANCE_INDEX}, or delete it)"
    )
    return Plan((RecordEvent("Warning", INVALID_INSTANCE_INDEX, message),), None, message)
