"""The output flags of ``omerender diff``, apart from its command so that ``kubectl ome diff`` takes the
same flags without loading the rendering library to build its parser."""

from __future__ import annotations

import argparse

__all__ = ["add_output_arguments"]


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    """``-o``, ``--fail-on``, ``--max-chars``, ``--report`` and ``--show-unchanged``, which
    :func:`render_output` and :func:`write_report` read (``kubectl ome diff`` takes the same)."""
    p.add_argument(
        "--output",
        "-o",
        choices=("text", "json", "markdown"),
        default="text",
        help="text (default), json, or markdown for a pull-request comment",
    )
    p.add_argument(
        "--fail-on",
        default="rolls,blocks",
        metavar="VERDICTS",
        help="exit 1 when a replica has one of these verdicts (comma-separated: rolls, blocks, unblocks, "
        "new, removed, unknown, still-blocks, unchanged; none: never); default rolls,blocks",
    )
    p.add_argument(
        "--max-chars",
        type=int,
        metavar="N",
        help="cut the output to N characters, leaving out whole replicas and saying how many "
        "(default 60000 for markdown, which a pull-request comment holds; 0: no limit)",
    )
    p.add_argument(
        "--report",
        metavar="PATH",
        help="also write the full report to PATH, nothing cut: JSON for a .json name, markdown for .md, "
        "else text with every replica",
    )
    p.add_argument(
        "--show-unchanged",
        action="store_true",
        help="list every replica, not only those whose verdict changed",
    )
