"""OME's ``pkg/runtimeselector/selector_test.go``, entry by entry, through omerender's render.

Go: sgl-project/ome ``pkg/runtimeselector/selector_test.go`` @ 078c923f467715e273d6b3adfee5220e53d38ecf
(module ``sigs.k8s.io/ome``: the standalone era; ome-projects/ome holds no copy in the index).

Go's ``GetCompatibleRuntimes`` returns every candidate, best first; a render shows the winner only, so
the ranking is read by taking winners away one by one (:func:`gp_ranking`). Scores are read with
``omerender.selection.runtime_score``, the scorer the render uses. Entries with no observable
counterpart are listed, with the reason, in ``docs/goparity.md``.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import BlockReason, Catalog, ModelResource, RenderBlocked, RuntimeResource, parse_object
from omerender.selection import evaluate_runtimes, runtime_score
from tests.goparity.gp_support import (
    GP_NS,
    GoRef,
    gp_advisory,
    gp_blocked,
    gp_model,
    gp_ranking,
    gp_render,
    gp_replica,
    gp_runtime,
    gp_selected,
)

GO = GoRef(
    "sgl-project/ome", "pkg/runtimeselector/selector_test.go", "078c923f467715e273d6b3adfee5220e53d38ecf"
)


def auto(
    name: str, weight: int | None = None, *, priority: int | None = None, auto_select: bool | None = True
) -> dict[str, Any]:
    fmt: dict[str, Any] = {"name": name}
    if weight is not None:
        fmt["weight"] = weight
    out: dict[str, Any] = {"modelFormat": fmt}
    if auto_select is not None:
        out["autoSelect"] = auto_select
    if priority is not None:
        out["priority"] = priority
    return out


def ns_runtime(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return gp_runtime(name, spec, kind="ServingRuntime")


def test_validate_model_empty_format_name() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestValidateModel, entry
    "empty model format name": ``ModelValidationError``, reported as ``RuntimeSelectionFailed``
    (``classifyResolveError``), for selection and for a named runtime (``ValidateRuntime``) alike."""
    objects = (
        gp_model({"modelFormat": {"name": ""}}),
        gp_runtime("rt", {"supportedModelFormats": [auto("pytorch")]}),
    )
    for replica in (gp_replica(), gp_replica(runtime="rt")):
        blocked = gp_blocked(replica, *objects)
        assert blocked.reason is BlockReason.RUNTIME_SELECTION_FAILED
        assert (
            blocked.message == "invalid model specification: modelFormat.name: model format name is required"
        )


def test_validate_model_valid_model() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestValidateModel, entry "valid model": selection goes on and picks the runtime."""
    assert (
        gp_selected(
            {"modelFormat": {"name": "pytorch"}},
            gp_runtime("rt", {"supportedModelFormats": [auto("pytorch")]}),
        )
        == "rt"
    )


# TestParseModelSize: (entry, size string, value)
PARSE_SIZES: list[tuple[str, str, float]] = [
    ("terabytes", "1T", 1_000_000_000_000),
    ("billions", "7B", 7_000_000_000),
    ("millions", "350M", 350_000_000),
    ("decimal billions", "1.5B", 1_500_000_000),
    ("no suffix", "1000", 1000),
]


@pytest.mark.parametrize(("go_entry", "text", "value"), PARSE_SIZES, ids=[c[0] for c in PARSE_SIZES])
def test_parse_model_size(go_entry: str, text: str, value: float) -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestParseModelSize, entry
    ``go_entry``. ``parseModelSize`` decides size-range checks: the model fits a range whose bounds are
    the expected value written without a suffix, and no range just above or below it."""
    model = {"modelFormat": {"name": "pytorch"}, "modelParameterSize": text}
    formats = [auto("pytorch")]

    def fits(low: float, high: float) -> bool:
        spec = {
            "supportedModelFormats": formats,
            "modelSizeRange": {"min": f"{low:.17g}", "max": f"{high:.17g}"},
        }
        return gp_advisory(model, spec, runtime_name="rt") is None

    assert fits(value, value), f"{GO} {go_entry}"
    assert not fits(value * 1.001 + 1, value * 2 + 2)
    assert not fits(value * 0.5 - 2, value * 0.999 - 1)


