"""Whole-catalog lint: render every model with the runtime it would select, and every runtime alone.

Pure: the caller passes the objects and, optionally, a schema check for rendered templates (the CLI
passes the Kubernetes 1.36 schemas). Lint agrees with render: a model that is not Ready would block
every replica of it (``ModelNotFound``), so it is counted in one note and not rendered, unless the
caller assumes every model Ready (:mod:`omerender.readiness`, the CLI's ``--assume-models-ready``).
A model assumed Ready without a format name is "unknown until downloaded" (OME reads the format from
the weights): one note, not an error per model.

Each :class:`Finding` has a ``code`` that groups it with findings of the same problem:

=========================  ========  ================================================================
code                       severity  meaning
=========================  ========  ================================================================
``InvalidObject``          error     OME could not read the object (or a second one of that name)
``NoRuntimeFound``         error     automatic selection finds no runtime for the model; the finding
                                     names how many runtimes were checked and the closest few, each
                                     with the first reason it was passed over
``ModelFormatRequired``    error     a Ready model without a format name: selection refuses it
``KubernetesSchema``       error     a rendered template the API server would refuse
a block reason             error     the render blocks (``ParentNotFound``, ``RuntimePieceMissing``…)
``NameTieBreak``           warning   the selected runtime won on its name alone: the next candidate
                                     has the same scope, score and size distance
``RuntimeForAnotherSize``  warning   the selected runtime declares a ``modelSizeRange`` the model's
                                     size was never checked against (the model declares none, or one
                                     OME reads as 0)
``LwsVariableUnset``       warning   a multi-pod runtime reads ``LWS_*`` variables OMENative pods do not
                                     carry; names the ``OME_*`` one to use (:mod:`omerender.lint_lws`)
=========================  ========  ================================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal

from omerender._records import record
from omerender.catalog import Catalog
from omerender.errors import InvalidObjectError, OmeRenderError, RenderBlocked
from omerender.inheritance import InheritanceError, Resolver, catalog_resolver
from omerender.lint_lws import LWS_VARIABLE, lws_problems
from omerender.models import (
    InferenceReplica,
    InferenceReplicaSpec,
    ModelRef,
    ModelResource,
    ObjectMeta,
    RuntimeResource,
    ServingRuntimeRef,
)
from omerender.preview import revision_of
from omerender.readiness import assume_models_ready, is_model_ready
from omerender.render import render
from omerender.selection import (
    Exclusion,
    ExclusionCause,
    SelectionReport,
    evaluate_runtimes,
    parse_model_size,
)

__all__ = [
    "CODES",
    "Closest",
    "Finding",
    "LintReport",
    "closest_runtimes",
    "lint",
    "lint_objects",
    "no_runtime_finding",
]

COMPONENTS = ("engine", "decoder", "router")
Validator = Callable[[Mapping[str, Any]], Sequence[str]]
Progress = Callable[[int, int], None]
Severity = Literal["error", "warning"]

INVALID = "InvalidObject"
NO_RUNTIME = "NoRuntimeFound"
FORMAT_REQUIRED = "ModelFormatRequired"
SCHEMA = "KubernetesSchema"
NAME_TIE_BREAK = "NameTieBreak"
OTHER_SIZE = "RuntimeForAnotherSize"

# What each group is about, for the headings of the human output; a block reason titles itself.
CODES: Final[Mapping[str, str]] = {
    INVALID: "objects OME cannot read",
    NO_RUNTIME: "models no runtime can be selected for",
    FORMAT_REQUIRED: "Ready models without a format name",
    SCHEMA: "rendered templates the API server would refuse",
    NAME_TIE_BREAK: "selections decided by the runtime's name alone",
    OTHER_SIZE: "selected runtimes built for another model size",
    LWS_VARIABLE: "multi-pod runtimes reading LeaderWorkerSet variables OME does not set",
}
# How many of the runtimes passed over a no-runtime finding names.
CLOSEST = 3


@record
class Closest:
    """A runtime automatic selection passed over, and the first reason it did."""

    kind: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name} ({self.reason})"


@record
class Finding:
    """One problem and the object that causes it (``ClusterServingRuntime srt-x``)."""

    subject: str
    component: str
    problem: str
    code: str = ""
    severity: Severity = "error"
    kind: str = ""
    namespace: str | None = None
    name: str = ""
    # NoRuntimeFound: how many runtimes selection checked, and the closest few.
    checked: int = 0
    closest: tuple[Closest, ...] = ()

    def __str__(self) -> str:
        return f"{self.subject} [{self.component}]: {self.problem}"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "component": self.component,
            "problem": self.problem,
        }
        if self.code == NO_RUNTIME:
            out["checked"] = self.checked
            out["closest"] = [{"kind": c.kind, "name": c.name, "reason": c.reason} for c in self.closest]
        return out


@record
class LintReport:
    renders: int
    findings: tuple[Finding, ...]
    # One line each: what lint counted instead of reporting model by model.
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "warning")


def _subject(obj: ModelResource | RuntimeResource) -> str:
    ns = (
        f"{obj.metadata.namespace}/"
        if obj.metadata.namespace and obj.kind in ("BaseModel", "ServingRuntime")
        else ""
    )
    return f"{obj.kind} {ns}{obj.metadata.name}"


def _finding(
    obj: ModelResource | RuntimeResource,
    component: str,
    problem: str,
    code: str,
    severity: Severity = "error",
    **extra: Any,
) -> Finding:
    namespace = obj.metadata.namespace if obj.kind in ("BaseModel", "ServingRuntime") else None
    return Finding(
        _subject(obj),
        component,
        problem,
        code=code,
        severity=severity,
        kind=obj.kind,
        namespace=namespace or None,
        name=obj.metadata.name,
        **extra,
    )


def _replica(
    namespace: str, component: str, model: ModelRef | None, runtime: ServingRuntimeRef | None
) -> InferenceReplica:
    spec = InferenceReplicaSpec(component=component, model_ref=model, runtime_ref=runtime)
    return InferenceReplica(metadata=ObjectMeta(name="lint", namespace=namespace, uid="lint"), spec=spec)


# -- the runtimes selection passed over ---------------------------------------------------------------

# Later in OME's evaluateRuntime order is closer to being selected.
_STAGE: Final = {
    ExclusionCause.INCOMPATIBLE: 0,
    ExclusionCause.DISABLED: 1,
    ExclusionCause.NO_AUTO_SELECT: 2,
    ExclusionCause.SCORE_ZERO: 3,
}


def _size_fits(runtime: RuntimeResource, model: ModelResource) -> bool:
    size_range, text = runtime.spec.model_size_range, model.spec.model_parameter_size
    if size_range is None or text is None:
        return True
    size = parse_model_size(text)
    low, high = size_range.min, size_range.max
    return not (
        (low is not None and size < parse_model_size(low))
        or (high is not None and size > parse_model_size(high))
    )


def _likeness(runtime: RuntimeResource, model: ModelResource) -> tuple[int, int, int, int]:
    """What of the model the runtime's best entry shares, in the selector's own order of importance:
    (architecture, format, framework, size fits). Compared as a tuple, so a runtime of another
    architecture never ranks ahead of one that matches, and size only separates runtimes alike in
    format and architecture (selector.go checks format and architecture before it reads the size). A
    display order for the runtimes passed over, which decides nothing."""
    spec = model.spec
    best = (0, 0, 0)
    for entry in runtime.spec.supported_model_formats:
        ours, theirs = entry.model_framework, spec.model_framework
        shared = (
            int(entry.model_architecture == spec.model_architecture),
            int(entry.model_format is not None and entry.model_format.name == spec.model_format.name),
            int(
                (ours is None and theirs is None)
                or (ours is not None and theirs is not None and ours.name == theirs.name)
            ),
        )
        best = max(best, shared)
    return (*best, int(_size_fits(runtime, model))) if any(best) else (0, 0, 0, 0)


def closest_runtimes(exclusions: Sequence[Exclusion], model: ModelResource) -> tuple[Closest, ...]:
    """The :data:`CLOSEST` runtimes selection passed over that come nearest to serving ``model``:
    matching architecture first, then format, framework, size fit, then how far the selector's
    checks got (``evaluateRuntime``'s order), then name."""
    ranked = sorted(
        exclusions,
        key=lambda ex: (
            tuple(-x for x in _likeness(ex.runtime, model)),
            -_STAGE[ex.cause],
            ex.runtime.metadata.name,
        ),
    )
    return tuple(Closest(ex.runtime.kind, ex.runtime.metadata.name, ex.reason) for ex in ranked[:CLOSEST])


def no_runtime_finding(model: ModelResource, report: SelectionReport) -> Finding:
    """The finding for a model no runtime can be selected for: Go's no-runtime words, how many runtimes
    were checked and the closest few (``omerender diff`` words its blocked replicas the same way)."""
    checked = report.namespaced_runtimes + report.cluster_runtimes
    closest = closest_runtimes(report.exclusions, model)
    # NoRuntimeFoundError's opening in Go's words (the model named by its format, as getModelName
    # does); the finding's own subject names the model object.
    fmt = model.spec.model_format.name
    text = (
        f"RuntimeSelectionFailed: no runtime found to support model {fmt} with format {fmt} in namespace "
        f"{report.namespace}: none of the {checked} runtimes checked qualifies ({report.namespaced_runtimes} "
        f"namespace-scoped, {report.cluster_runtimes} cluster-scoped)"
    )
    if closest:
        more = len(report.exclusions) - len(closest)
        text += "; closest: " + "; ".join(map(str, closest)) + (f"; and {more} more" if more else "")
    return _finding(model, "engine", text, NO_RUNTIME, checked=checked, closest=closest)


# -- warnings about a selection that succeeded -------------------------------------------------------------


def _selection_warnings(model: ModelResource, report: SelectionReport) -> Iterator[Finding]:
    winner, *rest = report.candidates
    runtime = winner.runtime
    named = f"{runtime.kind} {runtime.metadata.name}"
    if rest and rest[0].is_cluster == winner.is_cluster:
        second = rest[0]
        if second.score == winner.score and second.size_distance == winner.size_distance:
            alike = (
                "the model declares no size"
                if model.spec.model_parameter_size is None
                else "are as far from the model's size"
            )
            yield _finding(
                model,
                "engine",
                f"selects {named} over {second.runtime.kind} {second.runtime.metadata.name} on the name "
                f"alone: both score {winner.score} and {alike}; set priority on one, or name the runtime "
                "in spec.runtimeRef",
                NAME_TIE_BREAK,
                "warning",
            )
    size_range, text = runtime.spec.model_size_range, model.spec.model_parameter_size
    if size_range is None or (size_range.min is None and size_range.max is None):
        return
    size = parse_model_size(text) if text is not None else 0.0
    if text is not None and size > 0 and not math.isnan(size):
        return
    bounds = f"[{size_range.min or '-inf'}, {size_range.max or 'inf'}]"
    why = (
        "the model declares no modelParameterSize"
        if text is None
        else f'the model\'s modelParameterSize "{text}" reads as {"NaN" if math.isnan(size) else 0}'
    )
    yield _finding(
        model,
        "engine",
        f"selects {named}, built for models of {bounds}, but {why}, so the size range was never checked; "
        "set modelParameterSize",
        OTHER_SIZE,
        "warning",
    )


# -- planning the renders ------------------------------------------------------------------------------------


def _model_jobs(
    model: ModelResource, catalog: Catalog, resolver: Resolver
) -> Iterator[tuple[str, InferenceReplica | Finding]]:
    namespace = model.metadata.namespace or "default"
    ref = ModelRef(name=model.metadata.name, kind=model.kind)
    if not model.spec.model_format.name:
        yield (
            "engine",
            _finding(
                model,
                "engine",
                "RuntimeSelectionFailed: invalid model specification: modelFormat.name: model format name "
                "is required (the model is Ready, so OME will not fill it in)",
                FORMAT_REQUIRED,
            ),
        )
        return
    report = evaluate_runtimes(model, catalog, namespace, "engine")
    runtime = report.selected
    if runtime is None:
        yield "engine", no_runtime_finding(model, report)
        return
    for warning in _selection_warnings(model, report):
        yield "engine", warning
    yield "engine", _replica(namespace, "engine", ref, None)
    try:
        effective = resolver.resolve(runtime).runtime
    except InheritanceError:
        return  # reported once, under the runtime itself
    for component in COMPONENTS[1:]:
        if effective.piece(component) is not None:
            named = ServingRuntimeRef(name=runtime.metadata.name, kind=runtime.kind)
            yield component, _replica(namespace, component, ref, named)


def _jobs(
    catalog: Catalog, resolver: Resolver, skip: frozenset[Any], part: int = 0, parts: int = 1
) -> Iterator[tuple[int, ModelResource | RuntimeResource, str, InferenceReplica | Finding]]:
    """(subject's position, subject, component, replica to render or a finding found while planning
    the render), for the subjects of ``part`` (every ``parts``-th, from ``part``; all by default)."""
    subjects: list[tuple[Any, ModelResource | RuntimeResource]] = [
        *catalog.models.items(),
        *catalog.runtimes.items(),
    ]
    for position in range(part, len(subjects), parts):
        key, subject = subjects[position]
        if isinstance(subject, ModelResource):
            if subject.is_disabled or key in skip:
                continue
            for component, job in _model_jobs(subject, catalog, resolver):
                yield position, subject, component, job
            continue
        if subject.is_disabled:
            continue  # profiles and retired runtimes: their children exercise them
        try:
            effective = resolver.resolve(subject).runtime
        except InheritanceError as exc:
            finding = _finding(subject, "-", f"{exc.reason}: {exc.message}", str(exc.reason))
            yield position, subject, "-", finding
            continue
        namespace = subject.metadata.namespace or "default"
        named = ServingRuntimeRef(name=subject.metadata.name, kind=subject.kind)
        for component in COMPONENTS:
            if effective.piece(component) is not None:
                yield position, subject, component, _replica(namespace, component, None, named)


def _listed(names: Sequence[str], shown: int = 3) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _plan(catalog: Catalog, assume_ready: bool) -> tuple[Catalog, frozenset[Any], list[str]]:
    """The catalog to lint, the models not to render, and the notes saying why."""
    if assume_ready:
        assumed = assume_models_ready(catalog)
        format_note = assumed.format_note()
        notes = [assumed.note(), *([format_note] if format_note else [])]
        return assumed.catalog, frozenset(assumed.format_unknown), notes
    waiting = sorted(k for k, m in catalog.models.items() if not m.is_disabled and not is_model_ready(m))
    if not waiting:
        return catalog, frozenset(), []
    names = [key[2] for key in waiting]
    note = (
        f"{len(names)} model{'s' if len(names) != 1 else ''} not Ready, not linted: every replica of one "
        f"blocks ModelNotFound until it is ({_listed(names)}); --assume-models-ready lints them as Ready"
    )
    return catalog, frozenset(waiting), [note]


# Runs ``work(part, parts)`` for every part and returns the results in part order, such as
# ``omerender.cli.shards.in_parts`` (which forks); lint itself stays pure and runs them here without one.
PartRunner = Callable[[Callable[[int, int], "_Part"], int], Sequence["_Part"]]


@record
class _Part:
    """One part's renders and findings, each finding with its subject's position in the catalog."""

    renders: int
    findings: tuple[tuple[int, Finding], ...]


def _lint_part(
    catalog: Catalog,
    skip: frozenset[Any],
    validate: Validator | None,
    progress: Progress | None,
    part: int,
    parts: int,
) -> _Part:
    resolver = catalog_resolver(catalog)
    jobs = list(_jobs(catalog, resolver, skip, part, parts))
    findings: list[tuple[int, Finding]] = []
    renders = 0
    for done, (position, subject, component, job) in enumerate(jobs, start=1):
        if progress is not None:
            progress(done * parts, len(jobs) * parts)
        if isinstance(job, Finding):
            findings.append((position, job))
            continue
        renders += 1
        try:
            result = render(job, catalog, resolver=resolver)
            revision_of(result)  # what preview refuses too: a template Go's decoder would not read
        except RenderBlocked as blocked:
            problem = f"{blocked.reason.value}: {blocked.message}"
            findings.append((position, _finding(subject, component, problem, blocked.reason.value)))
            continue
        except OmeRenderError as exc:
            findings.append((position, _finding(subject, component, str(exc), type(exc).__name__)))
            continue
        if isinstance(subject, RuntimeResource):  # once per runtime, not per model that selects it
            for problem in lws_problems(result.runners):
                findings.append((position, _finding(subject, component, problem, LWS_VARIABLE, "warning")))
        if validate is None:
            continue
        for runner in result.runners:
            template = {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": f"{job.spec.component}-{runner.name}"},
                "template": runner.template,
            }
            findings.extend((position, _finding(subject, component, p, SCHEMA)) for p in validate(template))
    return _Part(renders, tuple(findings))


def lint(
    catalog: Catalog,
    *,
    validate: Validator | None = None,
    progress: Progress | None = None,
    assume_ready: bool = False,
    parts: int = 1,
    run_parts: PartRunner | None = None,
) -> LintReport:
    """Every problem a render of this catalog would meet, with the object that causes it.

    ``assume_ready`` lints every model as if Ready (:func:`omerender.readiness.assume_models_ready`);
    without it, the models that are not Ready are counted in a note and not rendered.

    ``parts`` > 1 with ``run_parts`` splits the work by subject (every ``parts``-th model or runtime)
    and hands the parts to ``run_parts`` (the CLI runs them in parallel processes); the report is the
    same as one part's, in the same order. ``progress`` is called from part 0 only, with its counts
    times ``parts``.
    """
    catalog, skip, notes = _plan(catalog, assume_ready)

    def work(part: int, count: int) -> _Part:
        return _lint_part(catalog, skip, validate, progress if part == 0 else None, part, count)

    done = run_parts(work, parts) if run_parts is not None and parts > 1 else [work(0, 1)]
    # Each subject is in one part, its findings in their order there: a stable sort restores the
    # order of a single part.
    ordered = sorted((item for p in done for item in p.findings), key=lambda item: item[0])
    return LintReport(
        renders=sum(p.renders for p in done),
        findings=tuple(finding for _, finding in ordered),
        notes=tuple(notes),
    )


def _invalid(exc: InvalidObjectError) -> Finding:
    where = f"{exc.namespace}/{exc.name}" if exc.namespace else exc.name or "<unnamed>"
    subject = f"{exc.kind} {where}"
    problem = "invalid: " + "; ".join(str(p) for p in exc.problems)
    return Finding(
        subject,
        "-",
        problem,
        code=INVALID,
        kind=exc.kind,
        namespace=exc.namespace or None,
        name=exc.name or "",
    )


def lint_objects(
    objects: Sequence[Mapping[str, Any]],
    *,
    validate: Validator | None = None,
    progress: Progress | None = None,
    assume_ready: bool = False,
    parts: int = 1,
    run_parts: PartRunner | None = None,
    strict: bool = True,
) -> LintReport:
    """:func:`lint` of the catalog these objects make; an object the catalog refuses (one OME could not
    read, one ``kubectl apply`` would refuse or of an ``ome.io`` kind OME does not define, or a second
    object of the same kind and name) is a finding, and the rest are linted. ``strict=False`` skips the
    CRD checks (objects :func:`omerender.load` has checked), as :meth:`Catalog.from_objects` does."""
    findings: list[Finding] = []
    try:
        # The usual catalog reads whole; only one that does not is read object by object to say which.
        catalog = Catalog.from_objects(objects, strict=strict)
    except InvalidObjectError:
        catalog = Catalog.from_objects(_readable(objects, findings, strict), strict=strict)
    report = lint(
        catalog,
        validate=validate,
        progress=progress,
        assume_ready=assume_ready,
        parts=parts,
        run_parts=run_parts,
    )
    if not findings:
        return report
    return LintReport(renders=report.renders, findings=(*findings, *report.findings), notes=report.notes)


def _readable(
    objects: Sequence[Mapping[str, Any]], findings: list[Finding], strict: bool
) -> list[Mapping[str, Any]]:
    """The objects a catalog can hold together; a finding for each of the others."""
    good: list[Mapping[str, Any]] = []
    seen: set[Any] = set()
    for obj in objects:
        try:
            alone = Catalog.from_objects([obj], strict=strict)
        except InvalidObjectError as exc:
            findings.append(_invalid(exc))
            continue
        keys = {*alone.models, *alone.runtimes, *alone.fine_tuned_weights, *alone.inference_services}
        if keys & seen:
            try:
                Catalog.from_objects([obj, obj], strict=strict)
            except InvalidObjectError as exc:
                findings.append(_invalid(exc))
            continue
        seen |= keys
        good.append(obj)
    return good
