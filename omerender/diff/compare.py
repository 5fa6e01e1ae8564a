"""The library's ``omerender diff``: two sides as :func:`omerender.load` returns them (or paths), one
verdict per replica, the same as the command's."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypeAlias

from omerender.catalog import Catalog, CatalogKey
from omerender.diff.extra import require_tools
from omerender.diff.replicas import ReplicaDiff, diff_replicas
from omerender.diff.verdicts import ReplicaKey
from omerender.errors import InvalidArgumentError
from omerender.loader import Loaded, load
from omerender.models import InferenceReplica
from omerender.readiness import assume_models_ready as _assume_ready

__all__ = ["Side", "compare"]

_FUNCTION = "omerender.diff.compare"
_PATH = (str, os.PathLike)
#: One side of the change: what :func:`omerender.load` returns, or the paths to load (one path or a list).
Side: TypeAlias = Loaded | str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
_SIDE = "what omerender.load() returns, a path, or a list of paths"


def _loaded(argument: str, side: object) -> Loaded:
    if isinstance(side, Loaded):
        return side
    if isinstance(side, _PATH):
        return load(side)
    if isinstance(side, Sequence) and side and all(isinstance(p, _PATH) for p in side):
        return load(*side)
    if isinstance(side, Catalog):
        fix = "a Catalog holds no replicas: pass the Loaded it was built from (or its paths)"
        raise InvalidArgumentError(_FUNCTION, argument, _SIDE, side, fix)
    if isinstance(side, Mapping) or (
        isinstance(side, Sequence) and any(isinstance(r, InferenceReplica) for r in side)
    ):
        fix = "for replicas already parsed and their Catalogs, call omerender.diff.diff_replicas"
        raise InvalidArgumentError(_FUNCTION, argument, _SIDE, side, fix)
    raise InvalidArgumentError(_FUNCTION, argument, _SIDE, side)


def _by_key(loaded: Loaded) -> dict[ReplicaKey, InferenceReplica]:
    return {(r.namespace, r.metadata.name): r for r in loaded.replicas()}


def compare(
    before: Side,
    after: Side,
    *,
    replicas: Side | None = None,
    assume_models_ready: bool = False,
    uids: Mapping[ReplicaKey, str] | None = None,
) -> tuple[ReplicaDiff, ...]:
    """Every replica's verdict across a change, as ``omerender diff --before ... --after ...`` gives it.

    ``before`` and ``after`` are what :func:`omerender.load` returns or the paths to load (files and
    folders, read as ``load`` and the command read them). Their InferenceReplicas are matched by
    namespace and name, so a replica may change too, appear (``new``) or go (``removed``); with
    ``replicas`` (``-f``), those replicas render on both sides and the ones among ``before`` and
    ``after`` are ignored. ``assume_models_ready`` is ``--assume-models-ready``: every model is treated
    as Ready, and a replica of a model without a format name is ``unknown`` (unknown until
    downloaded), as the command says it. ``uids`` is ``--uid``: ``(namespace, name) -> metadata.uid``.

    The diffs come sorted by namespace and name (:class:`ReplicaDiff`: ``status``, ``headline``,
    ``changes``), ready for :func:`to_text`, :func:`to_json` or :func:`to_markdown`; no replica on
    either side gives an empty tuple. Raises :class:`~omerender.errors.MissingExtraError` without the
    ``tools`` extra, :class:`~omerender.errors.InvalidArgumentError` for an argument of another type
    (a :class:`~omerender.Catalog` where a side belongs), and :class:`~omerender.LoadError` naming the
    file for input that cannot be read. The example is in the :mod:`omerender.diff` page's
    introduction.
    """
    require_tools(_FUNCTION)
    if not isinstance(assume_models_ready, bool):
        raise InvalidArgumentError(_FUNCTION, "assume_models_ready", "True or False", assume_models_ready)
    if uids is not None and not isinstance(uids, Mapping):
        raise InvalidArgumentError(_FUNCTION, "uids", "a mapping {(namespace, name): uid} or None", uids)
    old, new = _loaded("before", before), _loaded("after", after)
    old_catalog, new_catalog = old.catalog(), new.catalog()
    old_unknown: frozenset[CatalogKey] = frozenset()
    new_unknown: frozenset[CatalogKey] = frozenset()
    if assume_models_ready:
        old_ready, new_ready = _assume_ready(old_catalog), _assume_ready(new_catalog)
        old_catalog, new_catalog = old_ready.catalog, new_ready.catalog
        old_unknown, new_unknown = frozenset(old_ready.format_unknown), frozenset(new_ready.format_unknown)
    if replicas is not None:
        fixed = _by_key(_loaded("replicas", replicas))
        old_replicas, new_replicas = fixed, fixed
    else:
        old_replicas, new_replicas = _by_key(old), _by_key(new)
    return diff_replicas(
        old_replicas,
        new_replicas,
        old_catalog,
        new_catalog,
        before_unknown=old_unknown,
        after_unknown=new_unknown,
        uids=uids,
    )
