"""OME's ``pkg/runtimeselector/matcher_test.go``, entry by entry, through omerender's render.

Go: ome-projects/ome ``pkg/runtimeselector/matcher_test.go`` @ 9177c1b002e2be4765737cb759209facb7779025
(the standalone-era file; module ``sigs.k8s.io/ome``). The matcher it tests is not in the index at that
commit; the texts follow sgl-project/ome ``matcher.go`` @ 10675f83, whose words these tests assert.

Go calls ``GetCompatibilityDetails``/``IsCompatible``/``compareSupportedModelFormats`` directly; here
the runtime is named by a replica, so ``render.Resolve`` runs ``ValidateRuntime`` on it and a verdict of
"incompatible" is the ``RuntimeCompatibilityAdvisory`` carrying Go's reason (``renderFromRefs``); a
compatible runtime renders without one. Entries with no observable counterpart are listed, with the
reason, in ``docs/goparity.md``.
"""

from __future__ import annotations

from typing import Any

import pytest

from omerender import BlockReason
from tests.goparity.gp_support import (
    GoRef,
    gp_advisory,
    gp_blocked,
    gp_model,
    gp_ranking,
    gp_replica,
    gp_runtime,
    gp_selected,
)

GO = GoRef(
    "ome-projects/ome", "pkg/runtimeselector/matcher_test.go", "9177c1b002e2be4765737cb759209facb7779025"
)


