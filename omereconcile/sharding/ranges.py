"""Hash ranges and the ``shardSelector`` of Kubernetes' sharded list and watch (KEP-5866, alpha in
1.36, feature gate ``ShardedListAndWatch``), computed exactly as the API server computes them.

Pure: no I/O, clock or client. The Go this mirrors (k8s.io/apimachinery and k8s.io/apiserver v0.36.3,
read from the Go module proxy):

- ``k8s.io/apimachinery/pkg/sharding/hash.go`` ``HashField``: FNV-1a 64 (Go's ``hash/fnv.New64a``) of the
  field's bytes, printed as 16 lowercase hex digits.
- ``k8s.io/apimachinery/pkg/sharding/accessor.go`` ``ResolveFieldValue``: the only fields are
  ``object.metadata.uid`` and ``object.metadata.namespace`` (a cluster-scoped object's namespace is "").
- ``k8s.io/apimachinery/pkg/sharding/selector.go`` ``shardSelector.Matches`` / ``HexLess`` / ``String``:
  a hash matches when ``start <= hash < end`` for any requirement; ``String`` joins
  ``shardRange(KEY, 'START', 'END')`` with ``" || "``.
- ``k8s.io/apiserver/pkg/sharding/parser.go`` ``Parse`` / ``extractHexLiteral``: bounds are
  ``0x`` + exactly 16 lowercase hex digits, or ``0x10000000000000000`` (2^64) as the exclusive end;
  ``start < end``; every range of one selector uses the same field; an empty selector is refused.

Go parses the selector with the CEL parser; :func:`parse_selector` accepts the subset a selector is
made of (``shardRange`` calls joined by ``||``, single- or double-quoted literals, any whitespace) and
refuses the rest, so it may refuse an exotic spelling (parentheses around a call) the server accepts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

__all__ = [
    "HASH_SPACE",
    "NAMESPACE_FIELD",
    "UID_FIELD",
    "SelectorError",
    "ShardRange",
    "ShardSelector",
    "balanced_ranges",
    "cuts_text",
    "fnv1a_64",
    "hash_field",
    "parse_cuts",
    "parse_selector",
    "range_index",
    "split_ranges",
]

HASH_SPACE = 1 << 64
NAMESPACE_FIELD = "object.metadata.namespace"
UID_FIELD = "object.metadata.uid"
_FIELDS = (UID_FIELD, NAMESPACE_FIELD)

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3
_MASK64 = HASH_SPACE - 1


class SelectorError(ValueError):
    """A shard selector the API server would refuse; the message names the part and the fix."""


def fnv1a_64(value: str) -> int:
    """FNV-1a 64 of ``value``'s UTF-8 bytes, as Go's ``hash/fnv.New64a().Sum64()``."""
    h = _FNV64_OFFSET
    for byte in value.encode("utf-8"):
        h ^= byte
        h = (h * _FNV64_PRIME) & _MASK64
    return h


def hash_field(value: str) -> str:
    """``HashField`` of apimachinery: 16 lowercase hex digits, no ``0x``."""
    return f"{fnv1a_64(value):016x}"


def _hex(bound: int) -> str:
    return "0x10000000000000000" if bound == HASH_SPACE else f"0x{bound:016x}"


@dataclass(frozen=True, order=True)
class ShardRange:
    """The half-open hash range ``[start, end)``, ``0 <= start < end <= 2**64``."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end <= HASH_SPACE:
            raise SelectorError(
                f"shard range [{self.start:#x}, {self.end:#x}) is empty or outside [0, 2^64): "
                "start must be below end, both within the 64-bit hash space"
            )

    def contains(self, value: str) -> bool:
        """Whether the field value ``value`` hashes into this range."""
        return self.start <= fnv1a_64(value) < self.end

    @property
    def hex_start(self) -> str:
        return _hex(self.start)

    @property
    def hex_end(self) -> str:
        return _hex(self.end)


def range_index(ranges: Sequence[ShardRange], value: str) -> int | None:
    """The index of the first of ``ranges`` the field value ``value`` hashes into (hashed once); None
    when none does."""
    h = fnv1a_64(value)
    return next((i for i, r in enumerate(ranges) if r.start <= h < r.end), None)


def split_ranges(count: int) -> tuple[ShardRange, ...]:
    """``count`` contiguous ranges covering the hash space, as equal as integers allow (the first
    ``2**64 % count`` ranges are one hash longer). Every process must use the same ``count``."""
    if count < 1:
        raise SelectorError(f"the number of shard ranges is {count}; it must be 1 or more")
    base, extra = divmod(HASH_SPACE, count)
    out: list[ShardRange] = []
    start = 0
    for i in range(count):
        end = start + base + (1 if i < extra else 0)
        out.append(ShardRange(start, end))
        start = end
    return tuple(out)


