"""An immutable snapshot of the objects a render reads, with lookups by kind and scope.

Lookups follow ``kind`` exactly (DECISIONS §3.1): a ``BaseModel`` lives in the replica's namespace and a
``ClusterBaseModel`` at cluster scope, with no fallback between them; ``runtimeRef.kind`` defaults to
``ClusterServingRuntime`` and then falls back to a same-named ``ServingRuntime`` in the namespace, while
``kind: ServingRuntime`` is namespaced only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from types import MappingProxyType
from typing import Any, Final, TypeVar

from omerender._records import record
from omerender.accelerators import ACCELERATOR_RESOURCES_KEY, parse_accelerator_resources
from omerender.deploy import (
    DEPLOY_KEY,
    DeployConfigError,
    DeployDefaults,
    parse_deploy_config,
)
from omerender.errors import FieldProblem, InvalidArgumentError, InvalidObjectError
from omerender.jsonlike import clone, json_problem
from omerender.models import (
    FineTunedWeight,
    InferenceReplica,
    InferenceService,
    ModelResource,
    RuntimeResource,
    parse_object,
)

__all__ = [
    "CATALOG_KINDS",
    "CLUSTER_SCOPED",
    "Catalog",
    "CatalogKey",
    "ControllerIdentity",
    "is_operator_config",
]

# (kind, namespace or "" for cluster scope, name)
CatalogKey = tuple[str, str, str]

CONFIG_MAP = "inferenceservice-config"
# Distinct render inputs a catalog remembers before it forgets them all (a fleet has far fewer).
MEMO_SIZE: Final = 20_000
_T = TypeVar("_T")
_MODEL_KINDS = frozenset({"BaseModel", "ClusterBaseModel"})
_RUNTIME_KINDS = frozenset({"ServingRuntime", "ClusterServingRuntime"})
CLUSTER_SCOPED = frozenset({"ClusterBaseModel", "ClusterServingRuntime", "FineTunedWeight"})
# Every kind a Catalog reads (besides the operator ConfigMap, see is_operator_config).
CATALOG_KINDS = _MODEL_KINDS | _RUNTIME_KINDS | {"FineTunedWeight", "InferenceService"}


@record
class ControllerIdentity:
    """The InferenceService controller's identity from ``inferenceservice-config`` (§7.1)."""

    usernames: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    def matches(self, username: str, groups: Iterable[str]) -> bool:
        """Whether a request from ``username`` in ``groups`` comes from the controller (either list matches)."""
        return username in self.usernames or not self.groups.isdisjoint(groups)


def _empty() -> Mapping[CatalogKey, Any]:
    return MappingProxyType({})


