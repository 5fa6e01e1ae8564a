"""Builders for the Go-parity tier: OME's Go test inputs as objects, run through omerender's public API.

Every Go table entry becomes a replica plus the catalog objects it reads, rendered with
:func:`omerender.render` (or :func:`omerender.preview` for revisions). What Go asserts on an internal
value is asserted on what that value decides in a render: a matcher verdict is the presence (and text)
of the ``RuntimeCompatibilityAdvisory`` for a named runtime, or the runtime automatic selection picks;
a ranking is the order in which selection picks runtimes as the winners are taken away one by one.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import Catalog, InferenceReplica, Render, RenderBlocked, parse_object, render

__all__ = [
    "GP_NS",
    "GoRef",
    "gp_advisory",
    "gp_blocked",
    "gp_model",
    "gp_ranking",
    "gp_render",
    "gp_replica",
    "gp_runtime",
    "gp_selected",
]

GP_NS = "default"
_ENGINE = {"runner": {"name": "ome-container", "image": "registry.local/engine:1"}}


class GoRef:
    """Where a Go test lives: repository, path and commit (for docstrings and failure messages)."""

    def __init__(self, repo: str, path: str, commit: str) -> None:
        self.repo, self.path, self.commit = repo, path, commit

    def __str__(self) -> str:
        return f"{self.repo} {self.path}@{self.commit[:8]}"


def gp_model(
    spec: dict[str, Any] | None = None, *, name: str = "m", kind: str = "ClusterBaseModel"
) -> dict[str, Any]:
    """A Ready model (the seed gates renders on ``status.state``) with a local path, so it renders."""
    body: dict[str, Any] = {"modelFormat": {"name": "pytorch"}, "storage": {"path": f"/models/{name}"}}
    body.update(spec or {})
    metadata: dict[str, Any] = {"name": name}
    if kind == "BaseModel":
        metadata["namespace"] = GP_NS
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": kind,
        "metadata": metadata,
        "spec": body,
        "status": {"state": "Ready"},
    }


def gp_runtime(
    name: str,
    spec: dict[str, Any] | None = None,
    *,
    kind: str = "ClusterServingRuntime",
    namespace: str = GP_NS,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A runtime with Go's ``ServingRuntimeSpec`` fields; an engine piece is added so it can render."""
    body = dict(spec or {})
    body.setdefault("engineConfig", _ENGINE)
    metadata: dict[str, Any] = {"name": name}
    if kind == "ServingRuntime":
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": body}


def gp_replica(
    *,
    model: str | None = "m",
    model_kind: str | None = None,
    runtime: str | None = None,
    runtime_kind: str | None = None,
    annotations: dict[str, str] | None = None,
    component: str = "engine",
    name: str = "ir",
) -> InferenceReplica:
    spec: dict[str, Any] = {"component": component}
    if model is not None:
        spec["modelRef"] = {"name": model, **({"kind": model_kind} if model_kind else {})}
    if runtime is not None:
        spec["runtimeRef"] = {"name": runtime, **({"kind": runtime_kind} if runtime_kind else {})}
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": GP_NS,
        "uid": "00000000-0000-4000-8000-000000000021",
    }
    if annotations:
        metadata["annotations"] = annotations
    obj = {"apiVersion": "ome.io/v1beta1", "kind": "InferenceReplica", "metadata": metadata, "spec": spec}
    return parse_object(InferenceReplica, obj)


def gp_render(replica: InferenceReplica, *objects: dict[str, Any]) -> Render:
    return render(replica, Catalog.from_objects(list(objects)))


def gp_blocked(replica: InferenceReplica, *objects: dict[str, Any]) -> RenderBlocked:
    with pytest.raises(RenderBlocked) as caught:
        gp_render(replica, *objects)
    return caught.value


def gp_advisory(
    model_spec: dict[str, Any],
    runtime_spec: dict[str, Any],
    *,
    runtime_name: str = "test-runtime",
    annotations: dict[str, str] | None = None,
) -> str | None:
    """The matcher's verdict on a runtime the replica names: the advisory's text, or None when the
    runtime supports the model (``render.Resolve`` runs ``ValidateRuntime`` on a named runtime)."""
    replica = gp_replica(runtime=runtime_name, annotations=annotations)
    result = gp_render(replica, gp_model(model_spec), gp_runtime(runtime_name, runtime_spec))
    assert result.runtime_name == runtime_name
    if not result.advisories:
        return None
    (advisory,) = result.advisories
    assert advisory.reason == "RuntimeCompatibilityAdvisory"
    return advisory.message


def gp_selected(
    model_spec: dict[str, Any], *runtimes: dict[str, Any], annotations: dict[str, str] | None = None
) -> str | RenderBlocked:
    """The runtime automatic selection picks for the model, or the block when none qualifies."""
    replica = gp_replica(annotations=annotations)
    try:
        result = gp_render(replica, gp_model(model_spec), *runtimes)
    except RenderBlocked as blocked:
        return blocked
    assert result.runtime_name is not None
    return result.runtime_name


def gp_ranking(
    model_spec: dict[str, Any], *runtimes: dict[str, Any], annotations: dict[str, str] | None = None
) -> list[str]:
    """Every runtime selection would pick, best first: the winner, then the winner without it, …"""
    left = list(runtimes)
    order: list[str] = []
    while True:
        picked = gp_selected(model_spec, *left, annotations=annotations)
        if isinstance(picked, RenderBlocked):
            return order
        order.append(picked)
        left = [r for r in left if r["metadata"]["name"] != picked]
