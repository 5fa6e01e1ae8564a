"""``omerender diff``: what a change to runtimes, models or replicas does to every InferenceReplica.

The command only reads files and prints; :mod:`omerender.diff` does the rendering and comparing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omerender.catalog import CATALOG_KINDS, Catalog, CatalogKey
from omerender.cli.assume import add_flag
from omerender.cli.colour import add_color_option, colour_on, verdict_line
from omerender.cli.diff_flags import add_output_arguments, fail_on_from
from omerender.cli.io import InputError, note, read
from omerender.cli.objects import add_objects_options, check_inputs, warn_duplicates
from omerender.cli.shards import add_jobs_option, in_parts, parts_for
from omerender.cli.strict import check_replica
from omerender.cli.uids import add_uid_argument, resolve_uids, uids_of
from omerender.loader import SUFFIXES, Loaded
from omerender.models import InferenceReplica, parse_object
from omerender.readiness import assume_models_ready

if TYPE_CHECKING:
    from omerender.diff import Outcome, ReplicaDiff, Review, Status

__all__ = [
    "Sides",
    "add_input_arguments",
    "add_output_arguments",
    "add_parser",
    "main",
    "read_from",
    "read_sides",
    "render_output",
    "replica_file",
    "run",
    "write_report",
]

KIND = "InferenceReplica"
# Replicas per process at the least: below this a second process would not have started before the
# first is done.
_REPLICAS_PER_PROCESS = 400
_EPILOG = """\
which replicas: the -f files, rendered as they are against the --before and then the --after objects
(InferenceReplicas among those objects are then ignored); without -f, every InferenceReplica among the
--before objects and every one among the --after objects, matched by namespace/name, so a replica may
change too, appear ("new") or go ("removed"). Each flag takes one path and may repeat, as kubectl's
-f does, so the order of the arguments never changes their meaning. With -f, a --before or --after
path that holds only InferenceReplicas is an error: replicas are named with -f.

per replica, one verdict (its --fail-on name in brackets):
  rolls OLD -> NEW          [rolls] renders to another revision: every Instance rolls (the changed
                            template fields are listed, keyed lists matched by name, lists of
                            arguments aligned so one inserted argument is one line, in natural
                            order: command[2] before command[10]; a reorder of env or containers
                            changes the revision too, listed as "order changed")
  blocks REASON             [blocks] rendered before (or was unknown until downloaded), cannot render
                            now; OME keeps the running pods
  unblocks -> NEW           [unblocks] blocked or unknown before, renders now
  new -> NEW | new, blocks  [new] only among the after replicas
  removed (was OLD)         [removed] only among the before replicas
  unknown until downloaded  [unknown] its model, assumed Ready, has no format name: OME reads the
                            format from the weights, so the runtime it selects is not known yet
                            (as omerender lint --assume-models-ready says)
  still blocks REASON       [still-blocks] blocked before and after: it never rendered
  unchanged                 [unchanged] renders to the same revision
A replica that renders from another runtime says "runtime changed from KIND OLD to KIND NEW".

catalog files kept in git carry no model status, and a replica of a model that is not Ready blocks
(ModelNotFound) on both sides, hiding a roll: --assume-models-ready treats every model as Ready and
the output says so.

revision names: OME hashes a standalone replica's metadata.uid into its revision name, and files from
git have none: their names are for an empty uid and the cluster's will differ. One note line counts
those replicas (uidNotice per replica in json); the verdicts do not depend on the uid, as both sides
are hashed with the same one. --uid NAMESPACE/NAME=UID (repeatable) gives a replica its uid, a bare
--uid UID the only replica read; a --uid for a replica not read, or a bare one with several, is exit 2.

output: text lists the replicas whose verdict changed (every one with --show-unchanged) and counts
the rest; markdown is a pull-request review: the verdict and the cost (pods, GPUs), a table counting
every verdict, what changed in the catalog, then the replicas grouped by cause (the change once, the
changed objects they read, why a runtime switched or a replica blocks), cut to --max-chars (60000 by
default; a comment holds 65536) with a line saying how many groups were left out and where the full
report is; --report PATH writes the full report replica by replica (JSON for a .json name, markdown
for .md, else text), nothing cut. --note TEXT adds a note line. No text or markdown line is
longer than 500 characters; json lists everything, unabridged.

exit status (dyff's --set-exit-code): 1 when some replica has a verdict --fail-on names (default
rolls,blocks; "none" never), else 0; 2 bad input or usage.

