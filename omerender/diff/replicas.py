"""One replica across a change (:class:`ReplicaDiff`): its verdict, both sides and its template changes."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from omerender._records import record
from omerender.catalog import Catalog, CatalogKey
from omerender.diff.extra import require_tools
from omerender.diff.outcome import Outcome, outcome
from omerender.diff.templates import Change, _revision_changes, template_changes
from omerender.diff.verdicts import _CHANGED, ReplicaKey, Status
from omerender.errors import InvalidArgumentError
from omerender.models import InferenceReplica

# -- per replica ----------------------------------------------------------------------------------------


@record
class ReplicaDiff:
    """What one replica does across the change. ``before``/``after`` are None when it is absent there."""

    namespace: str
    name: str
    status: Status
    before: Outcome | None
    after: Outcome | None
    changes: tuple[Change, ...] = ()

    @property
    def key(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.name}"

    @property
    def changed(self) -> bool:
        """Whether the verdict is a change: it rolls, blocks, unblocks, appears or goes, or its
        runtime became unknown until downloaded (a replica unknown or blocked on both sides is none)."""
        if self.status is Status.UNKNOWN:
            return self.before is not None and not self.before.unknown
        return self.status in _CHANGED

    @property
    def listed(self) -> bool:
        """Whether the outputs list it without ``--show-unchanged``: a changed verdict, or template
        differences the revision does not hash."""
        return self.changed or (self.status is Status.UNCHANGED and bool(self.changes))

    @property
    def headline(self) -> str:
        """The verdict as the text output's first line says it: ``rolls OLD -> NEW``, ``blocks REASON``,
        ``new -> NEW``, ``unknown until downloaded (was OLD)``..."""
        old, new = self.before, self.after
        if self.status is Status.NEW and new is not None:
            return f"new, {_state(new)}" if not new.rendered else f"new -> {new.revision}"
        if self.status is Status.REMOVED and old is not None:
            return f"removed (was {_state(old) if not old.rendered else old.revision})"
        if old is None or new is None:  # pragma: no cover - only NEW and REMOVED lack a side
            return self.status.label
        was = _was(old, new)
        if self.status is Status.ROLLS:
            return f"rolls {old.revision} -> {new.revision}"
        if self.status is Status.UNKNOWN:
            return f"{self.status.label}{was}"
        if self.status in (Status.BLOCKS, Status.STILL_BLOCKS) and new.blocked is not None:
            # A replica that ran: its notes name the revision OME keeps running.
            return f"{self.status.label} {new.blocked.reason}{'' if old.rendered else was}"
        if self.status is Status.UNBLOCKS:
            return f"unblocks -> {new.revision}"
        return self.status.label

    @property
    def result(self) -> str:
        """The verdict and the block reason, without revisions: ``rolls``, ``blocks ModelNotFound``."""
        side = self.after if self.after is not None else self.before
        if side is not None and side.unknown and self.status is not Status.UNKNOWN:
            return f"{self.status.label}, unknown until downloaded"  # new or removed
        reason = side.blocked.reason if side is not None and side.blocked is not None else None
        if reason is None or self.status is Status.UNKNOWN:
            switch = self.runtime_change
            return f"{self.status.label}, runtime {switch[0]} -> {switch[1]}" if switch else self.status.label
        if self.status in (Status.BLOCKS, Status.STILL_BLOCKS):
            return f"{self.status.label} {reason}"
        return f"{self.status.label}, blocked {reason}"  # new or removed while blocked

    @property
    def uid_notice(self) -> str | None:
        """Set when a side's revision name is for an empty uid (the after side's notice first): the
        cluster's names will differ, though the verdict, which compares two names hashed with the
        same uid, does not."""
        for side in (self.after, self.before):
            if side is not None and side.uid_notice is not None:
                return side.uid_notice
        return None

    @property
    def runtime_change(self) -> tuple[str, str] | None:
        """(old, new) runtime when the replica renders on both sides, from different runtimes."""
        old = self.before.runtime if self.before is not None else None
        new = self.after.runtime if self.after is not None else None
        return (old, new) if old is not None and new is not None and old != new else None

    @property
    def lead(self) -> tuple[str, ...]:
        """What to read before the field changes: the runtime switch that explains most of them."""
        switch = self.runtime_change
        return (f"runtime changed from {switch[0]} to {switch[1]}",) if switch is not None else ()

    @property
    def notes(self) -> tuple[str, ...]:
        """What the verdict means for the running pods, in words: why it blocks, which revision OME
        keeps, creates or deletes."""
        out: list[str] = []
        after = self.after
        if after is not None and after.unknown:
            out.append(
                "its model has no format name: the runtime is unknown until OME has downloaded the "
                "weights and read the format from them"
            )
        elif after is not None and after.blocked is not None:
            out.append(f"{after.blocked.reason}: {after.message}")
        if after is not None and not after.rendered and self.before is not None and self.before.rendered:
            out.append(f"OME keeps the running pods on {self.before.revision}")
        if self.status is Status.UNCHANGED and self.changes:
            out.append("these differences are outside the revision hash: OME replaces no pods")
        if self.status is Status.NEW and after is not None and after.rendered:
            out.append(f"OME creates its pods on {after.revision}")
        if self.status is Status.REMOVED and self.before is not None and self.before.rendered:
            out.append(f"OME deletes its pods (on {self.before.revision})")
        return tuple(out)


def _state(side: Outcome) -> str:
    """A side that did not render, in words: ``unknown until downloaded``, ``blocks ModelNotFound``."""
    if side.unknown:
        return Status.UNKNOWN.label
    return f"blocks {side.blocked.reason}" if side.blocked is not None else "renders"


def _was(old: Outcome, new: Outcome) -> str:
    """`` (was ...)`` when the before side's state says more than the verdict does."""
    if old.rendered:
        return f" (was {old.revision})" if not new.rendered else ""
    if old.unknown != new.unknown or (
        old.blocked is not None and new.blocked is not None and old.blocked.reason != new.blocked.reason
    ):
        return f" (was {'unknown until downloaded' if old.unknown else _blocked_reason(old)})"
    return ""


