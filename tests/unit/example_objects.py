"""The repository's example objects (``examples/``), loaded once for the tests that build on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text())
    return loaded


MODEL = load(EXAMPLES / "catalog" / "llama-3-2-1b-instruct.yaml")
RUNTIME = load(EXAMPLES / "catalog" / "vllm-llama-3-2-1b-instruct.yaml")
REPLICA = load(EXAMPLES / "llama-pool.yaml")
