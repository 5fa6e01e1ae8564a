"""Runtime inheritance through the ``ome.io/inherit-from`` annotation (01 §2.4), as OME resolves it.

A runtime names its parent in ``ome.io/inherit-from``; the parent may name its own, up to five runtimes
in all. The effective spec is folded from the root down with :func:`omerender.merge.merge_inherited`,
each child over its parent's effective spec. Only ``spec`` is inherited: metadata (and with it the
``ome.io/runtime-profile`` marker) stays on each runtime.

Decisions, following OME's ``pkg/runtimeinheritance`` where the contract is silent:

* **Lookup context is fixed by the runtime being resolved.** A ClusterServingRuntime's ancestors are all
  looked up as ClusterServingRuntimes. For a ServingRuntime every ancestor name is looked up as a
  ServingRuntime in its namespace first, then as a ClusterServingRuntime, even above a cluster-scoped
  ancestor (OME builds one fetcher per chain).
* **Names alone identify a link**, so a ServingRuntime naming a ClusterServingRuntime of its own name is
  a cycle (``[x x]``).
* **Check order per link**, as OME's ``Resolve``: depth first, then cycle, then lookup. A chain of five
  whose top names a sixth is ``MaxDepthExceeded`` even if that sixth is missing or repeats a name.
* **Chains in messages are in walk order**, the named runtime first (``[child parent grandparent]``);
  a cycle ends with the repeated name (``[a b a]``). ``ResolvedRuntime.chain`` is root first, as
  ``status.inheritanceChain``.
* **``disabled`` is inherited like any scalar** by default: OME's merge does so, and its documentation
  has a profile's child set ``disabled: false`` for that reason. ``inherit_disabled=False`` gives the
  02 §9 PROPOSAL instead (the effective ``disabled`` is the named runtime's own).
* **The profile rule is checked on the runtime being resolved only**, against its own ``spec.disabled``
  and before its chain, as OME's admission webhook checks the object it admits. Ancestors are not
  re-checked: each is checked when it is resolved itself, and OME does not fail a child's chain over
  a parent's marker (``InheritanceReady`` has no reason for it).

**The merged runtime's pieces are not checked again** (``check_piece``, what Go's decoder refuses)
when every chain member is the catalog's own object, each of which passed that check when the catalog
parsed it. A merge of two pieces that pass it passes it, by induction over the Go type at each path:

* ``check_piece`` is made of per-path checks: a struct or map is null or an object whose every
  (known) key holds a value its field's type accepts; a list is null or a list whose every item its
  element type accepts, with no null item where the element is a struct; scalars (string, bool,
  integers, Quantity, IntOrString, Time) are judged by their own value alone, and the one type that
  takes any JSON (``FieldsV1``) takes any object. Dropping a key from an object keeps every such check.
* :func:`omerender.gomarshal.marshalled` only drops keys from each side's objects (nulls, ``omitempty``
  zeros, empty values in opaque fields) or writes a field's zero value of its own Go type (``""``,
  ``0``, ``"0"``, an empty struct for a null list item): each side still passes.
* :func:`omerender.merge.strategic_merge` gives each key either one side's value (which passed at that
  path), or, where both are objects, their merge at the same path and so the same Go type (induction).
  Keyed lists hold merges of a child item with the parent item of its key (both objects of the element
  type: the merge refuses an item that is not an object with its key), or items as they were. Scalars
  and other lists come whole from one side; the nulls an item may carry are removed at the end.

So the fast path gives what the full validation gives; ``tests/unit/test_speed3_merge_proof.py`` checks
that on generated parents and children with keyed lists, nulls, ``omitempty`` zeros and wrong types.
A head that is not the catalog's object (a webhook's candidate) is checked in full.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from typing import Any, Final

from omerender._records import record
from omerender.catalog import Catalog
from omerender.constants import ANNOTATION_INHERIT_FROM, ANNOTATION_RUNTIME_PROFILE
from omerender.errors import InvalidObjectError, OmeRenderError, RenderBlocked
from omerender.jsonlike import clone
from omerender.merge import merge_inherited
from omerender.models import MERGED_FROM_CHECKED_PIECES, RuntimeResource, parse_object

__all__ = [
    "MAX_DEPTH",
    "InheritanceError",
    "InheritanceReason",
    "ResolvedRuntime",
    "Resolver",
    "ResolverMemory",
    "catalog_resolver",
    "resolve_runtime",
]

# OME's RuntimeInheritMaxDepth: the runtime plus four ancestors.
MAX_DEPTH: Final = 5

_CLUSTER = "ClusterServingRuntime"
_NAMESPACED = "ServingRuntime"


class InheritanceReason(StrEnum):
    """OME's ``InheritanceReady`` reasons, plus ``ProfileNotDisabled`` for the webhook's profile rule."""

    PARENT_NOT_FOUND = "ParentNotFound"
    INHERITANCE_CYCLE = "InheritanceCycle"
    MAX_DEPTH_EXCEEDED = "MaxDepthExceeded"
    PROFILE_NOT_DISABLED = "ProfileNotDisabled"
    RESOLVER_ERROR = "ResolverError"


class InheritanceError(OmeRenderError):
    """A runtime's inheritance chain does not resolve. ``message`` is OME's text.

    ``runtime`` is the runtime being resolved; ``parent`` the ancestor name at fault (missing parent,
    repeated name, or the one past the depth limit); ``chain`` the names walked, the runtime first.
    """

    def __init__(
        self,
        reason: InheritanceReason,
        message: str,
        runtime: RuntimeResource,
        chain: tuple[str, ...],
        parent: str | None = None,
    ) -> None:
        self.reason = reason
        self.message = message
        self.runtime = runtime
        self.chain = chain
        self.parent = parent
        super().__init__(message)


@record
class ResolvedRuntime:
    """A runtime with its inheritance applied.

    ``runtime``: the named runtime, its metadata untouched and its spec the effective one.
    ``chain``: the runtimes of the chain, root first, ending with the named runtime.
    ``spec``: the effective spec as camelCase JSON-like data, a fresh copy on every read (made when
    read: renders and lint read ``runtime`` only).
    """

    runtime: RuntimeResource
    chain: tuple[RuntimeResource, ...]
    # The merged spec, shared with ``runtime``'s pieces (pydantic keeps Any-typed values by
    # reference); None for a runtime without ancestors, whose spec is its own.
    _effective: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def spec(self) -> dict[str, Any]:
        if self._effective is None:
            return _spec_dict(self.runtime)
        copied: dict[str, Any] = clone(self._effective)
        return copied

    @property
    def chain_names(self) -> tuple[str, ...]:
        """Names root first, as OME writes ``status.inheritanceChain``."""
        return tuple(rt.metadata.name for rt in self.chain)


def _go_list(names: tuple[str, ...] | list[str]) -> str:
    """Go's ``%v`` of a ``[]string``."""
    return "[" + " ".join(names) + "]"


