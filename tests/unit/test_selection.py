"""Runtime selection as OME does it: matcher, size strings, score, order, exclusions, advisories."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import ModelResource, RuntimeResource, parse_object
from omerender.selection import (
    ExclusionCause,
    compatibility_problem,
    evaluate_runtimes,
    named_runtime_advisory,
    parse_model_size,
    piece_advisory,
    runtime_score,
    select_runtime,
)

NS = "team-a"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "catalog"

# -- builders ------------------------------------------------------------------------------------


def _drop_none(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


def fmt(
    name: str = "safetensors",
    version: str | None = "1.0.0",
    operator: str | None = None,
    weight: int | None = None,
) -> dict[str, Any]:
    return _drop_none(name=name, version=version, operator=operator, weight=weight)


def entry(
    model_format: dict[str, Any] | None = None,
    *,
    framework: dict[str, Any] | None = None,
    architecture: str | None = None,
    quantization: str | None = None,
    diffusion: dict[str, Any] | None = None,
    auto_select: bool | None = True,
    priority: int | None = None,
    no_format: bool = False,
) -> dict[str, Any]:
    return _drop_none(
        modelFormat=None if no_format else (model_format or fmt()),
        modelFramework=framework,
        modelArchitecture=architecture,
        quantization=quantization,
        diffusionPipeline=diffusion,
        autoSelect=auto_select,
        priority=priority,
    )


ENGINE = {"runner": {"name": "ome-container", "image": "engine:1"}}
ROUTER = {"runner": {"name": "router", "image": "router:1"}}


def runtime(
    name: str,
    *entries: dict[str, Any],
    kind: str = "ClusterServingRuntime",
    namespace: str = NS,
    size_range: dict[str, str] | None = None,
    disabled: bool | None = None,
    pieces: tuple[str, ...] = ("engine",),
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if kind == "ServingRuntime":
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = annotations
    spec: dict[str, Any] = {"supportedModelFormats": list(entries) if entries else [entry()]}
    if size_range is not None:
        spec["modelSizeRange"] = size_range
    if disabled is not None:
        spec["disabled"] = disabled
    for piece in pieces:
        spec[f"{piece}Config"] = ROUTER if piece == "router" else ENGINE
    return {"apiVersion": "ome.io/v1beta1", "kind": kind, "metadata": metadata, "spec": spec}


def model(
    name: str = "m",
    *,
    model_format: dict[str, Any] | None = None,
    framework: dict[str, Any] | None = None,
    architecture: str | None = None,
    quantization: str | None = None,
    size: str | None = None,
    diffusion: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec = _drop_none(
        modelFormat=model_format or fmt(),
        modelFramework=framework,
        modelArchitecture=architecture,
        quantization=quantization,
        modelParameterSize=size,
        diffusionPipeline=diffusion,
    )
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": spec,
        "status": {"state": "Ready"},
    }


# Selection's rules on every shape Go decodes, the CRD's limits (priority >= 1) aside.
def as_runtime(obj: dict[str, Any]) -> RuntimeResource:
    return parse_object(RuntimeResource, obj, strict=False)


def as_model(obj: dict[str, Any]) -> ModelResource:
    return parse_object(ModelResource, obj, strict=False)


def problem(rt: dict[str, Any], m: dict[str, Any]) -> str | None:
    return compatibility_problem(as_runtime(rt), as_model(m))


def pick(m: dict[str, Any], *runtimes: dict[str, Any], component: str = "engine") -> str:
    catalog = Catalog.from_objects([m, *runtimes])
    return select_runtime(as_model(m), catalog, NS, component).metadata.name


def blocked(m: dict[str, Any], *runtimes: dict[str, Any], component: str = "engine") -> RenderBlocked:
    catalog = Catalog.from_objects([m, *runtimes])
    with pytest.raises(RenderBlocked) as caught:
        select_runtime(as_model(m), catalog, NS, component)
    assert caught.value.reason is BlockReason.RUNTIME_SELECTION_FAILED
    return caught.value


# -- size strings (parseModelSize) ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7B", 7e9),
        ("0.6B", 0.6e9),
        ("1.24B", 1.24e9),
        ("500M", 500e6),
        ("1.5T", 1.5e12),
        ("70", 70.0),  # no suffix: a plain number
        ("1e3", 1000.0),
        (".5B", 0.5e9),
        ("1_000M", 1e9),  # Go accepts underscores between digits
        ("0x1p4", 16.0),  # and hexadecimal floats
        ("-1B", -1e9),
        # anything Go's ParseFloat rejects is silently 0
        ("7b", 0.0),  # suffixes are case-sensitive
        ("500K", 0.0),  # no K suffix
        ("7BB", 0.0),
        ("B", 0.0),
        ("", 0.0),
        ("seven", 0.0),
        (" 7B", 0.0),
        ("7 B", 0.0),
        ("1__0B", 0.0),
        ("٣B", 0.0),  # a Unicode digit
        ("+nan", 0.0),
        ("1e400", 0.0),  # overflow is an error in Go, hence 0
    ],
)
def test_parse_model_size(text: str, value: float) -> None:
    assert parse_model_size(text) == value


def test_parse_model_size_special_values() -> None:
    assert parse_model_size("inf") == math.inf
    assert parse_model_size("-Infinity") == -math.inf
    assert math.isnan(parse_model_size("NaN"))


# -- matcher: format and version -------------------------------------------------------------------


def test_example_pair_is_compatible() -> None:
    objs = [yaml.safe_load(p.read_text()) for p in sorted(EXAMPLES.glob("*.yaml"))]
    catalog = Catalog.from_objects(objs)
    m = catalog.model("ClusterBaseModel", NS, "llama-3-2-1b-instruct")
    rt = catalog.runtime("ClusterServingRuntime", NS, "vllm-llama-3-2-1b-instruct")
    assert m is not None
    assert rt is not None
    assert compatibility_problem(rt, m) is None
    assert runtime_score(rt, m) == 15  # format 10 + framework 5, priority 1


def test_example_catalog_selects_its_runtime() -> None:
    objs = [yaml.safe_load(p.read_text()) for p in sorted(EXAMPLES.glob("*.yaml"))]
    catalog = Catalog.from_objects(objs)
    m = catalog.model("ClusterBaseModel", "default", "llama-3-2-1b-instruct")
    assert m is not None
    assert select_runtime(m, catalog, "default", "engine").metadata.name == "vllm-llama-3-2-1b-instruct"


def test_format_name_mismatch() -> None:
    rt = runtime("rt", entry(fmt("safetensors")))
    assert problem(rt, model(model_format=fmt("pytorch"))) == (
        'model format "pytorch" does not match runtime format "safetensors"'
    )


def test_format_name_is_case_sensitive() -> None:
    assert problem(runtime("rt", entry(fmt("SafeTensors"))), model()) is not None


def test_entry_without_model_format_never_matches() -> None:
    assert problem(runtime("rt", entry(no_format=True)), model()) == "runtime format declares no modelFormat"


def test_runtime_without_formats() -> None:
    rt = runtime("rt")
    rt["spec"]["supportedModelFormats"] = []
    assert problem(rt, model()) == "runtime declares no supportedModelFormats"


@pytest.mark.parametrize(
    ("runtime_version", "model_version", "expected"),
    [
        (None, None, None),
        ("1.0.0", None, 'runtime requires format version "1.0.0" but the model declares none'),
        (None, "1.0.0", 'model declares format version "1.0.0" but the runtime declares none'),
        (
            "2.0.0",
            "1.0.0",
            'model format version "1.0.0" does not satisfy runtime format version "2.0.0" (operator Equal)',
        ),
        ("1", "1.0.0", None),  # Equal ignores precision
    ],
)
def test_format_version_presence(
    runtime_version: str | None, model_version: str | None, expected: str | None
) -> None:
    rt = runtime("rt", entry(fmt(version=runtime_version)))
    assert problem(rt, model(model_format=fmt(version=model_version))) == expected


@pytest.mark.parametrize(
    ("operator", "runtime_version", "model_version", "ok"),
    [
        ("GreaterThan", "1.8.0", "1.7.0", True),
        ("GreaterThan", "1.7.0", "1.7.0", False),
        ("GreaterThan", "1.0", "1.0.0", False),
        ("GreaterThanOrEqual", "1.7.0", "1.7.0", True),
        ("GreaterThanOrEqual", "1.6.0", "1.7.0", False),
        ("Equal", "1.7.0", "1.7.0", True),
        (None, "v1", "1.0.0", True),
    ],
)
def test_format_version_operators(
    operator: str | None, runtime_version: str, model_version: str, ok: bool
) -> None:
    rt = runtime("rt", entry(fmt(version=runtime_version, operator=operator)))
    assert (problem(rt, model(model_format=fmt(version=model_version))) is None) is ok


def test_model_side_operator_is_ignored() -> None:
    rt = runtime("rt", entry(fmt(version="1.8.0")))
    m = model(model_format=fmt(version="1.7.0", operator="GreaterThan"))
    assert problem(rt, m) is not None


# -- matcher: architecture, quantization, framework -------------------------------------------------


@pytest.mark.parametrize("field", ["architecture", "quantization"])
def test_one_sided_requirements(field: str) -> None:
    x: dict[str, Any] = {field: "X"}
    y: dict[str, Any] = {field: "Y"}
    both_unset = runtime("rt", entry())
    requires_x = runtime("rt", entry(**x))
    requires_y = runtime("rt", entry(**y))
    assert problem(both_unset, model()) is None
    assert problem(requires_x, model(**x)) is None
    assert problem(requires_x, model()) == f'runtime requires {field} "X" but the model declares none'
    assert (
        problem(both_unset, model(**x)) == f'model declares {field} "X" but the runtime format declares none'
    )
    assert problem(requires_y, model(**x)) == f'model {field} "X" does not match runtime {field} "Y"'


def test_framework_rules() -> None:
    transformers = {"name": "transformers", "version": "4.45.0.dev0"}
    with_fw = runtime("rt", entry(framework=transformers))
    without_fw = runtime("rt", entry())
    assert problem(with_fw, model(framework=transformers)) is None
    assert problem(without_fw, model()) is None
    assert (
        problem(with_fw, model()) == 'runtime requires framework "transformers" but the model declares none'
    )
    assert problem(without_fw, model(framework=transformers)) == (
        'model declares framework "transformers" but the runtime format declares none'
    )
    assert problem(with_fw, model(framework={"name": "diffusers", "version": "4.45.0.dev0"})) == (
        'model framework "diffusers" does not match runtime framework "transformers"'
    )
    # a dev tail forces an exact match
    assert problem(with_fw, model(framework={"name": "transformers", "version": "4.45.0"})) == (
        'model framework version "4.45.0" does not satisfy runtime framework version "4.45.0.dev0" '
        "(operator Equal)"
    )
    newer = runtime(
        "rt", entry(framework={"name": "transformers", "version": "4.50.0", "operator": "GreaterThan"})
    )
    assert problem(newer, model(framework={"name": "transformers", "version": "4.45.0"})) is None


def test_checks_report_in_ome_order() -> None:
    # architecture is checked before the format name, so it is the reason given
    rt = runtime("rt", entry(fmt("pytorch"), architecture="A"))
    assert (
        problem(rt, model(architecture="B"))
        == 'model architecture "B" does not match runtime architecture "A"'
    )


# -- matcher: diffusion pipeline -------------------------------------------------------------------

FLUX = {
    "className": "FluxPipeline",
    "scheduler": {"library": "diffusers", "type": "FlowMatchEulerDiscreteScheduler"},
    "vae": {"library": "diffusers", "type": "AutoencoderKL"},
    "additionalComponents": {"image_encoder": {"library": "transformers", "type": "CLIPVisionModel"}},
}


@pytest.mark.parametrize(
    ("wanted", "have", "expected"),
    [
        (None, FLUX, None),  # a runtime without a pipeline requirement accepts any model
        (FLUX, FLUX, None),
        ({}, FLUX, None),  # an empty requirement only needs the model to have a pipeline
        (
            {"className": "FluxPipeline"},
            None,
            "diffusion pipeline required by runtime but not specified in model",
        ),
        ({}, None, "diffusion pipeline required by runtime but not specified in model"),
        (
            {"className": "StableDiffusionPipeline"},
            FLUX,
            "diffusion pipeline class mismatch (model=FluxPipeline, runtime=StableDiffusionPipeline)",
        ),
        (
            {"className": "FluxPipeline"},
            {},
            "diffusion pipeline class mismatch (model=<none>, runtime=FluxPipeline)",
        ),
        ({"vae": {"library": "diffusers"}}, FLUX, None),  # unset library/type are not compared
        (
            {"vae": {"type": "VQModel"}},
            FLUX,
            "diffusion vae type mismatch (model=AutoencoderKL, runtime=VQModel)",
        ),
        (
            {"scheduler": {"library": "custom"}},
            FLUX,
            "diffusion scheduler library mismatch (model=diffusers, runtime=custom)",
        ),
        (
            {"textEncoder": {"library": "transformers"}},
            FLUX,
            "diffusion component textEncoder required by runtime but not specified in model",
        ),
        (
            {"additionalComponents": {"image_encoder": {"type": "CLIPVisionModel"}}},
            FLUX,
            None,
        ),
        (
            {"additionalComponents": {"controlnet": {}}},
            FLUX,
            "diffusion component controlnet missing in model",
        ),
        (
            {"additionalComponents": {"controlnet": {}}},
            {"className": "FluxPipeline"},
            "diffusion pipeline missing required additional components",
        ),
        (
            {"additionalComponents": {"image_encoder": {"library": "open_clip"}}},
            FLUX,
            "diffusion image_encoder library mismatch (model=transformers, runtime=open_clip)",
        ),
    ],
)
def test_diffusion_pipeline(
    wanted: dict[str, Any] | None, have: dict[str, Any] | None, expected: str | None
) -> None:
    rt = runtime("rt", entry(diffusion=wanted))
    assert problem(rt, model(diffusion=have)) == expected


# -- matcher: several entries, size range ----------------------------------------------------------


def test_any_entry_may_match() -> None:
    rt = runtime("rt", entry(fmt("pytorch")), entry(fmt("safetensors")))
    assert problem(rt, model()) is None


def test_no_entry_matches_lists_each() -> None:
    rt = runtime("rt", entry(fmt("pytorch")), entry(architecture="A"))
    assert problem(rt, model()) == (
        "none of the runtime's 2 supported formats matches: "
        'supportedModelFormats[0]: model format "safetensors" does not match runtime format "pytorch"; '
        'supportedModelFormats[1]: runtime requires architecture "A" but the model declares none'
    )


@pytest.mark.parametrize(
    ("size_range", "size", "expected"),
    [
        ({"min": "1B", "max": "13B"}, "7B", None),
        ({"min": "1B", "max": "13B"}, "1B", None),  # inclusive
        ({"min": "1B", "max": "13B"}, "13B", None),
        (
            {"min": "1B", "max": "13B"},
            "70B",
            "model size 70B is outside the runtime's supported range [1B, 13B]",
        ),
        ({"min": "500M", "max": "2B"}, "1.24B", None),
        ({"min": "1B"}, "700B", None),  # one bound: open on the other side
        ({"min": "1B"}, "500M", "model size 500M is outside the runtime's supported range [1B, inf)"),
        ({"max": "13B"}, "1M", None),
        ({"max": "13B"}, "14B", "model size 14B is outside the runtime's supported range (-inf, 13B]"),
        ({}, "7B", None),
        (None, "7B", None),
        ({"min": "1B", "max": "13B"}, None, None),  # a model without a size is never range-checked
        # garbage sizes read as 0, as in OME
        (
            {"min": "1B", "max": "13B"},
            "7b",
            "model size 7b is outside the runtime's supported range [1B, 13B]",
        ),
        ({"min": "garbage", "max": "13B"}, "7B", None),
        ({"max": "13b"}, "7B", "model size 7B is outside the runtime's supported range (-inf, 13b]"),
    ],
)
def test_size_range(size_range: dict[str, str] | None, size: str | None, expected: str | None) -> None:
    rt = runtime("rt", entry(), size_range=size_range)
    assert problem(rt, model(size=size)) == expected


def test_size_is_checked_only_after_a_format_matches() -> None:
    rt = runtime("rt", entry(fmt("pytorch")), size_range={"min": "1B", "max": "2B"})
    assert (
        problem(rt, model(size="70B")) == 'model format "safetensors" does not match runtime format "pytorch"'
    )


@pytest.mark.parametrize(
    ("rt", "m"),
    [
        (runtime("rt", entry(fmt(version="1.0.0"))), model(model_format=fmt(version=None))),
        (runtime("rt", entry(fmt(version=None))), model(model_format=fmt(version="1.0.0"))),
        (runtime("rt", entry(framework={"name": "t", "version": "1"})), model(framework={"name": "t"})),
        (runtime("rt", entry(framework={"name": "t"})), model(framework={"name": "t", "version": "1"})),
        (runtime("rt", entry(framework={"name": "t"})), model()),
        (runtime("rt", entry()), model(framework={"name": "t"})),
        (runtime("rt", entry(quantization="fp8")), model()),
        (runtime("rt", entry(diffusion={})), model()),
        (runtime("rt", entry(), size_range={"max": "1B"}), model(size="7B")),
    ],
)
def test_selection_excludes_what_the_matcher_rejects(rt: dict[str, Any], m: dict[str, Any]) -> None:
    reason = problem(rt, m)
    assert reason is not None
    assert blocked(m, rt).message.endswith(
        f"Excluded runtimes: ClusterServingRuntime rt (incompatible: {reason})"
    )


def test_matcher_ignores_disabled_and_auto_select() -> None:
    rt = runtime("rt", entry(auto_select=False), disabled=True)
    assert problem(rt, model()) is None


# -- score -----------------------------------------------------------------------------------------

TRANSFORMERS = {"name": "transformers", "version": "4.45.0"}


@pytest.mark.parametrize(
    ("entries", "m", "score"),
    [
        ([entry()], model(), 10),  # format weight defaults to 10
        ([entry(framework=TRANSFORMERS)], model(framework=TRANSFORMERS), 15),  # framework to 5
        ([entry(framework=TRANSFORMERS, priority=3)], model(framework=TRANSFORMERS), 45),
        (
            [entry(fmt(weight=2), framework={**TRANSFORMERS, "weight": 7}, priority=2)],
            model(framework=TRANSFORMERS),
            18,
        ),
        ([entry(fmt(weight=0))], model(), 10),  # a weight of 0 means the default
        ([entry(priority=0)], model(), 0),
        ([entry(auto_select=None)], model(), 10),  # unset autoSelect still scores
        ([entry(auto_select=False)], model(), 0),
        ([entry(auto_select=False, priority=9), entry(priority=2)], model(), 20),
        ([entry(priority=2), entry(framework=TRANSFORMERS, priority=2)], model(framework=TRANSFORMERS), 30),
        ([entry(fmt("pytorch"))], model(), 0),
        ([entry(fmt(version="2.0.0"))], model(), 0),
        ([entry(fmt(version=None))], model(), 10),  # the scorer lets a one-sided version pass
        ([entry(framework=TRANSFORMERS)], model(), 0),  # a framework on one side only scores 0
        ([entry()], model(framework=TRANSFORMERS), 0),
        ([entry(framework={"name": "vllm"})], model(framework=TRANSFORMERS), 0),
        ([entry(architecture="A")], model(architecture="B"), 10),  # architecture is not scored
        ([entry(no_format=True)], model(), 0),
    ],
)
def test_score(entries: list[dict[str, Any]], m: dict[str, Any], score: int) -> None:
    assert runtime_score(as_runtime(runtime("rt", *entries)), as_model(m)) == score


# -- selection order --------------------------------------------------------------------------------


def test_namespace_scope_beats_a_higher_cluster_score() -> None:
    cluster = runtime("a-cluster", entry(priority=5))
    local = runtime("z-local", entry(), kind="ServingRuntime")
    assert pick(model(), cluster, local) == "z-local"


def test_other_namespaces_do_not_count() -> None:
    elsewhere = runtime("elsewhere", entry(priority=5), kind="ServingRuntime", namespace="team-b")
    cluster = runtime("cluster", entry())
    assert pick(model(), elsewhere, cluster) == "cluster"
    report = evaluate_runtimes(as_model(model()), Catalog.from_objects([elsewhere, cluster]), NS, "engine")
    assert (report.namespaced_runtimes, report.cluster_runtimes) == (0, 1)


def test_higher_score_wins_within_a_scope() -> None:
    assert pick(model(), runtime("a", entry()), runtime("b", entry(priority=2))) == "b"
    local_low = runtime("a", entry(), kind="ServingRuntime")
    local_high = runtime("b", entry(priority=2), kind="ServingRuntime")
    assert pick(model(), local_low, local_high) == "b"


def test_priority_and_weights_drive_the_score() -> None:
    fw = {**TRANSFORMERS}
    m = model(framework=fw)
    format_only_heavy = runtime("a", entry(fmt(weight=20), framework=fw))  # 20 + 5
    both_default_p2 = runtime("b", entry(framework=fw, priority=2))  # 30
    assert pick(m, format_only_heavy, both_default_p2) == "b"


def test_tighter_size_range_wins() -> None:
    wide = runtime("a-wide", size_range={"min": "1B", "max": "70B"})  # 6B + 63B
    tight = runtime("b-tight", size_range={"min": "5B", "max": "10B"})  # 2B + 3B
    assert pick(model(size="7B"), wide, tight) == "b-tight"


def test_no_range_counts_as_distance_zero() -> None:
    tight = runtime("a-tight", size_range={"min": "6B", "max": "8B"})
    unbounded = runtime("b-none")
    assert pick(model(size="7B"), tight, unbounded) == "b-none"


def test_one_bound_distance_counts_only_that_bound() -> None:
    min_only = runtime("a-min", size_range={"min": "6B"})  # 1B away
    both = runtime("b-both", size_range={"min": "5B", "max": "10B"})  # 5B away
    assert pick(model(size="7B"), both, min_only) == "a-min"
    max_only = runtime("c-max", size_range={"max": "13B"})  # 6B away
    assert pick(model(size="7B"), both, max_only) == "b-both"


def test_distance_is_ignored_for_a_model_without_size() -> None:
    wide = runtime("a-wide", size_range={"min": "1B", "max": "70B"})
    tight = runtime("b-tight", size_range={"min": "5B", "max": "10B"})
    assert pick(model(), wide, tight) == "a-wide"


def test_score_beats_distance() -> None:
    close = runtime("a-close", size_range={"min": "7B", "max": "7B"})
    scored = runtime("b-far", entry(priority=2), size_range={"min": "1B", "max": "700B"})
    assert pick(model(size="7B"), close, scored) == "b-far"


def test_name_breaks_ties() -> None:
    assert pick(model(), runtime("zeta"), runtime("alpha"), runtime("mid")) == "alpha"


def test_nan_distance_sorts_last() -> None:
    nan = runtime("a-nan", size_range={"min": "NaN"})
    plain = runtime("b-plain", size_range={"min": "1B", "max": "100B"})
    assert pick(model(size="7B"), nan, plain) == "b-plain"


def test_candidates_are_fully_ranked() -> None:
    objs = [
        runtime("c3", entry()),
        runtime("c1", entry(priority=3)),
        runtime("c2", entry()),
        runtime("n2", entry(), kind="ServingRuntime"),
        runtime("n1", entry(priority=2), kind="ServingRuntime"),
    ]
    m = model()
    report = evaluate_runtimes(as_model(m), Catalog.from_objects([m, *objs]), NS, "engine")
    assert [c.runtime.metadata.name for c in report.candidates] == ["n1", "n2", "c1", "c2", "c3"]
    assert [c.score for c in report.candidates] == [20, 10, 30, 10, 10]
    assert [c.is_cluster for c in report.candidates] == [False, False, True, True, True]
    assert report.exclusions == ()


# -- candidate filters ------------------------------------------------------------------------------


def test_disabled_runtime_is_skipped() -> None:
    assert pick(model(), runtime("a", disabled=True), runtime("b")) == "b"


def test_auto_select_must_be_true_somewhere() -> None:
    assert pick(model(), runtime("a", entry(auto_select=None)), runtime("b", entry(priority=1))) == "b"
    assert pick(model(), runtime("a", entry(auto_select=False)), runtime("b")) == "b"


def test_compatible_through_a_non_auto_entry_but_scoring_zero() -> None:
    # compatible via entry 0 (autoSelect false), auto-selectable only for another format: score 0
    rt = runtime("rt", entry(auto_select=False), entry(fmt("pytorch"), auto_select=True))
    err = blocked(model(), rt)
    assert "ClusterServingRuntime rt (score 0 (no entry that may auto-select" in err.message


def test_compatibility_and_score_may_come_from_different_entries() -> None:
    # OME scores ignore architecture: entry 0 makes it compatible, entry 1 gives the score
    rt = runtime("rt", entry(architecture="A", auto_select=False), entry(architecture="B", priority=4))
    assert runtime_score(as_runtime(rt), as_model(model(architecture="A"))) == 40
    assert pick(model(architecture="A"), rt, runtime("other", entry(architecture="A", priority=3))) == "rt"


def test_selection_does_not_filter_by_piece() -> None:
    engine_only = runtime("a-engine", entry(priority=9), pieces=("engine",))
    with_router = runtime("b-router", entry(), pieces=("engine", "router"))
    assert pick(model(), engine_only, with_router, component="router") == "a-engine"
    assert pick(model(), engine_only, with_router, component="engine") == "a-engine"
    assert pick(model(), engine_only, component="decoder") == "a-engine"


def test_piece_advisory_names_the_best_lower_ranked_runtime_with_the_piece() -> None:
    objs = [
        runtime("a-engine", entry(priority=9), pieces=("engine",)),
        runtime("b-router", entry(priority=5), pieces=("engine", "router")),
        runtime("c-router", entry(), pieces=("router",)),
    ]
    report = evaluate_runtimes(as_model(model()), Catalog.from_objects(objs), "team-a", "router")
    assert piece_advisory(report) == (
        "ClusterServingRuntime b-router ranks lower and has a router piece; "
        "name it in spec.runtimeRef to render from it"
    )
    assert (
        piece_advisory(evaluate_runtimes(as_model(model()), Catalog.from_objects(objs), "team-a", "engine"))
        is None
    )
    alone = Catalog.from_objects(objs[:1])
    assert piece_advisory(evaluate_runtimes(as_model(model()), alone, "team-a", "router")) is None


def test_selection_reads_each_runtime_own_spec() -> None:
    parent = runtime("parent", entry(fmt("pytorch")))
    child = runtime("child", annotations={"ome.io/inherit-from": "parent"})
    child["spec"]["supportedModelFormats"] = []
    err = blocked(
        model(model_format=fmt("pytorch")), runtime("parent", entry(fmt("pytorch")), disabled=True), child
    )
    assert "child (incompatible: runtime declares no supportedModelFormats)" in err.message
    assert pick(model(model_format=fmt("pytorch")), parent, child) == "parent"


# -- failures -----------------------------------------------------------------------------------------


def test_model_without_format_name() -> None:
    m = model(model_format={"name": ""})
    err = blocked(m, runtime("rt"))
    assert err.message == "invalid model specification: modelFormat.name: model format name is required"


def test_no_runtime_message_lists_every_runtime() -> None:
    objs = [
        runtime("c-off", disabled=True),
        runtime("c-manual", entry(auto_select=False)),
        runtime("c-big", size_range={"min": "100B"}),
        runtime("n-pytorch", entry(fmt("pytorch")), kind="ServingRuntime"),
        runtime("n-elsewhere", kind="ServingRuntime", namespace="team-b"),
    ]
    err = blocked(model("llama", size="7B"), *objs, component="router")
    assert err.message == (
        "no runtime found to support model llama with format safetensors in namespace team-a. "
        "Checked 4 runtimes (1 namespace-scoped, 3 cluster-scoped). Excluded runtimes: "
        'ServingRuntime n-pytorch (incompatible: model format "safetensors" does not match runtime format '
        '"pytorch"); '
        "ClusterServingRuntime c-big (incompatible: model size 7B is outside the runtime's supported range "
        "[100B, inf)); "
        "ClusterServingRuntime c-manual (no auto-select format (no supportedModelFormats entry sets "
        "autoSelect: true)); "
        "ClusterServingRuntime c-off (disabled)"
    )


def test_no_runtimes_at_all() -> None:
    assert blocked(model("llama")).message == (
        "no runtime found to support model llama with format safetensors in namespace team-a"
    )


def test_report_is_structured() -> None:
    objs = [runtime("off", disabled=True), runtime("ok"), runtime("other", entry(fmt("pytorch")))]
    m = model()
    report = evaluate_runtimes(as_model(m), Catalog.from_objects([m, *objs]), NS, "engine")
    assert report.selected is not None
    assert report.selected.metadata.name == "ok"
    assert [(e.runtime.metadata.name, e.cause) for e in report.exclusions] == [
        ("off", ExclusionCause.DISABLED),
        ("other", ExclusionCause.INCOMPATIBLE),
    ]
    assert report.exclusions[0].reason == "disabled"


def test_selection_is_deterministic_and_leaves_inputs_alone() -> None:
    objs = [runtime(f"rt-{i}", entry(priority=1 + i % 3), size_range={"min": f"{i}B"}) for i in range(10)]
    m = model(size="12B")
    catalog = Catalog.from_objects([m, *objs])
    before = [rt.model_dump(by_alias=True) for rt in catalog.runtimes.values()]
    first = evaluate_runtimes(as_model(m), catalog, NS, "engine")
    second = evaluate_runtimes(as_model(m), catalog, NS, "engine")
    assert [c.runtime.metadata.name for c in first.candidates] == [
        c.runtime.metadata.name for c in second.candidates
    ]
    assert first.selected is not None
    assert first.selected.metadata.name == "rt-8"  # score 30 among rt-2/5/8, nearest min bound
    assert [rt.model_dump(by_alias=True) for rt in catalog.runtimes.values()] == before


# -- named runtime -------------------------------------------------------------------------------------


def test_named_runtime_that_supports_the_model() -> None:
    assert named_runtime_advisory(as_runtime(runtime("rt")), as_model(model())) is None


def test_named_runtime_ignores_auto_select() -> None:
    assert (
        named_runtime_advisory(as_runtime(runtime("rt", entry(auto_select=False))), as_model(model())) is None
    )


def test_named_runtime_format_mismatch_is_advisory() -> None:
    rt = as_runtime(runtime("vllm", entry(fmt("pytorch"))))
    assert named_runtime_advisory(rt, as_model(model("llama"))) == (
        "Runtime vllm does not declare support for model llama (runtime vllm does not support model "
        'safetensors: model format "safetensors" does not match runtime format "pytorch"); proceeding '
        "because the runtime was named explicitly"
    )


def test_named_runtime_size_violation_is_advisory() -> None:
    rt = as_runtime(runtime("small", size_range={"min": "500M", "max": "2B"}))
    assert named_runtime_advisory(rt, as_model(model("big", size="70B"))) == (
        "Runtime small does not declare support for model big (runtime small does not support model "
        "safetensors: model size 70B is outside the runtime's supported range [500M, 2B]); proceeding "
        "because the runtime was named explicitly"
    )


def test_named_runtime_with_unservable_model() -> None:
    with pytest.raises(RenderBlocked) as caught:
        named_runtime_advisory(as_runtime(runtime("rt")), as_model(model(model_format={"name": ""})))
    assert caught.value.reason is BlockReason.RUNTIME_SELECTION_FAILED


# -- the fast path agrees with the full matcher ------------------------------------------------------

_names = st.sampled_from(["safetensors", "pytorch"])
_versions = st.sampled_from([None, "1", "1.0.0", "1.1.0", "v1.0.0", "1.0.0.dev0", "bad"])
_operators = st.sampled_from([None, "Equal", "GreaterThan", "GreaterThanOrEqual"])
_opt = st.sampled_from([None, "A"])
_sizes = st.sampled_from([None, "1B", "7B", "70B", "7b"])


@st.composite
def _entries(draw: st.DrawFn) -> dict[str, Any]:
    framework = draw(
        st.sampled_from([None, {"name": "transformers"}, {"name": "transformers", "version": "4.0.0"}])
    )
    return entry(
        fmt(draw(_names), draw(_versions), draw(_operators)),
        framework=framework,
        architecture=draw(_opt),
        quantization=draw(_opt),
        auto_select=draw(st.sampled_from([None, True, False])),
        priority=draw(st.sampled_from([None, 0, 1, 2])),
        no_format=draw(st.booleans()) and draw(st.booleans()),
    )


@settings(max_examples=500, deadline=None)
@given(
    entries=st.lists(_entries(), min_size=0, max_size=3),
    low=st.sampled_from([None, "500M", "5B"]),
    high=st.sampled_from([None, "10B", "100B"]),
    name=_names,
    version=_versions,
    framework=st.sampled_from([None, {"name": "transformers", "version": "4.0.0"}]),
    architecture=_opt,
    quantization=_opt,
    size=_sizes,
)
def test_exclusion_agrees_with_matcher(
    entries: list[dict[str, Any]],
    low: str | None,
    high: str | None,
    name: str,
    version: str | None,
    framework: dict[str, Any] | None,
    architecture: str | None,
    quantization: str | None,
    size: str | None,
) -> None:
    size_range = _drop_none(min=low, max=high) if (low or high) else None
    rt = runtime("rt", *entries, size_range=size_range)
    rt["spec"]["supportedModelFormats"] = entries
    m = model(
        model_format=fmt(name, version),
        framework=framework,
        architecture=architecture,
        quantization=quantization,
        size=size,
    )
    report = evaluate_runtimes(as_model(m), Catalog.from_objects([m, rt], strict=False), NS, "engine")
    reason = problem(rt, m)
    excluded_as_incompatible = any(e.cause is ExclusionCause.INCOMPATIBLE for e in report.exclusions)
    assert excluded_as_incompatible is (reason is not None)
    if report.candidates:
        assert report.candidates[0].score == runtime_score(as_runtime(rt), as_model(m)) > 0
