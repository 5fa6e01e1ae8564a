"""Runtime selection, as OME's ``pkg/runtimeselector`` does it (02 §2, DECISIONS §3.3–3.4).

A runtime *supports* a model when some entry of ``supportedModelFormats`` passes the diffusion
pipeline, architecture, quantization, format and framework checks, and the model's size lies in the
runtime's ``modelSizeRange``. Automatic selection keeps the enabled runtimes that support the model,
have an ``autoSelect: true`` entry and score above zero; ServingRuntimes of
the replica's namespace rank before every ClusterServingRuntime, then score (desc), size-range distance
(asc, only for a model with a size) and name (asc). Selection reads each runtime's own spec: runtime
inheritance applies only to a runtime the replica names, which the caller resolves before asking
:func:`named_runtime_advisory`. Selection does not look at the replica's piece (``evaluateRuntime`` in
``runtimeselector/selector.go`` has no such check): a winner without it blocks the render later
(``renderFromRefs``), and :func:`piece_advisory` names the best-ranked candidate that has one.

Where this differs from the OME snapshot of 02, on purpose:
- a ``modelSizeRange`` with one bound is open on the other side (OME's snapshot dereferences nil), and
  its distance counts only the bound that is set (newer OME does both the same way);
- a distance that is NaN (a ``NaN`` size string) sorts as infinitely far, where Go's comparator is
  undefined; OME also truncates distance differences to ``int`` before comparing, which we do not;
- the no-runtime message is Go's ``NoRuntimeFoundError`` text in a fixed order (Go walks a map),
  followed by a bracketed hint naming the model object and the runtimes Go passes over silently.

Every reason and message is Go's text (``docs/goparity.md`` lists the Go version followed); the
replica's ``ome.io/accelerator-class`` annotation is the one accelerator requirement a replica can
state (``serviceShell`` copies annotations; ``collectRequiredAcceleratorClasses`` reads it).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import field
from enum import StrEnum
from typing import Any

from omerender._records import record
from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import ModelFormat, ModelResource, ModelSpec, RuntimeResource, SupportedModelFormat
from omerender.versions import version_matches

__all__ = [
    "ACCELERATOR_CLASS_ANNOTATION",
    "Candidate",
    "Exclusion",
    "ExclusionCause",
    "SelectionReport",
    "accelerator_problem",
    "compatibility_error",
    "compatibility_problem",
    "evaluate_runtimes",
    "model_format_label",
    "named_runtime_advisory",
    "parse_model_size",
    "piece_advisory",
    "require_format_name",
    "required_accelerator_classes",
    "runtime_accelerator_classes",
    "runtime_score",
    "select_runtime",
]

# OME's scorer defaults; catalog YAML carries no weights, so these are what applies in practice.
DEFAULT_PRIORITY = 1
DEFAULT_FORMAT_WEIGHT = 10
DEFAULT_FRAMEWORK_WEIGHT = 5

# -- size strings ------------------------------------------------------------------------------

_SIZE_SUFFIXES = (("T", 1e12), ("B", 1e9), ("M", 1e6))
# What Go's strconv.ParseFloat accepts (ASCII only, no spaces, "_" only between digits); Python's
# float() is laxer (spaces, Unicode digits, "+nan"), so the text is checked against Go's syntax first.
_DIGITS = r"\d(?:_?\d)*"
_HEXITS = r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_GO_DECIMAL = re.compile(
    rf"[+-]?(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?", re.ASCII
)
_GO_HEX = re.compile(
    rf"[+-]?0[xX]_?(?:{_HEXITS}(?:\.(?:{_HEXITS})?)?|\.{_HEXITS})[pP][+-]?{_DIGITS}", re.ASCII
)
_GO_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.ASCII | re.IGNORECASE)


def _go_parse_float(text: str) -> float | None:
    if _GO_SPECIAL.fullmatch(text):
        return float(text)
    if _GO_DECIMAL.fullmatch(text):
        value = float(text.replace("_", ""))
    elif _GO_HEX.fullmatch(text):
        value = float.fromhex(text.replace("_", ""))
    else:
        return None
    # Go reports overflow as an error (ErrRange), which OME turns into 0 like any other error.
    return None if math.isinf(value) else value


@functools.lru_cache(maxsize=4096)
def parse_model_size(text: str) -> float:
    """A parameter count from a size string, as OME's ``parseModelSize``: ``7B`` is 7e9.

    Suffixes ``T``, ``B`` and ``M`` are case-sensitive; no suffix reads a plain number. Anything else
    (``7b``, ``500K``, ``""``) silently reads as 0, which is what OME does.
    """
    multiplier = 1.0
    for suffix, factor in _SIZE_SUFFIXES:
        if text.endswith(suffix):
            text, multiplier = text[: -len(suffix)], factor
            break
    value = _go_parse_float(text)
    return 0.0 if value is None else value * multiplier


def _size_bound_text(bound: str | None) -> str:
    # Go (matcher.go, GetCompatibilityDetails/checkModelSize) prints both bounds; a bound left unset
    # is open (the standalone-era fix of the nil dereference), printed as "" here: the standalone
    # matcher's text for a partial range is not in the index.
    return "" if bound is None else bound


def _size_ok(runtime: RuntimeResource, spec: ModelSpec) -> bool:
    size_text = spec.model_parameter_size
    size_range = runtime.spec.model_size_range
    if size_text is None or size_range is None:
        return True
    size = parse_model_size(size_text)
    low, high = size_range.min, size_range.max
    # Written as "outside" tests so a NaN size passes, as Go's comparisons make it.
    outside = (low is not None and size < parse_model_size(low)) or (
        high is not None and size > parse_model_size(high)
    )
    return not outside


def _size_problem(runtime: RuntimeResource, spec: ModelSpec) -> str | None:
    """``GetCompatibilityDetails``' size reason (``runtimeselector/matcher.go``), Go's words."""
    size_range = runtime.spec.model_size_range
    if size_range is None or _size_ok(runtime, spec):
        return None
    return (
        f"model size {spec.model_parameter_size} is outside supported range "
        f"[{_size_bound_text(size_range.min)}, {_size_bound_text(size_range.max)}] "
        f"for runtime {runtime.metadata.name}"
    )


def _size_distance(runtime: RuntimeResource, spec: ModelSpec) -> float:
    """``|min-s| + |max-s|`` over the bounds that are set; 0 without a range or without a size."""
    size_range = runtime.spec.model_size_range
    if spec.model_parameter_size is None or size_range is None:
        return 0.0
    size = parse_model_size(spec.model_parameter_size)
    distance = 0.0
    for bound in (size_range.min, size_range.max):
        if bound is not None:
            distance += abs(parse_model_size(bound) - size)
    return math.inf if math.isnan(distance) else distance


# -- compatibility (matcher.go) -----------------------------------------------------------------
# Every text below is Go's (``pkg/runtimeselector/matcher.go`` of sgl-project/ome at 10675f83, the
# newest matcher in the index and the one whose words the standalone-era ``matcher_test.go`` of
# ome-projects/ome at 9177c1b asserts).

ACCELERATOR_CLASS_ANNOTATION = "ome.io/accelerator-class"
_DIFFUSION_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")


def _go_list(values: Iterable[str]) -> str:
    """``formatStringList``: sorted, in brackets, comma-separated."""
    return "[" + ", ".join(sorted(values)) + "]"


def required_accelerator_classes(annotations: Mapping[str, str] | None) -> tuple[str, ...]:
    """``collectRequiredAcceleratorClasses`` over the shell ``renderFromRefs`` builds from a replica.

    The shell (``serviceShell`` in ``inferencereplica/render.go``) copies the replica's annotations and
    sets no accelerator selector or component override, so only the ``ome.io/accelerator-class``
    annotation can require a class; an empty value requires none.
    """
    value = (annotations or {}).get(ACCELERATOR_CLASS_ANNOTATION)
    return (value,) if value else ()


def runtime_accelerator_classes(runtime: RuntimeResource) -> tuple[str, ...]:
    """``spec.acceleratorRequirements.acceleratorClasses``, or () when unset or not a list of strings."""
    requirements = (runtime.spec.model_extra or {}).get("acceleratorRequirements")
    classes = requirements.get("acceleratorClasses") if isinstance(requirements, Mapping) else None
    if not isinstance(classes, list):
        return ()
    return tuple(c for c in classes if isinstance(c, str))


def accelerator_problem(runtime: RuntimeResource, required: tuple[str, ...]) -> str | None:
    """``acceleratorClassMismatch``: the runtime must list every class the replica requires."""
    if not required:
        return None
    supported = runtime_accelerator_classes(runtime)
    if not supported:
        return (
            f"accelerator mismatch: required accelerator class(es) {_go_list(required)} requested by "
            "InferenceService, but runtime supports no accelerator classes"
        )
    unsupported = [c for c in required if c not in supported]
    if unsupported:
        return (
            f"accelerator mismatch: required accelerator class(es) {_go_list(unsupported)} requested by "
            f"InferenceService, but runtime only supports {_go_list(supported)}"
        )
    return None


def _component_problem(name: str, model: Any, runtime: Any) -> str | None:
    """``compareDiffusionComponent``."""
    if not isinstance(runtime, Mapping):
        return None
    if not isinstance(model, Mapping):
        return f"component {name} required by runtime but not specified in model"
    for attribute in ("library", "type"):
        wanted = runtime.get(attribute) or ""
        have = model.get(attribute) or ""
        if wanted and wanted != have:
            return f"{name} {attribute} mismatch (model={have}, runtime={wanted})"
    return None


def _diffusion_problem(model: dict[str, Any] | None, runtime: dict[str, Any] | None) -> str | None:
    """``compareDiffusionPipeline``'s reason, or None when the pipeline matches."""
    if runtime is None:
        return None
    if model is None:
        return "diffusion pipeline required by runtime but not specified in model"
    wanted_class = runtime.get("className")
    if wanted_class is not None and model.get("className") != wanted_class:
        have = model.get("className")
        have_text = "<nil>" if have is None else have
        return f"pipeline class mismatch (model={have_text}, runtime={wanted_class})"
    for name in _DIFFUSION_COMPONENTS:
        if problem := _component_problem(name, model.get(name), runtime.get(name)):
            return problem
    wanted_extra = runtime.get("additionalComponents")
    if isinstance(wanted_extra, Mapping) and wanted_extra:
        have_extra = model.get("additionalComponents")
        if not isinstance(have_extra, Mapping) or not have_extra:
            return "diffusion pipeline missing required additional components"
        for key in sorted(wanted_extra):  # Go walks a map: any order; we report the first by name
            if key not in have_extra:
                return f"diffusion component {key} missing in model"
            # Go holds these by value: a null entry is an empty component, not a missing one.
            have = have_extra[key] if isinstance(have_extra[key], Mapping) else {}
            if problem := _component_problem(key, have, wanted_extra[key]):
                return problem
    return None


