"""The public surface (docs/public-surface.txt) is current, and no change to it lands without a CHANGELOG entry.

docs/releasing.md says what the public API is; scripts/surface.py writes it down. A pull request that
changes a public signature or a command line fails here until the file is regenerated, so its diff shows
the API change to the reviewer; and a commit on main that changed the file without changing
CHANGELOG.md in the same commit fails the history check.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import surface  # noqa: E402


def test_the_surface_file_is_current() -> None:
    expected = surface.surface()
    written = surface.SURFACE.read_text()
    assert written == expected, (
        "docs/public-surface.txt is not current: run `python3 scripts/surface.py --write`, review its diff "
        "and add a CHANGELOG.md entry in the same commit"
    )


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def test_every_commit_that_changed_the_surface_changed_the_changelog() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.fail("the history check needs git and the repository's history (a clone, not an export)")
    if _git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.fail("the history check needs the whole history: clone without --depth")
    # --first-parent: what landed on main, a merge compared with main before it.
    commits = _git("log", "--first-parent", "-m", "--format=%H", "--", "docs/public-surface.txt").split()
    assert commits, "docs/public-surface.txt has no history: it must be committed"
    missing = []
    for commit in commits:
        parents = _git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        base = parents[0] if parents else _git("hash-object", "-t", "tree", "/dev/null").strip()
        changed = _git("diff", "--name-only", base, commit).split()
        if "CHANGELOG.md" not in changed:
            missing.append(f"{commit[:12]} {_git('log', '-1', '--format=%s', commit).strip()}")
    assert not missing, "changed the public surface without a CHANGELOG.md entry:\n" + "\n".join(missing)


def test_the_surface_names_every_public_name_and_command() -> None:
    import omerender

    text = surface.SURFACE.read_text()
    for name in omerender.__all__:
        assert f"omerender.{name}" in text, name
    for command in ("$ omerender render", "$ omerender diff", "$ omereconcile run", "$ kubectl ome rollout"):
        assert command in text, command
