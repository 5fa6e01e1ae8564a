"""The headless Service ``{prefix}-{component}-headless`` (01 §3.5): created, drift-corrected, and
deleted only by teardown."""

from __future__ import annotations

from typing import Any

from omereconcile.actions import Action, EnsureService, PatchService
from omereconcile.planner.context import Ctx
from omereconcile.planner.revisions import owner_reference

__all__ = ["desired_service", "service_actions"]


def _spec(ctx: Ctx) -> dict[str, Any]:
    return {
        "type": "ClusterIP",
        "clusterIP": "None",
        "publishNotReadyAddresses": True,
        "selector": ctx.selector,
    }


def desired_service(ctx: Ctx) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": ctx.service_name,
            "namespace": ctx.namespace,
            "labels": ctx.selector,
            "ownerReferences": [owner_reference(ctx.world)],
        },
        "spec": _spec(ctx),
    }


def service_actions(ctx: Ctx) -> list[Action]:
    svc = ctx.world.service
    if not svc.exists:
        return [EnsureService(desired_service(ctx), "the headless Service is missing")]
    if svc.terminating:
        return []  # wait for it to go, then recreate
    patch: dict[str, Any] = {}
    spec = svc.spec
    want = _spec(ctx)
    # clusterIP is immutable and only set at create; every other owned field is corrected each pass.
    drift = {k: v for k, v in want.items() if k != "clusterIP" and spec.get(k) != v}
    if spec.get("ports"):
        drift["ports"] = None  # headless, no ports
    if drift:
        patch["spec"] = drift
    if any(svc.labels.get(k) != v for k, v in ctx.selector.items()):
        patch["metadata"] = {"labels": ctx.selector}
    if patch:
        return [PatchService(ctx.service_name, patch, f"drift in {', '.join(sorted(drift) or ['labels'])}")]
    return []
