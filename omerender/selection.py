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
- the no-runtime message lists every runtime considered, in a fixed order, not only incompatible ones.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from omerender.catalog import Catalog
from omerender.errors import BlockReason, RenderBlocked
from omerender.models import ModelFormat, ModelResource, ModelSpec, RuntimeResource, SupportedModelFormat
from omerender.versions import version_matches

__all__ = [
    "Candidate",
    "Exclusion",
    "ExclusionCause",
    "SelectionReport",
    "compatibility_problem",
    "evaluate_runtimes",
    "named_runtime_advisory",
    "parse_model_size",
    "piece_advisory",
    "require_format_name",
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


def _size_range_label(low: str | None, high: str | None) -> str:
    return f"{'(-inf' if low is None else '[' + low}, {'inf)' if high is None else high + ']'}"


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
    size_range = runtime.spec.model_size_range
    if size_range is None or _size_ok(runtime, spec):
        return None
    label = _size_range_label(size_range.min, size_range.max)
    return f"model size {spec.model_parameter_size} is outside the runtime's supported range {label}"


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

_DIFFUSION_COMPONENTS = ("scheduler", "textEncoder", "tokenizer", "transformer", "vae")


def _q(text: str) -> str:
    """Double-quoted like Go's %q, so odd names stay readable in one-line messages."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'  # the common case, without json's overhead
    return json.dumps(text, ensure_ascii=False)


def _component_problem(name: str, model: Any, runtime: Any) -> str | None:
    if not isinstance(runtime, Mapping):
        return None
    if not isinstance(model, Mapping):
        return f"diffusion component {name} required by runtime but not specified in model"
    for attribute in ("library", "type"):
        wanted = runtime.get(attribute) or ""
        have = model.get(attribute) or ""
        if wanted and wanted != have:
            return f"diffusion {name} {attribute} mismatch (model={have}, runtime={wanted})"
    return None


def _diffusion_problem(model: dict[str, Any] | None, runtime: dict[str, Any] | None) -> str | None:
    if runtime is None:
        return None
    if model is None:
        return "diffusion pipeline required by runtime but not specified in model"
    wanted_class = runtime.get("className")
    if wanted_class is not None and model.get("className") != wanted_class:
        have = model.get("className")
        have_text = "<none>" if have is None else have
        return f"diffusion pipeline class mismatch (model={have_text}, runtime={wanted_class})"
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


def _optional_problem(what: str, model: str | None, runtime: str | None) -> str | None:
    """Architecture and quantization: both unset, or both set and equal."""
    if model == runtime:
        return None
    if model is None:
        assert runtime is not None
        return f"runtime requires {what} {_q(runtime)} but the model declares none"
    if runtime is None:
        return f"model declares {what} {_q(model)} but the runtime format declares none"
    return f"model {what} {_q(model)} does not match runtime {what} {_q(runtime)}"


def _version_problem(what: str, model: ModelFormat, runtime: ModelFormat) -> str | None:
    have, wanted = model.version, runtime.version
    if have is None and wanted is None:
        return None
    if have is None:
        return f"runtime requires {what} version {_q(wanted or '')} but the model declares none"
    if wanted is None:
        return f"model declares {what} version {_q(have)} but the runtime declares none"
    if version_matches(wanted, have, runtime.operator):
        return None
    operator = runtime.operator or "Equal"
    return (
        f"model {what} version {_q(have)} does not satisfy runtime {what} version "
        f"{_q(wanted)} (operator {operator})"
    )


def _format_problem(spec: ModelSpec, entry: SupportedModelFormat) -> str | None:
    """The first of OME's checks 1-5 this ``supportedModelFormats`` entry fails, or None."""
    if problem := _diffusion_problem(spec.diffusion_pipeline, entry.diffusion_pipeline):
        return problem
    if problem := _optional_problem("architecture", spec.model_architecture, entry.model_architecture):
        return problem
    if problem := _optional_problem("quantization", spec.quantization, entry.quantization):
        return problem
    runtime_format = entry.model_format
    if runtime_format is None:
        return "runtime format declares no modelFormat"
    if runtime_format.name != spec.model_format.name:
        wanted, have = _q(runtime_format.name), _q(spec.model_format.name)
        return f"model format {have} does not match runtime format {wanted}"
    if problem := _version_problem("format", spec.model_format, runtime_format):
        return problem
    model_fw, runtime_fw = spec.model_framework, entry.model_framework
    if model_fw is None and runtime_fw is None:
        return None
    if model_fw is None:
        assert runtime_fw is not None
        return f"runtime requires framework {_q(runtime_fw.name)} but the model declares none"
    if runtime_fw is None:
        return f"model declares framework {_q(model_fw.name)} but the runtime format declares none"
    if runtime_fw.name != model_fw.name:
        return f"model framework {_q(model_fw.name)} does not match runtime framework {_q(runtime_fw.name)}"
    return _version_problem("framework", model_fw, runtime_fw)


def _versions_match(model: ModelFormat, runtime: ModelFormat) -> bool:
    if model.version is None or runtime.version is None:
        return model.version is None and runtime.version is None
    return version_matches(runtime.version, model.version, runtime.operator)


def _entry_matches(spec: ModelSpec, entry: SupportedModelFormat) -> bool:
    """``_format_problem(...) is None``, without building messages.

    Selection runs this for every model x runtime pair of a catalog and most pairs fail, so it stays
    cheap; a property test keeps it in step with ``_format_problem``.
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


def compatibility_problem(runtime: RuntimeResource, model: ModelResource) -> str | None:
    """Why ``runtime`` does not support ``model`` (OME's matcher), or None when it does.

    Reads the runtime's spec as given; ``disabled`` and ``autoSelect`` play no part. The reason is
    the first failing check: per entry when no entry matches, else the size range.
    """
    spec = model.spec
    entries = runtime.spec.supported_model_formats
    if not entries:
        return "runtime declares no supportedModelFormats"
    problems = [_format_problem(spec, entry) for entry in entries]
    if all(problems):
        if len(problems) == 1:
            return problems[0]
        listed = "; ".join(f"supportedModelFormats[{i}]: {problem}" for i, problem in enumerate(problems))
        return f"none of the runtime's {len(problems)} supported formats matches: {listed}"
    return _size_problem(runtime, spec)


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


_CAUSE_TEXT = {
    ExclusionCause.DISABLED: "disabled",
    ExclusionCause.NO_AUTO_SELECT: "no auto-select format (no supportedModelFormats entry sets autoSelect: true)",
    ExclusionCause.SCORE_ZERO: "score 0 (no entry that may auto-select matches the model's format and framework)",
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A runtime automatic selection may pick, with what ranked it."""

    runtime: RuntimeResource
    score: int
    size_distance: float

    @property
    def is_cluster(self) -> bool:
        return self.runtime.kind == "ClusterServingRuntime"


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A runtime automatic selection passed over. ``reason`` is worded for people."""

    runtime: RuntimeResource
    cause: ExclusionCause
    model: ModelResource = field(repr=False, compare=False)

    @property
    def reason(self) -> str:
        # Built on demand: a lint run excludes most of the catalog for every model.
        if self.cause is ExclusionCause.INCOMPATIBLE:
            return f"incompatible: {compatibility_problem(self.runtime, self.model)}"
        return _CAUSE_TEXT[self.cause]


@dataclass(frozen=True, slots=True)
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

    @property
    def exclusions(self) -> tuple[Exclusion, ...]:
        return tuple(Exclusion(runtime, cause, self.model) for runtime, cause in self.excluded)

    @property
    def selected(self) -> RuntimeResource | None:
        return self.candidates[0].runtime if self.candidates else None

    def no_runtime_message(self) -> str:
        """OME's ``NoRuntimeFoundError`` text, listing every runtime considered and why it lost."""
        message = (
            f"no runtime found to support model {self.model.metadata.name} with format "
            f"{self.model.spec.model_format.name} in namespace {self.namespace}"
        )
        total = self.namespaced_runtimes + self.cluster_runtimes
        if total:
            message += (
                f". Checked {total} runtimes ({self.namespaced_runtimes} namespace-scoped, "
                f"{self.cluster_runtimes} cluster-scoped)"
            )
        if self.exclusions:
            listed = "; ".join(
                f"{ex.runtime.kind} {ex.runtime.metadata.name} ({ex.reason})" for ex in self.exclusions
            )
            message += f". Excluded runtimes: {listed}"
        return message


def require_format_name(model: ModelResource) -> None:
    """``validateModel`` (``runtimeselector/selector.go``), which selection and ``ValidateRuntime`` run
    before they look at any runtime: a model without a format name is ``RuntimeSelectionFailed``."""
    if not model.spec.model_format.name:
        raise RenderBlocked(
            BlockReason.RUNTIME_SELECTION_FAILED,
            "invalid model specification: modelFormat.name: model format name is required",
        )


def _evaluate(
    runtime: RuntimeResource, model: ModelResource
) -> tuple[Candidate | None, ExclusionCause | None]:
    spec = model.spec
    # OME's evaluateRuntime order.
    cause: ExclusionCause | None = None
    score = 0
    if runtime.is_disabled:
        cause = ExclusionCause.DISABLED
    elif not _is_compatible(runtime, spec):
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
    model: ModelResource, catalog: Catalog, namespace: str, component: str
) -> SelectionReport:
    """Run automatic selection for a ``component`` replica of ``model`` in ``namespace``.

    Raises RenderBlocked(RuntimeSelectionFailed) for a model with no format name, as OME does
    before looking at any runtime. An empty ``candidates`` means no runtime can be selected.
    """
    require_format_name(model)
    # Memoized in the catalog, which never changes: lint selects a model's runtime to plan its render,
    # then the render selects it again, and a fleet selects it in every namespace. Keyed by the model
    # object's id, which cannot be reused while the entry's report holds that model. Selection reads
    # the namespace only for its ServingRuntimes: every namespace without one shares an entry.
    scope = namespace if catalog.runtimes_in(namespace) else ""
    report = catalog.memoized(
        ("selection", id(model), scope, component),
        lambda: _evaluate_all(model, catalog, namespace, component),
    )
    if report.model is not model:  # pragma: no cover - the report keeps the model alive
        return _evaluate_all(model, catalog, namespace, component)
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


def _evaluate_all(model: ModelResource, catalog: Catalog, namespace: str, component: str) -> SelectionReport:
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
            candidate, cause = _evaluate(part, model)
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


def named_runtime_advisory(runtime_spec_owner: RuntimeResource, model: ModelResource) -> str | None:
    """The ``RuntimeCompatibilityAdvisory`` text for a runtime the replica names, or None.

    ``runtime_spec_owner`` carries the effective spec (inheritance resolved by the caller). The
    matcher runs ignoring ``autoSelect``; a failure does not block the render (DECISIONS §3.4), but a
    model with no format name cannot be served at all and raises RenderBlocked(RuntimeSelectionFailed).
    """
    require_format_name(model)
    problem = compatibility_problem(runtime_spec_owner, model)
    if problem is None:
        return None
    name = runtime_spec_owner.metadata.name
    # renderFromRefs' event text around RuntimeCompatibilityError's (which names the model's format).
    compatibility = f"runtime {name} does not support model {model.spec.model_format.name}: {problem}"
    return (
        f"Runtime {name} does not declare support for model {model.metadata.name} ({compatibility}); "
        "proceeding because the runtime was named explicitly"
    )
