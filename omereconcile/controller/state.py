"""The state the parts of the controller share (``triggers``, ``watches``, ``shards``, ``passes``, and
``core`` which assigns it), declared once so that each part type-checks on its own.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from datetime import datetime

from omereconcile.cluster.executor import Executor
from omereconcile.cluster.expectations import Expectations
from omereconcile.cluster.kube import JSON, Kube
from omereconcile.cluster.observe import Dependency
from omereconcile.cluster.reflector import Reflector
from omereconcile.coalesce import StatusCoalescer
from omereconcile.controller.queue import Key, WorkQueue
from omereconcile.controller.stores import CachedOwned
from omereconcile.metrics import Metrics
from omereconcile.settings import OperatorSettings
from omereconcile.sharding import ShardRange
from omerender.catalog import Catalog
from omerender.inheritance import Resolver

__all__ = ["ControllerState"]


class ControllerState:
    """What the controller's parts share: assigned once in ``Controller.__init__`` (see there for what
    each holds), read and updated by the parts under the locks named there."""

    kube: Kube
    shard_ranges: tuple[ShardRange, ...] | None
    fence: Callable[[], frozenset[int]] | None
    _held_lock: threading.Lock
    _wanted: set[int]
    _active: frozenset[int]
    _rewatch: threading.Event
    _swapper: threading.Thread | None
    _pending: list[Reflector]
    _inflight: Counter[int]
    fenced_skips: int
    _ledgers_readable: dict[str | None, bool]
    namespaces: list[str] | None
    ome_namespace: str
    config_name: str
    workers: int
    resync_period: float
    watch_timeout: int
    metrics: Metrics
    clock: Callable[[], datetime]
    stop_event: threading.Event
    queue: WorkQueue
    executor: Executor
    coalescer: StatusCoalescer
    _catalog_lock: threading.Lock
    _catalog: tuple[Catalog, Resolver] | None
    _settings: OperatorSettings
    _settings_error: str | None
    _config_data: JSON
    _deps: dict[Key, frozenset[Dependency]]
    _deps_lock: threading.Lock
    _threads: list[threading.Thread]
    reflectors: dict[str, list[Reflector]]
    owned: CachedOwned
    expectations: Expectations
    last_progress: float
    passes: int
    _stats_lock: threading.Lock
    _trigger: dict[Key, list[str]]
    pass_triggers: Counter[str]
    filtered: Counter[str]
    waits: int
    stale_windows: int
    repeats: int
    _status_written: dict[Key, float]
    _window_held: dict[Key, float]
    _own_version: dict[Key, str]
