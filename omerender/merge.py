"""OME's strategic merges of runtime specs, pieces and containers (02 §3.2–§3.3, 01 §2.4).

Every OME merge site marshals typed Go structs with ``encoding/json`` and applies the override to the
base with ``strategicpatch.StrategicMergePatch`` (k8s.io/apimachinery ``pkg/util/strategicpatch``),
the Go type as the schema. Here each site is two steps: :func:`omerender.gomarshal.marshalled` gives
what Go's encoder writes of each side, and :func:`strategic_merge` is ``StrategicMergePatch`` on that
JSON. ``tests/differential/test_strategic_merge_oracle.py`` checks every site against the real
library (``tools/strategicmerge``), list order included.

The sites:

* :func:`merge_inherited` — ``runtimeinheritance.Merge``: the child runtime's spec over its parent's.
* :func:`merge_containers` / :func:`merge_runner_into_pod` — ``MergeRuntimeContainers`` and
  ``PodSpecReconciler.resolveContainer``: the runner is the base, the piece's container of the same
  name the override.
* :func:`merge_component_spec` — ``MergeEngineSpec`` / ``MergeDecoderSpec`` / ``MergeRouterSpec``: the
  runtime's piece under the service's role spec, then the component-level pod fields folded into
  ``leader`` and ``worker`` (:func:`fold_component_pod_spec`).

All functions are pure: inputs are never mutated and results share no mutable structure with them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from omerender._gofields import STRUCTS as K8S_STRUCTS
from omerender.constants import MAIN_CONTAINER
from omerender.errors import BlockReason, RenderBlocked
from omerender.gomarshal import CONTAINER, OME_POD_SPEC, marshalled, owned_marshalled, strip_nulls
from omerender.jsonlike import clone
from omerender.runtime_gotypes import RUNTIME_SPEC

__all__ = [
    "COMPONENT_TYPES",
    "MERGE_KEYS",
    "POD_SPEC_FIELDS",
    "fill_scheduler_name",
    "fold_component_pod_spec",
    "main_container_index",
    "merge_component_spec",
    "merge_containers",
    "merge_inherited",
    "merge_runner_into_pod",
    "strategic_merge",
]

# Field name -> merge key, from the patchMergeKey tags of k8s.io/api/core/v1 (PodSpec, Container,
# EphemeralContainer) that OME's PodSpec copies and ServingRuntimePodSpec keeps. In these types each
# name means one field wherever it appears, so the name is as good as the path. Every other list is
# atomic (no patchStrategy): the override's list replaces the base's whole (``tolerations``,
# ``args``, ``command``, ``envFrom``, ``nodeSelectorTerms``, ``supportedModelFormats``, …). The
# ``retainKeys`` strategy of ``volumes`` and ``resourceClaims`` acts only on a ``$retainKeys``
# directive, which ``json.Marshal`` of a typed struct never writes: same-named items merge field by field.
MERGE_KEYS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "containers": "name",
        "initContainers": "name",
        "ephemeralContainers": "name",
        "volumes": "name",
        "imagePullSecrets": "name",
        "env": "name",
        "ports": "containerPort",
        "volumeMounts": "mountPath",
        "hostAliases": "ip",
        "topologySpreadConstraints": "topologyKey",
        "volumeDevices": "devicePath",
        "resourceClaims": "name",
        "schedulingGates": "name",
    }
)

# The Go type of each role spec (ome-projects/ome pkg/apis/ome/v1beta1 inference_service.go).
COMPONENT_TYPES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "engine": "ome/v1beta1.EngineSpec",
        "decoder": "ome/v1beta1.DecoderSpec",
        "router": "ome/v1beta1.RouterSpec",
    }
)
# The fields of OME's inline v1beta1.PodSpec (a copy of corev1.PodSpec), in a piece or a leader/worker.
POD_SPEC_FIELDS: Final = frozenset(f[0] for f in K8S_STRUCTS["core/v1.PodSpec"])
# EngineSpec / DecoderSpec fields MergeEngineSpec / MergeDecoderSpec do not carry from the runtime.
_NOT_CARRIED: Final = frozenset({"topologyKey", "topologySpread", "topologySpreadKey", "acceleratorOverride"})


# -- StrategicMergePatch ------------------------------------------------------------------------


def strategic_merge(
    original: Mapping[str, Any], patch: Mapping[str, Any], *, path: str = ""
) -> dict[str, Any]:
    """``strategicpatch.StrategicMergePatch(original, patch)`` on JSON-like data (its ``mergeMap``
    with ``IgnoreUnmatchedNulls``), for a patch without ``$`` directives, as ``json.Marshal`` writes:

    * a null in the patch deletes the key; a value the original lacks, or holds with another JSON type,
      is taken with its null-valued keys dropped (``discardNullValuesFromPatch``);
    * objects merge key by key, recursively; scalars and lists without a merge key are replaced;
    * keyed lists (:data:`MERGE_KEYS`) merge item by item: each patch item into the first original item
      with its key, else appended; then the items the patch names, in patch order, are interleaved with
      the original's other items, in original order, each of those placed before the first patch item
      that comes after it in the original (``normalizeElementOrder`` / ``mergeSortedSlice``). So an
      override of ``B`` in ``[A, B, C]`` stays in place, and new items come before base-only items that
      follow no named one.

    ``path`` prefixes the location in error messages. Raises ``RenderBlocked`` (``RenderFailed``) where
    the library refuses the merge: an item of a keyed list without its merge key, items of different
    JSON types in one list.
    """
    return _merge_map(original, patch, path, False)


def _merged(original: Mapping[str, Any], patch: Mapping[str, Any], path: str) -> dict[str, Any]:
    """:func:`strategic_merge` with the nulls Go's typed decode reads as unset left out as it goes:
    those an item a keyed list takes as it is may hold, and those inside a list taken whole.

    ``original`` is :func:`~omerender.gomarshal.owned_marshalled` output, this merge's own: its values
    go into the result without another copy."""
    return _merge_map(original, patch, path, True, True)


def _kind(value: Any) -> str:
    """The JSON type, as ``reflect.TypeOf`` tells apart ``encoding/json``'s decoded values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def _merge_map(
    original: Mapping[str, Any], patch: Mapping[str, Any], path: str, drop: bool, owned: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = dict(original)
    made: set[str] = set()
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
            made.discard(key)
            continue
        current: Any = out.get(key)
        kind = _kind(value)
        if key not in out or _kind(current) != kind:
            out[key] = strip_nulls(value)
        elif kind == "map":
            out[key] = _merge_map(current, value, f"{path}.{key}" if path else key, drop, owned)
        elif kind == "list" and key in MERGE_KEYS:
            where = f"{path}.{key}" if path else key
            out[key] = _merge_list(current, value, MERGE_KEYS[key], where, drop, owned)
        else:
            out[key] = strip_nulls(value) if drop else clone(value)
        made.add(key)
    if owned:
        return out  # the original's values are this merge's own: no copy
    for key, value in out.items():
        if key not in made:
            out[key] = clone(value)  # replaces the value of a key already there: no resize
    return out


