"""The caches and shortcuts that make the CI tools fast give exactly what the work they skip gives.

- runtime selection, memoized in the catalog and indexed by (format, architecture, quantization):
  the same report as every runtime checked one by one, and a new answer whenever an input changes;
- memoized runners (``SharedRunner``): templates made when read, fresh for each caller, and a revision
  that follows a template its caller changed;
- ``json_problem`` and ``clone`` fast paths: the same answers as the general walk;
- ``lint_objects`` reading a clean catalog whole: the same report as reading it object by object;
- the CLI's paused garbage collector: restored as it was, on success and on error.
"""

from __future__ import annotations

import copy
import gc
import pickle
from datetime import date
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from benchmarks.catalog_gen import generate
from omerender import Catalog, InferenceReplica, parse_object, render
from omerender.cli import main as omerender_main
from omerender.errors import InvalidObjectError, RenderBlocked
from omerender.jsonlike import MAX_DEPTH, clone, json_problem
from omerender.lint import lint, lint_objects
from omerender.models import ModelResource, RuntimeResource
from omerender.preview import revision_of
from omerender.render.result import RenderedRunner, SharedRunner
from omerender.selection import (
    ExclusionCause,
    compatibility_problem,
    evaluate_runtimes,
    runtime_score,
)
from tests.unit.test_properties import NS, PROPERTY, models, runtimes, serving_runtime_for

# -- runtime selection ------------------------------------------------------------------------------


def _reference(
    model: ModelResource, catalog: Catalog, namespace: str
) -> tuple[list[str], list[tuple[str, str]]]:
    """Candidates (as ranked) and exclusions of OME's evaluateRuntime, every runtime checked in full
    with the public matcher and scorer (no index, no memo)."""
    candidates: list[str] = []
    excluded: list[tuple[str, str]] = []
    for group in (catalog.runtimes_in(namespace), catalog.cluster_runtimes()):
        found: list[tuple[int, RuntimeResource]] = []
        for runtime in group:
            if runtime.is_disabled:
                excluded.append((runtime.metadata.name, ExclusionCause.DISABLED))
            elif compatibility_problem(runtime, model) is not None:
                excluded.append((runtime.metadata.name, ExclusionCause.INCOMPATIBLE))
            elif not any(e.auto_select is True for e in runtime.spec.supported_model_formats):
                excluded.append((runtime.metadata.name, ExclusionCause.NO_AUTO_SELECT))
            elif (score := runtime_score(runtime, model)) <= 0:
                excluded.append((runtime.metadata.name, ExclusionCause.SCORE_ZERO))
            else:
                found.append((score, runtime))
        # Ties on score are settled by size distance and name; the selection tests cover those.
        candidates += [rt.metadata.name for _, rt in sorted(found, key=lambda f: -f[0])]
    return candidates, excluded


_NEAR_MISSES = st.sampled_from(
    [
        {},
        {"autoSelect": False},
        {"autoSelect": None},
        {"modelArchitecture": "OtherForCausalLM"},
        {"modelArchitecture": None},
        {"quantization": "int4"},
        {"quantization": None},
        {"modelFormat": {"name": "pytorch"}},
        {"modelFormat": None},
        {"modelFramework": None},
    ]
)


@st.composite
def selection_worlds(draw: st.DrawFn) -> list[Any]:
    """A model, runtimes declaring it as it is or missing it by one field (or disabled), and others."""
    model = draw(models)
    near = []
    for index in range(draw(st.integers(1, 3))):
        runtime = draw(serving_runtime_for(model, "engine"))
        runtime["metadata"]["name"] = f"near-{index}"
        entry = runtime["spec"]["supportedModelFormats"][0]
        entry.update(draw(_NEAR_MISSES))
        runtime["spec"]["supportedModelFormats"] = [{k: v for k, v in entry.items() if v is not None}]
        runtime["spec"]["disabled"] = draw(st.sampled_from([False, False, True]))
        near.append(runtime)
    return [model, *near, *draw(st.lists(runtimes, max_size=3))]


@PROPERTY
@given(selection_worlds())
def test_indexed_selection_excludes_and_ranks_as_checking_every_runtime(objects: list[Any]) -> None:
    unique = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects}
    try:
        catalog = Catalog.from_objects(list(unique.values()))
    except InvalidObjectError:
        assume(False)
        return
    for model in catalog.models.values():
        for namespace in (NS, "other"):
            try:
                report = evaluate_runtimes(model, catalog, namespace, "engine")
            except RenderBlocked:
                assert not model.spec.model_format.name
                continue
            candidates, excluded = _reference(model, catalog, namespace)
            assert [(e.runtime.metadata.name, e.cause) for e in report.exclusions] == excluded
            assert sorted(c.runtime.metadata.name for c in report.candidates) == sorted(candidates)
            scores = [c.score for c in report.candidates if not c.is_cluster]
            assert scores == sorted(scores, reverse=True)


