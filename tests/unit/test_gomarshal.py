"""``omerender.gomarshal``: what Go's encoder writes of a typed struct, and its owned variant.

The merges' Go parity is pinned by ``tests/goparity`` and ``tests/differential``; here, the
marshallers built per Go type, and :func:`owned_marshalled`, whose result a merge keeps without
copying: equal to a copy of :func:`marshalled`'s, sharing nothing with the input or within itself, its
``omitempty`` decided on what the encoder writes (a tuple is not an empty list until it is copied).
"""

from __future__ import annotations

import os
from types import MappingProxyType
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omerender.gomarshal import CONTAINER, OME_POD_SPEC, marshalled, owned_marshalled
from omerender.jsonlike import clone
from omerender.runtime_gotypes import RUNTIME_SPEC

PROPERTY = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ.get("OMERENDER_MARSHAL_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_omitempty_and_zeros_by_field_type() -> None:
    container = {
        "name": "c",
        "image": "",  # string, omitempty: dropped
        "args": [],  # slice, omitempty: dropped
        "stdin": False,  # bool, omitempty: dropped
        "env": [None, {"name": "A", "value": ""}],  # a null struct item decodes to the zero struct
        "resources": {"limits": {"cpu": None}},  # a null quantity map value decodes to "0"
        "x-unknown": {"keep": 1, "gone": None, "empty": ""},  # opaque: its unset values dropped
    }
    assert marshalled(container, CONTAINER) == {
        "name": "c",
        "env": [{"name": ""}, {"name": "A"}],
        "resources": {"limits": {"cpu": "0"}},
        "x-unknown": {"keep": 1},
    }
    # A pod spec's `containers` has no omitempty in corev1.PodSpec; OME's PodSpec adds it.
    assert "containers" not in marshalled({}, OME_POD_SPEC, nulls=True)
    assert marshalled({}, "core/v1.PodSpec", nulls=True)["containers"] is None


def test_a_scalar_is_written_as_it_is_whatever_the_field_type() -> None:
    assert marshalled({"name": 3, "args": "a", "env": 1.5}, CONTAINER) == {"name": 3, "args": "a", "env": 1.5}


def test_owned_decides_omitempty_before_it_copies() -> None:
    # An empty tuple is not an empty JSON list to the encoder's omitempty test: marshalled keeps it
    # as it is, owned_marshalled keeps it too, as the list a copy makes of it.
    value = {"name": "c", "args": (), "x-unknown": ()}
    assert marshalled(value, CONTAINER) == {"name": "c", "args": (), "x-unknown": ()}
    assert owned_marshalled(value, CONTAINER) == {"name": "c", "args": [], "x-unknown": []}
    assert owned_marshalled(MappingProxyType({"name": "c"}), CONTAINER) == {"name": "c"}


def test_recursive_and_repeated_types_reuse_their_marshaller() -> None:
    spec = {"engineConfig": {"leader": {"containers": [{"name": "a", "args": []}]}}}
    first = marshalled(spec, RUNTIME_SPEC)
    assert marshalled(spec, RUNTIME_SPEC) == first
    assert first == {"engineConfig": {"leader": {"containers": [{"name": "a"}]}}}


junk = st.recursive(
    st.none() | st.booleans() | st.integers(-1, 2) | st.floats(-1, 1) | st.sampled_from(["", "a", "0"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=2).map(tuple)
        | st.dictionaries(st.sampled_from(["a", "name", "b"]), inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2).map(MappingProxyType)
    ),
    max_leaves=6,
)
container = st.fixed_dictionaries(
    {},
    optional={
        "name": st.sampled_from(["", "main"]) | junk,
        "args": st.lists(st.sampled_from(["", "--x"]), max_size=2) | junk,
        "env": st.lists(st.none() | st.fixed_dictionaries({"name": st.just("A")}, optional={"value": junk}))
        | junk,
        "resources": st.fixed_dictionaries({}, optional={"limits": junk, "requests": junk}) | junk,
        "livenessProbe": st.fixed_dictionaries({}, optional={"exec": junk, "periodSeconds": junk}) | junk,
        "stdin": junk,
        "x-unknown": junk,
    },
)


def _containers(value: Any, into: list[int]) -> list[int]:
    """The ids of every dict and list in ``value`` (the containers a caller could change)."""
    if isinstance(value, dict | list):
        into.append(id(value))
    if isinstance(value, dict | MappingProxyType):
        for item in value.values():
            _containers(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _containers(item, into)
    return into


@PROPERTY
@given(container, st.sampled_from([CONTAINER, "ome/v1beta1.EngineSpec", OME_POD_SPEC, "opaque"]))
def test_owned_is_a_copy_of_marshalled_sharing_nothing(value: dict[str, Any], typ: str) -> None:
    owned = owned_marshalled(value, typ)
    assert repr(owned) == repr(clone(marshalled(value, typ)))  # repr: False and 0 told apart
    ids = _containers(owned, [])
    assert len(ids) == len(set(ids)), "a container appears twice in the result"
    assert not set(ids) & set(_containers(value, [])), "the result shares a container with the input"
