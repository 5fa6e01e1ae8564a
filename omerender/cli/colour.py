"""Colour on a terminal only: ``--color auto|always|never`` (auto by default) and ``NO_COLOR``.

``auto`` colours when standard output is a terminal and ``NO_COLOR`` (https://no-color.org) is not set;
the console script reads ``NO_COLOR`` at the process's start (:mod:`omerender_entry`) and passes it to
:func:`omerender.cli.main`, so the library, ``python -m omerender.cli`` included, reads no environment.
The text is the same with or without colour: colour only adds escape codes around words already there.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Final, TextIO

__all__ = ["MODES", "add_color_option", "colour_on", "paint", "severity_line", "verdict_line"]

MODES: Final = ("auto", "always", "never")
_CODES: Final = {
    "red": "31",
    "green": "32",
    "yellow": "33",
    "magenta": "35",
    "cyan": "36",
    "bold red": "1;31",
}
# omerender diff's verdicts as its text output starts them (after "namespace/name: ").
_VERDICTS: Final = {
    "rolls": "yellow",
    "blocks": "bold red",
    "still blocks": "red",
    "unblocks": "green",
    "new": "green",
    "removed": "magenta",
    "unknown until downloaded": "cyan",
}
_DIFF_LINE = re.compile(
    r"^(\S+/\S+: )(still blocks|unknown until downloaded|unblocks|rolls|blocks|new|removed)\b"
)


def add_color_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--color",
        choices=MODES,
        default="auto",
        help="colour the text output: auto (default) on a terminal unless NO_COLOR is set, always, never",
    )


def colour_on(args: argparse.Namespace, out: TextIO | None = None) -> bool:
    """Whether to colour what goes to ``out`` (standard output by default) under ``args.color``."""
    mode = getattr(args, "color", "never")
    if mode != "auto":
        return bool(mode == "always")
    if getattr(args, "no_color", False):
        return False
    stream = sys.stdout if out is None else out
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def paint(text: str, colour: str, on: bool) -> str:
    return f"\x1b[{_CODES[colour]}m{text}\x1b[0m" if on and text else text


def verdict_line(line: str, on: bool) -> str:
    """A line of ``omerender diff``'s text with its verdict coloured (other lines as they are)."""
    if not on:
        return line
    match = _DIFF_LINE.match(line)
    if match is None:
        return line
    verdict = match.group(2)
    return f"{match.group(1)}{paint(verdict, _VERDICTS[verdict], on)}{line[match.end() :]}"


def severity_line(line: str, on: bool) -> str:
    """A line starting with ``error`` or ``warning`` (lint's group headers) with that word coloured,
    and validate's ``NAMESPACE/NAME: allowed``."""
    if not on:
        return line
    for word, colour in (("error", "bold red"), ("warning", "yellow")):
        if line.startswith(f"{word} "):
            return paint(word, colour, on) + line[len(word) :]
    at = line.find(": allowed")
    if at > 0 and " " not in line[:at]:
        return line[: at + 2] + paint("allowed", "green", on) + line[at + len(": allowed") :]
    return line
