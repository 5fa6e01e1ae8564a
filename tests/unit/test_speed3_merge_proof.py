"""An inheritance merge of two runtimes whose pieces pass ``check_piece`` passes it too, so the resolver
parses the merged runtime without checking its pieces again (``MERGED_FROM_CHECKED_PIECES``; the proof
is in ``omerender.inheritance``'s module doc).

Parents and children are drawn from small vocabularies so that their keys meet: same container, env,
port, volume and mount keys, with nulls, ``omitempty`` zeros, integral floats and values of the wrong
type mixed in. Whenever both validate in full, the merged runtime validates in full and the fast path
gives the same runtime. The merge never changes its inputs, and the resolver's remembered ancestor
specs stay what a fresh dump gives. A merge copies only the base values it keeps, and shares no dict
or list with its inputs, at every site.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omerender import Catalog
from omerender.errors import InvalidObjectError, RenderBlocked
from omerender.inheritance import InheritanceError, InheritanceReason, Resolver
from omerender.merge import (
    merge_containers,
    merge_inherited,
    strategic_merge,
)
from omerender.models import MERGED_FROM_CHECKED_PIECES, RuntimeResource, parse_object
from tests.unit.test_properties import PROPERTY

MORE = settings(PROPERTY, max_examples=300)

# Each slot: mostly good values, sometimes a zero Go's omitempty drops, a null, or a wrong type.
_WRONG = st.sampled_from(["x", 1, 1.5, 8080.0, True, [None], {"a": 1}, [1], None])


def _mixed(good: st.SearchStrategy[Any], zero: Any = None) -> st.SearchStrategy[Any]:
    # One slot in eighty wrong, one in eight a zero or null: most objects still validate as a whole.
    return st.integers(0, 79).flatmap(
        lambda pick: _WRONG if pick == 79 else st.just(zero) if pick >= 69 else good
    )


_env = st.fixed_dictionaries(
    {"name": st.sampled_from(["A", "B"])},
    optional={
        "value": _mixed(st.sampled_from(["1", "2", ""]), ""),
        "valueFrom": _mixed(st.just({"fieldRef": {"fieldPath": "metadata.name"}})),
    },
)
_port = st.fixed_dictionaries(
    {"containerPort": _mixed(st.sampled_from([8080, 9000]), 0)},
    optional={"name": st.sampled_from(["http", "grpc"]), "protocol": _mixed(st.just("TCP"), "")},
)
_mount = st.fixed_dictionaries(
    {"mountPath": st.sampled_from(["/m", "/dev/shm"])},
    optional={"name": _mixed(st.sampled_from(["m", "dshm"]), ""), "readOnly": _mixed(st.booleans(), False)},
)
_resources = st.fixed_dictionaries(
    {},
    optional={
        "limits": st.dictionaries(
            st.sampled_from(["cpu", "nvidia.com/gpu"]),
            _mixed(st.sampled_from(["1", 2, "500m", "bad"])),
            max_size=2,
        ),
        "requests": _mixed(st.fixed_dictionaries({"cpu": st.sampled_from(["1", "2"])}), {}),
    },
)
# Keyed lists are always drawn (often empty or zero): merging them item by item is the heart of it.
_container = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["ome-container", "side"]),
        "env": _mixed(st.lists(_env, max_size=2), []),
        "ports": _mixed(st.lists(_port, max_size=2), []),
    },
    optional={
        "image": _mixed(st.sampled_from(["img:1", "img:2"]), ""),
        "args": _mixed(st.lists(st.sampled_from(["--a", "--b"]), max_size=2), []),
        "volumeMounts": _mixed(st.lists(_mount, max_size=2), []),
        "resources": _mixed(_resources, {}),
        "readinessProbe": _mixed(
            st.fixed_dictionaries(
                {},
                optional={
                    "httpGet": st.just({"path": "/h", "port": "http"}),
                    "periodSeconds": st.integers(0, 3),
                },
            )
        ),
    },
)
_volume = st.fixed_dictionaries(
    {"name": st.sampled_from(["m", "dshm"])},
    optional={
        "emptyDir": _mixed(st.just({}), {}),
        "hostPath": _mixed(st.fixed_dictionaries({"path": st.sampled_from(["/a", "/b"])})),
    },
)
_pod = {
    "containers": _mixed(st.lists(_container, max_size=2), []),
    "volumes": _mixed(st.lists(_volume, max_size=2), []),
    "nodeSelector": _mixed(
        st.dictionaries(st.sampled_from(["pool", "zone"]), st.sampled_from(["a", "b"]), max_size=2)
    ),
    "tolerations": _mixed(st.lists(st.just({"key": "gpu", "operator": "Exists"}), max_size=1), []),
    "hostNetwork": _mixed(st.booleans(), False),
    "schedulerName": _mixed(st.just("sched"), ""),
    "terminationGracePeriodSeconds": _mixed(st.integers(0, 30)),
    "imagePullSecrets": _mixed(st.lists(st.fixed_dictionaries({"name": st.just("pull")}), max_size=1), []),
}
_KEYED = ("containers", "volumes")
_piece = st.fixed_dictionaries(
    {"runner": _mixed(_container), **{k: _pod[k] for k in _KEYED}},
    optional={
        **{k: v for k, v in _pod.items() if k not in _KEYED},
        "minReplicas": _mixed(st.integers(0, 2)),
        "maxReplicas": _mixed(st.integers(1, 3), 0),
        "labels": _mixed(
            st.dictionaries(st.sampled_from(["team", "tier"]), st.sampled_from(["a", ""]), max_size=2)
        ),
        "leader": _mixed(st.fixed_dictionaries({}, optional={**_pod, "runner": _mixed(_container)})),
        "worker": _mixed(
            st.fixed_dictionaries(
                {}, optional={**_pod, "runner": _mixed(_container), "size": _mixed(st.integers(0, 2))}
            )
        ),
        "config": _mixed(
            st.dictionaries(st.sampled_from(["A", "B"]), st.sampled_from(["1", "2"]), max_size=2)
        ),
    },
)
_spec = st.fixed_dictionaries(
    {"engineConfig": _mixed(_piece)},
    optional={
        "decoderConfig": _mixed(_piece),
        "routerConfig": _mixed(_piece),
        "disabled": _mixed(st.booleans()),
        "nodeSelector": st.dictionaries(st.sampled_from(["pool"]), st.sampled_from(["a", "b"]), max_size=1),
        "supportedModelFormats": st.lists(st.just({"name": "safetensors", "autoSelect": True}), max_size=1),
    },
)


def _runtime(name: str, spec: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if parent:
        meta["annotations"] = {"ome.io/inherit-from": parent}
    return {"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime", "metadata": meta, "spec": spec}


def _parsed(raw: dict[str, Any]) -> RuntimeResource | None:
    try:
        return parse_object(RuntimeResource, copy.deepcopy(raw))
    except InvalidObjectError:
        return None


def _dump(runtime: RuntimeResource) -> dict[str, Any]:
    return runtime.spec.model_dump(by_alias=True, exclude_unset=True, mode="json")


@MORE
@given(_spec, _spec)
def test_a_merge_of_valid_pieces_validates_and_the_fast_path_gives_the_same_runtime(
    parent_spec: dict[str, Any], child_spec: dict[str, Any]
) -> None:
    parent, child = _parsed(_runtime("p", parent_spec)), _parsed(_runtime("c", child_spec))
    if parent is None or child is None:
        return
    parent_dump, child_dump = _dump(parent), _dump(child)
    before = copy.deepcopy((parent_dump, child_dump))
    try:
        merged = merge_inherited(parent_dump, child_dump)
    except RenderBlocked:
        return  # an override item without its merge key: the merge itself refuses
    assert (parent_dump, child_dump) == before  # the merge never changes its inputs
    data = _runtime("c", merged)
    full = parse_object(RuntimeResource, copy.deepcopy(data))  # raises if the proof were wrong
    fast = parse_object(RuntimeResource, data, context={MERGED_FROM_CHECKED_PIECES: True})
    assert fast == full
    assert fast.model_dump_json() == full.model_dump_json()


@MORE
@given(_spec, _spec, _spec)
def test_the_resolver_gives_what_a_full_validation_of_the_chain_gives(
    root: dict[str, Any], middle: dict[str, Any], head: dict[str, Any]
) -> None:
    objects = [_runtime("root", root), _runtime("middle", middle, "root"), _runtime("head", head, "middle")]
    try:
        catalog = Catalog.from_objects(copy.deepcopy(objects))
    except InvalidObjectError:
        return
    resolver = Resolver(catalog)
    runtimes = {rt.metadata.name: rt for rt in catalog.runtimes.values()}
    fresh = {name: _dump(rt) for name, rt in runtimes.items()}
    try:
        resolved = resolver.resolve(runtimes["head"])
    except InheritanceError as exc:
        refused: InheritanceError | None = exc
    else:
        refused = None
    if refused is not None:
        assert refused.reason == InheritanceReason.RESOLVER_ERROR
        assert "merge" in refused.message  # a merge refusal, never a validation of the merged pieces
        return
    effective = merge_inherited(merge_inherited(fresh["root"], fresh["middle"]), fresh["head"])
    assert resolved.spec == effective
    assert resolved.runtime == parse_object(RuntimeResource, _runtime("head", effective, "middle"))
    # The remembered ancestor specs are the fresh dumps, unchanged by the merges that read them.
    assert resolver.resolve(runtimes["middle"]).spec == merge_inherited(fresh["root"], fresh["middle"])
    assert {name: _dump(rt) for name, rt in runtimes.items()} == fresh


def test_a_head_from_outside_the_catalog_is_checked_in_full() -> None:
    spec = {"engineConfig": {"runner": {"name": "ome-container", "image": "img:1"}}}
    catalog = Catalog.from_objects([_runtime("root", spec), _runtime("head", spec, "root")])
    own = catalog.runtime("ClusterServingRuntime", "", "head")
    assert own is not None
    resolver = Resolver(catalog)
    assert resolver.resolve(own).runtime.spec.engine_config == spec["engineConfig"]
    # Built without validation: its piece is one Go could not decode, and nothing checked it yet.
    broken_spec = own.spec.model_copy(update={"engine_config": {"runner": {"env": "not a list"}}})
    broken = own.model_copy(update={"spec": broken_spec})
    with pytest.raises(InheritanceError) as caught:
        resolver.resolve(broken)
    assert caught.value.reason == InheritanceReason.RESOLVER_ERROR
    assert "spec.engineConfig.runner.env" in caught.value.message


def test_the_fast_path_skips_only_the_piece_check() -> None:
    bad = _runtime("x", {"engineConfig": {"runner": {"env": "not a list"}}, "disabled": "maybe"})
    with pytest.raises(InvalidObjectError) as caught:
        parse_object(RuntimeResource, bad, context={MERGED_FROM_CHECKED_PIECES: True})
    fields = {problem.path for problem in caught.value.problems}
    assert fields == {"spec.disabled"}
    with pytest.raises(InvalidObjectError) as full:
        parse_object(RuntimeResource, bad)
    assert {problem.path for problem in full.value.problems} == {
        "spec.disabled",
        "spec.engineConfig.runner.env",
    }


# -- the merge copies only what it keeps of its base ---------------------------------------------------

_tree = st.recursive(
    st.none() | st.booleans() | st.integers(0, 2) | st.sampled_from(["", "a", "b"]),
    lambda inner: (
        st.lists(inner, max_size=2)
        | st.dictionaries(st.sampled_from(["name", "env", "containers", "args", "x", "y"]), inner, max_size=3)
        | st.lists(
            st.fixed_dictionaries({"name": st.sampled_from(["a", "b"])}, optional={"x": inner}), max_size=2
        )
    ),
    max_leaves=12,
)
_maps = st.dictionaries(
    st.sampled_from(["containers", "env", "volumes", "x", "y", "args"]), _tree, max_size=4
)


def _containers(value: Any) -> list[int]:
    """The ids of every dict and list inside ``value``."""
    found: list[int] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            found.append(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return found


@MORE
@given(_maps, _maps, st.sampled_from([strategic_merge, merge_inherited, merge_containers]))
def test_a_merge_shares_no_structure_with_its_inputs_and_leaves_them_alone(
    base: dict[str, Any], override: dict[str, Any], merge: Any
) -> None:
    before = copy.deepcopy((base, override))
    try:
        merged = merge(base, override)
    except RenderBlocked:
        return
    assert (base, override) == before
    assert not set(_containers(merged)) & {*_containers(base), *_containers(override)}
    # Merging copies gives the same: nothing depends on the inputs' identity.
    assert merged == merge(copy.deepcopy(base), copy.deepcopy(override))