def _refuse(message: str) -> RenderBlocked:
    return RenderBlocked(BlockReason.RENDER_FAILED, message)


def _key_of(item: Any, merge_key: str, where: str) -> tuple[str, Any]:
    """The merge key's value, compared as Go compares ``interface{}`` values (type and value)."""
    if not isinstance(item, Mapping) or merge_key not in item:
        raise _refuse(f"{where}: list item does not contain declared merge key: {merge_key}")
    value = item[merge_key]
    kind = _kind(value)
    if kind in ("map", "list"):
        raise _refuse(f"{where}: the merge key {merge_key} must be a string or a number")
    return (kind, value)


def _merge_list(
    original: Sequence[Any], patch: Sequence[Any], merge_key: str, path: str, drop: bool, owned: bool
) -> list[Any]:
    """``mergeSlice`` for a list of objects with a merge key (see :func:`strategic_merge`)."""
    if not original and not patch:
        return []
    kinds = {_kind(v) for v in (*original, *patch)}
    if len(kinds) > 1 or kinds != {"map"}:
        raise _refuse(f"{path}: list items must all be objects with the merge key {merge_key}")
    work: list[Any] = list(original)
    fresh: set[int] = set()  # ids of the merged items: new dicts already
    for n, item in enumerate(patch):
        key = _key_of(item, merge_key, f"{path}[{n}]")
        for i, candidate in enumerate(work):
            if merge_key in candidate and (_kind(candidate[merge_key]), candidate[merge_key]) == key:
                merged = _merge_map(candidate, item, f"{path}[{n}]", drop, owned)
                fresh.discard(id(candidate))
                fresh.add(id(merged))
                work[i] = merged
                break
        else:
            work.append(item)  # taken as it is, nulls included (mergeSliceWithoutSpecialElements)

    # First index of each key in the patch and in the original: the orders normalizeElementOrder keeps.
    patch_at: dict[tuple[str, Any], int] = {}
    for n, item in enumerate(patch):
        patch_at.setdefault(_key_of(item, merge_key, f"{path}[{n}]"), n)
    original_at: dict[tuple[str, Any], int] = {}
    for n, item in enumerate(original):
        original_at.setdefault(_key_of(item, merge_key, f"{path}[{n}]"), n)

    named: list[tuple[int, tuple[str, Any], Any]] = []
    others: list[tuple[int, tuple[str, Any], Any]] = []
    for item in work:
        key = _key_of(item, merge_key, path)
        if key in patch_at:
            named.append((patch_at[key], key, item))
        else:
            others.append((original_at[key], key, item))
    named.sort(key=lambda t: t[0])  # stable, as sort.SliceStable
    others.sort(key=lambda t: t[0])

    out: list[Any] = []
    i = j = 0
    while i < len(others) or j < len(named):
        if j >= len(named):
            take_other = True
        elif i >= len(others):
            take_other = False
        else:
            # mergeSortedSlice: the original item goes first only when both are in the original and it
            # comes first there.
            named_at = original_at.get(named[j][1], -1)
            take_other = named_at >= 0 and others[i][0] < named_at
        if take_other:
            item = others[i][2]
            i += 1
        else:
            item = named[j][2]
            j += 1
        out.append(item if id(item) in fresh else strip_nulls(item) if drop else clone(item))
    return out