def _catalog(extra: list[dict[str, Any]] | None = None) -> Catalog:
    return Catalog.from_objects([*generate(20, 60), *(extra or [])])


def test_selection_is_memoized_per_model_namespace_and_component() -> None:
    catalog = _catalog()
    model = catalog.model("ClusterBaseModel", "", "family1-model-1-1b")
    assert model is not None
    first = evaluate_runtimes(model, catalog, "team-a", "engine")
    assert evaluate_runtimes(model, catalog, "team-a", "engine") is first
    # Each input changes the answer: another model, another component, another namespace.
    other = catalog.model("ClusterBaseModel", "", "family2-model-2-1b")
    assert other is not None
    assert evaluate_runtimes(other, catalog, "team-a", "engine").selected != first.selected
    assert evaluate_runtimes(model, catalog, "team-a", "router").component == "router"
    assert first.component == "engine"
    # A ServingRuntime of team-b ranks first there, and only there.
    namespaced = copy.deepcopy(next(o for o in generate(20, 60) if o["metadata"]["name"] == "srt-family1-1"))
    namespaced["kind"] = "ServingRuntime"
    namespaced["metadata"] = {"name": "team-runtime", "namespace": "team-b"}
    catalog = _catalog([namespaced])
    model = catalog.model("ClusterBaseModel", "", "family1-model-1-1b")
    assert model is not None
    in_a = evaluate_runtimes(model, catalog, "team-a", "engine")
    in_b = evaluate_runtimes(model, catalog, "team-b", "engine")
    assert in_a.selected is not None
    assert in_a.selected.metadata.name == "srt-family1-1"
    assert in_b.selected is not None
    assert in_b.selected.metadata.name == "team-runtime"
    assert in_b.namespaced_runtimes == 1
    assert in_a.namespaced_runtimes == 0


def test_namespaces_without_serving_runtimes_share_a_selection_named_for_each() -> None:
    catalog = _catalog()
    model = catalog.model("ClusterBaseModel", "", "family1-model-1-1b")
    assert model is not None
    in_a = evaluate_runtimes(model, catalog, "team-a", "engine")
    in_c = evaluate_runtimes(model, catalog, "team-c", "engine")
    assert in_c.namespace == "team-c"
    assert in_a.namespace == "team-a"
    assert in_c.candidates == in_a.candidates
    unknown = model.model_copy(update={"spec": model.spec.model_copy(update={"model_architecture": "X"})})
    for namespace in ("team-a", "team-c"):
        message = evaluate_runtimes(unknown, catalog, namespace, "engine").no_runtime_message()
        assert f"in namespace {namespace}." in message


def test_a_model_object_from_outside_the_catalog_is_selected_for_itself() -> None:
    catalog = _catalog()
    model = catalog.model("ClusterBaseModel", "", "family1-model-1-1b")
    assert model is not None
    changed = model.model_copy(update={"spec": model.spec.model_copy(update={"model_architecture": "Other"})})
    assert evaluate_runtimes(model, catalog, "ns", "engine").selected is not None
    assert evaluate_runtimes(changed, catalog, "ns", "engine").selected is None


# -- memoized runners -----------------------------------------------------------------------------------


def _replica(name: str, **spec: Any) -> InferenceReplica:
    return parse_object(
        InferenceReplica,
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceReplica",
            "metadata": {"name": name, "namespace": "team-a", "uid": f"uid-{name}"},
            "spec": {"component": "engine", "modelRef": {"name": "family1-model-1-1b"}, **spec},
        },
    )


def test_memoized_runners_hand_each_caller_a_fresh_template() -> None:
    catalog = _catalog()
    render(_replica("first"), catalog)
    one, two = render(_replica("a"), catalog), render(_replica("b"), catalog)
    assert all(isinstance(r, SharedRunner) for r in (*one.runners, *two.runners))
    scratch = render(_replica("a"), _catalog())
    assert one.runners == scratch.runners
    assert scratch.runners == one.runners
    one.anchor.template["spec"]["containers"][0]["image"] = "changed"
    one.anchor.template["metadata"]["labels"]["x"] = "y"
    assert two.anchor.template["spec"]["containers"][0]["image"] != "changed"
    again = render(_replica("a"), catalog)
    assert again.anchor.template == scratch.anchor.template
    assert one.runners != again.runners