def _optional_mismatch(what: str, model: str | None, runtime: str | None) -> str | None:
    """Architecture and quantization in ``getFormatMismatchReason``: both unset, or both set and equal."""
    if model == runtime:
        return None
    if model is not None and runtime is not None:
        return f"{what} mismatch (model={model}, runtime={runtime})"
    if model is None:
        return f"model has no {what} but runtime requires {runtime}"
    return f"model has {what} {model} but runtime has no {what} requirement"


def _named_version_mismatch(what: str, model: ModelFormat, runtime: ModelFormat) -> str | None:
    """Format and framework in ``getFormatMismatchReason`` (both sides present)."""
    if runtime.name != model.name:
        return f"{what} name mismatch (model={model.name}, runtime={runtime.name})"
    have, wanted = model.version, runtime.version
    if have is not None and wanted is not None:
        if version_matches(wanted, have, runtime.operator):
            return None
        return f"{what} version mismatch (model={have}, runtime={wanted})"
    if have is None and wanted is not None:
        return f"model has no {what} version but runtime requires {wanted}"
    if have is not None and wanted is None:
        return f"model has {what} version but runtime has no version requirement"
    return None


def _format_mismatch(spec: ModelSpec, entry: SupportedModelFormat) -> str:
    """``getFormatMismatchReason``: every way the entry misses the model, joined with ", "."""
    reasons: list[str] = []
    if problem := _diffusion_problem(spec.diffusion_pipeline, entry.diffusion_pipeline):
        reasons.append(problem)
    for what, have, wanted in (
        ("architecture", spec.model_architecture, entry.model_architecture),
        ("quantization", spec.quantization, entry.quantization),
    ):
        if problem := _optional_mismatch(what, have, wanted):
            reasons.append(problem)
    if entry.model_format is not None and (
        problem := _named_version_mismatch("format", spec.model_format, entry.model_format)
    ):
        reasons.append(problem)
    model_fw, runtime_fw = spec.model_framework, entry.model_framework
    if model_fw is not None and runtime_fw is not None:
        if problem := _named_version_mismatch("framework", model_fw, runtime_fw):
            reasons.append(problem)
    elif runtime_fw is not None:
        reasons.append(f"model has no framework but runtime requires {runtime_fw.name}")
    elif model_fw is not None:
        reasons.append(f"model has framework {model_fw.name} but runtime has no framework requirement")
    return ", ".join(reasons) if reasons else "unknown mismatch"