# TestGetModelFormatLabel: (entry, model spec, label)
LABELS: list[tuple[str, dict[str, Any], str]] = [
    ("basic format", {"modelFormat": {"name": "pytorch"}}, "mt:pytorch"),
    ("format with version", {"modelFormat": {"name": "pytorch", "version": "1.0.0"}}, "mt:pytorch:1.0.0"),
    (
        "full spec",
        {
            "modelFormat": {"name": "pytorch", "version": "1.0.0"},
            "modelArchitecture": "transformer",
            "quantization": "fp16",
            "modelFramework": {"name": "transformers", "version": "4.0.0"},
        },
        "mt:pytorch:1.0.0:transformer:fp16:transformers:4.0.0",
    ),
]


@pytest.mark.parametrize(("go_entry", "model_spec", "label"), LABELS, ids=[c[0] for c in LABELS])
def test_get_model_format_label(go_entry: str, model_spec: dict[str, Any], label: str) -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestGetModelFormatLabel,
    entry ``go_entry``: the label users read in the incompatibility reason."""
    advisory = gp_advisory(model_spec, {"supportedModelFormats": [auto("onnx")]}, runtime_name="rt")
    assert advisory is not None
    assert f"model format '{label}' not in supported formats. Runtime supports: [mt:onnx]." in advisory, GO


def test_error_types() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestErrorTypes: the
    compatibility error names the runtime and the model; the no-runtime error says "no runtime found"
    and counts the runtimes checked (2 namespace-scoped and 3 cluster-scoped here)."""
    advisory = gp_advisory(
        {"modelFormat": {"name": "pytorch"}},
        {"supportedModelFormats": [auto("onnx")]},
        runtime_name="test-runtime",
    )
    assert advisory is not None
    assert "runtime test-runtime does not support model pytorch: " in advisory
    runtimes = [ns_runtime(f"ns-{i}", {"supportedModelFormats": [auto("onnx")]}) for i in range(2)]
    runtimes += [gp_runtime(f"cl-{i}", {"supportedModelFormats": [auto("onnx")]}) for i in range(3)]
    picked = gp_selected({"modelFormat": {"name": "pytorch"}}, *runtimes)
    assert isinstance(picked, RenderBlocked)
    assert picked.reason is BlockReason.RUNTIME_SELECTION_FAILED
    assert picked.message.startswith(
        "no runtime found to support model pytorch with format pytorch in namespace default. "
        "Checked 5 runtimes (2 namespace-scoped, 3 cluster-scoped). Excluded runtimes: "
    )


def _size(lo: str, hi: str) -> dict[str, str]:
    return {"min": lo, "max": hi}


SUPPORTING_RUNTIMES = [
    ns_runtime(
        "pytorch-rt",
        {"supportedModelFormats": [auto("pytorch", 10, priority=2)], "modelSizeRange": _size("1B", "10B")},
    ),
    ns_runtime(
        "onnx-rt",
        {"supportedModelFormats": [auto("onnx", 8, priority=1)], "modelSizeRange": _size("10B", "20B")},
    ),
    ns_runtime(
        "tensorflow-rt",
        {"supportedModelFormats": [auto("tensorflow", 12)], "modelSizeRange": _size("50B", "100B")},
    ),
    ns_runtime(
        "multi-format-rt",
        {
            "supportedModelFormats": [auto("pytorch", 5, priority=1), auto("onnx", 5, priority=1)],
            "modelSizeRange": _size("1B", "20B"),
        },
    ),
    ns_runtime("disabled-rt", {"disabled": True, "supportedModelFormats": [auto("pytorch")]}),
    ns_runtime("no-autoselect-rt", {"supportedModelFormats": [auto("pytorch", 20, auto_select=False)]}),
    gp_runtime(
        "cluster-pytorch-rt",
        {"supportedModelFormats": [auto("pytorch", 7)], "modelSizeRange": _size("5B", "15B")},
    ),
]