two folders: "omerender diff DIR1 DIR2" (exactly two folders, no other path) means --before DIR1
--after DIR2 and reads every file in them, whatever its name. That is the KUBECTL_EXTERNAL_DIFF
calling convention (kubectl writes one suffix-less file per object); kubectl puts the two folders
right after the program, so point it at omerender-kdiff (installed with omerender), and include the
replicas in what kubectl diffs:
  KUBECTL_EXTERNAL_DIFF=omerender-kdiff kubectl diff -f catalog/ -f replicas/

examples:
  omerender diff --before main/catalog --before main/replicas --after pr/catalog --after pr/replicas
  omerender diff -f replicas/ --before main/catalog --after pr/catalog --output markdown > comment.md
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
    add_jobs_option(p)
    add_output_arguments(p)
    add_color_option(p)
    p.set_defaults(func=run)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """The replicas and the objects on both sides of a change (``omereconcile forecast`` reads the same)."""
    p.add_argument(
        "folders",
        nargs="*",
        metavar="DIR1 DIR2",
        help="two folders to compare, as KUBECTL_EXTERNAL_DIFF passes them (see below)",
    )
    p.add_argument(
        "--before", action="append", metavar="PATH", help="objects before the change (repeatable; - is stdin)"
    )
    p.add_argument(
        "--after", action="append", metavar="PATH", help="objects after the change (repeatable; - is stdin)"
    )
    for side in ("before", "after"):
        p.add_argument(
            f"--{side}-kustomize",
            f"-k{side[0]}",
            action="append",
            default=[],
            metavar="DIR",
            help=(
                f"a kustomization's folder {side} the change, read as kubectl apply -k reads it "
                "(repeatable; see omerender render -k)"
            ),
        )
    p.add_argument(
        "-f",
        "--filename",
        action="append",
        dest="replicas",
        metavar="PATH",
        help="replicas to render on both sides (repeatable)",
    )
    p.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="TEXT",
        help="a note to print with the others (repeatable): what the job assumed, such as a folder "
        "missing on the base branch read as empty",
    )
    add_objects_options(p)
    add_flag(p)
    add_uid_argument(p)


@dataclass(frozen=True)
class Sides:
    """The change as the diff reads it: the objects, catalogs and replicas on each side, and the notes
    on what was assumed (``--assume-models-ready``)."""

    before_objects: list[dict[str, Any]]
    after_objects: list[dict[str, Any]]
    before_catalog: Catalog
    after_catalog: Catalog
    before: dict[tuple[str, str], InferenceReplica]
    after: dict[tuple[str, str], InferenceReplica]
    notes: tuple[str, ...] = ()
    # The models assumed Ready without a format name on each side (``--assume-models-ready``): their
    # replicas are "unknown until downloaded".
    before_unknown: frozenset[CatalogKey] = frozenset()
    after_unknown: frozenset[CatalogKey] = frozenset()
    # (namespace, name) -> the replica's uid in the cluster (``--uid``), hashed into its revision names.
    uids: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def diff(self, parts: int = 1) -> tuple[ReplicaDiff, ...]:
        """Every replica's diff, in :func:`omerender.diff.diff_replicas`'s order, rendered in ``parts``
        processes (:func:`omerender.cli.shards.in_parts`); the same diffs for any ``parts``, except
        that those made in another process carry no runners or payload, which no output reads."""
        # deepdiff comes with the tools extra: imported only when a diff runs (the CLI checks it first).
        from omerender.diff import diff_replicas

        unknown = {"before_unknown": self.before_unknown, "after_unknown": self.after_unknown}
        uids = dict(self.uids)
        if parts <= 1:
            return diff_replicas(
                self.before, self.after, self.before_catalog, self.after_catalog, **unknown, uids=uids
            )
        keys = sorted(set(self.before) | set(self.after))

        def work(part: int, count: int) -> tuple[ReplicaDiff, ...]:
            mine = set(keys[part::count])
            before = {k: v for k, v in self.before.items() if k in mine}
            after = {k: v for k, v in self.after.items() if k in mine}
            diffs = diff_replicas(
                before, after, self.before_catalog, self.after_catalog, **unknown, uids=uids
            )
            # A child's diffs travel pickled: without the templates, which would be rebuilt to pickle.
            return diffs if part == 0 else tuple(_portable(d) for d in diffs)

        merged = [d for done in in_parts(work, parts) for d in done]
        return tuple(sorted(merged, key=lambda d: (d.namespace, d.name)))

    def review(self, diffs: Sequence[ReplicaDiff], fail_on: frozenset[Status]) -> Review:
        """The grouped review of ``diffs`` (:func:`omerender.diff.build_review`) over these sides."""
        from omerender.diff import build_review

        return build_review(
            diffs,
            self.before_catalog,
            self.after_catalog,
            self.before,
            self.after,
            fail_on=fail_on,
            notes=self.notes,
        )