def balanced_ranges(values: Iterable[str], count: int) -> tuple[ShardRange, ...]:
    """``count`` contiguous ranges covering the hash space, cut so each holds an equal share (within
    one) of the distinct ``values`` given (e.g. the fleet's namespaces).

    Why not :func:`split_ranges`: FNV-1a's last bytes barely reach the hash's high bits, so names that
    differ only at the end cluster. The namespaces ``ns-0`` .. ``ns-299`` fall in 4 of 256 equal ranges
    (2 of 3: 10, 290, 0), while random uids spread evenly. Cuts are the hash of the first value of each
    share, so any process given the same values computes the same ranges. With fewer distinct values
    than ``count`` the equal split is returned (some ranges then hold nothing)."""
    hashes = sorted({fnv1a_64(v) for v in values})
    if count < 1:
        raise SelectorError(f"the number of shard ranges is {count}; it must be 1 or more")
    if len(hashes) < count:
        return split_ranges(count)
    cuts = [0] + [hashes[(k * len(hashes)) // count] for k in range(1, count)] + [HASH_SPACE]
    return tuple(ShardRange(a, b) for a, b in pairwise(cuts))


def cuts_text(ranges: Iterable[ShardRange]) -> str:
    """The inner cuts of contiguous ranges as text (``0x<16 hex>`` joined by commas), as stored for
    every process to read (``parse_cuts``)."""
    return ",".join(_hex(r.start) for r in list(ranges)[1:])


def parse_cuts(text: str, count: int) -> tuple[ShardRange, ...]:
    """The ``count`` contiguous ranges of :func:`cuts_text` (``count - 1`` increasing cuts)."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    if len(parts) != count - 1:
        raise SelectorError(
            f"{len(parts)} cuts stored for {count} ranges; {count - 1} are needed (the Lease was made for a "
            "different --shards?)"
        )
    cuts = [0, *(_bound(p, f"cut {k}") for k, p in enumerate(parts)), HASH_SPACE]
    return tuple(ShardRange(a, b) for a, b in pairwise(cuts))


@dataclass(frozen=True)
class ShardSelector:
    """A ``shardSelector``: ranges over one field, any of which admits an object."""

    field: str
    ranges: tuple[ShardRange, ...]

    def __post_init__(self) -> None:
        if self.field not in _FIELDS:
            raise SelectorError(
                f"unsupported shard field {self.field!r}; the API server supports {UID_FIELD} and {NAMESPACE_FIELD}"
            )
        if not self.ranges:
            raise SelectorError(
                "a shard selector needs at least one range; omit the selector to list everything"
            )

    def matches(self, value: str) -> bool:
        """Whether an object whose field is ``value`` is in this selector (Go's ``Matches``)."""
        h = fnv1a_64(value)
        return any(r.start <= h < r.end for r in self.ranges)

    def to_string(self) -> str:
        """The wire form, identical to Go's ``shardSelector.String``."""
        return " || ".join(f"shardRange({self.field}, '{r.hex_start}', '{r.hex_end}')" for r in self.ranges)

    def __str__(self) -> str:
        return self.to_string()


_CALL = re.compile(
    r"\s*shardRange\s*\(\s*([A-Za-z_][\w.]*)\s*,\s*(['\"])(.*?)\2\s*,\s*(['\"])(.*?)\4\s*\)\s*"
)


def _bound(text: str, name: str) -> int:
    # k8s.io/apiserver/pkg/sharding/parser.go, extractHexLiteral.
    if not text.startswith("0x"):
        raise SelectorError(f"{name} must have '0x' prefix, got {text!r}")
    digits = text[2:]
    if not digits:
        raise SelectorError(f"{name}: hex value is required after '0x'")
    if len(digits) > 17:
        raise SelectorError(f"{name}: hex value too long ({len(digits)} chars, max 17): {digits!r}")
    bad = [c for c in digits if c not in "0123456789abcdef"]
    if bad:
        raise SelectorError(f"{name}: invalid hex character {bad[0]!r} in {text!r} (lowercase hex only)")
    if len(digits) == 17:
        if text != "0x10000000000000000":
            raise SelectorError(
                f"{name}: 17-digit hex value must be '0x10000000000000000' (2^64), got {text!r}"
            )
    elif len(digits) != 16:
        padded = "0x" + "0" * (16 - len(digits)) + digits
        raise SelectorError(
            f"{name} must be a 0x-prefixed 16-digit hex value, got {text!r} (did you mean {padded!r}?)"
        )
    return int(digits, 16)


def parse_selector(expr: str) -> ShardSelector:
    """Parse a ``shardSelector`` as the API server's ``Parse`` does (see the module docstring)."""
    text = expr.strip()
    if not text:
        raise SelectorError("empty shard selector is not allowed; omit the parameter for unfiltered lists")
    parts = text.split("||")
    field = ""
    ranges: list[ShardRange] = []
    for part in parts:
        m = _CALL.fullmatch(part)
        if m is None:
            raise SelectorError(
                f"cannot read {part.strip()!r}: a shard selector is shardRange(FIELD, '0x<16 hex>', '0x<16 hex>') "
                "calls joined by ||"
            )
        key, start_text, end_text = m.group(1), m.group(3), m.group(5)
        if key not in _FIELDS:
            raise SelectorError(f"unsupported field path {key!r}; supported: {UID_FIELD}, {NAMESPACE_FIELD}")
        start, end = _bound(start_text, "hexStart"), _bound(end_text, "hexEnd")
        if not start < end:
            raise SelectorError(f"shard range start {start_text} must be less than end {end_text}")
        if field and key != field:
            raise SelectorError(f"all shard ranges must use the same field, got {field!r} and {key!r}")
        field = key
        ranges.append(ShardRange(start, end))
    return ShardSelector(field, tuple(ranges))