# TestGetSupportingRuntimes: (entry, model spec, names best first, scores)
SUPPORTING: list[tuple[str, dict[str, Any], list[str], list[int]]] = [
    (
        "small pytorch model - multiple compatible runtimes",
        {"modelFormat": {"name": "pytorch"}, "modelParameterSize": "7B"},
        ["pytorch-rt", "multi-format-rt", "cluster-pytorch-rt"],
        [20, 5, 7],
    ),
    (
        "medium onnx model",
        {"modelFormat": {"name": "onnx"}, "modelParameterSize": "13B"},
        ["onnx-rt", "multi-format-rt"],
        [8, 5],
    ),
    (
        "large tensorflow model",
        {"modelFormat": {"name": "tensorflow"}, "modelParameterSize": "70B"},
        ["tensorflow-rt"],
        [12],
    ),
    ("model with no compatible runtime", {"modelFormat": {"name": "unknown-format"}}, [], []),
    (
        "model too large for any runtime",
        {"modelFormat": {"name": "pytorch"}, "modelParameterSize": "200B"},
        [],
        [],
    ),
]


@pytest.mark.parametrize(
    ("go_entry", "model_spec", "names", "scores"), SUPPORTING, ids=[c[0] for c in SUPPORTING]
)
def test_get_supporting_runtimes(
    go_entry: str, model_spec: dict[str, Any], names: list[str], scores: list[int]
) -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestGetSupportingRuntimes,
    entry ``go_entry``: the candidates best first (namespace scope before cluster), their scores, and
    ``NoRuntimeFoundError`` (``RuntimeSelectionFailed``) when there is none."""
    assert gp_ranking(model_spec, *SUPPORTING_RUNTIMES) == names, f"{GO} {go_entry}"
    model = parse_object(ModelResource, gp_model(model_spec))
    catalog = Catalog.from_objects([gp_model(model_spec), *SUPPORTING_RUNTIMES])
    report = evaluate_runtimes(model, catalog, GP_NS, "engine")
    assert [c.runtime.metadata.name for c in report.candidates] == names
    assert [c.score for c in report.candidates] == scores
    if not names:
        picked = gp_selected(model_spec, *SUPPORTING_RUNTIMES)
        assert isinstance(picked, RenderBlocked)
        assert picked.reason is BlockReason.RUNTIME_SELECTION_FAILED
        assert picked.message.startswith("no runtime found to support model ")


def test_sort_by_score_higher_score_wins() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestSortSupportedRuntime,
    entry "sort by score - higher score wins". Go sorts matches whose scores it sets by hand (5 and
    36); through a render the scores come from the scorer, so the low runtime's entry carries weights
    that give 5 ((3 + 2) x 1) and the high one Go's (10 + 8) x 2 = 36."""
    model = {
        "modelFormat": {"name": "test-format"},
        "modelFramework": {"name": "test-framework"},
        "modelParameterSize": "7B",
    }
    low = gp_runtime(
        "low-score-runtime",
        {
            "supportedModelFormats": [
                {
                    **auto("test-format", 3, priority=1),
                    "modelFramework": {"name": "test-framework", "weight": 2},
                }
            ]
        },
    )
    high = gp_runtime(
        "high-score-runtime",
        {
            "supportedModelFormats": [
                {
                    **auto("test-format", 10, priority=2),
                    "modelFramework": {"name": "test-framework", "weight": 8},
                }
            ]
        },
    )
    model_obj = parse_object(ModelResource, gp_model(model))
    assert runtime_score(parse_object(RuntimeResource, low), model_obj) == 5
    assert runtime_score(parse_object(RuntimeResource, high), model_obj) == 36
    assert gp_ranking(model, low, high) == ["high-score-runtime", "low-score-runtime"]


