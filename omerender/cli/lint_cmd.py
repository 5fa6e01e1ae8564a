"""``omerender lint``: every problem a render of the catalog would meet, with the object causing it."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from typing import Any

from omerender.catalog import CATALOG_KINDS
from omerender.cli.assume import add_flag
from omerender.cli.colour import add_color_option, colour_on, severity_line
from omerender.cli.io import InputError, origin_of
from omerender.cli.kubeschema import kube_problems
from omerender.cli.objects import add_kustomize_flag, add_objects_options, add_path_flag, catalog_objects
from omerender.cli.shards import add_jobs_option, in_parts, parts_for
from omerender.diff.verdicts import LINE_LIMIT
from omerender.lint import CODES, Finding, LintReport, lint_objects

__all__ = ["REPORT_API_VERSION", "add_parser", "run", "to_json", "to_text"]

# Below this many renders lint is instant; above it, say how far it got.
_PROGRESS_FROM = 300
# Objects per process at the least: a catalog of a few hundred lints faster on two cores than one, a
# smaller one is done before a second process would have started.
_OBJECTS_PER_PROCESS = 150

_EPILOG = """\
output: the findings grouped by problem, errors first, one line each: the object, the piece rendered
([engine], [router], ... or [-] for the object itself), its file, and the problem; a model no runtime
can be selected for names how many runtimes were checked and the closest few, each with the first
reason it was passed over. Then one "note:" line for what was counted rather than reported model by
model, and a table of the problems with their counts. -o json prints the same as one JSON object.