def _spec_dict(runtime: RuntimeResource) -> dict[str, Any]:
    # exclude_unset: a field nobody wrote stays absent, so it can never shadow an ancestor's value.
    return runtime.spec.model_dump(by_alias=True, exclude_unset=True, mode="json")


def _parent_name(runtime: RuntimeResource) -> str:
    return runtime.metadata.annotations.get(ANNOTATION_INHERIT_FROM, "")


_CacheKey = tuple[str, str, str]


@record
class ResolverMemory:
    """What a :class:`Resolver` remembers. It holds no reference to the catalog, so the catalog can keep
    it (:func:`catalog_resolver`) without a reference cycle: a cycle would keep a whole catalog, its
    renders and its files' objects alive until a full pass of the cyclic garbage collector."""

    answers: dict[_CacheKey, ResolvedRuntime | InheritanceError] = field(default_factory=dict)
    # Each ancestor's own spec as merge input, by identity (the entry holds the runtime, so the id is
    # never reused). Ancestors are the catalog's objects: the cache is bounded by the catalog. Shared
    # by every child's merge, which never mutates its inputs (omerender.merge).
    specs: dict[int, tuple[RuntimeResource, dict[str, Any]]] = field(default_factory=dict)
    # The merge of each chain prefix (root first) of the catalog's own runtimes, by the members' ids (the
    # entry holds them): heads sharing ancestors merge the shared part once. Read-only, as ``specs``.
    merged: dict[tuple[int, ...], tuple[tuple[RuntimeResource, ...], dict[str, Any]]] = field(
        default_factory=dict
    )


