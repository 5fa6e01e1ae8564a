"""A replica rendered against one side's objects: its revision and runners, or why it is blocked."""

from __future__ import annotations

from collections.abc import Collection

from omerender._records import record
from omerender.accelerators import accelerator_count, accelerator_resource_names
from omerender.catalog import CLUSTER_SCOPED, Catalog, CatalogKey
from omerender.diff.verdicts import _MESSAGE_LIMIT
from omerender.errors import BlockReason, OmeRenderError, RenderBlocked
from omerender.inheritance import catalog_resolver
from omerender.models import InferenceReplica, ModelResource, RuntimeResource
from omerender.preview import revision_of
from omerender.render import RenderedRunner, render


@record
class Blocked:
    """Why a side cannot render: OME's reason (``ModelNotFound``, ``RuntimeSelectionFailed``, ...) and
    its message, as the controller would set them on the replica's condition."""

    reason: str
    message: str


@record
class Outcome:
    """A replica rendered against one set of objects: its revision and runners, or why it is blocked."""

    revision: str | None = None
    runners: tuple[RenderedRunner, ...] = ()
    blocked: Blocked | None = None
    # The revision's inputs besides the templates (01 §9): they explain a roll the templates do not.
    payload: bytes = b""
    scope_uid: str = ""
    collision_count: int = 0
    # The runtime the templates came from (None for spec.runners or a blocked render).
    runtime_kind: str | None = None
    runtime_name: str | None = None
    # Blocked only because the model, assumed Ready, has no format name: unknown until downloaded.
    unknown: bool = False
    # The block message shortened for one line (a no-runtime message names every runtime checked).
    short: str = ""
    # Set when the revision name is for an empty uid (:attr:`omerender.preview.RevisionInfo.uid_notice`).
    uid_notice: str | None = None
    # The catalog objects this render read (the runtime's inheritance chain root first, the model, its
    # fine-tuned weights): the review names the changed ones as a roll's cause.
    reads: tuple[CatalogKey, ...] = ()
    # Instances (``spec.replicas``, at least 1), and one Instance's pods and accelerators as OME counts
    # them (:func:`omerender.accelerators.accelerator_count` per container, the catalog's
    # ``acceleratorResources``): they survive the trip from a worker process, the runners do not.
    instances: int = 1
    pods: int = 0
    gpus: int = 0

    @property
    def runtime(self) -> str | None:
        """``ClusterServingRuntime srt-x``, or None when no runtime made this render."""
        return f"{self.runtime_kind} {self.runtime_name}" if self.runtime_name else None

    @property
    def rendered(self) -> bool:
        """Whether this side rendered to a revision (neither blocked nor unknown until downloaded)."""
        return self.revision is not None

    @property
    def message(self) -> str:
        """The block message as the text and markdown print it (at most a few hundred characters)."""
        if self.blocked is None:
            return ""
        return self.short or self.blocked.message


def _model_key(model: ModelResource) -> CatalogKey:
    kind = model.kind
    return (
        kind,
        "" if kind in CLUSTER_SCOPED else (model.metadata.namespace or "default"),
        model.metadata.name,
    )


def _short_message(replica: InferenceReplica, catalog: Catalog, blocked: RenderBlocked) -> str:
    """A long block message cut for one line: a model no runtime serves as lint says it (how many
    runtimes were checked and the closest few), anything else cut with a pointer to the JSON."""
    message = blocked.message
    if len(message) <= _MESSAGE_LIMIT:
        return ""
    model = catalog.model_for(replica)
    if model is not None and blocked.reason is BlockReason.RUNTIME_SELECTION_FAILED:
        # Lint's finding for a model no runtime serves (its words, its closest runtimes), told with
        # as many of the closest as fit on the line.
        from omerender.lint import no_runtime_finding
        from omerender.selection import evaluate_runtimes

        try:
            report = evaluate_runtimes(model, catalog, replica.namespace, "engine")
        except RenderBlocked:
            report = None
        if report is not None and report.selected is None:
            finding = no_runtime_finding(model, report)
            head = finding.problem.removeprefix("RuntimeSelectionFailed: ").split("; closest: ")[0]
            passed_over = len(report.excluded)
            for shown in range(len(finding.closest), 0, -1):
                text = head + "; closest: " + "; ".join(map(str, finding.closest[:shown]))
                text += f"; and {passed_over - shown} more" if passed_over > shown else ""
                if len(text) <= _MESSAGE_LIMIT:
                    return text
            if finding.closest:  # the closest one's reason cut to the room left
                more = f"; and {passed_over - 1} more" if passed_over > 1 else ""
                room = _MESSAGE_LIMIT - len(head) - len("; closest: ") - len(more)
                first = str(finding.closest[0])
                if room > 40:
                    first = first if len(first) <= room else first[: room - 2] + "…)"
                    return f"{head}; closest: {first}{more}"
            return f"{head}; {passed_over} passed over"
    cut = message[:_MESSAGE_LIMIT]
    return f"{cut}… ({len(message) - len(cut)} more characters: -o json has the whole message)"


