"""The console scripts of the ``reconcile`` extra, started without importing it first.

``pip install omerender`` (no extras) installs ``omereconcile`` and ``kubectl-ome`` too; without the
Kubernetes client they say which extra to install (exit 2) instead of failing with a traceback.
``--version`` answers either way.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable

from omerender import __version__

__all__ = ["kubectl_ome", "omereconcile"]

EXTRA = "reconcile"


def _missing(modules: tuple[str, ...]) -> str | None:
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except ValueError:  # in sys.modules as None: explicitly not importable
            return module
    return None


def _start(prog: str, module: str, needs: tuple[str, ...]) -> int:
    missing = _missing(needs)
    if missing is not None:
        if sys.argv[1:] == ["--version"]:
            print(f"{prog} {__version__}")
            return 0
        print(
            f"{prog}: needs the '{EXTRA}' extra ({missing} is not installed): pip install 'omerender[{EXTRA}]'",
            file=sys.stderr,
        )
        return 2
    main: Callable[[], int] = importlib.import_module(module).main
    return main()


def omereconcile() -> int:
    """``omereconcile``: :func:`omereconcile.cli.main`."""
    return _start("omereconcile", "omereconcile.cli", ("kubernetes", "prometheus_client", "cryptography"))


def kubectl_ome() -> int:
    """``kubectl-ome``: :func:`omereconcile.kubectl_ome.main`."""
    return _start("kubectl-ome", "omereconcile.kubectl_ome", ("kubernetes",))
