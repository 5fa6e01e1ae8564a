"""``omerender lint``: every problem a render of the catalog would meet, with the object causing it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from omerender.cli.kubeschema import kube_problems
from omerender.cli.objects import add_objects_options, catalog_objects
from omerender.lint import lint_objects

__all__ = ["add_parser", "run"]

# Below this many renders lint is instant; above it, say how far it got.
_PROGRESS_FROM = 300


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "lint",
        help="render every model and runtime of a catalog and report every problem",
        description=(
            "Render every model with the runtime it would select (for each piece that runtime has) and "
            "every runtime alone (for each of its pieces); validate each result against the Kubernetes "
            "1.36 schemas. Exit 1 when anything is wrong."
        ),
    )
    p.add_argument("--objects", nargs="+", required=True, metavar="PATH", help="catalog files or folders")
    add_objects_options(p)
    p.add_argument("--no-schema", action="store_true", help="skip the Kubernetes schema check")
    p.set_defaults(func=run)


def _progress(done: int, total: int) -> None:
    if total >= _PROGRESS_FROM and (done % 100 == 0 or done == total):
        print(f"lint: {done}/{total} renders", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    report = lint_objects(
        catalog_objects(args.objects, args),
        validate=None if args.no_schema else kube_problems,
        progress=_progress,
    )
    for finding in report.findings:
        print(finding)
    problems = len(report.findings)
    print(
        f"lint: {report.renders} renders, {problems} problem{'s' if problems != 1 else ''}",
        file=sys.stderr,
    )
    return 1 if problems else 0