def test_a_revision_follows_a_template_its_caller_changed() -> None:
    catalog = _catalog()
    render(_replica("first"), catalog)
    untouched, scratch = render(_replica("a"), catalog), render(_replica("a"), _catalog())
    assert isinstance(untouched.anchor, SharedRunner)
    assert untouched.anchor.pristine() is not None
    assert revision_of(untouched) == revision_of(scratch)
    changed = render(_replica("a"), catalog)
    changed.anchor.template["spec"]["containers"][0]["image"] = "other:1"
    assert isinstance(changed.anchor, SharedRunner)
    assert changed.anchor.pristine() is None
    assert revision_of(changed).hash != revision_of(untouched).hash
    relabelled = render(_replica("a"), catalog)
    relabelled.anchor.template["metadata"]["labels"]["team"] = "x"
    assert revision_of(relabelled).hash != revision_of(untouched).hash


def test_go_encodings_of_equal_pod_specs_are_shared_across_namespaces() -> None:
    catalog = _catalog()

    def in_namespace(namespace: str) -> InferenceReplica:
        obj = _replica("a").model_dump(by_alias=True, exclude_none=True)
        obj["metadata"]["namespace"] = namespace
        return parse_object(InferenceReplica, obj)

    one, two = render(in_namespace("team-a"), catalog), render(in_namespace("team-b"), catalog)
    assert one.encodings is not None
    assert one.encodings is two.encodings
    for result in (one, two):
        scratch = render(result.replica, _catalog())
        assert revision_of(result) == revision_of(scratch)
    other = render(_replica("a", runtimeRef={"name": "srt-family2-2"}), catalog)
    assert revision_of(other).payload != revision_of(one).payload


def test_a_shared_runner_copies_and_pickles_as_a_plain_runner() -> None:
    spec = {"containers": [{"name": "a", "image": "i"}]}
    shared = SharedRunner("default", 1, metadata={"labels": {"k": "v"}}, spec=pickle.dumps(spec))
    plain = RenderedRunner("default", 1, {"metadata": {"labels": {"k": "v"}}, "spec": spec})
    for copied in (copy.deepcopy(shared), pickle.loads(pickle.dumps(shared)), copy.copy(shared)):
        assert type(copied) is RenderedRunner
        assert copied == plain
    assert shared == plain
    assert plain == shared
    with pytest.raises(AttributeError):
        shared.template = {}  # type: ignore[misc]


# -- JSON walks ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": [1, 2.5, True, None, {"b": "c"}]}, None),
        ({"a": (1, [2])}, None),
        ({"d": date(2024, 1, 1)}, None),
        (MappingProxyType({"a": {"b": 1}}), None),
        (
            {"a": [1, {"b": object()}]},
            ("a[1].b", "a object is not JSON data; use a string, number, list or map"),
        ),
        ({"a": {1: "x"}}, ("a", "key 1 is not a string; Kubernetes objects have string keys (quote it)")),
    ],
)
def test_json_problem_names_the_first_part_that_is_not_json(value: Any, expected: Any) -> None:
    assert json_problem(value) == expected


def test_json_problem_refuses_depth_past_the_limit_on_either_path() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 1):
        deep = {"a": deep}
    assert json_problem(deep) is not None
    shallow: Any = "leaf"
    for _ in range(MAX_DEPTH):
        shallow = {"a": shallow}
    assert json_problem(shallow) is None


def test_clone_copies_every_mapping_and_list_and_keeps_scalars() -> None:
    inner = {"b": [1, (2, 3)]}
    value = {"a": MappingProxyType(inner), "s": "x", "d": date(2024, 1, 1)}
    copied = clone(value)
    assert copied == {"a": {"b": [1, [2, 3]]}, "s": "x", "d": date(2024, 1, 1)}
    assert type(copied["a"]) is dict
    assert copied["a"]["b"] is not inner["b"]


# -- lint and the CLI -------------------------------------------------------------------------------------


def test_lint_objects_of_a_clean_catalog_is_lint_of_it() -> None:
    objects = generate(20, 60)
    assert lint_objects(objects) == lint(Catalog.from_objects(objects))


def test_lint_objects_still_names_each_duplicate() -> None:
    objects = generate(20, 60)
    report = lint_objects([*objects, objects[0]])
    assert [f.code for f in report.findings if f.name == objects[0]["metadata"]["name"]][:1] == [
        "InvalidObject"
    ]


@pytest.mark.parametrize("enabled", [True, False])
def test_a_command_leaves_the_garbage_collector_as_it_found_it(enabled: bool, tmp_path: Any) -> None:
    missing = tmp_path / "missing"
    try:
        if not enabled:
            gc.disable()
        assert omerender_main(["lint", "--objects", str(missing)]) == 2
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


@PROPERTY
@given(st.dictionaries(st.text(max_size=6), st.text(max_size=6), min_size=1, max_size=6))
def test_string_maps_encode_as_the_general_go_encoder_does(value: dict[str, str]) -> None:
    from omerender.gojson import _GENERIC_STRING_MAP, _string_map

    assert _string_map(value) == _GENERIC_STRING_MAP(value)
