"""FNV-32a in C (the ``fnv-hash-fast`` wheel) and in Python (the fallback) give the same hashes, and
the revision hash is the same whichever one runs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omerender import revision
from omerender.revision import FNV_IN_C, fnv32a, fnv32a_python, revision_hash

OFFSET = 0x811C9DC5


def _reference(data: bytes, h: int = OFFSET) -> int:
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def test_the_wheel_is_installed_and_compiled() -> None:
    # The project depends on fnv-hash-fast; a build without its C extension would silently be slower.
    assert FNV_IN_C


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300), start=st.integers(min_value=0, max_value=2**32 - 1))
def test_c_and_python_agree_with_the_definition(data: bytes, start: int) -> None:
    assert fnv32a(data) == fnv32a_python(data) == _reference(data)
    assert fnv32a(data, start) == fnv32a_python(data, start) == _reference(data, start)


@settings(max_examples=100, deadline=None)
@given(
    payload=st.binary(max_size=2000),
    collision_count=st.integers(min_value=0, max_value=2**31),
    uid=st.text(max_size=40),
)
def test_the_revision_hash_does_not_depend_on_which_fnv_runs(
    payload: bytes, collision_count: int, uid: str
) -> None:
    with_c = revision_hash(payload, collision_count=collision_count, scope_uid=uid)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(revision, "_C_FNV", None)  # as where the wheel is missing
        without = revision_hash(payload, collision_count=collision_count, scope_uid=uid)
    expected = _reference(payload + f"|cc={collision_count}||uid={uid}|".encode())
    assert with_c == without == f"{expected:08x}"
