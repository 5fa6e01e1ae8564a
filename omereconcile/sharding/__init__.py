"""Sharding the reconciler over Kubernetes' sharded list and watch (KEP-5866): hash ranges, the
``shardSelector`` wire form, and (see :mod:`omereconcile.sharding.ranges`) the Go each mirrors."""

from omereconcile.sharding.filter import field_value, filter_items, in_shard, server_sharded, shard_query
from omereconcile.sharding.ownership import (
    RangeLease,
    RangePlan,
    fair_share,
    plan_ranges,
    range_lease_name,
    validate_timing,
)
from omereconcile.sharding.ranges import (
    HASH_SPACE,
    NAMESPACE_FIELD,
    UID_FIELD,
    SelectorError,
    ShardRange,
    ShardSelector,
    balanced_ranges,
    cuts_text,
    fnv1a_64,
    hash_field,
    parse_cuts,
    parse_selector,
    split_ranges,
)

__all__ = [
    "HASH_SPACE",
    "NAMESPACE_FIELD",
    "UID_FIELD",
    "RangeLease",
    "RangePlan",
    "SelectorError",
    "ShardRange",
    "ShardSelector",
    "balanced_ranges",
    "cuts_text",
    "fair_share",
    "field_value",
    "filter_items",
    "fnv1a_64",
    "hash_field",
    "in_shard",
    "parse_cuts",
    "parse_selector",
    "plan_ranges",
    "range_lease_name",
    "server_sharded",
    "shard_query",
    "split_ranges",
    "validate_timing",
]
