"""OME's ``pkg/runtimeinheritance`` resolve, from_client and descendants tests, through omerender.

Go: sgl-project/ome ``pkg/runtimeinheritance/resolve_test.go`` @ 60a93e5d and ``from_client_test.go`` @
865bebfd (module ``sigs.k8s.io/ome``; ome-projects/ome holds no copy of either in the index), and
ome-projects/ome ``pkg/runtimeinheritance/descendants_test.go`` @ 1a848b19. The merge tests of the
package (``merge_test.go``) live in ``tests/goparity/test_inheritance_merge.py``.

A chain resolves when a replica names its head (``GetRuntime`` → ``ResolveClusterRuntime`` /
``ResolveNamespacedRuntime``). Go's specs carry their env on the runtime's top-level ``containers``;
a render reads the engine piece, so the env sits on ``engineConfig.runner`` here (the same
strategic merge by name). The root-first chain is read with ``omerender.inheritance.resolve_runtime``;
a failed chain is ``RenderFailed`` with Go's error text (``classifyResolveError`` matches none of its
types).
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import (
    BlockReason,
    Catalog,
    InferenceReplica,
    RenderBlocked,
    RuntimeResource,
    parse_object,
    preview,
    render,
)
from omerender.inheritance import resolve_runtime

RESOLVE = "sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d"
FROM_CLIENT = "sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd"
DESCENDANTS = "ome-projects/ome pkg/runtimeinheritance/descendants_test.go @ 1a848b19"


def rt(
    name: str,
    parent: str = "",
    *envs: tuple[str, str],
    namespace: str | None = None,
    disabled: bool | None = None,
    image: str | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if parent:
        metadata["annotations"] = {"ome.io/inherit-from": parent}
    if namespace:
        metadata["namespace"] = namespace
    runner: dict[str, Any] = {"name": "ome-container", "env": [{"name": k, "value": v} for k, v in envs]}
    if image:
        runner["image"] = image
    spec: dict[str, Any] = {"engineConfig": {"runner": runner}}
    if disabled is not None:
        spec["disabled"] = disabled
    kind = "ServingRuntime" if namespace else "ClusterServingRuntime"
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def replica(
    runtime: str, namespace: str = "team", kind: str | None = None, name: str = "ir"
) -> InferenceReplica:
    ref: dict[str, Any] = {"name": runtime, **({"kind": kind} if kind else {})}
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": name, "namespace": namespace, "uid": f"{name}-uid"},
            "spec": {"component": "engine", "runtimeRef": ref},
        },
    )


def env_of(rep: InferenceReplica, *objects: dict[str, Any]) -> list[tuple[str, Any]]:
    result = render(rep, Catalog.from_objects(list(objects)))
    main = next(c for c in result.runners[0].template["spec"]["containers"] if c["name"] == "ome-container")
    own = [(e["name"], e.get("value")) for e in main.get("env", [])]
    return [(k, v) for k, v in own if not k.startswith(("OME_", "LWS_"))]


def chain(head: dict[str, Any], *objects: dict[str, Any]) -> list[str]:
    catalog = Catalog.from_objects([head, *objects])
    resolved = resolve_runtime(parse_object(RuntimeResource, head), catalog)
    return [r.metadata.name for r in resolved.chain]


def failure(rep: InferenceReplica, *objects: dict[str, Any]) -> RenderBlocked:
    with pytest.raises(RenderBlocked) as caught:
        render(rep, Catalog.from_objects(list(objects)))
    return caught.value


# -- resolve_test.go ----------------------------------------------------------------------------------


def test_resolve_no_inheritance() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_NoInheritance: chain [solo]; the effective spec is its own (disabled,
    so a replica naming it is RuntimeDisabled)."""
    solo = rt("solo", disabled=True)
    assert chain(solo) == ["solo"]
    error = failure(replica("solo"), solo)
    assert (error.reason, error.message) == (
        BlockReason.RUNTIME_DISABLED,
        "cluster-scoped runtime solo is disabled",
    )


def test_resolve_two_level_chain() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_TwoLevelChain."""
    profile = rt("profile", "", ("NCCL_DEBUG", "INFO"))
    runtime = rt("runtime", "profile", ("FROM_RUNTIME", "yes"))
    assert chain(runtime, profile) == ["profile", "runtime"]
    env = dict(env_of(replica("runtime"), profile, runtime))
    assert env["NCCL_DEBUG"] == "INFO"
    assert env["FROM_RUNTIME"] == "yes"


def test_resolve_four_level_chain_bottom_up() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_FourLevelChainBottomUp: the union of all four envs."""
    objs = [
        rt("root", "", ("NCCL", "info")),
        rt("mid", "root", ("MID", "1")),
        rt("near", "mid", ("NEAR", "1")),
        rt("leaf", "near", ("LEAF", "1")),
    ]
    assert chain(objs[3], *objs[:3]) == ["root", "mid", "near", "leaf"]
    env = dict(env_of(replica("leaf"), *objs))
    assert set(env) >= {"NCCL", "MID", "NEAR", "LEAF"}
    assert len([k for k in env if k in {"NCCL", "MID", "NEAR", "LEAF"}]) == 4