def _label_tail(parts: Iterable[str | None], framework: ModelFormat | None) -> str:
    """``:<part>`` for each part that is set, then ``:<framework>[:<version>]``."""
    tail = "".join(":" + part for part in parts if part is not None)
    if framework is not None:
        tail += ":" + framework.name + ("" if framework.version is None else ":" + framework.version)
    return tail


def model_format_label(spec: ModelSpec) -> str:
    """``getModelFormatLabel``: ``mt:<format>[:version][:architecture][:quantization][:fw[:version]]``."""
    parts = (spec.model_format.version, spec.model_architecture, spec.quantization)
    return "mt:" + spec.model_format.name + _label_tail(parts, spec.model_framework)


def _supported_format_label(entry: SupportedModelFormat) -> str:
    """``getSupportedFormatLabel``: as the model's, ``mt:<unspecified>`` without a modelFormat."""
    fmt = entry.model_format
    head = "mt:<unspecified>" if fmt is None else "mt:" + fmt.name + _label_tail((fmt.version,), None)
    return head + _label_tail((entry.model_architecture, entry.quantization), entry.model_framework)


def _versions_match(model: ModelFormat, runtime: ModelFormat) -> bool:
    if model.version is None or runtime.version is None:
        return model.version is None and runtime.version is None
    return version_matches(runtime.version, model.version, runtime.operator)


