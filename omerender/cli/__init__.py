"""The ``omerender`` command line: render previews and the CI tools.

Exit codes: 0 done (rendered, allowed, nothing rolls), 1 the answer is "no" (blocked, denied, rolls),
2 bad input or usage (or output that cannot be written), with a message saying what to fix, 3 an
internal error: a bug, reported as one line with where to report it, never a traceback.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from collections.abc import Sequence

from omerender import __version__
from omerender.cli.collector import collector_paused
from omerender.errors import InvalidObjectError, OmeRenderError

__all__ = ["main"]

# Each command's module and one-line help. A command's module is imported only when that command
# runs (or its help is asked for): ``omerender --help`` lists them without importing the library.
# tests/unit/test_cli_startup.py checks that these lines are the ones the modules register.
_COMMANDS: dict[str, tuple[str, str]] = {
    "render": (
        "omerender.cli.render_cmd",
        "render a replica's pod templates, headless Service and ControllerRevision",
    ),
    "lint": (
        "omerender.cli.lint_cmd",
        "render every model and runtime of a catalog and report every problem",
    ),
    "validate": (
        "omerender.cli.validate_cmd",
        "check InferenceReplicas against the CRD schema and OME's admission webhook, offline",
    ),
    "diff": (
        "omerender.cli.diff_cmd",
        "what a catalog or replica change does to each replica: unchanged, rolls or blocks",
    ),
    "completion": ("omerender.cli.completion_cmd", "print a shell completion script (bash, zsh or fish)"),
}


def _command_of(argv: Sequence[str]) -> str | None:
    """The command named on the command line (its first word that is not an option), if any."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in _COMMANDS else None


def _parser(only: str | None = None, *, every: bool = True) -> argparse.ArgumentParser:
    """The command line's parser: every command's (``every``), or ``only`` that command's in full and
    the others' names and help lines."""
    parser = argparse.ArgumentParser(
        prog="omerender", description="Render OME InferenceReplicas the way OME's controller does."
    )
    # A flag, not an environment variable: omerender reads no ambient input, its CLI included.
    parser.add_argument(
        "--traceback",
        action="store_true",
        help="on an internal error, show the traceback (for a bug report) instead of one line",
    )
    parser.add_argument("--version", action="version", version=f"omerender {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (module, help_line) in _COMMANDS.items():
        if every or name == only:
            importlib.import_module(module).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line, add_help=False)
    return parser


def _output_failed(command: str, exc: OSError) -> int:
    """stdout is gone (a closed pipe) or full: say so once and leave without Python's flush warning."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    if exc.errno != errno.EPIPE:  # a reader that stopped early (| head) asked for no more: no message
        print(f"omerender {command}: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
    return 2


# The modules of the ``tools`` extra a command needs; the core install (``pip install omerender``)
# renders and validates without them.
_TOOLS_EXTRA = "tools"


def _tools_modules(args: argparse.Namespace) -> tuple[str, ...]:
    if args.command == "diff":
        return ("deepdiff",)
    if (args.command == "lint" and not args.no_schema) or (args.command == "render" and args.validate):
        return ("kubernetes_validate", "jsonschema_rs")
    return ()


def _missing_extra(args: argparse.Namespace) -> str | None:
    """The message for a command whose extra is not installed, or None when it can run."""
    for module in _tools_modules(args):
        try:
            importlib.import_module(module)
        except ImportError:
            what = {"lint": "the Kubernetes schema check ", "render": "--validate "}.get(args.command, "")
            hint = " (or run it with --no-schema)" if args.command == "lint" else ""
            return (
                f"omerender {args.command}: {what}needs the '{_TOOLS_EXTRA}' extra ({module} is not "
                f"installed): pip install 'omerender[{_TOOLS_EXTRA}]'{hint}"
            )
    return None


def main(argv: Sequence[str] | None = None, *, no_color: bool = False) -> int:
    """Run the command line (``argv``: the words after ``omerender``, ``sys.argv`` by default).
    ``no_color``: ``NO_COLOR`` is set, which the console script reads (the library reads no
    environment): ``--color auto`` then prints no colour."""
    # Paused from the start: importing the command's modules (pydantic's and ours) makes hundreds of
    # thousands of objects, and each full collection meanwhile walks them all to free nothing (about 3%
    # of a render's start-up); the collector is restored as it was when the command ends.
    with collector_paused():
        return _main(argv, no_color)


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The sub-command's own parser, whose usage an error in its arguments prints (as git and kubectl
    print the sub-command's, not the program's)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices.get(command)
            if isinstance(found, argparse.ArgumentParser):
                return found
    return parser  # pragma: no cover - every command has a parser


def _main(argv: Sequence[str] | None, no_color: bool = False) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(_command_of(words), every=False)
    args, extra = parser.parse_known_args(words)
    args.no_color = no_color
    stray = [word for word in extra if not word.startswith("-")]
    if args.command == "diff" and stray == extra:
        # argparse fills diff's positional list once; the paths it could not place join it, so that
        # diff names every path given without a flag instead of argparse's "unrecognized arguments".
        args.folders = [*args.folders, *stray]
    elif extra:
        _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    from omerender.cli.io import InputError, forget_origins, loading_in, origin_of, skipped_summary

    forget_origins()
    if (missing := _missing_extra(args)) is not None:
        print(missing, file=sys.stderr)
        return 2
    try:
        # Commands with --jobs load large files in that many processes, the others in one per core.
        with loading_in(getattr(args, "jobs", None)):
            code: int = args.func(args)
        sys.stdout.flush()
        for line in skipped_summary():
            print(f"omerender {args.command}: note: {line}", file=sys.stderr)
    except (InputError, OmeRenderError) as exc:
        origin = origin_of(exc.kind, exc.name) if isinstance(exc, InvalidObjectError) else None
        where = f"{origin}: " if origin is not None else ""
        print(f"omerender {args.command}: {where}{exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno in (errno.EPIPE, errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG):
            return _output_failed(args.command, exc)
        print(f"omerender {args.command}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, MemoryError, RecursionError, Exception) as exc:  # the last resort
        if isinstance(exc, KeyboardInterrupt):
            return 130
        if args.traceback:
            raise
        print(
            f"omerender {args.command}: internal error ({type(exc).__name__}): this is a bug in omerender; "
            f"please report it with the command line and its input files (run again with "
            f"omerender --traceback {args.command} … to see the traceback)",
            file=sys.stderr,
        )
        return 3
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
