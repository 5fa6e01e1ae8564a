"""``--uid`` of the commands that read many replicas (``omerender diff``, ``omereconcile forecast``).

OME hashes a standalone replica's ``metadata.uid`` into its revision name, and a file from git has
none. ``--uid UID`` gives it when exactly one replica is read; ``--uid NAMESPACE/NAME=UID`` (repeatable)
names the replica it belongs to. A uid for a replica that is not read, or a bare uid with several
replicas, is refused: it would be silently unused or given to the wrong replica.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Sequence

from omerender.cli.io import InputError

__all__ = ["UidArg", "add_uid_argument", "parse_uid_arg", "resolve_uids", "uids_of"]

ReplicaKey = tuple[str, str]
# (namespace, name), or None for a bare uid; then the uid.
UidArg = tuple[ReplicaKey | None, str]
_SHOWN = 5


def _checked(uid: str, given: str) -> str:
    if not uid or uid != uid.strip() or any(ch.isspace() or not ch.isprintable() for ch in uid):
        raise argparse.ArgumentTypeError(
            f"{given!r} is not a uid: pass the replica's metadata.uid, or NAMESPACE/NAME=UID"
        )
    return uid


def parse_uid_arg(text: str) -> UidArg:
    """``UID`` -> (None, UID); ``NAMESPACE/NAME=UID`` -> ((NAMESPACE, NAME), UID). A Kubernetes uid
    holds no ``=``, so the first one splits the replica from its uid."""
    if "=" not in text:
        return None, _checked(text, text)
    who, _, uid = text.partition("=")
    namespace, slash, name = who.partition("/")
    if not slash or not namespace or not name or "/" in name:
        raise argparse.ArgumentTypeError(
            f"{text!r}: name the replica as NAMESPACE/NAME=UID (the namespace too, default/NAME for one "
            "without)"
        )
    return (namespace, name), _checked(uid, text)


def add_uid_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--uid",
        action="append",
        type=parse_uid_arg,
        default=[],
        metavar="[NAMESPACE/NAME=]UID",
        help="a replica's metadata.uid in the cluster, which OME hashes into a standalone replica's revision "
        "name (files from git have none): NAMESPACE/NAME=UID, repeatable, or a bare UID when exactly one "
        "replica is read (kubectl get inferencereplica NAME -n NS -o jsonpath='{.metadata.uid}')",
    )


def _listed(keys: Sequence[ReplicaKey]) -> str:
    shown = ", ".join(f"{ns}/{name}" for ns, name in keys[:_SHOWN])
    return shown + (f", … {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")


def _flag(key: ReplicaKey | None, uid: str) -> str:
    return f"--uid {uid}" if key is None else f"--uid {key[0]}/{key[1]}={uid}"


def resolve_uids(given: Sequence[UidArg], replicas: Collection[ReplicaKey]) -> dict[ReplicaKey, str]:
    """The ``--uid`` arguments as (namespace, name) -> uid over the ``replicas`` read.

    Raises InputError (exit 2) naming the flag and the fix for a bare uid with other than one
    replica (or next to another ``--uid``), a replica not among those read, or two uids for one.
    """
    keys = sorted(replicas)
    out: dict[ReplicaKey, str] = {}
    bare = [uid for key, uid in given if key is None]
    if bare:
        if len(given) > 1:
            raise InputError(
                f"{_flag(None, bare[0])}: a bare uid stands alone; with several --uid name each replica: "
                "--uid NAMESPACE/NAME=UID"
            )
        if len(keys) != 1:
            raise InputError(
                f"{_flag(None, bare[0])}: a bare uid needs exactly one replica, and {len(keys)} are read "
                f"({_listed(keys)}); name the one it belongs to: --uid NAMESPACE/NAME=UID (repeatable)"
            )
        return {keys[0]: bare[0]}
    known = set(keys)
    for key, uid in given:
        if key is None:  # pragma: no cover - a bare uid returned above
            continue
        if key not in known:
            raise InputError(
                f"{_flag(key, uid)}: no InferenceReplica {key[0]}/{key[1]} among the replicas read "
                f"({_listed(keys) or 'none'}); give the namespace and name of one of them"
            )
        if out.get(key, uid) != uid:
            raise InputError(
                f"--uid {key[0]}/{key[1]}: given twice with different uids ({out[key]}, {uid}); keep the "
                "one the cluster has"
            )
        out[key] = uid
    return out


def uids_of(args: argparse.Namespace) -> Sequence[UidArg]:
    """The parsed ``--uid`` arguments (none for a parser without the flag)."""
    value = getattr(args, "uid", None)
    return list(value) if value else []