def _entry_matches(spec: ModelSpec, entry: SupportedModelFormat) -> bool:
    """``compareSupportedModelFormats``.

    Selection runs this for every model x runtime pair of a catalog and most pairs fail, so it stays
    cheap and builds no message.
    """
    runtime_format = entry.model_format
    if runtime_format is None or runtime_format.name != spec.model_format.name:
        return False
    if spec.model_architecture != entry.model_architecture or spec.quantization != entry.quantization:
        return False
    if not _versions_match(spec.model_format, runtime_format):
        return False
    model_fw, runtime_fw = spec.model_framework, entry.model_framework
    if model_fw is None or runtime_fw is None:
        if model_fw is not runtime_fw:
            return False
    elif runtime_fw.name != model_fw.name or not _versions_match(model_fw, runtime_fw):
        return False
    return _diffusion_problem(spec.diffusion_pipeline, entry.diffusion_pipeline) is None


def _is_compatible(runtime: RuntimeResource, spec: ModelSpec) -> bool:
    for entry in runtime.spec.supported_model_formats:  # a plain loop: any() over a genexpr costs more here
        if _entry_matches(spec, entry):
            return _size_ok(runtime, spec)
    return False


def _formats_problem(runtime: RuntimeResource, spec: ModelSpec) -> str | None:
    """``GetCompatibilityDetails``' format reason: none of the entries matches."""
    mismatches = []
    for entry in runtime.spec.supported_model_formats:
        if _entry_matches(spec, entry):
            return None
        mismatches.append(_format_mismatch(spec, entry))
    label = model_format_label(spec)
    if not mismatches:
        return f"model format '{label}' not in supported formats: no supported formats defined"
    supported = _go_list(_supported_format_label(e) for e in runtime.spec.supported_model_formats)
    return (
        f"model format '{label}' not in supported formats. Runtime supports: {supported}. "
        f"Mismatches: {'; '.join(mismatches)}"
    )


def compatibility_problem(
    runtime: RuntimeResource, model: ModelResource, accelerator_classes: tuple[str, ...] = ()
) -> str | None:
    """Why ``runtime`` does not support ``model``, or None when it does: the first of the
    ``IncompatibilityReasons`` OME's ``GetCompatibilityDetails`` reports, in its words.

    The checks run in Go's order: disabled, accelerator classes (``accelerator_classes`` are the
    ones the replica requires, :func:`required_accelerator_classes`), formats, size. ``autoSelect``
    plays no part (Go reports it as a warning, not a reason).
    """
    if runtime.is_disabled:
        return "runtime is disabled"
    if problem := accelerator_problem(runtime, accelerator_classes):
        return problem
    spec = model.spec
    return _formats_problem(runtime, spec) or _size_problem(runtime, spec)


