"""Strategic merges of pod specs and runtime specs, as OME does them (02 §3.2–§3.3, 01 §2.4).

Everything here is a pure function on JSON-like data (dicts, lists, scalars): inputs are never mutated
and results share no mutable structure with them.

One mechanism, three uses, chosen by :class:`MergeOptions`:

* :func:`strategic_merge` — a Kubernetes strategic merge patch (SMP) of ``override`` onto ``base``, the
  way OME's ``utils/merging.go mergeSpec`` calls ``strategicpatch.StrategicMergePatch``.
* :func:`merge_runner_into_pod` — OME's ``MergeRuntimeContainers``: SMP of the runner over the pod
  container of the same name, then ``args`` = container args + runner args.
* :func:`merge_inherited` — runtime inheritance (``ome.io/inherit-from``): the child's spec, as Go's
  encoder writes the typed struct (:mod:`omerender.runtime_gotypes`), over the parent's.

**Which lists are keyed.** Kubernetes reads the merge key from the Go struct tag of the field
(``patchMergeKey``). We decide by the JSON field name alone (:data:`MERGE_KEYS`): in a PodSpec, and in
OME's ServingRuntimeSpec built from it, each of these names means one field wherever it appears (``ports``
only ever sits on a container, ``env`` only on a container, ``volumes`` only on the pod), so the name is
as good as the path. Lists under any other name are atomic and replaced whole (``tolerations``, ``args``,
``command``, ``envFrom``, ``readinessGates``, ``nodeSelectorTerms``, ``supportedModelFormats``, …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, TypeGuard

from omerender.constants import MAIN_CONTAINER
from omerender.errors import BlockReason, RenderBlocked
from omerender.jsonlike import clone
from omerender.runtime_gotypes import go_marshalled

__all__ = [
    "INHERITANCE",
    "MERGE_KEYS",
    "RETAIN_KEYS",
    "RUNNER_OVER_CONTAINER",
    "SMP",
    "MergeOptions",
    "main_container_index",
    "merge_inherited",
    "merge_runner_into_pod",
    "strategic_merge",
]

# Field name -> merge key, from the patchMergeKey tags of k8s.io/api/core/v1 (PodSpec, Container,
# EphemeralContainer). The first ten are the ones 02 §3.2 / 01 §2.4 name; ``volumeDevices``,
# ``resourceClaims`` and ``schedulingGates`` carry the same kind of tag, so OME merges them by key too.
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

# Keyed lists whose patch strategy also says ``retainKeys``: an item of the override replaces the base
# item with the same key whole, so a volume can switch from ``hostPath`` to ``emptyDir`` cleanly.
RETAIN_KEYS: Final = frozenset({"volumes", "resourceClaims"})


@dataclass(frozen=True, slots=True)
class MergeOptions:
    """How the override's values are read.

    ``null_deletes``: a JSON null in the override deletes the key (SMP). When False a null is "unset".
    ``empty_is_unset``: ``[]`` and ``""`` in the override leave the base value alone, as they do when OME
    marshals a typed Go struct whose fields are ``omitempty``. (``{}`` needs no flag: merging it is a
    no-op over a base value, and where there is none it is kept, as ``emptyDir: {}`` must be.)
    ``retain_keys``: honour :data:`RETAIN_KEYS` (replace same-key items whole) instead of merging them.
    """

    null_deletes: bool = True
    empty_is_unset: bool = False
    retain_keys: bool = True


# Plain SMP, as 02 §3.2 describes it.
SMP: Final = MergeOptions()
# Runtime inheritance (01 §2.4) over a child already reduced to what Go writes (go_marshalled): every
# value left is a real one. Same-named volumes merge field by field: a marshalled child carries no
# `$retainKeys` directive (OME's runtime-inheritance page warns that switching a volume's source in a
# child leaves both).
INHERITANCE: Final = MergeOptions(null_deletes=False, empty_is_unset=False, retain_keys=False)
# The runner over its container: OME marshals both typed Containers, so an empty or null field of the
# runner is simply absent and never wipes the container's value.
RUNNER_OVER_CONTAINER: Final = MergeOptions(null_deletes=False, empty_is_unset=True)


def strategic_merge(
    base: Mapping[str, Any],
    override: Mapping[str, Any],
    *,
    path: str = "",
    options: MergeOptions = SMP,
) -> dict[str, Any]:
    """``override`` laid over ``base`` with Kubernetes strategic-merge semantics.

    * maps merge key by key, the override winning (``nodeSelector``, ``labels``, ``resources.limits``, …);
    * nested objects merge recursively (``affinity``, probes, ``securityContext``);
    * keyed lists (:data:`MERGE_KEYS`) merge item by item: override items first, in override order
      (merged with the base item of the same key), then base-only items in base order;
    * every other list, and every scalar, is replaced by the override's value;
    * a JSON null in the override deletes the key (with the default options).

    ``path`` prefixes the location in error messages (``spec.engineConfig``). Raises ``RenderBlocked``
    (``RenderFailed``) when an override item of a keyed list lacks its merge key, as SMP refuses it.
    """
    return _merge_maps(base, override, path, options)


def merge_inherited(parent_spec: Mapping[str, Any], child_spec: Mapping[str, Any]) -> dict[str, Any]:
    """A child runtime's spec over its parent's effective spec (01 §2.4), as OME's
    ``runtimeinheritance.Merge`` does it (sgl-project/ome ``pkg/runtimeinheritance/merge.go``).

    The child is first reduced to what ``json.Marshal`` of the typed Go struct writes, nulls stripped
    (:func:`omerender.runtime_gotypes.go_marshalled`): an ``omitempty`` field at its zero value
    (``hostNetwork: false``, ``maxReplicas: 0``, ``[]``, ``""``) is not written and leaves the parent's
    value, a pointer field (``disabled: false``) is written and wins. Then scalars replace; objects
    (``runner``, ``engineConfig``, …) merge field by field; maps merge by key; keyed lists merge by
    key (same-named volumes field by field); other lists, such as ``supportedModelFormats``, ``args``
    and ``tolerations``, replace. A ``{}`` the parent lacks is kept, so a child's ``emptyDir: {}``
    volume stays a volume.
    """
    return _merge_maps(parent_spec, go_marshalled(child_spec), "spec", INHERITANCE)


def merge_runner_into_pod(pod_spec: Mapping[str, Any], runner: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge ``runner`` into its pod container (02 §3.3, OME ``MergeRuntimeContainers``).

    * No runner: the pod is returned as is (a copy); its first container is the main one. No runner and
      no containers raises ``RenderBlocked(RenderFailed)``: there would be nothing to run.
    * The target is the container named ``runner.name``; the runner is merged over it in place, then
      ``args`` become the container's args followed by the runner's (SMP alone would replace them).
      A merged container left without a name keeps the container's own.
    * No container of that name: the runner, merged over an empty container, is appended
      (``PodSpecReconciler.resolveContainer``). A runner without a name looks for a container without a
      name, so next to named containers it is appended too; a merged container left without any name is
      named ``ome-container`` (``constants.MainContainerName``, which OME's merge stamps).
    """
    pod = _copy_map(pod_spec)
    containers = pod.get("containers")
    if not isinstance(containers, list):
        containers = []
    if runner is None:
        if not containers:
            raise RenderBlocked(
                BlockReason.RENDER_FAILED,
                "the pod spec has no containers and no runner: there is no main container to run",
            )
        return pod
    name = runner.get("name") or ""
    index = _target_index(containers, name)
    if index is None:
        containers = [*containers, {}]
        index = len(containers) - 1
    target = containers[index]
    target = target if isinstance(target, Mapping) else {}
    merged = _merge_maps(target, runner, f"containers[{index}]", RUNNER_OVER_CONTAINER)
    if not merged.get("name"):
        merged["name"] = target.get("name") or name or MAIN_CONTAINER
    args = [*_str_list(target.get("args")), *_str_list(runner.get("args"))]
    if args:
        merged["args"] = args
    else:
        merged.pop("args", None)
    containers = [*containers[:index], merged, *containers[index + 1 :]]
    pod["containers"] = containers
    return pod


