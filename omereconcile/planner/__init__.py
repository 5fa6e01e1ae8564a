"""The pure rollout planner: ``plan(world) -> Plan``. No I/O, no clock, deterministic.

Modules by concern: ``context`` (derived facts), ``rows`` (the status journal), ``podstate`` (the
readiness ladder and drain proof), ``instances`` (one Instance's state machine), ``restart`` (the restart
rules: triggers, the rebuild's revision, the spent repair), ``rollout`` (scale, partition, pause,
budgets), ``reset`` (the ``ome.io/reset-instances`` request), ``budgets``,
``retry``, ``revisions``, ``service``, ``status`` (counts and conditions), ``teardown``, and ``core``
(assembly).
"""

from omereconcile.planner.core import ROLLBACK_NOT_FOUND, plan

__all__ = ["ROLLBACK_NOT_FOUND", "plan"]