def compatibility_error(
    runtime: RuntimeResource, model: ModelResource, accelerator_classes: tuple[str, ...] = ()
) -> str | None:
    """``ValidateRuntime``'s ``RuntimeCompatibilityError`` text for a named runtime, or None.

    ``IsCompatible`` answers first: an accelerator mismatch is its own error, which carries no model
    name (Go leaves ``ModelName`` empty there); otherwise the reason is the first of
    ``GetCompatibilityDetails`` and the model is named by its format (``getModelName``).
    """
    spec = model.spec
    if problem := accelerator_problem(runtime, accelerator_classes):
        return f"runtime {runtime.metadata.name} does not support model : {problem}"
    if _is_compatible(runtime, spec):
        return None
    reason = _formats_problem(runtime, spec) or _size_problem(runtime, spec) or "incompatible model format"
    return f"runtime {runtime.metadata.name} does not support model {spec.model_format.name}: {reason}"


# -- score (scorer.go) --------------------------------------------------------------------------


def _versions_agree(model: ModelFormat, runtime: ModelFormat) -> bool:
    # The scorer, unlike the matcher, lets a version set on one side only pass.
    if model.version is None or runtime.version is None:
        return True
    return version_matches(runtime.version, model.version, runtime.operator)


def _entry_score(spec: ModelSpec, entry: SupportedModelFormat, priority: int) -> int:
    """OME's ``CalculateFormatScore`` for one entry."""
    runtime_format = entry.model_format
    format_matches = False
    if runtime_format is not None:
        if runtime_format.name != spec.model_format.name:
            return 0
        if not _versions_agree(spec.model_format, runtime_format):
            return 0
        format_matches = True
    model_fw, runtime_fw = spec.model_framework, entry.model_framework
    framework_matches = False
    if runtime_fw is not None and model_fw is not None:
        if runtime_fw.name != model_fw.name or not _versions_agree(model_fw, runtime_fw):
            return 0
        framework_matches = True
    elif runtime_fw is not None or model_fw is not None:
        return 0  # a framework on one side only never scores
    score = 0
    if format_matches and runtime_format is not None:
        score += (runtime_format.weight or DEFAULT_FORMAT_WEIGHT) * priority
    if framework_matches and runtime_fw is not None:
        score += (runtime_fw.weight or DEFAULT_FRAMEWORK_WEIGHT) * priority
    return score


def runtime_score(runtime: RuntimeResource, model: ModelResource) -> int:
    """OME's ``CalculateScore``: the best entry score over entries not marked ``autoSelect: false``.

    Weights of 0 (or unset) default to 10 for the format and 5 for the framework; priority to 1.
    Architecture, quantization and size do not count here.
    """
    best = 0
    for entry in runtime.spec.supported_model_formats:
        if entry.auto_select is False:
            continue
        priority = DEFAULT_PRIORITY if entry.priority is None else entry.priority
        best = max(best, _entry_score(model.spec, entry, priority))
    return best


def _has_auto_select(runtime: RuntimeResource) -> bool:
    return any(entry.auto_select is True for entry in runtime.spec.supported_model_formats)


# -- selection (selector.go) --------------------------------------------------------------------


class ExclusionCause(StrEnum):
    """Why automatic selection passed over a runtime, in the order the checks run."""

    DISABLED = "Disabled"
    INCOMPATIBLE = "Incompatible"
    NO_AUTO_SELECT = "NoAutoSelect"
    SCORE_ZERO = "ScoreZero"


# Go's words for the two causes its NoRuntimeFoundError lists (GetCompatibilityDetails: "runtime is
# disabled", or the first incompatibility reason); ours for the two it passes over silently.
_CAUSE_TEXT = {
    ExclusionCause.DISABLED: "runtime is disabled",
    ExclusionCause.NO_AUTO_SELECT: "runtime does not have auto-select enabled for any supported format",
    ExclusionCause.SCORE_ZERO: "score 0 (no entry that may auto-select matches the model's format and framework)",
}
# The causes Go's NoRuntimeFoundError names (the runtimes IsCompatible refuses).
_GO_LISTED = frozenset({ExclusionCause.DISABLED, ExclusionCause.INCOMPATIBLE})


