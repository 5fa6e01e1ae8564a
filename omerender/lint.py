"""Whole-catalog lint: render every model with the runtime it would select, and every runtime alone.

Pure: the caller passes the objects and, optionally, a schema check for rendered templates (the CLI
passes the Kubernetes 1.36 schemas). Catalog objects read from files usually carry no ``status``, so
lint treats every model as Ready: it checks the catalog's consistency, not the cluster's state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omerender.catalog import Catalog
from omerender.errors import InvalidObjectError, OmeRenderError, RenderBlocked
from omerender.inheritance import InheritanceError, Resolver
from omerender.models import (
    InferenceReplica,
    InferenceReplicaSpec,
    ModelRef,
    ModelResource,
    ModelStatus,
    ObjectMeta,
    RuntimeResource,
    ServingRuntimeRef,
)
from omerender.preview import revision_of
from omerender.render import render
from omerender.selection import select_runtime

__all__ = ["Finding", "LintReport", "lint", "lint_objects"]

COMPONENTS = ("engine", "decoder", "router")
Validator = Callable[[Mapping[str, Any]], Sequence[str]]
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem and the object that causes it (``ClusterServingRuntime srt-x``)."""

    subject: str
    component: str
    problem: str

    def __str__(self) -> str:
        return f"{self.subject} [{self.component}]: {self.problem}"


@dataclass(frozen=True, slots=True)
class LintReport:
    renders: int
    findings: tuple[Finding, ...]


def _subject(obj: ModelResource | RuntimeResource) -> str:
    ns = (
        f"{obj.metadata.namespace}/"
        if obj.metadata.namespace and obj.kind in ("BaseModel", "ServingRuntime")
        else ""
    )
    return f"{obj.kind} {ns}{obj.metadata.name}"


def _replica(
    namespace: str, component: str, model: ModelRef | None, runtime: ServingRuntimeRef | None
) -> InferenceReplica:
    spec = InferenceReplicaSpec(component=component, model_ref=model, runtime_ref=runtime)
    return InferenceReplica(metadata=ObjectMeta(name="lint", namespace=namespace, uid="lint"), spec=spec)


def _as_ready(catalog: Catalog) -> Catalog:
    ready = ModelStatus(state="Ready")
    models = {key: m.model_copy(update={"status": ready}) for key, m in catalog.models.items()}
    return Catalog(
        models=models,
        runtimes=catalog.runtimes,
        fine_tuned_weights=catalog.fine_tuned_weights,
        inference_services=catalog.inference_services,
        controller_identity=catalog.controller_identity,
    )


def _jobs(catalog: Catalog, resolver: Resolver) -> Iterator[tuple[str, str, InferenceReplica | Finding]]:
    """(subject, component, replica to render or a finding found while planning the render)."""
    for model in catalog.models.values():
        if model.is_disabled:
            continue
        subject = _subject(model)
        namespace = model.metadata.namespace or "default"
        ref = ModelRef(name=model.metadata.name, kind=model.kind)
        try:
            runtime = select_runtime(model, catalog, namespace, "engine")
        except RenderBlocked as blocked:
            yield subject, "engine", Finding(subject, "engine", f"{blocked.reason.value}: {blocked.message}")
            continue
        yield subject, "engine", _replica(namespace, "engine", ref, None)
        try:
            effective = resolver.resolve(runtime).runtime
        except InheritanceError:
            continue  # reported once, under the runtime itself
        for component in COMPONENTS[1:]:
            if effective.piece(component) is not None:
                named = ServingRuntimeRef(name=runtime.metadata.name, kind=runtime.kind)
                yield subject, component, _replica(namespace, component, ref, named)
    for runtime in catalog.runtimes.values():
        if runtime.is_disabled:
            continue  # profiles and retired runtimes: their children exercise them
        subject = _subject(runtime)
        try:
            effective = resolver.resolve(runtime).runtime
        except InheritanceError as exc:
            yield subject, "-", Finding(subject, "-", f"{exc.reason}: {exc.message}")
            continue
        namespace = runtime.metadata.namespace or "default"
        named = ServingRuntimeRef(name=runtime.metadata.name, kind=runtime.kind)
        for component in COMPONENTS:
            if effective.piece(component) is not None:
                yield subject, component, _replica(namespace, component, None, named)


def lint(
    catalog: Catalog, *, validate: Validator | None = None, progress: Progress | None = None
) -> LintReport:
    """Every problem a render of this catalog would meet, with the object that causes it."""
    catalog = _as_ready(catalog)
    resolver = Resolver(catalog)
    jobs = list(_jobs(catalog, resolver))
    findings: list[Finding] = []
    renders = 0
    for done, (subject, component, job) in enumerate(jobs, start=1):
        if progress is not None:
            progress(done, len(jobs))
        if isinstance(job, Finding):
            findings.append(job)
            continue
        renders += 1
        try:
            result = render(job, catalog, resolver=resolver)
            revision_of(result)  # what preview refuses too: a template Go's decoder would not read
        except OmeRenderError as exc:
            detail = f"{exc.reason.value}: {exc.message}" if isinstance(exc, RenderBlocked) else str(exc)
            findings.append(Finding(subject, component, detail))
            continue
        if validate is None:
            continue
        for runner in result.runners:
            template = {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": f"{job.spec.component}-{runner.name}"},
                "template": runner.template,
            }
            findings.extend(Finding(subject, component, problem) for problem in validate(template))
    return LintReport(renders=renders, findings=tuple(findings))


def _invalid(exc: InvalidObjectError) -> Finding:
    where = f"{exc.namespace}/{exc.name}" if exc.namespace else exc.name or "<unnamed>"
    subject = f"{exc.kind} {where}"
    return Finding(subject, "-", "invalid: " + "; ".join(str(p) for p in exc.problems))


def lint_objects(
    objects: Sequence[Mapping[str, Any]],
    *,
    validate: Validator | None = None,
    progress: Progress | None = None,
) -> LintReport:
    """:func:`lint` of the catalog these objects make; an object the catalog refuses (one OME could not
    read, or a second object of the same kind and name) is a finding, and the rest are linted."""
    findings: list[Finding] = []
    good: list[Mapping[str, Any]] = []
    seen: set[Any] = set()
    for obj in objects:
        try:
            alone = Catalog.from_objects([obj])
        except InvalidObjectError as exc:
            findings.append(_invalid(exc))
            continue
        keys = {*alone.models, *alone.runtimes, *alone.fine_tuned_weights, *alone.inference_services}
        if keys & seen:
            try:
                Catalog.from_objects([obj, obj])
            except InvalidObjectError as exc:
                findings.append(_invalid(exc))
            continue
        seen |= keys
        good.append(obj)
    report = lint(Catalog.from_objects(good), validate=validate, progress=progress)
    return LintReport(renders=report.renders, findings=(*findings, *report.findings))
