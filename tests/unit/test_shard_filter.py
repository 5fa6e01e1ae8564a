"""The client-side fallback keeps exactly what a sharded server would send, and a list is recognised
as server-sharded only when it echoes this process's selector."""

from __future__ import annotations

from omereconcile.sharding import (
    HASH_SPACE,
    NAMESPACE_FIELD,
    UID_FIELD,
    ShardSelector,
    balanced_ranges,
    filter_items,
    in_shard,
    server_sharded,
    shard_query,
    split_ranges,
)


def _obj(ns: str, uid: str = "u") -> dict[str, object]:
    return {"metadata": {"namespace": ns, "name": "x", "uid": uid}}


def test_equal_ranges_leave_sequential_namespaces_unbalanced() -> None:
    # Why balanced_ranges exists: FNV-1a clusters names that differ only at the end.
    objs = [_obj(f"ns-{i}") for i in range(30)]
    parts = [filter_items(objs, ShardSelector(NAMESPACE_FIELD, (r,))) for r in split_ranges(3)]
    assert sum(len(p) for p in parts) == len(objs)  # each namespace still in exactly one process
    assert sorted(len(p) for p in parts) == [0, 10, 20]


def test_balanced_ranges_partition_a_fleet_evenly() -> None:
    names = [f"ns-{i}" for i in range(30)]
    ranges = balanced_ranges(reversed(names), 3)
    assert ranges == balanced_ranges(names, 3)  # every process computes the same cuts
    assert ranges[0].start == 0
    assert ranges[-1].end == HASH_SPACE
    objs = [_obj(n) for n in names]
    parts = [filter_items(objs, ShardSelector(NAMESPACE_FIELD, (r,))) for r in ranges]
    assert [len(p) for p in parts] == [10, 10, 10]
    assert balanced_ranges(["a"], 2) == split_ranges(2)


def test_uid_selector_reads_the_uid() -> None:
    whole = split_ranges(2)
    a, b = (ShardSelector(UID_FIELD, (r,)) for r in whole)
    o = _obj("same-ns", uid="aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")  # hash 0x9375... : upper half
    assert not in_shard(o, a)
    assert in_shard(o, b)


def test_cluster_scoped_object_hashes_the_empty_namespace() -> None:
    node = {"metadata": {"name": "n1", "uid": "u1"}}
    sels = [ShardSelector(NAMESPACE_FIELD, (r,)) for r in split_ranges(4)]
    assert [in_shard(node, s) for s in sels].count(True) == 1  # "" hashes to 0xcbf2...: range 3 of 4
    assert in_shard(node, sels[3])


def test_echo_detection() -> None:
    sel = ShardSelector(NAMESPACE_FIELD, split_ranges(2)[:1])
    assert shard_query(sel) == {
        "shardSelector": "shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')"
    }
    assert shard_query(None) == {}
    assert server_sharded({"metadata": {"shardInfo": {"selector": sel.to_string()}}}, sel)
    assert not server_sharded({"metadata": {"resourceVersion": "5"}}, sel)  # gate off: no echo
    other = ShardSelector(NAMESPACE_FIELD, split_ranges(2)[1:])
    assert not server_sharded({"metadata": {"shardInfo": {"selector": other.to_string()}}}, sel)
