"""The catalog objects a command reads (``--objects``/``-k``, and ``diff``'s ``--before``/``--after``),
read by :func:`omerender.load` so that every command reads a folder alike:

- **Only the kinds a render reads** are kept: BaseModel, ClusterBaseModel, ServingRuntime,
  ClusterServingRuntime, FineTunedWeight, InferenceService, and the ``inferenceservice-config``
  ConfigMap in namespace ``ome`` (plus the kinds a command asks for, such as ``diff``'s
  InferenceReplicas). Other documents are skipped, summed up in one note at the end.
- **Strict field validation**, as ``kubectl apply`` does it (:func:`omerender.crds.object_problems`),
  every problem listed at once with its file, object, field and fix.
- **Duplicates**: the later one in path order wins, as ``kubectl apply -R`` leaves it, with one
  warning per duplicate naming both files; ``--strict`` makes every duplicate an error instead.
- **No path is ignored**: a path given to a catalog flag that holds nothing the flag reads is an error
  naming it and what it holds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from omerender.catalog import CATALOG_KINDS, is_operator_config
from omerender.cli.io import InputError, read
from omerender.crds import object_problems
from omerender.loader import Loaded

__all__ = [
    "CATALOG_KINDS",
    "add_kustomize_flag",
    "add_objects_options",
    "add_path_flag",
    "catalog_objects",
    "catalog_problems",
    "check_inputs",
    "warn_duplicates",
]

Loaded_ = tuple[dict[str, Any], Path]


def add_objects_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that reads catalog objects shares."""
    parser.add_argument(
        "--strict",
        action="store_true",
        help=(
            "two catalog objects of one kind and name are an error (exit 2), all listed at once; "
            "without it the later one in path order wins, as with kubectl apply -R, and each is a warning"
        ),
    )


def add_path_flag(parser: argparse.ArgumentParser, *flags: str, **options: Any) -> None:
    """A flag taking paths kubectl style: it repeats (``--objects a --objects b``) and takes several
    after one flag (``--objects a b``), all kept in order; ``-`` is standard input."""
    options.setdefault("metavar", "PATH")
    parser.add_argument(*flags, action="extend", nargs="+", **options)


def add_kustomize_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-k",
        "--kustomize",
        action="append",
        default=[],
        metavar="DIR",
        help=(
            "a kustomization's folder, read as kubectl apply -k reads it: built with kustomize (or "
            "kubectl kustomize) when on PATH, else its resources read as listed, saying what was not "
            "applied (repeatable)"
        ),
    )


def catalog_problems(obj: Mapping[str, Any]) -> list[str]:
    """``<field>: <problem and fix>`` for everything ``kubectl apply`` with strict field validation
    refuses in a catalog object (:func:`omerender.crds.object_problems`)."""
    return object_problems(obj)


def warn_duplicates(loaded: Loaded, args: argparse.Namespace) -> None:
    """Warn of each object defined twice, under the program that runs the command: ``prog_prefix``
    when another program sets it (``omereconcile forecast``), else ``omerender <command>``."""
    prefix = getattr(args, "prog_prefix", None) or f"omerender {getattr(args, 'command', '') or ''}".rstrip()
    for line in loaded.duplicates:
        print(
            f"{prefix}: warning: {line}; the later one is used, as kubectl apply -R would leave it "
            "(--strict makes this an error)",
            file=sys.stderr,
        )


def _holds(loaded: Loaded, given: str) -> str:
    kinds: dict[str, int] = {}
    for obj in loaded.objects:
        if obj.given == given:
            kinds[obj.kind] = kinds.get(obj.kind, 0) + 1
    for item in loaded.skipped:
        if item.given == given:
            what = item.why[5:] if item.why.startswith("kind ") else "document without kind"
            kinds[what] = kinds.get(what, 0) + 1
    if not kinds:
        return "no objects"
    return ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(kinds.items()))


def check_inputs(
    loaded: Loaded,
    flag: str,
    keep: Collection[str],
    fix: str,
    *,
    config: bool = True,
    positional: bool = False,
) -> None:
    """Refuse a path given to ``flag`` whose objects are all of kinds ``flag`` does not read (not in
    ``keep``, nor, with ``config``, the operator ConfigMap): no input is ever ignored without a word.
    ``positional``: the paths were (also) given without a flag; ``flag`` is then the command's name and
    the path alone says where."""
    used = {o.given for o in loaded.objects if o.kind in keep or (config and is_operator_config(o.raw))}
    # A path with nothing any command reads is said in the note of what was skipped; one whose objects
    # another flag reads (a replica among --objects) would be dropped unseen.
    held = {o.given for o in loaded.objects}
    for given, _ in loaded.inputs:
        if given in held and given not in used:
            where = given if positional else f"{flag} {given}"
            raise InputError(f"{where}: holds {_holds(loaded, given)}, nothing {flag} reads; {fix}")


def catalog_objects(
    paths: Iterable[str | Path],
    args: argparse.Namespace,
    *,
    also: Collection[str] = (),
    kustomizations: Iterable[str | Path] = (),
    flag: str = "--objects",
    fix: str | None = None,
    positional: bool = False,
) -> list[dict[str, Any]]:
    """The catalog objects in ``paths`` (and those of the kinds in ``also``), strictly checked and
    without duplicates; see the module's docstring. Raises InputError listing every problem found.
    ``flag`` names the paths in an error (the command's name with ``positional``) and ``fix``
    replaces the default advice."""
    loaded = read(paths, kustomizations, check=True, strict=bool(getattr(args, "strict", False)))
    keep = {*CATALOG_KINDS, *also}
    check_inputs(
        loaded,
        flag,
        keep,
        fix
        or "give the models, runtimes, fine-tuned weights and InferenceServices "
        + (
            "(InferenceReplicas are given as the command's FILE argument)"
            if "InferenceReplica" not in also
            else ""
        ),
        positional=positional,
    )
    warn_duplicates(loaded, args)
    return [o.raw for o in loaded.objects if o.kind in keep or is_operator_config(o.raw)]
