"""Pod builds shared across namespaces (``omerender.render.memo.build_key``) give exactly what a render
from scratch gives, and a build's key changes with each input the build reads.

A model served in many namespaces is resolved in each (ServingRuntimes, BaseModels and messages are
namespaced) and built once. The property test renders every replica of a world in several namespaces
against one catalog, each compared with its render against a catalog of its own; the key tests change
each input in turn (namespace, component, model, runtime, fine-tuned weight, overlay).
"""

from __future__ import annotations

import copy
import gc
import importlib
from typing import Any

import pytest
from hypothesis import given

from benchmarks.catalog_gen import generate
from omerender import Catalog, InferenceReplica, parse_object, render
from omerender.accelerators import accelerator_resource_names
from omerender.inheritance import catalog_resolver
from omerender.lint import lint
from omerender.models import FineTunedWeight
from omerender.preview import revision_of
from omerender.render.build import build_runners
from omerender.render.inject import ModelContext
from omerender.render.memo import build_key, may_hold_placeholders
from omerender.render.prepare import prepare_role
from omerender.render.resolve import Resolved, resolve_refs
from tests.unit.test_properties import PROPERTY
from tests.unit.test_render_memo import any_worlds

NAMESPACES = ("demo", "other", "third")
memo_module = importlib.import_module("omerender.render.memo")


def _outcome(replica: InferenceReplica, catalog: Catalog) -> Any:
    """What a user reads of a render: templates, revision, runtime and model, or the block."""
    try:
        result = render(replica, catalog)
    except Exception as error:
        return (type(error).__name__, str(error))
    return (
        [(r.name, r.size, r.template) for r in result.runners],
        revision_of(result),
        result.runtime_kind,
        result.runtime_name,
        result.model_name,
        result.advisories,
    )


def _in(raw: dict[str, Any], namespace: str) -> InferenceReplica | None:
    out = copy.deepcopy(raw)
    out["metadata"]["namespace"] = namespace
    out["metadata"].pop("ownerReferences", None)
    try:
        return parse_object(InferenceReplica, out)
    except Exception:
        return None


def _catalog(objects: list[Any]) -> Catalog | None:
    """The world's catalog, or None for objects that do not build one (nothing to memoize)."""
    try:
        return Catalog.from_objects(objects)
    except Exception:
        return None


@PROPERTY
@given(any_worlds)
def test_renders_in_many_namespaces_through_one_catalog_equal_renders_from_scratch(
    world: tuple[list[Any], list[Any]],
) -> None:
    originals, objects = world
    shared = _catalog(objects)
    for raw in originals if shared else ():
        for namespace in NAMESPACES:
            replica = _in(raw, namespace)
            if replica is None or shared is None:
                continue
            assert _outcome(replica, shared) == _outcome(replica, Catalog.from_objects(objects))


@PROPERTY
@given(any_worlds)
def test_a_build_without_placeholders_skips_a_pass_that_would_change_nothing(
    world: tuple[list[Any], list[Any]],
) -> None:
    originals, objects = world
    catalog = _catalog(objects)
    for raw in originals if catalog else ():
        replica = _in(raw, raw["metadata"].get("namespace") or "demo")
        if (
            catalog is None
            or replica is None
            or (replica.spec.model_ref is None and replica.spec.runtime_ref is None)
        ):
            continue
        try:
            resolved, ctx = _resolved(replica, catalog)
        except Exception:
            continue
        runtime = prepare_role(resolved.runtime, replica.spec.component, catalog.deploy)
        if may_hold_placeholders(runtime, ctx):
            continue
        names = accelerator_resource_names(catalog.accelerator_resources)
        try:
            full: Any = build_runners(replica, runtime, ctx, names)
        except Exception as error:
            full = error
        try:
            skipped: Any = build_runners(replica, runtime, ctx, names, placeholders=False)
        except Exception as error:
            skipped = error
        if isinstance(full, Exception):
            assert (type(skipped), str(skipped)) == (type(full), str(full))
        else:
            assert [(r.name, r.size, r.template) for r in skipped] == [
                (r.name, r.size, r.template) for r in full
            ]


def _replica(namespace: str, **spec: Any) -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": "r", "namespace": namespace, "uid": f"uid-{namespace}"},
            "spec": {"component": "engine", "modelRef": {"name": "family1-model-1-1b"}, **spec},
        },
        strict=False,  # spec fields the test sets to null
    )


def test_a_cluster_model_in_ten_namespaces_is_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    objects = generate(20, 60)
    catalog = Catalog.from_objects(objects)
    builds: list[str] = []
    real = memo_module.build_runners

    def counted(replica: InferenceReplica, *args: Any, **kwargs: Any) -> Any:
        builds.append(replica.namespace)
        return real(replica, *args, **kwargs)

    monkeypatch.setattr(memo_module, "build_runners", counted)
    for index in range(10):
        replica = _replica(f"team-{index}")
        assert _outcome(replica, catalog) == _outcome(replica, Catalog.from_objects(objects))
    # One build for the shared catalog; each catalog of its own builds once more.
    assert builds[0] == "team-0"
    assert builds.count("team-0") == 2
    assert all(builds.count(f"team-{index}") == 1 for index in range(1, 10))