class Resolver:
    """Resolves runtimes against one immutable :class:`Catalog`, remembering each answer.

    Lint resolves hundreds of runtimes against one catalog; keep one ``Resolver`` for it (or its
    ``memory``). Results (and failures) are cached per runtime identity, but only for runtimes that are
    the catalog's own objects: a runtime from elsewhere (a webhook's candidate object) is resolved
    afresh every time.
    """

    def __init__(
        self, catalog: Catalog, *, inherit_disabled: bool = True, memory: ResolverMemory | None = None
    ) -> None:
        self._catalog = catalog
        self._inherit_disabled = inherit_disabled
        self.memory = memory if memory is not None else ResolverMemory()
        self._cache = self.memory.answers
        self._specs = self.memory.specs
        self._merged = self.memory.merged

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    def resolve(self, runtime: RuntimeResource) -> ResolvedRuntime:
        """The effective runtime, or ``InheritanceError``."""
        key = self._key(runtime)
        if key is None:
            return self._resolve(runtime)
        hit = self._cache.get(key)
        if hit is None:
            try:
                hit = self._resolve(runtime)
            except InheritanceError as exc:
                hit = exc
            self._cache[key] = hit
        if isinstance(hit, InheritanceError):
            # Fresh traceback each time; re-raising one object would keep growing the old one.
            raise hit.with_traceback(None)
        return hit

    def parent(self, head: RuntimeResource, name: str) -> RuntimeResource | None:
        """The runtime ``name`` resolves to anywhere in ``head``'s chain (scope rule in the module doc)."""
        if head.kind == _CLUSTER:
            return self._catalog.runtime(_CLUSTER, "", name)
        found = self._catalog.runtime(_NAMESPACED, head.metadata.namespace or "", name)
        return found or self._catalog.runtime(_CLUSTER, "", name)

    # -- internals -------------------------------------------------------------------------------

    def _key(self, runtime: RuntimeResource) -> _CacheKey | None:
        namespace = "" if runtime.kind == _CLUSTER else runtime.metadata.namespace or ""
        if self._catalog.runtime(runtime.kind, namespace, runtime.metadata.name) is not runtime:
            return None
        return (runtime.kind, namespace, runtime.metadata.name)

    def _resolve(self, head: RuntimeResource) -> ResolvedRuntime:
        _check_profile(head)
        walked = self._walk(head)
        root_first = tuple(reversed(walked))
        if len(root_first) == 1:
            return ResolvedRuntime(head, root_first)

        effective = self._ancestor_spec(root_first[0])
        # A head from elsewhere (a webhook's candidate) is merged afresh: only the catalog's own are kept.
        head_kept = self._key(head) is not None
        for end in range(2, len(root_first) + 1):
            rt = root_first[end - 1]
            key = tuple(map(id, root_first[:end])) if rt is not head or head_kept else None
            known = self._merged.get(key) if key is not None else None
            if known is not None:
                effective = known[1]
                continue
            try:
                child = _spec_dict(rt) if rt is head else self._ancestor_spec(rt)
                effective = merge_inherited(effective, child)
            except RenderBlocked as exc:
                raise self._error(
                    head,
                    InheritanceReason.RESOLVER_ERROR,
                    f"merge {rt.metadata.name} onto effective: {exc.message}",
                    walked,
                ) from None
            if key is not None:
                self._merged[key] = (root_first[:end], effective)
        effective = dict(effective)  # its top level is changed below; the nested values are shared
        if not self._inherit_disabled:
            effective.pop("disabled", None)
            if "disabled" in head.spec.model_fields_set:  # the head's own, as _spec_dict would give it
                effective["disabled"] = head.spec.disabled

        data = head.model_dump(by_alias=True, exclude_unset=True, mode="json", exclude={"spec"})
        # The merge's result, its top level ours and its nested values shared with the memory (read-only):
        # the typed runtime keeps it (``spec`` copies it when read).
        data["spec"] = effective
        # Go decodes the merged spec (sgl-project/ome pkg/runtimeinheritance/merge.go, Merge: "unmarshal
        # merged" into a ServingRuntimeSpec); its pieces need no second check_piece when every chain
        # member passed it (the catalog's own runtimes did when the catalog parsed them): proof in the
        # module doc.
        proven = all(self._key(rt) is not None for rt in root_first)
        try:
            # JSON data by construction: model dumps in JSON mode, merged.
            runtime = parse_object(
                RuntimeResource,
                data,
                json_data=True,
                strict=False,  # the merge of runtimes the catalog has checked
                context={MERGED_FROM_CHECKED_PIECES: True} if proven else None,
            )
        except InvalidObjectError as exc:
            raise self._error(head, InheritanceReason.RESOLVER_ERROR, str(exc), walked) from None
        return ResolvedRuntime(runtime, root_first, effective)

    def _ancestor_spec(self, runtime: RuntimeResource) -> dict[str, Any]:
        """:func:`_spec_dict` of a chain member above the head, once per runtime object."""
        entry = self._specs.get(id(runtime))
        if entry is None:
            entry = self._specs[id(runtime)] = (runtime, _spec_dict(runtime))
        return entry[1]

    def _walk(self, head: RuntimeResource) -> tuple[RuntimeResource, ...]:
        """The chain from ``head`` upward, checking each link as OME's ``Resolve`` does."""
        walked = [head]
        seen = {head.metadata.name}
        current = head
        while parent_name := _parent_name(current):
            if len(walked) >= MAX_DEPTH:
                names = _names(walked)
                raise self._error(
                    head,
                    InheritanceReason.MAX_DEPTH_EXCEEDED,
                    f"inheritance chain exceeds max depth {MAX_DEPTH} (chain: {_go_list(names)})",
                    walked,
                    parent_name,
                )
            if parent_name in seen:
                cycle = (*_names(walked), parent_name)
                raise self._error(
                    head,
                    InheritanceReason.INHERITANCE_CYCLE,
                    f"inheritance cycle detected: {_go_list(cycle)}",
                    walked,
                    parent_name,
                    chain=cycle,
                )
            parent = self.parent(head, parent_name)
            if parent is None:
                raise self._error(
                    head,
                    InheritanceReason.PARENT_NOT_FOUND,
                    f'inherit-from parent "{parent_name}" not found (chain so far: {_go_list(_names(walked))})',
                    walked,
                    parent_name,
                )
            walked.append(parent)
            seen.add(parent.metadata.name)
            current = parent
        return tuple(walked)

    @staticmethod
    def _error(
        head: RuntimeResource,
        reason: InheritanceReason,
        message: str,
        walked: tuple[RuntimeResource, ...] | list[RuntimeResource],
        parent: str | None = None,
        *,
        chain: tuple[str, ...] | None = None,
    ) -> InheritanceError:
        return InheritanceError(reason, message, head, chain or _names(walked), parent)


