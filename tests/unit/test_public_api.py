"""The public surface: what README's example uses is importable from the package root, and nothing else
is needed to render a preview."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import omerender

ROOT = Path(__file__).resolve().parents[2]


def test_all_names_exist() -> None:
    for name in omerender.__all__:
        assert hasattr(omerender, name), name


def test_readme_library_example_is_a_complete_program_that_runs(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    example = re.search(
        r"## Using the library\n\nA complete program.*?```python\n(.*?)```", readme, re.DOTALL
    )
    assert example is not None
    program = tmp_path / "example.py"
    program.write_text(example.group(1))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(program)], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"llama-pool-engine-[0-9a-f]{8}\n", done.stdout)
