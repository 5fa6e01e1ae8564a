"""The ``tools`` extra the template diff needs: checked when a public diff function is called."""

from __future__ import annotations

import importlib
from typing import Final

from omerender.errors import MissingExtraError

__all__ = ["TOOLS_EXTRA", "require_tools"]

TOOLS_EXTRA: Final = "tools"
_MODULE: Final = "deepdiff"


def require_tools(function: str) -> None:
    """Raise :class:`~omerender.errors.MissingExtraError` naming ``function`` when deepdiff (the
    ``tools`` extra) is not installed: at the call, not at the first replica that rolls."""
    try:
        importlib.import_module(_MODULE)
    except ImportError as exc:
        raise MissingExtraError(function, _MODULE, TOOLS_EXTRA) from exc