# -- the sites ----------------------------------------------------------------------------------


def merge_inherited(parent_spec: Mapping[str, Any], child_spec: Mapping[str, Any]) -> dict[str, Any]:
    """A child runtime's spec over its parent's effective spec (01 §2.4), as OME's
    ``runtimeinheritance.Merge`` does it (sgl-project/ome ``pkg/runtimeinheritance/merge.go``):
    ``json.Marshal`` of both typed ``ServingRuntimeSpec``s, JSON nulls stripped from the child
    (``StripJSONNulls``), ``StrategicMergePatch`` with ``ServingRuntimeSpec`` as the schema.

    So a child value counts only when Go's encoder writes it: an ``omitempty`` field at its zero value
    (``hostNetwork: false``, ``maxReplicas: 0``, ``[]``, ``""``) leaves the parent's value, a pointer
    field (``disabled: false``) wins. Objects (``runner``, ``engineConfig``, …) and maps merge field by
    field; keyed lists merge by key in the library's order (a parent's ``env`` keeps its order, the
    child's new variables placed among them); other lists (``supportedModelFormats``, ``args``,
    ``tolerations``) are replaced.
    """
    parent = owned_marshalled(parent_spec, RUNTIME_SPEC)
    child = marshalled(child_spec, RUNTIME_SPEC)  # nulls=False: what StripJSONNulls leaves
    return _merged(parent, child, "spec")


