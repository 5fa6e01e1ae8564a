"""Sharding the reconciler over Kubernetes' sharded list and watch (KEP-5866): hash ranges, the
``shardSelector`` wire form, and (see :mod:`omereconcile.sharding.ranges`) the Go each mirrors."""

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
    fnv1a_64,
    hash_field,
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
    "fair_share",
    "fnv1a_64",
    "hash_field",
    "parse_selector",
    "plan_ranges",
    "range_lease_name",
    "split_ranges",
    "validate_timing",
]