def _blocked_reason(side: Outcome) -> str:
    return side.blocked.reason if side.blocked is not None else "rendered"


def _status(old: Outcome | None, new: Outcome | None) -> Status:
    if old is None:
        return Status.NEW
    if new is None:
        return Status.REMOVED
    if new.unknown:
        return Status.UNKNOWN
    if new.blocked is not None:
        # Blocks only what ran (or may run: unknown until downloaded); a replica that never rendered
        # still blocks, whatever the reason is now.
        return Status.BLOCKS if old.rendered or old.unknown else Status.STILL_BLOCKS
    if old.blocked is not None:
        return Status.UNBLOCKS
    return Status.UNCHANGED if old.revision == new.revision else Status.ROLLS


_ORDER = "the order is diff_replicas(before, after, before_catalog, after_catalog)"


def _check_sides(
    function: str, sides: tuple[object, object], catalogs: tuple[object, object], *, single: bool
) -> None:
    """An InvalidArgumentError naming the argument and the fix for a side of another type: a Catalog
    where the replicas belong names both (the catalogs come third and fourth)."""
    replicas = "an InferenceReplica or None" if single else "a mapping {(namespace, name): InferenceReplica}"
    order = _ORDER.replace("diff_replicas", "diff_replica") if single else _ORDER
    for argument, side in zip(("before", "after"), sides, strict=True):
        ok = (side is None or isinstance(side, InferenceReplica)) if single else isinstance(side, Mapping)
        if not ok:
            fix = (
                f"a Catalog belongs in before_catalog and after_catalog, the replicas in before and after: {order}"
                if isinstance(side, Catalog)
                else f"pass {replicas}; {order}"
            )
            raise InvalidArgumentError(function, argument, replicas, side, fix)
    for argument, catalog in zip(("before_catalog", "after_catalog"), catalogs, strict=True):
        if not isinstance(catalog, Catalog):
            fix = f"pass what Loaded.catalog() or Catalog.from_objects() returns; {order}"
            raise InvalidArgumentError(function, argument, "a Catalog", catalog, fix)


def diff_replica(
    before: InferenceReplica | None,
    after: InferenceReplica | None,
    before_catalog: Catalog,
    after_catalog: Catalog,
    *,
    before_unknown: Collection[CatalogKey] = (),
    after_unknown: Collection[CatalogKey] = (),
    uid: str | None = None,
) -> ReplicaDiff:
    """Render the replica on both sides (either may be None: added or removed) and compare.
    ``before_unknown``/``after_unknown``: each side's models assumed Ready without a format name.
    ``uid``: the replica's ``metadata.uid`` in the cluster, hashed into both sides' revision names
    in place of the files' (a file from git has none: :attr:`ReplicaDiff.uid_notice`)."""
    require_tools("omerender.diff.diff_replica")
    _check_sides("omerender.diff.diff_replica", (before, after), (before_catalog, after_catalog), single=True)
    known = after or before
    if known is None:
        raise ValueError("diff_replica needs the replica on at least one side")
    old = outcome(before, before_catalog, before_unknown, uid=uid) if before is not None else None
    new = outcome(after, after_catalog, after_unknown, uid=uid) if after is not None else None
    changes: tuple[Change, ...] = ()
    if old is not None and new is not None and old.blocked is None and new.blocked is None:
        changes = (*template_changes(old.runners, new.runners), *_revision_changes(old, new))
    return ReplicaDiff(known.namespace, known.metadata.name, _status(old, new), old, new, changes)


def diff_replicas(
    before: Mapping[ReplicaKey, InferenceReplica],
    after: Mapping[ReplicaKey, InferenceReplica],
    before_catalog: Catalog,
    after_catalog: Catalog,
    *,
    before_unknown: Collection[CatalogKey] = (),
    after_unknown: Collection[CatalogKey] = (),
    uids: Mapping[ReplicaKey, str] | None = None,
) -> tuple[ReplicaDiff, ...]:
    """Every replica of either side, matched by (namespace, name), sorted by namespace and name.
    ``uids``: (namespace, name) -> the replica's ``metadata.uid`` in the cluster, for the replicas
    whose files carry none (:func:`diff_replica`)."""
    require_tools("omerender.diff.diff_replicas")
    _check_sides(
        "omerender.diff.diff_replicas", (before, after), (before_catalog, after_catalog), single=False
    )
    old_unknown, new_unknown = frozenset(before_unknown), frozenset(after_unknown)
    uids = uids or {}
    return tuple(
        diff_replica(
            before.get(key),
            after.get(key),
            before_catalog,
            after_catalog,
            before_unknown=old_unknown,
            after_unknown=new_unknown,
            uid=uids.get(key),
        )
        for key in sorted(set(before) | set(after))
    )
