"""Server-side sharded lists and watches, and the client-side filter when the server does not shard.

The API server (k8s.io/apiserver v0.36.3) honours ``shardSelector`` only with the ``ShardedListAndWatch``
gate on (``pkg/registry/generic/registry/store.go``: ``Enabled(features.ShardedListAndWatch) &&
options.ShardSelector != ""``); otherwise it ignores the parameter and sends everything. On a sharded
list it echoes the parsed selector's ``String()`` in ``metadata.shardInfo.selector``
(``pkg/storage/selection_predicate.go`` ``SetShardInfoOnList``), which is :meth:`ShardSelector.to_string`
of the selector we sent. No echo means: filter here, by the same hash, with the same result.

Both fields a selector may use (namespace, uid) are immutable, so an object never moves between
shards: a watch never needs a synthetic delete for an object that "left" the range.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from omereconcile.sharding.ranges import NAMESPACE_FIELD, ShardSelector

__all__ = ["field_value", "filter_items", "in_shard", "server_sharded", "shard_query"]


def shard_query(selector: ShardSelector | None) -> dict[str, str]:
    """The query parameters of a sharded list or watch (none without a selector)."""
    return {} if selector is None else {"shardSelector": selector.to_string()}


def server_sharded(listed: Mapping[str, Any], selector: ShardSelector) -> bool:
    """Whether the API server applied ``selector`` to this list (it echoed it in ``shardInfo``)."""
    meta = listed.get("metadata") or {}
    info = meta.get("shardInfo") or {}
    return bool(info.get("selector") == selector.to_string())


def field_value(obj: Mapping[str, Any], field: str) -> str:
    """The value the server hashes (apimachinery ``ResolveFieldValue``): namespace ("" when
    cluster-scoped) or uid."""
    meta = obj.get("metadata") or {}
    key = "namespace" if field == NAMESPACE_FIELD else "uid"
    return str(meta.get(key) or "")


def in_shard(obj: Mapping[str, Any], selector: ShardSelector | None) -> bool:
    """Whether ``obj`` belongs to this process's ranges (always, without a selector)."""
    return selector is None or selector.matches(field_value(obj, selector.field))


def filter_items(
    items: Iterable[Mapping[str, Any]], selector: ShardSelector | None
) -> list[Mapping[str, Any]]:
    """The client-side filter: the items the server would have sent for ``selector``."""
    return [o for o in items if in_shard(o, selector)]