warnings: NameTieBreak (the selected runtime won on its name alone) and RuntimeForAnotherSize (it
declares a modelSizeRange the model's size was never checked against). They do not fail lint.

exit status: 0 no errors (warnings allowed), 1 errors, 2 bad input or usage.
"""


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "lint",
        help="render every model and runtime of a catalog and report every problem",
        description=(
            "Render every model with the runtime it would select (for each piece that runtime has) and\n"
            "every runtime alone (for each of its pieces); validate each result against the Kubernetes\n"
            "1.36 schemas. Exit 1 when anything is wrong."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="catalog files or folders, as --objects takes them (- reads standard input)",
    )
    add_path_flag(
        p, "--objects", default=[], help="catalog files or folders (repeatable; - reads standard input)"
    )
    add_kustomize_flag(p)
    add_objects_options(p)
    p.add_argument("--no-schema", action="store_true", help="skip the Kubernetes schema check")
    add_flag(p)
    add_jobs_option(p)
    p.add_argument(
        "--output",
        "-o",
        choices=("text", "json"),
        default="text",
        help="text (default) for people, json for machines",
    )
    add_color_option(p)
    p.set_defaults(func=run)


def _progress(done: int, total: int) -> None:
    if total >= _PROGRESS_FROM and (done % 100 == 0 or done == total):
        print(f"lint: {done}/{total} renders", file=sys.stderr)


def _file(finding: Finding) -> str | None:
    origin = origin_of(finding.kind, finding.name) if finding.kind else None
    return str(origin) if origin is not None else None


def _groups(findings: Iterable[Finding]) -> list[tuple[str, list[Finding]]]:
    """Findings by code: errors before warnings, the larger group first, then by code."""
    grouped: dict[str, list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(finding.code, []).append(finding)
    order = sorted(grouped.items(), key=lambda g: (g[1][0].severity != "error", -len(g[1]), g[0]))
    return [(code, sorted(items, key=lambda f: (f.subject, f.component))) for code, items in order]


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def to_text(report: LintReport) -> str:
    """The human output: grouped findings, notes, then a summary table; no line longer than
    :data:`~omerender.diff.LINE_LIMIT` (a longer one is cut, ending ``… (-o json has the full text)``)."""
    lines: list[str] = []
    groups = _groups(report.findings)
    for code, items in groups:
        title = CODES.get(code, "renders OME's controller would block")
        lines.append(f"{items[0].severity} {code}: {title} ({len(items)})")
        # One problem said once, however many objects have it (then one line per object); a problem
        # of one object stays on its line.
        alike: dict[str, list[Finding]] = {}
        for f in items:
            alike.setdefault(f.problem, []).append(f)
        for problem, same in alike.items():
            if len(same) > 1:
                who = f"all {len(same)}" if len(alike) == 1 else _plural(len(same), "object")
                lines.append(f"  {who}: {problem}")
            for f in same:
                where = _file(f)
                head = f"{f.subject} [{f.component}]{f' ({where})' if where else ''}"
                lines.append(f"    {head}" if len(same) > 1 else f"  {head}: {problem}")
        lines.append("")
    lines.extend(f"note: {note}" for note in report.notes)
    if groups:
        if report.notes:
            lines.append("")
        width = max(len("problem"), *(len(code) for code, _ in groups))
        lines.append(f"{'problem':<{width}}  severity  count")
        lines.extend(f"{code:<{width}}  {items[0].severity:<8}  {len(items):>5}" for code, items in groups)
    return "".join(f"{_cut(line)}\n" for line in lines)


# Where a cut line ends: the reader sees, at the cut, where the rest is.
_CUT_END = "… (-o json has the full text)"


def _cut(line: str) -> str:
    """``line`` within :data:`LINE_LIMIT` characters, ending with :data:`_CUT_END` when it was longer."""
    return line if len(line) <= LINE_LIMIT else line[: LINE_LIMIT - len(_CUT_END)] + _CUT_END


# The JSON report's schema version: a new field keeps it; a field removed, renamed or given another
# meaning raises it (docs/releasing.md).
REPORT_API_VERSION = "omerender.lint/v1"


def to_json(report: LintReport, *, assume_ready: bool) -> dict[str, Any]:
    counts = Counter(f.code for f in report.findings)
    return {
        "apiVersion": REPORT_API_VERSION,
        "renders": report.renders,
        "assumeModelsReady": assume_ready,
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "summary": {code: counts[code] for code, _ in _groups(report.findings)},
        "notes": list(report.notes),
        "findings": [{**f.as_json(), "file": _file(f)} for f in report.findings],
    }


def run(args: argparse.Namespace) -> int:
    # Positional paths first, then --objects: one list, read in the order given.
    paths = [*args.paths, *args.objects]
    args.objects = paths
    if not paths and not args.kustomize:
        raise InputError(
            "give the catalog: omerender lint PATH..., --objects PATH or -k DIR (each may repeat)"
        )
    objects = catalog_objects(
        paths,
        args,
        kustomizations=args.kustomize,
        flag="lint",
        positional=True,
        fix="lint checks the catalog (models, runtimes, fine-tuned weights, InferenceServices): leave "
        "InferenceReplicas out (omerender render and diff read them)",
    )
    if not any(o.get("kind") in CATALOG_KINDS for o in objects):
        # As kubectl apply refuses a path with nothing to apply: "0 problems" here would pass a CI
        # job pointed at the wrong folder.
        raise InputError(
            f"{' '.join([*args.objects, *args.kustomize])}: no models or serving runtimes found; give the "
            "catalog's files or folders"
        )
    report = lint_objects(
        objects,
        validate=None if args.no_schema else kube_problems,
        progress=_progress,
        assume_ready=args.assume_models_ready,
        parts=parts_for(args.jobs, len(objects), per_part=_OBJECTS_PER_PROCESS),
        run_parts=in_parts,
        strict=False,  # checked as the loader read them
    )
    if args.output == "json":
        out = to_json(report, assume_ready=args.assume_models_ready)
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    else:
        on = colour_on(args)
        sys.stdout.write(
            "".join(severity_line(line, on) for line in to_text(report).splitlines(keepends=True))
        )
    errors = len(report.errors)
    print(
        f"lint: {report.renders} renders, {_plural(errors, 'problem')}, "
        f"{_plural(len(report.warnings), 'warning')}",
        file=sys.stderr,
    )
    return 1 if errors else 0
