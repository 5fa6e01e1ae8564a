"""``omerender diff``: what a change to runtimes, models or replicas does to every InferenceReplica.

The command only reads files and prints; :mod:`omerender.diff` does the rendering and comparing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omerender.catalog import Catalog
from omerender.cli.io import InputError, load_objects
from omerender.cli.strict import check_replica
from omerender.diff import ReplicaDiff, diff_replicas, summary, to_json, to_markdown, to_text
from omerender.models import InferenceReplica, parse_object

__all__ = ["Sides", "add_input_arguments", "add_parser", "main", "read_sides", "run"]

KIND = "InferenceReplica"
_EPILOG = """\
which replicas: the REPLICAS files, rendered as they are against the --before and then the --after
objects (InferenceReplicas among those objects are then ignored); without REPLICAS, every
InferenceReplica among the --before objects and every one among the --after objects, matched by
namespace/name, so a replica may change too, appear ("new") or go ("removed"). --before and --after
take several paths each: give REPLICAS first, or after "--".

per replica:
  unchanged                 renders to the same revision
  rolls OLD -> NEW          renders to another revision: every Instance rolls (the changed template
                            fields are listed, keyed lists matched by name; a reorder of env or
                            containers changes the revision too, listed as "order changed")
  blocks REASON             cannot render any more; OME keeps the running pods
  still blocks REASON       blocked before and after for the same reason
  unblocks -> NEW           blocked before, renders now
  new -> NEW | new, blocks  only among the after replicas
  removed (was OLD)         only among the before replicas

exit status (kubectl diff's convention): 0 nothing rolls, blocks, unblocks, appears or goes; 1 something
does; 2 bad input or usage.

two folders: "omerender diff DIR1 DIR2" (exactly two folders, no --before/--after) means --before DIR1
--after DIR2 and reads every file in them, whatever its name. That is the KUBECTL_EXTERNAL_DIFF
calling convention (kubectl writes one suffix-less file per object); kubectl puts the two folders
right after the program, so point it at a wrapper, and include the replicas in what kubectl diffs:
  printf '#!/bin/sh\\nexec omerender diff "$@"\\n' > ~/bin/omerender-kdiff && chmod +x ~/bin/omerender-kdiff
  KUBECTL_EXTERNAL_DIFF=omerender-kdiff kubectl diff -f catalog/ -f replicas/

examples:
  omerender diff --before main/catalog main/replicas --after pr/catalog pr/replicas
  omerender diff replicas/ --before main/catalog --after pr/catalog --output markdown > comment.md
"""


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "diff",
        help="what a catalog or replica change does to each replica: unchanged, rolls or blocks",
        description=(
            "Render every InferenceReplica against the objects before and after a change and report, per\n"
            "replica, whether it stays, rolls to a new revision or blocks, with a semantic diff of each\n"
            "runner's pod template."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(p)
    p.add_argument(
        "--output",
        "-o",
        choices=("text", "json", "markdown"),
        default="text",
        help="text (default), json, or markdown for a pull-request comment",
    )
    p.set_defaults(func=run)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """The replicas and the objects on both sides of a change (``omereconcile forecast`` reads the same)."""
    p.add_argument(
        "replicas",
        nargs="*",
        metavar="REPLICAS",
        help="files or folders with the replicas to render (or DIR1 DIR2, see below)",
    )
    p.add_argument("--before", nargs="+", action="extend", metavar="PATH", help="objects before the change")
    p.add_argument("--after", nargs="+", action="extend", metavar="PATH", help="objects after the change")


@dataclass(frozen=True)
class Sides:
    """The change as the diff reads it: the objects and the replicas on each side."""

    before_objects: list[dict[str, Any]]
    after_objects: list[dict[str, Any]]
    before: dict[tuple[str, str], InferenceReplica]
    after: dict[tuple[str, str], InferenceReplica]

    def diff(self) -> tuple[ReplicaDiff, ...]:
        return diff_replicas(
            self.before,
            self.after,
            Catalog.from_objects(self.before_objects),
            Catalog.from_objects(self.after_objects),
        )


def _folder_objects(folder: Path) -> list[dict[str, Any]]:
    """Every object in every file under ``folder`` (kubectl's files have no suffix); dotfiles skipped."""
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )
    return load_objects(files)


def _namespaced_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _replicas(objects: Iterable[Mapping[str, Any]], where: str) -> dict[tuple[str, str], InferenceReplica]:
    out: dict[tuple[str, str], InferenceReplica] = {}
    for obj in objects:
        if obj.get("kind") != KIND:
            continue
        check_replica(obj, where)
        replica = parse_object(InferenceReplica, obj)
        key = (replica.namespace, replica.metadata.name)
        if key in out:
            raise InputError(f"{where}: {KIND} {key[0]}/{key[1]} appears twice; keep one")
        out[key] = replica
    return out


def _objects(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(before objects, after objects, REPLICAS paths), with the two-folder form resolved."""
    positional: list[str] = list(args.replicas)
    if args.before is None and args.after is None:
        if len(positional) == 2 and all(Path(p).is_dir() for p in positional):
            return _folder_objects(Path(positional[0])), _folder_objects(Path(positional[1])), []
        raise InputError(
            "give --before PATH... and --after PATH... (and optionally REPLICAS), or exactly two folders "
            "DIR1 DIR2 to compare"
        )
    if args.before is None or args.after is None:
        missing = "--before" if args.before is None else "--after"
        raise InputError(f"{missing} is missing: give the objects on both sides of the change")
    return load_objects(args.before), load_objects(args.after), positional


def read_sides(args: argparse.Namespace, prog: str = "diff") -> Sides:
    """The arguments of :func:`add_input_arguments`, read and checked."""
    before_objects, after_objects, replica_paths = _objects(args)
    if replica_paths:
        fixed = _replicas(load_objects(replica_paths), "REPLICAS")
        if not fixed:
            raise InputError(
                f"{' '.join(replica_paths)}: no {KIND} found; give files or folders that hold one"
            )
        ignored = sorted(
            {_namespaced_name(o) for o in [*before_objects, *after_objects] if o.get("kind") == KIND}
        )
        if ignored:
            print(
                f"{prog}: ignoring the {KIND}s among --before/--after ({', '.join(ignored)}): "
                "the REPLICAS given render on both sides",
                file=sys.stderr,
            )
        before, after = fixed, fixed
    else:
        before = _replicas(before_objects, "before")
        after = _replicas(after_objects, "after")
        if not before and not after:
            raise InputError(
                f"no {KIND} among the objects on either side; give the replicas to render as REPLICAS "
                "or include them in the --before and --after paths"
            )
    return Sides(before_objects, after_objects, before, after)


def run(args: argparse.Namespace) -> int:
    diffs = read_sides(args).diff()
    if args.output == "json":
        sys.stdout.write(json.dumps(to_json(diffs), indent=2, ensure_ascii=False) + "\n")
    elif args.output == "markdown":
        sys.stdout.write(to_markdown(diffs))
    else:
        sys.stdout.write(to_text(diffs))
    print(f"diff: {summary(diffs)}", file=sys.stderr)
    return 1 if any(d.changed for d in diffs) else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``omerender diff`` as a program of its own (for a ``KUBECTL_EXTERNAL_DIFF`` entry point)."""
    from omerender.cli import main as omerender_main

    return omerender_main(["diff", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