def test_sort_by_model_size_range_when_scores_are_equal() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestSortSupportedRuntime, entry "sort by model size range when scores are equal". Go's
    far runtime (20B-30B) would not even match a 7B model in a render; its range here is 1B-30B, still
    farther (6B + 23B) than close-size-runtime's 5B-10B (2B + 3B)."""
    model = {"modelFormat": {"name": "test-format"}, "modelParameterSize": "7B"}
    far = gp_runtime(
        "far-size-runtime",
        {"supportedModelFormats": [auto("test-format", 10)], "modelSizeRange": _size("1B", "30B")},
    )
    close = gp_runtime(
        "close-size-runtime",
        {"supportedModelFormats": [auto("test-format", 10)], "modelSizeRange": _size("5B", "10B")},
    )
    assert gp_ranking(model, far, close) == ["close-size-runtime", "far-size-runtime"]


def test_prefer_namespace_scoped_over_cluster_scoped_when_equal() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestSortSupportedRuntime, entry "prefer namespace-scoped over cluster-scoped when equal"."""
    model = {"modelFormat": {"name": "test-format"}}
    cluster = gp_runtime("cluster-runtime", {"supportedModelFormats": [auto("test-format", 10)]})
    local = ns_runtime("namespace-runtime", {"supportedModelFormats": [auto("test-format", 10)]})
    assert gp_ranking(model, cluster, local) == ["namespace-runtime", "cluster-runtime"]


def _fw(name: str, weight: int, version: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "weight": weight}
    if version is not None:
        out["version"] = version
    return out


# TestScore: (entry, runtime entries, model spec, score)
SCORES: list[tuple[str, list[dict[str, Any]], dict[str, Any], int]] = [
    (
        "exact match with weights and priority",
        [
            {
                "modelFormat": {"name": "PyTorch", "version": "2.0.0", "weight": 10},
                "modelFramework": _fw("transformers", 5, "4.0.0"),
                "priority": 3,
                "autoSelect": True,
            }
        ],
        {
            "modelFormat": {"name": "PyTorch", "version": "2.0.0"},
            "modelFramework": {"name": "transformers", "version": "4.0.0"},
        },
        45,
    ),
    (
        "format match only",
        [{**auto("PyTorch", 8, priority=2), "modelFramework": _fw("different-framework", 4)}],
        {"modelFormat": {"name": "PyTorch"}, "modelFramework": {"name": "transformers"}},
        0,
    ),
    ("no match", [auto("TensorFlow", 10, priority=5)], {"modelFormat": {"name": "PyTorch"}}, 0),
    (
        "multiple formats, best match wins",
        [
            {**auto("PyTorch", 5, priority=1), "modelFramework": _fw("transformers", 8)},
            {**auto("PyTorch", 10, priority=2), "modelFramework": _fw("transformers", 8)},
        ],
        {"modelFormat": {"name": "PyTorch"}, "modelFramework": {"name": "transformers"}},
        36,
    ),
    ("default priority when not specified", [auto("PyTorch", 12)], {"modelFormat": {"name": "PyTorch"}}, 12),
    (
        "nil model framework in base model",
        [{**auto("PyTorch", 10, priority=2), "modelFramework": _fw("transformers", 5)}],
        {"modelFormat": {"name": "PyTorch"}},
        0,
    ),
    (
        "autoselect false - should get 0 score",
        [auto("PyTorch", 10, priority=2, auto_select=False)],
        {"modelFormat": {"name": "PyTorch"}},
        0,
    ),
]


@pytest.mark.parametrize(("go_entry", "entries", "model_spec", "score"), SCORES, ids=[c[0] for c in SCORES])
def test_score(go_entry: str, entries: list[dict[str, Any]], model_spec: dict[str, Any], score: int) -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestScore, entry ``go_entry``:
    ``CalculateScore``; and a runtime scoring 0 is never selected."""
    runtime = gp_runtime("rt", {"supportedModelFormats": entries})
    model_obj = parse_object(ModelResource, gp_model(model_spec))
    assert runtime_score(parse_object(RuntimeResource, runtime), model_obj) == score, f"{GO} {go_entry}"
    if score == 0:
        assert isinstance(gp_selected(model_spec, runtime), RenderBlocked)


