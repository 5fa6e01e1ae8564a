"""Start-up of the ``omerender`` command, as whole processes, against yardsticks run in the same go.

Issue 25, item 5: ``omerender render`` of the seed example at most 1.5 × ``python -c "import yaml,
pydantic, jsonschema"`` (the libraries it cannot do without), and ``omerender --help`` at most
1.5 × ``python -c pass`` + 50 ms. The commands start as the installed ``omerender`` console script
does (``python -m omerender_entry``). Each process runs ``RUNS`` times, alternating, and the medians
are compared, so a busy machine slows both sides alike; the CPU time each process used (user + system)
is compared too, which a busy machine distorts less than the wall clock. Then the modules that cost a
render's start-up most, from ``python -X importtime``. Prints; asserts nothing.

    python benchmarks/bench_startup.py [RUNS]
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
PY = sys.executable
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [PY, "-c", "pass"],
    "import yaml, pydantic, jsonschema": [PY, "-c", "import yaml, pydantic, jsonschema"],
    # The console script's own start (omerender_entry), as the installed ``omerender`` runs it.
    "omerender --help": [PY, "-m", "omerender_entry", "--help"],
    "omerender render (seed)": [
        PY,
        "-m",
        "omerender_entry",
        "render",
        "examples/llama-pool.yaml",
        "--objects",
        "examples/catalog",
    ],
}
# Bytecode as an installed package has it: written once (by the warm-up runs) under a prefix of
# our own, so that PYTHONDONTWRITEBYTECODE (set on some CI machines) does not make every run compile
# omerender from source while the libraries it is compared with load their installed bytecode.
_PYCACHE = tempfile.mkdtemp(prefix="omerender-startup-pycache-")
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPATH": str(ROOT),
    "PYTHONPYCACHEPREFIX": _PYCACHE,
}


def _once(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, argv)
    return wall, usage.ru_utime + usage.ru_stime


def _import_costs(argv: list[str], top: int = 12) -> list[tuple[int, str]]:
    """The modules with the largest own import time (µs) in one run of ``argv``."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = re.findall(r"import time:\s+(\d+) \|\s+\d+ \|\s+(.*)", done.stderr)
    return sorted(((int(own), name.strip()) for own, name in rows), reverse=True)[:top]


def main() -> None:
    for _ in range(2):  # warm the file cache and write the bytecode
        for argv in COMMANDS.values():
            _once(argv)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(RUNS):
        for name, argv in COMMANDS.items():
            times[name].append(_once(argv))
    median = {name: statistics.median(wall for wall, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(used for _, used in values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:36} {value * 1000:8.1f} ms  (median of {RUNS}; CPU {cpu[name] * 1000:6.1f} ms)")
    yardstick = "import yaml, pydantic, jsonschema"
    render = median["omerender render (seed)"] / median[yardstick]
    help_ = (median["omerender --help"] - 0.050) / median["python -c pass"]
    print(f"render / import yaml+pydantic+jsonschema:  ratio {render:5.2f}  (budget 1.5)")
    print(f"(--help - 50 ms) / python -c pass:         ratio {help_:5.2f}  (budget 1.5)")
    print(
        f"the same in CPU time:                      ratio {cpu['omerender render (seed)'] / cpu[yardstick]:5.2f}"
    )
    print("largest own import times of the render (python -X importtime, one run):")
    for micros, module in _import_costs(COMMANDS["omerender render (seed)"]):
        print(f"  {micros / 1000:7.1f} ms  {module}")
    shutil.rmtree(_PYCACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
