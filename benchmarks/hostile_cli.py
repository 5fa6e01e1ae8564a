"""Every hostile or careless input the CLI is known to meet, run as a user runs it (a fresh
``python -m omerender.cli`` process each), with what it did: exit code, the first line it printed on
stderr, wall time and the process's peak RSS. Prints a markdown table; asserts nothing (the tests in
``tests/unit/test_cli_hostile.py`` do).

    python benchmarks/hostile_cli.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "examples" / "catalog"
REPLICA = (ROOT / "examples" / "llama-pool.yaml").read_text()
RUNTIME = yaml.safe_load((CATALOG / "vllm-llama-3-2-1b-instruct.yaml").read_text())
MODEL = (CATALOG / "llama-3-2-1b-instruct.yaml").read_text()
BOMB = "kind: ConfigMap\ndata:\n  a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"  a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
)


def _runtime_with(work: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> str:
    runtime = yaml.safe_load(yaml.safe_dump(RUNTIME))
    edit(runtime["spec"]["engineConfig"])
    folder = work / name
    folder.mkdir()
    (folder / "model.yaml").write_text(MODEL)
    (folder / "runtime.yaml").write_text(yaml.safe_dump(runtime))
    return str(folder)


def _cases(work: Path) -> list[tuple[str, list[str], str | None]]:
    """(what, argv after ``omerender``, file for stdout or None)."""

    def put(name: str, data: str | bytes) -> str:
        path = work / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        return str(path)

    replica = put("replica.yaml", REPLICA)
    cat = str(CATALOG)

    def render_with(bad: str) -> list[str]:
        return ["render", replica, "--objects", cat, bad]

    cases: list[tuple[str, list[str], str | None]] = [
        ("the seed's replica (yardstick)", ["render", replica, "--objects", cat], None),
        (
            "non-UTF-8 file",
            render_with(put("latin1.yaml", REPLICA.replace("llama-demo", "dém").encode("latin-1"))),
            None,
        ),
        ("binary file", render_with(put("binary.yaml", bytes(range(256)) * 8)), None),
        (
            "100,000 levels of nesting",
            render_with(put("deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000)),
            None,
        ),
        (
            "a 5,000-digit integer",
            render_with(put("bigint.yaml", REPLICA.replace("replicas: 1", "replicas: " + "9" * 5000))),
            None,
        ),
        ("recursive YAML alias", render_with(put("cycle.yaml", REPLICA + "  extra: &a [*a]\n")), None),
        ("alias bomb (10^9 nodes) in --objects", render_with(put("bomb.yaml", BOMB)), None),
        ("`kind` that is a list", render_with(put("kind.yaml", "kind: [a]\nmetadata: {name: x}\n")), None),
        (
            "runtime env is a string",
            [
                "render",
                replica,
                "--objects",
                _runtime_with(work, "env", lambda p: p["runner"].__setitem__("env", "A=1")),
            ],
            None,
        ),
        (
            "runtime volumes is a string",
            [
                "render",
                replica,
                "--objects",
                _runtime_with(work, "vol", lambda p: p.__setitem__("volumes", "dshm")),
            ],
            None,
        ),
        (
            "runtime resources is a string",
            [
                "render",
                replica,
                "--objects",
                _runtime_with(work, "res", lambda p: p["runner"].__setitem__("resources", "big")),
            ],
            None,
        ),
        (
            "null item in runtime env",
            [
                "render",
                replica,
                "--objects",
                _runtime_with(work, "null", lambda p: p["runner"].__setitem__("env", [None])),
            ],
            None,
        ),
        (
            "Go-undecodable GPU quantity (lint)",
            [
                "lint",
                "--objects",
                _runtime_with(
                    work,
                    "qty",
                    lambda p: p["runner"]["resources"]["limits"].__setitem__("nvidia.com/gpu", "lots"),
                ),
            ],
            None,
        ),
        (
            'containerPort "http" (lint)',
            [
                "lint",
                "--objects",
                _runtime_with(
                    work, "port", lambda p: p["runner"]["ports"][0].__setitem__("containerPort", "http")
                ),
            ],
            None,
        ),
        (
            "replica without a name",
            ["render", put("noname.yaml", REPLICA.replace("  name: llama-pool\n", "")), "--objects", cat],
            None,
        ),
        (
            "wrong apiVersion",
            ["render", put("apiv.yaml", REPLICA.replace("ome.io/v1beta1", "ome.io/v9")), "--objects", cat],
            None,
        ),
        (
            "unknown field",
            [
                "render",
                put("unknown.yaml", REPLICA.replace("  replicas: 1", "  replicas: 1\n  replicaz: 3")),
                "--objects",
                cat,
            ],
            None,
        ),
        (
            "100-character name (validate)",
            ["validate", put("long.yaml", REPLICA.replace("name: llama-pool", "name: " + "a" * 100))],
            None,
        ),
        ("--instances 100000", ["render", replica, "--objects", cat, "--instances", "100000"], None),
        ("stdout on a full disk (/dev/full)", ["render", replica, "--objects", cat], "/dev/full"),
    ]
    return cases


def _run(argv: list[str], stdout: str | None) -> tuple[int, str, float, int]:
    """Exit code, the first line of the verdict (stdout for ``lint``/``validate``, whose findings go
    there; stderr otherwise), wall time and peak RSS in MB."""
    with tempfile.TemporaryFile() as captured, open(stdout or os.devnull, "wb") as sink:
        out = sink if stdout else captured
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "omerender.cli", *argv], stdout=out, stderr=subprocess.PIPE, cwd=ROOT
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        captured.seek(0)
        text = captured.read() if argv[0] in ("lint", "validate") else err
    lines = text.decode(errors="replace").strip().splitlines()
    return os.waitstatus_to_exitcode(status), (lines[0] if lines else ""), elapsed, usage.ru_maxrss // 1024


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("| input | command | exit | first line of the verdict | time | peak RSS |")
        print("| --- | --- | --- | --- | --- | --- |")
        for what, argv, stdout in _cases(work):
            code, first, elapsed, rss = _run(argv, stdout)
            first = first.replace(tmp, "…").replace("|", "\\|")
            if len(first) > 140:
                first = first[:137] + "..."
            print(f"| {what} | {argv[0]} | {code} | {first} | {elapsed:.2f} s | {rss} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
