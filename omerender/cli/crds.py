"""The OME CRDs the CLI validates against (:mod:`omerender.crds`), and the command that refreshes
the package's copy of them.

The source of truth is the repository's ``schemas/crds/``. The package ships a copy in
``omerender/data/crds/`` (one ``ome.io_*.yaml`` per kind), so an installed ``omerender`` validates
without a checkout, and the same CRDs as one JSON document, ``omerender/data/crds.json``, which is
what it reads (in a fraction of the YAML's time). ``tests/unit/test_cli_validate.py`` fails when the
copy and ``schemas/crds/`` differ, ``tests/unit/test_crd_bundle.py`` when the JSON and the copy do;
refresh both with::

    python -m omerender.cli.crds
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml

from omerender.crds import (
    OTHERS,
    PACKAGE_CRD_BUNDLE,
    PACKAGE_CRD_DIR,
    PATTERN,
    SOURCE_CRD_DIR,
    crd_dir,
    crd_for,
    crd_for_api,
    load_crds,
)
from omerender.loader import LoadError

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

__all__ = [
    "PACKAGE_CRD_BUNDLE",
    "PACKAGE_CRD_DIR",
    "SOURCE_CRD_DIR",
    "bundle_text",
    "crd_dir",
    "crd_for",
    "crd_for_api",
    "load_crds",
    "sync",
]


def bundle_text(folder: Path) -> str:
    """The CRD files of ``folder`` as one JSON document (file name -> CRD), as ``sync`` writes it."""
    names = sorted([*(p.name for p in folder.glob(PATTERN)), *(n for n in OTHERS if (folder / n).is_file())])
    crds = {name: yaml.load((folder / name).read_text(encoding="utf-8"), Loader=_LOADER) for name in names}
    return json.dumps(crds, ensure_ascii=False, separators=(",", ":")) + "\n"


def sync(
    source: Path = SOURCE_CRD_DIR, target: Path = PACKAGE_CRD_DIR, bundle: Path | None = None
) -> list[str]:
    """Make ``target`` an exact copy of the OME CRDs in ``source``, and ``bundle`` (``crds.json``
    beside ``target``: the package's :data:`PACKAGE_CRD_BUNDLE`) their JSON form; returns the file
    names copied."""
    names = sorted([*(p.name for p in source.glob(PATTERN)), *(n for n in OTHERS if (source / n).is_file())])
    if not names:
        raise LoadError(f"{source}: no {PATTERN} files to copy")
    target.mkdir(parents=True, exist_ok=True)
    for stale in [*target.glob(PATTERN), *(target / n for n in OTHERS if (target / n).is_file())]:
        if stale.name not in names:
            stale.unlink()
    for name in names:
        shutil.copyfile(source / name, target / name)
    (bundle or target.parent / PACKAGE_CRD_BUNDLE.name).write_text(bundle_text(target), encoding="utf-8")
    return names


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    copied = sync()
    print(f"copied {len(copied)} CRDs from {SOURCE_CRD_DIR} to {PACKAGE_CRD_DIR}", file=sys.stderr)
