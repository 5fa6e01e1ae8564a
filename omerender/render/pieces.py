"""Turn a runtime piece (``engineConfig`` / ``decoderConfig`` / ``routerConfig``) into runner pods.

A piece is an inline PodSpec plus OME's component extension fields, a ``runner`` container and, for
multi-node runtimes, ``leader`` / ``worker`` blocks (02 §1.4, §10 rule 15). The shape follows OME's
``pkg/render`` ``RenderEngine`` / ``RenderDecoder`` / ``RenderRouter`` and ``Templates.MultiPod``.
"""

from __future__ import annotations

from typing import Any

from omerender._records import record
from omerender.errors import BlockReason, RenderBlocked
from omerender.render.data import clone

__all__ = ["PIECE_KEYS", "PieceShape", "RunnerPod", "split_piece"]

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


@record(frozen=False)
class RunnerPod:
    """A runner's pod spec and its main container override before they are merged."""

    name: str
    size: int
    pod: dict[str, Any]
    runner: dict[str, Any] | None


@record(frozen=False)
class PieceShape:
    """What OME renders from a piece (``RenderEngine`` / ``RenderDecoder`` / ``RenderRouter``).

    ``primary`` is the ``leader`` block when the piece has one, else the top level. ``worker`` is rendered
    whenever the piece has a ``worker`` block, but it becomes a runner only when ``multi_pod`` (both
    blocks); ``worker_size`` counts in ``PARALLELISM_SIZE`` either way (``EngineWorkerSize``).
    """

    primary: RunnerPod
    worker: RunnerPod | None
    worker_size: int
    multi_pod: bool

    @property
    def runners(self) -> list[RunnerPod]:
        return [self.primary, self.worker] if self.multi_pod and self.worker else [self.primary]


def _pod_part(block: dict[str, Any], copy: bool) -> dict[str, Any]:
    return {k: clone(v) if copy else v for k, v in block.items() if k not in _NOT_POD}


def _runner(block: dict[str, Any], copy: bool) -> dict[str, Any] | None:
    runner = block.get("runner")
    if not isinstance(runner, dict):
        return None
    return clone(runner) if copy else runner


def _worker_size(worker: dict[str, Any], key: str, *, multi_pod: bool) -> int:
    """``Worker.Size``, 0 when unset (Go's nil pointer); a multi-pod piece needs at least one worker."""
    size = worker.get("size")
    if size is None:
        size = 0
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise RenderBlocked(
            BlockReason.RENDER_FAILED, f"{key}.worker.size must be a whole number, got {size!r}"
        )
    if multi_pod and size < 1:
        # Go would store a worker runner of size 0: a leader-only Instance that still reads as multi-node.
        raise RenderBlocked(
            BlockReason.RENDER_FAILED,
            f"{key}.worker.size must be at least 1 when {key} has a leader and a worker, got {size}",
        )
    return size


def split_piece(piece: dict[str, Any], component: str, *, copy: bool = True) -> PieceShape:
    """The runner pods of a piece, shaped as ``RenderEngine`` / ``RenderDecoder`` shape them.

    Multi-pod only when the piece has both ``leader`` and ``worker`` (``Templates.MultiPod``). A ``leader``
    alone is one ``default`` runner built from the leader block; a ``worker`` alone is one ``default``
    runner from the top level whose worker size still counts toward ``PARALLELISM_SIZE``. The leader
    never borrows the top-level runner (``EnginePodSpec`` takes ``Leader.Runner`` only). A router has no
    leader or worker (``RouterSpec`` has no such fields).

    ``copy=False``: the pods and runners are the piece's own values, not copies, for a caller whose
    piece is its own and is read afterwards only for which blocks it has.
    """
    if component == "router":
        return PieceShape(
            RunnerPod("default", 1, _pod_part(piece, copy), _runner(piece, copy)), None, 0, False
        )
    key = PIECE_KEYS[component]
    leader, worker = piece.get("leader"), piece.get("worker")
    leader = leader if isinstance(leader, dict) else None
    worker = worker if isinstance(worker, dict) else None
    multi_pod = leader is not None and worker is not None
    block = leader if leader is not None else piece
    primary = RunnerPod("leader" if multi_pod else "default", 1, _pod_part(block, copy), _runner(block, copy))
    if worker is None:
        return PieceShape(primary, None, 0, False)
    size = _worker_size(worker, key, multi_pod=multi_pod)
    return PieceShape(
        primary, RunnerPod("worker", size, _pod_part(worker, copy), _runner(worker, copy)), size, multi_pod
    )
