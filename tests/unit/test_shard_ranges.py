"""The shard hash and selector agree with the API server's Go (k8s.io/apimachinery and
k8s.io/apiserver v0.36.3, pkg/sharding): an object the server sends a process is one the process's
client-side filter keeps, and a selector the process sends is one the server parses."""

from __future__ import annotations

import itertools

import pytest

from omereconcile.sharding import (
    HASH_SPACE,
    NAMESPACE_FIELD,
    UID_FIELD,
    SelectorError,
    ShardRange,
    ShardSelector,
    fnv1a_64,
    hash_field,
    parse_selector,
    range_index,
    split_ranges,
)

# Printed by Go 1.x: h := fnv.New64a(); h.Write([]byte(s)); fmt.Printf("%016x", h.Sum64()) —
# the body of apimachinery's HashField. The first four are the inputs of its hash_test.go.
GO_FNV1A_64 = {
    "": "cbf29ce484222325",
    "abc": "e71fa2190541574b",
    "test-uid-12345": "d4c53b72f9287c28",
    "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee": "93754b7248a00eb9",
    "a": "af63dc4c8601ec8c",
    "test": "f9e6e6ef197c2b25",
    "default": "ebada5168620c5fe",
    "kube-system": "df65c7bc1d82b35e",
    "team-a": "de90a3717d1252d6",
}


@pytest.mark.parametrize(("value", "want"), sorted(GO_FNV1A_64.items()))
def test_hash_is_gos_fnv1a_64(value: str, want: str) -> None:
    assert hash_field(value) == want
    assert fnv1a_64(value) == int(want, 16)


def test_hash_of_non_ascii_is_over_utf8_bytes() -> None:
    # Go hashes the string's bytes; a namespace is ASCII, but a uid read from elsewhere might not be.
    assert fnv1a_64("é") == fnv1a_64("\xc3\xa9".encode("latin-1").decode("utf-8"))
    assert fnv1a_64("é") != fnv1a_64("e")


# k8s.io/apiserver/pkg/sharding/parser_test.go TestParseRoundTrip: String() gives the input back.
ROUND_TRIP = [
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.namespace, '0x00000000000000aa', '0x00000000000000ff')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || "
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_selector_round_trips_as_go_prints_it(text: str) -> None:
    assert parse_selector(text).to_string() == text


def test_parse_accepts_gos_whitespace_cases() -> None:
    a = parse_selector("shardRange(object.metadata.uid,'0x0000000000000000','0x8000000000000000')")
    b = parse_selector(
        "  shardRange( object.metadata.uid ,  '0x0000000000000000' ,  '0x8000000000000000' )  "
    )
    assert a == b == ShardSelector(UID_FIELD, (ShardRange(0, 1 << 63),))
    three = parse_selector(
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000005') || "
        "shardRange(object.metadata.uid, '0x0000000000000005', '0x000000000000000a') || "
        "shardRange(object.metadata.uid, '0x000000000000000a', '0x000000000000000f')"
    )
    assert three.ranges == (ShardRange(0, 5), ShardRange(5, 10), ShardRange(10, 15))


# k8s.io/apiserver/pkg/sharding/parser_test.go TestParse: every case Go refuses.
GO_REFUSES = [
    "",
    "shardRange(object.metadata.uid, '0000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '8000000000000000')",
    "shardRange(object.metadata.uid, '0x', '0x8000000000000000')",
    "shardRange(object.metadata.name, '0x00', '0x80')",
    "shardRange(object.metadata.labels, '0x00', '0x80')",
    "invalidFunc(object.metadata.uid, '0x00', '0x80')",
    "shardRange(object.metadata.uid, '0x000000000000000000', '0x80')",
    "shardRange(object.metadata.uid, '0x0g', '0x80')",
    "shardRange(object.metadata.uid, '0x0', '0x8') && shardRange(object.metadata.uid, '0x8', '0xf')",
    "shardRange(object.metadata.uid, 0, 8)",
    "object.metadata.uid > '0x0'",
    "shardRange(object.metadata.uid, '0x0')",
    "shardRange(object.metadata.uid, hex(0), '0x8')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || "
    "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
    "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0xff')",
    "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')",
    "shardRange(object.metadata.uid, '0xffffffffffffffff', '0x0000000000000000')",
]


@pytest.mark.parametrize("text", GO_REFUSES)
def test_parse_refuses_what_go_refuses(text: str) -> None:
    with pytest.raises(SelectorError):
        parse_selector(text)


def test_short_bound_error_says_the_padded_fix() -> None:
    with pytest.raises(SelectorError, match=r"did you mean '0x0000000000000000'"):
        parse_selector("shardRange(object.metadata.uid, '0x0', '0x8000000000000000')")


def test_matches_is_half_open_as_gos() -> None:
    # selector_test.go: [h, h+1) holds h; [0, h) does not; the full space holds everything.
    h = fnv1a_64("test-uid-123")
    assert ShardSelector(UID_FIELD, (ShardRange(h, h + 1),)).matches("test-uid-123")
    assert not ShardSelector(UID_FIELD, (ShardRange(0, h),)).matches("test-uid-123")
    assert ShardSelector(UID_FIELD, (ShardRange(0, HASH_SPACE),)).matches("test-uid-123")
    assert ShardSelector(NAMESPACE_FIELD, (ShardRange(0, 1), ShardRange(h, h + 1))).matches("test-uid-123")


@pytest.mark.parametrize("count", [1, 2, 3, 7, 16, 64])
def test_split_covers_the_space_once(count: int) -> None:
    ranges = split_ranges(count)
    assert len(ranges) == count
    assert ranges[0].start == 0
    assert ranges[-1].end == HASH_SPACE
    assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
    sizes = {r.end - r.start for r in ranges}
    assert max(sizes) - min(sizes) <= 1
    # each namespace lands in exactly one range; the selector of all ranges parses back identical
    for ns in ("default", "team-a", "kube-system", "ns-0", "ns-29"):
        assert sum(r.contains(ns) for r in ranges) == 1
    whole = ShardSelector(NAMESPACE_FIELD, ranges)
    assert parse_selector(whole.to_string()) == whole


def test_split_refuses_zero() -> None:
    with pytest.raises(SelectorError, match="1 or more"):
        split_ranges(0)


def test_range_index_is_the_range_a_value_hashes_into() -> None:
    ranges = split_ranges(5)
    for ns in ("default", "team-a", "kube-system", ""):
        i = range_index(ranges, ns)
        assert i is not None
        assert ranges[i].contains(ns)
        assert [k for k, r in enumerate(ranges) if r.contains(ns)] == [i]
    for k in range(5):  # one range: its index when the value falls in it, else none
        assert range_index(ranges[k : k + 1], "default") == (
            0 if k == range_index(ranges, "default") else None
        )
    assert range_index((), "default") is None