def _names(runtimes: tuple[RuntimeResource, ...] | list[RuntimeResource]) -> tuple[str, ...]:
    return tuple(rt.metadata.name for rt in runtimes)


def _check_profile(runtime: RuntimeResource) -> None:
    if runtime.metadata.annotations.get(ANNOTATION_RUNTIME_PROFILE) != "true":
        return
    if runtime.spec.disabled is not True:
        raise InheritanceError(
            InheritanceReason.PROFILE_NOT_DISABLED,
            f'runtimes carrying {ANNOTATION_RUNTIME_PROFILE}="true" must also set spec.disabled: true',
            runtime,
            (runtime.metadata.name,),
        )


def catalog_resolver(catalog: Catalog) -> Resolver:
    """A :class:`Resolver` with the catalog's own memory (memoized in it), shared by every render and
    lint against it: each runtime's chain is resolved and its merged runtime validated once per catalog, however
    many models, namespaces or replicas reach it. A catalog never changes, so no answer goes stale."""
    return Resolver(catalog, memory=catalog.memoized(("inheritance-resolver",), ResolverMemory))


def resolve_runtime(
    runtime: RuntimeResource, catalog: Catalog, *, inherit_disabled: bool = True
) -> ResolvedRuntime:
    """Resolve one runtime's inheritance chain against ``catalog``; raises ``InheritanceError``.

    Uncached: ``Catalog`` is neither hashable nor weakly referenceable, and an ``id()``-keyed cache
    could hand one catalog's answers to a later catalog at the same address. Hold a
    :class:`Resolver` to resolve many runtimes against one catalog.
    """
    return Resolver(catalog, inherit_disabled=inherit_disabled).resolve(runtime)
