"""A Secret's keys written to a folder the way the kubelet writes a Secret volume.

The kubelet's atomic writer puts each generation in a timestamped folder, points ``..data`` at it, and
makes every key a symlink through ``..data``; a rotation writes a new folder and swaps ``..data`` with
one rename, so a reader never sees half of a pair. Tests rotate a webhook certificate this way.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["project_secret"]


def project_secret(folder: Path, files: dict[str, bytes], generation: int) -> None:
    """Write ``files`` as generation ``generation`` of the volume at ``folder`` (created when missing)."""
    target = folder / f"..2026_12_01_00_00_{generation:02d}.000000000"
    target.mkdir(parents=True)
    for name, data in files.items():
        (target / name).write_bytes(data)
        link = folder / name
        if not link.is_symlink():
            link.symlink_to(Path("..data") / name)
    tmp = folder / "..data_tmp"
    tmp.symlink_to(target.name)
    os.replace(tmp, folder / "..data")  # the atomic swap
