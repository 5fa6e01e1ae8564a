"""scripts/release.sh on a scratch clone: one version everywhere, the changelog moved, built and checked, tagged.

docs/releasing.md is the policy; this runs the script as a maintainer would, on a clone of this
repository's HEAD, and reads what it left: the package, the chart and the image carry the same version,
the Unreleased entries sit under the version with its date, `twine check --strict` passed on the sdist
and the wheel, and the commit is tagged. Nothing leaves the scratch clone.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "release test",
    "GIT_AUTHOR_EMAIL": "release@test.invalid",
    "GIT_COMMITTER_NAME": "release test",
    "GIT_COMMITTER_EMAIL": "release@test.invalid",
}


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True, env=ENV)
    return repo


def _release(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "scripts/release.sh", *args], cwd=repo, env=ENV, capture_output=True, text=True
    )


def _next_version(repo: Path) -> str:
    chart = re.search(
        r"(?m)^version: (\d+)\.(\d+)\.\d+$", (repo / "charts/omereconcile/Chart.yaml").read_text()
    )
    assert chart
    return f"{chart[1]}.{int(chart[2]) + 1}.0"


def test_a_release_sets_one_version_moves_the_changelog_builds_checks_and_tags(clone: Path) -> None:
    version = _next_version(clone)
    unreleased = (clone / "CHANGELOG.md").read_text().split("## [Unreleased]\n", 1)[1].split("\n## [", 1)[0]
    entries = re.findall(r"(?m)^- .*$", unreleased)
    assert entries, (
        "the repository's CHANGELOG has Unreleased entries (the script refuses to release without)"
    )

    done = _release(clone, version)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Checking" in done.stdout
    assert "PASSED" in done.stdout

    assert f'__version__ = "{version}"' in (clone / "omerender/__init__.py").read_text()
    chart = (clone / "charts/omereconcile/Chart.yaml").read_text()
    assert f"\nversion: {version}\n" in chart
    assert f'\nappVersion: "{version}"\n' in chart
    assert f"omereconcile:{version}\n" in (clone / "deploy/base/deployment.yaml").read_text()
    changelog = (clone / "CHANGELOG.md").read_text()
    fresh, released = changelog.split("## [Unreleased]\n", 1)[1].split(f"\n## [{version}] - ", 1)
    assert not re.search(r"(?m)^- ", fresh)  # Unreleased starts over
    for entry in entries:
        assert entry in released.split("\n## [", 1)[0]
    for built in (f"omerender-{version}.tar.gz", f"omerender-{version}-py3-none-any.whl"):
        assert (clone / "dist" / version / built).is_file()

    git = ["git", "-C", str(clone)]
    assert subprocess.run([*git, "describe", "--exact-match"], capture_output=True, text=True).stdout == (
        f"v{version}\n"
    )
    assert (
        subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True).stdout
        == b""
    )


def test_a_release_is_refused_on_a_dirty_tree_or_a_version_that_is_not_newer(clone: Path) -> None:
    (clone / "README.md").write_text("changed\n")
    dirty = _release(clone, _next_version(clone))
    assert dirty.returncode == 1
    assert "the working tree has changes" in dirty.stderr
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", "README.md"], check=True)

    old = _release(clone, "0.0.1")
    assert old.returncode == 1
    assert "must be newer than the package" in old.stderr
    bad = _release(clone, "v1.0")
    assert bad.returncode == 1
    assert "is not MAJOR.MINOR.PATCH" in bad.stderr
