"""The OME CustomResourceDefinitions the CLI validates against, as shipped with the package.

Where they come from: the source of truth is the repository's ``schemas/crds/``. The CLI reads a copy
shipped as package data in ``omerender/data/crds/`` (one ``ome.io_*.yaml`` per kind), so an installed
``omerender`` validates without a checkout. ``tests/unit/test_cli_validate.py`` fails when the copy and
``schemas/crds/`` differ; refresh the copy with::

    python -m omerender.cli.crds

When the package data is missing (a wheel built without it), a source checkout's ``schemas/crds/``
next to the package is used instead; when neither exists, :func:`crd_for` raises :class:`InputError`
saying so.
"""

from __future__ import annotations

import functools
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from omerender.cli.io import InputError

__all__ = ["PACKAGE_CRD_DIR", "SOURCE_CRD_DIR", "crd_dir", "crd_for", "crd_for_api", "load_crds", "sync"]

# The kinds users write: the OME group. schemas/crds also holds the scheduler-plugins PodGroup CRD,
# shipped too: `render --validate` checks the PodGroups of multi-pod Instances against it.
_PATTERN = "ome.io_*.yaml"
_OTHERS = ("scheduling.x-k8s.io_podgroups.yaml",)

PACKAGE_CRD_DIR = Path(str(resources.files("omerender"))) / "data" / "crds"
SOURCE_CRD_DIR = Path(__file__).resolve().parents[2] / "schemas" / "crds"


def crd_dir() -> Path:
    """The folder the CRDs are read from: the package data, else a source checkout's ``schemas/crds``."""
    for candidate in (PACKAGE_CRD_DIR, SOURCE_CRD_DIR):
        if any(candidate.glob(_PATTERN)):
            return candidate
    raise InputError(
        f"the OME CRDs are not installed with omerender (looked in {PACKAGE_CRD_DIR} and {SOURCE_CRD_DIR}); "
        "reinstall omerender with its package data"
    )


@functools.cache
def load_crds() -> dict[str, dict[str, Any]]:
    """Every shipped CRD by the kind it defines (``InferenceReplica``, ``ClusterServingRuntime``, …)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(crd_dir().glob(_PATTERN)):
        try:
            crd = yaml.load(
                path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            )
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"{path}: cannot read the CRD: {exc}") from None
        kind = crd.get("spec", {}).get("names", {}).get("kind") if isinstance(crd, dict) else None
        if not isinstance(kind, str):
            raise InputError(f"{path}: not a CustomResourceDefinition (no spec.names.kind)")
        out[kind] = crd
    return out


@functools.cache
def _by_group_kind() -> dict[tuple[str, str], dict[str, Any]]:
    """Every shipped CRD, the OME ones and the PodGroup, by (group, kind)."""
    out = {(str(crd["spec"].get("group", "")), kind): crd for kind, crd in load_crds().items()}
    for name in _OTHERS:
        path = crd_dir() / name
        if not path.is_file():
            continue
        try:
            crd = yaml.load(
                path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            )
            out[(str(crd["spec"]["group"]), str(crd["spec"]["names"]["kind"]))] = crd
        except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
            raise InputError(f"{path}: cannot read the CRD: {exc}") from None
    return out


def crd_for_api(kind: str, api_version: str) -> dict[str, Any] | None:
    """The shipped CRD defining ``kind`` in ``api_version``'s group, or None (read-only, as :func:`crd_for`)."""
    group = api_version.rpartition("/")[0]
    return _by_group_kind().get((group, kind))


def crd_for(kind: str) -> dict[str, Any]:
    """The CRD defining ``kind``; treat it as read-only (validators are cached per CRD dict)."""
    crds = load_crds()
    if kind not in crds:
        raise InputError(f"no CRD for {kind} among {', '.join(sorted(crds))} in {crd_dir()}")
    return crds[kind]


def sync(source: Path = SOURCE_CRD_DIR, target: Path = PACKAGE_CRD_DIR) -> list[str]:
    """Make ``target`` an exact copy of the OME CRDs in ``source``; returns the file names copied."""
    names = sorted(
        [*(p.name for p in source.glob(_PATTERN)), *(n for n in _OTHERS if (source / n).is_file())]
    )
    if not names:
        raise InputError(f"{source}: no {_PATTERN} files to copy")
    target.mkdir(parents=True, exist_ok=True)
    for stale in [*target.glob(_PATTERN), *(target / n for n in _OTHERS if (target / n).is_file())]:
        if stale.name not in names:
            stale.unlink()
    for name in names:
        shutil.copyfile(source / name, target / name)
    return names


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    copied = sync()
    print(f"copied {len(copied)} CRDs from {SOURCE_CRD_DIR} to {PACKAGE_CRD_DIR}", file=sys.stderr)
