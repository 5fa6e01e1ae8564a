"""Process wiring: the :class:`Controller` assembled from its parts (``triggers`` → ``watches`` →
``shards`` → ``passes``, each a layer over :class:`~omereconcile.controller.state.ControllerState`),
its construction, and ``start``/``stop`` of the watches, the workers and the resync.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime

from omereconcile.cluster.executor import Executor
from omereconcile.cluster.expectations import DEFAULT_TIMEOUT, Expectations
from omereconcile.cluster.kube import Kube
from omereconcile.cluster.observe import CATALOG_RESOURCES, paths
from omereconcile.coalesce import DEFAULT_WINDOW, StatusCoalescer
from omereconcile.controller.passes import PassLoop
from omereconcile.controller.queue import WorkQueue
from omereconcile.controller.stores import CachedOwned
from omereconcile.metrics import Metrics
from omereconcile.settings import OperatorSettings
from omereconcile.sharding import ShardRange
from omerender import constants as c

__all__ = ["CONFIG_NAME", "REPLICA_RESOURCES", "Controller"]

log = logging.getLogger("omereconcile.controller")  # the name logs have always carried


CONFIG_NAME = "inferenceservice-config"
# The kinds watched per scope and, sharded, per range held (``Controller._replica_reflectors``).
REPLICA_RESOURCES = (
    "inferencereplicas",
    "pods",
    "services",
    "endpointslices",
    "controllerrevisions",
    "ledgers",
)


class Controller(PassLoop):
    """The InferenceReplica controller of one process: its parts are assembled here (see the package
    doc); ``start`` runs the watches, the workers and the resync, ``stop`` ends them."""

    def __init__(
        self,
        kube: Kube,
        *,
        namespaces: Iterable[str] | None = None,
        ome_namespace: str = "ome",
        config_name: str = CONFIG_NAME,
        workers: int = 2,
        resync_period: float = 300.0,
        watch_timeout: int = 60,
        metrics: Metrics | None = None,
        identity: str = "",
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        status_window: float = DEFAULT_WINDOW,
        expectations_timeout: float = DEFAULT_TIMEOUT,
        shard_ranges: Sequence[ShardRange] | None = None,
        fence: Callable[[], frozenset[int]] | None = None,
    ) -> None:
        self.kube = kube
        # Sharded (issue 31): the agreed hash ranges over the namespace; the replicas and what they own
        # are watched only for the ranges held (``hold_ranges``), and a replica is acted on only while
        # ``fence()`` (the range Leases renewed within the renew deadline) holds its range.
        self.shard_ranges = tuple(shard_ranges) if shard_ranges is not None else None
        self.fence = fence
        self._held_lock = threading.Lock()
        self._wanted = set()  # the ranges held (their Leases)
        self._active = frozenset()  # held, and covered by synced watches
        self._rewatch = threading.Event()
        self._swapper = None
        self._pending = []  # watches being built (listing, syncing)
        self._inflight = Counter()  # passes running, by range
        self.fenced_skips = 0  # passes skipped or stopped because the range was not held
        self._ledgers_readable = {}
        self.namespaces = sorted(set(namespaces)) if namespaces else None
        self.ome_namespace = ome_namespace
        self.config_name = config_name
        self.workers = workers
        self.resync_period = resync_period
        self.watch_timeout = watch_timeout
        self.metrics = metrics or Metrics()
        self.clock = clock
        self.stop_event = threading.Event()
        self.queue = WorkQueue(metrics=self.metrics, on_due=self._on_due)
        self.executor = Executor(
            kube,
            reporting_instance=identity,
            guard=None if shard_ranges is None else self._may_act_on,
        )
        self.coalescer = StatusCoalescer(status_window)
        self._catalog_lock = threading.Lock()
        self._catalog = None
        self._settings = OperatorSettings()
        self._settings_error = None
        # The ConfigMap's data as last seen: renders read its `deploy` defaults (a bad one blocks them).
        self._config_data = {}
        self._deps = {}
        self._deps_lock = threading.Lock()
        self._threads = []
        self.reflectors = {}
        self.owned = CachedOwned(lambda resource: self.reflectors.get(resource, []))
        self.expectations = Expectations(self.owned.pod, expectations_timeout, ledgers=self.owned.ledger)
        self.last_progress = time.monotonic()
        self.passes = 0
        # What enqueued each pass (the first trigger since the key's last pass), for benchmarks; the
        # updates the filters dropped, by resource; the passes that waited on expectations.
        self._stats_lock = threading.Lock()
        self._trigger = {}
        self.pass_triggers = Counter()
        self.filtered = Counter()
        self.waits = 0
        self.stale_windows = 0  # count-window ends skipped: a status write had landed since the hold
        self.repeats = 0  # re-runs skipped: the last pass had taken their triggers
        # When a status write of each replica last landed (monotonic): a window end scheduled before it
        # has nothing left to publish.
        self._status_written = {}
        # When counts of each replica were last held back (monotonic), ending in a count window.
        self._window_held = {}
        # The resourceVersion of the controller's last write to each replica: its echo is filtered.
        self._own_version = {}
        kube.on_request = self._count_request
        self.metrics.received_bytes.set_function(lambda: float(getattr(kube, "received_bytes", 0)))

    def _count_request(self, verb: str, resource: str, status: int) -> None:
        self.metrics.api_requests.labels(verb, resource, str(status)).inc()

    def start(self, *, sync_timeout: float = 60.0) -> None:
        managed = f"{c.LABEL_MANAGED_BY}={c.MANAGED_BY_VALUE}"
        # The relocation ledgers (planner/relocation.py): ConfigMaps labelled as ours, as Go stamps the
        # audit ConfigMap; a change enqueues the replica the ledger is named for. Without the RBAC to
        # read them (an older manifest) relocation is unavailable; the start says so.
        self._ledgers_readable = {
            ns: self._may_list(
                paths.configmaps(ns),
                "relocation (autoMigrate) and the force-delete audit rows are unavailable",
                "get/list/watch/create/patch on configmaps",
                labelSelector=managed,
            )
            for ns in self._scopes()
        }
        if self.shard_ranges is None:
            for ns in self._scopes():
                self._register(self._replica_reflectors(ns, None, None))
        # Nodes, for the lost-node rules (planner/nodedeath.py): only a change of a Node's Ready
        # condition or unreachable taints is a trigger, for the replicas with a pod on it. Without the
        # RBAC to read Nodes (an older manifest) the rules see no Node and never act; the start says so.
        if self._may_list(
            paths.nodes(),
            "the NodeUnknown hold and force-delete escalation read no Node",
            "get/list/watch on nodes",
        ):
            self._reflect(
                "nodes", paths.nodes(), self._on_node, trim=True, relevant=self._owned_relevant("nodes")
            )
        for kind, plural, namespaced in CATALOG_RESOURCES:
            scopes = self._scopes() if namespaced else [None]
            for ns in scopes:
                self._reflect(plural, paths.catalog(plural, namespaced, ns), self._catalog_event(kind))
        self._reflect(
            "configmaps",
            f"/api/v1/namespaces/{self.ome_namespace}/configmaps",
            self._on_config,
            fieldSelector=f"metadata.name={self.config_name}",
        )
        for resource in sorted({*self.reflectors, *REPLICA_RESOURCES}):
            # Read at scrape time; sharded, the ranges held come and go with their reflectors.
            self.metrics.watched_objects.labels(resource).set_function(self._watched_count(resource))
        for rs in self.reflectors.values():
            for r in rs:
                r.start()
        deadline = time.monotonic() + sync_timeout
        for rs in self.reflectors.values():
            for r in rs:
                if not r.synced.wait(max(deadline - time.monotonic(), 0.1)):
                    raise TimeoutError(f"cache for {r.name} did not sync in {sync_timeout}s")
        for i in range(self.workers):
            t = threading.Thread(target=self._worker, name=f"worker-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        t = threading.Thread(target=self._resync_loop, name="resync", daemon=True)
        t.start()
        self._threads.append(t)
        self.metrics.max_workers.labels(self.metrics.controller).set(self.workers)
        log.info(
            "controller started", extra={"namespaces": self.namespaces or "all", "workers": self.workers}
        )

    def synced(self) -> bool:
        return all(r.synced.is_set() for rs in self.reflectors.values() for r in rs)

    def healthy(self, stale_after: float = 300.0) -> bool:
        """Every reflector thread alive and the watches active within ``stale_after`` seconds."""
        now = time.monotonic()
        for rs in self.reflectors.values():
            for r in rs:
                if not r._thread.is_alive() and not self.stop_event.is_set():
                    return False
                if now - r.last_activity > max(stale_after, 3.0 * self.watch_timeout):
                    return False
        return all(t.is_alive() for t in self._threads) or self.stop_event.is_set()

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        self._rewatch.set()
        self.queue.shutdown()
        for rs in self.reflectors.values():
            for r in rs:
                r.close()
        deadline = time.monotonic() + timeout
        for t in self._threads:
            t.join(max(deadline - time.monotonic(), 0.1))