def merge_containers(
    runtime_container: Mapping[str, Any], predictor_container: Mapping[str, Any], *, path: str = ""
) -> dict[str, Any]:
    """OME's ``MergeRuntimeContainers`` (``pkg/controller/v1beta1/inferenceservice/utils/merging.go``):
    the runtime container (the runner) is the base and the predictor container the override, both
    marshalled as ``v1.Container`` and merged with ``StrategicMergePatch``; so the container wins
    field by field and an empty field of it leaves the runner's value.

    Then, since the library replaces ``args``, they become the runner's followed by the container's
    (the body in sgl-project/ome; the newest body, ome-projects/ome, is not in the index, and its
    ``MergeArgs`` is not reproduced). A merged container left without a name takes the runner's name,
    else ``ome-container`` (``constants.MainContainerName``, as ``TestMergeRuntimeContainers_NamePrecedence``
    pins it).
    """
    base = owned_marshalled(runtime_container, CONTAINER)
    override = marshalled(predictor_container, CONTAINER, nulls=True)
    merged = _merged(base, override, path)
    if not merged.get("name"):
        merged["name"] = base.get("name") or MAIN_CONTAINER
    args = clone([*_str_list(base.get("args")), *_str_list(override.get("args"))])
    if args:
        merged["args"] = args
    else:
        merged.pop("args", None)
    return merged


def merge_runner_into_pod(pod_spec: Mapping[str, Any], runner: Mapping[str, Any] | None) -> dict[str, Any]:
    """The runner merged into its pod container (02 §3.3), as OME's ``PodSpecReconciler.resolveContainer``
    (ome-projects/ome ``pkg/render/podspec.go``) does it.

    * No runner: the pod is returned as is (a copy); its first container is the main one. No runner and
      no containers raises ``RenderBlocked(RenderFailed)``: there would be nothing to run.
    * The target is the first container whose name equals ``runner.name`` (a nameless runner finds a
      nameless container); if there is none an empty container is appended. The target becomes
      :func:`merge_containers` of the runner (base) and the target (override), in place.
    """
    pod = {k: clone(v) for k, v in pod_spec.items()}
    containers = pod.get("containers")
    if not isinstance(containers, list):
        containers = []
    if runner is None:
        if not containers:
            raise _refuse("the pod spec has no containers and no runner: there is no main container to run")
        return pod
    name = runner.get("name") or ""
    index = _target_index(containers, name)
    if index is None:
        containers = [*containers, {}]
        index = len(containers) - 1
    target = containers[index]
    target = target if isinstance(target, Mapping) else {}
    containers[index] = merge_containers(runner, target, path=f"containers[{index}]")
    pod["containers"] = containers
    return pod


def main_container_index(pod_spec: Mapping[str, Any], runner: Mapping[str, Any] | None) -> int:
    """Index of the main container in a pod already passed through :func:`merge_runner_into_pod`.

    The container named after the runner (``ome-container`` for a nameless runner), else the first one.
    """
    containers = pod_spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise _refuse("the pod spec has no containers")
    if runner is None:
        return 0
    index = _target_index(containers, runner.get("name") or MAIN_CONTAINER)
    return 0 if index is None else index


def merge_component_spec(
    runtime_piece: Mapping[str, Any] | None, service_spec: Mapping[str, Any] | None, component: str
) -> dict[str, Any] | None:
    """The role spec the render uses: OME's ``MergeEngineSpec`` / ``MergeDecoderSpec`` /
    ``MergeRouterSpec`` (``pkg/controller/v1beta1/inferenceservice/utils/merging.go``, called by
    ``MergeRuntimeSpecs``).

    * No service spec: None. No runtime piece: a copy of the service spec.
    * Else ``mergeSpec``: the runtime piece (only its pod spec, component extension fields, ``runner``
      and ``leader``/``worker``, or ``config`` for a router: ``topologyKey``, ``topologySpread``,
      ``topologySpreadKey`` and ``acceleratorOverride`` are not carried) is the base and the service
      spec the override, both marshalled as the role's Go type.
    * Then, for an engine or decoder, :func:`fold_component_pod_spec`, on either branch.

    A standalone InferenceReplica's service spec is ``{}`` (``serviceShell``), so the result is the
    runtime's piece as Go reads it, folded.
    """
    if service_spec is None:
        return None
    typ = COMPONENT_TYPES[component]
    merged: dict[str, Any]
    if runtime_piece is None:
        merged = {k: clone(v) for k, v in service_spec.items()}
    else:
        carried = {k: v for k, v in runtime_piece.items() if k not in _NOT_CARRIED or component == "router"}
        base = owned_marshalled(carried, typ)
        override = marshalled(service_spec, typ, nulls=True)
        merged = _merged(base, override, f"{component}Config")
    if component == "router":
        return merged
    # A copy, or a merge under an empty service spec (a standalone replica's, which adds only
    # scalars): plain data that is all this call's own, folded without another copy.
    return _fold(merged, f"{component}Config", owned=runtime_piece is None or not service_spec)