def _resolved(replica: InferenceReplica, catalog: Catalog) -> tuple[Resolved, ModelContext | None]:
    resolved = resolve_refs(replica, catalog)
    ctx = ModelContext(resolved.model, resolved.fine_tuned, resolved.overlays) if resolved.model else None
    return resolved, ctx


def _key(replica: InferenceReplica, catalog: Catalog) -> Any:
    return build_key(replica, *_resolved(replica, catalog))[0]


def _base_model(namespace: str, path: str = "/raid/m") -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "BaseModel",
        "metadata": {"name": "m", "namespace": namespace},
        "spec": {
            "modelFormat": {"name": "safetensors"},
            "storage": {"storageUri": "hf://org/m", "path": path},
        },
        "status": {"state": "Ready"},
    }


def _cluster_runtime(name: str, image: str) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": True}],
            "engineConfig": {"runner": {"name": "ome-container", "image": image}},
            "routerConfig": {"runner": {"name": "router", "image": image}},
        },
    }


def test_the_build_key_changes_with_each_input_the_build_reads() -> None:
    catalog = Catalog.from_objects(
        [
            *generate(20, 60),
            _base_model("team-a"),
            _base_model("team-b"),
            _cluster_runtime("plain", "img:1"),
            _cluster_runtime("plain-2", "img:2"),
        ]
    )
    cluster_a = _key(_replica("team-a"), catalog)
    # A ClusterBaseModel and a cluster runtime: the namespace does not reach the build.
    assert _key(_replica("team-b"), catalog) == cluster_a
    assert _key(_replica("team-a", modelRef={"name": "family2-model-2-1b"}), catalog) != cluster_a
    named = _key(_replica("team-a", runtimeRef={"name": "srt-family1-1"}), catalog)
    other_named = _key(_replica("team-a", runtimeRef={"name": "srt-family2-2"}), catalog)
    assert named != other_named
    # A namespaced BaseModel: the namespace is in the key (its node selector label names it).
    based = {"modelRef": {"name": "m", "kind": "BaseModel"}, "runtimeRef": {"name": "plain"}}
    in_a, in_b = _key(_replica("team-a", **based), catalog), _key(_replica("team-b", **based), catalog)
    assert in_a != in_b
    assert "team-a" in in_a
    # Runtime only: no model, and nothing namespaced.
    runtime_only = {"modelRef": None, "runtimeRef": {"name": "plain"}}
    assert _key(_replica("team-a", **runtime_only), catalog) == _key(
        _replica("team-b", **runtime_only), catalog
    )
    router = {**runtime_only, "component": "router"}
    assert _key(_replica("team-a", **router), catalog) != _key(_replica("team-a", **runtime_only), catalog)
    other_runtime = {"modelRef": None, "runtimeRef": {"name": "plain-2"}}
    assert _key(_replica("team-a", **other_runtime), catalog) != _key(
        _replica("team-a", **runtime_only), catalog
    )


def test_fine_tuned_weights_and_overlays_are_in_the_build_key() -> None:
    replica = _replica("team-a")
    catalog = Catalog.from_objects(generate(20, 60))
    resolved, ctx = _resolved(replica, catalog)
    assert ctx is not None
    base = build_key(replica, resolved, ctx)[0]
    overlay = catalog.model("ClusterBaseModel", "", "family2-model-2-1b")
    assert overlay is not None
    with_overlay = ModelContext(ctx.model, None, (overlay,))
    assert build_key(replica, resolved, with_overlay)[0] != base
    weight = parse_object(
        FineTunedWeight,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "FineTunedWeight",
            "metadata": {"name": "ft"},
            "spec": {"baseModelRef": {"name": "family1-model-1-1b"}, "configuration": {}},
        },
    )
    with_weight = ModelContext(ctx.model, weight, ())
    assert build_key(replica, resolved, with_weight)[0] != base
    # The key holds ids: the entry keeps the objects they are ids of alive.
    assert weight in build_key(replica, resolved, with_weight)[1]


def test_renders_and_lint_share_the_catalogs_inheritance_resolver() -> None:
    catalog = Catalog.from_objects(generate(20, 60))
    assert catalog_resolver(catalog).memory is catalog_resolver(catalog).memory
    other = Catalog.from_objects(generate(20, 60))
    assert catalog_resolver(other).memory is not catalog_resolver(catalog).memory


def test_the_catalogs_resolver_memory_makes_no_reference_cycle_with_it() -> None:
    # A cycle would keep the catalog (and all a command loaded and rendered) alive until the cyclic
    # collector ran: the command line pauses it, and paid for one pass over all of it at the end.
    gc.disable()
    try:
        catalog = Catalog.from_objects(generate(20, 60))
        assert lint(catalog).renders > 0
        alive = sum(isinstance(o, Catalog) for o in gc.get_objects())
        del catalog  # reference counting alone frees it, with its memo and the renders in it
        assert sum(isinstance(o, Catalog) for o in gc.get_objects()) == alive - 1
    finally:
        gc.enable()