def _portable(diff: ReplicaDiff) -> ReplicaDiff:
    def slim(side: Outcome | None) -> Outcome | None:
        return None if side is None else replace(side, runners=(), payload=b"")

    return replace(diff, before=slim(diff.before), after=slim(diff.after))


# The file names kubectl diff writes for KUBECTL_EXTERNAL_DIFF: [group.]version.Kind.namespace.name
# (kubectl/pkg/cmd/diff/diff.go, InfoObject.Name).
_KUBECTL_NAME = re.compile(
    r"(?:[a-z0-9.-]+\.)?v[0-9]+(?:(?:alpha|beta)[0-9]+)?\.[A-Z][A-Za-z0-9]*\.[a-z0-9-]*\..+"
)


def _folder_objects(folder: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every object under ``folder``: in the files kubectl diff writes (suffix-less, named for the
    object) and in ``.yaml``/``.yml``/``.json`` files; dotfiles skipped, other files (a README, a
    ``SUPPORTED_MODELS.md``) skipped with a note."""
    files: list[Path] = []
    others: list[str] = []
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        if p.suffix in SUFFIXES or _KUBECTL_NAME.fullmatch(p.name):
            files.append(p)
        else:
            others.append(str(p))
    if others:
        more = f", … {len(others) - 3} more" if len(others) > 3 else ""
        note(
            f"skipped {len(others)} file{'s' if len(others) != 1 else ''} that are not manifests: {', '.join(others[:3])}{more}"
        )
    loaded = read(files, check=True, strict=bool(args.strict))
    warn_duplicates(loaded, args)
    return _remember(loaded)


def _namespaced_name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


# The file each object of this command was read from, by the object's identity: a replica on both
# sides has one name and two files, so its name cannot say which one an error is about.
_READ_FROM: dict[int, str] = {}


def _remember(loaded: Loaded) -> list[dict[str, Any]]:
    _READ_FROM.update((id(o.raw), o.origin.source) for o in loaded.objects)
    return [o.raw for o in loaded.objects]


# (side, namespace, name) -> the file a replica was read from; side is "before", "after" or "-f".
_REPLICA_FILES: dict[tuple[str, str, str], str] = {}


def replica_file(namespace: str, name: str) -> str | None:
    """The file the replica of :func:`read_sides` was read from: its ``-f`` file, else the after side's,
    else the before side's (None for a replica it did not read)."""
    for side in ("-f", "after", "before"):
        if (found := _REPLICA_FILES.get((side, namespace, name))) is not None:
            return found
    return None


def read_from(obj: Mapping[str, Any]) -> str | None:
    """The file an object of :func:`read_sides` was read from (None for one it did not read)."""
    return _READ_FROM.get(id(obj))


def _file_of(obj: Mapping[str, Any], where: str) -> str:
    """The file the object was read from and the side (``where``), for an error's start."""
    origin = _READ_FROM.get(id(obj))
    return f"{origin} ({where})" if origin is not None else where


def _replicas(objects: Iterable[Mapping[str, Any]], where: str) -> dict[tuple[str, str], InferenceReplica]:
    """The replicas among ``objects``, checked; an error names the file (and the side, ``where``)."""
    out: dict[tuple[str, str], InferenceReplica] = {}
    files: dict[tuple[str, str], str] = {}
    for obj in objects:
        if obj.get("kind") != KIND:
            continue
        check_replica(obj, _file_of(obj, where))
        replica = parse_object(InferenceReplica, obj, strict=False)
        key = (replica.namespace, replica.metadata.name)
        file = _READ_FROM.get(id(obj), where)
        if key in out:
            also = f" (also in {files[key]})" if files[key] != file else ""
            raise InputError(
                f"{_file_of(obj, where)}: {KIND} {key[0]}/{key[1]} appears twice{also}; keep one"
            )
        out[key] = replica
        files[key] = file
        if file != where:
            _REPLICA_FILES[(where, *key)] = file
    return out


def _side(
    flag: str,
    paths: Sequence[str],
    replicas_apart: bool,
    args: argparse.Namespace,
    kustomizations: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The objects of one side; with -f, a path holding only replicas is refused, not misread."""
    loaded = read(paths, kustomizations, check=True, strict=bool(args.strict))
    for given, _ in loaded.inputs:
        objects = [o for o in loaded.objects if o.given == given]
        if replicas_apart and objects and all(o.kind == KIND for o in objects):
            raise InputError(
                f"{flag} {given}: holds only {KIND}s, where {flag} expects models and runtimes; "
                f"give replicas with -f {given}"
            )
    check_inputs(loaded, flag, {*CATALOG_KINDS, KIND}, "give the catalog's files or folders")
    warn_duplicates(loaded, args)
    return _remember(loaded)


def _objects(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(before objects, after objects, -f paths), with the two-folder form resolved."""
    folders: list[str] = list(args.folders)
    replicas: list[str] = list(args.replicas or ())
    before_k: list[str] = list(getattr(args, "before_kustomize", None) or ())
    after_k: list[str] = list(getattr(args, "after_kustomize", None) or ())
    if args.before is None and args.after is None and not replicas and not before_k and not after_k:
        if len(folders) == 2 and all(Path(p).is_dir() for p in folders):
            return _folder_objects(Path(folders[0]), args), _folder_objects(Path(folders[1]), args), []
        raise InputError(
            "give --before PATH and --after PATH (each may repeat; replicas with -f PATH), or exactly "
            "two folders DIR1 DIR2 to compare"
        )
    if folders:
        raise InputError(
            f"{' '.join(folders)}: a path without a flag; --before and --after take one path each (repeat "
            "the flag for more) and replicas are given with -f PATH, so that no path's meaning depends "
            "on where it stands"
        )
    if (args.before is None and not before_k) or (args.after is None and not after_k):
        missing = "--before" if args.before is None and not before_k else "--after"
        raise InputError(f"{missing} is missing: give the objects on both sides of the change")
    before = _side("--before", args.before or [], bool(replicas), args, before_k)
    after = _side("--after", args.after or [], bool(replicas), args, after_k)
    return before, after, replicas


def read_sides(args: argparse.Namespace, prog: str = "diff") -> Sides:
    """The arguments of :func:`add_input_arguments`, read and checked."""
    _READ_FROM.clear()
    _REPLICA_FILES.clear()
    before_objects, after_objects, replica_paths = _objects(args)
    # Checked as the loader read them.
    before_catalog = Catalog.from_objects(before_objects, strict=False)
    after_catalog = Catalog.from_objects(after_objects, strict=False)
    notes: list[str] = list(getattr(args, "note", None) or ())
    unknown: tuple[frozenset[CatalogKey], frozenset[CatalogKey]] = (frozenset(), frozenset())
    if args.assume_models_ready:
        before_ready, after_ready = assume_models_ready(before_catalog), assume_models_ready(after_catalog)
        before_catalog, after_catalog = before_ready.catalog, after_ready.catalog
        unknown = (frozenset(before_ready.format_unknown), frozenset(after_ready.format_unknown))
        for side, ready in (("before", before_ready), ("after", after_ready)):
            notes.extend(f"{side}: {note}" for note in (ready.note(), ready.format_note()) if note)
    if replica_paths:
        fixed = _replicas(_remember(read(replica_paths, check=False, every_kind=True)), "-f")
        if not fixed:
            raise InputError(
                f"-f {' '.join(replica_paths)}: no {KIND} found; give files or folders that hold one"
            )
        ignored = sorted(
            {_namespaced_name(o) for o in [*before_objects, *after_objects] if o.get("kind") == KIND}
        )
        if ignored:
            print(
                f"{prog}: ignoring the {KIND}s among --before/--after ({', '.join(ignored)}): "
                "the replicas given with -f render on both sides",
                file=sys.stderr,
            )
        before, after = fixed, fixed
    else:
        before = _replicas(before_objects, "before")
        after = _replicas(after_objects, "after")
        if not before and not after:
            raise InputError(
                f"no {KIND} among the objects on either side; give the replicas to render with -f PATH "
                "or include them in the --before and --after paths"
            )
    uids = resolve_uids(uids_of(args), {*before, *after})
    return Sides(
        before_objects,
        after_objects,
        before_catalog,
        after_catalog,
        before,
        after,
        tuple(notes),
        *unknown,
        uids=uids,
    )


def render_output(
    kind: str,
    diffs: Sequence[ReplicaDiff],
    args: argparse.Namespace,
    fail_on: frozenset[Status],
    notes: Sequence[str],
    *,
    full: bool = False,
    report: str | None = None,
    uid_notes: bool = False,
    review: Review | None = None,
) -> str:
    """One output as ``kind`` (text, json, markdown); ``full``: every replica, nothing cut;
    ``uid_notes``: with :func:`omerender.diff.uid_note` when revision names are for an empty uid
    (``omerender diff`` reads files; ``kubectl ome diff`` the live uids, and leaves it out);
    ``review``: the grouped review (:func:`omerender.diff.build_review`), which markdown then writes
    (without one, markdown lists replica by replica)."""
    from omerender.diff import DEFAULT_MARKDOWN_CHARS, review_to_markdown, to_json, to_markdown, to_text

    show = full or args.show_unchanged
    if kind == "json":
        doc = to_json(diffs, notes=notes, fail_on=fail_on, uid_notes=uid_notes)
        doc["assumeModelsReady"] = bool(args.assume_models_ready)
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    limit = None if full else args.max_chars
    if kind == "markdown":
        chars = DEFAULT_MARKDOWN_CHARS if limit is None else (limit or None)
        if review is not None and not full:
            return review_to_markdown(review, max_chars=chars, full_report=report)
        return to_markdown(
            diffs,
            notes=notes,
            fail_on=fail_on,
            max_chars=chars,
            show_unchanged=show,
            full_report=report,
            uid_notes=uid_notes,
        )
    text = to_text(diffs, notes=notes, show_unchanged=show, uid_notes=uid_notes)
    if limit and len(text) > limit:
        kept = text[:limit].rsplit("\n", 1)[0]
        left = text.count("\n") - kept.count("\n") - 1
        where = report or "-o json, or --report PATH"
        text = f"{kept}\n... {left} more lines left out (--max-chars {limit}); the full report: {where}\n"
    return text


def write_report(
    diffs: Sequence[ReplicaDiff],
    args: argparse.Namespace,
    fail_on: frozenset[Status],
    notes: Sequence[str],
    *,
    uid_notes: bool = False,
) -> None:
    """``--report PATH``: the full report, nothing cut (JSON for a .json name, markdown for .md)."""
    if not args.report:
        return
    suffix = Path(args.report).suffix.lower()
    kind = {".json": "json", ".md": "markdown", ".markdown": "markdown"}.get(suffix, "text")
    Path(args.report).write_text(
        render_output(kind, diffs, args, fail_on, notes, full=True, uid_notes=uid_notes), encoding="utf-8"
    )


def run(args: argparse.Namespace) -> int:
    from omerender.diff import summary

    fail_on = fail_on_from(args.fail_on)
    if args.max_chars is not None and args.max_chars < 0:
        raise InputError(f"--max-chars {args.max_chars}: give a number of characters, or 0 for no limit")
    sides = read_sides(args)
    replicas = len(set(sides.before) | set(sides.after))
    diffs = sides.diff(parts_for(args.jobs, replicas, per_part=_REPLICAS_PER_PROCESS))
    write_report(diffs, args, fail_on, sides.notes, uid_notes=True)
    review = sides.review(diffs, fail_on) if args.output == "markdown" else None
    text = render_output(
        args.output, diffs, args, fail_on, sides.notes, report=args.report, uid_notes=True, review=review
    )
    if args.output == "text" and colour_on(args):
        text = "".join(verdict_line(line, True) for line in text.splitlines(keepends=True))
    sys.stdout.write(text)
    print(f"diff: {summary(diffs)}", file=sys.stderr)
    return 1 if any(d.status in fail_on for d in diffs) else 0


def main(argv: Sequence[str] | None = None, *, no_color: bool = False) -> int:
    """``omerender diff`` as a program of its own (for a ``KUBECTL_EXTERNAL_DIFF`` entry point);
    ``no_color``: ``NO_COLOR`` is set (:func:`omerender.cli.main`)."""
    from omerender.cli import main as omerender_main

    return omerender_main(["diff", *(sys.argv[1:] if argv is None else argv)], no_color=no_color)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