def fmt(
    name: str, version: str | None = None, operator: str | None = None, weight: int | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if version is not None:
        out["version"] = version
    if operator is not None:
        out["operator"] = operator
    if weight is not None:
        out["weight"] = weight
    return out


def entry(model_format: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict(extra)
    if model_format is not None:
        out["modelFormat"] = model_format
    return out


QWEN_PIPE = {
    "className": "QwenImagePipeline",
    "scheduler": {"library": "diffusers", "type": "FlowMatchEulerDiscreteScheduler"},
}

# TestRuntimeSupportsModel: (entry name, model spec, runtime spec, expected substring or None)
SUPPORTS_MODEL: list[tuple[str, dict[str, Any], dict[str, Any], str | None]] = [
    (
        "supported model format",
        {"modelFormat": fmt("pytorch", "1.0.0"), "modelParameterSize": "7B"},
        {"supportedModelFormats": [entry(fmt("pytorch", "1.0.0"), name="pytorch")]},
        None,
    ),
    (
        "supported model format with all attributes matching",
        {"modelFormat": fmt("pytorch", "1.0.0")},
        {"supportedModelFormats": [entry(fmt("pytorch", "1.0.0"), name="pytorch", autoSelect=True)]},
        None,
    ),
    (
        "unsupported model format",
        {"modelFormat": fmt("tensorflow", "2.0.0")},
        {"supportedModelFormats": [entry(fmt("pytorch", "1.0.0"), name="pytorch")]},
        "model format 'mt:tensorflow:2.0.0' not in supported formats",
    ),
    (
        "model size out of range",
        {"modelFormat": fmt("pytorch", "1.0.0"), "modelParameterSize": "70B"},
        {
            "supportedModelFormats": [entry(fmt("pytorch", "1.0.0"), name="pytorch")],
            "modelSizeRange": {"min": "1B", "max": "13B"},
        },
        "model size 70B is outside supported range [1B, 13B]",
    ),
    (
        "model with architecture and quantization match",
        {
            "modelFormat": fmt("safetensors", "1.0.0"),
            "modelArchitecture": "LlamaForCausalLM",
            "quantization": "fp8",
        },
        {
            "supportedModelFormats": [
                entry(fmt("safetensors", "1.0.0"), modelArchitecture="LlamaForCausalLM", quantization="fp8")
            ]
        },
        None,
    ),
    (
        "model with nil parameter size",
        {
            "modelFormat": fmt("safetensors", "1.0.0"),
            "modelArchitecture": "LlamaForCausalLM",
            "quantization": "fp8",
        },
        {
            "supportedModelFormats": [
                entry(fmt("safetensors", "1.0.0"), modelArchitecture="LlamaForCausalLM", quantization="fp8")
            ],
            "modelSizeRange": {"min": "1B", "max": "13B"},
        },
        None,
    ),
    (
        "runtime with nil size range",
        {
            "modelFormat": fmt("safetensors", "1.0.0"),
            "modelArchitecture": "LlamaForCausalLM",
            "quantization": "fp8",
        },
        {
            "supportedModelFormats": [
                entry(fmt("safetensors", "1.0.0"), modelArchitecture="LlamaForCausalLM", quantization="fp8")
            ]
        },
        None,
    ),
    (
        "model size at minimum boundary",
        {
            "modelFormat": fmt("safetensors", "1.0.0"),
            "modelArchitecture": "LlamaForCausalLM",
            "quantization": "fp8",
            "modelParameterSize": "1B",
        },
        {
            "supportedModelFormats": [
                entry(fmt("safetensors", "1.0.0"), modelArchitecture="LlamaForCausalLM", quantization="fp8")
            ],
            "modelSizeRange": {"min": "1B", "max": "13B"},
        },
        None,
    ),
    (
        "model size at maximum boundary",
        {
            "modelFormat": fmt("safetensors", "1.0.0"),
            "modelArchitecture": "LlamaForCausalLM",
            "quantization": "fp8",
            "modelParameterSize": "13B",
        },
        {
            "supportedModelFormats": [
                entry(fmt("safetensors", "1.0.0"), modelArchitecture="LlamaForCausalLM", quantization="fp8")
            ],
            "modelSizeRange": {"min": "1B", "max": "13B"},
        },
        None,
    ),
    (
        "diffusion pipeline match",
        {"modelFormat": fmt("diffusers", "1.0.0"), "diffusionPipeline": QWEN_PIPE},
        {"supportedModelFormats": [entry(fmt("diffusers", "1.0.0"), diffusionPipeline=QWEN_PIPE)]},
        None,
    ),
    (
        "diffusion pipeline runtime wildcard requirements",
        {"modelFormat": fmt("diffusers", "1.0.0"), "diffusionPipeline": QWEN_PIPE},
        {
            "supportedModelFormats": [
                entry(fmt("diffusers", "1.0.0"), diffusionPipeline={"scheduler": {"library": "diffusers"}})
            ]
        },
        None,
    ),
    (
        "diffusion pipeline runtime with no requirements",
        {"modelFormat": fmt("diffusers", "1.0.0"), "diffusionPipeline": QWEN_PIPE},
        {"supportedModelFormats": [entry(fmt("diffusers", "1.0.0"), diffusionPipeline={})]},
        None,
    ),
    (
        "diffusion pipeline mismatch",
        {"modelFormat": fmt("diffusers", "1.0.0"), "diffusionPipeline": QWEN_PIPE},
        {
            "supportedModelFormats": [
                entry(
                    fmt("diffusers", "1.0.0"),
                    diffusionPipeline={
                        "className": "StableDiffusionPipeline",
                        "scheduler": {"library": "diffusers", "type": "DPMSolverMultistepScheduler"},
                    },
                )
            ]
        },
        "pipeline class mismatch",
    ),
    (
        "empty supported formats",
        {"modelFormat": fmt("pytorch")},
        {"supportedModelFormats": []},
        "model format 'mt:pytorch' not in supported formats",
    ),
]


@pytest.mark.parametrize(
    ("go_entry", "model_spec", "runtime_spec", "contains"), SUPPORTS_MODEL, ids=[c[0] for c in SUPPORTS_MODEL]
)
def test_runtime_supports_model(
    go_entry: str, model_spec: dict[str, Any], runtime_spec: dict[str, Any], contains: str | None
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestRuntimeSupportsModel,
    entry ``go_entry``: compatible means no advisory; incompatible means the advisory carries Go's
    ``IncompatibilityReasons[0]`` (``errorContains``) inside ``RuntimeCompatibilityError``'s text."""
    advisory = gp_advisory(model_spec, runtime_spec)
    if contains is None:
        assert advisory is None, f"{GO} {go_entry}"
    else:
        assert advisory is not None, f"{GO} {go_entry}"
        assert contains in advisory
        fmt_name = model_spec["modelFormat"]["name"]
        assert f"(runtime test-runtime does not support model {fmt_name}: " in advisory


# TestCompareSupportedModelFormats: (entry, model spec, supported format, expected)
ONNX1 = fmt("ONNX", "1.0.0")
COMPARE_FORMATS: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("matching model format names", {"modelFormat": ONNX1}, entry(ONNX1, name="test-format"), True),
    (
        "non-matching model format names",
        {"modelFormat": ONNX1},
        entry(fmt("PyTorch", "1.0.0"), name="test-format"),
        False,
    ),
    (
        "matching quantization",
        {"modelFormat": ONNX1, "quantization": "int8"},
        entry(ONNX1, name="test-format", quantization="int8"),
        True,
    ),
    (
        "non-matching quantization",
        {"modelFormat": ONNX1, "quantization": "int8"},
        entry(ONNX1, name="test-format", quantization="fp16"),
        False,
    ),
    (
        "equal version comparison",
        {"modelFormat": fmt("ONNX", "1.8.0")},
        entry(fmt("ONNX", "1.8.0", "Equal"), name="test-format"),
        True,
    ),
    (
        "equal version comparison - not equal",
        {"modelFormat": fmt("ONNX", "1.8.0")},
        entry(fmt("ONNX", "1.9.0", "Equal"), name="test-format"),
        False,
    ),
    (
        "greater than version comparison - true",
        {"modelFormat": fmt("ONNX", "1.7.0")},
        entry(fmt("ONNX", "1.8.0", "GreaterThan"), name="test-format"),
        True,
    ),
    (
        "greater than version comparison - false",
        {"modelFormat": fmt("ONNX", "1.7.0")},
        entry(fmt("ONNX", "1.7.0", "GreaterThan"), name="test-format"),
        False,
    ),
    (
        "unofficial version comparison - forces equality",
        {"modelFormat": fmt("ONNX", "1.8.0-dev")},
        entry(fmt("ONNX", "1.8.0-dev", "GreaterThan"), name="test-format"),
        True,
    ),
    (
        "unofficial version comparison - not equal",
        {"modelFormat": fmt("ONNX", "1.8.0-dev")},
        entry(fmt("ONNX", "1.8.0-alpha", "GreaterThan"), name="test-format"),
        False,
    ),
    (
        "framework comparison - matching",
        {"modelFormat": ONNX1, "modelFramework": fmt("ONNXRuntime", "1.10.0")},
        entry(
            fmt("ONNX", "1.0.0", "Equal"),
            name="test-format",
            modelFramework=fmt("ONNXRuntime", "1.10.0", "Equal"),
        ),
        True,
    ),
    (
        "framework comparison - non-matching name",
        {"modelFormat": ONNX1, "modelFramework": fmt("ONNXRuntime", "1.10.0")},
        entry(ONNX1, name="test-format", modelFramework=fmt("PyTorch", "1.10.0")),
        False,
    ),
]


@pytest.mark.parametrize(
    ("go_entry", "model_spec", "supported", "expected"), COMPARE_FORMATS, ids=[c[0] for c in COMPARE_FORMATS]
)
def test_compare_supported_model_formats(
    go_entry: str, model_spec: dict[str, Any], supported: dict[str, Any], expected: bool
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0,
    TestCompareSupportedModelFormats, entry ``go_entry``: a runtime with that one entry supports the
    model (no advisory) exactly when ``compareSupportedModelFormats`` is true."""
    advisory = gp_advisory(model_spec, {"supportedModelFormats": [supported]})
    assert (advisory is None) is expected, f"{GO} {go_entry}: {advisory}"


def test_get_compatibility_details_disabled_runtime() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestGetCompatibilityDetails,
    entry "disabled runtime": the reason is "runtime is disabled". Observable where Go prints it: the
    no-runtime message's exclusion list (``SelectRuntime`` → ``NoRuntimeFoundError``)."""
    picked = gp_selected({"modelFormat": fmt("pytorch")}, gp_runtime("test-runtime", {"disabled": True}))
    assert not isinstance(picked, str)
    assert ". Excluded runtimes: test-runtime (runtime is disabled)" in picked.message


def test_get_compatibility_details_no_auto_select() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestGetCompatibilityDetails, entry "no auto-select enabled": compatible (the warning
    text has no counterpart: Go logs it nowhere a user reads). A named runtime gets no advisory; the
    same runtime is never auto-selected."""
    runtime = {"supportedModelFormats": [entry(fmt("pytorch", weight=10), autoSelect=False)]}
    assert gp_advisory({"modelFormat": fmt("pytorch")}, runtime) is None
    picked = gp_selected({"modelFormat": fmt("pytorch")}, gp_runtime("test-runtime", runtime))
    assert not isinstance(picked, str)
    # Go's NoRuntimeFoundError does not list a compatible runtime; our hint after its text does.
    assert "Excluded runtimes" not in picked.message
    assert (
        "test-runtime (runtime does not have auto-select enabled for any supported format)" in picked.message
    )


def test_get_compatibility_details_model_size_warning() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestGetCompatibilityDetails, entry "model size warning": a model without a size is
    compatible with a runtime that has a size range (the warning itself is not observable)."""
    runtime = {
        "supportedModelFormats": [entry(fmt("pytorch", weight=10), autoSelect=True)],
        "modelSizeRange": {"min": "1B", "max": "10B"},
    }
    assert gp_advisory({"modelFormat": fmt("pytorch")}, runtime) is None
    assert gp_selected({"modelFormat": fmt("pytorch")}, gp_runtime("test-runtime", runtime)) == "test-runtime"


def test_matcher_picks_runtime_by_model_size() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestMatcherPicksRuntimeByModelSize: a 7B model; small-runtime (1B-5B) is incompatible
    (size), mid-runtime (6B-13B) is compatible and is the one selected."""
    model = {"modelFormat": {"name": "diffusers"}, "modelParameterSize": "7B"}
    formats = [entry({"name": "diffusers"}, autoSelect=True)]
    small = gp_runtime(
        "small-runtime", {"supportedModelFormats": formats, "modelSizeRange": {"min": "1B", "max": "5B"}}
    )
    mid = gp_runtime(
        "mid-runtime", {"supportedModelFormats": formats, "modelSizeRange": {"min": "6B", "max": "13B"}}
    )
    assert gp_selected(model, small, mid) == "mid-runtime"
    advisory = gp_advisory(model, small["spec"], runtime_name="small-runtime")
    assert advisory is not None
    assert "model size 7B is outside supported range [1B, 5B] for runtime small-runtime" in advisory


def _ac_runtime(classes: list[str]) -> dict[str, Any]:
    return {
        "supportedModelFormats": [entry(fmt("pytorch", weight=10), autoSelect=True)],
        "acceleratorRequirements": {"acceleratorClasses": classes},
    }


# TestGetCompatibilityDetails_AcceleratorClasses: (entry, runtime classes, required class, compatible).
# Go sets the class on the InferenceService's spec.acceleratorSelector or a component's
# acceleratorOverride; the shell renderFromRefs builds from a replica sets neither, and the only way a
# replica requires a class is its ome.io/accelerator-class annotation, which Go's
# collectRequiredAcceleratorClasses reads beside them (one set of required classes).
ACCELERATOR_CLASSES: list[tuple[str, list[str], str | None, bool]] = [
    ("isvc selector matches class", ["nvidia-a100", "nvidia-tesla-t4"], "nvidia-a100", True),
    ("isvc selector mismatches class", ["nvidia-a100", "nvidia-tesla-t4"], "H100", False),
    ("engine override matches class", ["H100"], "H100", True),
    ("decoder override mismatches class", ["nvidia-a100"], "H100", False),
    ("no accelerator classes in runtime => compatible", [], None, True),
]


@pytest.mark.parametrize(
    ("go_entry", "classes", "required", "compatible"),
    ACCELERATOR_CLASSES,
    ids=[c[0] for c in ACCELERATOR_CLASSES],
)
def test_get_compatibility_details_accelerator_classes(
    go_entry: str, classes: list[str], required: str | None, compatible: bool
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0,
    TestGetCompatibilityDetails_AcceleratorClasses, entry ``go_entry`` (the class required through the
    replica's ``ome.io/accelerator-class`` annotation, see the table's comment)."""
    annotations = {"ome.io/accelerator-class": required} if required else None
    model = {"modelFormat": fmt("pytorch")}
    advisory = gp_advisory(model, _ac_runtime(classes), runtime_name="rt", annotations=annotations)
    picked = gp_selected(model, gp_runtime("rt", _ac_runtime(classes)), annotations=annotations)
    if compatible:
        assert advisory is None
        assert picked == "rt"
    else:
        assert advisory is not None
        assert "required accelerator class" in advisory
        # IsCompatible's own RuntimeCompatibilityError leaves the model name empty (matcher.go).
        assert (
            f"(runtime rt does not support model : accelerator mismatch: required accelerator class(es) "
            f"[{required}] requested by InferenceService, but runtime only supports {_go_list(classes)})"
        ) in advisory
        assert not isinstance(picked, str)
        assert f"rt (accelerator mismatch: required accelerator class(es) [{required}]" in picked.message


def _go_list(values: list[str]) -> str:
    return "[" + ", ".join(sorted(values)) + "]"


def test_accelerator_class_against_a_runtime_without_classes() -> None:
    """Go: sgl-project/ome pkg/runtimeselector/matcher.go @ 10675f83, ``acceleratorClassMismatch``'s
    first branch (not a table entry of the test file): a required class and a runtime listing none."""
    runtime = {"supportedModelFormats": [entry(fmt("pytorch"), autoSelect=True)]}
    advisory = gp_advisory(
        {"modelFormat": fmt("pytorch")},
        runtime,
        runtime_name="rt",
        annotations={"ome.io/accelerator-class": "H100"},
    )
    assert advisory == (
        "Runtime rt does not declare support for model m (runtime rt does not support model : accelerator "
        "mismatch: required accelerator class(es) [H100] requested by InferenceService, but runtime supports "
        "no accelerator classes); proceeding because the runtime was named explicitly"
    )


def test_is_compatible_disabled_runtime_returns_error() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestIsCompatible_DisabledAndAcceleratorErrors, entry "disabled runtime returns error",
    and TestIsCompatible_DisabledRuntime: a named disabled runtime is ``RuntimeDisabledError``, which
    ``classifyResolveError`` reports as ``RuntimeDisabled``."""
    blocked = gp_blocked(
        gp_replica(runtime="rt"),
        gp_model({"modelFormat": fmt("pytorch")}),
        gp_runtime("rt", {"disabled": True}),
    )
    assert blocked.reason is BlockReason.RUNTIME_DISABLED
    assert blocked.message == "cluster-scoped runtime rt is disabled"


def test_is_compatible_accelerator_mismatch_returns_compatibility_error() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestIsCompatible_DisabledAndAcceleratorErrors, entry "accelerator mismatch returns
    compatibility error": a ``RuntimeCompatibilityError``, advisory for a named runtime."""
    runtime = {
        "supportedModelFormats": [entry(fmt("pytorch"))],
        "acceleratorRequirements": {"acceleratorClasses": ["A100"]},
    }
    advisory = gp_advisory(
        {"modelFormat": fmt("pytorch")},
        runtime,
        runtime_name="rt",
        annotations={"ome.io/accelerator-class": "H100"},
    )
    assert advisory is not None
    assert "but runtime only supports [A100]" in advisory


@pytest.mark.parametrize(
    "go_test",
    ["TestIsCompatible_DisabledAndAcceleratorErrors/size mismatch", "TestIsCompatible_SizeMismatchNoError"],
)
def test_is_compatible_size_mismatch_is_not_an_error(go_test: str) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, ``go_test``: a size mismatch is "not compatible" without an error of its own; the named
    runtime's advisory then carries ``GetCompatibilityDetails``' size reason."""
    runtime = {
        "supportedModelFormats": [entry(fmt("pytorch"))],
        "modelSizeRange": {"min": "1B", "max": "2B"},
        "acceleratorRequirements": {},
    }
    advisory = gp_advisory(
        {"modelFormat": fmt("pytorch"), "modelParameterSize": "70B"}, runtime, runtime_name="rt"
    )
    assert advisory == (
        "Runtime rt does not declare support for model m (runtime rt does not support model pytorch: model size "
        "70B is outside supported range [1B, 2B] for runtime rt); proceeding because the runtime was named "
        "explicitly"
    )


# TestCompareVersionsWithOperator: (entry, supported version, model version, operator, expected)
VERSION_ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("Equal versions with Equal operator", "1.0.0", "1.0.0", "Equal", True),
    ("Equal versions with GreaterThan operator", "1.0.0", "1.0.0", "GreaterThan", False),
    ("GreaterThan - supported version is greater", "1.8.0", "1.7.0", "GreaterThan", True),
    ("GreaterThan - supported version is not greater", "1.7.0", "1.8.0", "GreaterThan", False),
    ("GreaterThanOrEqual - equal versions", "1.8.0", "1.8.0", "GreaterThanOrEqual", True),
    ("GreaterThanOrEqual - supported version is greater", "1.9.0", "1.8.0", "GreaterThanOrEqual", True),
    ("GreaterThanOrEqual - supported version is less", "1.7.0", "1.8.0", "GreaterThanOrEqual", False),
    ("Unofficial version forces equality check", "1.8.0-dev", "1.8.0-dev", "GreaterThan", True),
    ("Unofficial version not equal", "1.8.0-dev", "1.8.0-alpha", "GreaterThan", False),
    ("Equal versions with precision 1 and nil operator", "1", "1", None, True),
    ("Precision mismatch", "1.0", "1.0.0", "GreaterThan", False),
    ("Major prefix mismatch", "v1.0.0", "1.0.0", "GreaterThan", False),
    ("Nil operator defaults to Equal", "v2.0.0", "v2.0.0", None, True),
]


@pytest.mark.parametrize(
    ("go_entry", "supported", "version", "operator", "expected"),
    VERSION_ROWS,
    ids=[r[0] for r in VERSION_ROWS],
)
@pytest.mark.parametrize("site", ["format", "framework"])
def test_compare_versions_with_operator(
    site: str, go_entry: str, supported: str, version: str, operator: str | None, expected: bool
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestCompareVersionsWithOperator,
    entry ``go_entry``, through both call sites Go drives (``compareModelFormatVersions`` with format
    ``pytorch``, ``compareModelFrameworkVersions`` with framework ``transformers``); the raw helper has
    no counterpart of its own."""
    if site == "format":
        model = {"modelFormat": fmt("pytorch", version)}
        runtime = {"supportedModelFormats": [entry(fmt("pytorch", supported, operator))]}
    else:
        model = {"modelFormat": fmt("pytorch"), "modelFramework": fmt("transformers", version)}
        runtime = {
            "supportedModelFormats": [
                entry(fmt("pytorch"), modelFramework=fmt("transformers", supported, operator))
            ]
        }
    advisory = gp_advisory(model, runtime)
    assert (advisory is None) is expected, f"{GO} {go_entry} ({site}): {advisory}"
    if not expected:
        assert advisory is not None
        assert f"{site} version mismatch (model={version}, runtime={supported})" in advisory


# TestCompareModelFormatVersions and TestCompareModelFrameworkVersions (same rows, own tables).
FORMAT_VERSION_ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("Equal versions with Equal operator", "1.0.0", "1.0.0", "Equal", True),
    ("Equal versions with GreaterThan operator", "1.0.0", "1.0.0", "GreaterThan", False),
    ("GreaterThan - supported version is greater", "1.8.0", "1.7.0", "GreaterThan", True),
    ("GreaterThan - supported version is not greater", "1.7.0", "1.8.0", "GreaterThan", False),
    ("GreaterThanOrEqual - equal versions", "1.8.0", "1.8.0", "GreaterThanOrEqual", True),
    ("GreaterThanOrEqual - supported version is greater", "1.9.0", "1.8.0", "GreaterThanOrEqual", True),
    ("GreaterThanOrEqual - supported version is less", "1.7.0", "1.8.0", "GreaterThanOrEqual", False),
    ("Unofficial version forces equality check", "1.8.0-dev", "1.8.0-dev", "GreaterThan", True),
    ("Unofficial version not equal", "1.8.0-dev", "1.8.0-alpha", "GreaterThan", False),
    ("Equal versions with precision 1 and Equal operator", "1", "1", None, True),
    ("Precision mismatch", "1.0", "1.0.0", "GreaterThan", False),
    ("Major prefix mismatch", "v1.0.0", "1.0.0", "GreaterThan", False),
    ("Nil operator defaults to Equal", "v2.0.0", "v2.0.0", None, True),
]
FRAMEWORK_VERSION_ROWS: list[tuple[str, str, str, str | None, bool]] = [
    ("Equal versions with Equal operator", "1.10.0", "1.10.0", "Equal", True),
    ("Equal versions with GreaterThan operator", "1.10.0", "1.10.0", "GreaterThan", False),
    ("GreaterThan - supported version is greater", "1.15.0", "1.10.0", "GreaterThan", True),
    ("GreaterThan - supported version is not greater", "1.10.0", "1.15.0", "GreaterThan", False),
    ("GreaterThanOrEqual - equal versions", "1.10.0", "1.10.0", "GreaterThanOrEqual", True),
    ("GreaterThanOrEqual - supported version is greater", "1.15.0", "1.10.0", "GreaterThanOrEqual", True),
    ("GreaterThanOrEqual - supported version is less", "1.10.0", "1.15.0", "GreaterThanOrEqual", False),
    ("Unofficial version forces equality check", "1.10.0-dev", "1.10.0-dev", "GreaterThan", True),
    ("Unofficial version not equal", "1.10.0-dev", "1.10.0-alpha", "GreaterThan", False),
    ("Precision mismatch", "1.10", "1.10.0", "GreaterThan", False),
    ("Major prefix mismatch", "v1.10.0", "1.10.0", "GreaterThan", False),
    ("Nil operator defaults to Equal", "v1.10.0", "v1.10.0", None, True),
]


@pytest.mark.parametrize(
    ("go_entry", "supported", "version", "operator", "expected"),
    FORMAT_VERSION_ROWS,
    ids=[r[0] for r in FORMAT_VERSION_ROWS],
)
def test_compare_model_format_versions(
    go_entry: str, supported: str, version: str, operator: str | None, expected: bool
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestCompareModelFormatVersions,
    entry ``go_entry``."""
    model = {"modelFormat": fmt("pytorch", version)}
    runtime = {"supportedModelFormats": [entry(fmt("pytorch", supported, operator))]}
    assert (gp_advisory(model, runtime) is None) is expected, f"{GO} {go_entry}"


@pytest.mark.parametrize(
    ("go_entry", "supported", "version", "operator", "expected"),
    FRAMEWORK_VERSION_ROWS,
    ids=[r[0] for r in FRAMEWORK_VERSION_ROWS],
)
def test_compare_model_framework_versions(
    go_entry: str, supported: str, version: str, operator: str | None, expected: bool
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestCompareModelFrameworkVersions,
    entry ``go_entry``. Go's comparator sees versions only ("Nil operator defaults to Equal" pairs a
    ``transformers`` runtime with an ``onnxruntime`` model); a render compares names first, so both
    sides use ``transformers`` here."""
    model = {"modelFormat": fmt("pytorch"), "modelFramework": fmt("transformers", version)}
    runtime = {
        "supportedModelFormats": [
            entry(fmt("pytorch"), modelFramework=fmt("transformers", supported, operator))
        ]
    }
    assert (gp_advisory(model, runtime) is None) is expected, f"{GO} {go_entry}"


SAFE1 = fmt("safetensors", "1.0.0")
# TestGetFormatMismatchReason: (entry, model spec, supported format, substrings of the reason)
MISMATCH_REASONS: list[tuple[str, dict[str, Any], dict[str, Any], list[str]]] = [
    (
        "architecture mismatch",
        {"modelFormat": SAFE1, "modelArchitecture": "LlamaForCausalLM"},
        entry(SAFE1, modelArchitecture="MistralForCausalLM"),
        ["architecture mismatch", "LlamaForCausalLM", "MistralForCausalLM"],
    ),
    (
        "model has architecture but runtime does not",
        {"modelFormat": SAFE1, "modelArchitecture": "LlamaForCausalLM"},
        entry(SAFE1),
        ["model has architecture LlamaForCausalLM but runtime has no architecture requirement"],
    ),
    (
        "quantization mismatch",
        {"modelFormat": SAFE1, "quantization": "fp8"},
        entry(SAFE1, quantization="int4"),
        ["quantization mismatch"],
    ),
    (
        "format name mismatch",
        {"modelFormat": fmt("pytorch", "1.0.0")},
        entry(SAFE1),
        ["format name mismatch"],
    ),
    (
        "framework mismatch",
        {"modelFormat": SAFE1, "modelFramework": fmt("transformers", "4.0.0")},
        entry(SAFE1, modelFramework=fmt("pytorch", "2.0.0")),
        ["framework name mismatch"],
    ),
    (
        "model has framework but runtime does not",
        {"modelFormat": SAFE1, "modelFramework": fmt("transformers", "4.0.0")},
        entry(SAFE1),
        ["model has framework transformers but runtime has no framework requirement"],
    ),
    (
        "multiple mismatches combined",
        {"modelFormat": SAFE1, "modelArchitecture": "LlamaForCausalLM", "quantization": "fp8"},
        entry(SAFE1, modelArchitecture="MistralForCausalLM", quantization="int4"),
        ["architecture mismatch", "quantization mismatch"],
    ),
]


@pytest.mark.parametrize(
    ("go_entry", "model_spec", "supported", "contains"),
    MISMATCH_REASONS,
    ids=[c[0] for c in MISMATCH_REASONS],
)
def test_get_format_mismatch_reason(
    go_entry: str, model_spec: dict[str, Any], supported: dict[str, Any], contains: list[str]
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestGetFormatMismatchReason,
    entry ``go_entry``: the reason reaches users as the ``Mismatches:`` part of the advisory."""
    advisory = gp_advisory(model_spec, {"supportedModelFormats": [supported]})
    assert advisory is not None
    mismatches = advisory.split(". Mismatches: ", 1)[1]
    for text in contains:
        assert text in mismatches, f"{GO} {go_entry}"


def test_multiple_mismatches_are_joined_in_go_order() -> None:
    """Go: sgl-project/ome matcher.go @ 10675f83 ``getFormatMismatchReason``'s own example: every
    mismatch of one entry, joined with ", " (architecture, quantization, format name)."""
    advisory = gp_advisory(
        {
            "modelFormat": fmt("pytorch", "1.0.0"),
            "modelArchitecture": "LlamaForCausalLM",
            "quantization": "fp8",
        },
        {
            "supportedModelFormats": [
                entry(SAFE1, modelArchitecture="MistralForCausalLM", quantization="int4")
            ]
        },
    )
    assert advisory is not None
    assert advisory.endswith(
        "Mismatches: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM), quantization "
        "mismatch (model=fp8, runtime=int4), format name mismatch (model=pytorch, runtime=safetensors)); "
        "proceeding because the runtime was named explicitly"
    )


# TestModelSizeRangePartialBounds: (entry, size range, model size, in range)
PARTIAL_BOUNDS: list[tuple[str, dict[str, str], str, bool]] = [
    ("only Min set, model above min", {"min": "1B"}, "7B", True),
    ("only Min set, model below min", {"min": "10B"}, "7B", False),
    ("only Min set, model at min boundary", {"min": "7B"}, "7B", True),
    ("only Max set, model below max", {"max": "13B"}, "7B", True),
    ("only Max set, model above max", {"max": "3B"}, "7B", False),
    ("only Max set, model at max boundary", {"max": "7B"}, "7B", True),
    ("both bounds set, model in range", {"min": "1B", "max": "13B"}, "7B", True),
    ("both bounds set, model out of range", {"min": "1B", "max": "5B"}, "7B", False),
    ("neither bound set, always in range", {}, "7B", True),
]


@pytest.mark.parametrize(
    ("go_entry", "size_range", "size", "want"), PARTIAL_BOUNDS, ids=[c[0] for c in PARTIAL_BOUNDS]
)
def test_model_size_range_partial_bounds(
    go_entry: str, size_range: dict[str, str], size: str, want: bool
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestModelSizeRangePartialBounds,
    entry ``go_entry``, at its three sites: the matcher's verdict (named runtime: advisory or not), and
    selection beside another runtime (``CompareRuntimes`` must not fail on a partial range)."""
    model = {"modelFormat": fmt("pytorch"), "modelParameterSize": size}
    spec = {"supportedModelFormats": [entry(fmt("pytorch"), autoSelect=True)], "modelSizeRange": size_range}
    assert (gp_advisory(model, spec, runtime_name="rt") is None) is want, f"{GO} {go_entry}"
    other = gp_runtime(
        "other",
        {
            "supportedModelFormats": [entry(fmt("pytorch"), autoSelect=True)],
            "modelSizeRange": {"min": "1B", "max": "13B"},
        },
    )
    ranking = gp_ranking(model, gp_runtime("rt", spec), other)
    assert ("rt" in ranking) is want
    assert "other" in ranking


# TestCalculateSizeScorePartialBounds: (entry, size range, distance for a 7B model)
SIZE_SCORES: list[tuple[str, dict[str, str], float]] = [
    ("only Min set", {"min": "1B"}, 6e9),
    ("only Max set", {"max": "13B"}, 6e9),
    ("both bounds set", {"min": "1B", "max": "13B"}, 12e9),
    ("neither bound set", {}, 0.0),
]


def _rival_range(distance: float) -> dict[str, str] | None:
    """A size range around 7B whose distance from it is ``distance`` (both bounds, split evenly)."""
    if distance == 0:
        return None
    half = distance / 2 / 1e9
    return {"min": f"{7 - half:g}B", "max": f"{7 + half:g}B"}


@pytest.mark.parametrize(("go_entry", "size_range", "distance"), SIZE_SCORES, ids=[c[0] for c in SIZE_SCORES])
def test_calculate_size_score_partial_bounds(
    go_entry: str, size_range: dict[str, str], distance: float
) -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestCalculateSizeScorePartialBounds,
    entry ``go_entry``. The distance is pinned through the ranking: against rivals at exactly that
    distance it ties, so the name decides (``a-rival`` before ``m-rt`` before ``z-rival``)."""
    model = {"modelFormat": fmt("pytorch"), "modelParameterSize": "7B"}
    formats = [entry(fmt("pytorch"), autoSelect=True)]
    rt = gp_runtime("m-rt", {"supportedModelFormats": formats, "modelSizeRange": size_range})
    rival_spec: dict[str, Any] = {"supportedModelFormats": formats}
    rival_range = _rival_range(distance)
    if rival_range is not None:
        rival_spec["modelSizeRange"] = rival_range
    ranking = gp_ranking(model, rt, gp_runtime("a-rival", rival_spec), gp_runtime("z-rival", rival_spec))
    assert ranking == ["a-rival", "m-rt", "z-rival"], f"{GO} {go_entry}"


def test_get_compatibility_details_detailed_format_mismatch_architecture() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestGetCompatibilityDetails_DetailedFormatMismatch, entry "architecture mismatch provides
    detailed reason"."""
    advisory = gp_advisory(
        {"modelFormat": SAFE1, "modelArchitecture": "LlamaForCausalLM"},
        {"supportedModelFormats": [entry(SAFE1, modelArchitecture="MistralForCausalLM")]},
    )
    assert advisory is not None
    for text in ("architecture mismatch", "LlamaForCausalLM", "MistralForCausalLM"):
        assert text in advisory


def test_get_compatibility_details_detailed_format_mismatch_empty_formats() -> None:
    """Go: ome-projects/ome pkg/runtimeselector/matcher_test.go @ 9177c1b0, TestGetCompatibilityDetails_DetailedFormatMismatch, entry "empty supported formats provides
    clear reason"."""
    advisory = gp_advisory({"modelFormat": SAFE1}, {"supportedModelFormats": []})
    assert advisory == (
        "Runtime test-runtime does not declare support for model m (runtime test-runtime does not support "
        "model safetensors: model format 'mt:safetensors:1.0.0' not in supported formats: no supported formats "
        "defined); proceeding because the runtime was named explicitly"
    )
