"""Builds the Go reference programs of tools/gotypes once per test session.

Go is required: these tests run in CI every time and fail (never skip) without it.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOTYPES = ROOT / "tools" / "gotypes"


@pytest.fixture(scope="session")
def gotypes_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding freshly built ``canonical``, ``fieldtable``, ``placeholders`` and ``deployconfig`` binaries."""
    go = shutil.which("go")
    if go is None:
        pytest.fail("the Go toolchain (go) is required to build tools/gotypes; it is not on PATH")
    out = tmp_path_factory.mktemp("gotypes-bin")
    started = time.monotonic()
    proc = subprocess.run(
        [
            go,
            "build",
            "-buildvcs=false",
            "-o",
            str(out) + "/",
            "./cmd/canonical",
            "./cmd/fieldtable",
            "./cmd/placeholders",
            "./cmd/deployconfig",
        ],
        cwd=GOTYPES,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"go build of tools/gotypes failed:\n{proc.stdout}\n{proc.stderr}")
    print(f"built tools/gotypes in {time.monotonic() - started:.1f}s")
    return out