@record
class Candidate:
    """A runtime automatic selection may pick, with what ranked it."""

    runtime: RuntimeResource
    score: int
    size_distance: float

    @property
    def is_cluster(self) -> bool:
        return self.runtime.kind == "ClusterServingRuntime"


@record
class Exclusion:
    """A runtime automatic selection passed over. ``reason`` is worded for people."""

    runtime: RuntimeResource
    cause: ExclusionCause
    model: ModelResource = field(repr=False, compare=False)
    accelerator_classes: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def reason(self) -> str:
        """Go's reason (``GetCompatibilityDetails``) for a disabled or incompatible runtime."""
        # Built on demand: a lint run excludes most of the catalog for every model.
        if self.cause is ExclusionCause.INCOMPATIBLE:
            return compatibility_problem(self.runtime, self.model, self.accelerator_classes) or ""
        return _CAUSE_TEXT[self.cause]


@record
class SelectionReport:
    """Every runtime automatic selection considered: the candidates best first, and the rest.

    Exclusions list the namespace's ServingRuntimes, then the ClusterServingRuntimes, each by name.
    ``excluded`` holds them as (runtime, cause) pairs, :attr:`exclusions` as :class:`Exclusion` s, made
    when asked for: a selection that succeeds passes over most of a large catalog, and nobody reads why.
    """

    model: ModelResource
    namespace: str
    component: str
    candidates: tuple[Candidate, ...]
    excluded: tuple[tuple[RuntimeResource, ExclusionCause], ...]
    namespaced_runtimes: int
    cluster_runtimes: int
    accelerator_classes: tuple[str, ...] = ()

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        classes = self.accelerator_classes
        return tuple(Exclusion(runtime, cause, self.model, classes) for runtime, cause in self.excluded)

    @property
    def selected(self) -> RuntimeResource | None:
        return self.candidates[0].runtime if self.candidates else None

    def no_runtime_message(self) -> str:
        """OME's ``NoRuntimeFoundError`` text (``runtimeselector/errors.go``), then our hint.

        Go names the model by its format (``getModelName``) and lists, as ``name (reason)``, the
        runtimes ``IsCompatible`` refuses, keyed by name (a ClusterServingRuntime's entry replaces a
        same-named ServingRuntime's); it walks a map, so its order varies; ours is the namespace's
        runtimes then the cluster's, by name. After Go's text we name the model object and the
        runtimes Go passes over without a word (compatible, but not auto-selectable).
        """
        spec = self.model.spec
        fmt = spec.model_format.name
        message = f"no runtime found to support model {fmt or 'unknown'} with format {fmt} in namespace {self.namespace}"
        total = self.namespaced_runtimes + self.cluster_runtimes
        if total:
            message += (
                f". Checked {total} runtimes ({self.namespaced_runtimes} namespace-scoped, "
                f"{self.cluster_runtimes} cluster-scoped)"
            )
        listed: dict[str, str] = {}
        quiet: list[str] = []
        for exclusion in self.exclusions:
            name = exclusion.runtime.metadata.name
            if exclusion.cause in _GO_LISTED:
                listed.pop(name, None)
                listed[name] = exclusion.reason
            else:
                quiet.append(f"{exclusion.runtime.kind} {name} ({exclusion.reason})")
        if listed:
            message += ". Excluded runtimes: " + "; ".join(f"{n} ({r})" for n, r in listed.items())
        message += f" [model: {self.model.kind} {self.model.metadata.name}"
        if quiet:
            message += "; also passed over: " + "; ".join(quiet)
        return message + "]"


def require_format_name(model: ModelResource) -> None:
    """``validateModel`` (``runtimeselector/selector.go``), which selection and ``ValidateRuntime`` run
    before they look at any runtime: a model without a format name is ``RuntimeSelectionFailed``."""
    if not model.spec.model_format.name:
        raise RenderBlocked(
            BlockReason.RUNTIME_SELECTION_FAILED,
            "invalid model specification: modelFormat.name: model format name is required",
        )


