"""The seed's Steps 1–3 and Clean up, with ``omereconcile run`` under its own ServiceAccount and deploy/'s RBAC."""

from __future__ import annotations

from collections.abc import Callable

from helpers import seed_steps_1_to_3
from reconciler_proc import Reconciler

from testbed.testing import Cluster


def test_seed_steps_1_to_3_create_check_scale(
    cluster: Cluster, reconcilers: Callable[..., Reconciler], namespace: str
) -> None:
    rec = reconcilers()
    seed_steps_1_to_3(cluster, namespace, rec)
