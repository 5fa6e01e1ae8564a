"""The ``omerender`` command line: render previews and the CI tools.

Exit codes: 0 done (rendered, allowed, nothing rolls), 1 the answer is "no" (blocked, denied, rolls),
2 bad input or usage, with a message saying what to fix.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from omerender.cli import diff_cmd, lint_cmd, render_cmd, validate_cmd
from omerender.cli.io import InputError
from omerender.errors import InvalidObjectError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="omerender", description="Render OME InferenceReplicas the way OME's controller does."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    render_cmd.add_parser(sub)
    lint_cmd.add_parser(sub)
    validate_cmd.add_parser(sub)
    diff_cmd.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except (InputError, InvalidObjectError) as exc:
        print(f"omerender {args.command}: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
