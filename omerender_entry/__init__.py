"""The ``omerender`` and ``omerender-kdiff`` console scripts: where the process starts, outside the library.

What is done here before handing over to :mod:`omerender.cli`, and why.

The cyclic garbage collector is paused from the first import to the end of the process
(:mod:`omerender.cli.collector` pauses it for the command itself; this covers the imports before it, and
the exit). A command's start-up makes hundreds of thousands of objects (pydantic's schemas, the models,
our tables); each full collection meanwhile walks all of them to free nothing, and Python runs one more
at exit when the collector is on. Together about 4% of a render of the seed example. These functions are
the process: like the environment variable below, the collector is not restored, because the process
ends when they return (the console scripts call ``sys.exit`` with their result).

The first time pydantic builds a
validator it looks for plugins: it imports ``importlib.metadata`` and reads the entry points of every
installed distribution, about 12 ms of a command that uses no plugin (a render of the seed takes about
a quarter of a second in all). Pydantic's only switch for that is the ``PYDANTIC_DISABLE_PLUGINS``
environment variable, so these commands set it to ``__all__`` when it is not set at all. A value the
user sets is kept as it is: ``PYDANTIC_DISABLE_PLUGINS=`` (empty) runs every installed pydantic plugin
over the command's validation, a comma-separated list runs all but those. Processes the command starts
inherit the variable. When it disables every plugin, pydantic's plugin loader module, which imports
``importlib.metadata`` before it reads the variable, is not imported either (:mod:`omerender_entry.plugins_off`).

``NO_COLOR`` (https://no-color.org) is read here too and passed to :func:`omerender.cli.main` as
``no_color``: ``--color auto`` then prints no colour on a terminal.

The library (``import omerender``, and ``python -m omerender.cli``) never reads or sets the
environment: a program that imports it keeps pydantic's default and its own plugins.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable

from omerender_entry import plugins_off

__all__ = ["PLUGINS_VARIABLE", "kdiff", "main"]

PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"


def _skip_pydantic_plugins_unless_asked() -> None:
    os.environ.setdefault(PLUGINS_VARIABLE, "__all__")


def _run(load: Callable[[], Callable[[], int]]) -> int:
    _skip_pydantic_plugins_unless_asked()
    plugins_off.install(os.environ.get(PLUGINS_VARIABLE))
    gc.disable()
    return load()()


def _no_color() -> bool:
    """``NO_COLOR`` set and not empty (https://no-color.org): read here, at the process's start, and
    passed on, since the library reads no environment."""
    return bool(os.environ.get("NO_COLOR"))


def _cli_main() -> Callable[[], int]:
    from omerender.cli import main as cli_main

    return lambda: cli_main(no_color=_no_color())


def _kdiff_main() -> Callable[[], int]:
    from omerender.cli.diff_cmd import main as kdiff_main

    return lambda: kdiff_main(no_color=_no_color())


def main() -> int:
    """``omerender``: the command line of :mod:`omerender.cli`."""
    return _run(_cli_main)


def kdiff() -> int:
    """``omerender-kdiff``: ``KUBECTL_EXTERNAL_DIFF``'s program, :func:`omerender.cli.diff_cmd.main`.

    kubectl passes two folders; ``--version`` alone answers as every other console script does."""
    if sys.argv[1:] == ["--version"]:
        from omerender import __version__

        print(f"omerender-kdiff {__version__}")
        return 0
    return _run(_kdiff_main)