def main_container_index(pod_spec: Mapping[str, Any], runner: Mapping[str, Any] | None) -> int:
    """Index of the main container in a pod already passed through :func:`merge_runner_into_pod`.

    The container named after the runner (``ome-container`` for a nameless runner), else the first one.
    """
    containers = pod_spec.get("containers")
    if not isinstance(containers, list) or not containers:
        raise RenderBlocked(BlockReason.RENDER_FAILED, "the pod spec has no containers")
    if runner is None:
        return 0
    index = _target_index(containers, runner.get("name") or MAIN_CONTAINER)
    return 0 if index is None else index


# -- the mechanism ------------------------------------------------------------------------------


def _target_index(containers: Sequence[Any], name: str) -> int | None:
    """The container whose name equals ``name`` exactly ("" finds a nameless one), as Go compares."""
    for i, container in enumerate(containers):
        if isinstance(container, Mapping) and (container.get("name") or "") == name:
            return i
    return None


def _str_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _is_empty(value: Any) -> bool:
    """``""`` and ``[]``: what Go's ``omitempty`` drops. 0 and false are real values.

    ``{}`` is deliberately not here: merging it changes nothing where the base has a value, which is
    "unset", yet it must survive where the base has none, because ``emptyDir: {}`` is a whole volume
    source (Go keeps a pointer to an empty struct as ``{}``).
    """
    return value == "" or (isinstance(value, list | tuple) and len(value) == 0)


