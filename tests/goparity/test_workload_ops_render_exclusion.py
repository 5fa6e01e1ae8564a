"""OME's ``workload/ops/render_exclusion_test.go``: relocation exclusions on the rendered pod.

Go: sgl-project/ome ``pkg/controller/v1beta1/workload/ops/render_exclusion_test.go`` @ eb2686d2 (one
stored version, read whole), over ``ops/render.go`` ``RenderWithRevision`` (sgl-project eb2686d2, and
ome-projects 7307c238, the newest stored: ``applyRequiredNodeExclusion`` for each of
``InstancePlan.ExcludedNodes``). Ours: ``planner/relocation.py`` ``apply_exclusions`` over the pod
``omerender.stamps.materialize_pod`` renders (Go's ``testRender``), and ``planner/steps.py``
``render_pod``, which a pass calls for every pod it creates, reading the Instance's exclusions from the
relocation ledger (Go's ``reconcileRelocationDirectives`` projects them into ``ExcludedNodes``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from omereconcile.planner.relocation import LedgerBook, apply_exclusions
from omereconcile.planner.steps import render_pod
from omereconcile.world import LedgerView
from tests.goparity.reconciler_world import one_replica_ctx
from tests.goparity.test_workload_ops_render import isvc, render, single

GO = "sgl-project/ome pkg/controller/v1beta1/workload/ops/render_exclusion_test.go @ eb2686d2"
HOSTNAME = "kubernetes.io/hostname"


def hostname_not_in_values(pod: dict[str, Any]) -> list[str]:
    """Go's ``hostnameNotInValues``: every value of a required hostname NotIn requirement."""
    na = ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    terms = (na.get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    return [
        v
        for term in terms
        for req in term.get("matchExpressions") or []
        if req.get("key") == HOSTNAME and req.get("operator") == "NotIn"
        for v in req.get("values") or []
    ]


def test_render_applies_excluded_nodes() -> None:
    """Go: sgl-project/ome pkg/controller/v1beta1/workload/ops/render_exclusion_test.go @ eb2686d2,
    TestRender_AppliesExcludedNodes: every excluded node lands as a required hostname NotIn on the
    rendered pod; an empty list adds no NodeAffinity."""
    pod = render(isvc(), single())
    excluded = apply_exclusions(pod, ["node-bad-1", "node-bad-2"])
    assert set(hostname_not_in_values(excluded)) >= {"node-bad-1", "node-bad-2"}, GO

    plain = apply_exclusions(render(isvc(), single()), [])
    assert hostname_not_in_values(plain) == [], GO
    assert "affinity" not in plain["spec"], GO


def _directive(uuid: str, node: str, revision: str) -> dict[str, Any]:
    """A relocation directive of Instance 0 at ``revision`` steering off ``node``."""
    return {
        "requestUUID": uuid,
        "component": "engine",
        "sourceInstance": 0,
        "phase": "Completed",
        "reason": "AutoRecover",
        "outcome": "relocate-recreate",
        "fromNode": node,
        "revision": revision,
        "startedAt": "2025-01-01T00:00:00Z",
        "completedAt": "2025-01-01T00:00:00Z",
    }


def test_the_pass_renders_the_instances_exclusions() -> None:
    """Go: … render_exclusion_test.go @ eb2686d2, TestRender_AppliesExcludedNodes, through the pass's
    own render (``render_pod``): the pod of Instance 0 carries the NotIn of both nodes its directives
    name at the revision being created; with no directive (Go's empty ``ExcludedNodes``) the pod
    carries none."""
    ctx = one_replica_ctx()
    ledger = LedgerView(
        exists=True,
        entries=(_directive("u1", "node-bad-1", ctx.target), _directive("u2", "node-bad-2", ctx.target)),
    )
    steered = replace(ctx, ledger=LedgerBook(ledger, ctx.world.replica.name, 5))
    pod = render_pod(steered, ctx.target, 0, 1, "default", 0)
    assert set(hostname_not_in_values(dict(pod))) == {"node-bad-1", "node-bad-2"}, GO

    none = replace(ctx, ledger=LedgerBook(LedgerView(exists=True, entries=()), ctx.world.replica.name, 5))
    pod = render_pod(none, ctx.target, 0, 1, "default", 0)
    assert hostname_not_in_values(dict(pod)) == [], GO
    assert "affinity" not in pod["spec"], GO