def _evaluate(
    runtime: RuntimeResource, model: ModelResource, accelerator_classes: tuple[str, ...] = ()
) -> tuple[Candidate | None, ExclusionCause | None]:
    spec = model.spec
    # OME's evaluateRuntime order (GetCompatibilityDetails checks the accelerator classes first).
    cause: ExclusionCause | None = None
    score = 0
    if runtime.is_disabled:
        cause = ExclusionCause.DISABLED
    elif accelerator_problem(runtime, accelerator_classes) or not _is_compatible(runtime, spec):
        cause = ExclusionCause.INCOMPATIBLE
    elif not _has_auto_select(runtime):
        cause = ExclusionCause.NO_AUTO_SELECT
    elif (score := runtime_score(runtime, model)) <= 0:
        cause = ExclusionCause.SCORE_ZERO
    if cause is not None:
        return None, cause
    return Candidate(runtime, score, _size_distance(runtime, spec)), None


def _ranked(candidates: Iterable[Candidate]) -> list[Candidate]:
    # size_distance is 0 for a model without a size, so that key only counts when OME uses it.
    return sorted(candidates, key=lambda c: (-c.score, c.size_distance, c.runtime.metadata.name))


def evaluate_runtimes(
    model: ModelResource,
    catalog: Catalog,
    namespace: str,
    component: str,
    accelerator_classes: tuple[str, ...] = (),
) -> SelectionReport:
    """Run automatic selection for a ``component`` replica of ``model`` in ``namespace``.

    ``accelerator_classes`` are the classes the replica requires (:func:`required_accelerator_classes`);
    a runtime that does not list them all is incompatible. Raises RenderBlocked(RuntimeSelectionFailed)
    for a model with no format name, as OME does before looking at any runtime. An empty
    ``candidates`` means no runtime can be selected.
    """
    require_format_name(model)
    # Memoized in the catalog, which never changes: lint selects a model's runtime to plan its render,
    # then the render selects it again, and a fleet selects it in every namespace. Keyed by the model
    # object's id, which cannot be reused while the entry's report holds that model. Selection reads
    # the namespace only for its ServingRuntimes: every namespace without one shares an entry.
    scope = namespace if catalog.runtimes_in(namespace) else ""
    report = catalog.memoized(
        ("selection", id(model), scope, component, accelerator_classes),
        lambda: _evaluate_all(model, catalog, namespace, component, accelerator_classes),
    )
    if report.model is not model:  # pragma: no cover - the report keeps the model alive
        return _evaluate_all(model, catalog, namespace, component, accelerator_classes)
    return report if report.namespace == namespace else dataclasses.replace(report, namespace=namespace)


# (runtime, disabled, the (format name, architecture, quantization) of each of its entries with a format)
_Indexed = tuple[tuple[RuntimeResource, bool, frozenset[tuple[str, str | None, str | None]]], ...]


def _indexed(group: tuple[RuntimeResource, ...]) -> _Indexed:
    return tuple(
        (
            runtime,
            runtime.is_disabled,
            frozenset(
                (entry.model_format.name, entry.model_architecture, entry.quantization)
                for entry in runtime.spec.supported_model_formats
                if entry.model_format is not None
            ),
        )
        for runtime in group
    )


# Per group, the runtimes a model's (format, architecture, quantization) triple leaves to check in
# full, between runs of the ones it excludes outright: (runtime, cause) pairs.
_Triage = tuple[tuple[tuple[tuple[RuntimeResource, ExclusionCause], ...] | RuntimeResource, ...], ...]


def _triage(indexed: tuple[_Indexed, ...], triple: tuple[str, str | None, str | None]) -> _Triage:
    groups = []
    for group in indexed:
        parts: list[tuple[tuple[RuntimeResource, ExclusionCause], ...] | RuntimeResource] = []
        run: list[tuple[RuntimeResource, ExclusionCause]] = []
        for runtime, disabled, triples in group:
            if disabled:  # OME's evaluateRuntime order: disabled, then compatible
                run.append((runtime, ExclusionCause.DISABLED))
            elif triple not in triples:
                run.append((runtime, ExclusionCause.INCOMPATIBLE))
            else:
                parts += (tuple(run), runtime)
                run = []
        parts.append(tuple(run))
        groups.append(tuple(parts))
    return tuple(groups)


