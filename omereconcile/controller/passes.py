"""A pass and the workers that run them: a worker takes a key from the queue, the pass reads the replica
fresh and what it owns from the stores, plans, holds count-only status writes back
(:class:`~omereconcile.coalesce.StatusCoalescer`), executes, and maps the outcome to controller-runtime's
results (success, error, requeue, requeue_after), which the worker turns into the queue's next step.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from omereconcile.actions import WriteStatus
from omereconcile.cluster.kube import ApiError, NotFound, TooManyRequests
from omereconcile.cluster.observe import observe
from omereconcile.controller.queue import WAKE, WINDOW, Key
from omereconcile.controller.shards import RANGE_WAIT, ShardGate
from omereconcile.logs import ReconcileLogger, for_reconcile
from omereconcile.planner import plan

__all__ = ["PassLoop", "PassResult"]

log = logging.getLogger("omereconcile.controller")  # the name logs have always carried


@dataclass(frozen=True, slots=True)
class PassResult:
    result: str  # success | error | requeue | requeue_after
    requeue_after: float | None = None
    error: str | None = None
    actions: int = 0
    summary: str = ""
    # Run the next pass at once (the pass wrote the replica; its echo enqueues nothing).
    follow_up: bool = False
    # Counts were held back (``StatusCoalescer``): look again when their window ends, unless a status
    # write of the replica lands before.
    window_after: float | None = None


class PassLoop(ShardGate):
    """The workers, ``reconcile`` (the shard gate, then the pass) and the pass itself."""

    def _worker(self) -> None:
        m = self.metrics
        name = m.controller
        while not self.stop_event.is_set():
            key = self.queue.get(timeout=1.0)
            if key is None:
                continue
            m.active_workers.labels(name).inc()
            t0 = time.monotonic()
            try:
                res = self.reconcile(key)
            except Exception as exc:  # a bug: count it, back off, keep the worker alive
                log.exception("reconcile crashed", extra={"namespace": key[0], "replica": key[1]})
                res = PassResult("error", error=repr(exc))
            finally:
                dt = time.monotonic() - t0
                m.active_workers.labels(name).dec()
                m.reconcile_time.labels(name).observe(dt)
                m.work_duration.labels(name, name).observe(dt)
            m.reconcile_total.labels(name, res.result).inc()
            if res.result == "error":
                m.reconcile_errors.labels(name).inc()
                self.queue.add_rate_limited(key, res.requeue_after)
            elif res.result == "requeue":
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
                if res.follow_up:
                    self._enqueue(key, "follow-up")
                else:
                    if res.result == "requeue_after" and res.requeue_after is not None:
                        self.queue.add_after(key, res.requeue_after, WAKE)
                    if res.window_after is not None:
                        with self._stats_lock:
                            self._window_held[key] = time.monotonic()
                        self.queue.add_after(key, res.window_after, WINDOW)
            self.queue.done(key)
            self.last_progress = time.monotonic()

    def reconcile(self, key: Key) -> PassResult:
        ns, name = key
        lg = for_reconcile(ns, name)
        with self._stats_lock:
            triggers = self._trigger.pop(key, [])
            if self._stale_window_only(key, triggers):
                self.stale_windows += 1
                return PassResult("success")
            if not triggers:
                # Every add records its trigger first, and a pass takes them before it reads: a key
                # with none was added again while its last pass ran, by a trigger that pass had already
                # taken (and read the change of). Nothing is left for this one.
                self.repeats += 1
                return PassResult("success")
        trigger = triggers[0]
        if self.shard_ranges is not None:
            i = self.range_of(ns)
            if not self.may_act(ns) or i is None:
                with self._stats_lock:
                    self.fenced_skips += 1
                if i in self.held_ranges():
                    # Held, but its watches are still syncing or the Lease's renewal is late: look again.
                    return PassResult("requeue_after", RANGE_WAIT)
                return PassResult("success")  # not this process's replica (now): its holder acts
            with self._stats_lock:
                self._inflight[i] += 1
            try:
                return self._pass(key, trigger, lg)
            finally:
                with self._stats_lock:
                    self._inflight[i] -= 1
        return self._pass(key, trigger, lg)

    def _pass(self, key: Key, trigger: str, lg: ReconcileLogger) -> PassResult:
        ns, name = key
        if self.expectations.wait(key) is not None:
            # The last pass's pod writes are not in the cache yet: the watch events that show them
            # enqueue the replica. This pass reads and writes nothing and, as the ReplicaSet controller's
            # sync while its expectations are unmet, schedules nothing: a wait that never ends in an
            # event ends at the next trigger after the timeout, the resync at the latest.
            with self._stats_lock:
                self.waits += 1
            return PassResult("success")
        with self._stats_lock:
            self.pass_triggers[trigger] += 1
        catalog, resolver, settings = self.catalog()
        try:
            obs = observe(
                self.kube,
                ns,
                name,
                catalog=catalog,
                settings=settings,
                now=self.clock(),
                resolver=resolver,
                owned=self.owned,
                nodes=self.node if "nodes" in self.reflectors else None,
                ledgers=self._ledgers_watched(ns),
            )
        except TooManyRequests as exc:
            return PassResult("error", requeue_after=exc.retry_after, error=str(exc))
        except ApiError as exc:
            lg.warning("observe failed", extra={"error": str(exc)})
            return PassResult("error", error=str(exc))
        self.passes += 1
        if obs is None:
            self.coalescer.forget(key)
            self.expectations.forget(key)
            with self._deps_lock:
                self._deps.pop(key, None)
            lg.debug("replica gone")
            return PassResult("success")
        with self._deps_lock:
            self._deps[key] = obs.deps
        raw = plan(obs.world)
        p = self.coalescer.filter(key, raw)
        if p.actions:
            lg.info(
                "plan",
                extra={
                    "summary": p.summary,
                    "actions": [
                        f"{type(a).__name__} {getattr(a, 'name', '') or getattr(a, 'event_reason', '')}".strip()
                        for a in p.actions
                    ],
                    "requeue_after": p.requeue_after,
                    "update_revision": getattr(obs.world.render, "name", None),
                },
            )
        res = self.executor.execute(p, obs.replica, logger=lg)
        if any(isinstance(a, WriteStatus) for a in res.applied):
            self.coalescer.written(key)
            with self._stats_lock:
                self._status_written[key] = time.monotonic()
        self.expectations.expect(key, res.applied, {pod.name: pod.uid for pod in obs.world.pods})
        if res.replica_version is not None:
            with self._stats_lock:
                self._own_version[key] = res.replica_version
        # The echo of a replica write enqueues nothing, so the pass asks for the next one itself, unless
        # pod writes are pending: their watch events bring it once the cache shows them.
        follow_up = res.replica_version is not None and self.expectations.wait(key) is None
        if res.fenced:
            # Still held: the Lease's renewal was late (a loaded process), not lost; look again, as a pass
            # that finds the fence closed before it starts does. Not held: the range's holder acts.
            if self.range_of(ns) in self.held_ranges():
                return PassResult("requeue_after", RANGE_WAIT, actions=len(res.applied))
            return PassResult("success", actions=len(res.applied))
        if not res.ok:
            if res.gone and isinstance(res.error, NotFound):
                return PassResult("success", actions=len(res.applied))
            if res.conflict:
                return PassResult("requeue", error=str(res.error), actions=len(res.applied))
            retry = res.error.retry_after if isinstance(res.error, TooManyRequests) else None
            lg.warning("pass failed", extra={"error": str(res.error), "result": "error"})
            return PassResult("error", requeue_after=retry, error=str(res.error), actions=len(res.applied))
        n = len(res.applied)
        wake = raw.requeue_after
        if wake is not None and wake <= 0:
            return PassResult("requeue", actions=n, summary=p.summary)
        # The coalescer moved the requeue earlier: that is the count window's end, scheduled on its own
        # so that a status write landing before it can cancel it; the planner's wake stays as it was.
        window = p.requeue_after if p.requeue_after is not None and p.requeue_after != wake else None
        if wake is not None or window is not None:
            return PassResult(
                "requeue_after",
                wake,
                actions=n,
                summary=p.summary,
                follow_up=follow_up,
                window_after=window,
            )
        return PassResult("success", actions=n, summary=p.summary, follow_up=follow_up)
