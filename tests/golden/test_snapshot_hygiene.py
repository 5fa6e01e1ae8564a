"""Snapshot hygiene: a stale or unused golden snapshot fails the run (DECISIONS §4).

The first tests run the real ``YAMLSnapshot`` extension on a scratch project (pytester), with its
snapshot directory pointed at the scratch project's own ``snapshots/``: a matching snapshot passes, a
stale one fails with a diff, and an orphan file in the snapshot directory fails the session, which is
how CI runs pytest (no path arguments, no ``--snapshot-update``).

Syrupy only reports unused single-file snapshots when the run is not narrowed to some test paths
(``pytest tests/golden`` cannot relate ``golden/snapshots/<case>.yaml`` to ``tests/golden``), so the
last tests check the real corpus directly: every case has its snapshot and every snapshot its case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.yaml_snapshot import SNAPSHOT_DIR, to_yaml

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]
CASES_DIR = REPO / "golden" / "cases"

# The scratch project's conftest points the real extension at its own snapshot directory for the
# length of the inner session, and puts it back afterwards (the inner run shares this process).
CONFTEST = f"""
import sys
from pathlib import Path

sys.path.insert(0, {str(REPO)!r})

import tests.golden.yaml_snapshot as yaml_snapshot

_ORIGINAL = yaml_snapshot.SNAPSHOT_DIR


def pytest_configure(config):
    yaml_snapshot.SNAPSHOT_DIR = Path(__file__).parent / "snapshots"


def pytest_unconfigure(config):
    yaml_snapshot.SNAPSHOT_DIR = _ORIGINAL
"""

TEST_MODULE = """
import pytest

from tests.golden.yaml_snapshot import YAMLSnapshot


@pytest.mark.parametrize("case", ["alpha", "beta"])
def test_golden(case, snapshot):
    assert {"case": case, "pods": [{"name": case + "-0"}]} == snapshot.use_extension(YAMLSnapshot)
"""


def _expected(case: str) -> str:
    return to_yaml({"case": case, "pods": [{"name": f"{case}-0"}]})


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch project with two golden cases whose snapshots are up to date."""
    # CI runs this file on a pytest-xdist worker, whose variables the inner session would inherit:
    # syrupy would then take it for a worker and hand its report to a controller that is not there.
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_golden=TEST_MODULE)
    snapshots = pytester.path / "snapshots"
    snapshots.mkdir()
    for case in ("alpha", "beta"):
        (snapshots / f"{case}.yaml").write_text(_expected(case))
    return snapshots


def test_up_to_date_snapshots_pass(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*2 snapshots passed*"])


def test_stale_snapshot_fails(pytester: pytest.Pytester, project: Path) -> None:
    stale = _expected("beta").replace("beta-0", "beta-1")
    (project / "beta.yaml").write_text(stale)

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_golden*beta*", "*1 snapshot failed*"])
    # The snapshot file is evidence for review: a failing run never rewrites it.
    assert (project / "beta.yaml").read_text() == stale


def test_missing_snapshot_fails(pytester: pytest.Pytester, project: Path) -> None:
    (project / "alpha.yaml").unlink()

    result = pytester.runpytest("-p", "no:cacheprovider")

    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*1 snapshot failed*"])
    assert not (project / "alpha.yaml").exists()


# CI runs pytest with pytest-xdist (`-n 2`, scripts/test.sh): syrupy gathers the workers' reports on
# the controller, so an orphan snapshot must fail that run too.
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_unused_snapshot_file_fails_the_run(
    pytester: pytest.Pytester, project: Path, workers: list[str]
) -> None:
    (project / "retired-case.yaml").write_text(_expected("retired-case"))

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *workers)

    # Every test passes, yet the session fails because of the orphan snapshot.
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*1 snapshot unused*"])
    assert (project / "retired-case.yaml").exists()


# -- the real corpus ------------------------------------------------------------------------------


def _stems(directory: Path) -> set[str]:
    return {p.stem for p in directory.glob("*.yaml")}


def test_every_snapshot_belongs_to_a_case() -> None:
    orphans = sorted(_stems(SNAPSHOT_DIR) - _stems(CASES_DIR))
    assert not orphans, f"golden/snapshots has files for no golden/cases case; delete them: {orphans}"


def test_every_case_has_a_reviewed_snapshot() -> None:
    missing = sorted(_stems(CASES_DIR) - _stems(SNAPSHOT_DIR))
    assert not missing, f"golden/cases without a snapshot (generate, then review it line by line): {missing}"


def test_snapshot_directory_holds_only_snapshots() -> None:
    strays = (
        sorted(p.name for p in SNAPSHOT_DIR.iterdir() if p.suffix != ".yaml") if SNAPSHOT_DIR.exists() else []
    )
    assert not strays, f"golden/snapshots holds files that are not YAML snapshots: {strays}"


def test_every_case_says_what_it_shows() -> None:
    silent = sorted(p.name for p in CASES_DIR.glob("*.yaml") if not p.read_text().startswith("# "))
    assert not silent, f"each golden case starts with a one-line comment saying what it shows: {silent}"
