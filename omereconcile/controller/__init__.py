"""The reconcile loop: watches feed a level-triggered work queue keyed by replica.

- **Reflectors** list then watch each resource with a server timeout and a client read timeout; a 410
  Gone (as a status or an ERROR event) relists from ``resourceVersion=""``, other failures back off and
  re-watch (a second failure in a row relists). Every relist is counted by reason.
- **Triggers**: a replica event enqueues that replica; a pod, Service, EndpointSlice or
  ControllerRevision event enqueues the replicas of its ``ome.io/inferenceservice``/``component``
  labels (found through an index of the replicas store on those keys); a model, runtime (any runtime
  of an inheritance chain) or fine-tuned weight event enqueues the replicas whose last render used it
  (a blocked render, or an auto-selected runtime, depends on every object of that category); a change
  of the ``inferenceservice-config`` ConfigMap enqueues everything. A periodic resync enqueues every
  replica.
- **Filters** (controller-runtime's update predicates, ``omereconcile.controller.predicates``): an update that
  changes nothing a pass reads enqueues nothing, nor does the watch echo of the controller's own write
  to a replica: the pass that wrote the replica asks for its next pass itself, at once, as Go's
  reconcile returns ``Requeue`` after an update ran (unless it also wrote pods, whose watch events
  bring the next pass once the cache shows them). The end of a count window is a pass only if no status
  write landed since the counts were held; a re-run whose trigger the pass before took is skipped.
- **Expectations** (``omereconcile.cluster.expectations``, the ReplicaSet controller's): after a pass writes
  pods, the replica's next pass waits until the pods cache shows those writes (or 30 s pass), so a
  lagging cache cannot make it repeat a create or a gate patch.
- **The queue** (client-go semantics): a key is never processed by two workers at once; adds while it
  is processed mark it dirty and it runs again after; failures requeue with per-key exponential backoff
  (``base * 2**n`` up to ``max``), forgotten on success; ``requeue_after`` schedules the next look.
- **A pass** reads the replica fresh and what it owns from the reflectors' stores (``observe`` with
  :class:`CachedOwned`, indexed by namespace and labels as controller-runtime's informer indexers do),
  plans (``omereconcile.planner.plan``), executes, and maps the outcome to controller-runtime's results:
  success, error, requeue, requeue_after. A settled replica's pass costs one GET and no write.
  A status write that only publishes counts is held back for at most ``status_window`` seconds
  (:class:`~omereconcile.coalesce.StatusCoalescer`), so a roll writes its journal once per step.
- **Concurrency** (``--concurrency``): that many workers; the queue never hands one key to two of them,
  and a key waiting out its backoff sits in the delay heap, not in the FIFO, so it never holds up others.

Modules by concern: ``queue`` (the work queue), ``stores`` (the indexes and ``CachedOwned``),
``predicates`` (the update filters), ``triggers`` (what enqueues a replica; the catalog), ``watches``
(the watch set), ``shards`` (the ranges held and the gate), ``passes`` (the workers and a pass), ``core``
(the ``Controller`` assembled, start and stop). The reflector itself is ``omereconcile.cluster.reflector``.
"""

from omereconcile.controller.core import CONFIG_NAME, Controller
from omereconcile.controller.passes import PassResult
from omereconcile.controller.queue import Key, WorkQueue
from omereconcile.controller.stores import CachedOwned

__all__ = ["CONFIG_NAME", "CachedOwned", "Controller", "Key", "PassResult", "WorkQueue"]
