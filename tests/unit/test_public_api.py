"""The public surface: what README's example uses is importable from the package root, and nothing else
is needed to render a preview."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import omerender

ROOT = Path(__file__).resolve().parents[2]


def test_all_names_exist() -> None:
    for name in omerender.__all__:
        assert hasattr(omerender, name), name


def test_readme_library_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text()
    example = re.search(r"## Using the library\n\n```python\n(.*?)```", readme, re.DOTALL)
    assert example is not None
    namespace = {
        "replica_dict": yaml.safe_load((ROOT / "examples/llama-pool.yaml").read_text()),
        "model_and_runtime_dicts": [
            yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples/catalog").glob("*.yaml"))
        ],
    }
    exec(compile(example.group(1), "README.md", "exec"), namespace)
    assert re.fullmatch(r"llama-pool-engine-[0-9a-f]{8}\n", capsys.readouterr().out)