@record
class Catalog:
    """The models, runtimes, fine-tuned weights and InferenceServices a render may read.

    Build it with :meth:`from_objects`; it never changes afterwards, so renders against it are
    deterministic and may be cached by the caller.
    """

    models: Mapping[CatalogKey, ModelResource] = field(default_factory=_empty)
    runtimes: Mapping[CatalogKey, RuntimeResource] = field(default_factory=_empty)
    fine_tuned_weights: Mapping[str, FineTunedWeight] = field(default_factory=_empty)  # type: ignore[arg-type]
    inference_services: Mapping[CatalogKey, InferenceService] = field(default_factory=_empty)
    controller_identity: ControllerIdentity | None = None
    # ``acceleratorResources`` of OME's ``inferenceservice-config``; empty means NVIDIA only.
    accelerator_resources: tuple[str, ...] = ()
    # The `deploy` key of the inferenceservice-config ConfigMap (namespace ome): operator defaults a
    # render applies (omerender.deploy). `deploy_error` holds Go's text when that key is unusable.
    deploy: DeployDefaults | None = None
    deploy_error: str | None = None
    # Indexes derived once from ``runtimes``: selection walks them for every model it renders.
    _cluster_runtimes: tuple[RuntimeResource, ...] = field(init=False, repr=False, compare=False)
    _namespaced_runtimes: Mapping[str, tuple[RuntimeResource, ...]] = field(
        init=False, repr=False, compare=False
    )
    # What depends only on this catalog and a key (renders by their inputs): see memoized().
    _memo: dict[Hashable, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cluster: list[RuntimeResource] = []
        namespaced: dict[str, list[RuntimeResource]] = {}
        for (kind, ns, _), runtime in sorted(self.runtimes.items(), key=lambda item: item[0]):
            if kind == "ClusterServingRuntime":
                cluster.append(runtime)
            else:
                namespaced.setdefault(ns, []).append(runtime)
        object.__setattr__(self, "_cluster_runtimes", tuple(cluster))
        object.__setattr__(
            self, "_namespaced_runtimes", MappingProxyType({k: tuple(v) for k, v in namespaced.items()})
        )
        object.__setattr__(self, "_memo", {})

    # -- pickling and copying ------------------------------------------------------------------
    # A tool hands a catalog to multiprocessing, or copies it: the read-only mappings travel as plain
    # dicts and are wrapped again, and the derived indexes and the memo are rebuilt, not carried (the
    # memo holds renders keyed by this catalog's own objects, cheap to make again and large to send).

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (
            _rebuild,
            (
                dict(self.models),
                dict(self.runtimes),
                dict(self.fine_tuned_weights),
                dict(self.inference_services),
                self.controller_identity,
                self.accelerator_resources,
                self.deploy,
                self.deploy_error,
            ),
        )

    def memoized(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, run once per ``key`` for this catalog and remembered.

        For values that depend only on the catalog and ``key``: the catalog never changes, so such a
        value never goes stale (``omerender.render`` keeps renders here, keyed by every replica field
        that reaches them). The memory is bounded: past :data:`MEMO_SIZE` keys it starts over.
        """
        memo = self._memo
        try:
            value: _T = memo[key]
        except KeyError:
            value = compute()
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            memo[key] = value
        return value

    @classmethod
    def from_objects(
        cls,
        objects: Iterable[Mapping[str, Any]],
        *,
        controller_identity: ControllerIdentity | None = None,
        accelerator_resources: Sequence[str] | None = None,
        operator_config: Mapping[str, Any] | None = None,
        strict: bool = True,
    ) -> Catalog:
        """Sort parsed YAML/JSON objects by kind. Kinds a render never reads are ignored.

        ``strict`` (the default) checks each object as :func:`~omerender.parse_object` does (OME's CRD:
        served ``apiVersion``, unknown fields, required fields, name patterns), expands a ``kind:
        List`` into its items, and refuses an ``ome.io`` object of a kind OME does not define
        (``ClusterBaseModle``), naming it; ``strict=False`` is the old leniency (objects already
        checked, such as :func:`omerender.load`'s or the API server's).

        An ``inferenceservice-config`` ConfigMap among them supplies ``acceleratorResources`` (unless
        ``accelerator_resources`` is given) and the operator's ``deploy`` defaults (``operator_config``,
        that ConfigMap's ``data`` as a reconciler watching it holds it, takes its place when given). Raises InvalidObjectError for an object of a known kind that
        does not fit its schema (or for any object that is not a mapping of JSON-like data), for two
        objects with the same kind, scope and name, and for an ``acceleratorResources`` value that is not
        a JSON list of names; InvalidArgumentError when ``objects`` is not an iterable of objects.
        """
        if isinstance(objects, str | bytes | Mapping) or not isinstance(objects, Iterable):
            raise InvalidArgumentError("Catalog.from_objects", "objects", "a list of objects", objects)
        if controller_identity is not None and not isinstance(controller_identity, ControllerIdentity):
            raise InvalidArgumentError(
                "Catalog.from_objects",
                "controller_identity",
                "a ControllerIdentity or None",
                controller_identity,
            )
        models: dict[CatalogKey, ModelResource] = {}
        runtimes: dict[CatalogKey, RuntimeResource] = {}
        weights: dict[str, FineTunedWeight] = {}
        services: dict[CatalogKey, InferenceService] = {}
        configured: tuple[str, ...] | None = None
        deploy: DeployDefaults | None = None
        deploy_error: str | None = None
        for number, original in enumerate(_expanded(objects) if strict else objects, start=1):
            _check_raw(number, original)
            if is_operator_config(original):
                if configured is not None:
                    raise InvalidObjectError(
                        "ConfigMap",
                        CONFIG_MAP,
                        original["metadata"].get("namespace"),
                        (FieldProblem("metadata.name", "appears twice in the objects given; keep one"),),
                    )
                configured = _accelerators_of(original)
                deploy, deploy_error = _deploy_from(original)
                continue
            # Parse a private copy: pydantic keeps nested dicts by reference, and a snapshot must not
            # change when the caller later edits the objects it passed in. _check_raw has walked it
            # for JSON-likeness already (json_data).
            obj = clone(original)
            kind = obj.get("kind")
            parsed: ModelResource | RuntimeResource | FineTunedWeight | InferenceService
            if kind in _MODEL_KINDS:
                parsed = parse_object(ModelResource, obj, json_data=True, strict=strict)
                target: dict[Any, Any] = models
            elif kind in _RUNTIME_KINDS:
                parsed = parse_object(RuntimeResource, obj, json_data=True, strict=strict)
                target = runtimes
            elif kind == "FineTunedWeight":
                parsed = parse_object(FineTunedWeight, obj, json_data=True, strict=strict)
                target = weights
            elif kind == "InferenceService":
                parsed = parse_object(InferenceService, obj, json_data=True, strict=strict)
                target = services
            else:
                if strict:
                    _refuse_unknown_ome_kind(obj)
                continue
            key: Any = _key(parsed.kind, parsed.metadata.namespace, parsed.metadata.name)
            if kind == "FineTunedWeight":
                key = parsed.metadata.name
            if key in target:
                raise InvalidObjectError(
                    parsed.kind,
                    parsed.metadata.name,
                    parsed.metadata.namespace,
                    (FieldProblem("metadata.name", "appears twice in the objects given; keep one"),),
                )
            target[key] = parsed
        if operator_config is not None:
            deploy, deploy_error = _deploy_from({"data": operator_config})
        accelerators = tuple(accelerator_resources if accelerator_resources is not None else configured or ())
        return _rebuild(
            models, runtimes, weights, services, controller_identity, accelerators, deploy, deploy_error
        )

    # -- models ------------------------------------------------------------------------------

    def model(self, kind: str, namespace: str, name: str) -> ModelResource | None:
        """A ``BaseModel`` in ``namespace`` or a ``ClusterBaseModel``; no fallback between kinds."""
        return self.models.get(_key(kind, namespace, name))

    def model_for(self, replica: InferenceReplica) -> ModelResource | None:
        """The model the replica's ``spec.modelRef`` names (in the replica's namespace for a BaseModel), if any."""
        ref = replica.spec.model_ref
        if ref is None:
            return None
        return self.model(ref.effective_kind, replica.namespace, ref.name)

    # -- runtimes ----------------------------------------------------------------------------

    def runtime(self, kind: str, namespace: str, name: str) -> RuntimeResource | None:
        """A ``ServingRuntime`` in ``namespace`` or a ``ClusterServingRuntime``, by exact kind; no fallback."""
        return self.runtimes.get(_key(kind, namespace, name))

    def named_runtime(self, kind: str | None, namespace: str, name: str) -> RuntimeResource | None:
        """Resolve a ``runtimeRef``: cluster first then namespaced for the default kind (§3.1)."""
        if kind in (None, "", "ClusterServingRuntime"):
            found = self.runtime("ClusterServingRuntime", namespace, name)
            return found or self.runtime("ServingRuntime", namespace, name)
        return self.runtime(kind, namespace, name)

    def runtimes_in(self, namespace: str) -> tuple[RuntimeResource, ...]:
        """ServingRuntimes in ``namespace``, by name."""
        return self._namespaced_runtimes.get(namespace, ())

    def cluster_runtimes(self) -> tuple[RuntimeResource, ...]:
        """ClusterServingRuntimes, by name."""
        return self._cluster_runtimes

    # -- others ------------------------------------------------------------------------------

    def fine_tuned_weight(self, name: str) -> FineTunedWeight | None:
        """The FineTunedWeight called ``name`` (cluster-scoped), if any."""
        return self.fine_tuned_weights.get(name)

    def inference_service(self, namespace: str, name: str) -> InferenceService | None:
        """The InferenceService ``namespace/name``, if any."""
        return self.inference_services.get(_key("InferenceService", namespace, name))


# Items of nested Lists deeper than this are not expanded (a List of Lists is already unusual).
_LIST_DEPTH: Final = 4


def _expanded(objects: Iterable[Any], depth: int = 0) -> Iterator[Any]:
    """``objects`` with each ``kind: List`` (or ``FooList``) replaced by its items, as kubectl reads it."""
    for obj in objects:
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        items = obj.get("items") if isinstance(obj, Mapping) else None
        if (
            isinstance(kind, str)
            and kind.endswith("List")
            and isinstance(items, list)
            and depth < _LIST_DEPTH
        ):
            yield from _expanded(items, depth + 1)
        else:
            yield obj


def _refuse_unknown_ome_kind(obj: Mapping[str, Any]) -> None:
    from omerender.crds import unknown_kind

    problem = unknown_kind(obj.get("apiVersion"), obj.get("kind"))
    if problem is not None:
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        raise InvalidObjectError(
            str(obj.get("kind")),
            name if isinstance(name, str) else "",
            None,
            (FieldProblem("kind", problem),),
        )


def _rebuild(
    models: dict[CatalogKey, ModelResource],
    runtimes: dict[CatalogKey, RuntimeResource],
    weights: dict[str, FineTunedWeight],
    services: dict[CatalogKey, InferenceService],
    identity: ControllerIdentity | None,
    accelerators: tuple[str, ...],
    deploy: DeployDefaults | None,
    deploy_error: str | None,
) -> Catalog:
    """A catalog from :meth:`Catalog.__reduce__`'s parts (unpickled or deep-copied)."""
    return Catalog(
        models=MappingProxyType(models),
        runtimes=MappingProxyType(runtimes),
        fine_tuned_weights=MappingProxyType(weights),
        inference_services=MappingProxyType(services),
        controller_identity=identity,
        accelerator_resources=accelerators,
        deploy=deploy,
        deploy_error=deploy_error,
    )


def _check_raw(number: int, obj: Any) -> None:
    """Refuse, before copying it, an object that is not a mapping of JSON-like data (a cycle would
    otherwise recurse without end in the copy)."""
    if not isinstance(obj, Mapping):
        problem = FieldProblem(
            "<object>", f"expected a mapping (a Kubernetes object), got {type(obj).__name__}"
        )
        raise InvalidObjectError(f"object #{number}", "", None, (problem,))
    kind = obj.get("kind")
    found = json_problem(obj)
    if found is None and not isinstance(kind, str | None):
        found = ("kind", f"must be a string such as ClusterServingRuntime, got {type(kind).__name__}")
    if found is not None:
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        raise InvalidObjectError(
            kind if isinstance(kind, str) and kind else f"object #{number}",
            name if isinstance(name, str) else "",
            None,
            (FieldProblem(*found),),
        )


def is_operator_config(obj: Mapping[str, Any]) -> bool:
    """Whether ``obj`` is the ``inferenceservice-config`` ConfigMap OME's controller reads."""
    meta = obj.get("metadata")
    return (
        obj.get("kind") == "ConfigMap"
        and isinstance(meta, Mapping)
        and meta.get("name") == CONFIG_MAP
        and meta.get("namespace") == "ome"  # OME's controller reads it from its own namespace only
    )


def _accelerators_of(config_map: Mapping[str, Any]) -> tuple[str, ...]:
    data = config_map.get("data")
    raw = data.get(ACCELERATOR_RESOURCES_KEY) if isinstance(data, Mapping) else None
    try:
        return parse_accelerator_resources(None if raw is None else str(raw))
    except ValueError as exc:
        raise InvalidObjectError(
            "ConfigMap",
            CONFIG_MAP,
            config_map["metadata"].get("namespace"),
            (FieldProblem(f"data.{ACCELERATOR_RESOURCES_KEY}", str(exc)),),
        ) from None


def _deploy_from(config_map: Mapping[str, Any]) -> tuple[DeployDefaults | None, str | None]:
    """(defaults, None), or (None, Go's error text); no `deploy` key configures nothing."""
    data = config_map.get("data") or {}
    text = data.get(DEPLOY_KEY) if isinstance(data, Mapping) else None
    if text is None:
        return DeployDefaults(), None
    if not isinstance(text, str):
        return None, f"unable to parse deploy config json: data.{DEPLOY_KEY} must be a string of JSON"
    try:
        return parse_deploy_config(text), None
    except DeployConfigError as exc:
        return None, str(exc)


def _key(kind: str, namespace: str | None, name: str) -> CatalogKey:
    return (kind, "" if kind in CLUSTER_SCOPED else (namespace or "default"), name)
