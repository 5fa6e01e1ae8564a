"""The output flags of ``omerender diff``, apart from its command so that ``kubectl ome diff`` takes the
same flags without loading the rendering library to build its parser."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

__all__ = ["add_fail_on_argument", "add_output_arguments", "fail_on_from"]

if TYPE_CHECKING:
    from omerender.diff import Status


def add_fail_on_argument(p: argparse.ArgumentParser) -> None:
    """``--fail-on VERDICTS``: exit 1 when a replica's verdict is one of them (``omerender diff``,
    ``kubectl ome diff`` and ``omereconcile forecast`` take the same words); read with
    :func:`fail_on_from`."""
    p.add_argument(
        "--fail-on",
        default="rolls,blocks",
        metavar="VERDICTS",
        help="exit 1 when a replica has one of these verdicts (comma-separated: rolls, blocks, unblocks, "
        "new, removed, unknown, still-blocks, unchanged; none: never); default rolls,blocks",
    )


def fail_on_from(text: str) -> frozenset[Status]:
    """The verdicts ``--fail-on TEXT`` names, or :class:`~omerender.cli.io.InputError` (exit 2) naming
    the flag, the unknown word and the accepted ones."""
    from omerender.cli.io import InputError
    from omerender.diff import parse_fail_on

    try:
        return parse_fail_on(text)
    except ValueError as exc:
        raise InputError(f"--fail-on {text}: {exc}") from None


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
    add_fail_on_argument(p)
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
