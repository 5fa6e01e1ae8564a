"""The OME CRDs the CLI validates against (:mod:`omerender.crds`), and the command that refreshes
the package's copy of them.

The source of truth is the repository's ``schemas/crds/``. The package ships a copy in
``omerender/data/crds/`` (one ``ome.io_*.yaml`` per kind), so an installed ``omerender`` validates
without a checkout. ``tests/unit/test_cli_validate.py`` fails when the copy and ``schemas/crds/``
differ; refresh the copy with::

    python -m omerender.cli.crds
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from omerender.crds import PACKAGE_CRD_DIR, PATTERN, SOURCE_CRD_DIR, crd_dir, crd_for, load_crds
from omerender.loader import LoadError

__all__ = ["PACKAGE_CRD_DIR", "SOURCE_CRD_DIR", "crd_dir", "crd_for", "load_crds", "sync"]


def sync(source: Path = SOURCE_CRD_DIR, target: Path = PACKAGE_CRD_DIR) -> list[str]:
    """Make ``target`` an exact copy of the OME CRDs in ``source``; returns the file names copied."""
    names = sorted(p.name for p in source.glob(PATTERN))
    if not names:
        raise LoadError(f"{source}: no {PATTERN} files to copy")
    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob(PATTERN):
        if stale.name not in names:
            stale.unlink()
    for name in names:
        shutil.copyfile(source / name, target / name)
    return names


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    copied = sync()
    print(f"copied {len(copied)} CRDs from {SOURCE_CRD_DIR} to {PACKAGE_CRD_DIR}", file=sys.stderr)
