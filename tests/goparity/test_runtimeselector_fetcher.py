"""OME's ``pkg/runtimeselector/fetcher_test.go``, entry by entry, through omerender's render.

Go: sgl-project/ome ``pkg/runtimeselector/fetcher_test.go`` @ 078c923f467715e273d6b3adfee5220e53d38ecf
(module ``sigs.k8s.io/ome``); the fetcher it tests is ome-projects/ome ``fetcher.go`` @ a543351b.
``GetRuntime`` is what a replica's ``runtimeRef`` resolves through (``render.Resolve``): found means the
replica renders from that runtime (``runtime_kind`` tells the scope), not found is ``RuntimeNotFound``.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import BlockReason, RenderBlocked
from tests.goparity.gp_support import (
    GoRef,
    gp_blocked,
    gp_model,
    gp_render,
    gp_replica,
    gp_runtime,
    gp_selected,
)

GO = GoRef(
    "sgl-project/ome", "pkg/runtimeselector/fetcher_test.go", "078c923f467715e273d6b3adfee5220e53d38ecf"
)


def _formats(name: str) -> dict[str, Any]:
    return {"supportedModelFormats": [{"modelFormat": {"name": name}}]}


RUNTIMES = [
    gp_runtime("namespace-runtime", _formats("pytorch"), kind="ServingRuntime"),
    gp_runtime("cluster-runtime", _formats("tensorflow")),
    gp_runtime("colliding-runtime", _formats("pytorch"), kind="ServingRuntime"),
    gp_runtime("colliding-runtime", _formats("tensorflow")),
]

# TestGetRuntime: (entry, name, namespace, kind, expected scope or None for RuntimeNotFound).
# The entry "no kind: namespaced wins the collision" has no counterpart: the API server defaults a
# replica's runtimeRef.kind to ClusterServingRuntime, so a stored replica never asks with kind "".
GET_RUNTIME: list[tuple[str, str, str, str | None, str | None]] = [
    ("find namespace runtime", "namespace-runtime", "default", None, "ServingRuntime"),
    ("find cluster runtime", "cluster-runtime", "default", None, "ClusterServingRuntime"),
    ("runtime not found", "non-existent", "default", None, None),
    ("namespace runtime not in different namespace", "namespace-runtime", "other", None, None),
    (
        "ClusterServingRuntime kind wins the collision",
        "colliding-runtime",
        "default",
        "ClusterServingRuntime",
        "ClusterServingRuntime",
    ),
    (
        "ServingRuntime kind wins the collision",
        "colliding-runtime",
        "default",
        "ServingRuntime",
        "ServingRuntime",
    ),
    (
        "ClusterServingRuntime kind falls back to a namespaced-only runtime",
        "namespace-runtime",
        "default",
        "ClusterServingRuntime",
        "ServingRuntime",
    ),
    (
        "ServingRuntime kind never falls back to a cluster-only runtime",
        "cluster-runtime",
        "default",
        "ServingRuntime",
        None,
    ),
    (
        "ServingRuntime kind finds the namespaced runtime",
        "namespace-runtime",
        "default",
        "ServingRuntime",
        "ServingRuntime",
    ),
    (
        "ClusterServingRuntime kind with no runtime in either scope",
        "non-existent",
        "default",
        "ClusterServingRuntime",
        None,
    ),
]


@pytest.mark.parametrize(
    ("go_entry", "name", "namespace", "kind", "scope"), GET_RUNTIME, ids=[c[0] for c in GET_RUNTIME]
)
def test_get_runtime(go_entry: str, name: str, namespace: str, kind: str | None, scope: str | None) -> None:
    """Go: sgl-project/ome pkg/runtimeselector/fetcher_test.go @ 078c923f, TestGetRuntime, entry
    ``go_entry``; a replica in ``namespace`` names the runtime (without a model: Go's fetcher sees no
    model either). ``RuntimeNotFoundError``'s text depends on the kind (errors.go)."""
    replica = gp_replica(model=None, runtime=name, runtime_kind=kind)
    replica = replica.model_copy(
        update={"metadata": replica.metadata.model_copy(update={"namespace": namespace})}
    )
    if scope is None:
        blocked = gp_blocked(replica, *RUNTIMES)
        assert blocked.reason is BlockReason.RUNTIME_NOT_FOUND, f"{GO} {go_entry}"
        if kind == "ServingRuntime":
            assert blocked.message == f"ServingRuntime {name} not found in namespace {namespace}"
        else:
            assert blocked.message == f"runtime {name} not found in namespace {namespace} or at cluster scope"
        return
    result = gp_render(replica, *RUNTIMES)
    assert (result.runtime_kind, result.runtime_name) == (scope, name), f"{GO} {go_entry}"


def test_fetch_runtimes_scopes_namespace_runtimes() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/fetcher_test.go @ 078c923f, TestFetchRuntimes: the
    namespace's runtimes (not another namespace's) and every cluster runtime are fetched; the counts
    reach users in ``NoRuntimeFoundError``. The newest-first order Go asserts feeds only a map and a
    total sort, so it has no observable counterpart (``docs/goparity.md``)."""
    runtimes = [
        gp_runtime("runtime-a", _formats("onnx"), kind="ServingRuntime"),
        gp_runtime("runtime-b", _formats("onnx"), kind="ServingRuntime"),
        gp_runtime("runtime-c", _formats("onnx"), kind="ServingRuntime", namespace="other"),
        gp_runtime("cluster-runtime-a", _formats("onnx")),
        gp_runtime("cluster-runtime-b", _formats("onnx")),
    ]
    picked = gp_selected({"modelFormat": {"name": "pytorch"}}, *runtimes)
    assert isinstance(picked, RenderBlocked)
    assert "Checked 4 runtimes (2 namespace-scoped, 2 cluster-scoped)" in picked.message
    assert "runtime-c" not in picked.message


def test_fetched_collection_is_selected_from_the_replica_namespace() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/fetcher_test.go @ 078c923f, TestFetchRuntimes (its namespace scoping, seen from selection): a ServingRuntime of
    another namespace is never a candidate, a ClusterServingRuntime always is."""
    runtimes = [
        gp_runtime(
            "elsewhere",
            {
                "supportedModelFormats": [
                    {"modelFormat": {"name": "pytorch"}, "autoSelect": True, "priority": 9}
                ]
            },
            kind="ServingRuntime",
            namespace="other",
        ),
        gp_runtime(
            "cluster", {"supportedModelFormats": [{"modelFormat": {"name": "pytorch"}, "autoSelect": True}]}
        ),
    ]
    assert gp_selected({"modelFormat": {"name": "pytorch"}}, *runtimes) == "cluster"


def test_named_runtime_resolves_with_a_model_too() -> None:
    """Go: ome-projects/ome pkg/render/resolve.go @ f0c4ef77 ``Resolve``: with a model, ``ValidateRuntime``
    runs first and resolves the runtime by the same kind rules (``RefKind``), so the scope is the same."""
    result = gp_render(
        gp_replica(runtime="colliding-runtime", runtime_kind="ServingRuntime"),
        gp_model({"modelFormat": {"name": "pytorch"}}),
        *RUNTIMES,
    )
    assert (result.runtime_kind, result.advisories) == ("ServingRuntime", ())
