"""The command line writes YAML with libyaml's emitter; it must write the same bytes as PyYAML's
pure-Python emitter (the one used where libyaml is absent) for every golden case's output, and for
the awkward strings a manifest can hold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from omerender.cli import io
from tests.golden.test_golden import CASE_FILES, golden_view


def test_the_dumper_is_libyamls_where_pyyaml_has_it() -> None:
    assert yaml.__with_libyaml__
    assert issubclass(io._Dumper, yaml.CSafeDumper)
    assert not issubclass(io._PyDumper, yaml.CSafeDumper)


def _both(obj: Any) -> tuple[str, str]:
    """What ``dump_yaml`` writes, and what the pure-Python dumper alone writes."""
    return io.dump_yaml(obj), io._dump(io.strip_nulls(obj), io._PyDumper)


@pytest.mark.parametrize("case", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_c_and_python_dumpers_write_the_same_golden_output(case: Path) -> None:
    view = golden_view(case)
    documents: list[Any] = [view]
    if "blocked" not in view:
        # What `omerender render` prints: each object as its own document.
        documents += [*view["pods"], view["service"], *view.get("podGroups", [])]
        documents += [r["template"] for r in view["runners"]]
    for doc in documents:
        c_text, py_text = _both(doc)
        assert c_text == py_text
    streamed = [(f"case {case.stem} #{i}", doc) for i, doc in enumerate(documents)]
    python = "".join(f"---\n# Source: {s}\n{io._dump(io.strip_nulls(d), io._PyDumper)}" for s, d in streamed)
    assert io.dump_stream(streamed) == python


def test_golden_outputs_take_the_c_dumper() -> None:
    # The fallback below must not be what makes the golden outputs agree.
    assert not any(io._keeps_final_breaks(golden_view(case)) for case in CASE_FILES)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "yes",
        "null",
        "~",
        "0o17",
        "1e3",
        "-",
        ": x",
        "a: b",
        "#x",
        "x #y",
        " leading",
        "trailing ",
        "tab\there",
        "line\nbreak\n",
        "no final break\nhere",
        "  indented\nblock\n",
        "trailing spaces  \nin a block\n",
        "\n\nleading breaks\n",
        "ends with breaks\n\n\n",
        "\n",
        "one\n\n",
        "cr\r\n",
        "nel\x85",
        "nel twice\x85\x85",
        "ls\u2028\u2028",
        "mid\n\nbreaks",
        "unicode é ü 中文 \u2028",
        "control \x07 char",
        "quote ' and \" both",
        "x" * 1500,
        "words " * 300,
        "python3 -m sglang.launch_server --model-path $(MODEL_PATH) --port 8080 \\\n  --tp-size 8\n",
        "{braces}",
        "[brackets]",
        "*alias",
        "&anchor",
        "!tag",
        "%directive",
        "@at",
        "`tick",
        "100Gi",
        "0.5",
        "1_000",
        "2026-12-02",
        "2026-12-02T02:00:00Z",
        ".inf",
        "=",
        "<<",
    ],
)
def test_c_and_python_dumpers_agree_on_awkward_strings(value: str) -> None:
    doc = {"metadata": {"annotations": {"a": value}}, "args": [value, {"k": value}], value or "empty": 1}
    for obj in (doc, {"last": value}, {value or "empty": "first", "then": 1}):
        c_text, py_text = _both(obj)
        assert c_text == py_text