def test_resolve_child_scalar_wins_over_deep_root() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_ChildScalarWinsOverDeepRoot: the leaf's ``disabled: false`` wins, so
    the leaf renders."""
    root = rt("root", disabled=True)
    leaf = rt("leaf", "root", disabled=False, image="img:1")
    assert render(replica("leaf"), Catalog.from_objects([root, leaf])).runtime_name == "leaf"


def test_resolve_parent_not_found() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_ParentNotFound: ``ParentNotFoundError`` with the parent and the chain."""
    error = failure(replica("runtime"), rt("runtime", "ghost"))
    assert (error.reason, error.message) == (
        BlockReason.RENDER_FAILED,
        'inherit-from parent "ghost" not found (chain so far: [runtime])',
    )


def test_resolve_cycle_direct() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_CycleDirect: a → b → a is ``[a b a]``."""
    error = failure(replica("a"), rt("a", "b"), rt("b", "a"))
    assert (error.reason, error.message) == (BlockReason.RENDER_FAILED, "inheritance cycle detected: [a b a]")


def test_resolve_cycle_self() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_CycleSelf."""
    error = failure(replica("a"), rt("a", "a"))
    assert (error.reason, error.message) == (BlockReason.RENDER_FAILED, "inheritance cycle detected: [a a]")


def test_resolve_max_depth_exceeded() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/resolve_test.go @ 60a93e5d, TestResolve_MaxDepthExceeded: leaf → n5 → … → n0 with a depth of 5 (OME's
    ``RuntimeInheritMaxDepth``) fails at the sixth link, with the chain walked so far."""
    objs = [rt(f"n{i}", f"n{i - 1}" if i else "") for i in range(6)]
    error = failure(replica("leaf"), *objs, rt("leaf", "n5"))
    assert (error.reason, error.message) == (
        BlockReason.RENDER_FAILED,
        "inheritance chain exceeds max depth 5 (chain: [leaf n5 n4 n3 n2])",
    )


# -- from_client_test.go ------------------------------------------------------------------------------


def test_resolve_cluster_runtime_two_level_merge() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveClusterRuntime_TwoLevelMerge."""
    profile, child = rt("profile", "", ("FROM_PROFILE", "yes")), rt("rt", "profile", ("FROM_CHILD", "yes"))
    assert chain(child, profile) == ["profile", "rt"]
    env = dict(env_of(replica("rt"), profile, child))
    assert (env["FROM_PROFILE"], env["FROM_CHILD"]) == ("yes", "yes")


def test_resolve_cluster_runtime_missing() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveClusterRuntime_RuntimeMissing: the head itself is missing; the fetcher
    checks the head first, so a replica naming it is RuntimeNotFound."""
    error = failure(replica("ghost"))
    assert (error.reason, error.message) == (
        BlockReason.RUNTIME_NOT_FOUND,
        "runtime ghost not found in namespace team or at cluster scope",
    )


def test_resolve_cluster_runtime_parent_missing() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveClusterRuntime_ParentMissingReturnsTypedError."""
    error = failure(replica("rt"), rt("rt", "ghost-parent"))
    assert error.message == 'inherit-from parent "ghost-parent" not found (chain so far: [rt])'


def test_resolve_namespaced_runtime_same_namespace_parent() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveNamespacedRuntime_SameNamespaceParent."""
    parent = rt("ns-parent", "", ("FROM_NS_PARENT", "y"), namespace="team")
    child = rt("rt", "ns-parent", ("FROM_CHILD", "y"), namespace="team")
    assert chain(child, parent) == ["ns-parent", "rt"]
    assert sorted(env_of(replica("rt", kind="ServingRuntime"), parent, child)) == [
        ("FROM_CHILD", "y"),
        ("FROM_NS_PARENT", "y"),
    ]


def test_resolve_namespaced_runtime_falls_back_to_cluster() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveNamespacedRuntime_FallsBackToCluster."""
    parent = rt("infra", "", ("FROM_CLUSTER", "y"))
    child = rt("rt", "infra", namespace="team")
    assert chain(child, parent) == ["infra", "rt"]
    assert env_of(replica("rt", kind="ServingRuntime"), parent, child)[0] == ("FROM_CLUSTER", "y")


