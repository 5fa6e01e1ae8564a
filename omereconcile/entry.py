"""The console scripts of the ``reconcile`` extra, started without importing it first.

``pip install omerender`` (no extras) installs ``omereconcile`` and ``kubectl-ome`` too; without the
Kubernetes client they say which extra to install (exit 2) instead of failing with a traceback.
``--version`` is answered here, before anything heavy is imported (``kubectl ome``'s reading verbs avoid
importing the rendering library; the version should not bring it back).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from importlib import metadata

__all__ = ["kubectl_complete_ome", "kubectl_ome", "omereconcile", "version"]

EXTRA = "reconcile"


def version() -> str:
    """The installed distribution's version; from a source tree never installed, the package's own."""
    try:
        return metadata.version("omerender")
    except metadata.PackageNotFoundError:
        from omerender import __version__

        return __version__


def _missing(modules: Sequence[str]) -> str | None:
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except ValueError:  # in sys.modules as None: explicitly not importable
            return module
    return None


def _start(prog: str, modules: Sequence[str], needs: Sequence[str]) -> int:
    if sys.argv[1:] == ["--version"]:
        print(f"{prog} {version()}")
        return 0
    missing = _missing(needs)
    if missing is not None:
        print(
            f"{prog}: needs the '{EXTRA}' extra ({missing} is not installed): pip install 'omerender[{EXTRA}]'",
            file=sys.stderr,
        )
        return 2
    module = next((m for m in modules if importlib.util.find_spec(m) is not None), modules[0])
    main: Callable[[], int] = importlib.import_module(module).main
    return main()


def omereconcile() -> int:
    """``omereconcile``: :func:`omereconcile.cli.main`."""
    return _start("omereconcile", ["omereconcile.cli"], ["kubernetes", "prometheus_client", "cryptography"])


def kubectl_ome() -> int:
    """``kubectl-ome``: :func:`omereconcile.kubectl.main`."""
    return _start("kubectl-ome", ["omereconcile.kubectl"], ["kubernetes"])


def kubectl_complete_ome() -> int:
    """``kubectl_complete-ome``: :func:`omereconcile.kubectl.complete.main`. Without the Kubernetes
    client it completes nothing (Cobra's ``NoFileComp`` directive alone): completion must never print an
    error into a shell."""
    if _missing(["kubernetes"]) is not None:
        print(":4")
        return 0
    main: Callable[[], int] = importlib.import_module("omereconcile.kubectl.complete").main
    return main()