def _evaluate_all(
    model: ModelResource,
    catalog: Catalog,
    namespace: str,
    component: str,
    accelerator_classes: tuple[str, ...] = (),
) -> SelectionReport:
    groups = (catalog.runtimes_in(namespace), catalog.cluster_runtimes())
    # An entry matches only with the model's format name, architecture and quantization (the first
    # checks of _entry_matches), so a runtime without that triple is incompatible, known without
    # running the checks: most pairs of a large catalog. Each runtime's triples are indexed once per
    # catalog and namespace, and what a triple leaves to check once per triple (models of one family
    # share theirs).
    spec = model.spec
    triple = (spec.model_format.name, spec.model_architecture, spec.quantization)

    def triage() -> _Triage:
        indexed = catalog.memoized(("selection-index", namespace), lambda: tuple(map(_indexed, groups)))
        return _triage(indexed, triple)

    triaged = catalog.memoized(("selection-triage", namespace, triple), triage)
    candidates: list[Candidate] = []
    excluded: list[tuple[RuntimeResource, ExclusionCause]] = []
    for group in triaged:
        found: list[Candidate] = []
        for part in group:
            if isinstance(part, tuple):
                excluded += part
                continue
            candidate, cause = _evaluate(part, model, accelerator_classes)
            if candidate is not None:
                found.append(candidate)
            if cause is not None:
                excluded.append((part, cause))
        # Namespace scope wins whatever the score: each group is ranked on its own, then joined.
        candidates.extend(_ranked(found))
    return SelectionReport(
        model=model,
        namespace=namespace,
        component=component,
        candidates=tuple(candidates),
        excluded=tuple(excluded),
        namespaced_runtimes=len(groups[0]),
        cluster_runtimes=len(groups[1]),
        accelerator_classes=accelerator_classes,
    )


def select_runtime(model: ModelResource, catalog: Catalog, namespace: str, component: str) -> RuntimeResource:
    """The runtime OME would pick for a ``component`` replica of ``model`` in ``namespace``.

    Raises RenderBlocked(RuntimeSelectionFailed) for a model with no format name, or when no runtime
    qualifies; the message then lists every runtime considered and why it was passed over.
    """
    report = evaluate_runtimes(model, catalog, namespace, component)
    if report.selected is None:
        raise RenderBlocked(BlockReason.RUNTIME_SELECTION_FAILED, report.no_runtime_message())
    return report.selected


def piece_advisory(report: SelectionReport) -> str | None:
    """When the selected runtime lacks the replica's piece: the best-ranked candidate that has it.

    OME's ``renderFromRefs`` blocks with ``RuntimePieceMissing`` and says no more; this hint is ours.
    """
    winner = report.selected
    if winner is None or winner.piece(report.component) is not None:
        return None
    for candidate in report.candidates[1:]:
        runtime = candidate.runtime
        if runtime.piece(report.component) is not None:
            return (
                f"{runtime.kind} {runtime.metadata.name} ranks lower and has a {report.component} piece; "
                "name it in spec.runtimeRef to render from it"
            )
    return None


def named_runtime_advisory(
    runtime_spec_owner: RuntimeResource, model: ModelResource, accelerator_classes: tuple[str, ...] = ()
) -> str | None:
    """The ``RuntimeCompatibilityAdvisory`` text for a runtime the replica names, or None.

    ``runtime_spec_owner`` carries the effective spec (inheritance resolved by the caller). OME's
    ``render.Resolve`` runs ``ValidateRuntime`` (the matcher, ignoring ``autoSelect``) and lets the
    render go on past a ``RuntimeCompatibilityError`` (DECISIONS §3.4), except for a Sharded model,
    which keeps the check: then, and for a model with no format name, this raises
    RenderBlocked(RuntimeSelectionFailed) with Go's error text (``classifyResolveError``).
    The advisory is ``renderFromRefs``' event text around that error.
    """
    require_format_name(model)
    error = compatibility_error(runtime_spec_owner, model, accelerator_classes)
    if error is None:
        return None
    if model.spec.distribution == "Sharded":  # isvcutils.IsShardedBaseModel
        raise RenderBlocked(BlockReason.RUNTIME_SELECTION_FAILED, error)
    name = runtime_spec_owner.metadata.name
    return (
        f"Runtime {name} does not declare support for model {model.metadata.name} ({error}); "
        "proceeding because the runtime was named explicitly"
    )