def test_resolve_namespaced_runtime_namespaced_shadows_cluster() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveNamespacedRuntime_NamespacedShadowsCluster."""
    objs = [rt("infra", "", ("FROM_CLUSTER", "y")), rt("infra", "", ("FROM_NS", "y"), namespace="team")]
    child = rt("rt", "infra", namespace="team")
    assert env_of(replica("rt", kind="ServingRuntime"), *objs, child)[0] == ("FROM_NS", "y")


def test_resolve_namespaced_runtime_cross_namespace_rejected() -> None:
    """Go: sgl-project/ome pkg/runtimeinheritance/from_client_test.go @ 865bebfd, TestResolveNamespacedRuntime_CrossNamespaceRejected."""
    alien = rt("shared", namespace="other-team")
    child = rt("rt", "shared", namespace="team")
    error = failure(replica("rt", kind="ServingRuntime"), alien, child)
    assert (error.reason, error.message) == (
        BlockReason.RENDER_FAILED,
        'inherit-from parent "shared" not found (chain so far: [rt])',
    )


# -- descendants_test.go ------------------------------------------------------------------------------
# Descendants tells the controller which runtimes an edit reaches, so which replicas re-render. The
# observable counterpart: after an edit of the root, exactly the replicas naming a descendant render
# something new. (A runtime with no env before the edit gets the root's new env var.)


def _roll(objects: list[dict[str, Any]], root: tuple[str | None, str]) -> set[tuple[str | None, str]]:
    """The runtimes whose replica's revision changes when ``root`` (namespace, name) gains an env var."""
    edited = []
    for obj in objects:
        key = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
        copy = {**obj, "spec": {**obj["spec"]}}
        if key == root:
            runner = dict(copy["spec"]["engineConfig"]["runner"])
            runner["env"] = [*runner["env"], {"name": "EDITED", "value": "1"}]
            copy["spec"]["engineConfig"] = {"runner": runner}
        edited.append(copy)
    changed = set()
    for obj in objects:
        namespace, name = obj["metadata"].get("namespace"), obj["metadata"]["name"]
        if (namespace, name) == root:
            continue
        kind = "ServingRuntime" if namespace else "ClusterServingRuntime"
        rep = replica(name, namespace or "team-c", kind=kind)
        names = []
        for catalog in (objects, edited):
            try:
                names.append(preview(rep, Catalog.from_objects(catalog), instances=0).revision.name)
            except RenderBlocked as blocked:
                names.append(f"blocked {blocked.reason}")
        if names[0] != names[1]:
            changed.add((namespace, name))
    return changed


# (entry, runtimes, root, the descendants Go returns); entries with no observable counterpart are
# listed in docs/goparity.md ("a shadowed parent still yields its namesake's children": Go's walk is
# wider than resolution on purpose, and the re-render it triggers renders the same; "a cycle
# terminates without re-emitting the root": every runtime of a cycle fails to resolve before and after).
DESCENDANT_CASES: list[
    tuple[str, list[dict[str, Any]], tuple[str | None, str], set[tuple[str | None, str]]]
] = [
    (
        "the walk is transitive, not just direct children",
        [rt("profile", image="i"), rt("mid", "profile"), rt("leaf", "mid"), rt("unrelated", image="i")],
        (None, "profile"),
        {(None, "mid"), (None, "leaf")},
    ),
    (
        "a cluster root reaches both scopes in every namespace",
        [
            rt("root", image="i"),
            rt("c1", "root"),
            rt("n1", "root", namespace="team-a"),
            rt("n2", "root", namespace="team-b"),
        ],
        (None, "root"),
        {(None, "c1"), ("team-a", "n1"), ("team-b", "n2")},
    ),
    (
        "a namespaced root reaches only its own namespace",
        [
            rt("parent", namespace="team-a", image="i"),
            rt("child", "parent", namespace="team-a"),
            rt("outsider", "parent", namespace="team-b"),
            rt("cluster-child", "parent"),
        ],
        ("team-a", "parent"),
        {("team-a", "child")},
    ),
    (
        "a namespaced node does not expand across namespaces",
        [
            rt("profile", image="i"),
            rt("child", "profile", namespace="team-a"),
            rt("grand", "child", namespace="team-a"),
            rt("impostor", "child", namespace="team-b"),
        ],
        (None, "profile"),
        {("team-a", "child"), ("team-a", "grand")},
    ),
    ("a runtime with no dependents yields nothing", [rt("solo", image="i")], (None, "solo"), set()),
]


@pytest.mark.parametrize(
    ("go_entry", "objects", "root", "want"), DESCENDANT_CASES, ids=[c[0] for c in DESCENDANT_CASES]
)
def test_descendants(
    go_entry: str,
    objects: list[dict[str, Any]],
    root: tuple[str | None, str],
    want: set[tuple[str | None, str]],
) -> None:
    """Go: ome-projects/ome pkg/runtimeinheritance/descendants_test.go @ 1a848b19, TestDescendants, entry ``go_entry``: the replicas that re-render differently
    after an edit of the root are exactly those naming one of Go's descendants."""
    assert _roll(objects, root) == want, f"{DESCENDANTS} {go_entry}"
