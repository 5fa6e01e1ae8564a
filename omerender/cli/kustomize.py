"""``-k DIR``: a kustomization built by the kustomize the user has, as ``kubectl apply -k`` builds it.

``kustomize build DIR`` when ``kustomize`` is on PATH, else ``kubectl kustomize DIR`` (kubectl's
built-in kustomize), else nothing: :class:`omerender.loader.Kustomization` then reads the
``resources:`` it lists and says which of its fields were not applied. The only program the command
line runs, and the only reason it imports ``subprocess`` (an exception in the import contract).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Final

from omerender.loader import LoadError

__all__ = ["build", "tool"]

# A build of a catalog takes well under a second; a hung one (a remote base) must not hang CI.
_TIMEOUT_SECONDS: Final = 120
_STDERR_LINES: Final = 5


def tool() -> list[str] | None:
    """The command that builds a kustomization (without its folder), or None when there is none."""
    if (kustomize := shutil.which("kustomize")) is not None:
        return [kustomize, "build"]
    if (kubectl := shutil.which("kubectl")) is not None:
        return [kubectl, "kustomize"]
    return None


def build(folder: Path) -> bytes | None:
    """The built stream of the kustomization in ``folder``; None when no kustomize is on PATH."""
    command = tool()
    if command is None:
        return None
    shown = " ".join([Path(command[0]).name, *command[1:], str(folder)])
    try:
        done = subprocess.run(
            [*command, str(folder)], capture_output=True, timeout=_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LoadError(f"-k {folder}: {shown} failed: {exc}") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-_STDERR_LINES:]
        raise LoadError(f"-k {folder}: {shown} exited {done.returncode}: {' / '.join(why)}")
    return done.stdout