def _merge_maps(
    base: Mapping[str, Any], override: Mapping[str, Any], path: str, options: MergeOptions
) -> dict[str, Any]:
    # Base order, then the override's new keys. Base values are copied last, and only those the
    # override leaves: a value it merges into or replaces would be copied for nothing.
    out: dict[str, Any] = dict(base)
    made: set[str] = set()
    null_deletes, empty_is_unset = options.null_deletes, options.empty_is_unset
    for key, value in override.items():
        # A value that leaves the base alone: null unless it deletes, and empties where they are unset.
        if value is None:
            if null_deletes:
                out.pop(key, None)
            continue
        if empty_is_unset and _is_empty(value):
            continue
        current = base.get(key)
        if _is_map(value) and _is_map(current):
            out[key] = _merge_maps(current, value, f"{path}.{key}" if path else key, options)
        elif isinstance(value, list | tuple) and isinstance(current, list | tuple) and key in MERGE_KEYS:
            retain = options.retain_keys and key in RETAIN_KEYS
            where = f"{path}.{key}" if path else key
            out[key] = _merge_keyed(current, value, MERGE_KEYS[key], retain, where, options)
        else:
            # Nothing to merge with (or a different type): SMP takes the patch value as it is.
            out[key] = _clean(value, options)
        made.add(key)
    for key, value in out.items():
        if key not in made:
            out[key] = _copy(value)  # replaces the value of a key already there: no resize
    return out


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    return type(value) is dict or isinstance(value, Mapping)  # the exact type first: ABC checks are slow


def _merge_keyed(
    base: Sequence[Any],
    override: Sequence[Any],
    merge_key: str,
    retain: bool,
    path: str,
    options: MergeOptions,
) -> list[Any]:
    """Override items first (merged with the first base item of the same key), then base-only items.

    Two override items with one key fold into the first one's slot; base items that no override item
    claims (including extra base items sharing a claimed key) keep their base order after them.
    """
    base_index: dict[Any, int] = {}
    for i, item in enumerate(base):
        if isinstance(item, Mapping) and item.get(merge_key) is not None:
            base_index.setdefault(_hashable(item[merge_key]), i)

    merged: list[dict[str, Any]] = []
    slot: dict[Any, int] = {}
    claimed: set[int] = set()
    for n, item in enumerate(override):
        where = f"{path}[{n}]"
        if not isinstance(item, Mapping) or item.get(merge_key) is None:
            raise RenderBlocked(
                BlockReason.RENDER_FAILED,
                f"{where}: list item does not contain declared merge key: {merge_key}",
            )
        key = _hashable(item[merge_key])
        if key in slot:
            merged[slot[key]] = _item_merge(merged[slot[key]], item, retain, where, options)
            continue
        partner: Mapping[str, Any] = {}
        if key in base_index:
            claimed.add(base_index[key])
            partner = base[base_index[key]]
        slot[key] = len(merged)
        merged.append(_item_merge(partner, item, retain, where, options))

    rest = [_copy(item) for i, item in enumerate(base) if i not in claimed]
    return [*merged, *rest]


def _item_merge(
    base: Mapping[str, Any], item: Mapping[str, Any], retain: bool, path: str, options: MergeOptions
) -> dict[str, Any]:
    if retain:
        # retainKeys: the override item is the whole item; nothing of the base item survives.
        return _clean_map(item, options)
    return _merge_maps(base, item, path, options)


def _hashable(value: Any) -> Any:
    # Merge keys are strings or ints in practice; anything else is compared by its repr.
    return value if isinstance(value, str | int | float | bool) else repr(value)


def _clean(value: Any, options: MergeOptions) -> Any:
    """A copy of an override value that has no base counterpart, with unset entries dropped.

    SMP drops nulls anywhere inside a value it takes whole (``discardNullValuesFromPatch``); with
    ``empty_is_unset`` empties go too, as ``omitempty`` would drop them.
    """
    cls = type(value)  # exact types first, as in _copy
    if cls is str or cls is int or cls is bool or cls is float:
        return value
    if cls is dict or isinstance(value, Mapping):
        return _clean_map(value, options)
    if cls is list or isinstance(value, list | tuple):
        return [_clean(v, options) for v in value]
    return value


def _clean_map(value: Mapping[str, Any], options: MergeOptions) -> dict[str, Any]:
    if options.empty_is_unset:
        return {k: _clean(v, options) for k, v in value.items() if v is not None and not _is_empty(v)}
    return {k: _clean(v, options) for k, v in value.items() if v is not None}


def _copy(value: Any) -> Any:
    """Deep copy of JSON-like data (tuples become lists, as in JSON); scalars are immutable."""
    return clone(value)


def _copy_map(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _copy(v) for k, v in value.items()}
