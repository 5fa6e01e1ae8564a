"""pydantic's plugin loader, for a console-script process in which every pydantic plugin is disabled.

The first time pydantic builds a validator it calls ``get_plugins()`` from ``pydantic.plugin._loader``,
a module that imports ``importlib.metadata`` (and with it ``email``, ``csv`` and more) at its top, before
``get_plugins`` reads ``PYDANTIC_DISABLE_PLUGINS``. For the values that disable every plugin
(``__all__``, ``1``, ``true``: ``get_plugins`` in pydantic 2.x returns ``()`` for them) that import
serves nothing, and it was about 4% of a render of the seed example.

So, only when the variable holds one of those values when the command starts, the console scripts put
this stand-in where Python looks for that module: its ``get_plugins()`` returns ``()``, as pydantic's
does for those values; any other name asked of it loads pydantic's own module and answers from it
(which from then on is the module), so a pydantic that reads more from its loader still gets it. A value
that enables any plugin (unset, empty, a list of names) leaves pydantic's module alone. The library
never does this; ``omerender.cli`` run as a module does not either (``tests/unit/test_cli_startup.py``).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__all__ = ["ALL_DISABLED", "LOADER", "install"]

LOADER = "pydantic.plugin._loader"
# pydantic/plugin/_loader.py, get_plugins: these values of PYDANTIC_DISABLE_PLUGINS disable every plugin.
ALL_DISABLED = ("__all__", "1", "true")


class _NoPlugins(types.ModuleType):
    """Stands for ``pydantic.plugin._loader`` while every plugin is disabled."""

    def get_plugins(self) -> tuple[()]:
        """No plugins: what pydantic's ``get_plugins`` answers when the variable disables them all."""
        return ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # the import system's questions (__path__, ...)
            raise AttributeError(name)
        return getattr(_real_loader(), name)


def install(variable: str | None) -> bool:
    """Stand in for pydantic's plugin loader when ``variable`` (``PYDANTIC_DISABLE_PLUGINS``) disables
    every plugin and the loader is not imported yet; whether it did."""
    if variable not in ALL_DISABLED or LOADER in sys.modules:
        return False
    sys.modules[LOADER] = _NoPlugins(LOADER, __doc__)
    return True


def _real_loader() -> types.ModuleType:
    if isinstance(sys.modules.get(LOADER), _NoPlugins):
        del sys.modules[LOADER]
    return importlib.import_module(LOADER)