def test_get_compatible_runtimes_exclude_no_auto_select() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f,
    TestGetCompatibleRuntimes_ExcludeNoAutoSelect."""
    no_auto = ns_runtime("rt-no-auto", {"supportedModelFormats": [auto("pytorch", 5, auto_select=False)]})
    yes_auto = ns_runtime("rt-auto", {"supportedModelFormats": [auto("pytorch", 10)]})
    assert gp_ranking({"modelFormat": {"name": "pytorch"}}, no_auto, yes_auto) == ["rt-auto"]


def test_select_runtime_no_runtime_found_error_details() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f,
    TestSelectRuntime_NoRuntimeFoundError_Details: both runtimes are among the excluded, with Go's reasons."""
    wrong = ns_runtime("rt-wrong-format", {"supportedModelFormats": [auto("onnx", 5)]})
    small = ns_runtime(
        "rt-size-too-small",
        {"supportedModelFormats": [auto("pytorch", 5)], "modelSizeRange": _size("1B", "10B")},
    )
    picked = gp_selected({"modelFormat": {"name": "pytorch"}, "modelParameterSize": "70B"}, wrong, small)
    assert isinstance(picked, RenderBlocked)
    assert picked.message == (
        "no runtime found to support model pytorch with format pytorch in namespace default. Checked 2 runtimes "
        "(2 namespace-scoped, 0 cluster-scoped). Excluded runtimes: rt-size-too-small (model size 70B is outside "
        "supported range [1B, 10B] for runtime rt-size-too-small); rt-wrong-format (model format 'mt:pytorch' not "
        "in supported formats. Runtime supports: [mt:onnx]. Mismatches: format name mismatch (model=pytorch, "
        "runtime=onnx)) [model: ClusterBaseModel m]"
    )


