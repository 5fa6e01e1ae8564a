"""``omerender completion bash|zsh|fish``: a shell completion script, generated from the argparse
tree by shtab, so it always knows every command and flag this ``omerender`` has.

Install it once, e.g. ``omerender completion bash > ~/.local/share/bash-completion/completions/omerender``,
``omerender completion zsh > "${fpath[1]}/_omerender"`` or ``omerender completion fish >
~/.config/fish/completions/omerender.fish``. Arguments that take paths complete file names (``DIR``
ones folder names); shtab is imported only by this command, so it costs the others nothing.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["SHELLS", "add_parser", "script"]

SHELLS = ("bash", "zsh", "fish")
_FILE_METAVARS = frozenset({"PATH", "FILE", "DIR1 DIR2", "REPLICA"})


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh or fish)",
        description=(
            "Print the completion script for SHELL. bash: omerender completion bash > "
            "~/.local/share/bash-completion/completions/omerender; zsh: omerender completion zsh > "
            '"${fpath[1]}/_omerender"; fish: omerender completion fish > '
            "~/.config/fish/completions/omerender.fish"
        ),
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help="bash, zsh or fish")
    p.set_defaults(func=run)


def _mark_paths(parser: argparse.ArgumentParser, file: Any, directory: Any) -> None:
    """Tell shtab which arguments take paths: file names for PATH/FILE, folder names for DIR."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _mark_paths(child, file, directory)
            continue
        metavar = action.metavar if isinstance(action.metavar, str) else None
        if metavar == "DIR":
            action.complete = directory  # type: ignore[attr-defined]
        elif metavar in _FILE_METAVARS or (metavar is None and action.dest in ("replica", "files")):
            action.complete = file  # type: ignore[attr-defined]


def script(shell: str) -> str:
    """The completion script for ``shell`` (one of :data:`SHELLS`)."""
    import shtab

    from omerender.cli import _parser

    parser = _parser()
    _mark_paths(parser, shtab.FILE, shtab.DIRECTORY)
    text: str = shtab.complete(parser, shell=shell)
    return text


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell))
    return 0