def outcome(
    replica: InferenceReplica,
    catalog: Catalog,
    unknown_models: Collection[CatalogKey] = (),
    *,
    uid: str | None = None,
) -> Outcome:
    """Render ``replica`` against ``catalog`` and compute its revision as OME's controller does.

    A template holding a value Kubernetes' Go types refuse blocks as ``RenderFailed`` naming the
    field, like any other render that cannot proceed (the fault may be the runtime's, not the replica's).
    ``unknown_models``: the models assumed Ready without a format name
    (:attr:`omerender.readiness.AssumedReady.format_unknown`); a render of one that blocks is
    :attr:`Outcome.unknown`. ``uid``: the replica's ``metadata.uid`` in the cluster, in place of the
    file's (:func:`omerender.preview.revision_of`); without one, :attr:`Outcome.uid_notice` says when
    the name is for an empty uid.
    """
    model = catalog.model_for(replica)
    weights = tuple(
        ("FineTunedWeight", "", name)
        for name in (replica.spec.model_ref.fine_tuned_weights or () if replica.spec.model_ref else ())
    )
    model_reads = ((_model_key(model),) if model is not None else ()) + weights
    try:
        result = render(replica, catalog)
        revision = revision_of(result, uid=uid)
    except RenderBlocked as blocked:
        unknown = model is not None and _model_key(model) in unknown_models
        return Outcome(
            blocked=Blocked(blocked.reason.value, blocked.message),
            unknown=unknown,
            short=_short_message(replica, catalog, blocked),
            reads=model_reads,
            instances=replica.spec.effective_replicas,
        )
    chain = _chain(catalog, result.runtime_kind, replica.namespace, result.runtime_name)
    names = accelerator_resource_names(catalog.accelerator_resources)
    return Outcome(
        revision=revision.name,
        runners=result.runners,
        payload=revision.payload,
        scope_uid=revision.scope_uid,
        collision_count=revision.collision_count,
        runtime_kind=result.runtime_kind,
        runtime_name=result.runtime_name,
        uid_notice=revision.uid_notice,
        reads=chain + model_reads,
        instances=replica.spec.effective_replicas,
        pods=sum(r.size for r in result.runners),
        gpus=sum(r.size * _pod_gpus(r, names) for r in result.runners),
    )


def _pod_gpus(runner: RenderedRunner, names: tuple[str, ...]) -> int:
    """One pod's accelerators: each container's as ``isvcutils.GetGpuCountFromContainer`` counts them."""
    spec = runner.template.get("spec") or {}
    try:
        return sum(accelerator_count(c, names) for c in spec.get("containers") or ())
    except RenderBlocked:  # a malformed quantity: the render reported it already, if it matters
        return 0


def runtime_key(runtime: RuntimeResource) -> CatalogKey:
    """A runtime's key in :class:`~omerender.catalog.Catalog`: (kind, namespace or "", name)."""
    namespace = "" if runtime.kind in CLUSTER_SCOPED else (runtime.metadata.namespace or "default")
    return (runtime.kind, namespace, runtime.metadata.name)


def _chain(catalog: Catalog, kind: str | None, namespace: str, name: str | None) -> tuple[CatalogKey, ...]:
    """The keys of the runtime's inheritance chain, root first (OME's ``status.inheritanceChain``)."""
    if name is None:
        return ()
    runtime = catalog.named_runtime(kind, namespace, name)
    if runtime is None:
        return ()

    def resolve() -> tuple[CatalogKey, ...]:
        try:
            chain = catalog_resolver(catalog).resolve(runtime).chain
        except OmeRenderError:
            return (runtime_key(runtime),)
        return tuple(runtime_key(rt) for rt in chain)

    return catalog.memoized(("diff-chain", runtime_key(runtime)), resolve)