def test_validate_runtime_disabled_and_no_auto_select() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f,
    TestValidateRuntime_DisabledAndNoAutoSelect: a named disabled runtime is ``RuntimeDisabledError``
    (``RuntimeDisabled``); a named runtime whose only entry has ``autoSelect: false`` is compatible."""
    disabled = ns_runtime("rt-disabled", {"disabled": True})
    no_auto = ns_runtime(
        "rt-no-auto", {"supportedModelFormats": [{"modelFormat": {"name": "pytorch"}, "autoSelect": False}]}
    )
    model = gp_model({"modelFormat": {"name": "pytorch"}})
    blocked = gp_blocked(gp_replica(runtime="rt-disabled"), model, disabled, no_auto)
    assert blocked.reason is BlockReason.RUNTIME_DISABLED
    assert blocked.message == "namespace-scoped runtime rt-disabled is disabled"
    result = gp_render(gp_replica(runtime="rt-no-auto"), model, disabled, no_auto)
    assert result.advisories == ()
    assert result.runtime_name == "rt-no-auto"


_AC_CLASSES = ["nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-a100"]
AC_RUNTIMES = [
    ns_runtime(
        "pytorch-rt",
        {
            "supportedModelFormats": [auto("pytorch", 10, priority=2)],
            "modelSizeRange": _size("1B", "10B"),
            "acceleratorRequirements": {"acceleratorClasses": _AC_CLASSES},
        },
    ),
    ns_runtime(
        "pytorch-rt-1",
        {
            "supportedModelFormats": [auto("pytorch", 8, priority=1)],
            "modelSizeRange": _size("1B", "8B"),
            "acceleratorRequirements": {"acceleratorClasses": _AC_CLASSES},
        },
    ),
    ns_runtime(
        "pytorch-rt-2",
        {
            "supportedModelFormats": [auto("pytorch", 12)],
            "modelSizeRange": _size("50B", "100B"),
            "acceleratorRequirements": {"acceleratorClasses": _AC_CLASSES},
        },
    ),
    ns_runtime(
        "pytorch-rt-3",
        {
            "supportedModelFormats": [auto("pytorch", 12)],
            "modelSizeRange": _size("1B", "10B"),
            "acceleratorRequirements": {"acceleratorClasses": ["H100"]},
        },
    ),
    ns_runtime(
        "pytorch-rt-4",
        {
            "supportedModelFormats": [auto("pytorch", 12)],
            "modelSizeRange": _size("1B", "10B"),
            "acceleratorRequirements": {"acceleratorClasses": ["H100", *_AC_CLASSES]},
        },
    ),
]

# TestSupportedRuntimeWithAC: (entry, the InferenceService Go uses, the class the replica requires, ranking).
# A replica requires a class only through its ome.io/accelerator-class annotation (the shell sets no
# selector or override), which Go's collectRequiredAcceleratorClasses reads with them.
WITH_AC: list[tuple[str, str, str | None, list[str]]] = [
    (
        "select with inference service ac",
        "isvc-with-ac",
        "nvidia-tesla-t4",
        ["pytorch-rt", "pytorch-rt-4", "pytorch-rt-1"],
    ),
    (
        "select without inference service ac",
        "isvc-without-ac",
        None,
        ["pytorch-rt", "pytorch-rt-3", "pytorch-rt-4", "pytorch-rt-1"],
    ),
    ("select with inference service ac-h100", "isvc-with-ac-h100", "H100", ["pytorch-rt-3", "pytorch-rt-4"]),
    (
        "select with inference service engine-ac",
        "isvc-with-engine-ac",
        "nvidia-tesla-t4",
        ["pytorch-rt", "pytorch-rt-4", "pytorch-rt-1"],
    ),
    (
        "select without inference service engine-ac",
        "isvc-with-engine-without-ac",
        None,
        ["pytorch-rt", "pytorch-rt-3", "pytorch-rt-4", "pytorch-rt-1"],
    ),
    (
        "select without inference service decoder-ac",
        "isvc-with-decoder-ac",
        "nvidia-tesla-t4",
        ["pytorch-rt", "pytorch-rt-4", "pytorch-rt-1"],
    ),
    (
        "select without inference service decoder-ac (no override)",
        "isvc-with-decoder-without-ac",
        None,
        ["pytorch-rt", "pytorch-rt-3", "pytorch-rt-4", "pytorch-rt-1"],
    ),
    (
        "select with inference service annotation ac",
        "isvc-with-annotation-ac",
        "nvidia-tesla-t4",
        ["pytorch-rt", "pytorch-rt-4", "pytorch-rt-1"],
    ),
]


@pytest.mark.parametrize(("go_entry", "isvc", "required", "names"), WITH_AC, ids=[c[0] for c in WITH_AC])
def test_supported_runtime_with_ac(go_entry: str, isvc: str, required: str | None, names: list[str]) -> None:
    """Go: sgl-project/ome pkg/runtimeselector/selector_test.go @ 078c923f, TestSupportedRuntimeWithAC,
    entry ``go_entry`` (Go's InferenceService ``isvc``; its class required through the replica's
    annotation, see the table's comment)."""
    annotations = {"ome.io/accelerator-class": required} if required else None
    model = {"modelFormat": {"name": "pytorch"}, "modelParameterSize": "7B"}
    assert gp_ranking(model, *AC_RUNTIMES, annotations=annotations) == names, f"{GO} {go_entry} ({isvc})"


def test_accelerator_class_annotation_empty_value_requires_nothing() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/matcher.go @ 10675f83 ``collectRequiredAcceleratorClasses``:
    an empty annotation value requires no class (not a test-file entry; the rule the entries rely on)."""
    model = {"modelFormat": {"name": "pytorch"}, "modelParameterSize": "7B"}
    assert gp_ranking(model, *AC_RUNTIMES, annotations={"ome.io/accelerator-class": ""}) == [
        "pytorch-rt",
        "pytorch-rt-3",
        "pytorch-rt-4",
        "pytorch-rt-1",
    ]
