"""``--assume-models-ready``: one flag, one meaning, for ``render``, ``diff`` and ``lint``."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["FLAG", "add_flag"]

FLAG = "--assume-models-ready"


def add_flag(parser: Any) -> None:
    p: argparse.ArgumentParser = parser
    p.add_argument(
        FLAG,
        action="store_true",
        help=(
            "treat every model as Ready, as the cluster holds it once OME has downloaded the weights "
            "(catalog files kept in git carry no status); the output says so"
        ),
    )
