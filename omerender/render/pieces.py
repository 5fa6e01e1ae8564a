"""Turn a runtime piece (``engineConfig`` / ``decoderConfig`` / ``routerConfig``) into runner pods.

A piece is an inline PodSpec plus OME's component extension fields, a ``runner`` container and, for
multi-node runtimes, ``leader`` / ``worker`` blocks (02 §1.4, §10 rule 15).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omerender.errors import BlockReason, RenderBlocked
from omerender.render.data import clone

__all__ = ["PIECE_KEYS", "RunnerPod", "split_piece"]

PIECE_KEYS = {"engine": "engineConfig", "decoder": "decoderConfig", "router": "routerConfig"}

# ComponentExtensionSpec and OME's own keys: none of them is part of the pod spec.
_NOT_POD = frozenset(
    {
        "minReplicas",
        "maxReplicas",
        "scaleTarget",
        "scaleMetric",
        "scaleMetricType",
        "containerConcurrency",
        "timeoutSeconds",
        "canaryTrafficPercent",
        "labels",
        "annotations",
        "minAvailable",
        "maxUnavailable",
        "deploymentStrategy",
        "kedaConfig",
        "runner",
        "leader",
        "worker",
        "acceleratorOverride",
        "config",
        "size",
    }
)


@dataclass(slots=True)
class RunnerPod:
    """A runner's pod spec and its main container override before they are merged."""

    name: str
    size: int
    pod: dict[str, Any]
    runner: dict[str, Any] | None


def _pod_part(block: dict[str, Any]) -> dict[str, Any]:
    return {k: clone(v) for k, v in block.items() if k not in _NOT_POD}


def _runner(block: dict[str, Any]) -> dict[str, Any] | None:
    runner = block.get("runner")
    return clone(runner) if isinstance(runner, dict) else None


def split_piece(piece: dict[str, Any], component: str) -> list[RunnerPod]:
    """``default``, or ``leader`` + ``worker`` when the piece has either block."""
    leader, worker = piece.get("leader"), piece.get("worker")
    # A router is always one `default` runner (02 §10 rule 15): its piece has no leader/worker.
    if component == "router" or (leader is None and worker is None):
        return [RunnerPod("default", 1, _pod_part(piece), _runner(piece))]
    key = PIECE_KEYS[component]
    if not isinstance(worker, dict):
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f"{key} declares a leader but no worker; a multi-node piece needs both"
        )
    size = worker.get("size", 1)
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise RenderBlocked(BlockReason.RENDER_FAILED, f"{key}.worker.size must be at least 1, got {size!r}")
    if isinstance(leader, dict):
        lead = RunnerPod("leader", 1, _pod_part(leader), _runner(leader) or _runner(piece))
    else:
        # No leader block: the leader is the piece-level pod, as OME's MultiNode path falls back.
        lead = RunnerPod("leader", 1, _pod_part(piece), _runner(piece))
    return [lead, RunnerPod("worker", size, _pod_part(worker), _runner(worker))]