def fold_component_pod_spec(piece: Mapping[str, Any], *, path: str = "") -> dict[str, Any]:
    """The component-level pod fields folded into ``leader`` and ``worker``, as OME's
    ``foldComponentPodSpecIntoLeaderWorker`` does for ``MergeEngineSpec`` / ``MergeDecoderSpec``.

    That function's body is not in the index; this follows what ome-projects/ome ``merging_test.go``
    (``TestMergeEngineSpec_FoldComponentPodSpec``, ``TestMergeDecoderSpec_FoldComponentPodSpec``) pins:
    each present ``leader`` / ``worker`` pod spec becomes the component-level pod spec (base) merged with
    its own (override) by ``mergeSpec`` on ``v1beta1.PodSpec``, so volumes and imagePullSecrets merge by
    name, ``tolerations`` is replaced by the leader's own, ``nodeSelector`` merges key by key. A piece
    without ``leader`` and ``worker`` is returned unchanged; the component level itself stays as it is.
    """
    return _fold(piece, path, owned=False)


def _fold(piece: Mapping[str, Any], path: str, *, owned: bool) -> dict[str, Any]:
    """:func:`fold_component_pod_spec`; ``owned``: ``piece`` is the caller's own plain data (dicts,
    lists, scalars, nothing shared), taken into the result instead of copied."""
    out = dict(piece) if owned else {k: clone(v) for k, v in piece.items()}
    component_pod = {k: v for k, v in piece.items() if k in POD_SPEC_FIELDS}
    for block in ("leader", "worker"):
        part = out.get(block)
        if not isinstance(part, dict):
            continue
        own_pod = {k: v for k, v in part.items() if k in POD_SPEC_FIELDS}
        folded = _merged(
            owned_marshalled(component_pod, OME_POD_SPEC),
            marshalled(own_pod, OME_POD_SPEC, nulls=True),
            f"{path}.{block}" if path else block,
        )
        out[block] = {**folded, **{k: v for k, v in part.items() if k not in POD_SPEC_FIELDS}}
    return out


def fill_scheduler_name(
    piece: Mapping[str, Any], scheduler_name: Any, *, copy: bool = True
) -> dict[str, Any]:
    """The runtime's top-level ``schedulerName`` given to every level of the merged piece that has none
    (the piece, its ``leader`` and its ``worker``), as OME's ``MergeSchedulerName`` does after the
    merges in ``MergeRuntimeSpecs`` (its body is not in the index; this follows what ome-projects/ome
    ``merging_test.go`` ``TestMergeSchedulerName`` pins: set levels keep theirs, an empty top-level name
    changes nothing).

    ``copy=False``: ``piece`` is the caller's own plain dict (as :func:`merge_component_spec` returns
    it), filled in place and returned.
    """
    out: dict[str, Any]
    if copy:
        out = {k: clone(v) for k, v in piece.items()}
    else:
        assert isinstance(piece, dict)
        out = piece
    if not isinstance(scheduler_name, str) or not scheduler_name:
        return out
    for level in (out, out.get("leader"), out.get("worker")):
        if isinstance(level, dict) and not level.get("schedulerName"):
            level["schedulerName"] = scheduler_name
    return out


def _target_index(containers: Sequence[Any], name: str) -> int | None:
    """The first container whose name equals ``name`` exactly ("" finds a nameless one), as Go compares."""
    for i, container in enumerate(containers):
        if isinstance(container, Mapping) and (container.get("name") or "") == name:
            return i
    return None


def _str_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []
