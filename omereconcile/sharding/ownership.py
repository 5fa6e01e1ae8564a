"""Which hash ranges a process owns: one Lease per range, taken up to a fair share, handed over when
processes join or leave, fenced so a range never has two actors. Pure: the caller observes the Leases,
passes its own monotonic clock readings, and performs the plan's writes.

The rules, as the leader Lease (``omereconcile.cluster.leader``, client-go's ``LeaderElector``) already applies
them to the single leader:

- **Expiry is local.** A Lease held by another process is expired when *this* process has seen its
  record unchanged for ``lease_duration`` (``RangeLease.observed_at`` is when this process last saw the
  record change), never by comparing clocks with the holder.
- **Fencing.** A process acts on a range only while fewer than ``renew_deadline`` seconds have passed
  since its own last successful write of that range's Lease (``renewed_at``). With
  ``renew_deadline < lease_duration`` the old holder has stopped acting before any other process can
  see the Lease expire, so a range that changes hands by expiry (a crash, a partition, a pause) never
  has two actors. ``validate_timing`` refuses the settings that break this.
- **Hand-over.** A process over its fair share stops acting on a range *first* and then releases it
  (writes an empty holder); another process takes a range only when its holder is empty or expired.
- **Fair share.** With ``R`` ranges and ``M`` live members (sorted by identity), the member of rank
  ``k`` may hold ``R // M`` ranges, plus one when ``k < R % M``. Shares are counts, not fixed ranges,
  so a join or leave moves only the ranges it must.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from omereconcile.sharding.ranges import SelectorError, ShardRange, parse_cuts

__all__ = [
    "CUTS_ANNOTATION",
    "RangeLease",
    "RangePlan",
    "cuts_lease_name",
    "fair_share",
    "free_member_slot",
    "lease_names",
    "member_lease_name",
    "plan_ranges",
    "range_holders",
    "range_lease_name",
    "validate_timing",
]

CUTS_ANNOTATION = "omereconcile.ome.io/shard-cuts"


def range_lease_name(prefix: str, index: int, count: int) -> str:
    """The Lease of range ``index`` of ``count``: ``PREFIX-COUNT-INDEX``. The count is in the name so
    processes started with a different ``--shards`` never share (and fight over) a Lease."""
    return f"{prefix}-{count}-{index}"


def member_lease_name(prefix: str, slot: int, count: int) -> str:
    """The member Lease of slot ``slot`` of ``count``: ``PREFIX-COUNT-m-SLOT``. A live process holds one
    slot; there are as many slots as ranges (a process beyond that could hold no range anyway). Slots,
    not one Lease per identity, so that every Lease a sharded process writes has a name known before
    it starts, and RBAC can list them by name (:func:`lease_names`)."""
    return f"{prefix}-{count}-m-{slot}"


def cuts_lease_name(prefix: str, count: int) -> str:
    """The Lease whose annotation stores the range cuts of ``count`` ranges: ``PREFIX-COUNT-cuts``."""
    return f"{prefix}-{count}-cuts"


def lease_names(prefix: str, count: int) -> list[str]:
    """Every Lease a process started with ``--shards count`` reads or writes by name: the ranges, the
    member slots and the stored cuts (the chart's and deploy/'s RBAC ``resourceNames``)."""
    return [
        *(range_lease_name(prefix, i, count) for i in range(count)),
        *(member_lease_name(prefix, k, count) for k in range(count)),
        cuts_lease_name(prefix, count),
    ]


def free_member_slot(count: int, slots: Mapping[int, RangeLease], now: float) -> int | None:
    """The lowest member slot a process without one may take: never created, released (empty holder)
    or expired in this process's view; None when every slot is held by a live process."""
    for k in range(count):
        lease = slots.get(k)
        if lease is None or lease.holder == "" or lease.expired(now):
            return k
    return None


@dataclass(frozen=True)
class RangeLease:
    """A range Lease as this process observed it. ``holder`` is ``""`` when released or never taken;
    ``observed_at`` is this process's clock when it last saw the record change."""

    index: int
    holder: str
    observed_at: float
    lease_duration: float

    def expired(self, now: float) -> bool:
        return now >= self.observed_at + self.lease_duration


@dataclass(frozen=True)
class RangePlan:
    """What to write and what to act on. ``take`` and ``renew`` write ``holder = me``; ``release``
    writes ``holder = ""`` and its ranges are already out of ``acting``."""

    take: tuple[int, ...]
    renew: tuple[int, ...]
    release: tuple[int, ...]
    acting: frozenset[int]
    share: int


def validate_timing(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """Refuse timings under which an old holder could still act when another sees its Lease expire."""
    if not 0 < retry_period < renew_deadline < lease_duration:
        raise ValueError(
            f"range Lease timing: retry period {retry_period}s < renew deadline {renew_deadline}s < "
            f"lease duration {lease_duration}s must hold; fencing needs the renew deadline below the lease "
            "duration (controller-runtime's defaults are 2s, 10s, 15s)"
        )


def fair_share(members: Iterable[str], range_count: int) -> dict[str, int]:
    """How many ranges each live member may hold (see the module docstring)."""
    ordered = sorted(set(members))
    if not ordered:
        return {}
    base, extra = divmod(range_count, len(ordered))
    return {m: base + (1 if k < extra else 0) for k, m in enumerate(ordered)}


def plan_ranges(
    me: str,
    range_count: int,
    members: Iterable[str],
    leases: Mapping[int, RangeLease],
    renewed_at: Mapping[int, float],
    now: float,
    renew_deadline: float,
) -> RangePlan:
    """One round of range ownership for process ``me``.

    ``members`` are the live processes (``me`` is counted even if absent); ``leases`` the observed range
    Leases by index (a missing index is a Lease not created yet: free); ``renewed_at`` the local time of
    ``me``'s last successful write per held range.
    """
    share = fair_share([*members, me], range_count)[me]
    mine = sorted(i for i in range(range_count) if i in leases and leases[i].holder == me)
    release: tuple[int, ...] = ()
    keep = mine
    if len(mine) > share:
        keep, rest = mine[:share], mine[share:]
        release = tuple(rest)
    free = [
        i
        for i in range(range_count)
        if i not in leases or leases[i].holder == "" or (leases[i].holder != me and leases[i].expired(now))
    ]
    take = tuple(free[: max(0, share - len(keep))])
    acting = frozenset(i for i in keep if i in renewed_at and now < renewed_at[i] + renew_deadline)
    return RangePlan(take=take, renew=tuple(keep), release=release, acting=acting, share=share)


def range_holders(
    leases: Iterable[Mapping[str, Any]], prefix: str = "omereconcile-shard"
) -> tuple[tuple[ShardRange, ...], dict[int, str]] | None:
    """The ranges and their holders' identities (``""``: released or never taken), read from the Leases
    of the reconciler's namespace: what ``kubectl ome get ir -o wide`` shows, with no write. Of several
    range counts (processes started with another ``--shards``), the one with the most held ranges.
    None when no sharded reconciler stored its cuts there."""
    by_name = {str(_field(o, "metadata").get("name") or ""): o for o in leases if isinstance(o, Mapping)}
    best: tuple[int, tuple[ShardRange, ...], dict[int, str]] | None = None
    for name, obj in sorted(by_name.items()):
        m = re.fullmatch(re.escape(prefix) + r"-([0-9]+)-cuts", name)
        if m is None:
            continue
        count = int(m.group(1))
        text = str(_field(_field(obj, "metadata"), "annotations").get(CUTS_ANNOTATION, ""))
        try:
            ranges = parse_cuts(text, count)
        except SelectorError:
            continue
        holders = {
            i: str(
                _field(by_name.get(range_lease_name(prefix, i, count)), "spec").get("holderIdentity") or ""
            )
            for i in range(count)
        }
        held = sum(1 for h in holders.values() if h)
        if best is None or held > best[0]:
            best = (held, ranges, holders)
    return None if best is None else (best[1], best[2])


def _field(obj: Any, key: str) -> Mapping[str, Any]:
    """``obj[key]`` when both are mappings, else empty: a Lease of another shape reads as unset."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}
